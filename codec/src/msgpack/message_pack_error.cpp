#include <netbuf/codec/msgpack/message_pack_error.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

namespace netbuf {

std::string_view messagePackErrcName(MessagePackErrc code) noexcept {
  switch (code) {
    case MessagePackErrc::Truncated:
      return "Truncated";
    case MessagePackErrc::ReservedByte:
      return "ReservedByte";
    case MessagePackErrc::InvalidUtf8:
      return "InvalidUtf8";
    case MessagePackErrc::InvalidTimestamp:
      return "InvalidTimestamp";
    case MessagePackErrc::DuplicateKey:
      return "DuplicateKey";
    case MessagePackErrc::DepthLimit:
      return "DepthLimit";
    case MessagePackErrc::ContainerLengthLimit:
      return "ContainerLengthLimit";
    case MessagePackErrc::StrLengthLimit:
      return "StrLengthLimit";
    case MessagePackErrc::BinLengthLimit:
      return "BinLengthLimit";
    case MessagePackErrc::ExtLengthLimit:
      return "ExtLengthLimit";
    case MessagePackErrc::MessageSizeLimit:
      return "MessageSizeLimit";
    case MessagePackErrc::TypeMismatch:
      return "TypeMismatch";
    case MessagePackErrc::IntegerOverflow:
      return "IntegerOverflow";
    case MessagePackErrc::TrailingBytes:
      return "TrailingBytes";
  }
  return "?";
}

namespace detail {
void throwMessagePackError(MessagePackErrc code, std::string_view detail, std::uint64_t offset,
                           std::uint64_t value, std::uint64_t limit) {
  throw MessagePackError(code,
                         fmt::format("MessagePackError({}): {} at offset {}",
                                     messagePackErrcName(code), detail, offset),
                         offset, value, limit);
}
}  // namespace detail

}  // namespace netbuf
