#include <fmt/format.h>
#include <netbuf/codec/json_object_decoder.hpp>

namespace netbuf {

JsonObjectDecoder::JsonObjectDecoder(std::size_t maxObjectLength, bool streamArrayElements,
                                     std::size_t maxDepth, Cumulator cumulator,
                                     ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc),
      maxObjectLength_(maxObjectLength),
      maxDepth_(maxDepth),
      streamArrayElements_(streamArrayElements) {
  if (maxObjectLength == 0)
    throw IllegalArgumentError(fmt::format("maxObjectLength: {} (expected: > 0)", maxObjectLength));
  if (maxDepth == 0)
    throw IllegalArgumentError(fmt::format("maxDepth: {} (expected: > 0)", maxDepth));
}

void JsonObjectDecoder::throwJunk(std::uint64_t offset, std::uint8_t byte) const {
  throw CorruptedFrameError(
      fmt::format(
          "CorruptedFrameError: byte 0x{:02x} cannot start a JSON object or array (expected "
          "'{{', '[' or whitespace) at stream offset {}; skipped to the next '{{' or '['",
          byte, offset),
      offset, byte);
}

void JsonObjectDecoder::throwTooLong(std::uint64_t offset, bool element) const {
  throw TooLongFrameError(
      fmt::format(
          "TooLongFrameError: JSON {} length {} exceeds maxObjectLength {} at stream offset "
          "{}; the rest of it is discarded",
          element ? "array element" : "value", maxObjectLength_ + 1, maxObjectLength_, offset),
      offset, maxObjectLength_ + 1, maxObjectLength_);
}

void JsonObjectDecoder::throwTooDeep(std::uint64_t offset) const {
  throw CorruptedFrameError(
      fmt::format("CorruptedFrameError: JSON nesting depth {} exceeds maxDepth {} in the value at "
                  "stream offset {}; the rest of it is discarded",
                  maxDepth_ + 1, maxDepth_, offset),
      offset, maxDepth_ + 1, maxDepth_);
}

}  // namespace netbuf
