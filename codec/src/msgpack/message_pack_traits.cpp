#include <netbuf/codec/msgpack/message_pack_traits.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

namespace netbuf::detail {

void throwMessagePackArity(std::size_t expected, std::size_t actual, std::uint64_t offset) {
  throwMessagePackError(MessagePackErrc::TypeMismatch,
                        fmt::format("expected an array of {} elements, got {}", expected, actual),
                        offset, actual, expected);
}

void throwMessagePackCountTooLarge(std::size_t n) {
  throw EncoderError(fmt::format("EncoderError: a container of {} elements exceeds MessagePack's "
                                 "limit {}",
                                 n, UINT32_MAX),
                     CodecError::kNone, n, UINT32_MAX);
}

void throwMessagePackTimePointRange(const char* what, std::uint64_t offset) {
  if (std::string_view(what) == "pack") {
    throw EncoderError(
        "EncoderError: the time_point's seconds since the epoch do not fit a MessagePack timestamp",
        CodecError::kNone);
  }
  throwMessagePackError(MessagePackErrc::IntegerOverflow,
                        "the timestamp does not fit the time_point's duration type", offset);
}

}  // namespace netbuf::detail
