#pragma once
// IdleStateHandler: Netty 4.1's handler of the same name, on netbuf's pipeline.
//
// IdleStateHandler watches a channel for idleness and tells the handlers after it (towards the
// tail) through a user event, Message(IdleStateEvent{state, first}):
//
//     reader idle: nothing was read for readerIdleTime     -> IdleStateEvent{ReaderIdle, first}
//     writer idle: nothing was written for writerIdleTime  -> IdleStateEvent{WriterIdle, first}
//     all idle:    neither for allIdleTime                 -> IdleStateEvent{AllIdle, first}
//
// A time of zero (or less) disables that check. `first` is true for the first event of a stretch
// of idleness and false for the repeats (one per idle time while the stretch lasts); a read (for
// ReaderIdle and AllIdle) or a write (for WriterIdle and AllIdle) ends the stretch.
//
//     pipeline.addLast("idle", std::make_unique<IdleStateHandler>(60s, 30s, 0s));
//     pipeline.addLast("app", std::make_unique<MyHandler>());  // its userEventTriggered() sends
//                                                              // a ping on WriterIdle, closes on
//                                                              // ReaderIdle
//
// Timers: they start when the handler is added to an active channel, or at channelActive when it
// was added before; they stop (their ScheduledTasks are cancelled) at channelInactive, at
// handlerRemoved, and when the handler is destroyed; a stopped handler never starts again. Each
// check is one task scheduled on the channel's executor (ctx.channel().executor()): when it runs it
// either fires the event and schedules itself a full idle time later, or schedules itself for the
// time that remains (no polling). Time is the executor's now(), so EmbeddedChannel's virtual clock
// (advanceTimeBy) drives it in tests. As in Netty, positive times under 1 ms are raised to 1 ms.
//
// Reads: a read is counted from channelRead to channelReadComplete (Netty: `reading`): while a
// read is in progress the reader is never idle, and the read's time is taken at
// channelReadComplete.
//
// Writes (where this differs from Netty): Netty counts a write when its promise completes. In this
// pipeline a write's completion is only visible through its WriteListener, which belongs to the
// caller and is optional; wrapping it would cost an allocation per write (and a listener object
// owned by this handler could be called after the handler is gone, by a channel that still holds
// the write). Writes here complete when they are flushed (EmbeddedChannel completes them in
// flush; a socket channel starts its gather write there), so this handler counts writes at the
// flush that follows them: write() notes that a write has passed, and flush() records the time
// (lastWriteTime) when one has. A write that is never flushed is never counted, as in Netty (its
// promise never completes); a flushed write that fails still counts, as in Netty (its listener
// runs on failure too). Netty's observeOutput option (slow writes in progress count as activity)
// is not offered.
//
// Messages: any type passes through untouched, both ways.
//
// ReadTimeoutHandler (read_timeout_handler.hpp) is an IdleStateHandler with only a reader time.
//
// Threading: like every handler, on the channel's thread only. One instance per pipeline.

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <netbuf/transport/channel_executor.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/message.hpp>

namespace netbuf {

enum class IdleState { ReaderIdle, WriterIdle, AllIdle };

/// "ReaderIdle", "WriterIdle" or "AllIdle".
const char* idleStateName(IdleState state) noexcept;

/// The user event IdleStateHandler fires (as Message(IdleStateEvent{...})).
struct IdleStateEvent {
  IdleState state;
  /// True for the first event of a stretch of idleness, false for its repeats.
  bool first;

  friend bool operator==(const IdleStateEvent&, const IdleStateEvent&) = default;
};

class IdleStateHandler : public ChannelHandler {
 public:
  /// Each time <= 0 disables its check; positive times under 1 ms become 1 ms.
  IdleStateHandler(std::chrono::nanoseconds readerIdleTime, std::chrono::nanoseconds writerIdleTime,
                   std::chrono::nanoseconds allIdleTime);
  /// Cancels the timers if they are still running.
  ~IdleStateHandler() override;
  IdleStateHandler(const IdleStateHandler&) = delete;
  IdleStateHandler& operator=(const IdleStateHandler&) = delete;

  /// The effective times (zero: disabled).
  std::chrono::nanoseconds readerIdleTime() const noexcept { return readerIdleTime_; }
  std::chrono::nanoseconds writerIdleTime() const noexcept { return writerIdleTime_; }
  std::chrono::nanoseconds allIdleTime() const noexcept { return allIdleTime_; }

  void handlerAdded(ChannelHandlerContext& ctx) override;
  void handlerRemoved(ChannelHandlerContext& ctx) override;
  void channelActive(ChannelHandlerContext& ctx) override;
  void channelInactive(ChannelHandlerContext& ctx) override;
  void channelRead(ChannelHandlerContext& ctx, Message msg) override;
  void channelReadComplete(ChannelHandlerContext& ctx) override;
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override;
  void flush(ChannelHandlerContext& ctx) override;
  /// An observer: every message passes on untouched in both directions.
  MessageTypes inboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

 protected:
  /// Called when an idle check fires. Default: ctx.fireUserEventTriggered(Message(evt)). An
  /// exception it throws goes to ctx.fireExceptionCaught(). An override may remove this handler or
  /// close the channel; it must not touch the handler after doing so.
  virtual void channelIdle(ChannelHandlerContext& ctx, IdleStateEvent evt);

  /// A token that expires when this handler is destroyed: code that fires an event through the
  /// pipeline from a timer (outside any pipeline event, so a handler removed meanwhile may be
  /// destroyed before the call returns) checks it before touching the handler again.
  std::weak_ptr<const void> lifetimeToken() const noexcept { return lifetime_; }

 private:
  enum class State : std::uint8_t { kNew, kStarted, kStopped };
  enum class Check : std::uint8_t { kReader, kWriter, kAll };
  using Clock = std::chrono::steady_clock;

  void initialize(ChannelHandlerContext& ctx);
  void destroy() noexcept;
  Clock::time_point now() const noexcept;
  /// Schedules the check (a task capturing only this and check: no allocation by std::function).
  ScheduledTask schedule(std::chrono::nanoseconds delay, Check check);
  void runCheck(Check check);
  void readerIdleCheck();
  void writerIdleCheck();
  void allIdleCheck();
  /// Calls channelIdle(evt); the last thing a check does (the handler may be gone afterwards).
  void fireIdle(IdleStateEvent evt) noexcept;

  const std::chrono::nanoseconds readerIdleTime_;
  const std::chrono::nanoseconds writerIdleTime_;
  const std::chrono::nanoseconds allIdleTime_;

  ChannelHandlerContext* ctx_ = nullptr;  // set while started
  ScheduledTask readerIdleTimeout_;
  ScheduledTask writerIdleTimeout_;
  ScheduledTask allIdleTimeout_;
  Clock::time_point lastReadTime_{};
  Clock::time_point lastWriteTime_{};
  bool firstReaderIdleEvent_ = true;
  bool firstWriterIdleEvent_ = true;
  bool firstAllIdleEvent_ = true;
  bool reading_ = false;       // between channelRead and channelReadComplete
  bool writePending_ = false;  // a write passed since the last flush
  State state_ = State::kNew;
  std::shared_ptr<const void> lifetime_;
};

}  // namespace netbuf
