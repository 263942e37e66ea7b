#pragma once
// FixedLengthFrameDecoder: splits the stream into frames of exactly frameLength bytes (Netty's
// class of the same name).
//
//   +---+----+------+----+          +-----+-----+-----+
//   | A | BC | DEFG | HI |   ->     | ABC | DEF | GHI |     (frameLength 3)
//   +---+----+------+----+          +-----+-----+-----+
//
// Frames are retained slices of the cumulation (zero copy). Bytes left at end of stream (less than
// one frame) are dropped. Memory is bounded by frameLength plus one read.

#include <cstddef>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <vector>

namespace netbuf {

class FixedLengthFrameDecoder : public ByteToMessageDecoder<FixedLengthFrameDecoder, AnyByteBuf> {
 public:
  /// Throws IllegalArgumentError when frameLength is 0.
  explicit FixedLengthFrameDecoder(std::size_t frameLength, Cumulator cumulator = Cumulator::Merge,
                                   ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  std::size_t frameLength() const noexcept { return frameLength_; }

  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    if (in.readableBytes() >= frameLength_) emitFrame(in, frameLength_, out);
  }

 private:
  std::size_t frameLength_;
};

}  // namespace netbuf
