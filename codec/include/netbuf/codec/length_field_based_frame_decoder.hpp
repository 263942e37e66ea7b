#pragma once
// LengthFieldBasedFrameDecoder: splits the stream into frames whose length is given by a length
// field in each frame's header (Netty 4.1's class of the same name, same parameters, same
// decisions, same order of checks).
//
//   lengthFieldOffset = 1, lengthFieldLength = 2, lengthAdjustment = 1, initialBytesToStrip = 3
//
//   BEFORE DECODE (16 bytes)                          AFTER DECODE (13 bytes)
//   +------+--------+------+----------------+         +------+----------------+
//   | HDR1 | Length | HDR2 | Actual Content |  ---->  | HDR2 | Actual Content |
//   | 0xCA | 0x000C | 0xFE | "HELLO, WORLD" |         | 0xFE | "HELLO, WORLD" |
//   +------+--------+------+----------------+         +------+----------------+
//
// Parameters (all validated by the constructor, IllegalArgumentError otherwise):
//  - byteOrder: order of the length field's bytes (big-endian, network order, by default).
//  - maxFrameLength (> 0): the longest frame accepted, counted as the bytes from the frame's first
//    byte (readerIndex) to its end, header included and BEFORE initialBytesToStrip is applied.
//  - lengthFieldOffset (<= maxFrameLength - lengthFieldLength): where the length field starts.
//  - lengthFieldLength (1, 2, 3, 4 or 8): 1..4-byte fields are unsigned; an 8-byte field is a
//    signed 64-bit value (as Netty's getLong), so a negative one is a corrupted frame.
//  - lengthAdjustment: added to the field's value to get the number of bytes that follow the length
//    field (for example -lengthFieldEndOffset when the length counts the whole frame).
//  - initialBytesToStrip: bytes dropped from the front of each frame (the header, usually).
//  - failFast: when a too-long frame is detected, report it at once (true) or only after the whole
//    frame has been skipped (false).
//
// Decoding one frame (lengthFieldEndOffset = lengthFieldOffset + lengthFieldLength;
// frameLength = field + lengthAdjustment + lengthFieldEndOffset, computed with overflow checks):
//  - fewer than lengthFieldEndOffset bytes buffered: wait;
//  - negative field (8-byte), frameLength overflowing int64, or frameLength < lengthFieldEndOffset:
//    skip lengthFieldEndOffset bytes, CorruptedFrameError;
//  - frameLength > maxFrameLength: skip the frame as it streams in (what is buffered now, then the
//    rest as it arrives; never buffered, so a 4 GiB length prefix allocates nothing), and report a
//    TooLongFrameError (value = frameLength, limit = maxFrameLength) at once with failFast, or when
//    the last byte of the frame has been skipped without. A frame already fully buffered is
//    skipped and reported at once in both modes (as Netty);
//  - wait until the whole frame is readable (its length is remembered meanwhile);
//  - initialBytesToStrip > frameLength: skip the frame, CorruptedFrameError (value =
//    initialBytesToStrip, limit = frameLength);
//  - else skip initialBytesToStrip bytes and emit the next frameLength - initialBytesToStrip bytes.
// Every error's offset is the stream offset of the offending frame's first byte; decoding resumes
// right after the bytes skipped, so the good frames that follow a bad one are decoded.
// CorruptedFrameError fields:
//  - negative field: value = the field's 64 bits as unsigned (so -1 reads as kNone), limit =
//    INT64_MAX;
//  - overflow: value = the field, limit = the largest field value that does not overflow;
//  - frameLength < lengthFieldEndOffset: value = frameLength (kNone when negative), limit =
//    lengthFieldEndOffset.
//
// Deliberate differences from Netty:
//  - frameLength is computed with checked 64-bit arithmetic: Netty adds in unchecked long/int
//    arithmetic, so a huge 8-byte field plus an adjustment wraps around.
//  - maxFrameLength and the offsets are std::size_t, not int.
//  - When initialBytesToStrip > frameLength is found after waiting for the rest of a frame, the
//    whole frame is skipped (Netty skips its local frameLength, which is 0 on that path, and so
//    skips nothing).
//
// Frames are retained slices of the cumulation (zero copy). Memory is bounded by maxFrameLength
// plus one read. State (the remembered length, the discarding state) belongs to one stream: reuse
// after channelInactive()/takeCumulation() in the middle of a frame is not supported.

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_accessors.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <vector>

