#pragma once
// EncoderHandler<Codec>: an encoder as an outbound pipeline handler, free of any transport.
//
// A codec (a ByteToMessageDecoder, MessageToMessageDecoder or encoder) knows nothing of channels.
// The handler receives events with a handler context and forwards what the codec produces to the
// next handler through that context. The context type is a template parameter, so any pipeline
// whose context offers the members below can host it (the transport module's does; tests use a
// recording context):
//
//   ctx.write(AnyByteBuf&&)
//
// The buffers an encoder produces for one message are written in order; the output vector is
// reused across writes.

#include <netbuf/buffer/any_byte_buf.hpp>
#include <utility>
#include <vector>

namespace netbuf {

template <class Ctx>
concept OutboundContext = requires(Ctx& ctx, AnyByteBuf&& buf) {
  ctx.write(std::move(buf));
};

template <class Codec>
class EncoderHandler {
 public:
  using InputType = typename Codec::InputType;

  template <class... Args>
  explicit EncoderHandler(Args&&... args) : codec_(std::forward<Args>(args)...) {}

  Codec& codec() noexcept { return codec_; }
  const Codec& codec() const noexcept { return codec_; }

  /// Encodes msg and writes the resulting buffers, in order. An EncoderError propagates to the
  /// caller (the pipeline fails the write); nothing of that message is written.
  template <class Ctx, class In>
  requires OutboundContext<Ctx>
  void write(Ctx& ctx, In&& msg) {
    struct Clear {
      std::vector<AnyByteBuf>& v;
      ~Clear() { v.clear(); }
    } clear{out_};
    codec_.write(std::forward<In>(msg), out_);
    for (auto& b : out_) ctx.write(std::move(b));
  }

 private:
  Codec codec_;
  std::vector<AnyByteBuf> out_;
};

}  // namespace netbuf
