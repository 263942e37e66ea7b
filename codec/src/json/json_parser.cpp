#include <netbuf/codec/json/json_parser.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <system_error>

#include "json_internal.hpp"

namespace netbuf {

std::string_view jsonErrorCodeName(JsonErrorCode code) noexcept {
  switch (code) {
    case JsonErrorCode::Syntax:
      return "Syntax";
    case JsonErrorCode::UnexpectedEnd:
      return "UnexpectedEnd";
    case JsonErrorCode::InvalidUtf8:
      return "InvalidUtf8";
    case JsonErrorCode::InvalidEscape:
      return "InvalidEscape";
    case JsonErrorCode::LoneSurrogate:
      return "LoneSurrogate";
    case JsonErrorCode::DepthLimit:
      return "DepthLimit";
    case JsonErrorCode::DocumentSizeLimit:
      return "DocumentSizeLimit";
    case JsonErrorCode::StringLengthLimit:
      return "StringLengthLimit";
    case JsonErrorCode::NumberLengthLimit:
      return "NumberLengthLimit";
    case JsonErrorCode::NumberOutOfRange:
      return "NumberOutOfRange";
    case JsonErrorCode::TrailingContent:
      return "TrailingContent";
    case JsonErrorCode::ExtendedType:
      return "ExtendedType";
    case JsonErrorCode::TypeMismatch:
      return "TypeMismatch";
  }
  return "?";
}

JsonError::JsonError(JsonErrorCode code, std::string detail, std::uint64_t offset,
                     std::uint64_t line, std::uint64_t column, std::uint64_t value,
                     std::uint64_t limit)
    : JsonError(code, detail,
                fmt::format("JsonError: {} at offset {} (line {}, column {})", detail, offset, line,
                            column),
                offset, line, column, value, limit) {}

JsonError::JsonError(JsonErrorCode code, std::string detail, std::string what, std::uint64_t offset,
                     std::uint64_t line, std::uint64_t column, std::uint64_t value,
                     std::uint64_t limit)
    : DecoderError(what, offset, value, limit),
      code_(code),
      line_(line),
      column_(column),
      detail_(std::move(detail)) {}

JsonError JsonError::rebased(std::uint64_t base) const {
  const std::uint64_t off = base + offset();
  return JsonError(code_, detail_,
                   fmt::format("JsonError: {} at stream offset {} (line {}, column {} of the value "
                               "at stream offset {})",
                               detail_, off, line_, column_, base),
                   off, line_, column_, value(), limit());
}

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

// Writes code point cp (valid, not a surrogate) as UTF-8; returns the bytes written.
inline std::size_t putUtf8(char* d, std::uint32_t cp) noexcept {
  if (cp < 0x80) {
    d[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    d[0] = static_cast<char>(0xC0 | (cp >> 6));
    d[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    d[0] = static_cast<char>(0xE0 | (cp >> 12));
    d[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    d[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  d[0] = static_cast<char>(0xF0 | (cp >> 18));
  d[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  d[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  d[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace

// One parse: the input, the cursor and the scratch of the JsonParser.
struct JsonParseRun {
  const char* begin;
  const char* p;
  const char* end;
  Document& doc;
  JsonParser& parser;
  const JsonParseOptions& opt;

  // ---------------------------------------------------------------- errors (out of line)
  [[noreturn]] void fail(JsonErrorCode code, const char* at, std::string detail,
                         std::uint64_t value = CodecError::kNone,
                         std::uint64_t limit = CodecError::kNone) const;
  [[noreturn]] void failEnd(const char* what) const {
    fail(JsonErrorCode::UnexpectedEnd, end, fmt::format("unexpected end of input {}", what));
  }
  [[noreturn]] void failUnexpected(const char* at, const char* expected) const;

  // ---------------------------------------------------------------- helpers
  void skipWs() noexcept {
    while (p < end) {
      const char c = *p;
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++p;
    }
  }

  void push(Value v) { parser.stack_.push_back(v); }

  Value run();
  void openContainer(bool object);
  void parseKey();
  Value parseString();
  Value parseEscaped(const char* open, const char* body, const char* q, unsigned high);
  const char* unescapeOne(const char* q, std::vector<char>& out);
  Value parseNumber();
  Value parseLiteral();
  Value closeArray();
  Value closeObject();
  Value extendedType(const Member& m, const char* open);
  void validateUtf8(const char* s, std::size_t n) const {
    const std::size_t bad = utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(s), n);
    if (bad != utf8::npos) [[unlikely]]
      fail(JsonErrorCode::InvalidUtf8, s + bad,
           fmt::format("ill-formed UTF-8 ({}) in a string", describeByte(s[bad])));
  }
};

void JsonParseRun::fail(JsonErrorCode code, const char* at, std::string detail, std::uint64_t value,
                        std::uint64_t limit) const {
  std::uint64_t line = 1;
  const char* lineStart = begin;
  for (const char* q = begin; q < at; ++q) {
    if (*q == '\n') {
      ++line;
      lineStart = q + 1;
    }
  }
  throw JsonError(code, std::move(detail), static_cast<std::uint64_t>(at - begin), line,
                  static_cast<std::uint64_t>(at - lineStart) + 1, value, limit);
}

void JsonParseRun::failUnexpected(const char* at, const char* expected) const {
  if (at >= end) failEnd(fmt::format("(expected {})", expected).c_str());
  if (at == begin && end - begin >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0)
    fail(JsonErrorCode::Syntax, at, "unexpected UTF-8 byte order mark (not allowed by RFC 8259)");
  fail(JsonErrorCode::Syntax, at,
       fmt::format("unexpected character {} (expected {})", describeByte(*at), expected));
}

void JsonParseRun::openContainer(bool object) {
  auto& frames = parser.frames_;
  if (frames.size() >= opt.maxDepth) [[unlikely]]
    fail(JsonErrorCode::DepthLimit, p,
         fmt::format("nesting depth {} exceeds maxDepth {}", frames.size() + 1, opt.maxDepth),
         frames.size() + 1, opt.maxDepth);
  frames.push_back({parser.stack_.size(), static_cast<std::size_t>(p - begin), object});
  ++p;
}

void JsonParseRun::parseKey() {
  // p is at the first byte after '{' or ',' plus whitespace.
  if (p >= end || *p != '"') [[unlikely]]
    failUnexpected(p, "'\"' starting an object key");
  push(parseString());
  skipWs();
  if (p >= end || *p != ':') [[unlikely]]
    failUnexpected(p, "':' after an object key");
  ++p;
}

Value JsonParseRun::parseString() {
  const char* open = p;
  const char* body = p + 1;
  unsigned high = 0;
  const char* q = json_detail::scanStringBody(body, end, high);
  if (q < end && *q == '"') [[likely]] {
    const auto n = static_cast<std::size_t>(q - body);
    if (n > opt.maxStringLength) [[unlikely]]
      fail(JsonErrorCode::StringLengthLimit, open,
           fmt::format("string length {} exceeds maxStringLength {}", n, opt.maxStringLength), n,
           opt.maxStringLength);
    if (high & 0x80) validateUtf8(body, n);
    p = q + 1;
    return Value::strView(std::string_view(body, n));
  }
  return parseEscaped(open, body, q, high);
}

Value JsonParseRun::parseEscaped(const char* open, const char* body, const char* q, unsigned high) {
  std::vector<char>& out = parser.unescaped_;
  out.clear();
  const char* seg = body;  // start of the current run of plain bytes
  for (;;) {
    if (q >= end) failEnd("inside a string");
    const auto c = static_cast<unsigned char>(*q);
    // The plain run [seg, q): validate (it ends at an ASCII byte, so at a character boundary)
    // and append.
    if (high & 0x80) validateUtf8(seg, static_cast<std::size_t>(q - seg));
    out.insert(out.end(), seg, q);
    if (c == '"') break;
    if (c != '\\')
      fail(JsonErrorCode::Syntax, q,
           fmt::format("unescaped control character {} in a string", describeByte(*q)));
    q = unescapeOne(q, out);
    if (out.size() > opt.maxStringLength) [[unlikely]]
      fail(JsonErrorCode::StringLengthLimit, open,
           fmt::format("string length {} exceeds maxStringLength {}", out.size(),
                       opt.maxStringLength),
           out.size(), opt.maxStringLength);
    seg = q;
    high = 0;
    q = json_detail::scanStringBody(q, end, high);
  }
  if (out.size() > opt.maxStringLength) [[unlikely]]
    fail(
        JsonErrorCode::StringLengthLimit, open,
        fmt::format("string length {} exceeds maxStringLength {}", out.size(), opt.maxStringLength),
        out.size(), opt.maxStringLength);
  p = q + 1;
  return doc.strUnchecked(std::string_view(out.data(), out.size()));
}

// q is at a backslash; appends the unescaped character(s) and returns the byte after the escape.
const char* JsonParseRun::unescapeOne(const char* q, std::vector<char>& out) {
  if (end - q < 2) failEnd("inside an escape sequence");
  char simple = 0;
  switch (q[1]) {
    case '"':
      simple = '"';
      break;
    case '\\':
      simple = '\\';
      break;
    case '/':
      simple = '/';
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
    out.push_back(simple);
    return q + 2;
  }
  auto hex4 = [&](const char* at) -> std::uint32_t {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      if (at + 2 + i >= end) failEnd("inside a \\u escape");
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
  char buf[4];
  if (cp >= 0xD800 && cp <= 0xDFFF) {
    bool paired = false;
    if (cp <= 0xDBFF) {
      // A high surrogate must be followed by a \u escape of a low one.
      if (end - next >= 2 && next[0] == '\\' && next[1] == 'u') {
        const std::uint32_t lo = hex4(next);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          next += 6;
          paired = true;
        }
      } else if (end - next < 2 && (next == end || next[0] == '\\')) {
        failEnd("inside a surrogate pair");
      }
    }
    if (!paired) {
      if (!opt.allowLoneSurrogates)
        fail(JsonErrorCode::LoneSurrogate, q,
             fmt::format("unpaired surrogate \\u{:04X} (allowLoneSurrogates is off)", cp));
      cp = 0xFFFD;
    }
  }
  const std::size_t n = putUtf8(buf, cp);
  out.insert(out.end(), buf, buf + n);
  return next;
}

Value JsonParseRun::parseLiteral() {
  const char* word = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
  const std::size_t n = std::strlen(word);
  const auto avail = static_cast<std::size_t>(end - p);
  if (avail >= n && std::memcmp(p, word, n) == 0) {
    p += n;
    if (word[0] == 'n') return Value::nil();
    return Value::boolean(word[0] == 't');
  }
  for (std::size_t i = 0; i < n && i < avail; ++i) {
    if (p[i] != word[i])
      fail(JsonErrorCode::Syntax, p + i, fmt::format("invalid literal (expected {})", word));
  }
  failEnd(fmt::format("inside the literal {}", word).c_str());
}

Value JsonParseRun::parseNumber() {
  const char* start = p;
  const char* q = p;
  const bool neg = *q == '-';
  if (neg) ++q;
  if (q >= end) failEnd("inside a number");
  std::uint64_t u = 0;
  std::size_t digits = 0;
  if (*q == '0') {
    ++q;
    digits = 1;
  } else if (isDigit(*q)) {
    const char* ds = q;
    while (q < end && isDigit(*q)) {
      u = u * 10 + static_cast<unsigned>(*q - '0');
      ++q;
    }
    digits = static_cast<std::size_t>(q - ds);
  } else {
    failUnexpected(q, "a digit");
  }
  bool isFloat = false;
  if (q < end && *q == '.') {
    ++q;
    if (q >= end) failEnd("inside a number");
    if (!isDigit(*q)) failUnexpected(q, "a digit after '.'");
    while (q < end && isDigit(*q)) ++q;
    isFloat = true;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    ++q;
    if (q < end && (*q == '+' || *q == '-')) ++q;
    if (q >= end) failEnd("inside a number");
    if (!isDigit(*q)) failUnexpected(q, "a digit in the exponent");
    while (q < end && isDigit(*q)) ++q;
    isFloat = true;
  }
  const auto len = static_cast<std::size_t>(q - start);
  if (len > opt.maxNumberLength) [[unlikely]]
    fail(JsonErrorCode::NumberLengthLimit, start,
         fmt::format("number length {} exceeds maxNumberLength {}", len, opt.maxNumberLength), len,
         opt.maxNumberLength);
  p = q;
  if (!isFloat) {
    bool fits = digits <= 19;
    if (digits == 20) {
      // Recompute with overflow checks (u may have wrapped).
      std::uint64_t v = 0;
      fits = true;
      for (const char* d = start + (neg ? 1 : 0); d < q; ++d) {
        if (__builtin_mul_overflow(v, 10U, &v) ||
            __builtin_add_overflow(v, static_cast<unsigned>(*d - '0'), &v)) {
          fits = false;
          break;
        }
      }
      u = v;
    }
    if (fits) {
      if (!neg) return Value::uinteger(u);
      if (u == 0) return Value::float64(-0.0);
      if (u <= std::uint64_t{1} << 63) return Value::integer(static_cast<std::int64_t>(0 - u));
    }
    if (!opt.bigIntegersAsDouble)
      fail(JsonErrorCode::NumberOutOfRange, start,
           fmt::format("integer {} is outside [-2^63, 2^64-1] (bigIntegersAsDouble is off)",
                       std::string_view(start, std::min<std::size_t>(len, 64))));
  }
  double d = 0;
  const auto r = std::from_chars(start, q, d);
  if (r.ec == std::errc::result_out_of_range) [[unlikely]] {
    // Overflow or underflow? The decimal exponent of the first significant digit decides.
    const char* s = start + (neg ? 1 : 0);
    long long mag = 0;  // value = 0.d1d2... * 10^(mag + exponent)
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
    if (s < q) {  // exponent
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
           fmt::format("number {} is out of the range of a double",
                       std::string_view(start, std::min<std::size_t>(len, 64))));
    d = neg ? -0.0 : 0.0;
  } else if (r.ec != std::errc() || r.ptr != q) [[unlikely]] {
    fail(JsonErrorCode::Syntax, start, "malformed number");
  }
  return Value::float64(d);
}

Value JsonParseRun::closeArray() {
  auto& frames = parser.frames_;
  auto& stack = parser.stack_;
  const std::size_t start = frames.back().start;
  const std::size_t n = stack.size() - start;
  Value* dst = reinterpret_cast<Value*>(doc.allocateBytes(n * sizeof(Value)));
  if (n != 0) std::memcpy(static_cast<void*>(dst), stack.data() + start, n * sizeof(Value));
  stack.resize(start);
  frames.pop_back();
  return Value::arrayView({dst, n});
}

Value JsonParseRun::closeObject() {
  static_assert(sizeof(Member) == 2 * sizeof(Value), "Member must be a key/value Value pair");
  auto& frames = parser.frames_;
  auto& stack = parser.stack_;
  const std::size_t start = frames.back().start;
  const std::size_t n = (stack.size() - start) / 2;
  if (opt.extendedTypes && n == 1) {
    const Member m{stack[start], stack[start + 1]};
    const std::string_view key = m.key.asStr();
    if (!key.empty() && key[0] == '$' && (key == "$bin" || key == "$ext" || key == "$timestamp")) {
      const Value v = extendedType(m, begin + frames.back().open);
      stack.resize(start);
      frames.pop_back();
      return v;
    }
  }
  Member* dst = reinterpret_cast<Member*>(doc.allocateBytes(n * sizeof(Member)));
  if (n != 0) std::memcpy(static_cast<void*>(dst), stack.data() + start, n * sizeof(Member));
  stack.resize(start);
  frames.pop_back();
  return Value::mapView({dst, n});
}

Value JsonParseRun::extendedType(const Member& m, const char* open) {
  const std::string_view key = m.key.asStr();
  auto bad = [&](const char* why) {
    fail(JsonErrorCode::ExtendedType, open, fmt::format("malformed {} object: {}", key, why));
  };
  auto decode64 = [&](const Value& s) -> std::span<const std::byte> {
    if (!s.isStr()) bad("expected a base64 string");
    const std::string_view text = s.asStr();
    std::byte* dst = doc.allocateBytes(text.size() / 4 * 3);
    const std::size_t n = json_detail::base64Decode(text.data(), text.size(), dst);
    if (n == SIZE_MAX) bad("invalid base64 (RFC 4648 standard alphabet with padding)");
    return {dst, n};
  };
  if (key == "$bin") return Value::binView(decode64(m.value));
  if (!m.value.isArray() || m.value.size() != 2) bad("expected an array of two elements");
  const Value& a = m.value.asArray()[0];
  const Value& b = m.value.asArray()[1];
  if (key == "$ext") {
    if (!a.isInteger()) bad("the type must be an integer");
    const bool inRange = a.type() == ValueType::Int ? a.asInt64() >= -128 : a.asUInt64() <= 127;
    if (!inRange || (a.type() == ValueType::Int && a.asInt64() == -1))
      bad("the type must be in -128..127 and not -1 (timestamps)");
    return Value::extView(static_cast<std::int8_t>(a.asInt64()), decode64(b));
  }
  // $timestamp
  if (!a.isInteger() || (a.type() == ValueType::UInt && a.asUInt64() > INT64_MAX))
    bad("the seconds must be an int64");
  if (b.type() != ValueType::UInt || b.asUInt64() > Value::kMaxNanoseconds)
    bad("the nanoseconds must be an integer in 0..999999999");
  return Value::timestamp({a.asInt64(), static_cast<std::uint32_t>(b.asUInt64())});
}

Value JsonParseRun::run() {
  const auto size = static_cast<std::size_t>(end - begin);
  if (size > opt.maxDocumentSize)
    fail(JsonErrorCode::DocumentSizeLimit, begin,
         fmt::format("document size {} exceeds maxDocumentSize {}", size, opt.maxDocumentSize),
         size, opt.maxDocumentSize);
  parser.stack_.clear();
  parser.frames_.clear();
  auto& frames = parser.frames_;
  Value v;
  for (;;) {
  value:
    skipWs();
    if (p >= end) failEnd(frames.empty() ? "(expected a JSON value)" : "(expected a value)");
    switch (*p) {
      case '{':
        openContainer(true);
        skipWs();
        if (p < end && *p == '}') {
          ++p;
          v = closeObject();
          break;
        }
        parseKey();
        goto value;
      case '[':
        openContainer(false);
        skipWs();
        if (p < end && *p == ']') {
          ++p;
          v = closeArray();
          break;
        }
        goto value;
      case '"':
        v = parseString();
        break;
      case 't':
      case 'f':
      case 'n':
        v = parseLiteral();
        break;
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
        v = parseNumber();
        break;
      default:
        failUnexpected(p, "a JSON value");
    }
    // v is complete: add it to the enclosing container, closing containers as they end.
    for (;;) {
      if (frames.empty()) return v;
      push(v);
      skipWs();
      if (p >= end)
        failEnd(frames.back().object ? "(expected ',' or '}')" : "(expected ',' or ']')");
      const char c = *p;
      const bool object = frames.back().object;
      if (c == ',') {
        ++p;
        if (object) {
          skipWs();
          parseKey();
        }
        goto value;
      }
      if (c == (object ? '}' : ']')) {
        ++p;
        v = object ? closeObject() : closeArray();
        continue;
      }
      failUnexpected(p, object ? "',' or '}'" : "',' or ']'");
    }
  }
}

void JsonParser::parse(std::string_view text, Document& into) {
  JsonParseRun r{text.data(), text.data(), text.data() + text.size(), into, *this, options_};
  const Value root = r.run();
  r.skipWs();
  if (r.p != r.end)
    r.fail(JsonErrorCode::TrailingContent, r.p,
           fmt::format("unexpected {} after the top-level value", describeByte(*r.p)));
  into.setRoot(root);
}

void JsonParser::parse(ByteBuf input, Document& into) {
  parse(input.readableStringView(), into);
  into.keepAlive(std::move(input));
}

namespace json {

namespace {
JsonParser& threadParser(const JsonParseOptions& options) {
  thread_local JsonParser parser;
  parser.setOptions(options);
  return parser;
}
}  // namespace

void parse(std::string_view text, Document& into, const JsonParseOptions& options) {
  threadParser(options).parse(text, into);
}

void parse(ByteBuf input, Document& into, const JsonParseOptions& options) {
  threadParser(options).parse(std::move(input), into);
}

Document parse(std::string_view text, const JsonParseOptions& options) {
  Document doc;
  threadParser(options).parse(text, doc);
  return doc;
}

Document parse(ByteBuf input, const JsonParseOptions& options) {
  Document doc;
  threadParser(options).parse(std::move(input), doc);
  return doc;
}

}  // namespace json
}  // namespace netbuf
