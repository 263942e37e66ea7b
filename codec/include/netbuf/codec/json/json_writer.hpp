#pragma once
// JSON writer: serialises a Value tree (value.hpp) as JSON straight into a ByteBuf, compact,
// pretty or canonical (RFC 8785, the JSON Canonicalization Scheme).
//
//   ByteBuf out = Unpooled::buffer();
//   json::write(doc.root(), out);                                 // {"a":[1,2.5,"x"]}
//   json::toString(doc.root(), {.pretty = true});                 // indented, 2 spaces
//   json::toString(doc.root(), {.canonical = true});              // RFC 8785 bytes
//
// Output (every mode): valid UTF-8. Strings escape '"', '\\' and control characters (\b \f \n
// \r \t, others \u00xx, lowercase hex); '/' and DEL are not escaped. escapeNonAscii writes every
// non-ASCII character as \uxxxx (a surrogate pair above the BMP), so the output is ASCII.
// Integers are written exactly. Float64 uses the shortest text that reads back as the same double
// (std::to_chars), with ".0" appended when that text looks like an integer, so that parsing it
// gives a Float64 again ("1.0", "-0.0", "1e+21"); Float32 uses the shortest text of the float.
//
// Canonical mode (RFC 8785; pretty and escapeNonAscii are ignored): no whitespace; object members
// sorted by their keys' UTF-16 code units; numbers in ECMAScript's Number.prototype.toString form
// (4.5, 0.002, 1e+30, 1e-7; -0 -> 0); Float32 is written as the double it equals; integers with
// |n| > 2^53 are written as the double they round to (RFC 8785 numbers are IEEE doubles, I-JSON):
// 2^64 - 1 -> 18446744073709552000. Duplicate keys are an EncoderError. Equal trees give identical
// bytes whatever the members' order. Tagged extended-type objects keep their integers exact.
//
// Extended types (Bin, Ext, Timestamp): with extendedTypes, the tagged objects json_parser.hpp
// reads back ({"$bin":"<base64>"}, {"$ext":[type,"<base64>"]}, {"$timestamp":[s,ns]}, always
// compact); without it they are an EncoderError naming the type.
//
// Errors (EncoderError, offset kNone; the tree is not changed): a Str flagged invalid UTF-8 (or
// holding ill-formed UTF-8), NaN or an infinity, a map key that is not a Str, Bin/Ext/Timestamp
// without extendedTypes, nesting deeper than maxDepth (value = depth, limit = maxDepth), duplicate
// keys in canonical mode. On error, out's writerIndex is restored (nothing partial is left).
//
// Cost: the writer keeps a cursor into out's writable room, so a token costs one bounds compare and
// raw stores (ensureWritable only when the room runs out: once per write for a buffer of the right
// size); strings under 16 bytes without escapes are checked and copied with one 16-byte load (which
// may read past the string within its 4 KiB page; word loads in sanitizer builds and near a page
// end), longer ones 16 bytes at a time (SSE2); canonical sorting of a map of at most 32 members is
// an insertion sort on a stack array of 8-byte key prefixes that also finds duplicates (no heap
// allocation). Recursion depth is bounded by maxDepth.
//
// JsonStreamWriter (below) writes the same text from a sequence of calls instead of a Value tree:
// the base of the typed API (json_traits.hpp).

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/value.hpp>
#include <string>
#include <string_view>
#include <type_traits>

namespace netbuf {

struct JsonWriteOptions {
  /// Newlines and indentation (indent spaces per level; ": " between key and value).
  bool pretty = false;
  int indent = 2;
  /// Non-ASCII characters as \uxxxx escapes.
  bool escapeNonAscii = false;
  /// RFC 8785 output (overrides pretty and escapeNonAscii).
  bool canonical = false;
  /// Bin/Ext/Timestamp as tagged objects instead of an EncoderError.
  bool extendedTypes = false;
  /// Most arrays/maps open at once (the top-level one is depth 1).
  std::size_t maxDepth = 512;
};

/// A writer with fixed options (the same as the json::write free function, for symmetry with
/// JsonParser and for holding options in one place).
class JsonWriter {
 public:
  explicit JsonWriter(const JsonWriteOptions& options = {}) : options_(options) {}
  const JsonWriteOptions& options() const noexcept { return options_; }
  void setOptions(const JsonWriteOptions& options) { options_ = options; }

