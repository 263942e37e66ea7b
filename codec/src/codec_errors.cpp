#include <fmt/format.h>
#include <netbuf/codec/byte_to_message_decoder.hpp>

namespace netbuf::detail {

void throwEmittedWithoutConsuming(std::uint64_t offset, std::size_t readable) {
  throw DecoderError(fmt::format("DecoderError: decode() emitted a message without consuming "
                                 "input ({} bytes readable) at stream offset {}",
                                 readable, offset),
                     offset, readable);
}

}  // namespace netbuf::detail
