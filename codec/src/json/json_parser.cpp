#include <netbuf/codec/json/json_parser.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>

#include <netbuf/codec/json/detail/json_short_string.hpp>

#include "json_internal.hpp"
#include "json_lex.hpp"
#include "json_structural_index.hpp"

namespace netbuf {

// One parse: the input and its options (the lexer, json_lex.hpp), the cursor and the scratch of
// the JsonParser.
struct JsonParseRun : detail::JsonLexer {
  const char* p;
  Document& doc;
  JsonParser& parser;
  bool utf8Validated = false;  // stage 1 found the whole input valid UTF-8

  // ---------------------------------------------------------------- helpers
  void skipWs() noexcept {
    while (p < end) {
      const char c = *p;
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++p;
    }
  }

  Value run();
  bool runIndexed(const std::uint32_t* idx, const std::uint64_t* bits, Value& out);
  [[gnu::always_inline]] inline Value indexedString(std::size_t open, const std::uint64_t* bits);
  Value indexedEscapedString(std::size_t open, std::size_t close, bool high,
                             const std::uint64_t* bits);
  [[gnu::always_inline]] inline bool indexedScalar(char c, std::size_t pos,
                                                   const std::uint64_t* bits, Value& v);
  Value makeArray(const Value* first, std::size_t n);
  Value makeObject(const Value* first, std::size_t pairs, std::size_t open);
  Value parseString();
  Value parseNumber();
  Value parseLiteral();
  Value extendedType(const Member& m, const char* open);
};

namespace {

/// The lexer's unescape() and unescapeOne() output: bytes written from `start` on, at d (the
/// caller has made room: decoding never lengthens a string's text).
struct RawOut {
  char* start;
  char* d;
  void clear() noexcept { d = start; }
  char* data() const noexcept { return start; }
  char* end() const noexcept { return d; }
  std::size_t size() const noexcept { return static_cast<std::size_t>(d - start); }
  void push_back(char c) noexcept { *d++ = c; }
  void insert(char*, const char* first, const char* last) noexcept {
    std::memcpy(d, first, static_cast<std::size_t>(last - first));
    d += last - first;
  }
};

/// Whether the 4 bytes at `at` are w (without its terminator).
inline bool matchesWord4(const char* at, const char (&w)[5]) noexcept {
  std::uint32_t a;
  std::uint32_t b;
  std::memcpy(&a, at, 4);
  std::memcpy(&b, w, 4);
  return a == b;
}

/// A Str Value viewing [s, s + n) with the plain-ASCII hint when `plain`.
inline Value strValue(const char* s, std::size_t n, bool plain) {
  if (n > UINT32_MAX) [[unlikely]]
    return Value::strView({s, n});  // throws: too long for a Value
  return detail::ValueHints::str(s, static_cast<std::uint32_t>(n), plain);
}

}  // namespace

Value JsonParseRun::parseString() {
  detail::LexedString s;
  const char* q;
  unsigned high = 0;
  // Without escapes and non-ASCII bytes the text is plain ASCII: the scan stopped at the closing
  // quote, so it holds no '"', '\\' or control byte.
  if (plainString(p, s, q, high)) [[likely]]
    return strValue(s.text.data(), s.text.size(), s.plainAscii);
  const char* close = q < end && *q == '\\' ? closingQuote(q) : nullptr;
  if (close == nullptr || static_cast<std::size_t>(close - p - 1) > opt.maxStringLength) {
    // Malformed, or perhaps too long: the lexer's own pass into its scratch reports it (and a
    // string over the limit takes no arena room before it does).
    s = string(p, parser.unescaped_);
    return doc.strUnchecked(s.text);
  }
  // Decoded straight into the arena by the lexer's unescape(): the same checks, in the same
  // order, so the same errors as any other use of it.
  const char* open = p;
  char* dst =
      reinterpret_cast<char*>(doc.allocateBytes(static_cast<std::size_t>(close - open - 1)));
  RawOut out{dst, dst};
  p = unescape(open, open + 1, q, high, out) + 1;
  return strValue(dst, out.size(), detail::plainAsciiText(dst, out.size()));
}

Value JsonParseRun::parseLiteral() {
  const char c = *p;
  const auto left = end - p;
  if (c == 't' && left >= 4 && matchesWord4(p, "true")) {
    p += 4;
    return Value::boolean(true);
  }
  if (c == 'n' && left >= 4 && matchesWord4(p, "null")) {
    p += 4;
    return Value::nil();
  }
  if (c == 'f' && left >= 5 && matchesWord4(p + 1, "alse")) {
    p += 5;
    return Value::boolean(false);
  }
  // Not a whole literal: expectLiteral throws the lexer's error.
  const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
  expectLiteral(p, word);
  p += word.size();
  if (c == 'n') return Value::nil();
  return Value::boolean(c == 't');
}

Value JsonParseRun::parseNumber() {
  const char* start = p;
  detail::NumberScan s = scanNumber(start);
  p = s.end;
  if (!s.isFloat) {
    if (integerInRange(s)) {
      if (!s.negative) return Value::uinteger(s.magnitude);
      if (s.magnitude == 0) return Value::float64(-0.0);
      return Value::integer(static_cast<std::int64_t>(0 - s.magnitude));
    }
    if (!opt.bigIntegersAsDouble) failBigInteger(start, s.end);
  }
  return Value::float64(toDouble(s, start));
}

namespace {

/// Copies n Values (n x 16 bytes). Most containers are small: up to 32 Values this is a loop of
/// 16-byte moves, cheaper than a call into memcpy.
inline void copyValues(void* dst, const Value* src, std::size_t n) noexcept {
  static_assert(sizeof(Value) == 16);
#if defined(__SSE2__)
  if (n <= 32) {
    auto* d = static_cast<__m128i*>(dst);
    const auto* s = reinterpret_cast<const __m128i*>(src);
    for (std::size_t i = 0; i < n; ++i) _mm_storeu_si128(d + i, _mm_loadu_si128(s + i));
    return;
  }
#endif
  std::memcpy(dst, src, n * sizeof(Value));
}

}  // namespace

Value JsonParseRun::makeArray(const Value* first, std::size_t n) {
  Value* dst = reinterpret_cast<Value*>(doc.allocateBytes(n * sizeof(Value)));
  copyValues(dst, first, n);
  return Value::arrayView({dst, n});
}

Value JsonParseRun::makeObject(const Value* first, std::size_t pairs, std::size_t open) {
  static_assert(sizeof(Member) == 2 * sizeof(Value), "Member must be a key/value Value pair");
  if (opt.extendedTypes && pairs == 1) {
    const Member m{first[0], first[1]};
    const std::string_view key = m.key.asStr();
    if (!key.empty() && key[0] == '$' &&
        (key == "$bin" || key == "$ext" || key == "$timestamp" || key == "$float32")) {
      return extendedType(m, begin + open);
    }
  }
  Member* dst = reinterpret_cast<Member*>(doc.allocateBytes(pairs * sizeof(Member)));
  copyValues(dst, first, 2 * pairs);
  return Value::mapView({dst, pairs});
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
    const std::size_t n = detail::base64Decode(text.data(), text.size(), dst);
    if (n == SIZE_MAX) bad("invalid base64 (RFC 4648 standard alphabet with padding)");
    return {dst, n};
  };
  if (key == "$bin") return Value::binView(decode64(m.value));
  if (key == "$float32") {
    // The writer gives the float's shortest text, which reads back (as the nearest double, then
    // the nearest float) as the same float.
    if (!m.value.isNumber()) bad("expected a number");
    const double d = m.value.isInteger() ? (m.value.type() == ValueType::Int
                                                ? static_cast<double>(m.value.asInt64())
                                                : static_cast<double>(m.value.asUInt64()))
                                         : m.value.asDouble();
    // Below 2^128 - 2^103 (halfway between FLT_MAX and 2^128) d rounds to a finite float.
    if (!(std::fabs(d) < 0x1.ffffffp127)) bad("the number is out of float32 range");
    return Value::float32(static_cast<float>(d));
  }
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

// The open containers of a parse, kept in locals of run() and runIndexed(): their elements (or
// key/value pairs) on a stack of Values, and a frame per container. The JsonParser's stack_ and
// frames_ are the storage, used raw (their size is the capacity grown to, by doubling) and kept
// across parses. Macros rather than a class: the pointers stay in registers through the loop.
#define NETBUF_OPEN_CONTAINERS()                                 \
  auto& stackStore = parser.stack_;                              \
  auto& frameStore = parser.frames_;                             \
  if (stackStore.size() < 256) stackStore.resize(256);           \
  if (frameStore.size() < 32) frameStore.resize(32);             \
  Value* stackBase = stackStore.data();                          \
  Value* top = stackBase;                                        \
  Value* stackEnd = stackBase + stackStore.size();               \
  JsonParser::Frame* frames = frameStore.data();                 \
  std::size_t depth = 0;                                         \
  const auto growStack = [&] {                                   \
    const auto used = static_cast<std::size_t>(top - stackBase); \
    stackStore.resize(stackStore.size() * 2);                    \
    stackBase = stackStore.data();                               \
    top = stackBase + used;                                      \
    stackEnd = stackBase + stackStore.size();                    \
  };                                                             \
  Value* first /* a closing container's first element */
#define NETBUF_PUSH(value)            \
  do {                                \
    if (top == stackEnd) [[unlikely]] \
      growStack();                    \
    *top++ = (value);                 \
  } while (0)
// Opens a container whose bracket is at offset `at` (the depth limit is the caller's check).
#define NETBUF_OPEN(at, isObject)                                                    \
  do {                                                                               \
    if (depth == frameStore.size()) [[unlikely]] {                                   \
      frameStore.resize(depth * 2);                                                  \
      frames = frameStore.data();                                                    \
    }                                                                                \
    frames[depth++] = {static_cast<std::size_t>(top - stackBase), (at), (isObject)}; \
  } while (0)
// v = the innermost container, closed; its elements leave the stack.
#define NETBUF_CLOSE_OBJECT()                                                             \
  do {                                                                                    \
    first = stackBase + frames[--depth].start;                                            \
    v = makeObject(first, static_cast<std::size_t>(top - first) / 2, frames[depth].open); \
    top = first;                                                                          \
  } while (0)
#define NETBUF_CLOSE_ARRAY()                                     \
  do {                                                           \
    first = stackBase + frames[--depth].start;                   \
    v = makeArray(first, static_cast<std::size_t>(top - first)); \
    top = first;                                                 \
  } while (0)

// One state per place in the grammar, as in runIndexed(); every error is thrown where it is seen.
Value JsonParseRun::run() {
  checkDocumentSize();
  NETBUF_OPEN_CONTAINERS();
  Value v;
value:  // a value is expected (whitespace may come first)
  skipWs();
  if (p >= end) failEnd(depth == 0 ? "(expected a JSON value)" : "(expected a value)");
  switch (*p) {
    case '{':
      checkDepth(p, depth);
      NETBUF_OPEN(static_cast<std::size_t>(p - begin), true);
      ++p;
      skipWs();
      if (p < end && *p == '}') {
        ++p;
        NETBUF_CLOSE_OBJECT();
        goto valueDone;
      }
      goto objectKey;
    case '[':
      checkDepth(p, depth);
      NETBUF_OPEN(static_cast<std::size_t>(p - begin), false);
      ++p;
      skipWs();
      if (p < end && *p == ']') {
        ++p;
        NETBUF_CLOSE_ARRAY();
        goto valueDone;
      }
      goto value;
    case '"':
      v = parseString();
      goto valueDone;
    case 't':
    case 'f':
    case 'n':
      v = parseLiteral();
      goto valueDone;
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
      goto valueDone;
    default:
      failUnexpected(p, "a JSON value");
  }
objectKey:  // at the first byte after '{' or ',' and whitespace
  if (p >= end || *p != '"') [[unlikely]]
    failUnexpected(p, "'\"' starting an object key");
  NETBUF_PUSH(parseString());
  skipWs();
  if (p >= end || *p != ':') [[unlikely]]
    failUnexpected(p, "':' after an object key");
  ++p;
  goto value;
valueDone:  // v is complete: add it to the enclosing container, closing containers as they end
  if (depth == 0) return v;
  NETBUF_PUSH(v);
  skipWs();
  if (frames[depth - 1].object) {
    if (p >= end) failEnd("(expected ',' or '}')");
    if (*p == ',') {
      ++p;
      skipWs();
      goto objectKey;
    }
    if (*p != '}') failUnexpected(p, "',' or '}'");
    ++p;
    NETBUF_CLOSE_OBJECT();
    goto valueDone;
  }
  if (p >= end) failEnd("(expected ',' or ']')");
  if (*p == ',') {
    ++p;
    goto value;
  }
  if (*p != ']') failUnexpected(p, "',' or ']'");
  ++p;
  NETBUF_CLOSE_ARRAY();
  goto valueDone;
}

namespace {

// Bytes that may follow a number or a literal: whitespace, a structural character, a quote (which
// stage 2 then rejects as a token without a separator). Anything else continues the token.
constexpr std::array<bool, 256> kEndsToken = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view(" \t\n\r{}[]:,\"")) t[c] = true;
  return t;
}();

}  // namespace