  /// Appends v's JSON text at out's writerIndex (growing out as needed). Throws EncoderError.
  void write(const Value& v, ByteBuf& out) const;
  std::string toString(const Value& v) const;

 private:
  JsonWriteOptions options_;
};

namespace json_detail {
struct WriteRun;

// Short-string helpers shared by the writer and JsonStreamWriter's inline fast paths.

/// kPlainByte[c]: byte c is copied as is in every mode (ASCII, not '"', '\\' or a control).
struct PlainByteTable {
  bool v[256];
  constexpr PlainByteTable() : v() {
    for (int c = 0x20; c < 0x80; ++c) v[c] = c != '"' && c != '\\';
  }
};
inline constexpr PlainByteTable kPlainByte{};

// SWAR over a word U (4 or 8 bytes): nonzero when a byte of x needs more than a copy ('"', '\\',
// < 0x20 or >= 0x80). Exact as a boolean (the borrow false positives only occur above a byte that
// is itself flagged).
template <class U>
inline U specialBytes(U x) noexcept {
  constexpr U ones = static_cast<U>(~U{0}) / 0xFF;  // 0x01 in every byte
  const U q = x ^ (ones * '"');
  const U b = x ^ (ones * '\\');
  return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x) & (ones * 0x80);
}

/// copyPlainShort for sizeof(U) <= n <= 2 * sizeof(U): two overlapping word loads and stores.
template <class U>
inline bool copyTwoWords(const char* r, std::size_t n, char* w) noexcept {
  U a, b;
  std::memcpy(&a, r, sizeof(U));
  std::memcpy(&b, r + n - sizeof(U), sizeof(U));
  if ((specialBytes(a) | specialBytes(b)) != 0) return false;
  std::memcpy(w, &a, sizeof(U));
  std::memcpy(w + n - sizeof(U), &b, sizeof(U));
  return true;
}

/// Copies [r, r + n), n < 16, to w when no byte needs escaping (overlapping word loads); returns
/// false (nothing meaningful written) otherwise.
inline bool copyPlainShort(const char* r, std::size_t n, char* w) noexcept {
  if (n >= 8) return copyTwoWords<std::uint64_t>(r, n, w);
  if (n >= 4) return copyTwoWords<std::uint32_t>(r, n, w);
  if (n == 0) return true;
  const char c0 = r[0];
  const char c1 = r[n >> 1];
  const char c2 = r[n - 1];
  if (!(kPlainByte.v[static_cast<unsigned char>(c0)] &
        kPlainByte.v[static_cast<unsigned char>(c1)] &
        kPlainByte.v[static_cast<unsigned char>(c2)]))
    return false;
  w[0] = c0;
  w[n >> 1] = c1;
  w[n - 1] = c2;
  return true;
}

/// The short-string fast path of every writer: at w, sep (none when 0), the quoted s and, for a
/// key, ':', when s is under 16 bytes that need no escaping. Returns the bytes written, or 0 when
/// s needs the general path (nothing meaningful written then). w has room for s.size() + 4 bytes
/// (with the default copy; json_writer.cpp's 16-byte copy needs 20).
template <bool (*Copy)(const char*, std::size_t, char*) noexcept = copyPlainShort>
inline std::size_t writeShortString(char* w, char sep, std::string_view s, bool isKey) noexcept {
  const std::size_t n = s.size();
  const std::size_t k = sep != 0 ? 1 : 0;
  if (n >= 16 || !Copy(s.data(), n, w + k + 1)) return 0;
  w[0] = sep;  // overwritten by the quote when there is no separator
  w[k] = '"';
  w[k + n + 1] = '"';
  w[k + n + 2] = ':';  // inside the room; past the end (overwritten later) unless a key
  return k + n + 2 + (isKey ? 1 : 0);
}
}  // namespace json_detail