namespace netbuf {

class LengthFieldBasedFrameDecoder
    : public ByteToMessageDecoder<LengthFieldBasedFrameDecoder, AnyByteBuf> {
 public:
  /// Throws IllegalArgumentError when maxFrameLength is 0, lengthFieldLength is not 1, 2, 3, 4 or
  /// 8, or lengthFieldOffset > maxFrameLength - lengthFieldLength.
  LengthFieldBasedFrameDecoder(ByteOrder byteOrder, std::size_t maxFrameLength,
                               std::size_t lengthFieldOffset, std::size_t lengthFieldLength,
                               std::int64_t lengthAdjustment, std::size_t initialBytesToStrip,
                               bool failFast = true, Cumulator cumulator = Cumulator::Merge,
                               ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());
  /// Big-endian, failFast, Merge cumulator, default allocator.
  LengthFieldBasedFrameDecoder(std::size_t maxFrameLength, std::size_t lengthFieldOffset,
                               std::size_t lengthFieldLength, std::int64_t lengthAdjustment = 0,
                               std::size_t initialBytesToStrip = 0);

  ByteOrder byteOrder() const noexcept { return bigEndian_ ? ByteOrder::big : ByteOrder::little; }
  std::size_t maxFrameLength() const noexcept { return maxFrameLength_; }
  std::size_t lengthFieldOffset() const noexcept { return lengthFieldOffset_; }
  std::size_t lengthFieldLength() const noexcept { return lengthFieldLength_; }
  std::size_t lengthFieldEndOffset() const noexcept { return lengthFieldEndOffset_; }
  std::int64_t lengthAdjustment() const noexcept { return lengthAdjustment_; }
  std::size_t initialBytesToStrip() const noexcept { return initialBytesToStrip_; }
  bool isFailFast() const noexcept { return failFast_; }
  /// True while a too-long frame is being skipped.
  bool isDiscarding() const noexcept { return discarding_; }

  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    std::size_t frameLength = frameLength_;
    if (frameLength == kNoFrame) {
      if (discarding_) [[unlikely]] {
        discardTooLongFrame(in);  // throws when the frame ends and failFast is false
      }
      if (in.readableBytes() < lengthFieldEndOffset_) return;
      const std::uint64_t field =
          getUnadjustedFrameLength(in, in.readerIndex() + lengthFieldOffset_);
      if (field >= minField_ && field <= maxField_) [[likely]] {
        // In range, so the sum lies in [lengthFieldEndOffset, maxFrameLength]: the wrapping
        // unsigned addition gives the exact result.
        frameLength = static_cast<std::size_t>(field + fieldToFrameLength_);
      } else {
        frameLength = badField(in, field);  // throws, or enters discarding mode
        if (frameLength == kNoFrame) return;
      }
    }
    if (in.readableBytes() < frameLength) {
      frameLength_ = frameLength;  // remembered: the header is not parsed again
      return;
    }
    frameLength_ = kNoFrame;
    if (initialBytesToStrip_ > frameLength) [[unlikely]] {
      const std::uint64_t offset = streamOffset(in);
      in.skipBytes(frameLength);
      failOnFrameLengthLessThanInitialBytesToStrip(offset, frameLength);
    }
    in.advanceReaderUnchecked(initialBytesToStrip_);  // <= frameLength <= readable: checked
    emitFrame(in, frameLength - initialBytesToStrip_, out);
  }

 private:
  static constexpr std::size_t kNoFrame = static_cast<std::size_t>(-1);

  /// The raw field at index: 1..4 bytes unsigned, 8 bytes the signed value's bits.
  template <class Buf>
  std::uint64_t getUnadjustedFrameLength(const Buf& in, std::size_t index) const {
    // The common case first: a 4-byte network-order field, without the jump table.
    if (fourByteBigEndian_) [[likely]]
      return in.getUnsignedInt(index);
    if (bigEndian_) {
      switch (lengthFieldLength_) {
        case 1:
          return in.getUnsignedByte(index);
        case 2:
          return in.getUnsignedShort(index);
        case 3:
          return in.getUnsignedMedium(index);
        case 4:
          return in.getUnsignedInt(index);
        default:
          return in.getUnsignedLong(index);
      }
    }
    switch (lengthFieldLength_) {
      case 1:
        return in.getUnsignedByte(index);
      case 2:
        return in.getUnsignedShortLE(index);
      case 3:
        return in.getUnsignedMediumLE(index);
      case 4:
        return in.getUnsignedIntLE(index);
      default:
        return in.getUnsignedLongLE(index);
    }
  }

