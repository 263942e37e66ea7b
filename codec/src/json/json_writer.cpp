#include <netbuf/codec/json/json_writer.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <span>
#include <vector>

#include "json_internal.hpp"

namespace netbuf {

namespace json {

char* formatEcmaScript(double d, char* out) noexcept {
  if (d == 0) {  // 0 and -0
    *out++ = '0';
    return out;
  }
  // The shortest round-trip digits (std::to_chars, Ryu-style: shortest, then closest), in
  // scientific form "-d.ddde+XX", re-laid out by ECMAScript's Number::toString rules.
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const char* s = buf;
  if (*s == '-') {
    *out++ = '-';
    ++s;
  }
  char digits[24];
  int k = 0;
  for (; s < r.ptr && *s != 'e'; ++s) {
    if (*s != '.') digits[k++] = *s;
  }
  int e = 0;
  bool eneg = false;
  if (s < r.ptr) {
    ++s;  // 'e'
    eneg = *s == '-';
    if (*s == '+' || *s == '-') ++s;
    for (; s < r.ptr; ++s) e = e * 10 + (*s - '0');
  }
  if (eneg) e = -e;
  const int n = e + 1;  // value = 0.digits * 10^n
  if (k <= n && n <= 21) {
    std::memcpy(out, digits, static_cast<std::size_t>(k));
    out += k;
    for (int i = k; i < n; ++i) *out++ = '0';
  } else if (0 < n && n <= 21) {
    std::memcpy(out, digits, static_cast<std::size_t>(n));
    out += n;
    *out++ = '.';
    std::memcpy(out, digits + n, static_cast<std::size_t>(k - n));
    out += k - n;
  } else if (-6 < n && n <= 0) {
    *out++ = '0';
    *out++ = '.';
    for (int i = n; i < 0; ++i) *out++ = '0';
    std::memcpy(out, digits, static_cast<std::size_t>(k));
    out += k;
  } else {
    *out++ = digits[0];
    if (k > 1) {
      *out++ = '.';
      std::memcpy(out, digits + 1, static_cast<std::size_t>(k - 1));
      out += k - 1;
    }
    *out++ = 'e';
    const int x = n - 1;
    *out++ = x < 0 ? '-' : '+';
    out = std::to_chars(out, out + 8, x < 0 ? -x : x).ptr;
  }
  return out;
}

}  // namespace json

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;  // string bytes per reservation
constexpr std::uint64_t kMaxSafeInteger = std::uint64_t{1} << 53;

/// Whether a < b comparing the keys' UTF-16 code units (RFC 8785 member order). UTF-8 byte order is
/// code point order, which equals UTF-16 order except that characters above U+FFFF (UTF-8 lead
/// F0..F4, UTF-16 units D800..DBFF) sort before U+E000..U+FFFF (leads EE, EF) in UTF-16.
bool utf16Less(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size();
  std::size_t s = i;  // start of the differing character (same lead in both when s < i)
  while (s > 0 && (static_cast<unsigned char>(a[s]) & 0xC0) == 0x80) --s;
  const auto la = static_cast<unsigned char>(a[s]);
  const auto lb = static_cast<unsigned char>(b[s]);
  if (la != lb) {
    const bool aSupp = la >= 0xF0;
    const bool bSupp = lb >= 0xF0;
    const bool aHigh = la == 0xEE || la == 0xEF;
    const bool bHigh = lb == 0xEE || lb == 0xEF;
    if (aSupp && bHigh) return true;
    if (bSupp && aHigh) return false;
  }
  return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
}

constexpr char kHex[] = "0123456789abcdef";

inline char* writeU4(char* w, unsigned u) noexcept {
  w[0] = '\\';
  w[1] = 'u';
  w[2] = kHex[(u >> 12) & 15];
  w[3] = kHex[(u >> 8) & 15];
  w[4] = kHex[(u >> 4) & 15];
  w[5] = kHex[u & 15];
  return w + 6;
}

// Escape for bytes below 0x80: 0 = none, 'u' = \u00xx, else the letter after '\'.
struct EscapeTable {
  char t[128];
  constexpr EscapeTable() : t() {
    for (int c = 0; c < 0x20; ++c) t[c] = 'u';
    t[static_cast<unsigned char>('\b')] = 'b';
    t[static_cast<unsigned char>('\f')] = 'f';
    t[static_cast<unsigned char>('\n')] = 'n';
    t[static_cast<unsigned char>('\r')] = 'r';
    t[static_cast<unsigned char>('\t')] = 't';
    t[static_cast<unsigned char>('"')] = '"';
    t[static_cast<unsigned char>('\\')] = '\\';
  }
};
constexpr EscapeTable kEscape;

struct WriteRun {
  ByteBuf& out;
  const JsonWriteOptions& o;
  bool pretty;
  bool escapeNonAscii;

