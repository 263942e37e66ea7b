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
// compact); without it they are an EncoderError naming the type. With extendedTypes a Float32 is
// tagged too ({"$float32":1.5}: its number as above), so that it reads back as a Float32.
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

#include <cstddef>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/json/json_write_options.hpp>
#include <netbuf/codec/value.hpp>
#include <string>
#include <string_view>

namespace netbuf {

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

namespace json {

/// Appends v's JSON text to out. Throws EncoderError (see the header comment); out unchanged then.
void write(const Value& v, ByteBuf& out, const JsonWriteOptions& options = {});
/// v's JSON text as a std::string.
std::string toString(const Value& v, const JsonWriteOptions& options = {});

/// Appends d in ECMAScript Number.prototype.toString form (RFC 8785 numbers) to `out`, which must
/// have room for 32 chars; returns the end. d must be finite.
char* formatEcmaScript(double d, char* out) noexcept;

/// compareUtf16's general case. UTF-8 byte order is code point order, which equals UTF-16 order
/// except that characters above U+FFFF (UTF-8 lead F0..F4, UTF-16 units D800..DBFF) sort before
/// U+E000..U+FFFF (leads EE, EF) in UTF-16. constexpr: NETBUF_JSON_FIELDS sorts its field names
/// with it at compile time.
constexpr int compareUtf16Slow(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size() ? -1 : a.size() == b.size() ? 0 : 1;
  std::size_t s = i;  // start of the differing character (same lead in both when s < i)
  while (s > 0 && (static_cast<unsigned char>(a[s]) & 0xC0) == 0x80) --s;
  const auto la = static_cast<unsigned char>(a[s]);
  const auto lb = static_cast<unsigned char>(b[s]);
  if (la != lb) {
    const bool aSupp = la >= 0xF0;
    const bool bSupp = lb >= 0xF0;
    const bool aHigh = la == 0xEE || la == 0xEF;
    const bool bHigh = lb == 0xEE || lb == 0xEF;
    if (aSupp && bHigh) return -1;
    if (bSupp && aHigh) return 1;
  }
  return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
}
/// Three-way comparison (<0, 0, >0) of two UTF-8 strings by their UTF-16 code units: RFC 8785's
/// member order, which canonical mode writes. It differs from byte order only where a character
/// above U+FFFF meets one in U+E000..U+FFFF.
constexpr int compareUtf16(std::string_view a, std::string_view b) noexcept {
  if (!a.empty() && !b.empty()) {  // the common case inline: first bytes differ, both ASCII
    const auto x = static_cast<unsigned char>(a[0]);
    const auto y = static_cast<unsigned char>(b[0]);
    if (x != y && (x | y) < 0x80) return x < y ? -1 : 1;
  }
  return compareUtf16Slow(a, b);
}

}  // namespace json
}  // namespace netbuf
