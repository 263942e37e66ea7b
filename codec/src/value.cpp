#include <netbuf/codec/value.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <netbuf/buffer/limits.hpp>

namespace netbuf {

std::string_view valueTypeName(ValueType type) noexcept {
  switch (type) {
    case ValueType::Nil:
      return "Nil";
    case ValueType::Bool:
      return "Bool";
    case ValueType::Int:
      return "Int";
    case ValueType::UInt:
      return "UInt";
    case ValueType::Float32:
      return "Float32";
    case ValueType::Float64:
      return "Float64";
    case ValueType::Str:
      return "Str";
    case ValueType::Bin:
      return "Bin";
    case ValueType::Array:
      return "Array";
    case ValueType::Map:
      return "Map";
    case ValueType::Ext:
      return "Ext";
    case ValueType::Timestamp:
      return "Timestamp";
  }
  return "?";
}

ValueTypeError::ValueTypeError(ValueType expected, ValueType actual)
    : Error(fmt::format("expected {}, got {}", valueTypeName(expected), valueTypeName(actual))),
      actual_(actual) {}

void Value::throwTimestampExt() {
  throw IllegalArgumentError(
      "Value::extView: ext type -1 is the timestamp type (use Value::timestamp)");
}

void Value::throwTooLong(std::size_t n) {
  throw IllegalArgumentError(
      fmt::format("Value: length {} exceeds the document model's limit {}", n, UINT32_MAX));
}

Value Value::timestamp(Timestamp ts) {
  if (ts.nanoseconds > kMaxNanoseconds) {
    throw IllegalArgumentError(
        fmt::format("Value::timestamp: nanoseconds {} exceed {}", ts.nanoseconds, kMaxNanoseconds));
  }
  Value v(ValueType::Timestamp);
  v.u_.i = ts.seconds;
  v.size_ = ts.nanoseconds;
  return v;
}

double Value::asDouble() const {
  switch (type_) {
    case ValueType::Int:
      return static_cast<double>(u_.i);
    case ValueType::UInt:
      return static_cast<double>(u_.u);
    case ValueType::Float32:
      return u_.f;
    case ValueType::Float64:
      return u_.d;
    default:
      throw ValueTypeError(ValueType::Float64, type_);
  }
}

void Value::throwType(ValueType expected) const { throw ValueTypeError(expected, type_); }

void Value::throwInt64() const {
  if (type_ == ValueType::UInt) {
    throw ValueTypeError(fmt::format("UInt {} does not fit int64", u_.u), type_);
  }
  throw ValueTypeError(ValueType::Int, type_);
}

void Value::throwUInt64() const {
  if (type_ == ValueType::Int) {
    throw ValueTypeError(fmt::format("Int {} does not fit uint64", u_.i), type_);
  }
  throw ValueTypeError(ValueType::UInt, type_);
}

const Value* Value::find(std::string_view key) const {
  for (const Member& m : asMap()) {
    if (m.key.type_ == ValueType::Str && m.key.size_ == key.size() &&
        (key.empty() || std::memcmp(m.key.u_.p, key.data(), key.size()) == 0)) {
      return &m.value;
    }
  }
  return nullptr;
}

const Value& Value::operator[](std::size_t index) const {
  const auto elements = asArray();
  if (index >= elements.size()) {
    throw IndexOutOfBoundsError(
        fmt::format("Value[{}]: index out of bounds (array of {})", index, elements.size()));
  }
  return elements[index];
}

const Value& Value::at(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) throw IllegalArgumentError(fmt::format("Value[\"{}\"]: no such key", key));
  return *v;
}

namespace {
bool sameBytes(const void* a, const void* b, std::size_t n) {
  return n == 0 || a == b || std::memcmp(a, b, n) == 0;
}
}  // namespace

