#include <netbuf/codec/json/json_writer.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <span>
#include <vector>

#include "json_internal.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

using detail::copyPlainShort;

#if defined(__has_feature)
#define NETBUF_JSON_HAS_FEATURE(x) __has_feature(x)
#else
#define NETBUF_JSON_HAS_FEATURE(x) 0
#endif

#if defined(__SSE2__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) &&      \
    !NETBUF_JSON_HAS_FEATURE(address_sanitizer) && !NETBUF_JSON_HAS_FEATURE(thread_sanitizer) && \
    !NETBUF_JSON_HAS_FEATURE(memory_sanitizer)
/// The rare fallback of copyPlainShort16, kept out of line: the header forces copyPlainShort
/// inline (for the stream writer), which would put its code on the hot path here.
[[gnu::noinline]] bool copyPlainShortNearPageEnd(const char* r, std::size_t n, char* w) noexcept {
  return copyPlainShort(r, n, w);
}

/// Whether a 16-byte load at r stays in r's 4 KiB page and the string [r, r + n) is not empty
/// (an empty string may point at the next page: nothing to load then).
inline bool load16Safe(const char* r, std::size_t n) noexcept {
  return (reinterpret_cast<std::uintptr_t>(r) & 4095) <= 4096 - 16 && n != 0;
}
/// copyPlainShort in one 16-byte load, check and store: w has room for 16 bytes (the bytes past n
/// are scratch, overwritten by what follows). The load may read past r + n, but never past the
/// 4 KiB page that holds r, so it cannot fault; the extra bytes are masked off. It is kept out of
/// the public header: inlined into a caller that passes a short array, the compiler would rightly
/// warn about the read. Sanitized builds compile the word-at-a-time version, since they would
/// report the read too.
bool copyPlainShort16(const char* r, std::size_t n, char* w) noexcept {
  if (!load16Safe(r, n)) [[unlikely]]
    return copyPlainShortNearPageEnd(r, n, w);
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r));
  // Signed compare: bytes >= 0x80 are negative, so "< 0x20" also catches non-ASCII.
  const __m128i bad = _mm_or_si128(
      _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  if ((static_cast<unsigned>(_mm_movemask_epi8(bad)) & ((1U << n) - 1)) != 0) return false;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(w), v);
  return true;
}
/// The copy of a string known to be plain (Value::isPlainAscii): as copyPlainShort16 without the
/// check. Returns true.
bool copyShort16(const char* r, std::size_t n, char* w) noexcept {
  if (!load16Safe(r, n)) [[unlikely]] {
    std::memcpy(w, r, n);
    return true;
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(w),
                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(r)));
  return true;
}
#else
bool copyPlainShort16(const char* r, std::size_t n, char* w) noexcept {
  return copyPlainShort(r, n, w);
}
bool copyShort16(const char* r, std::size_t n, char* w) noexcept {
  std::memcpy(w, r, n);
  return true;
}
#endif

/// Room the writer's short-string path needs at its cursor (the 16-byte store after a separator
/// and a quote, and the closing quote and colon).
constexpr std::size_t kShortStringRoom = 20;

}  // namespace

namespace detail {

// ---------------------------------------------------------------------------- WriteRun

/// One run of writes into a ByteBuf through a cached cursor: `w` is the next byte to write and
/// `lim` the end of the buffer's writable room, so that a token costs one compare (need) and raw
/// stores; the buffer's writerIndex is brought up to date by commit() (before growing, at the end).
/// Also the implementation of JsonStreamWriter (one run per call).
struct WriteRun {
  ByteBuf& out;
  const JsonWriteOptions& o;
  bool pretty;
  bool escapeNonAscii;
  char* w;
  char* lim;
  char* committed;

  WriteRun(ByteBuf& b, const JsonWriteOptions& opt, std::size_t initial)
      : out(b),
        o(opt),
        pretty(opt.pretty && !opt.canonical),
        escapeNonAscii(opt.escapeNonAscii && !opt.canonical) {
    out.ensureWritable(initial);  // also rejects read-only and empty handles
    load();
  }
  void load() noexcept {
    w = reinterpret_cast<char*>(out.writePtrUnchecked());
    committed = w;
    lim = w + out.writableBytes();
  }
  void commit() noexcept {
    out.advanceWriterUnchecked(static_cast<std::size_t>(w - committed));
    committed = w;
  }
  /// Room for n bytes at w.
  void need(std::size_t n) {
    if (static_cast<std::size_t>(lim - w) < n) [[unlikely]]
      grow(n);
  }
  [[gnu::noinline]] void grow(std::size_t n) {
    commit();
    out.ensureWritable(n);
    load();
  }
  void raw(const char* s, std::size_t n) {
    need(n);
    std::memcpy(w, s, n);
    w += n;
  }
  void put(char c) {
    need(1);
    *w++ = c;
  }
  void newline(std::size_t level) {
    const std::size_t spaces = level * static_cast<std::size_t>(std::max(o.indent, 0));
    need(1 + spaces);
    w[0] = '\n';
    std::memset(w + 1, ' ', spaces);
    w += 1 + spaces;
  }

