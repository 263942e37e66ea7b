#include <netbuf/codec/redis/resp_writer.hpp>

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace netbuf {

namespace {

// A type byte, a decimal of at most 20 characters and CRLF.
constexpr std::size_t kHeaderBound = 1 + 20 + 2;

inline char* put(char* w, std::string_view s) noexcept {
  if (!s.empty()) std::memcpy(w, s.data(), s.size());  // an empty view may hold nullptr
  return w + s.size();
}

inline char* crlf(char* w) noexcept {
  w[0] = '\r';
  w[1] = '\n';
  return w + 2;
}

// "<type><n>\r\n" at w; n formatted by std::to_chars (two digits per step in libstdc++).
template <class Int>
inline char* header(char* w, char type, Int n) noexcept {
  *w++ = type;
  w = std::to_chars(w, w + 20, n).ptr;
  return crlf(w);
}

// The %g layout of Redis 7.2's fpconv_dtoa with the shortest digits: scientific when the
// decimal exponent is below -4 or at least 17, otherwise fixed; exponents as printf writes
// them (sign and at least two digits).
std::size_t formatShortest(double d, char* out) {
  char sci[32];
  const auto r = std::to_chars(sci, sci + sizeof sci, d, std::chars_format::scientific);
  std::string_view s(sci, static_cast<std::size_t>(r.ptr - sci));
  char* w = out;
  if (!s.empty() && s.front() == '-') {
    *w++ = '-';
    s.remove_prefix(1);
  }
  const std::size_t e = s.find('e');
  std::string_view mant = s.substr(0, e);
  int exp = 0;
  std::from_chars(s.data() + e + 1 + (s[e + 1] == '+' ? 1 : 0), s.data() + s.size(), exp);
  char digits[20] = {};
  std::size_t nd = 0;
  for (char c : mant) {
    if (c != '.') digits[nd++] = c;
  }
  if (exp < -4 || exp >= 17) {
    *w++ = digits[0];
    if (nd > 1) {
      *w++ = '.';
      w = put(w, std::string_view(digits + 1, nd - 1));
    }
    *w++ = 'e';
    *w++ = exp < 0 ? '-' : '+';
    const int a = exp < 0 ? -exp : exp;
    if (a < 10) *w++ = '0';
    w = std::to_chars(w, w + 4, a).ptr;
  } else if (exp < 0) {
    *w++ = '0';
    *w++ = '.';
    for (int i = -1; i > exp; --i) *w++ = '0';
    w = put(w, std::string_view(digits, nd));
  } else {
    const auto intDigits = static_cast<std::size_t>(exp) + 1;
    if (nd <= intDigits) {
      w = put(w, std::string_view(digits, nd));
      for (std::size_t i = nd; i < intDigits; ++i) *w++ = '0';
    } else {
      w = put(w, std::string_view(digits, intDigits));
      *w++ = '.';
      w = put(w, std::string_view(digits + intDigits, nd - intDigits));
    }
  }
  return static_cast<std::size_t>(w - out);
}

// Appends constant protocol bytes (no ASCII check: they are literals).
inline void append(ByteBuf& b, std::string_view s) {
  b.ensureWritable(s.size());
  std::memcpy(b.writePtrUnchecked(), s.data(), s.size());
  b.advanceWriterUnchecked(s.size());
}

// "<type><text>\r\n": simple strings and errors, RESP3 doubles and big numbers.
inline void writeLine(ByteBuf& b, char type, std::string_view text) {
  b.ensureWritable(text.size() + 3);
  char* w = reinterpret_cast<char*>(b.writePtrUnchecked());
  char* const start = w;
  *w++ = type;
  w = crlf(put(w, text));
  b.advanceWriterUnchecked(static_cast<std::size_t>(w - start));
}

// "<type><n>\r\n": integers and aggregate headers.
template <class Int>
inline void writeHeader(ByteBuf& b, char type, Int n) {
  b.ensureWritable(kHeaderBound);
  char* w = reinterpret_cast<char*>(b.writePtrUnchecked());
  b.advanceWriterUnchecked(static_cast<std::size_t>(header(w, type, n) - w));
}

// "<type><len>\r\n<prefix><text>\r\n": bulk strings and errors, verbatim strings.
inline void writeBlob(ByteBuf& b, char type, std::string_view prefix, std::string_view text) {
  b.ensureWritable(kHeaderBound + prefix.size() + text.size() + 2);
  char* w = reinterpret_cast<char*>(b.writePtrUnchecked());
  char* const start = w;
  w = header(w, type, prefix.size() + text.size());
  w = put(w, prefix);
  w = crlf(put(w, text));
  b.advanceWriterUnchecked(static_cast<std::size_t>(w - start));
}

}  // namespace

std::size_t RespWriter::formatDouble(double d, char* out, DoubleFormat format) {
  // Infinities are spelled by hand, as Redis does (libc spellings differ across systems).
  if (std::isinf(d)) {
    const std::string_view s = d > 0 ? "inf" : "-inf";
    std::memcpy(out, s.data(), s.size());
    return s.size();
  }
  if (std::isnan(d)) {
    std::memcpy(out, "nan", 3);
    return 3;
  }
  if (format == DoubleFormat::Shortest) return formatShortest(d, out);
  const int n = std::snprintf(out, kMaxDoubleChars, "%.17g", d);
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

void RespWriter::simpleString(std::string_view text) {
  assert(text.find_first_of("\r\n") == std::string_view::npos);
  writeLine(*out_, '+', text);
}

void RespWriter::simpleError(std::string_view text) {
  assert(text.find_first_of("\r\n") == std::string_view::npos);
  writeLine(*out_, '-', text);
}

void RespWriter::integer(std::int64_t v) { writeHeader(*out_, ':', v); }

void RespWriter::bulkString(std::string_view bytes) { writeBlob(*out_, '$', {}, bytes); }

void RespWriter::bulkString(const ByteBuf& bytes) { bulkString(bytes.readableStringView()); }

void RespWriter::arrayHeader(std::size_t n) { writeHeader(*out_, '*', n); }

void RespWriter::null() { append(*out_, isResp3() ? std::string_view("_\r\n") : "$-1\r\n"); }

void RespWriter::nullArray() { append(*out_, isResp3() ? std::string_view("_\r\n") : "*-1\r\n"); }

void RespWriter::boolean(bool v) {
  if (isResp3()) {
    append(*out_, v ? std::string_view("#t\r\n") : "#f\r\n");
  } else {
    append(*out_, v ? std::string_view(":1\r\n") : ":0\r\n");
  }
}

void RespWriter::doubleValue(double v) {
  char text[kMaxDoubleChars];
  const std::size_t n = formatDouble(v, text, doubleFormat_);
  if (isResp3()) {
    writeLine(*out_, ',', std::string_view(text, n));
  } else {
    bulkString(std::string_view(text, n));
  }
}

void RespWriter::bigNumber(std::string_view digits) {
  if (isResp3()) {
    writeLine(*out_, '(', digits);
  } else {
    bulkString(digits);
  }
}

void RespWriter::mapHeader(std::size_t pairs) {
  if (isResp3()) {
    writeHeader(*out_, '%', pairs);
  } else {
    writeHeader(*out_, '*', pairs * 2);
  }
}

void RespWriter::setHeader(std::size_t n) { writeHeader(*out_, isResp3() ? '~' : '*', n); }

void RespWriter::pushHeader(std::size_t n) { writeHeader(*out_, isResp3() ? '>' : '*', n); }

void RespWriter::attributeHeader(std::size_t pairs) {
  if (isResp3()) writeHeader(*out_, '|', pairs);
}

void RespWriter::verbatimString(std::string_view format, std::string_view text) {
  if (!isResp3()) return bulkString(text);
  assert(format.size() == 3);
  char prefix[4] = {format.size() > 0 ? format[0] : ' ', format.size() > 1 ? format[1] : ' ',
                    format.size() > 2 ? format[2] : ' ', ':'};
  writeBlob(*out_, '=', std::string_view(prefix, 4), text);
}

void RespWriter::bulkError(std::string_view text) {
  if (isResp3()) {
    writeBlob(*out_, '!', {}, text);
  } else {
    simpleError(text);
  }
}

void RespWriter::command(std::span<const std::string_view> args) {
  std::size_t bound = kHeaderBound;
  for (std::string_view a : args) bound += kHeaderBound + a.size() + 2;
  ByteBuf& b = *out_;
  b.ensureWritable(bound);
  char* w = reinterpret_cast<char*>(b.writePtrUnchecked());
  char* const start = w;
  w = header(w, '*', args.size());
  for (std::string_view a : args) {
    w = header(w, '$', a.size());
    w = crlf(put(w, a));
  }
  b.advanceWriterUnchecked(static_cast<std::size_t>(w - start));
}

void RespWriter::value(const RespValue& v) {
  if (v.attributes() != nullptr && isResp3()) {
    const RespValue& attrs = *v.attributes();
    attributeHeader(attrs.size());
    for (const RespValue& e : attrs.elements()) value(e);
  }
  switch (v.type()) {
    case RespType::SimpleString:
      simpleString(v.payload());
      return;
    case RespType::SimpleError:
      simpleError(v.payload());
      return;
    case RespType::Integer:
      integer(v.asInteger());
      return;
    case RespType::BulkString:
      bulkString(v.payload());
      return;
    case RespType::Null:
      if (v.nullForm() == '*') {
        nullArray();
      } else {
        null();
      }
      return;
    case RespType::Boolean:
      boolean(v.asBool());
      return;
    case RespType::Double:
      doubleValue(v.asDouble());
      return;
    case RespType::BigNumber:
      bigNumber(v.payload());
      return;
    case RespType::BulkError:
      bulkError(v.payload());
      return;
    case RespType::VerbatimString:
      verbatimString(v.verbatimFormat(), v.asString());
      return;
    case RespType::Array:
      arrayHeader(v.size());
      break;
    case RespType::Map:
      mapHeader(v.size());
      break;
    case RespType::Set:
      setHeader(v.size());
      break;
    case RespType::Push:
      pushHeader(v.size());
      break;
  }
  for (const RespValue& e : v.elements()) value(e);
}

}  // namespace netbuf
