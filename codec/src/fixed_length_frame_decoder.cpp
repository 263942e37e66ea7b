#include <fmt/format.h>
#include <netbuf/codec/fixed_length_frame_decoder.hpp>

namespace netbuf {

FixedLengthFrameDecoder::FixedLengthFrameDecoder(std::size_t frameLength, Cumulator cumulator,
                                                 ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc), frameLength_(frameLength) {
  if (frameLength == 0)
    throw IllegalArgumentError(fmt::format("frameLength: {} (expected: > 0)", frameLength));
}

}  // namespace netbuf