  [[noreturn]] static void fail(std::string what, std::uint64_t value = CodecError::kNone,
                                std::uint64_t limit = CodecError::kNone) {
    throw EncoderError("EncoderError: JSON: " + what, CodecError::kNone, value, limit);
  }

  void value(const Value& v, std::size_t depth);
  /// A Str value (or key) as a quoted string, with its flag and hint.
  NETBUF_JSON_INLINE void string(const Value& str) {
    string(str.asStr(), str.hasInvalidUtf8(), str.isPlainAscii());
  }
  /// The quoted string: short plain strings inline, the rest in stringSlow. plainAscii: s is known
  /// to need no escaping (Value::isPlainAscii), so it is copied without looking at its bytes.
  void string(std::string_view s, bool flagged = false, bool plainAscii = false) {
    if (plainAscii) {
      need(s.size() + kShortStringRoom);
      if (s.size() < 16) {
        w += detail::writeShortString<copyShort16>(w, 0, s, false);
      } else {
        w[0] = '"';
        std::memcpy(w + 1, s.data(), s.size());
        w[s.size() + 1] = '"';
        w += s.size() + 2;
      }
      return;
    }
    if (s.size() < 16 && !flagged) {
      need(kShortStringRoom);
      if (const std::size_t m = detail::writeShortString<copyPlainShort16>(w, 0, s, false)) {
        w += m;
        return;
      }
    }
    stringSlow(s, flagged);
  }
  void stringSlow(std::string_view s, bool flagged);
  /// The compact containers' fast path on a local cursor: at p (room up to l), sep (none when 0),
  /// the Str v quoted and, for a key, ':', when v is short and plain; false (nothing changed) when
  /// the general code must write it. The containers keep their cursor in locals because a store
  /// through char* may alias any member, which would make the compiler reload and store w around
  /// every byte written (a store-to-load chain per token).
  NETBUF_JSON_INLINE static bool fastString(char*& p, const char* l, char sep, const Value& v,
                                            bool isKey) noexcept {
    const std::string_view s = v.asStr();
    if (s.size() >= 16 || l - p < static_cast<std::ptrdiff_t>(kShortStringRoom)) return false;
    if (v.isPlainAscii()) {  // known to need no escaping: copied without the check
      p += detail::writeShortString<copyShort16>(p, sep, s, isKey);
      return true;
    }
    if (v.hasInvalidUtf8()) return false;
    const std::size_t m = detail::writeShortString<copyPlainShort16>(p, sep, s, isKey);
    p += m;
    return m != 0;
  }
  template <class MemberAt>
  void compactMembers(std::size_t n, MemberAt memberAt, std::size_t depth);
  /// A container's element or member value: strings (the common leaves) and arrays without the
  /// call and type switch of value().
  void child(const Value& v, std::size_t depth) {
    if (v.isStr()) {
      string(v);
    } else if (v.isArray()) {
      array(v.asArray(), depth + 1);
    } else {
      value(v, depth);
    }
  }
  char* body(const char* r, const char* e, char* dst, unsigned& high) const noexcept;
  void integer(std::int64_t i) {
    if (o.canonical && (i > static_cast<std::int64_t>(kMaxSafeInteger) ||
                        i < -static_cast<std::int64_t>(kMaxSafeInteger))) {
      need(32);
      w = json::formatEcmaScript(static_cast<double>(i), w);
      return;
    }
    need(24);
    w = std::to_chars(w, w + 24, i).ptr;
  }
  void uinteger(std::uint64_t u) {
    if (o.canonical && u > kMaxSafeInteger) {
      need(32);
      w = json::formatEcmaScript(static_cast<double>(u), w);
      return;
    }
    need(24);
    w = std::to_chars(w, w + 24, u).ptr;
  }
  void float64(double d, bool isFloat32, float f);
  void extended(const Value& v);
  void array(std::span<const Value> elements, std::size_t depth);
  void map(std::span<const Member> members, std::size_t depth);
  /// A Map value: in canonical mode sorted (canonicalMap) unless Value::hasCanonicalOrder says its
  /// members are in that order already, which also rules out duplicates; then, as in the other
  /// modes, in stored order (map; canonical mode is never pretty).
  void mapValue(const Value& v, std::size_t depth) {
    if (o.canonical && !v.hasCanonicalOrder()) {
      canonicalMap(v.asMap(), depth);
    } else {
      map(v.asMap(), depth);
    }
  }
  void canonicalMap(std::span<const Member> members, std::size_t depth);
  void canonicalMapLarge(std::span<const Member> members, std::size_t depth);
  static constexpr std::size_t kSmallMap = 32;
  void checkDepth(std::size_t depth) const {
    if (depth > o.maxDepth) [[unlikely]]
      fail(fmt::format("nesting depth {} exceeds maxDepth {}", depth, o.maxDepth), depth,
           o.maxDepth);
  }
};

void WriteRun::float64(double d, bool isFloat32, float f) {
  if (!std::isfinite(d)) [[unlikely]]
    fail(fmt::format("{} {} cannot be written (JSON has no NaN or Infinity)",
                     isFloat32 ? "Float32" : "Float64", d));
  need(40);
  if (o.canonical) {
    w = json::formatEcmaScript(d, w);
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
  w = e;
}

// Copies [r, e) to dst escaping as needed; dst has room for 6 * (e - r) bytes (and 16 more when
// e - r >= 4, which 6 * (e - r) >= (e - r) + 16 guarantees for the word stores).
char* WriteRun::body(const char* r, const char* e, char* dst, unsigned& high) const noexcept {
  const bool escNA = escapeNonAscii;
  for (;;) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i ctrlMask = _mm_set1_epi8(static_cast<char>(0xE0));
    const __m128i zero = _mm_setzero_si128();
    while (e - r >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
      __m128i stop =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmpeq_epi8(_mm_and_si128(v, ctrlMask), zero));
      if (escNA) stop = _mm_or_si128(stop, v);  // bit 7 set: non-ASCII stops too
      const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(stop));
      const unsigned h = static_cast<unsigned>(_mm_movemask_epi8(v));
      if (m == 0) {
        if (h != 0) high |= 0x80;
        r += 16;
        dst += 16;
        continue;
      }
      const int i = __builtin_ctz(m);
      if ((h & ((1U << i) - 1)) != 0) high |= 0x80;
      r += i;
      dst += i;
      break;
    }
#endif
    if (r >= e) return dst;
    // A tail shorter than 16 bytes without escapes: two overlapping word copies.
    if (e - r < 16 && copyPlainShort(r, static_cast<std::size_t>(e - r), dst)) {
      return dst + (e - r);
    }
    const auto c = static_cast<unsigned char>(*r);
    if (c < 0x80) {
      const char esc = kEscape.t[c];
      if (esc == 0) {
        *dst++ = static_cast<char>(c);
      } else if (esc == 'u') {
        dst = writeU4(dst, c);
      } else {
        dst[0] = '\\';
        dst[1] = esc;
        dst += 2;
      }
      ++r;
    } else if (!escNA) {
      high |= c;
      *dst++ = static_cast<char>(c);
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
        dst = writeU4(dst, 0xD800 + (cp >> 10));
        dst = writeU4(dst, 0xDC00 + (cp & 0x3FF));
      } else {
        dst = writeU4(dst, cp);
      }
    }
  }
}

