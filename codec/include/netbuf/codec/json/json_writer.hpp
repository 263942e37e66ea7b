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
// Cost: one ensureWritable per token or string (its worst-case size), then raw pointer writes;
// string bodies are copied 16 bytes at a time; canonical sorting of a map of at most 32 members
// uses a stack array (no heap allocation). Recursion depth is bounded by maxDepth.

#include <cstddef>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/value.hpp>
#include <string>

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

namespace json {

/// Appends v's JSON text to out. Throws EncoderError (see the header comment); out unchanged then.
void write(const Value& v, ByteBuf& out, const JsonWriteOptions& options = {});
/// v's JSON text as a std::string.
std::string toString(const Value& v, const JsonWriteOptions& options = {});

/// Appends d in ECMAScript Number.prototype.toString form (RFC 8785 numbers) to `out`, which must
/// have room for 32 chars; returns the end. d must be finite.
char* formatEcmaScript(double d, char* out) noexcept;

}  // namespace json
}  // namespace netbuf
