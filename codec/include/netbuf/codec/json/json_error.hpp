#pragma once
// JsonError: what JsonParser, JsonReader and JsonDecoder throw for input that is not the JSON they
// accept (a DecoderError with the byte offset, 1-based line and column, and for limits the value
// and the limit).
#include <cstdint>
#include <netbuf/codec/codec_errors.hpp>
#include <string>
#include <string_view>

namespace netbuf {

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

}  // namespace netbuf
