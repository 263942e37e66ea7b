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
#include <limits>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/value.hpp>
#include <optional>
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
  /// Map the tagged objects {"$bin"}, {"$ext"}, {"$timestamp"}, {"$float32"} to Bin, Ext,
  /// Timestamp and Float32.
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
  ExtendedType,       ///< a malformed {"$bin"}/{"$ext"}/{"$timestamp"}/{"$float32"}
  TypeMismatch,       ///< JsonReader: the next value is not of the type asked for
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
  std::vector<Value> stack_;     // elements, or key/value pairs, of the open containers
  std::vector<char> unescaped_;  // the string being unescaped
  struct Frame {
    std::size_t start;  // stack_ index of the container's first element
    std::size_t open;   // offset of its '[' or '{'
    bool object;
  };
  std::vector<Frame> frames_;
};

/// The kind of the next token of a JsonReader (peek()).
enum class JsonToken : std::uint8_t {
  BeginObject,
  EndObject,
  BeginArray,
  EndArray,
  String,  ///< a string value, or in an object the next key (nextKey())
  Number,
  Bool,
  Null,
  End,  ///< the top-level value has been read and only whitespace follows
};

/// Pull reader: reads one JSON value token by token, without a Document (the base of the typed API,
/// json_traits.hpp). Same grammar, options (maxDepth, maxDocumentSize, maxStringLength,
/// maxNumberLength, allowLoneSurrogates; bigIntegersAsDouble for readDouble), UTF-8 validation and
/// JsonError codes (offsets into the text, line and column) as JsonParser.
///
///   JsonReader r(R"({"id":7,"tags":["a"]})");
///   r.readBeginObject();
///   while (auto k = r.nextKey()) {
///     if (*k == "id") id = r.readInt64();
///     else r.skipValue();
///   }
///   r.readEndObject();
///   r.readEnd();                                       // only whitespace may follow
///
/// Strings: readString() returns a view INTO THE INPUT when the string has no escapes, else into
/// the reader's scratch buffer (valid until the next read call); readStringNoEscapes() only
/// accepts the first kind (TypeMismatch otherwise), so its view lives as long as the input. Keys
/// (nextKey) follow the readString() rule.
/// Numbers: readInt64/readUInt64/readInteger<T> accept an integer token only ("1.0" and "1e2" are
/// TypeMismatch) and range-check it (NumberOutOfRange, the offset of the number, e.g. -1 as
/// unsigned, 2^64, 300 as uint8_t); readDouble accepts every number. A value of another type is
/// TypeMismatch at the value's first byte ("expected a string, found a number"). Separators (','
/// and
/// ':') are checked as the reader moves. Misuse (nextKey outside an object, readEndArray in an
/// object...) throws IllegalArgumentError.
/// A failed read leaves the reader positioned at the offending token; after a JsonError, discard
/// it. The input (a string_view, or a ByteBuf's readable bytes, which are not consumed) must
/// outlive the reader and the views it returned. Container state: a std::string (no allocation up
/// to 15 levels); the scratch grows to the longest escaped string.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text, const JsonParseOptions& options = {});
  explicit JsonReader(const ByteBuf& input, const JsonParseOptions& options = {})
      : JsonReader(input.readableStringView(), options) {}
  /// The reader views its input: a temporary buffer would be gone before the first read.
  explicit JsonReader(ByteBuf&& input, const JsonParseOptions& options = {}) = delete;

  /// The next token's kind (skipping whitespace and a ',' before it; consumes nothing else).
  JsonToken peek();
  void readBeginObject();
  /// The next key of the current object (its ':' consumed), or nullopt at its '}' (not consumed:
  /// call readEndObject()).
  std::optional<std::string_view> nextKey();
  void readEndObject();
  void readBeginArray();
  /// Whether the current array has another element (false at its ']', not consumed).
  bool hasNextElement();
  void readEndArray();

  std::string_view readString();
  std::string_view readStringNoEscapes();
  std::int64_t readInt64();
  std::uint64_t readUInt64();
  double readDouble();
  /// A number as float: NumberOutOfRange (at the number) when its magnitude exceeds FLT_MAX,
  /// where the conversion would be undefined.
  float readFloat();
  bool readBool();
  void readNull();
  /// Reads a null and returns true, or returns false (nothing consumed) for any other value.
  bool tryReadNull();
  /// Skips one whole value (containers included), checking it as the parser would.
  void skipValue();
  /// Expects the end of the input after the top-level value (only whitespace): TrailingContent.
  void readEnd();

  /// An integer of type T, range-checked (NumberOutOfRange).
  template <class T>
  T readInteger() {
    peek();  // past whitespace and a separator: errors name the number's own offset
    if constexpr (std::is_signed_v<T>) {
      const std::uint64_t at = offset();
      const std::int64_t v = readInt64();
      if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
          v > static_cast<std::int64_t>(std::numeric_limits<T>::max())) [[unlikely]]
        failRange(at, v < 0, static_cast<std::uint64_t>(v), sizeof(T), true);
      return static_cast<T>(v);
    } else {
      const std::uint64_t at = offset();
      const std::uint64_t v = readUInt64();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) [[unlikely]]
        failRange(at, false, v, sizeof(T), false);
      return static_cast<T>(v);
    }
  }

  /// Offset of the next unread byte.
  std::uint64_t offset() const noexcept { return static_cast<std::uint64_t>(p_ - begin_); }
  /// Containers open now.
  std::size_t depth() const noexcept { return stack_.size(); }
  const JsonParseOptions& options() const noexcept { return options_; }

 private:
  [[noreturn]] void fail(JsonErrorCode code, const char* at, std::string detail,
                         std::uint64_t value = CodecError::kNone,
                         std::uint64_t limit = CodecError::kNone) const;
  [[noreturn]] void failRange(std::uint64_t at, bool negative, std::uint64_t value,
                              std::size_t bytes, bool isSigned) const;
  [[noreturn]] void failType(const char* expected);
  [[noreturn]] void failEnd(const char* what) const;
  void skipWs() noexcept {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  char valueStart();  // positions p_ at the next value's first byte (separators checked)
  void valueDone() noexcept;
  std::string_view scanString(bool allowEscapes);
  void open(char c);
  void close(char c);

  const char* begin_;
  const char* p_;
  const char* end_;
  JsonParseOptions options_;
  std::string stack_;  // per open container: '{' or '['
  // State of the innermost container (or the top level): no element yet / after an element /
  // after its ',' / (object) after a key and its ':'.
  enum class State : std::uint8_t { First, AfterValue, AfterComma, AfterKey };
  State state_ = State::First;
  bool done_ = false;  // the top-level value has been read
  std::string scratch_;
};

namespace json {

/// One-shot forms (a per-thread JsonParser supplies the scratch). See JsonParser::parse.
void parse(std::string_view text, Document& into, const JsonParseOptions& options = {});
void parse(ByteBuf input, Document& into, const JsonParseOptions& options = {});
Document parse(std::string_view text, const JsonParseOptions& options = {});
Document parse(ByteBuf input, const JsonParseOptions& options = {});

}  // namespace json
}  // namespace netbuf
