#include <fmt/format.h>
#include <netbuf/codec/varint32_frame_decoder.hpp>

namespace netbuf {

Varint32FrameDecoder::Varint32FrameDecoder(std::size_t maxFrameLength, Cumulator cumulator,
                                           ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc),
      maxFrameLength_(maxFrameLength),
      limit_(maxFrameLength < kMaxLength ? maxFrameLength : kMaxLength) {
  if (maxFrameLength == 0)
    throw IllegalArgumentError(fmt::format("maxFrameLength: {} (expected: > 0)", maxFrameLength));
}

void Varint32FrameDecoder::failMalformed(std::uint64_t offset) {
  throw CorruptedFrameError(
      fmt::format(
          "CorruptedFrameError: malformed varint32 (more than {} bytes) at stream offset {}",
          kMaxVarintBytes, offset),
      offset);
}

void Varint32FrameDecoder::failNegative(std::uint64_t offset, std::uint64_t length) {
  throw CorruptedFrameError(
      fmt::format("CorruptedFrameError: varint32 length {} exceeds INT32_MAX {} (negative as "
                  "int32) at stream offset {}",
                  length, kMaxLength, offset),
      offset, length, kMaxLength);
}

void Varint32FrameDecoder::failTooLong(std::uint64_t offset, std::uint64_t length) const {
  throw TooLongFrameError(fmt::format("TooLongFrameError: frame length {} exceeds maxFrameLength "
                                      "{} at stream offset {}",
                                      length, maxFrameLength_, offset),
                          offset, length, maxFrameLength_);
}

}  // namespace netbuf
