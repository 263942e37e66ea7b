#pragma once
// JSON parser (RFC 8259, strict by default) producing netbuf's document model (value.hpp,
// document.hpp), so that JSON and MessagePack share one tree.
//
//   Document doc = json::parse(R"({"name":"netbuf","tags":["a","b"]})");
//   doc.root()["tags"][1].asStr();            // "b"
//
//   json::parse(std::move(frame), doc);        // ByteBuf input: doc keeps `frame` alive
//
// Zero copy: a string without escapes becomes a Str VIEWING the input (for the string_view
// overloads the caller keeps the text alive as long as the Document's values are used; the ByteBuf
// overloads hand the buffer to Document::keepAlive). A string with escapes is unescaped into the
// Document's arena. Arrays and objects are built on a reusable scratch stack owned by JsonParser
// and copied into the arena once complete, so parsing allocates nothing per value (the arena grows
// by blocks). The parse is iterative: nesting costs no native stack, and deeper than maxDepth is a
// DepthLimit error.
//
// Mapping: null/true/false -> Nil/Bool; strings -> Str; arrays -> Array; objects -> Map (members in
// input order; duplicate keys are kept, Value::find returns the first). Numbers: an integer (no
// fraction, no exponent) in [INT64_MIN, -1] -> Int, in [0, UINT64_MAX] -> UInt, "-0" -> Float64
// -0.0 (the only way to keep its sign); a larger integer -> the nearest Float64
// (bigIntegersAsDouble) or NumberOutOfRange; any other number -> the correctly rounded Float64
// (bit for bit strtod's, subnormals included); a magnitude too large for a double is
// NumberOutOfRange, one of at most half the smallest subnormal becomes 0.0 (or -0.0).
//
// extendedTypes (off by default): an object with exactly ONE member whose key is "$bin", "$ext",
// "$timestamp" or "$float32" becomes a Bin, Ext, Timestamp or Float32 (docs/json.md; base64 is
// RFC 4648's standard alphabet with '=' padding, canonical trailing bits):
//   {"$float32": number}                   -> Float32, the float nearest the number (which must
//                                             round to a finite float)
//   {"$bin": "<base64>"}                   -> Bin
//   {"$ext": [type, "<base64>"]}           -> Ext, type in -128..127 except -1 (timestamps)
//   {"$timestamp": [seconds, nanoseconds]} -> Timestamp, seconds int64, 0 <= ns <= 999999999
// A malformed tagged object is a JsonError with code ExtendedType at the object's '{'.
//
// Errors: every failure throws JsonError (a DecoderError) naming what, the byte offset in the
// input, the 1-based line and column (column counted in bytes), and for limits the value and the
// limit. Nothing is partially returned: `into`'s root is set only on success (its arena may hold
// garbage from the failed attempt until it is cleared). Bad input never crashes, hangs or
// allocates more than a constant times the input size.
//
// Threads: a JsonParser belongs to one thread at a time; the free functions use one per thread.

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_error.hpp>
#include <netbuf/codec/json/json_parse_options.hpp>
#include <netbuf/codec/value.hpp>
#include <string_view>
#include <vector>

namespace netbuf {

class JsonParser {
 public:
  /// Which parser runs. ByteAtATime: one pass over the text, token by token. Indexed: a first
  /// pass finds every token's position 64 bytes at a time (AVX-512 or AVX2 where the CPU has
  /// them, portable code elsewhere), a second builds the Document from those positions; on any
  /// error the byte-at-a-time parser runs over the text again, so errors (code, detail, offset)
  /// are exactly its. Both build the same Document. Auto (the default): Indexed for texts of
  /// kAutoIndexedMinBytes and more, ByteAtATime for shorter ones, where the first pass costs more
  /// than it saves (docs/json.md has the measurements). IndexedOnly: Indexed without the second
  /// try, an error reported as the indexed parser found it (possibly a plain Syntax error at
  /// offset 0): for differential tests only.
  enum class Engine : std::uint8_t { ByteAtATime, Indexed, IndexedOnly, Auto };
  /// Auto's threshold: the measured crossover for documents of mostly strings (parts of
  /// json_bench's twitter document: 84 bytes, byte at a time 1.1x faster; 162 bytes, even; 443
  /// bytes, indexed 1.45x faster).
  static constexpr std::size_t kAutoIndexedMinBytes = 256;

  explicit JsonParser(const JsonParseOptions& options = {}) : options_(options) {}

  const JsonParseOptions& options() const noexcept { return options_; }
  void setOptions(const JsonParseOptions& options) { options_ = options; }
  Engine engine() const noexcept { return engine_; }
  void setEngine(Engine engine) noexcept { engine_ = engine; }

  /// Parses `text` (exactly one JSON value, optionally surrounded by whitespace) and sets
  /// into.root(). Unescaped strings view `text`: keep it alive and unchanged while the values are
  /// used (they carry hints about its bytes, value.hpp; changed bytes can then be written as
  /// invalid JSON). `into` is not cleared first (its arena just grows). Throws JsonError.
  void parse(std::string_view text, Document& into);
  /// Parses input's readable bytes (indices unchanged) and hands `input` to into.keepAlive(), so
  /// the views stay valid as long as `into`.
  void parse(ByteBuf input, Document& into);

 private:
  friend struct JsonParseRun;
  JsonParseOptions options_;
  Engine engine_ = Engine::Auto;
  std::vector<std::uint32_t> structurals_;  // stage 1: token positions
  std::vector<std::uint64_t> blockBits_;    // stage 1: per-block quote/backslash masks
  // Elements, or key/value pairs, of the open containers, in both engines used as raw storage
  // (its size is the capacity it has grown to).
  std::vector<Value> stack_;
  std::vector<char> unescaped_;  // the string being unescaped
  struct Frame {
    std::size_t start;  // stack_ index of the container's first element
    std::size_t open;   // offset of its '[' or '{'
    bool object;
  };
  std::vector<Frame> frames_;
};

namespace json {

/// One-shot forms (a per-thread JsonParser supplies the scratch). See JsonParser::parse.
void parse(std::string_view text, Document& into, const JsonParseOptions& options = {});
void parse(ByteBuf input, Document& into, const JsonParseOptions& options = {});
Document parse(std::string_view text, const JsonParseOptions& options = {});
Document parse(ByteBuf input, const JsonParseOptions& options = {});

}  // namespace json
}  // namespace netbuf