  /// The slow path for a field outside [minField_, maxField_]: throws CorruptedFrameError after
  /// skipping the header, or handles a too-long frame (returns kNoFrame, or throws).
  template <class Buf>
  std::size_t badField(Buf& in, std::uint64_t field) {
    const std::uint64_t offset = streamOffset(in);
    const FieldCheck check = checkField(field);
    if (check.kind == FieldCheck::kOk) return static_cast<std::size_t>(check.frameLength);
    if (check.kind != FieldCheck::kTooLong) {
      in.skipBytes(lengthFieldEndOffset_);
      failOnBadField(offset, field, check);
    }
    exceededFrameLength(in, check.frameLength, offset);
    return kNoFrame;
  }

  template <class Buf>
  void exceededFrameLength(Buf& in, std::uint64_t frameLength, std::uint64_t offset) {
    const std::size_t readable = in.readableBytes();
    if (frameLength <= readable) {
      in.skipBytes(static_cast<std::size_t>(frameLength));  // all buffered: skip it now
      failTooLong(offset, frameLength);
    }
    discarding_ = true;
    bytesToDiscard_ = frameLength - readable;
    tooLongFrameLength_ = frameLength;
    tooLongFrameOffset_ = offset;
    in.skipBytes(readable);
    if (failFast_) failTooLong(offset, frameLength);
  }

  template <class Buf>
  void discardTooLongFrame(Buf& in) {
    const std::size_t readable = in.readableBytes();
    const std::size_t n =
        bytesToDiscard_ < readable ? static_cast<std::size_t>(bytesToDiscard_) : readable;
    in.skipBytes(n);
    bytesToDiscard_ -= n;
    if (bytesToDiscard_ == 0) {
      discarding_ = false;
      if (!failFast_) failTooLong(tooLongFrameOffset_, tooLongFrameLength_);
    }
  }

  /// What is wrong with a field outside the fast range, and the frame length when it is defined.
  struct FieldCheck {
    enum Kind : std::uint8_t { kOk, kNegative, kOverflow, kTooShort, kTooLong } kind;
    std::uint64_t frameLength;  // kOk, kTooLong: the frame length; kTooShort: it, or kNone if < 0
  };
  FieldCheck checkField(std::uint64_t field) const noexcept;

  [[noreturn]] void failOnBadField(std::uint64_t offset, std::uint64_t field,
                                   const FieldCheck& check) const;
  [[noreturn]] void failTooLong(std::uint64_t offset, std::uint64_t frameLength) const;
  [[noreturn]] void failOnFrameLengthLessThanInitialBytesToStrip(std::uint64_t offset,
                                                                 std::size_t frameLength) const;

  // Configuration.
  std::size_t maxFrameLength_;
  std::size_t lengthFieldOffset_;
  std::size_t lengthFieldLength_;
  std::size_t lengthFieldEndOffset_;
  std::int64_t lengthAdjustment_;
  std::size_t initialBytesToStrip_;
  // The fields whose frame length is in [lengthFieldEndOffset, maxFrameLength] (an empty range,
  // min > max, when there are none): the one range check of the hot path.
  std::uint64_t minField_;
  std::uint64_t maxField_;
  std::uint64_t fieldToFrameLength_;  // lengthAdjustment + lengthFieldEndOffset, modulo 2^64
  bool bigEndian_;
  bool fourByteBigEndian_;  // lengthFieldLength 4 and big-endian: the hot path's one test
  bool failFast_;

  // Stream state.
  bool discarding_ = false;
  std::size_t frameLength_ = kNoFrame;  // the current frame's length while waiting for its bytes
  std::uint64_t bytesToDiscard_ = 0;
  std::uint64_t tooLongFrameLength_ = 0;
  std::uint64_t tooLongFrameOffset_ = 0;
};

}  // namespace netbuf
