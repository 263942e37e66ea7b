#pragma once
// The codec module's decoders and encoders as pipeline handlers.
//
//     pipeline.addLast("frames",
//     std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(1024));
//     pipeline.addLast("text", std::make_unique<DecoderChannelHandler<StringDecoder>>());
//     pipeline.addLast("out", std::make_unique<EncoderChannelHandler<StringEncoder>>());
//
// Bytes are bytes: a codec whose input is a buffer type takes every buffer type. A byte-stream
// decoder (ByteToMessageDecoder) and a codec whose InputType is AnyByteBuf (StringDecoder,
// LengthFieldPrepender, ...) take ByteBuf, CompositeByteBuf and AnyByteBuf alike (wrapped into an
// AnyByteBuf, no copy); a codec whose InputType is ByteBuf takes the three too (a composite is made
// contiguous, the one copy). So a plain ByteBuf written by a handler is framed by a prepender like
// any other buffer, never passed by unframed. Other messages pass through untouched.
//
// DecoderChannelHandler<Codec> wraps codec/decoder_handler.hpp's DecoderHandler. Its declared types
// (for the pipeline's link check) are those inputs and the codec's OutputType inbound, and
// pass-through outbound. Decoding errors are fired as exceptionCaught between the messages decoded
// before and after them; at channelInactive the decoder's last messages (decodeLast) are fired
// before the inactive event.
//
// EncoderChannelHandler<Codec> encodes each outbound input message and writes the resulting
// buffers in order; the write's listener is attached to the last buffer (an encoder that produces
// nothing completes it at once). Declared: its inputs outbound, pass-through inbound.

#include <exception>
#include <netbuf/codec/decoder_handler.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace netbuf {

namespace detail {

/// Whether a codec input of type In takes every buffer type (see the header comment).
template <class In>
inline constexpr bool kTakesAnyBuffer =
    std::is_same_v<In, AnyByteBuf> || std::is_same_v<In, ByteBuf>;

/// msg as an In, if it is one or (for buffer inputs) any buffer type; an empty optional otherwise
/// (msg untouched).
template <class In>
std::optional<In> takeInput(Message& msg) {
  if constexpr (std::is_same_v<In, AnyByteBuf>) {
    if (msg.is<AnyByteBuf>()) return msg.take<AnyByteBuf>();
    if (msg.is<ByteBuf>()) return AnyByteBuf(msg.take<ByteBuf>());
    if (msg.is<CompositeByteBuf>()) return AnyByteBuf(msg.take<CompositeByteBuf>());
  } else if constexpr (std::is_same_v<In, ByteBuf>) {
    if (msg.is<ByteBuf>()) return msg.take<ByteBuf>();
    if (msg.is<AnyByteBuf>()) return toContiguous(msg.take<AnyByteBuf>());
    if (msg.is<CompositeByteBuf>()) return toContiguous(AnyByteBuf(msg.take<CompositeByteBuf>()));
  } else {
    if (msg.is<In>()) return msg.take<In>();
  }
  return std::nullopt;
}

template <class In>
constexpr MessageTypes inputTypes() noexcept {
  if constexpr (kTakesAnyBuffer<In>) {
    return kByteMessages;
  } else {
    return typesOf<In>();
  }
}

}  // namespace detail

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
      if (auto in = detail::takeInput<InputType>(msg))
        return handler_.channelRead(ctx, *std::move(in));
    }
    ctx.fireChannelRead(std::move(msg));
  }
  void channelReadComplete(ChannelHandlerContext& ctx) override {
    handler_.channelReadComplete(ctx);
  }
  void channelInactive(ChannelHandlerContext& ctx) override { handler_.channelInactive(ctx); }

  MessageTypes inboundIn() const noexcept override { return detail::inputTypes<InputType>(); }
  MessageTypes inboundOut() const noexcept override { return typesOf<OutputType>(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

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
    std::optional<InputType> in = detail::takeInput<InputType>(msg);
    if (!in) return ctx.write(std::move(msg), listener);
    struct Clear {
      std::vector<AnyByteBuf>& v;
      ~Clear() { v.clear(); }
    } clear{out_};
    codec_.write(*std::move(in), out_);  // an EncoderError fails this write
    if (out_.empty()) {
      if (listener != nullptr) listener->operationComplete({});
      return;
    }
    for (std::size_t i = 0; i < out_.size(); ++i)
      ctx.write(std::move(out_[i]), i + 1 == out_.size() ? listener : nullptr);
  }

  MessageTypes inboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return detail::inputTypes<InputType>(); }
  MessageTypes outboundOut() const noexcept override { return typesOf<AnyByteBuf>(); }

 private:
  Codec codec_;
  std::vector<AnyByteBuf> out_;
};

}  // namespace netbuf