inline Value JsonParseRun::indexedString(std::size_t open, const std::uint64_t* bits) {
  // One pass over the string's blocks: its closing quote (the next unescaped quote), and whether
  // a backslash or a byte above 0x7F comes before it. (The masks of different blocks are ORed
  // together, so only whether each is zero means anything: a byte above 0x7F is told from a
  // backslash within its own block.)
  std::size_t k = (open + 1) >> 6;
  std::uint64_t from = ~std::uint64_t{0} << ((open + 1) & 63);
  std::uint64_t special = 0;
  std::uint64_t backslash = 0;
  std::uint64_t high = 0;
  std::uint64_t quote;
  for (;;) {
    const std::uint64_t* w = bits + k * detail::kWordsPerBlock;
    quote = w[detail::kQuoteWord] & from;
    const std::uint64_t before = quote == 0 ? from : (quote & (0 - quote)) - 1;
    const std::uint64_t blockSpecial = w[detail::kSpecialWord] & from & before;
    const std::uint64_t blockBackslash = w[detail::kBackslashWord] & from & before;
    special |= blockSpecial;
    backslash |= blockBackslash;
    high |= blockSpecial & ~blockBackslash;
    if (quote != 0) break;
    from = ~std::uint64_t{0};
    ++k;
  }
  const std::size_t close = (k << 6) + static_cast<std::size_t>(__builtin_ctzll(quote));
  const char* body = begin + open + 1;
  const std::size_t n = close - open - 1;
  // (n < 2^32: the indexed engine takes inputs below 4 GiB.)
  if (special == 0) [[likely]] {
    checkStringLength(begin + open, n);
    return detail::ValueHints::str(body, static_cast<std::uint32_t>(n), true);
  }
  if (backslash == 0) {
    checkStringLength(begin + open, n);
    if (!utf8Validated) validateUtf8(body, n);
    return detail::ValueHints::str(body, static_cast<std::uint32_t>(n), false);
  }
  return indexedEscapedString(open, close, high != 0, bits);
}

