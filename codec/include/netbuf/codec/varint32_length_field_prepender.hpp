#pragma once
// Varint32LengthFieldPrepender: prepends each outgoing buffer's length as a protobuf base-128
// varint (Netty 4.1's ProtobufVarint32LengthFieldPrepender); the encoding counterpart of
// Varint32FrameDecoder.
//
//   BEFORE ENCODE (300 bytes)       AFTER ENCODE (302 bytes)
//   +---------------+               +--------+---------------+
//   | Protobuf Data |-------------->| Length | Protobuf Data |
//   |  (300 bytes)  |               | 0xAC02 |  (300 bytes)  |
//   +---------------+               +--------+---------------+
//
// write(payload, out) appends two buffers to out: a small header buffer from alloc() holding the
// varint (1 to 5 bytes), then the payload itself, moved through untouched (a CompositeByteBuf
// payload stays a composite).
//
// Errors: a payload longer than INT32_MAX bytes (what the decoder accepts) throws EncoderError
// (value = its length, limit = INT32_MAX, offset kNone) and appends nothing.
//
// Deliberate difference from Netty: Netty copies the header and the payload into one new buffer;
// here the payload is not copied (zero copy), at the price of one extra buffer in out.

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/message_to_message_encoder.hpp>
#include <utility>
#include <vector>

namespace netbuf {

class Varint32LengthFieldPrepender
    : public MessageToMessageEncoder<Varint32LengthFieldPrepender, AnyByteBuf> {
 public:
  static constexpr std::size_t kMaxPayloadLength = 0x7FFFFFFF;

  explicit Varint32LengthFieldPrepender(
      ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : MessageToMessageEncoder(alloc) {}

  /// Appends the varint header, then payload (moved, no copy). Throws EncoderError (appending
  /// nothing) when the payload is longer than INT32_MAX bytes.
  void encode(AnyByteBuf payload, Output& out) {
    out.reserve(out.size() + 2);  // nothing below can fail after the header is appended
    ByteBuf header = encodeHeader(readableBytes(payload));
    out.emplace_back(std::in_place_type<ByteBuf>, std::move(header));
    out.push_back(std::move(payload));
  }

  /// A new buffer from alloc() holding just the varint of payloadLength.
  ByteBuf encodeHeader(std::size_t payloadLength) {
    if (payloadLength > kMaxPayloadLength) [[unlikely]]
      failTooLong(payloadLength);
    const auto v = static_cast<std::uint32_t>(payloadLength);
    ByteBuf header = alloc().buffer(computeRawVarint32Size(v));
    writeRawVarint32(header, v);
    return header;
  }

  /// Bytes of the varint of value: 1 below 2^7, 2 below 2^14, 3 below 2^21, 4 below 2^28, else 5.
  static constexpr std::size_t computeRawVarint32Size(std::uint32_t value) noexcept {
    if (value < (1U << 7)) return 1;
    if (value < (1U << 14)) return 2;
    if (value < (1U << 21)) return 3;
    if (value < (1U << 28)) return 4;
    return 5;
  }

  /// Appends the varint of value to out (7 bits per byte, least significant group first).
  static void writeRawVarint32(ByteBuf& out, std::uint32_t value) {
    out.ensureWritable(computeRawVarint32Size(value));
    auto* p = reinterpret_cast<std::uint8_t*>(out.writePtrUnchecked());
    std::size_t n = 0;
    while (value >= 0x80) {
      p[n++] = static_cast<std::uint8_t>(value | 0x80);
      value >>= 7;
    }
    p[n++] = static_cast<std::uint8_t>(value);
    out.advanceWriterUnchecked(n);
  }

 private:
  [[noreturn]] static void failTooLong(std::size_t payloadLength);
};

}  // namespace netbuf