void WriteRun::stringSlow(std::string_view s, bool flagged) {
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
  need(1);
  *w++ = '"';
  while (r != e) {
    const char* ce = e;
    if (static_cast<std::size_t>(e - r) > kChunk) {
      ce = r + kChunk;  // do not split a UTF-8 sequence (\u escaping decodes whole ones)
      while ((static_cast<unsigned char>(*ce) & 0xC0) == 0x80 && ce > r + kChunk - 4) --ce;
    }
    need(static_cast<std::size_t>(ce - r) * 6 + 16);
    w = body(r, ce, w, high);
    r = ce;
  }
  need(1);
  *w++ = '"';
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
    need(64);
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
    return;
  }
  const auto bytes = v.isBin() ? v.asBin() : v.extData();
  need(detail::base64EncodedLength(bytes.size()) + 32);
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
  w = detail::base64Encode(bytes.data(), bytes.size(), w);
  *w++ = '"';
  if (v.isExt()) *w++ = ']';
  *w++ = '}';
}

/// A map member for sorting: its key's first 8 bytes as a big-endian integer (zero-padded), so
/// that two keys whose prefixes differ and are ASCII compare as integers (UTF-8 byte order is
/// UTF-16 order for ASCII); everything else goes to compareUtf16.
struct SortKey {
  std::uint64_t prefix;
  const Member* member;
};

