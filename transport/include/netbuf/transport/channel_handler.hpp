#pragma once
// ChannelHandler: one stage of a channel pipeline (Netty's ChannelInboundHandler and
// ChannelOutboundHandler in one class, as ChannelDuplexHandler).
//
// Inbound events (channelActive, channelRead, channelReadComplete, channelInactive,
// exceptionCaught, userEventTriggered, channelWritabilityChanged) travel from the head of the
// pipeline (the socket) to its tail; outbound operations (write, flush, close) from the tail to
// the head. Every method's default passes the event on to the next handler, so a handler overrides
// only what it handles. All methods of one channel's handlers run on the channel's thread.
//
// Message types: a handler declares what it takes and produces (inboundIn/inboundOut for reads,
// outboundIn/outboundOut for writes); ChannelPipeline refuses to link handlers whose types do not
// match, naming both. An empty MessageTypes means "any"; MessageTypes::passThrough() says the
// handler does not act in that direction at all (it hands every message on untouched), so the
// check looks past it. InboundHandler<In, Out> and OutboundHandler<In, Out> below declare their
// direction from their template arguments and pass-through for the other.
//
// Exceptions: an exception thrown by an inbound method goes to the same handler's
// exceptionCaught(); one thrown by write() fails that write (its WriteListener gets
// ChannelErrc::writeFailed, or unsupportedMessageType for a MessageTypeError) and goes on to the
// channel's write-failure path (logged; the channel stays open) or, without a listener, goes to
// exceptionCaught(). A handler that has handed a write's listener on (ctx.write(msg, listener))
// must not throw afterwards: the listener would hear of that write twice. An exception reaching the
// tail is handled by the channel (logged and the channel closed, for a socket).

#include <cstddef>
#include <exception>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/transport/message.hpp>
#include <system_error>
#include <typeinfo>

namespace netbuf {

class ChannelHandlerContext;

/// Notified once when a write completes (ec empty) or fails (a ChannelErrc, or the socket's
/// error). Owned by the caller, who keeps it alive until notified: writes cost no allocation for
/// their completion. Notified on the channel's loop thread, possibly before the flush() that sent
/// the bytes returns; only a write the loop never ran (its group shut down first, or was destroyed
/// with the channel still open) is failed elsewhere: on the thread that offered it, or that
/// destroyed the loop's queue or the channel.
class WriteListener {
 public:
  virtual ~WriteListener() = default;
  virtual void operationComplete(std::error_code ec) noexcept = 0;
};

/// A set of message types (empty: any type).
struct MessageTypes {
  const std::type_info* const* types = nullptr;
  std::size_t count = 0;
  /// The handler passes every message of this direction on untouched (see passThrough()).
  bool transparent = false;

  /// Declared by a handler that does not act in a direction (an encoder, inbound; a decoder,
  /// outbound; an observer such as LoggingHandler, both): the type check skips it.
  static constexpr MessageTypes passThrough() noexcept { return {nullptr, 0, true}; }
  bool isPassThrough() const noexcept { return transparent; }
  /// Any message (declared as nothing, or pass-through).
  bool any() const noexcept { return count == 0; }
  bool contains(const std::type_info& t) const noexcept {
    for (std::size_t i = 0; i < count; ++i) {
      if (*types[i] == t) return true;
    }
    return false;
  }
};

namespace detail {
template <class... T>
inline constexpr const std::type_info* kTypeList[] = {&typeid(T)...};
}  // namespace detail

/// The MessageTypes of T...: typesOf<ByteBuf, AnyByteBuf>().
template <class... T>
constexpr MessageTypes typesOf() noexcept {
  return MessageTypes{detail::kTypeList<T...>, sizeof...(T)};
}
/// Every buffer type: what a byte-stream decoder accepts.
constexpr MessageTypes kByteMessages = typesOf<ByteBuf, CompositeByteBuf, AnyByteBuf>();

class ChannelHandler {
 public:
  virtual ~ChannelHandler() = default;

  /// The handler joined / left a pipeline (ctx is its context there).
  virtual void handlerAdded(ChannelHandlerContext& ctx);
  virtual void handlerRemoved(ChannelHandlerContext& ctx);

  // ---- inbound (head to tail); the defaults forward
  virtual void channelActive(ChannelHandlerContext& ctx);
  virtual void channelInactive(ChannelHandlerContext& ctx);
  virtual void channelRead(ChannelHandlerContext& ctx, Message msg);
  virtual void channelReadComplete(ChannelHandlerContext& ctx);
  virtual void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error);
  virtual void userEventTriggered(ChannelHandlerContext& ctx, Message event);
  virtual void channelWritabilityChanged(ChannelHandlerContext& ctx);

  // ---- outbound (tail to head); the defaults forward
  virtual void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener);
  virtual void flush(ChannelHandlerContext& ctx);
  virtual void close(ChannelHandlerContext& ctx);

  // ---- declared message types (for the pipeline's link check)
  virtual MessageTypes inboundIn() const noexcept { return {}; }
  virtual MessageTypes inboundOut() const noexcept { return {}; }
  virtual MessageTypes outboundIn() const noexcept { return {}; }
  virtual MessageTypes outboundOut() const noexcept { return {}; }
};

/// A handler for inbound messages of type In, producing Out (Netty's SimpleChannelInboundHandler).
/// messageReceived() gets each In; messages of other types pass through untouched.
template <class In, class Out = In>
class InboundHandler : public ChannelHandler {
 public:
  virtual void messageReceived(ChannelHandlerContext& ctx, In msg) = 0;

  void channelRead(ChannelHandlerContext& ctx, Message msg) final;
  MessageTypes inboundIn() const noexcept override { return typesOf<In>(); }
  MessageTypes inboundOut() const noexcept override { return typesOf<Out>(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }
};

/// A handler for outbound messages of type In, producing Out. writeMessage() gets each In;
/// messages of other types pass through untouched.
template <class In, class Out = In>
class OutboundHandler : public ChannelHandler {
 public:
  virtual void writeMessage(ChannelHandlerContext& ctx, In msg, WriteListener* listener) = 0;

  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) final;
  MessageTypes inboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return typesOf<In>(); }
  MessageTypes outboundOut() const noexcept override { return typesOf<Out>(); }
};

}  // namespace netbuf

// The context completes the handler templates above (InboundHandler::channelRead...).
#include <netbuf/transport/channel_handler_context.hpp>
