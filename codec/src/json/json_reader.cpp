#include <netbuf/codec/json/json_reader.hpp>
// (first include: proves the header is self-contained)

// JsonReader: the pull reader behind the typed API (json_traits.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <netbuf/buffer/errors.hpp>
#include <system_error>
#include <type_traits>

#include "json_lex.hpp"

namespace netbuf {

namespace {

using detail::isDigit;
using detail::JsonLexer;

const char* tokenName(JsonToken t) noexcept {
  switch (t) {
    case JsonToken::BeginObject:
      return "an object";
    case JsonToken::EndObject:
      return "the end of the object";
    case JsonToken::BeginArray:
      return "an array";
    case JsonToken::EndArray:
      return "the end of the array";
    case JsonToken::String:
      return "a string";
    case JsonToken::Number:
      return "a number";
    case JsonToken::Bool:
      return "a boolean";
    case JsonToken::Null:
      return "null";
    case JsonToken::End:
      return "the end of the input";
  }
  return "?";
}

[[noreturn]] void misuse(const char* what) {
  throw IllegalArgumentError(fmt::format("JsonReader misuse: {}", what));
}

// The integer token at p as T (std::int64_t or std::uint64_t; -0 reads as 0): a fraction or an
// exponent is a TypeMismatch, a value outside T NumberOutOfRange. Returns the token's end.
template <class T>
const char* lexInteger(const JsonLexer& lex, const char* p, T& v) {
  const detail::NumberScan s = lex.scanNumber(p);
  const std::string_view text(p, std::min<std::size_t>(static_cast<std::size_t>(s.end - p), 64));
  if (s.isFloat)
    lex.fail(JsonErrorCode::TypeMismatch, p, fmt::format("expected an integer, found {}", text));
  bool ok = false;
  if (std::is_unsigned_v<T> && *p == '-') {
    ok = text == "-0";
  } else {
    const auto r = std::from_chars(p, s.end, v);
    ok = r.ec == std::errc() && r.ptr == s.end;
  }
  if (!ok) [[unlikely]]
    lex.fail(JsonErrorCode::NumberOutOfRange, p,
             fmt::format("integer {} is out of the range of a 64-bit {} integer", text,
                         std::is_signed_v<T> ? "signed" : "unsigned"));
  return s.end;
}

}  // namespace

JsonReader::JsonReader(std::string_view text, const JsonParseOptions& options)
    : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), options_(options) {
  JsonLexer{begin_, end_, options_}.checkDocumentSize();
}

void JsonReader::fail(JsonErrorCode code, const char* at, std::string detail, std::uint64_t value,
                      std::uint64_t limit) const {
  detail::throwJsonError(begin_, code, at, std::move(detail), value, limit);
}

void JsonReader::failRange(std::uint64_t at, bool negative, std::uint64_t value, std::size_t bytes,
                           bool isSigned) const {
  fail(JsonErrorCode::NumberOutOfRange, begin_ + at,
       fmt::format("integer {}{} is out of the range of a {}-bit {} integer", negative ? "-" : "",
                   negative ? 0 - value : value, bytes * 8, isSigned ? "signed" : "unsigned"));
}

void JsonReader::failEnd(const char* what) const {
  JsonLexer{begin_, end_, options_}.failEnd(what);
}

void JsonReader::failType(const char* expected) {
  const JsonToken t = peek();
  fail(JsonErrorCode::TypeMismatch, p_,
       fmt::format("expected {}, found {}", expected, tokenName(t)));
}