/// Streaming JSON writer: appends one JSON value to a ByteBuf from a sequence of calls, without a
/// Value tree (the typed API in json_traits.hpp is built on it).
///
///   JsonStreamWriter w(buf);
///   w.beginObject();
///   w.key("id");   w.value(42);
///   w.key("tags"); w.beginArray(); w.value("a"); w.value("b"); w.endArray();
///   w.endObject();                                   // {"id":42,"tags":["a","b"]}
///
/// Output: the same bytes json::write gives for the equivalent tree with the same options (pretty
/// and indent, escapeNonAscii, maxDepth; strings, integers and doubles formatted and escaped by the
/// same code). canonical: no whitespace and RFC 8785 numbers, but members are written in call
/// order and duplicate keys are not detected: the caller writes keys sorted (by UTF-16 code units)
/// to get canonical bytes. extendedTypes does not apply (there is no Bin/Ext call).
///
/// Each call appends its text at once (out's writerIndex advances; nothing is buffered), so out may
/// be inspected between calls; `out` must outlive the writer and not be written by anyone else
/// meanwhile. Calls must form one JSON value: a value in an object needs a key() first, key() only
/// in an object, end*() must match the open container, nothing after the top-level value. A
/// misuse, a string that is not valid UTF-8, a NaN/infinity and nesting deeper than maxDepth throw
/// EncoderError. After an error the writer must be discarded: the failed call may already have
/// updated its container state and written part of its text (json::serialize restores out's
/// writerIndex to where it started). Container state lives in a std::string (no allocation up to
/// 15 levels).
class JsonStreamWriter {
 public:
  explicit JsonStreamWriter(ByteBuf& out, const JsonWriteOptions& options = {});

  // The common calls (compact output, short plain strings, integers, containers inside a
  // container) are inline fast paths; everything else goes through the out-of-line general code,
  // which also reports misuse.
  void beginObject() {
    if (!openFast('{')) open('{');
  }
  void endObject() {
    if (!closeFast('}')) close('}');
  }
  void beginArray() {
    if (!openFast('[')) open('[');
  }
  void endArray() {
    if (!closeFast(']')) close(']');
  }
  /// The next member's key (in an object, before its value).
  void key(std::string_view name) {
    if (!keyFast(name)) keySlow(name);
  }

