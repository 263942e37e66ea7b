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
// size); strings under 16 bytes without escapes are checked and copied with two overlapping word
// loads, longer ones 16 bytes at a time (SSE2); canonical sorting of a map of at most 32 members is
// an insertion sort on a stack array that also finds duplicates (no heap allocation). Recursion
// depth is bounded by maxDepth.
//
// JsonStreamWriter (below) writes the same text from a sequence of calls instead of a Value tree:
// the base of the typed API (json_traits.hpp).

#include <cstddef>
#include <cstdint>
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
}

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

  void beginObject();
  void endObject();
  void beginArray();
  void endArray();
  /// The next member's key (in an object, before its value).
  void key(std::string_view name);

  void value(std::string_view s);
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
  void valueInt(std::int64_t v);
  void valueUInt(std::uint64_t v);
  void null();

  /// Containers open now (0 at the top level).
  std::size_t depth() const noexcept { return stack_.size(); }
  /// Whether the top-level value is complete.
  bool done() const noexcept { return done_; }
  const JsonWriteOptions& options() const noexcept { return options_; }

 private:
  void beforeValue(json_detail::WriteRun& run);
  void afterValue() noexcept { done_ = stack_.empty(); }
  void open(char c);
  void close(char c);

  ByteBuf& out_;
  JsonWriteOptions options_;
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

/// Three-way comparison (<0, 0, >0) of two UTF-8 strings by their UTF-16 code units: RFC 8785's
/// member order, which canonical mode writes. It differs from byte order only where a character
/// above U+FFFF meets one in U+E000..U+FFFF.
int compareUtf16(std::string_view a, std::string_view b) noexcept;

}  // namespace json
}  // namespace netbuf
