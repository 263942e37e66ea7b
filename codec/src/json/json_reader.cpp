// JsonReader (json_parser.hpp): the pull reader behind the typed API (json_traits.hpp).
#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <system_error>

#include "json_internal.hpp"

namespace netbuf {

namespace {

constexpr bool isDigit(char c) noexcept { return static_cast<unsigned char>(c - '0') < 10; }

std::string describeByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void appendUtf8(std::string& d, std::uint32_t cp) {
  if (cp < 0x80) {
    d += static_cast<char>(cp);
  } else if (cp < 0x800) {
    d += static_cast<char>(0xC0 | (cp >> 6));
    d += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    d += static_cast<char>(0xE0 | (cp >> 12));
    d += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    d += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    d += static_cast<char>(0xF0 | (cp >> 18));
    d += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    d += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    d += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

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

}  // namespace

JsonReader::JsonReader(std::string_view text, const JsonParseOptions& options)
    : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), options_(options) {
  if (text.size() > options_.maxDocumentSize) [[unlikely]]
    fail(JsonErrorCode::DocumentSizeLimit, begin_,
         fmt::format("document size {} exceeds maxDocumentSize {}", text.size(),
                     options_.maxDocumentSize),
         text.size(), options_.maxDocumentSize);
}

void JsonReader::fail(JsonErrorCode code, const char* at, std::string detail, std::uint64_t value,
                      std::uint64_t limit) const {
  std::uint64_t line = 1;
  const char* lineStart = begin_;
  for (const char* q = begin_; q < at; ++q) {
    if (*q == '\n') {
      ++line;
      lineStart = q + 1;
    }
  }
  throw JsonError(code, std::move(detail), static_cast<std::uint64_t>(at - begin_), line,
                  static_cast<std::uint64_t>(at - lineStart) + 1, value, limit);
}

void JsonReader::failRange(std::uint64_t at, bool negative, std::uint64_t value, std::size_t bytes,
                           bool isSigned) const {
  fail(JsonErrorCode::NumberOutOfRange, begin_ + at,
       fmt::format("integer {}{} is out of the range of a {}-bit {} integer", negative ? "-" : "",
                   negative ? 0 - value : value, bytes * 8, isSigned ? "signed" : "unsigned"));
}

void JsonReader::failEnd(const char* what) const {
  fail(JsonErrorCode::UnexpectedEnd, end_, fmt::format("unexpected end of input {}", what));
}

void JsonReader::failType(const char* expected) {
  const JsonToken t = peek();
  fail(JsonErrorCode::TypeMismatch, p_,
       fmt::format("expected {}, found {}", expected, tokenName(t)));
}

JsonToken JsonReader::peek() {
  if (stack_.empty()) {
    skipWs();
    if (done_) {
      if (p_ < end_) [[unlikely]]
        fail(JsonErrorCode::TrailingContent, p_,
             fmt::format("unexpected {} after the top-level value", describeByte(*p_)));
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
        fail(JsonErrorCode::Syntax, p_,
             fmt::format("unexpected character {} (expected {})", describeByte(*p_),
                         object ? "',' or '}'" : "',' or ']'"));
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
        fail(JsonErrorCode::Syntax, p_,
             fmt::format("unexpected character {} (expected a string key)", describeByte(*p_)));
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
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      return JsonToken::Number;
    default:
      break;
  }
  if (p_ == begin_ && end_ - begin_ >= 3 && std::memcmp(begin_, "\xEF\xBB\xBF", 3) == 0)
    fail(JsonErrorCode::Syntax, p_, "unexpected UTF-8 byte order mark (not allowed by RFC 8259)");
  fail(JsonErrorCode::Syntax, p_,
       fmt::format("unexpected character {} (expected a JSON value)", describeByte(*p_)));
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
  if (stack_.size() >= options_.maxDepth) [[unlikely]]
    fail(JsonErrorCode::DepthLimit, p_,
         fmt::format("nesting depth {} exceeds maxDepth {}", stack_.size() + 1, options_.maxDepth),
         stack_.size() + 1, options_.maxDepth);
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
  if (p_ >= end_) failEnd("(expected ':')");
  if (*p_ != ':') [[unlikely]]
    fail(JsonErrorCode::Syntax, p_,
         fmt::format("unexpected character {} (expected ':')", describeByte(*p_)));
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
  const char* open = p_;
  const char* body = p_ + 1;
  unsigned high = 0;
  const char* q = json_detail::scanStringBody(body, end_, high);
  auto checkLength = [&](std::size_t n) {
    if (n > options_.maxStringLength) [[unlikely]]
      fail(JsonErrorCode::StringLengthLimit, open,
           fmt::format("string length {} exceeds maxStringLength {}", n, options_.maxStringLength),
           n, options_.maxStringLength);
  };
  auto validate = [&](const char* s, std::size_t n) {
    const std::size_t bad = utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(s), n);
    if (bad != utf8::npos) [[unlikely]]
      fail(JsonErrorCode::InvalidUtf8, s + bad,
           fmt::format("ill-formed UTF-8 ({}) in a string", describeByte(s[bad])));
  };
  if (q < end_ && *q == '"') [[likely]] {
    const auto n = static_cast<std::size_t>(q - body);
    checkLength(n);
    if (high & 0x80) validate(body, n);
    p_ = q + 1;
    return {body, n};
  }
  if (!allowEscapes && q < end_ && *q == '\\')
    fail(JsonErrorCode::TypeMismatch, open,
         "a string with escapes cannot be read as a view of the input (read a std::string)");
  std::string& out = scratch_;
  out.clear();
  const char* seg = body;
  for (;;) {
    if (q >= end_) failEnd("inside a string");
    if (high & 0x80) validate(seg, static_cast<std::size_t>(q - seg));
    out.append(seg, q);
    if (*q == '"') break;
    if (*q != '\\')
      fail(JsonErrorCode::Syntax, q,
           fmt::format("unescaped control character {} in a string", describeByte(*q)));
    if (end_ - q < 2) failEnd("inside an escape sequence");
    char simple = 0;
    switch (q[1]) {
      case '"':
      case '\\':
      case '/':
        simple = q[1];
        break;
      case 'b':
        simple = '\b';
        break;
      case 'f':
        simple = '\f';
        break;
      case 'n':
        simple = '\n';
        break;
      case 'r':
        simple = '\r';
        break;
      case 't':
        simple = '\t';
        break;
      case 'u':
        break;
      default:
        fail(JsonErrorCode::InvalidEscape, q,
             fmt::format("invalid escape '\\' followed by {}", describeByte(q[1])));
    }
    if (simple != 0) {
      out += simple;
      q += 2;
    } else {
      auto hex4 = [&](const char* at) -> std::uint32_t {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
          if (at + 2 + i >= end_) failEnd("inside a \\u escape");
          const int h = hexValue(at[2 + i]);
          if (h < 0)
            fail(JsonErrorCode::InvalidEscape, at,
                 fmt::format("invalid \\u escape: {} is not a hex digit", describeByte(at[2 + i])));
          v = v << 4 | static_cast<std::uint32_t>(h);
        }
        return v;
      };
      std::uint32_t cp = hex4(q);
      const char* next = q + 6;
      if (cp >= 0xD800 && cp <= 0xDFFF) {
        bool paired = false;
        if (cp <= 0xDBFF) {
          if (end_ - next >= 2 && next[0] == '\\' && next[1] == 'u') {
            const std::uint32_t lo = hex4(next);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              next += 6;
              paired = true;
            }
          } else if (end_ - next < 2 && (next == end_ || next[0] == '\\')) {
            failEnd("inside a surrogate pair");
          }
        }
        if (!paired) {
          if (!options_.allowLoneSurrogates)
            fail(JsonErrorCode::LoneSurrogate, q,
                 fmt::format("unpaired surrogate \\u{:04X} (allowLoneSurrogates is off)", cp));
          cp = 0xFFFD;
        }
      }
      appendUtf8(out, cp);
      q = next;
    }
    checkLength(out.size());
    seg = q;
    high = 0;
    q = json_detail::scanStringBody(q, end_, high);
  }
  checkLength(out.size());
  p_ = q + 1;
  return out;
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

// p_ is at a number's first byte; returns its end (p_ unchanged).
const char* JsonReader::scanNumber(bool& isFloat) {
  const char* q = p_;
  if (*q == '-') ++q;
  if (q >= end_) failEnd("inside a number");
  if (*q == '0') {
    ++q;
  } else if (isDigit(*q)) {
    while (q < end_ && isDigit(*q)) ++q;
  } else {
    fail(JsonErrorCode::Syntax, q,
         fmt::format("unexpected character {} (expected a digit)", describeByte(*q)));
  }
  isFloat = false;
  auto digitsAfter = [&](const char* what) {
    if (q >= end_) failEnd("inside a number");
    if (!isDigit(*q))
      fail(JsonErrorCode::Syntax, q,
           fmt::format("unexpected character {} (expected {})", describeByte(*q), what));
    while (q < end_ && isDigit(*q)) ++q;
  };
  if (q < end_ && *q == '.') {
    ++q;
    digitsAfter("a digit after '.'");
    isFloat = true;
  }
  if (q < end_ && (*q == 'e' || *q == 'E')) {
    ++q;
    if (q < end_ && (*q == '+' || *q == '-')) ++q;
    digitsAfter("a digit in the exponent");
    isFloat = true;
  }
  const auto len = static_cast<std::size_t>(q - p_);
  if (len > options_.maxNumberLength) [[unlikely]]
    fail(JsonErrorCode::NumberLengthLimit, p_,
         fmt::format("number length {} exceeds maxNumberLength {}", len, options_.maxNumberLength),
         len, options_.maxNumberLength);
  return q;
}

std::int64_t JsonReader::readInt64() {
  if (valueStart() != '-' && !isDigit(*p_)) failType("an integer");
  bool isFloat = false;
  const char* q = scanNumber(isFloat);
  const std::string_view text(p_, std::min<std::size_t>(static_cast<std::size_t>(q - p_), 64));
  if (isFloat)
    fail(JsonErrorCode::TypeMismatch, p_, fmt::format("expected an integer, found {}", text));
  std::int64_t v = 0;
  const auto r = std::from_chars(p_, q, v);
  if (r.ec != std::errc() || r.ptr != q) [[unlikely]]
    fail(JsonErrorCode::NumberOutOfRange, p_,
         fmt::format("integer {} is out of the range of a 64-bit signed integer", text));
  p_ = q;
  valueDone();
  return v;
}

std::uint64_t JsonReader::readUInt64() {
  if (valueStart() != '-' && !isDigit(*p_)) failType("an integer");
  bool isFloat = false;
  const char* q = scanNumber(isFloat);
  const std::string_view text(p_, std::min<std::size_t>(static_cast<std::size_t>(q - p_), 64));
  if (isFloat)
    fail(JsonErrorCode::TypeMismatch, p_, fmt::format("expected an integer, found {}", text));
  std::uint64_t v = 0;
  if (*p_ == '-') {
    if (text != "-0") [[unlikely]]
      fail(JsonErrorCode::NumberOutOfRange, p_,
           fmt::format("integer {} is out of the range of a 64-bit unsigned integer", text));
  } else {
    const auto r = std::from_chars(p_, q, v);
    if (r.ec != std::errc() || r.ptr != q) [[unlikely]]
      fail(JsonErrorCode::NumberOutOfRange, p_,
           fmt::format("integer {} is out of the range of a 64-bit unsigned integer", text));
  }
  p_ = q;
  valueDone();
  return v;
}

double JsonReader::readDouble() {
  if (valueStart() != '-' && !isDigit(*p_)) failType("a number");
  bool isFloat = false;
  const char* start = p_;
  const char* q = scanNumber(isFloat);
  const auto len = static_cast<std::size_t>(q - start);
  const std::string_view text(start, std::min<std::size_t>(len, 64));
  if (!isFloat && !options_.bigIntegersAsDouble) {
    std::int64_t i = 0;
    std::uint64_t u = 0;
    if (std::from_chars(start, q, i).ec != std::errc() &&
        std::from_chars(start, q, u).ec != std::errc())
      fail(JsonErrorCode::NumberOutOfRange, start,
           fmt::format("integer {} is outside [-2^63, 2^64-1] (bigIntegersAsDouble is off)", text));
  }
  double d = 0;
  const auto r = std::from_chars(start, q, d);
  if (r.ec == std::errc::result_out_of_range) [[unlikely]] {
    // Overflow or underflow: the decimal exponent of the first significant digit decides.
    const char* s = start + (*start == '-' ? 1 : 0);
    long long mag = 0;
    bool seen = false;
    bool afterDot = false;
    for (; s < q && (isDigit(*s) || *s == '.'); ++s) {
      if (*s == '.') {
        afterDot = true;
      } else if (!seen && *s == '0') {
        if (afterDot) --mag;
      } else {
        seen = true;
        if (!afterDot) ++mag;
      }
    }
    long long e = 0;
    if (s < q) {
      ++s;
      const bool eneg = *s == '-';
      if (*s == '+' || *s == '-') ++s;
      for (; s < q; ++s) {
        if (e < 1000000000) e = e * 10 + (*s - '0');
      }
      if (eneg) e = -e;
    }
    if (seen && mag + e > 0)
      fail(JsonErrorCode::NumberOutOfRange, start,
           fmt::format("number {} is out of the range of a double", text));
    d = *start == '-' ? -0.0 : 0.0;
  } else if (r.ec != std::errc() || r.ptr != q) [[unlikely]] {
    fail(JsonErrorCode::Syntax, start, "malformed number");
  }
  p_ = q;
  valueDone();
  return d;
}

bool JsonReader::readBool() {
  const char c = valueStart();
  if (c != 't' && c != 'f') failType("a boolean");
  const char* word = c == 't' ? "true" : "false";
  const std::size_t n = c == 't' ? 4 : 5;
  for (std::size_t i = 0; i < n; ++i) {
    if (p_ + i >= end_) failEnd(fmt::format("inside the literal {}", word).c_str());
    if (p_[i] != word[i])
      fail(JsonErrorCode::Syntax, p_ + i, fmt::format("invalid literal (expected {})", word));
  }
  p_ += n;
  valueDone();
  return c == 't';
}

void JsonReader::readNull() {
  if (valueStart() != 'n') failType("null");
  for (std::size_t i = 0; i < 4; ++i) {
    if (p_ + i >= end_) failEnd("inside the literal null");
    if (p_[i] != "null"[i]) fail(JsonErrorCode::Syntax, p_ + i, "invalid literal (expected null)");
  }
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
        bool isFloat = false;
        p_ = scanNumber(isFloat);
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