inline std::uint64_t keyPrefix(std::string_view k) noexcept {
  const std::size_t n = k.size();
  const char* r = k.data();
  std::uint64_t x = 0;
  if constexpr (std::endian::native != std::endian::little) {
    for (std::size_t i = 0; i < 8; ++i)
      x = x << 8 | (i < n ? static_cast<unsigned char>(r[i]) : 0U);
    return x;
  }
  if (n >= 8) {
    std::memcpy(&x, r, 8);
  } else if (n >= 4) {
    // Two overlapping 4-byte loads, the second shifted into place (little-endian memory order).
    std::uint32_t a, b;
    std::memcpy(&a, r, 4);
    std::memcpy(&b, r + n - 4, 4);
    x = a | static_cast<std::uint64_t>(b) << (8 * (n - 4));
  } else if (n != 0) {
    x = static_cast<unsigned char>(r[0]) |
        static_cast<std::uint64_t>(static_cast<unsigned char>(r[n >> 1])) << (8 * (n >> 1)) |
        static_cast<std::uint64_t>(static_cast<unsigned char>(r[n - 1])) << (8 * (n - 1));
  }
  return __builtin_bswap64(x);
}

inline int compareKeys(const SortKey& a, const SortKey& b) noexcept {
  if (a.prefix != b.prefix && ((a.prefix | b.prefix) & 0x8080808080808080ULL) == 0)
    return a.prefix < b.prefix ? -1 : 1;
  return json::compareUtf16(a.member->key.asStr(), b.member->key.asStr());
}

[[noreturn]] void failKeyType(const Value& key) {
  WriteRun::fail(fmt::format("a map key of type {} cannot be written (JSON keys are strings)",
                             valueTypeName(key.type())));
}

