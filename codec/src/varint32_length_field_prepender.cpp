#include <fmt/format.h>
#include <netbuf/codec/varint32_length_field_prepender.hpp>

namespace netbuf {

void Varint32LengthFieldPrepender::failTooLong(std::size_t payloadLength) {
  throw EncoderError(fmt::format("EncoderError: payload length {} exceeds the varint32 limit {}",
                                 payloadLength, kMaxPayloadLength),
                     CodecError::kNone, payloadLength, kMaxPayloadLength);
}

}  // namespace netbuf
