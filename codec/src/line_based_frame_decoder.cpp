#include <fmt/format.h>
#include <netbuf/codec/line_based_frame_decoder.hpp>

namespace netbuf {

LineBasedFrameDecoder::LineBasedFrameDecoder(std::size_t maxLength, bool stripDelimiter,
                                             bool failFast, Cumulator cumulator,
                                             ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc),
      maxLength_(maxLength),
      stripDelimiter_(stripDelimiter),
      failFast_(failFast) {
  if (maxLength == 0)
    throw IllegalArgumentError(fmt::format("maxLength: {} (expected: > 0)", maxLength));
}

void LineBasedFrameDecoder::failTooLong(std::uint64_t offset, std::uint64_t length,
                                        std::size_t maxLength, bool complete) {
  throw TooLongFrameError(
      fmt::format("TooLongFrameError: line length {}{} exceeds maxLength {} at stream offset {}",
                  complete ? "" : "at least ", length, maxLength, offset),
      offset, length, maxLength);
}

}  // namespace netbuf
