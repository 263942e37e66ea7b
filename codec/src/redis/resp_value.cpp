#include <netbuf/codec/redis/resp_value.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace netbuf {

std::string_view respTypeName(RespType type) noexcept {
  switch (type) {
    case RespType::SimpleString:
      return "simple string";
    case RespType::SimpleError:
      return "simple error";
    case RespType::Integer:
      return "integer";
    case RespType::BulkString:
      return "bulk string";
    case RespType::Array:
      return "array";
    case RespType::Null:
      return "null";
    case RespType::Boolean:
      return "boolean";
    case RespType::Double:
      return "double";
    case RespType::BigNumber:
      return "big number";
    case RespType::BulkError:
      return "bulk error";
    case RespType::VerbatimString:
      return "verbatim string";
    case RespType::Map:
      return "map";
    case RespType::Set:
      return "set";
    case RespType::Push:
      return "push";
  }
  return "unknown";
}

RespTypeError::RespTypeError(std::string_view accessor, RespType actual)
    : Error(std::string("RespValue::") + std::string(accessor) + " on a " +
            std::string(respTypeName(actual))),
      actual_(actual) {}

namespace {

bool isStringType(RespType t) noexcept {
  switch (t) {
    case RespType::SimpleString:
    case RespType::SimpleError:
    case RespType::BulkString:
    case RespType::BulkError:
    case RespType::BigNumber:
    case RespType::VerbatimString:
      return true;
    default:
      return false;
  }
}

// A verbatim payload is "fmt:text": three format bytes and a colon (the decoder checks it; a
// hand-built value that is shorter yields its whole payload as text and an empty format).
constexpr std::size_t kVerbatimPrefix = 4;

}  // namespace

std::string_view RespValue::payload() const {
  if (!isStringType(type_)) throw RespTypeError("payload", type_);
  return {str_, size_};
}

std::string_view RespValue::asString() const {
  if (!isStringType(type_)) throw RespTypeError("asString", type_);
  if (type_ == RespType::VerbatimString && size_ >= kVerbatimPrefix && str_[3] == ':') {
    return {str_ + kVerbatimPrefix, size_ - kVerbatimPrefix};
  }
  return {str_, size_};
}

std::string_view RespValue::verbatimFormat() const {
  if (type_ != RespType::VerbatimString) throw RespTypeError("verbatimFormat", type_);
  if (size_ >= kVerbatimPrefix && str_[3] == ':') return {str_, 3};
  return {};
}

std::int64_t RespValue::asInteger() const {
  if (type_ != RespType::Integer) throw RespTypeError("asInteger", type_);
  return int_;
}

double RespValue::asDouble() const {
  if (type_ != RespType::Double) throw RespTypeError("asDouble", type_);
  return double_;
}

bool RespValue::asBool() const {
  if (type_ != RespType::Boolean) throw RespTypeError("asBool", type_);
  return int_ != 0;
}

std::span<const RespValue> RespValue::elements() const {
  if (!isAggregate()) throw RespTypeError("elements", type_);
  return {children_, type_ == RespType::Map ? size_ * 2 : size_};
}

const RespValue& RespValue::operator[](std::size_t i) const {
  if (type_ == RespType::Map || !isAggregate()) throw RespTypeError("operator[]", type_);
  if (i >= size_) {
    throw std::out_of_range("RespValue index " + std::to_string(i) + " out of range (size " +
                            std::to_string(size_) + ")");
  }
  return children_[i];
}

const RespValue* RespValue::find(std::string_view key) const {
  if (type_ != RespType::Map) throw RespTypeError("find", type_);
  for (std::size_t i = 0; i < size_; ++i) {
    const RespValue& k = children_[2 * i];
    if ((k.type_ == RespType::SimpleString || k.type_ == RespType::BulkString) &&
        std::string_view(k.str_, k.size_) == key) {
      return &children_[2 * i + 1];
    }
  }
  return nullptr;
}

bool operator==(const RespValue& a, const RespValue& b) noexcept {
  if (a.type_ != b.type_) return false;
  if ((a.attributes_ == nullptr) != (b.attributes_ == nullptr)) return false;
  if (a.attributes_ != nullptr && !(*a.attributes_ == *b.attributes_)) return false;
  switch (a.type_) {
    case RespType::Null:
      return a.nullForm_ == b.nullForm_;
    case RespType::Integer:
    case RespType::Boolean:
      return a.int_ == b.int_;
    case RespType::Double:
      return a.double_ == b.double_ || (std::isnan(a.double_) && std::isnan(b.double_));
    case RespType::Array:
    case RespType::Set:
    case RespType::Push:
    case RespType::Map: {
      if (a.size_ != b.size_) return false;
      const std::size_t n = a.type_ == RespType::Map ? a.size_ * 2 : a.size_;
      for (std::size_t i = 0; i < n; ++i) {
        if (!(a.children_[i] == b.children_[i])) return false;
      }
      return true;
    }
    default:
      return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.str_, b.str_, a.size_) == 0);
  }
}

}  // namespace netbuf
