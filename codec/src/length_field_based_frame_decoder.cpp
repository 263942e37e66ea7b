#include <fmt/format.h>
#include <algorithm>
#include <limits>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>

namespace netbuf {

namespace {

constexpr std::uint64_t kInt64Max =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

}  // namespace

LengthFieldBasedFrameDecoder::LengthFieldBasedFrameDecoder(
    ByteOrder byteOrder, std::size_t maxFrameLength, std::size_t lengthFieldOffset,
    std::size_t lengthFieldLength, std::int64_t lengthAdjustment, std::size_t initialBytesToStrip,
    bool failFast, Cumulator cumulator, ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc),
      maxFrameLength_(maxFrameLength),
      lengthFieldOffset_(lengthFieldOffset),
      lengthFieldLength_(lengthFieldLength),
      lengthFieldEndOffset_(lengthFieldOffset + lengthFieldLength),
      lengthAdjustment_(lengthAdjustment),
      initialBytesToStrip_(initialBytesToStrip),
      minField_(1),
      maxField_(0),
      fieldToFrameLength_(static_cast<std::uint64_t>(lengthAdjustment) + lengthFieldEndOffset_),
      bigEndian_(byteOrder == ByteOrder::big),
      fourByteBigEndian_(bigEndian_ && lengthFieldLength == 4),
      failFast_(failFast) {
  if (maxFrameLength == 0)
    throw IllegalArgumentError(fmt::format("maxFrameLength: {} (expected: > 0)", maxFrameLength));
  if (lengthFieldLength != 1 && lengthFieldLength != 2 && lengthFieldLength != 3 &&
      lengthFieldLength != 4 && lengthFieldLength != 8) {
    throw IllegalArgumentError(
        fmt::format("lengthFieldLength: {} (expected: 1, 2, 3, 4, or 8)", lengthFieldLength));
  }
  if (lengthFieldLength > maxFrameLength ||
      lengthFieldOffset > maxFrameLength - lengthFieldLength) {
    throw IllegalArgumentError(fmt::format(
        "lengthFieldOffset: {} (expected: <= maxFrameLength - lengthFieldLength = {} - {})",
        lengthFieldOffset, maxFrameLength, lengthFieldLength));
  }

  // The fast range: fields f in [0, INT64_MAX] with
  //   lengthFieldEndOffset <= f + lengthAdjustment + lengthFieldEndOffset <= maxFrameLength,
  // that is -lengthAdjustment <= f <= maxFrameLength - lengthFieldEndOffset - lengthAdjustment.
  const std::uint64_t room = maxFrameLength - lengthFieldEndOffset_;  // >= 0 by the checks above
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  bool empty = false;
  if (lengthAdjustment >= 0) {
    const auto adj = static_cast<std::uint64_t>(lengthAdjustment);
    if (adj > room) {
      empty = true;
    } else {
      hi = room - adj;
    }
  } else {
    // |lengthAdjustment|, INT64_MIN included.
    const std::uint64_t neg = static_cast<std::uint64_t>(-(lengthAdjustment + 1)) + 1;
    lo = neg;
    hi = room > kInt64Max - std::min(neg, kInt64Max) ? kInt64Max : room + neg;
  }
  if (hi > kInt64Max) hi = kInt64Max;
  if (!empty && lo <= hi) {
    minField_ = lo;
    maxField_ = hi;
  }
}

LengthFieldBasedFrameDecoder::LengthFieldBasedFrameDecoder(std::size_t maxFrameLength,
                                                           std::size_t lengthFieldOffset,
                                                           std::size_t lengthFieldLength,
                                                           std::int64_t lengthAdjustment,
                                                           std::size_t initialBytesToStrip)
    : LengthFieldBasedFrameDecoder(ByteOrder::big, maxFrameLength, lengthFieldOffset,
                                   lengthFieldLength, lengthAdjustment, initialBytesToStrip) {}

LengthFieldBasedFrameDecoder::FieldCheck LengthFieldBasedFrameDecoder::checkField(
    std::uint64_t field) const noexcept {
  if (field > kInt64Max) return {FieldCheck::kNegative, 0};
  std::int64_t frameLength = 0;
  // field >= 0 and lengthFieldEndOffset >= 0, so each addition can only overflow upwards and the
  // two steps overflow exactly when the mathematical sum does.
  if (__builtin_add_overflow(static_cast<std::int64_t>(field), lengthAdjustment_, &frameLength) ||
      __builtin_add_overflow(frameLength, static_cast<std::int64_t>(lengthFieldEndOffset_),
                             &frameLength)) {
    return {FieldCheck::kOverflow, 0};
  }
  if (frameLength < static_cast<std::int64_t>(lengthFieldEndOffset_)) {
    return {FieldCheck::kTooShort,
            frameLength < 0 ? CodecError::kNone : static_cast<std::uint64_t>(frameLength)};
  }
  if (static_cast<std::uint64_t>(frameLength) > maxFrameLength_)
    return {FieldCheck::kTooLong, static_cast<std::uint64_t>(frameLength)};
  return {FieldCheck::kOk, static_cast<std::uint64_t>(frameLength)};
}

void LengthFieldBasedFrameDecoder::failOnBadField(std::uint64_t offset, std::uint64_t field,
                                                  const FieldCheck& check) const {
  switch (check.kind) {
    case FieldCheck::kNegative:
      throw CorruptedFrameError(
          fmt::format("CorruptedFrameError: negative pre-adjustment length field {} at stream "
                      "offset {}",
                      static_cast<std::int64_t>(field), offset),
          offset, field, kInt64Max);
    case FieldCheck::kOverflow: {
      // The largest field for which field + lengthAdjustment + lengthFieldEndOffset fits.
      std::int64_t addend = 0;
      std::uint64_t limit = 0;
      if (!__builtin_add_overflow(lengthAdjustment_,
                                  static_cast<std::int64_t>(lengthFieldEndOffset_), &addend) &&
          addend >= 0) {
        limit = kInt64Max - static_cast<std::uint64_t>(addend);
      }
      throw CorruptedFrameError(
          fmt::format("CorruptedFrameError: length field {} + lengthAdjustment {} + "
                      "lengthFieldEndOffset {} overflows a 64-bit frame length at stream offset {}",
                      field, lengthAdjustment_, lengthFieldEndOffset_, offset),
          offset, field, limit);
    }
    default: {
      // kTooShort (kOk and kTooLong never come here). The signed value is recomputed for the
      // message: it may be negative.
      const std::int64_t frameLength = static_cast<std::int64_t>(field) + lengthAdjustment_ +
                                       static_cast<std::int64_t>(lengthFieldEndOffset_);
      throw CorruptedFrameError(
          fmt::format("CorruptedFrameError: adjusted frame length {} is less than "
                      "lengthFieldEndOffset {} at stream offset {}",
                      frameLength, lengthFieldEndOffset_, offset),
          offset, check.frameLength, lengthFieldEndOffset_);
    }
  }
}

void LengthFieldBasedFrameDecoder::failTooLong(std::uint64_t offset,
                                               std::uint64_t frameLength) const {
  throw TooLongFrameError(fmt::format("TooLongFrameError: frame length {} exceeds maxFrameLength "
                                      "{} at stream offset {}",
                                      frameLength, maxFrameLength_, offset),
                          offset, frameLength, maxFrameLength_);
}

void LengthFieldBasedFrameDecoder::failOnFrameLengthLessThanInitialBytesToStrip(
    std::uint64_t offset, std::size_t frameLength) const {
  throw CorruptedFrameError(fmt::format("CorruptedFrameError: initialBytesToStrip {} exceeds "
                                        "frame length {} at stream offset {}",
                                        initialBytesToStrip_, frameLength, offset),
                            offset, initialBytesToStrip_, frameLength);
}

}  // namespace netbuf