void WriteRun::array(std::span<const Value> elements, std::size_t depth) {
  checkDepth(depth);
  if (elements.empty()) {
    raw("[]", 2);
    return;
  }
  if (!pretty) {
    char* p = w;
    const char* l = lim;
    char sep = '[';
    for (const Value& e : elements) {
      if (!e.isStr() || !fastString(p, l, sep, e, false)) {
        w = p;
        put(sep);
        child(e, depth);
        p = w;
        l = lim;
      }
      sep = ',';
    }
    w = p;
    put(']');
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
  if (!pretty) {
    compactMembers(
        members.size(), [&](std::size_t i) -> const Member& { return members[i]; }, depth);
    return;
  }
  put('{');
  bool firstMember = true;
  for (const Member& m : members) {
    if (!firstMember) put(',');
    firstMember = false;
    if (pretty) newline(depth);
    if (!m.key.isStr()) [[unlikely]]
      failKeyType(m.key);
    string(m.key);
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

[[noreturn]] void failDuplicate(std::string_view key) {
  WriteRun::fail(fmt::format("duplicate key \"{}\" cannot be written in canonical mode",
                             detail::utf8Prefix(key, 64)));
}

// A map's members in RFC 8785 order. Maps of at most kSmallMap members (nearly all of them) are
// sorted on the stack by insertion sort on 8-byte key prefixes; larger ones in canonicalMapLarge.
void WriteRun::canonicalMap(std::span<const Member> members, std::size_t depth) {
  checkDepth(depth);
  const std::size_t n = members.size();
  if (n == 0) {
    raw("{}", 2);
    return;
  }
  if (n > kSmallMap) [[unlikely]] {
    canonicalMapLarge(members, depth);
    return;
  }
  SortKey keys[kSmallMap];
  for (std::size_t i = 0; i < n; ++i) {
    const Member& m = members[i];
    if (!m.key.isStr()) [[unlikely]]
      failKeyType(m.key);
    const SortKey x{keyPrefix(m.key.asStr()), &m};
    // Insertion sort. The three-way comparison also finds duplicates: x stops below the greatest
    // key not above it, which equals x when a duplicate exists.
    std::size_t j = i;
    for (; j > 0; --j) {
      const int c = compareKeys(x, keys[j - 1]);
      if (c > 0) break;
      if (c == 0) [[unlikely]]
        failDuplicate(m.key.asStr());
      keys[j] = keys[j - 1];
    }
    keys[j] = x;
  }
  compactMembers(
      n, [&](std::size_t i) -> const Member& { return *keys[i].member; }, depth);
}

[[gnu::noinline]] void WriteRun::canonicalMapLarge(std::span<const Member> members,
                                                   std::size_t depth) {
  const std::size_t n = members.size();
  std::vector<SortKey> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Member& m = members[i];
    if (!m.key.isStr()) [[unlikely]]
      failKeyType(m.key);
    keys[i] = SortKey{keyPrefix(m.key.asStr()), &m};
  }
  std::sort(keys.begin(), keys.end(),
            [](const SortKey& a, const SortKey& b) { return compareKeys(a, b) < 0; });
  for (std::size_t i = 1; i < n; ++i) {
    if (compareKeys(keys[i], keys[i - 1]) == 0) [[unlikely]]
      failDuplicate(keys[i].member->key.asStr());
  }
  compactMembers(
      n, [&](std::size_t i) -> const Member& { return *keys[i].member; }, depth);
}

// The members of a compact map (n > 0), in memberAt(0..n-1) order.
template <class MemberAt>
void WriteRun::compactMembers(std::size_t n, MemberAt memberAt, std::size_t depth) {
  char* p = w;
  const char* l = lim;
  char sep = '{';
  for (std::size_t i = 0; i < n; ++i) {
    const Member& m = memberAt(i);
    if (!m.key.isStr()) [[unlikely]]
      failKeyType(m.key);
    if (!fastString(p, l, sep, m.key, true)) {
      w = p;
      put(sep);
      string(m.key);
      put(':');
      p = w;
      l = lim;
    }
    if (!m.value.isStr() || !fastString(p, l, 0, m.value, false)) {
      w = p;
      child(m.value, depth);
      p = w;
      l = lim;
    }
    sep = ',';
  }
  w = p;
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
      // extendedTypes: tagged, so that it reads back as a Float32 (a bare number is a Float64).
      if (o.extendedTypes) raw(pretty ? "{\"$float32\": " : "{\"$float32\":", pretty ? 13 : 12);
      float64(static_cast<double>(v.asFloat32()), true, v.asFloat32());
      if (o.extendedTypes) raw("}", 1);
      return;
    case ValueType::Float64:
      float64(v.asDouble(), false, 0.0F);
      return;
    case ValueType::Str:
      string(v);
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
      mapValue(v, depth + 1);
      return;
  }
}

}  // namespace detail

using detail::WriteRun;

// ---------------------------------------------------------------------------- JsonStreamWriter

namespace {
[[noreturn]] void failMisuse(const char* what) {
  WriteRun::fail(fmt::format("JsonStreamWriter misuse: {}", what));
}
}  // namespace

JsonStreamWriter::Window JsonStreamWriter::windowOf(ByteBuf& out) noexcept {
  char* w = reinterpret_cast<char*>(out.writePtrUnchecked());
  return {w, w + out.writableBytes()};
}

std::string* JsonStreamWriter::reserveDeep(std::string* deep) {
  if (deep == nullptr) deep = new std::string;
  deep->reserve(deep->size() + 1);  // (the string's growth keeps this amortised)
  return deep;
}

void JsonStreamWriter::pushDeep(std::string* deep, std::uint8_t resume) noexcept {
  deep->push_back(static_cast<char>(resume));  // room reserved by reserveDeep
}

std::uint8_t JsonStreamWriter::popDeep(std::string* deep) noexcept {
  const auto resume = static_cast<std::uint8_t>(deep->back());
  deep->pop_back();
  return resume;
}

void JsonStreamWriter::beforeValue(WriteRun& run, std::uint8_t pos, std::size_t depth) {
  switch (pos & kPosMask) {
    case kDone:
      failMisuse("a second top-level value");
    case kObjectFirst:
    case kObjectNext:
      failMisuse("a value in an object without a key()");
    case kArrayNext:
      run.put(',');
      [[fallthrough]];
    case kArrayFirst:
      if (run.pretty) run.newline(depth);
      break;
    default:  // kTop, kObjectValue: nothing before the value
      break;
  }
}

// Every *Slow function first publishes the bytes the inline paths wrote before it, so that out's
// writerIndex is current for the WriteRun (and stays so if the call throws).

