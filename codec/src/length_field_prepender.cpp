#include <fmt/format.h>
#include <netbuf/codec/length_field_prepender.hpp>
#include <string>

namespace netbuf {

namespace {

std::uint64_t maxFieldValueFor(std::size_t lengthFieldLength) {
  switch (lengthFieldLength) {
    case 1:
      return 0xFF;
    case 2:
      return 0xFFFF;
    case 3:
      return 0xFFFFFF;
    case 4:
      return 0xFFFFFFFF;
    case 8:
      return static_cast<std::uint64_t>(INT64_MAX);
    default:
      throw IllegalArgumentError(
          fmt::format("lengthFieldLength: {} (expected: 1, 2, 3, 4, or 8)", lengthFieldLength));
  }
}

}  // namespace

LengthFieldPrepender::LengthFieldPrepender(std::size_t lengthFieldLength,
                                           std::int64_t lengthAdjustment,
                                           bool lengthIncludesLengthFieldLength,
                                           ByteOrder byteOrder, ByteBufAllocator& alloc)
    : MessageToMessageEncoder(alloc),
      lengthFieldLength_(lengthFieldLength),
      lengthAdjustment_(lengthAdjustment),
      maxFieldValue_(maxFieldValueFor(lengthFieldLength)),
      includesLength_(lengthIncludesLengthFieldLength),
      bigEndian_(byteOrder == ByteOrder::big) {}

void LengthFieldPrepender::writeField(ByteBuf& header, std::uint64_t v) const {
  // v <= maxFieldValue_: the narrowing casts below keep every significant bit.
  switch (lengthFieldLength_) {
    case 1:
      header.writeByte(static_cast<std::int8_t>(static_cast<std::uint8_t>(v)));
      break;
    case 2:
      if (bigEndian_) {
        header.writeShort(static_cast<std::int16_t>(static_cast<std::uint16_t>(v)));
      } else {
        header.writeShortLE(static_cast<std::int16_t>(static_cast<std::uint16_t>(v)));
      }
      break;
    case 3:
      if (bigEndian_) {
        header.writeMedium(static_cast<std::int32_t>(v));
      } else {
        header.writeMediumLE(static_cast<std::int32_t>(v));
      }
      break;
    case 4:
      if (bigEndian_) {
        header.writeInt(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
      } else {
        header.writeIntLE(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
      }
      break;
    default:
      if (bigEndian_) {
        header.writeLong(static_cast<std::int64_t>(v));
      } else {
        header.writeLongLE(static_cast<std::int64_t>(v));
      }
      break;
  }
}

void LengthFieldPrepender::failLength(std::size_t payloadLength) const {
  const std::string expr =
      includesLength_
          ? fmt::format("payload length {} + lengthAdjustment {} + lengthFieldLength {}",
                        payloadLength, lengthAdjustment_, lengthFieldLength_)
          : fmt::format("payload length {} + lengthAdjustment {}", payloadLength,
                        lengthAdjustment_);
  std::int64_t length = 0;
  const bool overflow =
      payloadLength > kInt64Max ||
      __builtin_add_overflow(static_cast<std::int64_t>(payloadLength), lengthAdjustment_,
                             &length) ||
      (includesLength_ &&
       __builtin_add_overflow(length, static_cast<std::int64_t>(lengthFieldLength_), &length));
  if (overflow) {
    throw EncoderError(fmt::format("EncoderError: length ({}) overflows a 64-bit length", expr),
                       CodecError::kNone, CodecError::kNone, maxFieldValue_);
  }
  if (length < 0) {
    throw EncoderError(fmt::format("EncoderError: length {} ({}) is negative", length, expr),
                       CodecError::kNone, CodecError::kNone, maxFieldValue_);
  }
  throw EncoderError(fmt::format("EncoderError: length {} ({}) does not fit a {}-byte length "
                                 "field (max {})",
                                 length, expr, lengthFieldLength_, maxFieldValue_),
                     CodecError::kNone, static_cast<std::uint64_t>(length), maxFieldValue_);
}

}  // namespace netbuf