  char* reserve(std::size_t n) {
    out.ensureWritable(n);
    return reinterpret_cast<char*>(out.writePtrUnchecked());
  }
  void commit(const char* start, const char* e) noexcept {
    out.advanceWriterUnchecked(static_cast<std::size_t>(e - start));
  }
  void raw(const char* s, std::size_t n) {
    char* w = reserve(n);
    std::memcpy(w, s, n);
    commit(w, w + n);
  }
  void put(char c) {
    char* w = reserve(1);
    *w = c;
    commit(w, w + 1);
  }
  void newline(std::size_t level) {
    const std::size_t spaces = level * static_cast<std::size_t>(std::max(o.indent, 0));
    char* w = reserve(1 + spaces);
    w[0] = '\n';
    std::memset(w + 1, ' ', spaces);
    commit(w, w + 1 + spaces);
  }

  [[noreturn]] static void fail(std::string what, std::uint64_t value = CodecError::kNone,
                                std::uint64_t limit = CodecError::kNone) {
    throw EncoderError("EncoderError: JSON: " + what, CodecError::kNone, value, limit);
  }

  void value(const Value& v, std::size_t depth);
  void string(std::string_view s, bool flagged);
  char* body(const char* r, const char* e, char* w, unsigned& high) const noexcept;
  void integer(std::int64_t i);
  void uinteger(std::uint64_t u);
  void float64(double d, bool isFloat32, float f);
  void extended(const Value& v);
  void array(std::span<const Value> elements, std::size_t depth);
  void map(std::span<const Member> members, std::size_t depth);
  void canonicalMap(std::span<const Member> members, std::size_t depth);
  void checkDepth(std::size_t depth) const {
    if (depth > o.maxDepth) [[unlikely]]
      fail(fmt::format("nesting depth {} exceeds maxDepth {}", depth, o.maxDepth), depth,
           o.maxDepth);
  }
};

void WriteRun::integer(std::int64_t i) {
  if (o.canonical && (i > static_cast<std::int64_t>(kMaxSafeInteger) ||
                      i < -static_cast<std::int64_t>(kMaxSafeInteger))) {
    char* w = reserve(32);
    commit(w, json::formatEcmaScript(static_cast<double>(i), w));
    return;
  }
  char* w = reserve(24);
  commit(w, std::to_chars(w, w + 24, i).ptr);
}

void WriteRun::uinteger(std::uint64_t u) {
  if (o.canonical && u > kMaxSafeInteger) {
    char* w = reserve(32);
    commit(w, json::formatEcmaScript(static_cast<double>(u), w));
    return;
  }
  char* w = reserve(24);
  commit(w, std::to_chars(w, w + 24, u).ptr);
}

void WriteRun::float64(double d, bool isFloat32, float f) {
  if (!std::isfinite(d)) [[unlikely]]
    fail(fmt::format("{} {} cannot be written (JSON has no NaN or Infinity)",
                     isFloat32 ? "Float32" : "Float64", d));
  char* w = reserve(40);
  if (o.canonical) {
    commit(w, json::formatEcmaScript(d, w));
    return;
  }
  char* e = isFloat32 ? std::to_chars(w, w + 32, f).ptr : std::to_chars(w, w + 32, d).ptr;
  // Keep it a float when read back: "1" -> "1.0", "-0" -> "-0.0".
  bool integral = true;
  for (const char* q = w; q < e; ++q) {
    if (*q == '.' || *q == 'e') {
      integral = false;
      break;
    }
  }
  if (integral) {
    e[0] = '.';
    e[1] = '0';
    e += 2;
  }
  commit(w, e);
}

char* WriteRun::body(const char* r, const char* e, char* w, unsigned& high) const noexcept {
  const bool escNA = escapeNonAscii;
  for (;;) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i ctrlMask = _mm_set1_epi8(static_cast<char>(0xE0));
    const __m128i zero = _mm_setzero_si128();
    while (e - r >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(w), v);
      __m128i stop =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmpeq_epi8(_mm_and_si128(v, ctrlMask), zero));
      if (escNA) stop = _mm_or_si128(stop, v);  // bit 7 set: non-ASCII stops too
      const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(stop));
      const unsigned h = static_cast<unsigned>(_mm_movemask_epi8(v));
      if (m == 0) {
        if (h != 0) high |= 0x80;
        r += 16;
        w += 16;
        continue;
      }
      const int i = __builtin_ctz(m);
      if ((h & ((1U << i) - 1)) != 0) high |= 0x80;
      r += i;
      w += i;
      break;
    }
