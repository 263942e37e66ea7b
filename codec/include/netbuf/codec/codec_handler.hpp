#pragma once
// Pipeline adapters for codecs, free of any transport.
//
// A codec (a ByteToMessageDecoder, MessageToMessageDecoder or encoder) knows nothing of channels.
// DecoderHandler and EncoderHandler turn one into a pipeline handler: they receive events with a
// handler context and forward what the codec produces to the next handler through that context.
// The context type is a template parameter, so any pipeline whose context offers these members can
// host them (the transport module's does; tests use a recording context):
//
//   inbound  (DecoderHandler):  ctx.fireChannelRead(Out&&), ctx.fireExceptionCaught(exception_ptr),
//                               ctx.fireChannelReadComplete(), ctx.fireChannelInactive()
//   outbound (EncoderHandler):  ctx.write(AnyByteBuf&&)
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

template <class Ctx>
concept OutboundContext = requires(Ctx& ctx, AnyByteBuf&& buf) {
  ctx.write(std::move(buf));
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
