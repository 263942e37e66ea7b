#pragma once
// EventLoopChannel: what every socket channel on an EventLoop shares (Netty's AbstractChannel):
// SocketChannel (TCP, Unix domain) and DatagramChannel (UDP) derive from it.
//
//  - Ownership by the loop: once started (registerOnLoop), an open channel is owned by its loop
//    through a graceful-shutdown hook (which closes it gracefully) and counted in the loop's open
//    channels, until it closes; the close hands the loop's reference to a later loop task, never
//    dropping it inside the close, so the channel outlives the pipeline code that closed it. A
//    loop that is shutting down (its hooks have run) starts no new channel: it would never be
//    closed by them.
//  - Destruction on the loop: channels are made with make(), whose deleter destroys a channel on
//    its loop when the last reference goes elsewhere (the pipeline's handlers, their timers and
//    the socket are the loop's), or at once when the loop no longer runs.
//  - Operations from any thread: submit() posts Channel's off-loop tasks to the loop as they are;
//    runOnLoop() runs the subclass's own operations (closeGracefully, shutdownOutput...) there.
//  - waitClosed() and close(token); the water marks on the bytes written but not yet handed
//    to the socket (isWritable, channelWritabilityChanged).
//
// Threading: the accessors marked "any thread" may be called anywhere; the protected helpers on
// the loop thread, as the subclass's I/O.

#include <atomic>
#include <boost/asio/async_result.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <type_traits>
#include <utility>
#include <vector>

namespace netbuf {

class EventLoopChannel : public Channel {
 public:
  EventLoop& eventLoop() const noexcept { return *loop_; }
  boost::asio::any_io_executor get_executor() const override { return loop_->get_executor(); }
  /// Any thread.
  bool isOpen() const noexcept override { return open_.load(std::memory_order_acquire); }
  /// Open and started. Any thread.
  bool isActive() const noexcept override {
    return open_.load(std::memory_order_acquire) && active_.load(std::memory_order_acquire);
  }
  /// False while more than the high water mark is queued (see the header comment). Any thread.
  bool isWritable() const noexcept override { return writable_.load(std::memory_order_relaxed); }
  /// Bytes written but not yet handed to the socket (what the water marks compare). Any thread.
  std::size_t pendingWriteBytes() const noexcept {
    return pendingBytes_.load(std::memory_order_relaxed);
  }

  /// Flushes what is queued and closes once it has been written (what graceful shutdown does).
  /// Any thread.
  virtual void closeGracefully() = 0;

  /// Completes (void(ErrorCode), always success) once the channel has closed, after
  /// channelInactive; at once (posted) if it already has. token is any Asio completion token;
  /// the handler runs on its associated executor, by default the channel's loop (a handler on a
  /// loop that has shut down is destroyed unrun, as an io_context's are). Any thread.
  ///     ch->waitClosed(asio::use_future).wait();      // a client's main, until the peer closes
  template <class Token>
  auto waitClosed(Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(
        detail::InitiateWaitClosed<EventLoopChannel>{this, false}, token);
  }
  /// close(), completing as waitClosed does. Any thread.
  template <class Token>
  auto close(Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(
        detail::InitiateWaitClosed<EventLoopChannel>{this, true}, token);
  }
  using Channel::close;

 protected:
  EventLoopChannel(EventLoop& loop, ByteBufAllocator& alloc, std::size_t highWaterMark,
                   std::size_t lowWaterMark);

  /// A new T owned by a shared_ptr whose deleter destroys it on loop (see the header comment).
  template <class T, class... Args>
  static std::shared_ptr<T> make(EventLoop& loop, Args&&... args) {
    return std::shared_ptr<T>(new T(loop, std::forward<Args>(args)...), DestroyOnLoop{&loop});
  }

  void submit(detail::OutboundTask& task) override;
  /// Runs fn now on the loop, or hands it to the loop (holding the channel); false when the loop
  /// has shut down (fn was not run).
  bool runOnLoop(std::function<void()> fn);

  /// Runs fn on the loop once the channel has closed (at once if it already has; on the calling
  /// thread when the loop has shut down). Any thread. What waitClosed() is built on; the
  /// transport's own classes (ChannelGroup, Reconnector) use it where they must hear of the close
  /// even after the loop has stopped.
  void addCloseListener(std::function<void()> fn);
  friend class ChannelGroup;
  friend class Reconnector;
  friend struct detail::InitiateWaitClosed<EventLoopChannel>;

  /// Counts the channel in on its loop and gives the loop its reference (the shutdown hook calls
  /// closeGracefully()), then marks it active. False, with nothing registered, when the loop is
  /// shutting down: the caller closes the channel. Loop thread, once.
  bool registerOnLoop();

  /// The first half of a close, for the subclass's doClose: marks the channel closed and takes
  /// it off its loop. The returned guard holds the channel until a later loop task; keep it until
  /// doClose returns. Loop thread; call only while isOpen().
  class CloseGuard {
   public:
    CloseGuard(CloseGuard&&) noexcept = default;
    CloseGuard& operator=(CloseGuard&&) = delete;
    ~CloseGuard();

   private:
    friend class EventLoopChannel;
    CloseGuard(std::shared_ptr<Channel> keep, EventLoop* loop) noexcept
        : keep_(std::move(keep)), loop_(loop) {}
    std::shared_ptr<Channel> keep_;
    EventLoop* loop_;
  };
  CloseGuard beginClose();
  /// The second half: channelInactive (once, if the channel was active), then the close listeners.
  void endClose();

  /// Water marks: count bytes queued (may fire channelWritabilityChanged) and written.
  void addPending(std::size_t n);
  void removePending(std::size_t n);
  /// Forgets n queued bytes that a close failed (no writability event).
  void dropPending(std::size_t n) noexcept {
    pendingBytes_.store(pendingBytes_.load(std::memory_order_relaxed) - n,
                        std::memory_order_relaxed);
  }

  /// Fails every write of queue with ChannelErrc::closedBeforeWritten (a close, or the destructor
  /// of a channel destroyed while open): the queue is moved out first, so a listener that writes
  /// again (the channel is closed by then: its write fails at once) never touches the queue being
  /// walked; each write's buffer is released before its listener runs. bytesOf(write) gives the
  /// bytes the write still counted in the water marks. A write has a `listener` member.
  template <class Queue, class BytesOf>
  void failWrites(Queue& queue, BytesOf bytesOf) noexcept {
    Queue failed = std::move(queue);
    queue.clear();
    for (auto& w : failed) {
      using Write = std::decay_t<decltype(w)>;
      dropPending(bytesOf(w));
      WriteListener* listener = w.listener;
      { Write released = std::move(w); }
      if (listener != nullptr) listener->operationComplete(ChannelErrc::closedBeforeWritten);
    }
  }

  /// Set by the subclass when the last byte in a direction is gone; read from any thread.
  std::atomic<bool> open_{true};
  std::atomic<bool> active_{false};

 private:
  struct DestroyOnLoop {
    EventLoop* loop;
    void operator()(EventLoopChannel* ch) const noexcept;
  };

  EventLoop* loop_;
  std::size_t highWaterMark_;
  std::size_t lowWaterMark_;
  std::atomic<std::size_t> pendingBytes_{0};  // written on the loop only
  std::atomic<bool> writable_{true};
  std::uint64_t shutdownHook_ = 0;  // on loop_, while registered and open
  std::vector<std::function<void()>> closeListeners_;
};

}  // namespace netbuf
