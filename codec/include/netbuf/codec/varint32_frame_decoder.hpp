#pragma once
// Varint32FrameDecoder: splits the stream into frames prefixed by their length as a protobuf
// base-128 varint (Netty 4.1's ProtobufVarint32FrameDecoder).
//
//   BEFORE DECODE (302 bytes)       AFTER DECODE (300 bytes)
//   +--------+---------------+      +---------------+
//   | Length | Protobuf Data |----->| Protobuf Data |
//   | 0xAC02 |  (300 bytes)  |      |  (300 bytes)  |
//   +--------+---------------+      +---------------+
//
// The varint holds 7 bits per byte, least significant group first; a byte with its high bit set
// is followed by another. Frames are the payloads WITHOUT the varint, as retained slices of the
// cumulation (zero copy); an empty payload (varint 0) gives an empty frame.
//
// Parameters:
//  - maxFrameLength (> 0, default 64 MiB): the longest payload accepted (the varint not counted).
//
// Errors (offset = stream offset of the varint's first byte), after which decoding resumes right
// after the bytes skipped:
//  - a varint longer than 5 bytes (the 5th byte has the continuation bit): the 5 bytes are skipped,
//    CorruptedFrameError (value and limit kNone);
//  - a length >= 2^31 (negative as int32): the varint is skipped, CorruptedFrameError (value = the
//    length, limit = INT32_MAX);
//  - a length > maxFrameLength: the varint and the payload are skipped as they stream in (never
//    buffered), TooLongFrameError at once (value = the payload length, limit = maxFrameLength).
// An incomplete varint or payload waits for more input. Memory is bounded by maxFrameLength + 5
// plus one read.
//
// Deliberate differences from Netty:
//  - maxFrameLength does not exist in Netty (any length up to 2^31 - 1 is buffered); it is added so
//    that memory stays bounded, with a default large enough for ordinary protobuf messages.
//  - The 5th byte is decoded without truncation: Netty shifts it left by 28 in 32-bit arithmetic,
//    so its bits 4..6 fall off and e.g. 0x80 0x80 0x80 0x80 0x10 reads as 0; here any value above
//    INT32_MAX is a CorruptedFrameError.
//  - Malformed and negative varints are skipped (Netty's readerIndex is left after them too, but it
//    is not documented).

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <type_traits>
#include <vector>

namespace netbuf {

class Varint32FrameDecoder : public ByteToMessageDecoder<Varint32FrameDecoder, AnyByteBuf> {
 public:
  static constexpr std::size_t kDefaultMaxFrameLength = std::size_t{64} << 20;
  /// The longest varint: 5 bytes of 7 bits hold 32 bits.
  static constexpr std::size_t kMaxVarintBytes = 5;

  /// Throws IllegalArgumentError when maxFrameLength is 0.
  explicit Varint32FrameDecoder(std::size_t maxFrameLength = kDefaultMaxFrameLength,
                                Cumulator cumulator = Cumulator::Merge,
                                ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  std::size_t maxFrameLength() const noexcept { return maxFrameLength_; }
  /// True while a too-long frame is being skipped.
  bool isDiscarding() const noexcept { return bytesToDiscard_ != 0; }

  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    if (bytesToDiscard_ != 0) [[unlikely]] {
      discard(in);
      if (bytesToDiscard_ != 0) return;  // everything buffered was skipped
    }
    const std::size_t r = in.readerIndex();
    const std::size_t readable = in.writerIndex() - r;
    std::uint64_t length = 0;
    std::size_t n = 0;  // varint bytes; 0 while incomplete
    if constexpr (std::is_same_v<Buf, ByteBuf>) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(in.readPtr());
      if (readable != 0 && p[0] < 0x80) [[likely]] {
        length = p[0];
        n = 1;
      } else {
        n = parseVarint(readable, length, [p](std::size_t i) { return p[i]; });
      }
    } else {
      n = parseVarint(readable, length,
                      [&in, r](std::size_t i) { return in.getUnsignedByte(r + i); });
    }
    if (n == 0) return;                  // incomplete varint
    if (length > limit_) [[unlikely]] {  // too long, negative or malformed
      if (n > kMaxVarintBytes) {
        in.skipBytes(kMaxVarintBytes);
        failMalformed(streamOffset(r));
      }
      if (length > kMaxLength) {
        in.skipBytes(n);
        failNegative(streamOffset(r), length);
      }
      tooLong(in, r, n, length);
    }
    if (readable - n < length) return;  // incomplete payload
    in.skipBytes(n);
    emitFrame(in, static_cast<std::size_t>(length), out);
  }

 private:
  static constexpr std::uint64_t kMaxLength = 0x7FFFFFFF;
  /// parseVarint's "length" for a varint longer than 5 bytes: above every limit.
  static constexpr std::uint64_t kMalformed = UINT64_MAX;

  /// Parses the varint at the front of the readable bytes, byteAt(i) giving byte i. Returns its
  /// size and sets length; returns 0 when it is incomplete; returns kMaxVarintBytes + 1 and sets
  /// length = kMalformed when the 5th byte still has the continuation bit.
  template <class ByteAt>
  static std::size_t parseVarint(std::size_t readable, std::uint64_t& length, ByteAt&& byteAt) {
    std::uint64_t v = 0;
    const std::size_t limit = readable < kMaxVarintBytes ? readable : kMaxVarintBytes;
    for (std::size_t i = 0; i < limit; ++i) {
      const std::uint8_t b = byteAt(i);
      v |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
      if (b < 0x80) {
        length = v;
        return i + 1;
      }
    }
    if (limit < kMaxVarintBytes) return 0;
    length = kMalformed;
    return kMaxVarintBytes + 1;
  }

  /// A too-long frame at r (varint of n bytes, payload of length bytes): skips the varint and
  /// what is buffered of the payload, discards the rest as it arrives, and throws.
  template <class Buf>
  [[noreturn]] void tooLong(Buf& in, std::size_t r, std::size_t n, std::uint64_t length) {
    const std::uint64_t offset = streamOffset(r);
    const std::size_t available = in.readableBytes() - n;
    const std::size_t now = length < available ? static_cast<std::size_t>(length) : available;
    in.skipBytes(n + now);
    bytesToDiscard_ = length - now;
    failTooLong(offset, length);
  }

  template <class Buf>
  void discard(Buf& in) {
    const std::size_t readable = in.readableBytes();
    const std::size_t n =
        bytesToDiscard_ < readable ? static_cast<std::size_t>(bytesToDiscard_) : readable;
    in.skipBytes(n);
    bytesToDiscard_ -= n;
  }

  [[noreturn]] static void failMalformed(std::uint64_t offset);
  [[noreturn]] static void failNegative(std::uint64_t offset, std::uint64_t length);
  [[noreturn]] void failTooLong(std::uint64_t offset, std::uint64_t length) const;

  std::size_t maxFrameLength_;
  std::uint64_t limit_;  // min(maxFrameLength, INT32_MAX): one compare catches every bad length
  std::uint64_t bytesToDiscard_ = 0;  // payload bytes of a too-long frame still to skip
};

}  // namespace netbuf
