#pragma once
// Encoder bases: typed messages to buffers (Netty's MessageToByteEncoder and
// MessageToMessageEncoder).
//
// Both present one interface, `void write(In msg, std::vector<AnyByteBuf>& out)`, which appends
// the buffers to send, in order. EncoderHandler (codec_handler.hpp) forwards them to a pipeline.
//
//  - MessageToByteEncoder<Derived, In>: Derived provides `void encode(const In&, ByteBuf& out)` and
//    may provide `std::size_t sizeHint(const In&)` (default 256). write() takes one buffer of that
//    capacity from the encoder's allocator, lets encode() write straight into it (writeUtf8,
//    writeInt...; it grows if the hint was short) and appends it when it holds bytes.
//  - MessageToMessageEncoder<Derived, In>: Derived provides `void encode(In msg, Output& out)` and
//    appends any number of buffers itself, e.g. a header buffer followed by the payload moved
//    through untouched (no copy).
//
// Errors: an encoder throws EncoderError for a message it cannot encode. Buffers allocated for
// that message are released (RAII); buffers appended to out for earlier messages stay.

#include <cstddef>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
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
