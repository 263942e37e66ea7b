#pragma once
// ChannelHandlerContext: a handler's place in a pipeline (Netty's class of the same name). A
// handler passes events on through its context: ctx.fireChannelRead(msg) hands msg to the next
// handler towards the tail, ctx.write(msg) to the next handler towards the head.
//
// Lifetime: a context lives as long as its handler is in the pipeline, and a little longer when
// the handler is removed while an event is passing through it: the removed context keeps its links
// so the event in flight can still move on, and is destroyed once the pipeline is idle.
//
// Threading: contexts belong to the channel's loop thread. The outbound operations (write, flush,
// writeAndFlush, close) may also be called from another thread, as Channel's may: they are handed
// to the loop and run there from this context, in the caller's order; if the handler was removed
// in the meantime, a write fails its listener with ChannelErrc::handlerRemoved and a flush or a
// close is done from the pipeline's tail instead. Another thread may use a context only while its
// handler is in the pipeline (a removed context is destroyed once the loop is idle); where
// handlers come and go, write through the Channel, which its shared_ptr keeps alive. Firing
// inbound events off the loop throws IllegalStateError.

#include <cstdint>
#include <exception>
#include <memory>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/message.hpp>
#include <string>
#include <utility>

namespace netbuf {

class Channel;
class ChannelPipeline;
namespace detail {
struct OutboundTask;
}  // namespace detail

class ChannelHandlerContext {
 public:
  ChannelHandlerContext(const ChannelHandlerContext&) = delete;
  ChannelHandlerContext& operator=(const ChannelHandlerContext&) = delete;

  const std::string& name() const noexcept { return name_; }
  ChannelHandler& handler() noexcept { return *handler_; }
  ChannelPipeline& pipeline() noexcept { return *pipeline_; }
  Channel& channel() noexcept;
  /// The channel's allocator (where encoders get their buffers).
  ByteBufAllocator& alloc() noexcept;
  /// True once the handler has been removed from the pipeline.
  bool isRemoved() const noexcept { return removed_; }

  // ---- inbound: to the next handler towards the tail
  void fireChannelActive();
  void fireChannelInactive();
  void fireChannelRead(Message msg);
  template <class T, std::enable_if_t<!std::is_same_v<std::decay_t<T>, Message>, int> = 0>
  void fireChannelRead(T&& msg) {
    fireChannelRead(Message(std::forward<T>(msg)));
  }
  void fireChannelReadComplete();
  void fireExceptionCaught(std::exception_ptr error);
  void fireUserEventTriggered(Message event);
  void fireChannelWritabilityChanged();

  // ---- outbound: to the next handler towards the head
  void write(Message msg, WriteListener* listener = nullptr);
  template <class T, std::enable_if_t<!std::is_same_v<std::decay_t<T>, Message>, int> = 0>
  void write(T&& msg, WriteListener* listener = nullptr) {
    write(Message(std::forward<T>(msg)), listener);
  }
  void flush();
  void writeAndFlush(Message msg, WriteListener* listener = nullptr);
  template <class T, std::enable_if_t<!std::is_same_v<std::decay_t<T>, Message>, int> = 0>
  void writeAndFlush(T&& msg, WriteListener* listener = nullptr) {
    writeAndFlush(Message(std::forward<T>(msg)), listener);
  }
  void close();

 private:
  friend class ChannelPipeline;

  friend struct detail::OutboundTask;

  ChannelHandlerContext(ChannelPipeline& pipeline, std::string name,
                        std::unique_ptr<ChannelHandler> handler, std::uint64_t id)
      : pipeline_(&pipeline), name_(std::move(name)), handler_(std::move(handler)), id_(id) {}

  /// True on the channel's loop thread; the inbound fire* methods throw IllegalStateError
  /// naming `what` elsewhere.
  bool inLoop() const noexcept;
  void checkInboundInLoop(const char* what) const;
  /// The off-loop path of the outbound operations (hands them to the loop).
  void submit(int kind, Message msg, WriteListener* listener);

  // Calls into this context's handler, catching what it throws (see channel_handler.hpp).
  void invokeChannelActive() noexcept;
  void invokeChannelInactive() noexcept;
  void invokeChannelRead(Message msg) noexcept;
  void invokeChannelReadComplete() noexcept;
  void invokeExceptionCaught(std::exception_ptr error) noexcept;
  void invokeUserEventTriggered(Message event) noexcept;
  void invokeChannelWritabilityChanged() noexcept;
  void invokeWrite(Message msg, WriteListener* listener) noexcept;
  void invokeFlush() noexcept;
  void invokeClose() noexcept;

  ChannelPipeline* pipeline_;
  std::string name_;
  std::unique_ptr<ChannelHandler> handler_;
  // Neighbours. Invariant while in the pipeline: prev_->next_ == this == next_->prev_. A removed
  // context keeps its last neighbours (so an event in flight through it can continue).
  ChannelHandlerContext* prev_ = nullptr;
  ChannelHandlerContext* next_ = nullptr;
  std::uint64_t id_;  // unique in the pipeline: tells a live context from a reused address
  bool removed_ = false;
};

// ---- InboundHandler / OutboundHandler members (need the complete context)

template <class In, class Out>
void InboundHandler<In, Out>::channelRead(ChannelHandlerContext& ctx, Message msg) {
  if (msg.is<In>()) {
    messageReceived(ctx, msg.take<In>());
  } else {
    ctx.fireChannelRead(std::move(msg));
  }
}

template <class In, class Out>
void OutboundHandler<In, Out>::write(ChannelHandlerContext& ctx, Message msg,
                                     WriteListener* listener) {
  if (msg.is<In>()) {
    writeMessage(ctx, msg.take<In>(), listener);
  } else {
    ctx.write(std::move(msg), listener);
  }
}

}  // namespace netbuf