#endif
    if (r >= e) return w;
    const auto c = static_cast<unsigned char>(*r);
    if (c < 0x80) {
      const char esc = kEscape.t[c];
      if (esc == 0) {
        *w++ = static_cast<char>(c);
      } else if (esc == 'u') {
        w = writeU4(w, c);
      } else {
        w[0] = '\\';
        w[1] = esc;
        w += 2;
      }
      ++r;
    } else if (!escNA) {
      high |= c;
      *w++ = static_cast<char>(c);
      ++r;
    } else {
      // Validated beforehand: decode one well-formed sequence.
      std::uint32_t cp;
      int len;
      if (c < 0xE0) {
        cp = c & 0x1F;
        len = 2;
      } else if (c < 0xF0) {
        cp = c & 0x0F;
        len = 3;
      } else {
        cp = c & 0x07;
        len = 4;
      }
      for (int k = 1; k < len; ++k) cp = cp << 6 | (static_cast<unsigned char>(r[k]) & 0x3F);
      r += len;
      if (cp >= 0x10000) {
        cp -= 0x10000;
        w = writeU4(w, 0xD800 + (cp >> 10));
        w = writeU4(w, 0xDC00 + (cp & 0x3FF));
      } else {
        w = writeU4(w, cp);
      }
    }
  }
}

void WriteRun::string(std::string_view s, bool flagged) {
  if (flagged) [[unlikely]]
    fail("a Str flagged as invalid UTF-8 cannot be written as JSON");
  auto validate = [&] {
    const std::size_t bad =
        utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(s.data()), s.size());
    if (bad != utf8::npos) [[unlikely]]
      fail(fmt::format("ill-formed UTF-8 at byte {} of a Str of {} bytes", bad, s.size()), bad);
  };
  if (escapeNonAscii) validate();
  const char* r = s.data();
  const char* const e = r + s.size();
  unsigned high = 0;
  bool first = true;
  for (;;) {
    const char* ce = e;
    if (static_cast<std::size_t>(e - r) > kChunk) {
      ce = r + kChunk;  // do not split a UTF-8 sequence (\u escaping decodes whole ones)
      while ((static_cast<unsigned char>(*ce) & 0xC0) == 0x80 && ce > r + kChunk - 4) --ce;
    }
    char* w0 = reserve(static_cast<std::size_t>(ce - r) * 6 + 2);
    char* w = w0;
    if (first) *w++ = '"';
    first = false;
    w = body(r, ce, w, high);
    r = ce;
    if (r == e) {
      *w++ = '"';
      commit(w0, w);
      break;
    }
    commit(w0, w);
  }
  if (!escapeNonAscii && (high & 0x80) != 0) validate();
}

void WriteRun::extended(const Value& v) {
  if (!o.extendedTypes) [[unlikely]]
    fail(fmt::format("{} has no JSON form (enable extendedTypes for the tagged-object form)",
                     valueTypeName(v.type())));
  const char* sep = pretty ? "\": " : "\":";
  const std::size_t sepLen = pretty ? 3 : 2;
  if (v.isTimestamp()) {
    const Timestamp t = v.asTimestamp();
    char* w0 = reserve(64);
    char* w = w0;
    std::memcpy(w, "{\"$timestamp", 12);
    w += 12;
    std::memcpy(w, sep, sepLen);
    w += sepLen;
    *w++ = '[';
    w = std::to_chars(w, w + 24, t.seconds).ptr;
    *w++ = ',';
    w = std::to_chars(w, w + 24, t.nanoseconds).ptr;
    *w++ = ']';
    *w++ = '}';
    commit(w0, w);
    return;
  }
  const auto bytes = v.isBin() ? v.asBin() : v.extData();
  char* w0 = reserve(json_detail::base64EncodedLength(bytes.size()) + 32);
  char* w = w0;
  if (v.isBin()) {
    std::memcpy(w, "{\"$bin", 6);
    w += 6;
    std::memcpy(w, sep, sepLen);
    w += sepLen;
  } else {
    std::memcpy(w, "{\"$ext", 6);
    w += 6;
    std::memcpy(w, sep, sepLen);
    w += sepLen;
    *w++ = '[';
    w = std::to_chars(w, w + 8, static_cast<int>(v.extType())).ptr;
    *w++ = ',';
  }
  *w++ = '"';
  w = json_detail::base64Encode(bytes.data(), bytes.size(), w);
  *w++ = '"';
  if (v.isExt()) *w++ = ']';
  *w++ = '}';
  commit(w0, w);
}

