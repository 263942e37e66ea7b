#pragma once
// EmbeddedChannel: a channel without a socket, for testing handlers and codecs (Netty's class of
// the same name). It runs the same pipeline as a real channel; what reaches the tail inbound and
// the head outbound is queued for the test to read.
//
//     EmbeddedChannel ch(std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(1024));
//     ch.writeInbound(Unpooled::copiedBuffer("a\nb"));
//     auto frame = ch.readInbound<AnyByteBuf>();      // "a"
//     ch.finish();                                    // end of stream: channelInactive
//
// It is its own executor, on the calling thread: execute() queues a task, schedule() queues one
// for a time on a virtual clock; runPendingTasks() runs what is due, advanceTimeBy() moves the
// clock. writeInbound/writeOutbound/finish run pending tasks themselves. It is single-threaded:
// every thread counts as its loop (inEventLoop() is always true), so use it from one thread.
//
// Backpressure: setWritable() plays the socket's write buffer (isWritable() and
// channelWritabilityChanged); setAutoRead() is recorded for the test to check (isAutoRead()), since
// inbound messages are fed by the test anyway.
//
// Exceptions that reach the tail are recorded, not logged: checkException() (called by
// writeInbound, writeOutbound and finish) rethrows the first one.

#include <chrono>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_executor.hpp>

namespace netbuf {

class EmbeddedChannel final : public ChannelExecutor, public Channel {
 public:
  /// An open, active channel with an empty pipeline (channelActive has been fired).
  explicit EmbeddedChannel(ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());
  /// The handlers are added as "handler0", "handler1"..., then channelActive is fired.
  template <class... H>
  requires(sizeof...(H) > 0) explicit EmbeddedChannel(std::unique_ptr<H>... handlers)
      : Channel(static_cast<ChannelExecutor&>(*this)) {
    std::size_t i = 0;
    (pipeline().addLast("handler" + std::to_string(i++), std::move(handlers)), ...);
    pipeline().fireChannelActive();
  }
  ~EmbeddedChannel() override;

  // ---- inbound: into the head; what reaches the tail is queued
  /// Fires channelRead for each message, then channelReadComplete; runs pending tasks; rethrows an
  /// exception that reached the tail. True when inbound messages are queued.
  template <class... T>
  bool writeInbound(T&&... msgs) {
    (pipeline().fireChannelRead(Message(std::forward<T>(msgs))), ...);
    pipeline().fireChannelReadComplete();
    runPendingTasks();
    checkException();
    return !inbound_.empty();
  }
  /// The next message that reached the tail (empty Message when none).
  Message readInboundMessage();
  /// The next inbound message as a T (nullopt when none; MessageTypeError if it is not a T).
  template <class T>
  std::optional<T> readInbound() {
    Message m = readInboundMessage();
    if (m.empty()) return std::nullopt;
    return m.take<T>();
  }
  std::size_t inboundCount() const noexcept { return inbound_.size(); }

  // ---- outbound: into the tail; what reaches the head is queued when flushed
  /// Writes each message, then flushes; runs pending tasks; rethrows an exception that reached the
  /// tail. True when outbound messages are queued.
  template <class... T>
  bool writeOutbound(T&&... msgs) {
    (write(Message(std::forward<T>(msgs))), ...);
    flush();
    runPendingTasks();
    checkException();
    return !outbound_.empty();
  }
  Message readOutboundMessage();
  template <class T>
  std::optional<T> readOutbound() {
    Message m = readOutboundMessage();
    if (m.empty()) return std::nullopt;
    return m.take<T>();
  }
  std::size_t outboundCount() const noexcept { return outbound_.size(); }

  /// Closes the channel (channelInactive reaches the handlers: decoders flush their last
  /// messages), runs pending tasks, rethrows a recorded exception. True when messages are queued.
  bool finish();
  /// finish(), then releases every queued message. True when there were any.
  bool finishAndReleaseAll();
  /// Rethrows (once) the first exception that reached the tail.
  void checkException();

  // ---- executor with a virtual clock
  void execute(std::function<void()> task) override;
  ScheduledTask schedule(std::chrono::nanoseconds delay, std::function<void()> task) override;
  bool inEventLoop() const noexcept override { return true; }
  std::chrono::steady_clock::time_point now() const noexcept override { return now_; }
  /// Runs queued tasks and scheduled tasks that are due, until none is left.
  void runPendingTasks();
  /// Moves the virtual clock forward, then runs what became due.
  void advanceTimeBy(std::chrono::nanoseconds delta);

  // ---- Channel
  bool isOpen() const noexcept override { return open_; }
  bool isActive() const noexcept override { return open_; }
  /// True unless setWritable(false): an EmbeddedChannel has no write buffer of its own.
  bool isWritable() const noexcept override { return writable_; }
  /// Stands in for a socket's write buffer crossing its water marks, to test backpressure:
  /// fires channelWritabilityChanged when the value changes (pending tasks are left to the test).
  void setWritable(bool writable);
  std::string localAddress() const override { return "embedded"; }
  std::string remoteAddress() const override { return "embedded"; }

 private:
  struct PendingWrite {
    Message msg;
    WriteListener* listener;
  };
  struct Timed {
    std::chrono::steady_clock::time_point due;
    std::uint64_t seq;
    std::shared_ptr<ScheduledTask::State> state;
    std::function<void()> task;
  };

  void doWrite(Message msg, WriteListener* listener) override;
  void doFlush() override;
  void doClose() override;
  void onUnhandledMessage(Message msg) noexcept override;
  void onUnhandledException(std::exception_ptr error) noexcept override;
  /// Recorded like an unhandled exception (checkException() rethrows it).
  void onWriteFailure(std::exception_ptr error) noexcept override;

  std::deque<Message> inbound_;
  std::deque<Message> outbound_;
  std::vector<PendingWrite> pendingWrites_;
  std::deque<std::function<void()>> tasks_;
  std::vector<Timed> timed_;
  std::uint64_t timedSeq_ = 0;
  std::chrono::steady_clock::time_point now_{};
  std::exception_ptr error_;
  bool open_ = true;
  bool writable_ = true;
};

}  // namespace netbuf