JsonToken JsonReader::peek() {
  const JsonLexer lex{begin_, end_, options_};
  if (stack_.empty()) {
    skipWs();
    if (done_) {
      if (p_ < end_) [[unlikely]]
        lex.failTrailing(p_);
      return JsonToken::End;
    }
    if (p_ >= end_) failEnd("(expected a JSON value)");
  } else {
    const bool object = stack_.back() == '{';
    const char close = object ? '}' : ']';
    skipWs();
    if (state_ == State::AfterValue) {
      if (p_ >= end_) failEnd(object ? "(expected ',' or '}')" : "(expected ',' or ']')");
      if (*p_ == close) return object ? JsonToken::EndObject : JsonToken::EndArray;
      if (*p_ != ',') [[unlikely]]
        lex.failUnexpected(p_, object ? "',' or '}'" : "',' or ']'");
      ++p_;
      state_ = State::AfterComma;
      skipWs();
    }
    if (p_ >= end_)
      failEnd(object && state_ != State::AfterKey ? "(expected a key)" : "(expected a value)");
    if (state_ == State::First && *p_ == close)
      return object ? JsonToken::EndObject : JsonToken::EndArray;
    if (object && state_ != State::AfterKey) {
      if (*p_ != '"') [[unlikely]]
        lex.failUnexpected(p_, "a string key");
      return JsonToken::String;
    }
  }
  switch (*p_) {
    case '{':
      return JsonToken::BeginObject;
    case '[':
      return JsonToken::BeginArray;
    case '"':
      return JsonToken::String;
    case 't':
    case 'f':
      return JsonToken::Bool;
    case 'n':
      return JsonToken::Null;
    default:
      if (*p_ == '-' || isDigit(*p_)) return JsonToken::Number;
      break;
  }
  lex.failUnexpected(p_, "a JSON value");
}

char JsonReader::valueStart() {
  if (!stack_.empty() && stack_.back() == '{' && state_ != State::AfterKey) [[unlikely]]
    misuse("a value in an object must follow nextKey()");
  const JsonToken t = peek();
  if (t == JsonToken::EndArray || t == JsonToken::EndObject || t == JsonToken::End) [[unlikely]]
    fail(JsonErrorCode::TypeMismatch, p_, fmt::format("expected a value, found {}", tokenName(t)));
  return *p_;
}

void JsonReader::valueDone() noexcept {
  if (stack_.empty()) {
    done_ = true;
  } else {
    state_ = State::AfterValue;
  }
}

void JsonReader::open(char c) {
  JsonLexer{begin_, end_, options_}.checkDepth(p_, stack_.size());
  ++p_;
  stack_.push_back(c);
  state_ = State::First;
}

void JsonReader::readBeginObject() {
  if (valueStart() != '{') failType("an object");
  open('{');
}

void JsonReader::readBeginArray() {
  if (valueStart() != '[') failType("an array");
  open('[');
}

std::optional<std::string_view> JsonReader::nextKey() {
  if (stack_.empty() || stack_.back() != '{') [[unlikely]]
    misuse("nextKey() outside an object");
  if (state_ == State::AfterKey) [[unlikely]]
    misuse("nextKey() before the previous key's value was read");
  if (peek() == JsonToken::EndObject) return std::nullopt;
  const std::string_view k = scanString(true);
  skipWs();
  if (p_ >= end_ || *p_ != ':') [[unlikely]]
    JsonLexer{begin_, end_, options_}.failUnexpected(p_, "':'");
  ++p_;
  state_ = State::AfterKey;
  return k;
}

void JsonReader::close(char c) {
  const char opener = c == '}' ? '{' : '[';
  if (stack_.empty() || stack_.back() != opener) [[unlikely]]
    misuse(c == '}' ? "readEndObject() outside an object" : "readEndArray() outside an array");
  if (state_ == State::AfterKey) [[unlikely]]
    misuse("readEndObject() before the last key's value was read");
  const JsonToken t = peek();
  if (t != (c == '}' ? JsonToken::EndObject : JsonToken::EndArray)) [[unlikely]]
    fail(JsonErrorCode::TypeMismatch, p_,
         fmt::format("expected the end of the {}, found {}", c == '}' ? "object" : "array",
                     t == JsonToken::String && c == '}' ? "another key" : tokenName(t)));
  ++p_;
  stack_.pop_back();
  valueDone();
}

void JsonReader::readEndObject() { close('}'); }
void JsonReader::readEndArray() { close(']'); }

bool JsonReader::hasNextElement() {
  if (stack_.empty() || stack_.back() != '[') [[unlikely]]
    misuse("hasNextElement() outside an array");
  return peek() != JsonToken::EndArray;
}

// p_ is at the opening quote.
std::string_view JsonReader::scanString(bool allowEscapes) {
  return JsonLexer{begin_, end_, options_}.string(p_, scratch_, allowEscapes).text;
}

