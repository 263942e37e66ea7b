// The out-of-line half of json_lex.hpp: the error throwers (one JsonError format for JsonParser
// and JsonReader) and the slow path of number conversion.
#include "json_lex.hpp"
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <locale.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace netbuf::detail {

namespace {

/// strtod in the "C" locale (a program's LC_NUMERIC must not change what '.' means in JSON).
double strtodC(const char* start, const char* stop) {
  static const locale_t c = newlocale(LC_ALL_MASK, "C", nullptr);
  const std::string text(start, stop);  // NUL-terminated copy (the input is not)
  if (c == static_cast<locale_t>(nullptr)) [[unlikely]]
    return std::strtod(text.c_str(), nullptr);  // no C locale object (out of memory)
  return strtod_l(text.c_str(), nullptr, c);
}

// The first 64 bytes of a number token, for error details.
std::string_view numberText(const char* start, const char* stop) {
  return {start, std::min<std::size_t>(static_cast<std::size_t>(stop - start), 64)};
}

}  // namespace

std::string describeByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

void throwJsonError(const char* begin, JsonErrorCode code, const char* at, std::string detail,
                    std::uint64_t value, std::uint64_t limit) {
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

void JsonLexer::failEnd(const char* what) const {
  fail(JsonErrorCode::UnexpectedEnd, end, fmt::format("unexpected end of input {}", what));
}

void JsonLexer::failUnexpected(const char* at, const char* expected) const {
  if (at >= end) failEnd(fmt::format("(expected {})", expected).c_str());
  if (at == begin && end - begin >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0)
    fail(JsonErrorCode::Syntax, at, "unexpected UTF-8 byte order mark (not allowed by RFC 8259)");
  fail(JsonErrorCode::Syntax, at,
       fmt::format("unexpected character {} (expected {})", describeByte(*at), expected));
}

void JsonLexer::failTrailing(const char* at) const {
  fail(JsonErrorCode::TrailingContent, at,
       fmt::format("unexpected {} after the top-level value", describeByte(*at)));
}

void JsonLexer::failBigInteger(const char* start, const char* stop) const {
  fail(JsonErrorCode::NumberOutOfRange, start,
       fmt::format("integer {} is outside [-2^63, 2^64-1] (bigIntegersAsDouble is off)",
                   numberText(start, stop)));
}

void JsonLexer::failDocumentSize() const {
  const auto size = static_cast<std::size_t>(end - begin);
  fail(JsonErrorCode::DocumentSizeLimit, begin,
       fmt::format("document size {} exceeds maxDocumentSize {}", size, opt.maxDocumentSize), size,
       opt.maxDocumentSize);
}

void JsonLexer::failDepth(const char* at, std::size_t depth) const {
  fail(JsonErrorCode::DepthLimit, at,
       fmt::format("nesting depth {} exceeds maxDepth {}", depth, opt.maxDepth), depth,
       opt.maxDepth);
}

void JsonLexer::failStringLength(const char* open, std::size_t n) const {
  fail(JsonErrorCode::StringLengthLimit, open,
       fmt::format("string length {} exceeds maxStringLength {}", n, opt.maxStringLength), n,
       opt.maxStringLength);
}

void JsonLexer::failUtf8(const char* at) const {
  fail(JsonErrorCode::InvalidUtf8, at,
       fmt::format("ill-formed UTF-8 ({}) in a string", describeByte(*at)));
}

void JsonLexer::failControl(const char* at) const {
  fail(JsonErrorCode::Syntax, at,
       fmt::format("unescaped control character {} in a string", describeByte(*at)));
}

void JsonLexer::failEscape(const char* at) const {
  fail(JsonErrorCode::InvalidEscape, at,
       fmt::format("invalid escape '\\' followed by {}", describeByte(at[1])));
}

void JsonLexer::failEscapedView(const char* open) const {
  fail(JsonErrorCode::TypeMismatch, open,
       "a string with escapes cannot be read as a view of the input (read a std::string)");
}

void JsonLexer::failHex(const char* escape, const char* digit) const {
  fail(JsonErrorCode::InvalidEscape, escape,
       fmt::format("invalid \\u escape: {} is not a hex digit", describeByte(*digit)));
}

void JsonLexer::failLoneSurrogate(const char* at, std::uint32_t cp) const {
  fail(JsonErrorCode::LoneSurrogate, at,
       fmt::format("unpaired surrogate \\u{:04X} (allowLoneSurrogates is off)", cp));
}

void JsonLexer::failNumberLength(const char* start, std::size_t len) const {
  fail(JsonErrorCode::NumberLengthLimit, start,
       fmt::format("number length {} exceeds maxNumberLength {}", len, opt.maxNumberLength), len,
       opt.maxNumberLength);
}

void JsonLexer::failLiteral(const char* p, std::string_view word) const {
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (p + i >= end) break;
    if (p[i] != word[i])
      fail(JsonErrorCode::Syntax, p + i, fmt::format("invalid literal (expected {})", word));
  }
  failEnd(fmt::format("inside the literal {}", word).c_str());
}

double JsonLexer::toDoubleSlow(const char* start, const char* stop, bool outOfRange) const {
  if (!outOfRange) fail(JsonErrorCode::Syntax, start, "malformed number");
  // Overflow or underflow? The decimal exponent of the first significant digit decides.
  const bool neg = *start == '-';
  const char* s = start + (neg ? 1 : 0);
  long long mag = 0;  // value = 0.d1d2... * 10^(mag + exponent)
  bool seen = false;
  bool afterDot = false;
  for (; s < stop && (isDigit(*s) || *s == '.'); ++s) {
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
  if (s < stop) {  // exponent
    ++s;
    const bool eneg = *s == '-';
    if (*s == '+' || *s == '-') ++s;
    for (; s < stop; ++s) {
      if (e < 1000000000) e = e * 10 + (*s - '0');
    }
    if (eneg) e = -e;
  }
  if (seen && mag + e > 0)
    fail(JsonErrorCode::NumberOutOfRange, start,
         fmt::format("number {} is out of the range of a double", numberText(start, stop)));
  // Below the normal range: a subnormal, correctly rounded, or a signed zero. (from_chars reports
  // subnormal results as out of range too; strtod returns them.)
  if (!seen) return neg ? -0.0 : 0.0;
  return strtodC(start, stop);
}

}  // namespace netbuf::detail
