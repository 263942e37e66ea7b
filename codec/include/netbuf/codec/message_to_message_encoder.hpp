#pragma once
// MessageToMessageEncoder<Derived, In> (Netty's class of that name): the base of encoders that turn
// one typed message into any number of buffers.
//
// Derived provides `void encode(In msg, Output& out)` and appends the buffers to send, in order,
// itself: e.g. a header buffer followed by the payload moved through untouched (no copy). It
// presents the same interface as MessageToByteEncoder, `void write(In msg,
// std::vector<AnyByteBuf>& out)`, which EncoderHandler (encoder_handler.hpp) forwards to a
// pipeline.
//
// Errors: an encoder throws EncoderError for a message it cannot encode; buffers appended to out
// for earlier messages stay.

#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <utility>
#include <vector>

namespace netbuf {

template <class Derived, class In>
class MessageToMessageEncoder {
 public:
  using InputType = In;
  using OutputType = AnyByteBuf;
  using Output = std::vector<AnyByteBuf>;

  explicit MessageToMessageEncoder(ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : alloc_(&alloc) {}

  void write(In msg, Output& out) { static_cast<Derived&>(*this).encode(std::move(msg), out); }
  ByteBufAllocator& alloc() const noexcept { return *alloc_; }

 protected:
  ~MessageToMessageEncoder() = default;

 private:
  ByteBufAllocator* alloc_;
};

}  // namespace netbuf