JsonStreamWriter::Window JsonStreamWriter::openSlow(const Call& c, char bracket) {
  c.out->advanceWriterUnchecked(c.pending);
  WriteRun run(*c.out, c.options, 16);
  if (c.depth + 1 > c.options.maxDepth) [[unlikely]]
    run.checkDepth(c.depth + 1);
  beforeValue(run, c.pos, c.depth);
  run.put(bracket);
  run.commit();
  return windowOf(*c.out);
}

JsonStreamWriter::Window JsonStreamWriter::closeSlow(const Call& c, char bracket) {
  c.out->advanceWriterUnchecked(c.pending);
  const std::uint8_t p = c.pos & kPosMask;
  if (bracket == '}') {
    if (p == kObjectValue) [[unlikely]]
      failMisuse("endObject() after a key() without its value");
    if (p != kObjectFirst && p != kObjectNext) [[unlikely]]
      failMisuse("endObject() without an open object");
  } else if (p != kArrayFirst && p != kArrayNext) [[unlikely]] {
    failMisuse("endArray() without an open array");
  }
  WriteRun run(*c.out, c.options, 16);
  if ((p == kObjectNext || p == kArrayNext) && run.pretty) run.newline(c.depth - 1);
  run.put(bracket);
  run.commit();
  return windowOf(*c.out);
}

JsonStreamWriter::Window JsonStreamWriter::keySlow(const Call& c, std::string_view name) {
  c.out->advanceWriterUnchecked(c.pending);
  const std::uint8_t p = c.pos & kPosMask;
  if (p == kObjectValue) [[unlikely]]
    failMisuse("two key() calls without a value between them");
  if (p != kObjectFirst && p != kObjectNext) [[unlikely]]
    failMisuse("key() outside an object");
  WriteRun run(*c.out, c.options, name.size() + 24);
  if (p == kObjectNext) run.put(',');
  if (run.pretty) run.newline(c.depth);
  run.string(name);
  if (run.pretty) {
    run.raw(": ", 2);
  } else {
    run.put(':');
  }
  run.commit();
  return windowOf(*c.out);
}

template <class Write>
JsonStreamWriter::Window JsonStreamWriter::scalarSlow(const Call& c, std::size_t room,
                                                      Write&& write) {
  c.out->advanceWriterUnchecked(c.pending);
  WriteRun run(*c.out, c.options, room);
  beforeValue(run, c.pos, c.depth);
  write(run);
  run.commit();
  return windowOf(*c.out);
}

JsonStreamWriter::Window JsonStreamWriter::stringSlow(const Call& c, std::string_view s) {
  return scalarSlow(c, s.size() + 24, [&](WriteRun& run) { run.string(s); });
}

JsonStreamWriter::Window JsonStreamWriter::boolSlow(const Call& c, bool b) {
  return scalarSlow(c, 24, [&](WriteRun& run) {
    if (b) {
      run.raw("true", 4);
    } else {
      run.raw("false", 5);
    }
  });
}

JsonStreamWriter::Window JsonStreamWriter::nullSlow(const Call& c) {
  return scalarSlow(c, 24, [](WriteRun& run) { run.raw("null", 4); });
}

JsonStreamWriter::Window JsonStreamWriter::doubleSlow(const Call& c, double d) {
  return scalarSlow(c, 64, [&](WriteRun& run) { run.float64(d, false, 0.0F); });
}

JsonStreamWriter::Window JsonStreamWriter::floatSlow(const Call& c, float f) {
  return scalarSlow(c, 64, [&](WriteRun& run) { run.float64(static_cast<double>(f), true, f); });
}

JsonStreamWriter::Window JsonStreamWriter::intSlow(const Call& c, std::int64_t v) {
  return scalarSlow(c, 64, [&](WriteRun& run) { run.integer(v); });
}

JsonStreamWriter::Window JsonStreamWriter::uintSlow(const Call& c, std::uint64_t v) {
  return scalarSlow(c, 64, [&](WriteRun& run) { run.uinteger(v); });
}

void JsonWriter::write(const Value& v, ByteBuf& out) const { json::write(v, out, options_); }

std::string JsonWriter::toString(const Value& v) const { return json::toString(v, options_); }

namespace json {

void write(const Value& v, ByteBuf& out, const JsonWriteOptions& options) {
  const std::size_t mark = out.writerIndex();
  try {
    WriteRun run(out, options, 64);
    if (v.isMap()) {
      // The usual top level, without value()'s type switch: value(v, 0) does the same, but this
      // saves 1.3-1.5 ns of the small hash's 15-16 ns (alternating runs).
      run.mapValue(v, 1);
    } else {
      run.value(v, 0);
    }
    run.commit();
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
