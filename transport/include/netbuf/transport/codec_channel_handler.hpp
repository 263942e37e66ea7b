#pragma once
// The codec module's decoders and encoders as pipeline handlers.
//
//     pipeline.addLast("frames",
//     std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(1024));
//     pipeline.addLast("text", std::make_unique<DecoderChannelHandler<StringDecoder>>());
//     pipeline.addLast("out", std::make_unique<EncoderChannelHandler<StringEncoder>>());
//
// DecoderChannelHandler<Codec> wraps codec/codec_handler.hpp's DecoderHandler: a byte-stream
// decoder (ByteToMessageDecoder) takes any buffer type (ByteBuf, CompositeByteBuf, AnyByteBuf), a
// message decoder exactly its InputType; other messages pass through untouched. Its declared types
// (for the pipeline's link check) are those inputs and the codec's OutputType. Decoding errors are
// fired as exceptionCaught between the messages decoded before and after them; at channelInactive
// the decoder's last messages (decodeLast) are fired before the inactive event.
//
// EncoderChannelHandler<Codec> encodes each outbound InputType message and writes the resulting
// buffers in order; the write's listener is attached to the last buffer (an encoder that produces
// nothing completes it at once). Other messages pass through.

#include <exception>
#include <netbuf/codec/codec_handler.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <type_traits>
#include <utility>
#include <vector>

namespace netbuf {

template <class Codec>
class DecoderChannelHandler : public ChannelHandler {
 public:
  using InputType = typename Codec::InputType;
  using OutputType = typename Codec::OutputType;
  /// Byte-stream decoders take every buffer type.
  static constexpr bool kTakesBytes = std::is_same_v<InputType, ByteBuf>;

  template <class... Args>
  explicit DecoderChannelHandler(Args&&... args) : handler_(std::forward<Args>(args)...) {}

  Codec& codec() noexcept { return handler_.codec(); }

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if constexpr (kTakesBytes) {
      if (msg.is<ByteBuf>()) return handler_.channelRead(ctx, msg.take<ByteBuf>());
      if (msg.is<AnyByteBuf>()) return handler_.channelRead(ctx, msg.take<AnyByteBuf>());
      if (msg.is<CompositeByteBuf>())
        return handler_.channelRead(ctx, msg.take<CompositeByteBuf>());
    } else {
      if (msg.is<InputType>()) return handler_.channelRead(ctx, msg.take<InputType>());
    }
    ctx.fireChannelRead(std::move(msg));
  }
  void channelReadComplete(ChannelHandlerContext& ctx) override {
    handler_.channelReadComplete(ctx);
  }
  void channelInactive(ChannelHandlerContext& ctx) override { handler_.channelInactive(ctx); }

  MessageTypes inboundIn() const noexcept override {
    if constexpr (kTakesBytes) {
      return kByteMessages;
    } else {
      return typesOf<InputType>();
    }
  }
  MessageTypes inboundOut() const noexcept override { return typesOf<OutputType>(); }

 private:
  DecoderHandler<Codec> handler_;
};

template <class Codec>
class EncoderChannelHandler : public ChannelHandler {
 public:
  using InputType = typename Codec::InputType;

  template <class... Args>
  explicit EncoderChannelHandler(Args&&... args) : codec_(std::forward<Args>(args)...) {}

  Codec& codec() noexcept { return codec_; }

  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override {
    if (!msg.is<InputType>()) return ctx.write(std::move(msg), listener);
    struct Clear {
      std::vector<AnyByteBuf>& v;
      ~Clear() { v.clear(); }
    } clear{out_};
    codec_.write(msg.take<InputType>(), out_);  // an EncoderError fails this write
    if (out_.empty()) {
      if (listener != nullptr) listener->operationComplete({});
      return;
    }
    for (std::size_t i = 0; i < out_.size(); ++i)
      ctx.write(std::move(out_[i]), i + 1 == out_.size() ? listener : nullptr);
  }

  MessageTypes outboundIn() const noexcept override { return typesOf<InputType>(); }
  MessageTypes outboundOut() const noexcept override { return typesOf<AnyByteBuf>(); }

 private:
  Codec codec_;
  std::vector<AnyByteBuf> out_;
};

}  // namespace netbuf