std::string_view JsonReader::readString() {
  if (valueStart() != '"') failType("a string");
  const std::string_view s = scanString(true);
  valueDone();
  return s;
}

std::string_view JsonReader::readStringNoEscapes() {
  if (valueStart() != '"') failType("a string");
  const std::string_view s = scanString(false);
  valueDone();
  return s;
}

std::int64_t JsonReader::readInt64() {
  if (valueStart() != '-' && !isDigit(*p_)) failType("an integer");
  std::int64_t v = 0;
  p_ = lexInteger(JsonLexer{begin_, end_, options_}, p_, v);
  valueDone();
  return v;
}

std::uint64_t JsonReader::readUInt64() {
  if (valueStart() != '-' && !isDigit(*p_)) failType("an integer");
  std::uint64_t v = 0;
  p_ = lexInteger(JsonLexer{begin_, end_, options_}, p_, v);
  valueDone();
  return v;
}

double JsonReader::readDouble() {
  if (valueStart() != '-' && !isDigit(*p_)) failType("a number");
  const JsonLexer lex{begin_, end_, options_};
  detail::NumberScan s = lex.scanNumber(p_);
  if (!s.isFloat && !options_.bigIntegersAsDouble && !JsonLexer::integerInRange(s))
    lex.failBigInteger(p_, s.end);
  const double d = lex.toDouble(s, p_);
  p_ = s.end;
  valueDone();
  return d;
}

float JsonReader::readFloat() {
  peek();
  const char* at = p_;
  const double d = readDouble();
  if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) [[unlikely]] {
    JsonLexer{begin_, end_, options_}.fail(
        JsonErrorCode::NumberOutOfRange, at,
        fmt::format("number {} is outside float's range", std::string_view(at, p_ - at)));
  }
  return static_cast<float>(d);
}

bool JsonReader::readBool() {
  const char c = valueStart();
  if (c != 't' && c != 'f') failType("a boolean");
  const std::string_view word = c == 't' ? "true" : "false";
  JsonLexer{begin_, end_, options_}.expectLiteral(p_, word);
  p_ += word.size();
  valueDone();
  return c == 't';
}

void JsonReader::readNull() {
  if (valueStart() != 'n') failType("null");
  JsonLexer{begin_, end_, options_}.expectLiteral(p_, "null");
  p_ += 4;
  valueDone();
}

bool JsonReader::tryReadNull() {
  if (valueStart() != 'n') return false;
  readNull();
  return true;
}

void JsonReader::skipValue() {
  const std::size_t base = stack_.size();
  do {
    if (stack_.size() > base && stack_.back() == '{' && state_ != State::AfterKey) {
      if (!nextKey()) readEndObject();
      continue;
    }
    const JsonToken t = stack_.size() > base ? peek() : (valueStart(), peek());
    switch (t) {
      case JsonToken::BeginObject:
        readBeginObject();
        break;
      case JsonToken::BeginArray:
        readBeginArray();
        break;
      case JsonToken::EndArray:
        readEndArray();
        break;
      case JsonToken::String:
        scanString(true);
        valueDone();
        break;
      case JsonToken::Number: {
        // Checked as the parser checks it: a float, or an integer outside int64/uint64, must be
        // a finite double (overflow is NumberOutOfRange), and big integers need
        // bigIntegersAsDouble. The fast path (an integer in range) converts nothing.
        const JsonLexer lex{begin_, end_, options_};
        detail::NumberScan s = lex.scanNumber(p_);
        if (s.isFloat || !JsonLexer::integerInRange(s)) {
          if (!s.isFloat && !options_.bigIntegersAsDouble) lex.failBigInteger(p_, s.end);
          (void)lex.toDouble(s, p_);
        }
        p_ = s.end;
        valueDone();
        break;
      }
      case JsonToken::Bool:
        readBool();
        break;
      case JsonToken::Null:
        readNull();
        break;
      case JsonToken::EndObject:
      case JsonToken::End:
        failType("a value");  // not reached: valueStart and the key branch handle these
    }
  } while (stack_.size() > base);
}

void JsonReader::readEnd() {
  if (!done_) [[unlikely]]
    misuse("readEnd() before the top-level value was read");
  peek();
}

}  // namespace netbuf
