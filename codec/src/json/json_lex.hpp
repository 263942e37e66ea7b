#pragma once
// JSON lexing shared by JsonParser (the DOM parser, json_parser.cpp) and JsonReader (the pull
// reader, json_reader.cpp); private, not installed.
//
// JsonLexer is a view of one input [begin, end) and its JsonParseOptions (borrowed: both must
// outlive it; it is three words, built on the stack where needed). It lexes one token at a time
// from a cursor the caller owns and passes in (strings, numbers, literals), applies the options'
// limits (maxStringLength, maxNumberLength, maxDepth, maxDocumentSize, allowLoneSurrogates,
// bigIntegersAsDouble) and throws every failure as the same JsonError the two classes document:
// code, detail, offset from `begin`, 1-based line and column, and value/limit for limits.
//
// Hot paths (the unescaped string, the number scan, a literal that matches) are inline here; the
// escape decoding is a template on the scratch buffer (std::vector<char> for the parser,
// std::string for the reader); every error thrower is out of line (json_lex.cpp).
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/json/json_error.hpp>
#include <netbuf/codec/json/json_parse_options.hpp>
#include <string>
#include <string_view>
#include <system_error>

#include "json_internal.hpp"
#include "json_number.hpp"

namespace netbuf::detail {

constexpr bool isDigit(char c) noexcept { return static_cast<unsigned char>(c - '0') < 10; }

/// The 8 bytes at p, the byte at p lowest (the SWAR digit code below assumes a little-endian CPU).
static_assert(std::endian::native == std::endian::little);
inline std::uint64_t load8(const char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// The value of 8 ASCII digits (first digit in the lowest byte): pairs, then quads, then the
/// whole, each step one multiply-add over every lane at once.
constexpr std::uint32_t eightDigits(std::uint64_t v) noexcept {
  v -= 0x3030303030303030;
  v = v * 10 + (v >> 8);  // each 16-bit lane: two digits' value in its low byte
  v = (((v & 0x000000FF000000FF) * (100 + (std::uint64_t{1000000} << 32))) +
       (((v >> 16) & 0x000000FF000000FF) * (1 + (std::uint64_t{10000} << 32)))) >>
      32;
  return static_cast<std::uint32_t>(v);
}

/// How many of the 8 bytes of v, from the lowest, are ASCII digits before the first that is not
/// (0-8). A byte is a digit when its high nibble is 3 and adding 6 does not carry out of its low
/// nibble; the addition can carry into the next byte only out of a non-digit, so the lowest
/// non-digit byte is always seen as one.
constexpr unsigned leadingDigits8(std::uint64_t v) noexcept {
  const std::uint64_t notDigit =
      ((v & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030) |
      (((v + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030);
  return notDigit == 0 ? 8 : static_cast<unsigned>(std::countr_zero(notDigit)) >> 3;
}

/// Appends the run of ASCII digits at q to acc (acc = acc x 10^k + the run's value, modulo 2^64);
/// returns the end of the run. Eight bytes a step: a whole step of digits, or the run's last 1-7
/// digits, which are shifted to the top of the word behind '0' bytes so that eightDigits reads
/// them as one number.
inline const char* accumulateDigits(const char* q, const char* end, std::uint64_t& acc) noexcept {
  static constexpr std::uint64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
  while (end - q >= 8) {
    const std::uint64_t v = load8(q);
    const unsigned k = leadingDigits8(v);
    if (k == 8) {
      acc = acc * 100000000 + eightDigits(v);
      q += 8;
      continue;
    }
    if (k != 0) {
      const unsigned shift = 8 * (8 - k);  // 8..56
      acc = acc * kPow10[k] + eightDigits((v << shift) | (0x3030303030303030 >> (64 - shift)));
      q += k;
    }
    return q;
  }
  for (; q < end && isDigit(*q); ++q) acc = acc * 10 + static_cast<unsigned>(*q - '0');
  return q;
}

/// The value of hex digit c, or -1.
constexpr int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// "'x'" for a printable ASCII byte, else "byte 0xNN" (for error details).
std::string describeByte(char c);

/// Writes code point cp (valid, not a surrogate) to d as UTF-8; returns the bytes written (1-4).
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

/// Throws JsonError(code, detail) at `at` (in [begin, end]), with its line and column in begin's
/// text.
[[noreturn]] void throwJsonError(const char* begin, JsonErrorCode code, const char* at,
                                 std::string detail, std::uint64_t value = CodecError::kNone,
                                 std::uint64_t limit = CodecError::kNone);

/// A string token: its decoded text, whether that is a copy in the scratch buffer (the token
/// had escapes) rather than a view of the input, and whether it is known to be plain ASCII (no
/// escapes and no byte above 0x7F: Value::isPlainAscii()).
struct LexedString {
  std::string_view text;
  bool unescaped;
  bool plainAscii;
};

/// A number token (RFC 8259 grammar, checked): [start, end), its sign, whether it has a fraction
/// or an exponent, and for the integer part the digit count and the value accumulated modulo 2^64
/// (exact up to 19 digits; integerInRange() settles 20). For toDouble: every digit (integer part
/// and fraction) accumulated modulo 2^64 into significand, exact when sigDigits (the digits after
/// any leading zeros) is at most 19, and the value is significand x 10^(exponent - fracDigits).
struct NumberScan {
  const char* end;
  std::uint64_t magnitude;
  std::size_t intDigits;
  std::uint64_t significand;
  std::size_t sigDigits;
  std::int64_t fracDigits;
  std::int64_t exponent;  // exact unless exponentCapped
  bool exponentCapped;    // the exponent had more digits than it keeps (toDouble: from_chars)
  bool negative;
  bool isFloat;
};

struct JsonLexer {
  const char* begin;
  const char* end;
  const JsonParseOptions& opt;

  // ------------------------------------------------------------------------------ errors
  [[noreturn]] void fail(JsonErrorCode code, const char* at, std::string detail,
                         std::uint64_t value = CodecError::kNone,
                         std::uint64_t limit = CodecError::kNone) const {
    throwJsonError(begin, code, at, std::move(detail), value, limit);
  }
  /// UnexpectedEnd at `end`: "unexpected end of input <what>".
  [[noreturn]] void failEnd(const char* what) const;
  /// At `at`: the end of input, a UTF-8 byte order mark (at the start), else "unexpected
  /// character X (expected <expected>)" (Syntax).
  [[noreturn]] void failUnexpected(const char* at, const char* expected) const;
  /// TrailingContent at `at` (a byte after the top-level value).
  [[noreturn]] void failTrailing(const char* at) const;
  /// NumberOutOfRange for an integer token outside [-2^63, 2^64-1] (bigIntegersAsDouble off).
  [[noreturn]] void failBigInteger(const char* start, const char* stop) const;

  // ------------------------------------------------------------------------------ limits
  void checkDocumentSize() const {
    if (static_cast<std::size_t>(end - begin) > opt.maxDocumentSize) [[unlikely]]
      failDocumentSize();
  }
  /// Before opening a container at `at` with `open` containers already open.
  void checkDepth(const char* at, std::size_t open) const {
    if (open >= opt.maxDepth) [[unlikely]]
      failDepth(at, open + 1);
  }
  /// n: the decoded length so far of the string whose opening quote is at `open`.
  void checkStringLength(const char* open, std::size_t n) const {
    if (n > opt.maxStringLength) [[unlikely]]
      failStringLength(open, n);
  }
  void validateUtf8(const char* s, std::size_t n) const {
    const std::size_t bad = utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(s), n);
    if (bad != utf8::npos) [[unlikely]]
      failUtf8(s + bad);
  }

  // ------------------------------------------------------------------------------ tokens
  /// The string token whose opening quote is at p; moves p past its closing quote. Escapes are
  /// decoded into `scratch` (cleared first; the result views it until its next use); with
  /// allowEscapes false a string with escapes is a TypeMismatch (the reader's view-only read).
  template <class Out>
  LexedString string(const char*& p, Out& scratch, bool allowEscapes = true) const {
    LexedString s;
    const char* q;
    unsigned high = 0;
    if (plainString(p, s, q, high)) [[likely]]
      return s;
    const char* open = p;
    if (!allowEscapes && q < end && *q == '\\') failEscapedView(open);
    p = unescape(open, open + 1, q, high, scratch) + 1;
    return {std::string_view(scratch.data(), scratch.size()), true, false};
  }

  /// string()'s first step: scans the string token whose opening quote is at p. When it closes
  /// with no escape, sets out (a view of the input), moves p past it and returns true. Otherwise
  /// returns false, p unchanged, with q and high where the scan stopped (a backslash, a control
  /// byte or the end) for unescape().
  bool plainString(const char*& p, LexedString& out, const char*& q, unsigned& high) const {
    const char* body = p + 1;
    q = scanStringBody(body, end, high);
    if (q < end && *q == '"') [[likely]] {
      const auto n = static_cast<std::size_t>(q - body);
      checkStringLength(p, n);
      if (high & 0x80) validateUtf8(body, n);
      p = q + 1;
      out = {std::string_view(body, n), false, (high & 0x80) == 0};
      return true;
    }
    return false;
  }

  /// The closing quote of a string whose body has a backslash at q, found without decoding (an
  /// escape is skipped as two bytes); nullptr when a control byte or the end of the input comes
  /// first, or a backslash ends the input: the string is malformed, and unescape() says how.
  const char* closingQuote(const char* q) const noexcept {
    unsigned high = 0;
    for (;;) {
      if (q >= end) return nullptr;
      if (*q == '"') return q;
      if (*q != '\\' || end - q < 2) return nullptr;
      q = scanStringBody(q + 2, end, high);
    }
  }

  /// The string at `open` whose body starts at `body`, scanned up to q (a backslash, a control
  /// byte or the end; `high` as scanStringBody left it): decodes it into out; returns its closing
  /// quote.
  template <class Out>
  const char* unescape(const char* open, const char* body, const char* q, unsigned high,
                       Out& out) const {
    out.clear();
    const char* seg = body;  // start of the current run of plain bytes
    for (;;) {
      if (q >= end) failEnd("inside a string");
      const char c = *q;
      // The plain run [seg, q) ends at an ASCII byte, so at a character boundary: validate it.
      if (high & 0x80) validateUtf8(seg, static_cast<std::size_t>(q - seg));
      out.insert(out.end(), seg, q);
      if (c == '"') break;
      if (c != '\\') failControl(q);
      q = unescapeOne(q, out);
      checkStringLength(open, out.size());
      seg = q;
      high = 0;
      q = scanStringBody(q, end, high);
    }
    checkStringLength(open, out.size());
    return q;
  }

  /// q is at a backslash: appends the escape's character(s) to out (UTF-8; a lone surrogate is an
  /// error or U+FFFD per allowLoneSurrogates) and returns the byte after the escape.
  template <class Out>
  const char* unescapeOne(const char* q, Out& out) const {
    if (end - q < 2) failEnd("inside an escape sequence");
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
        failEscape(q);
    }
    if (simple != 0) {
      out.push_back(simple);
      return q + 2;
    }
    const char* next = q + 6;
    const std::uint32_t cp = codePoint(q, next);
    char buf[4];
    const std::size_t n = putUtf8(buf, cp);
    out.insert(out.end(), buf, buf + n);
    return next;
  }

  /// The code point of the \u escape at q; next is the byte after it, moved past a second escape
  /// that completes a surrogate pair.
  std::uint32_t codePoint(const char* q, const char*& next) const {
    std::uint32_t cp = hex4(q);
    if (cp >= 0xD800 && cp <= 0xDFFF) [[unlikely]] {
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
        if (!opt.allowLoneSurrogates) failLoneSurrogate(q, cp);
        cp = 0xFFFD;
      }
    }
    return cp;
  }

  /// The four hex digits of the \u escape at `at`.
  std::uint32_t hex4(const char* at) const {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      if (at + 2 + i >= end) failEnd("inside a \\u escape");
      const int h = hexValue(at[2 + i]);
      if (h < 0) failHex(at, at + 2 + i);
      v = v << 4 | static_cast<std::uint32_t>(h);
    }
    return v;
  }

  /// The number token starting at `start` (a '-' or a digit); checks the grammar and
  /// maxNumberLength.
  NumberScan scanNumber(const char* start) const {
    NumberScan s{};
    const char* q = start;
    s.negative = *q == '-';
    if (s.negative) ++q;
    if (q >= end) failEnd("inside a number");
    if (*q == '0') {
      ++q;
      s.intDigits = 1;
    } else if (isDigit(*q)) {
      const char* ds = q;
      std::uint64_t u = 0;
      q = accumulateDigits(q, end, u);
      s.magnitude = u;
      s.intDigits = static_cast<std::size_t>(q - ds);
    } else {
      failUnexpected(q, "a digit");
    }
    // The integer part "0" has no significant digit; any other has no leading zero. (Not
    // magnitude == 0: 2^64 wraps to it.)
    const bool intZero = s.negative ? start[1] == '0' : start[0] == '0';
    s.significand = s.magnitude;
    s.sigDigits = intZero ? 0 : s.intDigits;
    if (q < end && *q == '.') {
      ++q;
      if (q >= end) failEnd("inside a number");
      if (!isDigit(*q)) failUnexpected(q, "a digit after '.'");
      const char* fs = q;
      std::uint64_t sig = s.significand;
      std::size_t leadingZeros = 0;
      if (intZero) {
        while (q < end && *q == '0') ++q;
        leadingZeros = static_cast<std::size_t>(q - fs);
      }
      q = accumulateDigits(q, end, sig);
      s.significand = sig;
      s.fracDigits = q - fs;
      s.sigDigits += static_cast<std::size_t>(q - fs) - leadingZeros;
      s.isFloat = true;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
      ++q;
      const bool negativeExponent = q < end && *q == '-';
      if (q < end && (*q == '+' || *q == '-')) ++q;
      if (q >= end) failEnd("inside a number");
      if (!isDigit(*q)) failUnexpected(q, "a digit in the exponent");
      std::int64_t e = 0;
      while (q < end && isDigit(*q)) {
        if (e < 100000000) {
          e = e * 10 + (*q - '0');
        } else {
          s.exponentCapped = true;
        }
        ++q;
      }
      s.exponent = negativeExponent ? -e : e;
      s.isFloat = true;
    }
    const auto len = static_cast<std::size_t>(q - start);
    if (len > opt.maxNumberLength) [[unlikely]]
      failNumberLength(start, len);
    s.end = q;
    return s;
  }

  /// For an integer token (!s.isFloat): whether its value lies in [-2^63, 2^64-1]; when it does,
  /// s.magnitude is exact.
  static bool integerInRange(NumberScan& s) noexcept {
    if (s.intDigits > 20) return false;
    if (s.intDigits == 20) {
      // Recompute with overflow checks (the accumulation may have wrapped).
      std::uint64_t v = 0;
      for (const char* d = s.end - 20; d < s.end; ++d) {
        if (__builtin_mul_overflow(v, 10U, &v) ||
            __builtin_add_overflow(v, static_cast<unsigned>(*d - '0'), &v))
          return false;
      }
      s.magnitude = v;
    }
    return !s.negative || s.magnitude <= std::uint64_t{1} << 63;
  }

  /// The double nearest the number token s, which starts at `start`: an overflow is
  /// NumberOutOfRange; a subnormal is exact; below half the smallest subnormal, a signed zero.
  double toDouble(const NumberScan& s, const char* start) const {
    if (s.sigDigits <= 19 && !s.exponentCapped) [[likely]] {
      if (s.significand == 0) return s.negative ? -0.0 : 0.0;
      double d;
      if (decimalToDouble(s.significand, s.exponent - s.fracDigits, d)) return s.negative ? -d : d;
    }
    return toDoubleFromChars(start, s.end);
  }

  /// toDouble by std::from_chars over the token's text (any digit count, any exponent).
  double toDoubleFromChars(const char* start, const char* stop) const {
    double d = 0;
    const auto r = std::from_chars(start, stop, d);
    if (r.ec == std::errc() && r.ptr == stop) [[likely]]
      return d;
    return toDoubleSlow(start, stop, r.ec == std::errc::result_out_of_range);
  }

  /// Checks that the literal `word` (true, false, null) stands at p.
  void expectLiteral(const char* p, std::string_view word) const {
    if (static_cast<std::size_t>(end - p) >= word.size() &&
        std::memcmp(p, word.data(), word.size()) == 0) [[likely]]
      return;
    failLiteral(p, word);
  }

 private:
  [[noreturn]] void failDocumentSize() const;
  [[noreturn]] void failDepth(const char* at, std::size_t depth) const;
  [[noreturn]] void failStringLength(const char* open, std::size_t n) const;
  [[noreturn]] void failUtf8(const char* at) const;
  [[noreturn]] void failControl(const char* at) const;
  [[noreturn]] void failEscape(const char* at) const;
  [[noreturn]] void failEscapedView(const char* open) const;
  [[noreturn]] void failNumberLength(const char* start, std::size_t len) const;
  [[noreturn]] void failLiteral(const char* p, std::string_view word) const;
  [[noreturn]] void failHex(const char* escape, const char* digit) const;
  [[noreturn]] void failLoneSurrogate(const char* at, std::uint32_t cp) const;
  double toDoubleSlow(const char* start, const char* stop, bool outOfRange) const;
};

}  // namespace netbuf::detail