  void value(std::string_view s) {
    if (!stringFast(s)) stringSlow(s);
  }
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(bool b);
  void value(double d);
  /// Written with the float's own shortest text (canonical: the double it equals).
  void value(float f);
  /// Every integer type (char types included) is written as a number.
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) void value(T v) {
    if constexpr (std::is_signed_v<T>) {
      valueInt(static_cast<std::int64_t>(v));
    } else {
      valueUInt(static_cast<std::uint64_t>(v));
    }
  }
  void valueInt(std::int64_t v) {
    if (!(options_.canonical && (v > kMaxSafe || v < -kMaxSafe)) && numberFast(v)) return;
    valueIntSlow(v);
  }
  void valueUInt(std::uint64_t v) {
    if (!(options_.canonical && v > static_cast<std::uint64_t>(kMaxSafe)) && numberFast(v)) return;
    valueUIntSlow(v);
  }
  void null();

  /// Containers open now (0 at the top level).
  std::size_t depth() const noexcept { return stack_.size(); }
  /// Whether the top-level value is complete.
  bool done() const noexcept { return done_; }
  const JsonWriteOptions& options() const noexcept { return options_; }

 private:
  static constexpr std::int64_t kMaxSafe = std::int64_t{1} << 53;  // canonical: exact integers

  void beforeValue(json_detail::WriteRun& run);
  /// The general path of every scalar call (defined and used in json_writer.cpp only).
  template <class Write>
  void scalar(std::size_t room, Write&& write);
  void afterValue() noexcept { done_ = stack_.empty(); }
  void open(char c);
  void close(char c);
  void keySlow(std::string_view name);
  void stringSlow(std::string_view s);
  void valueIntSlow(std::int64_t v);
  void valueUIntSlow(std::uint64_t v);

  // ---- fast paths: each returns false, having changed nothing, when the general code must run
  /// The separator before a value inside a container in compact mode: 0 none, ',' a comma; -1
  /// when the general code decides (the top level, pretty output, a value without its key).
  int compactSeparator() const noexcept {
    if (!compact_ || stack_.empty()) return -1;
    if (stack_.back() == '{') return afterKey_ ? 0 : -1;
    return first_ ? 0 : ',';
  }
  /// Where n bytes can go at out's writerIndex, or null (growth, read-only: the general code).
  char* roomFor(std::size_t n) noexcept {
    return out_.isWritable(n) ? reinterpret_cast<char*>(out_.writePtrUnchecked()) : nullptr;
  }
  bool openFast(char c) {
    const int sep = compactSeparator();
    if (sep < 0 || stack_.size() + 1 > options_.maxDepth || stack_.size() >= 15) return false;
    char* w = roomFor(2);
    if (w == nullptr) return false;
    std::size_t k = 0;
    if (sep != 0) w[k++] = ',';
    w[k++] = c;
    out_.advanceWriterUnchecked(k);
    stack_.push_back(c);  // no allocation: at most 15 levels here (the string's inline room)
    afterKey_ = false;
    first_ = true;
    return true;
  }
  bool closeFast(char c) {
    if (!compact_ || stack_.empty() || stack_.back() != (c == '}' ? '{' : '[') || afterKey_)
      return false;
    char* w = roomFor(1);
    if (w == nullptr) return false;
    *w = c;
    out_.advanceWriterUnchecked(1);
    stack_.pop_back();
    first_ = false;
    done_ = stack_.empty();
    return true;
  }
  bool keyFast(std::string_view name) {
    const std::size_t n = name.size();
    if (!compact_ || stack_.empty() || stack_.back() != '{' || afterKey_ || n >= 16) return false;
    char* w = roomFor(n + 4);
    if (w == nullptr) return false;
    const std::size_t m = json_detail::writeShortString(w, first_ ? 0 : ',', name, true);
    if (m == 0) return false;
    out_.advanceWriterUnchecked(m);
    first_ = false;
    afterKey_ = true;
    return true;
  }
  bool stringFast(std::string_view s) {
    const std::size_t n = s.size();
    const int sep = compactSeparator();
    if (sep < 0 || n >= 16) return false;
    char* w = roomFor(n + 4);
    if (w == nullptr) return false;
    const std::size_t m = json_detail::writeShortString(w, static_cast<char>(sep), s, false);
    if (m == 0) return false;
    out_.advanceWriterUnchecked(m);
    afterKey_ = false;
    first_ = false;
    return true;
  }
  template <class T>
  bool numberFast(T v) {
    const int sep = compactSeparator();
    if (sep < 0) return false;
    char* w = roomFor(24);
    if (w == nullptr) return false;
    std::size_t k = 0;
    if (sep != 0) w[k++] = ',';
    char* e = std::to_chars(w + k, w + 24, v).ptr;
    out_.advanceWriterUnchecked(static_cast<std::size_t>(e - w));
    afterKey_ = false;
    first_ = false;
    return true;
  }

  ByteBuf& out_;
  JsonWriteOptions options_;
  bool compact_;           // no whitespace: not pretty, or canonical
  std::string stack_;      // '{' or '[' per open container
  bool first_ = true;      // no element written yet in the innermost container
  bool afterKey_ = false;  // in an object: key() written, its value not yet
  bool done_ = false;
};

namespace json {

/// Appends v's JSON text to out. Throws EncoderError (see the header comment); out unchanged then.
void write(const Value& v, ByteBuf& out, const JsonWriteOptions& options = {});
/// v's JSON text as a std::string.
std::string toString(const Value& v, const JsonWriteOptions& options = {});

/// Appends d in ECMAScript Number.prototype.toString form (RFC 8785 numbers) to `out`, which must
/// have room for 32 chars; returns the end. d must be finite.
char* formatEcmaScript(double d, char* out) noexcept;

/// compareUtf16's general case (out of line).
int compareUtf16Slow(std::string_view a, std::string_view b) noexcept;
/// Three-way comparison (<0, 0, >0) of two UTF-8 strings by their UTF-16 code units: RFC 8785's
/// member order, which canonical mode writes. It differs from byte order only where a character
/// above U+FFFF meets one in U+E000..U+FFFF.
inline int compareUtf16(std::string_view a, std::string_view b) noexcept {
  if (!a.empty() && !b.empty()) {  // the common case inline: first bytes differ, both ASCII
    const auto x = static_cast<unsigned char>(a[0]);
    const auto y = static_cast<unsigned char>(b[0]);
    if (x != y && (x | y) < 0x80) return x < y ? -1 : 1;
  }
  return compareUtf16Slow(a, b);
}

}  // namespace json
}  // namespace netbuf
