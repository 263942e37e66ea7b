#pragma once
// JsonReader: a pull reader of JSON text, token by token, without a Document (the base of the
// typed API, json_traits.hpp). It shares JsonParser's lexer, limits and errors
// (json_parse_options.hpp, json_error.hpp).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/json/json_error.hpp>
#include <netbuf/codec/json/json_parse_options.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace netbuf {

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

}  // namespace netbuf