bool operator==(const Value& a, const Value& b) noexcept {
  if (a.type_ != b.type_) {
    if (a.isInteger() && b.isInteger()) {
      // Int vs UInt: equal when the Int is non-negative and the numbers match.
      const Value& s = a.type_ == ValueType::Int ? a : b;
      const Value& u = a.type_ == ValueType::Int ? b : a;
      return s.u_.i >= 0 && static_cast<std::uint64_t>(s.u_.i) == u.u_.u;
    }
    return false;
  }
  switch (a.type_) {
    case ValueType::Nil:
      return true;
    case ValueType::Bool:
      return a.u_.b == b.u_.b;
    case ValueType::Int:
    case ValueType::UInt:
      return a.u_.u == b.u_.u;
    case ValueType::Float32:
      return a.u_.f == b.u_.f;
    case ValueType::Float64:
      return a.u_.d == b.u_.d;
    case ValueType::Str:  // the plain-ASCII hint is not part of the value
      return a.size_ == b.size_ &&
             (a.aux_ & Value::kInvalidUtf8) == (b.aux_ & Value::kInvalidUtf8) &&
             sameBytes(a.u_.p, b.u_.p, a.size_);
    case ValueType::Bin:
    case ValueType::Ext:
      return a.size_ == b.size_ && a.aux_ == b.aux_ && sameBytes(a.u_.p, b.u_.p, a.size_);
    case ValueType::Timestamp:
      return a.u_.i == b.u_.i && a.size_ == b.size_;
    case ValueType::Array: {
      if (a.size_ != b.size_) return false;
      const auto* x = static_cast<const Value*>(a.u_.p);
      const auto* y = static_cast<const Value*>(b.u_.p);
      for (std::uint32_t i = 0; i < a.size_; ++i) {
        if (!(x[i] == y[i])) return false;
      }
      return true;
    }
    case ValueType::Map: {
      if (a.size_ != b.size_) return false;
      const auto* x = static_cast<const Member*>(a.u_.p);
      const auto* y = static_cast<const Member*>(b.u_.p);
      for (std::uint32_t i = 0; i < a.size_; ++i) {
        if (!(x[i].key == y[i].key) || !(x[i].value == y[i].value)) return false;
      }
      return true;
    }
  }
  return false;
}

namespace {
void appendDebug(std::string& out, const Value& v, int depthLeft) {
  if (depthLeft == 0) {
    out += "...";
    return;
  }
  switch (v.type()) {
    case ValueType::Nil:
      out += "null";
      return;
    case ValueType::Bool:
      out += v.asBool() ? "true" : "false";
      return;
    case ValueType::Int:
      fmt::format_to(std::back_inserter(out), "{}", v.asInt64());
      return;
    case ValueType::UInt:
      fmt::format_to(std::back_inserter(out), "{}", v.asUInt64());
      return;
    case ValueType::Float32:
      fmt::format_to(std::back_inserter(out), "{}f", v.asFloat32());
      return;
    case ValueType::Float64:
      fmt::format_to(std::back_inserter(out), "{}", v.asDouble());
      return;
    case ValueType::Str: {
      out += '"';
      for (char c : v.asStr()) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
          out += '\\';
          out += c;
        } else if (u < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
        } else {
          out += c;
        }
      }
      out += v.hasInvalidUtf8() ? "\"!invalid-utf8" : "\"";
      return;
    }
    case ValueType::Bin:
    case ValueType::Ext: {
      const auto bytes = v.isBin() ? v.asBin() : v.extData();
      if (v.isBin()) {
        out += "bin(";
      } else {
        fmt::format_to(std::back_inserter(out), "ext({},", v.extType());
      }
      for (std::byte b : bytes) fmt::format_to(std::back_inserter(out), "{:02x}", unsigned(b));
      out += ')';
      return;
    }
    case ValueType::Timestamp: {
      const Timestamp t = v.asTimestamp();
      fmt::format_to(std::back_inserter(out), "timestamp({},{})", t.seconds, t.nanoseconds);
      return;
    }
    case ValueType::Array: {
      out += '[';
      bool first = true;
      for (const Value& e : v.asArray()) {
        if (!first) out += ',';
        first = false;
        appendDebug(out, e, depthLeft - 1);
      }
      out += ']';
      return;
    }
    case ValueType::Map: {
      out += '{';
      bool first = true;
      for (const Member& m : v.asMap()) {
        if (!first) out += ',';
        first = false;
        appendDebug(out, m.key, depthLeft - 1);
        out += ':';
        appendDebug(out, m.value, depthLeft - 1);
      }
      out += '}';
      return;
    }
  }
}
}  // namespace

std::string Value::toDebugString() const {
  std::string out;
  appendDebug(out, *this, 64);
  return out;
}

}  // namespace netbuf