void WriteRun::array(std::span<const Value> elements, std::size_t depth) {
  checkDepth(depth);
  if (elements.empty()) {
    raw("[]", 2);
    return;
  }
  put('[');
  bool firstElement = true;
  for (const Value& e : elements) {
    if (!firstElement) put(',');
    firstElement = false;
    if (pretty) newline(depth);
    value(e, depth);
  }
  if (pretty) newline(depth - 1);
  put(']');
}

void WriteRun::map(std::span<const Member> members, std::size_t depth) {
  checkDepth(depth);
  if (members.empty()) {
    raw("{}", 2);
    return;
  }
  put('{');
  bool firstMember = true;
  for (const Member& m : members) {
    if (!firstMember) put(',');
    firstMember = false;
    if (pretty) newline(depth);
    if (!m.key.isStr()) [[unlikely]]
      fail(fmt::format("a map key of type {} cannot be written (JSON keys are strings)",
                       valueTypeName(m.key.type())));
    string(m.key.asStr(), m.key.hasInvalidUtf8());
    if (pretty) {
      raw(": ", 2);
    } else {
      put(':');
    }
    value(m.value, depth);
  }
  if (pretty) newline(depth - 1);
  put('}');
}

void WriteRun::canonicalMap(std::span<const Member> members, std::size_t depth) {
  checkDepth(depth);
  const std::size_t n = members.size();
  const Member* small[32];
  std::vector<const Member*> big;
  const Member** sorted = small;
  if (n > 32) {
    big.resize(n);
    sorted = big.data();
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Member& m = members[i];
    if (!m.key.isStr()) [[unlikely]]
      fail(fmt::format("a map key of type {} cannot be written (JSON keys are strings)",
                       valueTypeName(m.key.type())));
    sorted[i] = &m;
  }
  auto less = [](const Member* a, const Member* b) {
    return utf16Less(a->key.asStr(), b->key.asStr());
  };
  if (n <= 32) {
    for (std::size_t i = 1; i < n; ++i) {  // insertion sort: the common small maps
      const Member* x = sorted[i];
      std::size_t j = i;
      for (; j > 0 && less(x, sorted[j - 1]); --j) sorted[j] = sorted[j - 1];
      sorted[j] = x;
    }
  } else {
    std::sort(sorted, sorted + n, less);
  }
  put('{');
  for (std::size_t i = 0; i < n; ++i) {
    if (i != 0) {
      if (sorted[i]->key.asStr() == sorted[i - 1]->key.asStr()) [[unlikely]]
        fail(fmt::format("duplicate key \"{}\" cannot be written in canonical mode",
                         sorted[i]->key.asStr().substr(0, 64)));
      put(',');
    }
    string(sorted[i]->key.asStr(), sorted[i]->key.hasInvalidUtf8());
    put(':');
    value(sorted[i]->value, depth);
  }
  put('}');
}

void WriteRun::value(const Value& v, std::size_t depth) {
  switch (v.type()) {
    case ValueType::Nil:
      raw("null", 4);
      return;
    case ValueType::Bool:
      if (v.asBool()) {
        raw("true", 4);
      } else {
        raw("false", 5);
      }
      return;
    case ValueType::Int:
      integer(v.asInt64());
      return;
    case ValueType::UInt:
      uinteger(v.asUInt64());
      return;
    case ValueType::Float32:
      float64(static_cast<double>(v.asFloat32()), true, v.asFloat32());
      return;
    case ValueType::Float64:
      float64(v.asDouble(), false, 0.0F);
      return;
    case ValueType::Str:
      string(v.asStr(), v.hasInvalidUtf8());
      return;
    case ValueType::Bin:
    case ValueType::Ext:
    case ValueType::Timestamp:
      extended(v);
      return;
    case ValueType::Array:
      array(v.asArray(), depth + 1);
      return;
    case ValueType::Map:
      if (o.canonical) {
        canonicalMap(v.asMap(), depth + 1);
      } else {
        map(v.asMap(), depth + 1);
      }
      return;
  }
}

}  // namespace

void JsonWriter::write(const Value& v, ByteBuf& out) const { json::write(v, out, options_); }

std::string JsonWriter::toString(const Value& v) const { return json::toString(v, options_); }

namespace json {

void write(const Value& v, ByteBuf& out, const JsonWriteOptions& options) {
  WriteRun run{out, options, options.pretty && !options.canonical,
               options.escapeNonAscii && !options.canonical};
  const std::size_t mark = out.writerIndex();
  try {
    run.value(v, 0);
  } catch (...) {
    out.writerIndex(mark);
    throw;
  }
}

std::string toString(const Value& v, const JsonWriteOptions& options) {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(256);
  write(v, buf, options);
  return std::string(buf.readableStringView());
}

}  // namespace json
}  // namespace netbuf
