#pragma once
// EventLoopExecutor: an EventLoop as an Asio executor, so that Asio's own machinery (co_spawn,
// use_awaitable, dispatch/post, timers, sockets) runs work on a netbuf loop:
//
//     asio::co_spawn(loop.get_executor(), session(ch), asio::detached);
//     asio::steady_timer timer(loop.get_executor(), 100ms);
//
// It is what every netbuf asynchronous operation on a channel uses as the default associated
// executor of its completion handler: a handler with no executor of its own runs on the channel's
// loop.
//
// Semantics (Asio's standard executor model):
//  - execute(f) with blocking.possibly (the default) runs f at once when called on the loop's
//    thread (what asio::dispatch asks for); otherwise, and always with blocking.never (what
//    asio::post and defer ask for), f is queued to the loop as EventLoop::execute() does: FIFO with
//    the loop's other tasks, counted as pending work by a graceful shutdown (so a coroutine that a
//    closing channel resumes runs before the loop stops).
//  - Once the loop has shut down, f is destroyed without running (as an io_context destroys the
//    handlers it never ran); no exception reaches the caller.
//  - query(execution::context) is the loop's io_context: I/O objects made from this executor
//    (timers, sockets) register with the loop's reactor.
//  - outstanding_work is untracked and cannot be tracked: a loop runs until its group stops it,
//    work or not.
//
// Threading: copyable and usable from any thread; equal when they name the same loop and the same
// blocking property.

#include <boost/asio/execution.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <utility>

namespace netbuf {

class EventLoop;

class EventLoopExecutor {
 public:
  explicit EventLoopExecutor(EventLoop& loop) noexcept : loop_(&loop) {}

  /// The loop this executor runs work on.
  EventLoop& loop() const noexcept { return *loop_; }
  /// True when called on the loop's thread.
  bool runningInThisThread() const noexcept;
  /// True once the loop has stopped for good (work for it is dropped).
  bool isStopped() const noexcept;

  /// See the header comment.
  template <class F>
  void execute(F&& f) const;

  EventLoopExecutor require(boost::asio::execution::blocking_t::possibly_t) const noexcept {
    return EventLoopExecutor(*loop_, false);
  }
  EventLoopExecutor require(boost::asio::execution::blocking_t::never_t) const noexcept {
    return EventLoopExecutor(*loop_, true);
  }
  boost::asio::execution::blocking_t query(boost::asio::execution::blocking_t) const noexcept {
    return never_ ? boost::asio::execution::blocking_t(boost::asio::execution::blocking.never)
                  : boost::asio::execution::blocking_t(boost::asio::execution::blocking.possibly);
  }
  static constexpr boost::asio::execution::outstanding_work_t query(
      boost::asio::execution::outstanding_work_t) noexcept {
    return boost::asio::execution::outstanding_work.untracked;
  }
  static constexpr boost::asio::execution::mapping_t query(
      boost::asio::execution::mapping_t) noexcept {
    return boost::asio::execution::mapping.thread;
  }
  static constexpr boost::asio::execution::relationship_t query(
      boost::asio::execution::relationship_t) noexcept {
    return boost::asio::execution::relationship.fork;
  }
  /// The loop's io_context (for I/O objects made from this executor).
  boost::asio::io_context& query(boost::asio::execution::context_t) const noexcept;

  friend bool operator==(const EventLoopExecutor& a, const EventLoopExecutor& b) noexcept {
    return a.loop_ == b.loop_ && a.never_ == b.never_;
  }
  friend bool operator!=(const EventLoopExecutor& a, const EventLoopExecutor& b) noexcept {
    return !(a == b);
  }

 private:
  EventLoopExecutor(EventLoop& loop, bool never) noexcept : loop_(&loop), never_(never) {}
  /// Queues f on the loop; destroys it unrun when the loop has shut down.
  template <class F>
  void submit(F&& f) const;

  EventLoop* loop_;
  bool never_ = false;
};

}  // namespace netbuf

// EventLoop completes the executor's templates (execute, submit).
#include <netbuf/transport/event_loop.hpp>
