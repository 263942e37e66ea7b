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
// (std::from_chars); a magnitude too large for a double is NumberOutOfRange, one too small
// becomes 0.0 (or -0.0).
//
// extendedTypes (off by default): an object with exactly ONE member whose key is "$bin", "$ext" or
// "$timestamp" becomes a Bin, Ext or Timestamp (docs/json.md; base64 is RFC 4648's standard
// alphabet with '=' padding, canonical trailing bits):
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
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/value.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf {

/// Options of JsonParser / json::parse. Defaults are safe for untrusted input.
struct JsonParseOptions {
  /// Most arrays/objects open at once (the top-level container is depth 1).
  std::size_t maxDepth = 512;
  /// Most bytes of input (the whole text, whitespace included).
  std::size_t maxDocumentSize = std::size_t{64} * 1024 * 1024;
  /// Most bytes of one string or key after unescaping.
  std::size_t maxStringLength = std::size_t{16} * 1024 * 1024;
  /// Most characters of one number token (sign, digits, '.', exponent).
  std::size_t maxNumberLength = 4096;
  /// Integers outside [INT64_MIN, UINT64_MAX]: true -> nearest Float64, false -> NumberOutOfRange.
  bool bigIntegersAsDouble = true;
  /// A \u escape of an unpaired surrogate: false -> LoneSurrogate error, true -> replaced by
  /// U+FFFD (so that every Str stays valid UTF-8).
  bool allowLoneSurrogates = false;
  /// Map the tagged objects {"$bin"}, {"$ext"}, {"$timestamp"} to Bin, Ext and Timestamp.
  bool extendedTypes = false;
};

enum class JsonErrorCode : std::uint8_t {
  Syntax,             ///< a byte that cannot appear there
  UnexpectedEnd,      ///< the input ended inside a value
  InvalidUtf8,        ///< ill-formed UTF-8 in a string or key (offset = first bad byte)
  InvalidEscape,      ///< an unknown escape or a \u without 4 hex digits
  LoneSurrogate,      ///< a \u escape of an unpaired surrogate (strict mode)
  DepthLimit,         ///< more than maxDepth containers open
  DocumentSizeLimit,  ///< input longer than maxDocumentSize
  StringLengthLimit,  ///< a string longer than maxStringLength
  NumberLengthLimit,  ///< a number token longer than maxNumberLength
  NumberOutOfRange,   ///< a number too large for a double (or a big integer, when not allowed)
  TrailingContent,    ///< something other than whitespace after the top-level value
  ExtendedType,       ///< a malformed {"$bin"}/{"$ext"}/{"$timestamp"} (extendedTypes)
};

/// "Syntax", "UnexpectedEnd", ... (stable names).
std::string_view jsonErrorCodeName(JsonErrorCode code) noexcept;

/// A JSON parse error. offset() is the byte offset of the offending byte in the parsed text (in a
/// JsonDecoder: in the stream); line() and column() are 1-based, the column counted in bytes (in a
/// JsonDecoder: within the value being parsed). value()/limit() are set for limit errors.
/// what(): "JsonError: unexpected character 'x' at offset 12 (line 2, column 5)".
class JsonError : public DecoderError {
 public:
  JsonError(JsonErrorCode code, std::string detail, std::uint64_t offset, std::uint64_t line,
            std::uint64_t column, std::uint64_t value = kNone, std::uint64_t limit = kNone);

  JsonErrorCode code() const noexcept { return code_; }
  std::uint64_t line() const noexcept { return line_; }
  std::uint64_t column() const noexcept { return column_; }
  /// The description without the position ("unexpected character 'x'").
  const std::string& detail() const noexcept { return detail_; }

  /// The same error for a value that started at stream offset `base` (offset() becomes base +
  /// offset(); line and column stay relative to the value).
  JsonError rebased(std::uint64_t base) const;

 private:
  JsonError(JsonErrorCode code, std::string detail, std::string what, std::uint64_t offset,
            std::uint64_t line, std::uint64_t column, std::uint64_t value, std::uint64_t limit);

  JsonErrorCode code_;
  std::uint64_t line_;
  std::uint64_t column_;
  std::string detail_;
};

/// A reusable parser: holds the scratch stacks, so that parsing many documents with one JsonParser
/// allocates nothing once they have grown to the largest document's needs.
class JsonParser {
 public:
  explicit JsonParser(const JsonParseOptions& options = {}) : options_(options) {}

  const JsonParseOptions& options() const noexcept { return options_; }
  void setOptions(const JsonParseOptions& options) { options_ = options; }

  /// Parses `text` (exactly one JSON value, optionally surrounded by whitespace) and sets
  /// into.root(). Unescaped strings view `text`: keep it alive while the values are used. `into`
  /// is not cleared first (its arena just grows). Throws JsonError.
  void parse(std::string_view text, Document& into);
  /// Parses input's readable bytes (indices unchanged) and hands `input` to into.keepAlive(), so
  /// the views stay valid as long as `into`.
  void parse(ByteBuf input, Document& into);

 private:
  friend struct JsonParseRun;
  JsonParseOptions options_;
  std::vector<Value> stack_;     // elements, or key/value pairs, of the open containers
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
