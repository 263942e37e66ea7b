#pragma once
// DecoderHandler<Codec>: a decoder as an inbound pipeline handler, free of any transport.
//
// A codec (a ByteToMessageDecoder, MessageToMessageDecoder or encoder) knows nothing of channels.
// The handler receives events with a handler context and forwards what the codec produces to the
// next handler through that context. The context type is a template parameter, so any pipeline
// whose context offers the members below can host it (the transport module's does; tests use a
// recording context):
//
//   ctx.fireChannelRead(Out&&), ctx.fireExceptionCaught(exception_ptr),
//   ctx.fireChannelReadComplete(), ctx.fireChannelInactive()
//
// Ordering: decoded messages are fired in stream order, and a decoding error is fired after the
// messages decoded before it and before those decoded after it. The output vector is reused
// across reads (no allocation per read once it has grown).

#include <exception>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <utility>
#include <vector>

namespace netbuf {

template <class Ctx, class Out>
concept InboundContext = requires(Ctx& ctx, Out&& msg, std::exception_ptr e) {
  ctx.fireChannelRead(std::move(msg));
  ctx.fireExceptionCaught(e);
  ctx.fireChannelReadComplete();
  ctx.fireChannelInactive();
};

template <class Codec>
class DecoderHandler {
 public:
  using InputType = typename Codec::InputType;
  using OutputType = typename Codec::OutputType;

  template <class... Args>
  explicit DecoderHandler(Args&&... args) : codec_(std::forward<Args>(args)...) {}

  Codec& codec() noexcept { return codec_; }
  const Codec& codec() const noexcept { return codec_; }

  template <class Ctx, class In>
  requires InboundContext<Ctx, OutputType>
  void channelRead(Ctx& ctx, In&& msg) {
    codec_.channelRead(std::forward<In>(msg), out_, [&](std::exception_ptr e) {
      flush(ctx);
      ctx.fireExceptionCaught(std::move(e));
    });
    flush(ctx);
  }

  template <class Ctx>
  requires InboundContext<Ctx, OutputType>
  void channelReadComplete(Ctx& ctx) {
    codec_.channelReadComplete();
    ctx.fireChannelReadComplete();
  }

  /// End of stream: the codec's last messages (decodeLast), then the inactive event.
  template <class Ctx>
  requires InboundContext<Ctx, OutputType>
  void channelInactive(Ctx& ctx) {
    codec_.channelInactive(out_, [&](std::exception_ptr e) {
      flush(ctx);
      ctx.fireExceptionCaught(std::move(e));
    });
    flush(ctx);
    ctx.fireChannelInactive();
  }

 private:
  template <class Ctx>
  void flush(Ctx& ctx) {
    // Index loop: a handler downstream may not touch out_, but it may throw; clear() in all cases.
    struct Clear {
      std::vector<OutputType>& v;
      ~Clear() { v.clear(); }
    } clear{out_};
    for (auto& m : out_) ctx.fireChannelRead(std::move(m));
  }

  Codec codec_;
  std::vector<OutputType> out_;
};

}  // namespace netbuf