// A string with escapes, its closing quote at `close` (stage 1 found it); `high`: a byte above 0x7F
// lies in it. Decoded straight into the arena: decoding never lengthens the text (an escape of 2,
// 6 or 12 bytes gives 1, at most 3, or 4), so the raw length is room enough. Plain runs are
// copied whole between backslashes. The escapes and the UTF-8 are checked as the lexer checks
// them; the byte-at-a-time rerun reports any error.
Value JsonParseRun::indexedEscapedString(std::size_t open, std::size_t close, bool high,
                                         const std::uint64_t* bits) {
  const char* body = begin + open + 1;
  const char* stop = begin + close;
  const auto raw = static_cast<std::size_t>(stop - body);
  if (raw > opt.maxStringLength) {
    // Perhaps too long once decoded: the byte-at-a-time path decodes it in its scratch first.
    p = begin + open;
    return parseString();
  }
  // Escapes are ASCII, so a multi-byte character never spans one: the raw text is valid UTF-8
  // exactly when each plain run is.
  if (high && !utf8Validated) validateUtf8(body, raw);
  char* const dst = reinterpret_cast<char*>(doc.allocateBytes(raw));
  RawOut out{dst, dst};
  bool plain = !high;  // every byte so far in 0x20..0x7F and not '"' or '\\'
  // The backslashes come from stage 1's masks, block by block; one that an escape consumed (the
  // second of "\\\\") lies before `seg` and is passed over.
  std::size_t k = (open + 1) >> 6;
  std::uint64_t backslashes = bits[k * detail::kWordsPerBlock + detail::kBackslashWord] &
                              (~std::uint64_t{0} << ((open + 1) & 63));
  const char* seg = body;
  for (;;) {
    while (backslashes == 0) {
      ++k;
      if ((k << 6) >= close) goto done;
      backslashes = bits[k * detail::kWordsPerBlock + detail::kBackslashWord];
    }
    const char* b = begin + (k << 6) + static_cast<std::size_t>(__builtin_ctzll(backslashes));
    backslashes &= backslashes - 1;
    if (b >= stop) break;
    if (b < seg) continue;
    out.insert(nullptr, seg, b);
    char* const at = out.d;
    // The escaped byte lies before `stop` (the closing quote is unescaped); a \u escape that
    // runs into the quote fails on it, a non-hex digit.
    seg = unescapeOne(b, out);
    if (out.d - at != 1 || static_cast<unsigned char>(*at) < 0x20 || *at == '"' || *at == '\\')
      plain = false;
  }
done:
  out.insert(nullptr, seg, stop);
  const auto n = static_cast<std::size_t>(out.d - dst);
  checkStringLength(begin + open, n);
  return detail::ValueHints::str(dst, static_cast<std::uint32_t>(n), plain);
}

