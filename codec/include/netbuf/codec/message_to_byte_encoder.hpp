#pragma once
// MessageToByteEncoder<Derived, In> (Netty's class of that name): the base of encoders that write
// one typed message into one buffer.
//
// Derived provides `void encode(const In&, ByteBuf& out)` and may provide
// `std::size_t sizeHint(const In&)` (default 256). write(msg, out) takes one buffer of that
// capacity from the encoder's allocator, lets encode() write straight into it (writeUtf8,
// writeInt...; it grows if the hint was short) and appends it to out when it holds bytes.
// EncoderHandler (encoder_handler.hpp) forwards the buffers to a pipeline.
//
// Errors: an encoder throws EncoderError for a message it cannot encode. The buffer allocated for
// that message is released (RAII); buffers appended to out for earlier messages stay.

#include <cstddef>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <utility>
#include <vector>

namespace netbuf {

template <class Derived, class In>
class MessageToByteEncoder {
 public:
  using InputType = In;
  using OutputType = AnyByteBuf;
  using Output = std::vector<AnyByteBuf>;
  static constexpr std::size_t kDefaultSizeHint = 256;

  explicit MessageToByteEncoder(ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : alloc_(&alloc) {}

  void write(const In& msg, Output& out) {
    ByteBuf buf = encodeToBuffer(msg);
    if (buf.isReadable()) out.emplace_back(std::in_place_type<ByteBuf>, std::move(buf));
  }
  /// Encodes msg into a new buffer and returns it (possibly empty).
  /// (Named apart from Derived::encode, which it calls, so the two never hide each other.)
  ByteBuf encodeToBuffer(const In& msg) {
    Derived& d = static_cast<Derived&>(*this);
    std::size_t hint = kDefaultSizeHint;
    if constexpr (requires { d.sizeHint(msg); }) hint = d.sizeHint(msg);
    ByteBuf buf = alloc_->buffer(hint);
    d.encode(msg, buf);
    return buf;
  }
  ByteBufAllocator& alloc() const noexcept { return *alloc_; }

 protected:
  ~MessageToByteEncoder() = default;

 private:
  ByteBufAllocator* alloc_;
};

}  // namespace netbuf
