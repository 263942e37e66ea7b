#include <netbuf/codec/json/json_error.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <utility>

namespace netbuf {

std::string_view jsonErrorCodeName(JsonErrorCode code) noexcept {
  switch (code) {
    case JsonErrorCode::Syntax:
      return "Syntax";
    case JsonErrorCode::UnexpectedEnd:
      return "UnexpectedEnd";
    case JsonErrorCode::InvalidUtf8:
      return "InvalidUtf8";
    case JsonErrorCode::InvalidEscape:
      return "InvalidEscape";
    case JsonErrorCode::LoneSurrogate:
      return "LoneSurrogate";
    case JsonErrorCode::DepthLimit:
      return "DepthLimit";
    case JsonErrorCode::DocumentSizeLimit:
      return "DocumentSizeLimit";
    case JsonErrorCode::StringLengthLimit:
      return "StringLengthLimit";
    case JsonErrorCode::NumberLengthLimit:
      return "NumberLengthLimit";
    case JsonErrorCode::NumberOutOfRange:
      return "NumberOutOfRange";
    case JsonErrorCode::TrailingContent:
      return "TrailingContent";
    case JsonErrorCode::ExtendedType:
      return "ExtendedType";
    case JsonErrorCode::TypeMismatch:
      return "TypeMismatch";
  }
  return "?";
}

JsonError::JsonError(JsonErrorCode code, std::string detail, std::uint64_t offset,
                     std::uint64_t line, std::uint64_t column, std::uint64_t value,
                     std::uint64_t limit)
    : JsonError(code, detail,
                fmt::format("JsonError: {} at offset {} (line {}, column {})", detail, offset, line,
                            column),
                offset, line, column, value, limit) {}

JsonError::JsonError(JsonErrorCode code, std::string detail, std::string what, std::uint64_t offset,
                     std::uint64_t line, std::uint64_t column, std::uint64_t value,
                     std::uint64_t limit)
    : DecoderError(what, offset, value, limit),
      code_(code),
      line_(line),
      column_(column),
      detail_(std::move(detail)) {}

JsonError JsonError::rebased(std::uint64_t base) const {
  const std::uint64_t off = base + offset();
  return JsonError(code_, detail_,
                   fmt::format("JsonError: {} at stream offset {} (line {}, column {} of the value "
                               "at stream offset {})",
                               detail_, off, line_, column_, base),
                   off, line_, column_, value(), limit());
}

}  // namespace netbuf