inline bool JsonParseRun::indexedScalar(char c, std::size_t pos, const std::uint64_t* bits,
                                        Value& v) {
  const std::size_t n = static_cast<std::size_t>(end - begin);

  // A literal or number ends at the input's end or at a byte that may follow it.
  auto ended = [&](std::size_t at) {
    return at >= n || kEndsToken[static_cast<unsigned char>(begin[at])];
  };
  switch (c) {
    case '"':
      v = indexedString(pos, bits);
      return true;
    case 't':
      v = Value::boolean(true);
      return n - pos >= 4 && matchesWord4(begin + pos, "true") && ended(pos + 4);
    case 'f':
      v = Value::boolean(false);
      return n - pos >= 5 && matchesWord4(begin + pos + 1, "alse") && ended(pos + 5);
    case 'n':
      v = Value::nil();
      return n - pos >= 4 && matchesWord4(begin + pos, "null") && ended(pos + 4);
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
      p = begin + pos;
      v = parseNumber();
      return ended(static_cast<std::size_t>(p - begin));
    default:
      return false;
  }
}

// Stage 2 over stage 1's positions (json_structural_index.hpp): the grammar of run(), token by
// token, with no whitespace to skip and no string to scan. One state per place in the grammar
// (after '{', after a member, after '[', after an element), so whether the open container is an
// object is looked up only when a container closes. The open containers' elements are kept on a
// stack of Values (the parser's stack_, used as raw storage and grown by doubling) and copied to
// the arena when their container closes. Returns false, or throws JsonError, on any error: the
// caller then runs run() for the exact error.
bool JsonParseRun::runIndexed(const std::uint32_t* idx, const std::uint64_t* bits, Value& out) {
  const std::size_t n = static_cast<std::size_t>(end - begin);
  NETBUF_OPEN_CONTAINERS();
  std::size_t pos;
  char c;
  Value v;
  // The next token (the sentinel, n, ends the input).
#define NETBUF_NEXT_TOKEN()    \
  do {                         \
    pos = *idx++;              \
    if (pos >= n) [[unlikely]] \
      return false;            \
    c = begin[pos];            \
  } while (0)
// Lexes the scalar at pos straight onto the stack: a Value held in a local across the paths that
// make one is split into its fields and put back together with partial-register writes.
#define NETBUF_PUSH_SCALAR()                              \
  do {                                                    \
    if (top == stackEnd) [[unlikely]]                     \
      growStack();                                        \
    if (!indexedScalar(c, pos, bits, *top)) return false; \
    ++top;                                                \
  } while (0)
// Opens a container at pos, within the depth limit.
#define NETBUF_OPEN_AT_POS(isObject)         \
  do {                                       \
    if (depth >= opt.maxDepth) return false; \
    NETBUF_OPEN(pos, isObject);              \
  } while (0)

  NETBUF_NEXT_TOKEN();
  if (c == '{') goto objectBegin;
  if (c == '[') goto arrayBegin;
  if (!indexedScalar(c, pos, bits, v)) return false;
  out = v;
  return *idx >= n;  // nothing after the top-level value

objectBegin:
  NETBUF_OPEN_AT_POS(true);
  NETBUF_NEXT_TOKEN();
  if (c == '}') goto objectEnd;
objectField:
  if (c != '"') return false;
  NETBUF_PUSH(indexedString(pos, bits));
  NETBUF_NEXT_TOKEN();
  if (c != ':') return false;
  NETBUF_NEXT_TOKEN();
  if (c == '{') goto objectBegin;
  if (c == '[') goto arrayBegin;
  NETBUF_PUSH_SCALAR();
objectContinue:
  NETBUF_NEXT_TOKEN();
  if (c == ',') {
    NETBUF_NEXT_TOKEN();
    goto objectField;
  }
  if (c != '}') return false;
objectEnd:
  NETBUF_CLOSE_OBJECT();
  goto scopeEnd;

arrayBegin:
  NETBUF_OPEN_AT_POS(false);
  NETBUF_NEXT_TOKEN();
  if (c == ']') goto arrayEnd;
arrayValue:
  if (c == '{') goto objectBegin;
  if (c == '[') goto arrayBegin;
  NETBUF_PUSH_SCALAR();
arrayContinue:
  NETBUF_NEXT_TOKEN();
  if (c == ',') {
    NETBUF_NEXT_TOKEN();
    goto arrayValue;
  }
  if (c != ']') return false;
arrayEnd:
  NETBUF_CLOSE_ARRAY();

scopeEnd:
  if (depth == 0) {
    out = v;
    return *idx >= n;
  }
  NETBUF_PUSH(v);
  if (frames[depth - 1].object) goto objectContinue;
  goto arrayContinue;
#undef NETBUF_NEXT_TOKEN
#undef NETBUF_PUSH_SCALAR
#undef NETBUF_OPEN_AT_POS
}

