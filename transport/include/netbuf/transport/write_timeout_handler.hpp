#pragma once
// WriteTimeoutHandler: Netty 4.1's handler of the same name on netbuf's pipeline. A write that has
// not completed (its bytes handed to the socket, or failed) within the timeout counts as timed
// out: its WriteListener (if it has one) gets ChannelErrc::writeTimeout, a WriteTimeoutError goes
// through exceptionCaught (towards the tail), and the channel is closed (ctx.close()). The error
// and the close happen once per handler; every write that times out gets its own writeTimeout.
//
//     pipeline.addLast("writeTimeout", std::make_unique<WriteTimeoutHandler>(30s));
//
// Put it near the head (before the encoders, towards the socket) so that the writes it watches are
// the channel's. Every write that passes it is timed, with or without a listener (Netty unvoids a
// void promise to do the same). A timeout of zero (or less) disables the handler: writes pass with
// their own listener, untimed. As in Netty, positive timeouts under 1 ms are raised to 1 ms.
//
// Observing completion: a write's completion is only visible through its WriteListener, which
// belongs to the caller and is optional. So the handler passes its own listener object (a node)
// down the pipeline with each write, and the node forwards the completion to the caller's listener
// (at most once). The constraint is that no node may be called after it is freed, and the channel
// may complete or fail a write long after the handler is gone (removed from the pipeline while
// writes are outstanding; a socket channel fails its queued writes when it closes). So nodes do
// not belong to the handler: they live in a pool that belongs to the CHANNEL (a channel attribute,
// shared by the channel's WriteTimeoutHandlers), and the pool is destroyed with the channel, after
// its pipeline and its write queue. Only the channel and the handlers of its pipeline ever hold a
// node, so none can be called after the pool is gone. A handler that is removed (or destroyed)
// detaches its outstanding nodes: they stop being timed and go on forwarding their completions.
//
// Cost per timed write: no allocation on the common path. The node comes from the pool's free list
// (a new node is allocated only when more writes are outstanding at once than ever before on that
// channel; nodes are freed with the channel, about 64 bytes each), plus one executor().now() read,
// a few pointer writes to link it into the handler's list of outstanding writes (in deadline order:
// the timeout is fixed, so writes expire in the order they were made), one extra virtual call when
// the write completes, and no timer per write: one timer per handler, armed for the oldest
// outstanding write's deadline. When it fires it times out what is due and re-arms for the next
// deadline. It is not cancelled when the last outstanding write completes (that would cost a
// schedule per write on a request/response channel); it then fires once, finds nothing and stops,
// so a busy channel schedules one timer per timeout period, not one per write.
//
// Differences from Netty:
//   - Netty leaves the timed-out write's promise to the close (it then fails with
//     ClosedChannelException); here its listener gets ChannelErrc::writeTimeout at the timeout,
//     before the WriteTimeoutError is fired, and the later failure from the close is swallowed by
//     the node. So a caller always learns that its write timed out, and hears once.
//   - One timer for all outstanding writes instead of one scheduled task per write (see above):
//     each write still times out exactly at its own deadline (by the executor's clock).
//
// Errors: WriteTimeoutError (a netbuf::Error) names the timeout: "write timed out: not written
// within 30 s". writeTimedOut() may be overridden (Netty's hook) to react differently.
//
// Timers run on the channel's executor (EmbeddedChannel's virtual clock drives them in tests). The
// timer's code runs inside a ChannelPipeline::EventScope, so listeners and exception handlers it
// calls may remove this handler (or close the channel) safely.
//
// Messages: any type passes through untouched, both ways.
//
// Threading: like every handler, on the channel's thread only (the pool is used on that thread
// only, and destroyed wherever the channel is). One pipeline per handler.

#include <chrono>
#include <cstddef>
#include <memory>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/transport/channel_executor.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/message.hpp>

namespace netbuf {

/// A write did not complete within a WriteTimeoutHandler's timeout (Netty's WriteTimeoutException).
class WriteTimeoutError : public Error {
 public:
  using Error::Error;
};

namespace detail {
struct WriteTimeoutNode;
struct WriteTimeoutPool;
}  // namespace detail

class WriteTimeoutHandler : public ChannelHandler {
 public:
  /// timeout <= 0 disables the handler; positive timeouts under 1 ms become 1 ms.
  explicit WriteTimeoutHandler(std::chrono::nanoseconds timeout);
  /// Cancels the timer and detaches the outstanding writes (they complete untimed).
  ~WriteTimeoutHandler() override;
  WriteTimeoutHandler(const WriteTimeoutHandler&) = delete;
  WriteTimeoutHandler& operator=(const WriteTimeoutHandler&) = delete;

  /// The effective timeout (zero: disabled).
  std::chrono::nanoseconds timeout() const noexcept { return timeout_; }
  /// Timed writes not yet completed (nor timed out). Loop thread.
  std::size_t outstandingWrites() const noexcept { return outstanding_; }

  void handlerAdded(ChannelHandlerContext& ctx) override;
  void handlerRemoved(ChannelHandlerContext& ctx) override;
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override;
  /// An observer: every message passes on untouched in both directions.
  MessageTypes inboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

 protected:
  /// Called once per timer run in which writes timed out (after their listeners heard). Default:
  /// the first time only, fires a WriteTimeoutError through ctx.fireExceptionCaught(), then
  /// ctx.close(). It runs inside an EventScope: ctx and this handler stay valid until it returns,
  /// even if a handler removes this one meanwhile.
  virtual void writeTimedOut(ChannelHandlerContext& ctx);

 private:
  friend struct detail::WriteTimeoutNode;
  using Clock = std::chrono::steady_clock;

  /// Unlinks a node from the outstanding list (it completed, or timed out).
  void unlink(detail::WriteTimeoutNode* node) noexcept;
  /// Cancels the timer and detaches every outstanding node.
  void stop() noexcept;
  void arm(std::chrono::nanoseconds delay);
  /// The timer: times out what is due, then re-arms for the next deadline.
  void onTimer();

  const std::chrono::nanoseconds timeout_;
  ChannelHandlerContext* ctx_ = nullptr;  // while in a pipeline
  std::shared_ptr<detail::WriteTimeoutPool> pool_;
  detail::WriteTimeoutNode* head_ = nullptr;  // outstanding writes, oldest (first due) first
  detail::WriteTimeoutNode* tail_ = nullptr;
  std::size_t outstanding_ = 0;
  ScheduledTask timer_;
  bool timerArmed_ = false;
  bool closed_ = false;
};

}  // namespace netbuf
