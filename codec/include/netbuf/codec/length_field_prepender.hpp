#pragma once
// LengthFieldPrepender: prepends a length field to each outgoing buffer (Netty 4.1's class of the
// same name); the encoding counterpart of LengthFieldBasedFrameDecoder.
//
//   +----------------+          +--------+----------------+
//   | "HELLO, WORLD" |   ->     | 0x000C | "HELLO, WORLD" |     (lengthFieldLength = 2)
//   +----------------+          +--------+----------------+
//                                 header   payload, moved through untouched
//
// write(payload, out) appends two buffers to out: a small header buffer from alloc() holding the
// length field, then the payload itself (moved, never copied: a CompositeByteBuf payload stays a
// composite). The written length is
//
//     payload.readableBytes() + lengthAdjustment (+ lengthFieldLength if
//     lengthIncludesLengthFieldLength)
//
// Parameters (validated by the constructor, IllegalArgumentError otherwise):
//  - lengthFieldLength: 1, 2, 3, 4 or 8 bytes; 1..4-byte fields are unsigned, an 8-byte field is a
//    signed 64-bit value (as Netty's writeLong, and as LengthFieldBasedFrameDecoder reads it).
//  - lengthAdjustment: added to the payload's length.
//  - lengthIncludesLengthFieldLength: the length counts the length field itself.
//  - byteOrder: order of the field's bytes (big-endian, network order, by default).
//
// Errors: a length that is negative, or does not fit the field (>= 256 for 1 byte, 2^16 for 2,
// 2^24 for 3, 2^32 for 4, > INT64_MAX for 8), throws EncoderError (value = the length, kNone when
// negative; limit = the field's largest value; offset kNone) and appends nothing; the payload is
// released with the moved-in handle.
//
// Deliberate differences from Netty: a 4-byte field holds lengths up to 2^32 - 1 (Netty's int
// stops at 2^31 - 1); errors are EncoderError rather than IllegalArgumentException.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_accessors.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/message_to_message_encoder.hpp>
#include <utility>
#include <vector>

namespace netbuf {

class LengthFieldPrepender : public MessageToMessageEncoder<LengthFieldPrepender, AnyByteBuf> {
 public:
  /// Throws IllegalArgumentError when lengthFieldLength is not 1, 2, 3, 4 or 8.
  explicit LengthFieldPrepender(std::size_t lengthFieldLength, std::int64_t lengthAdjustment = 0,
                                bool lengthIncludesLengthFieldLength = false,
                                ByteOrder byteOrder = ByteOrder::big,
                                ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());
  /// Netty's LengthFieldPrepender(int, boolean). Without it, LengthFieldPrepender(2, true) would
  /// silently mean lengthAdjustment = 1.
  template <std::same_as<bool> Bool>
  LengthFieldPrepender(std::size_t lengthFieldLength, Bool lengthIncludesLengthFieldLength)
      : LengthFieldPrepender(lengthFieldLength, 0, lengthIncludesLengthFieldLength) {}

  std::size_t lengthFieldLength() const noexcept { return lengthFieldLength_; }
  std::int64_t lengthAdjustment() const noexcept { return lengthAdjustment_; }
  bool lengthIncludesLengthFieldLength() const noexcept { return includesLength_; }
  ByteOrder byteOrder() const noexcept { return bigEndian_ ? ByteOrder::big : ByteOrder::little; }
  /// The largest value the field holds: 255, 65535, 2^24 - 1, 2^32 - 1 or INT64_MAX.
  std::uint64_t maxFieldValue() const noexcept { return maxFieldValue_; }

  /// Appends the header, then payload (moved, no copy). Throws EncoderError (appending nothing)
  /// when the length does not fit.
  void encode(AnyByteBuf payload, Output& out) {
    out.reserve(out.size() + 2);  // nothing below can fail after the header is appended
    ByteBuf header = encodeHeader(readableBytes(payload));
    out.emplace_back(std::in_place_type<ByteBuf>, std::move(header));
    out.push_back(std::move(payload));
  }

  /// The header for a payload of payloadLength bytes: a new buffer from alloc() holding just the
  /// length field. Throws EncoderError when the length does not fit.
  ByteBuf encodeHeader(std::size_t payloadLength) {
    const std::uint64_t length = fieldValue(payloadLength);
    ByteBuf header = alloc().buffer(lengthFieldLength_);
    writeField(header, length);
    return header;
  }

 private:
  static constexpr std::uint64_t kInt64Max = static_cast<std::uint64_t>(INT64_MAX);

  /// The checked field value for a payload length.
  std::uint64_t fieldValue(std::size_t payloadLength) const {
    std::int64_t length = 0;
    if (payloadLength > kInt64Max ||
        __builtin_add_overflow(static_cast<std::int64_t>(payloadLength), lengthAdjustment_,
                               &length) ||
        (includesLength_ &&
         __builtin_add_overflow(length, static_cast<std::int64_t>(lengthFieldLength_), &length)) ||
        length < 0 || static_cast<std::uint64_t>(length) > maxFieldValue_) [[unlikely]] {
      failLength(payloadLength);
    }
    return static_cast<std::uint64_t>(length);
  }
  void writeField(ByteBuf& header, std::uint64_t v) const;
  [[noreturn]] void failLength(std::size_t payloadLength) const;

  std::size_t lengthFieldLength_;
  std::int64_t lengthAdjustment_;
  std::uint64_t maxFieldValue_;
  bool includesLength_;
  bool bigEndian_;
};

}  // namespace netbuf