#undef NETBUF_OPEN_CONTAINERS
#undef NETBUF_PUSH
#undef NETBUF_OPEN
#undef NETBUF_CLOSE_OBJECT
#undef NETBUF_CLOSE_ARRAY

void JsonParser::parse(std::string_view text, Document& into) {
  // Scratch capacity beyond this is given back after each parse (success or error): one huge
  // document must not pin its scratch for the parser's (a thread's, a connection's) lifetime.
  struct ShrinkAfter {
    JsonParser& p;
    ~ShrinkAfter() {
      constexpr std::size_t kKeepBytes = 256 * 1024;
      // Stage 1's output is kept up to 2 MiB (a few MB of typical JSON: its size is proportional
      // to the input's, and allocating it afresh costs more than parsing such a document).
      constexpr std::size_t kKeepIndexBytes = 2 * 1024 * 1024;
      if (p.stack_.capacity() * sizeof(Value) > kKeepBytes) std::vector<Value>().swap(p.stack_);
      if (p.unescaped_.capacity() > kKeepBytes) std::vector<char>().swap(p.unescaped_);
      if (p.frames_.capacity() * sizeof(Frame) > kKeepBytes) std::vector<Frame>().swap(p.frames_);
      if (p.structurals_.capacity() * sizeof(std::uint32_t) > kKeepIndexBytes)
        std::vector<std::uint32_t>().swap(p.structurals_);
      if (p.blockBits_.capacity() * sizeof(std::uint64_t) > kKeepIndexBytes / 2)
        std::vector<std::uint64_t>().swap(p.blockBits_);
    }
  } shrink{*this};
  JsonParseRun r{{text.data(), text.data() + text.size(), options_}, text.data(), into, *this};
  const bool indexed = engine_ == Engine::Auto ? text.size() >= kAutoIndexedMinBytes
                                               : engine_ != Engine::ByteAtATime;
  if (indexed && text.size() < (std::uint64_t{1} << 32)) {
    bool accepted = false;
    Value root;
    try {
      r.checkDocumentSize();
      accepted =
          detail::indexJson(text.data(), text.size(), structurals_, blockBits_, r.utf8Validated) &&
          r.runIndexed(structurals_.data(), blockBits_.data(), root);
    } catch (const JsonError&) {
      if (engine_ == Engine::IndexedOnly) throw;
    }
    if (accepted) {
      into.setRoot(root);
      return;
    }
    if (engine_ == Engine::IndexedOnly) {
      throw JsonError(JsonErrorCode::Syntax, "rejected by the indexed parser", 0, 1, 1);
    }
    // The byte-at-a-time parser reports the error (what the indexed run put in the arena stays
    // there, as after any failed parse).
    r.p = text.data();
  }
  const Value root = r.run();
  r.skipWs();
  if (r.p != r.end) r.failTrailing(r.p);
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
