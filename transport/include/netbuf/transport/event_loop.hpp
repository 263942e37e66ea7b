#pragma once
// EventLoop and EventLoopGroup: the threads that run netbuf's I/O (Netty's EventLoopGroup on
// Boost.Asio).
//
//   EventLoopGroup(n)
//     +-- EventLoop 0: one thread running one asio::io_context (concurrency hint 1)
//     +-- EventLoop 1: ...
//     +-- EventLoop n-1
//
// Every channel will be pinned to one loop, so its handlers run on one thread, one at a time, and
// need no locks. Other threads hand work to a loop with execute() (as soon as possible, in
// submission order) or schedule() (after a delay).
//
// Exceptions: a task's exception never escapes the loop thread: it is caught, reported on stderr
// (naming the loop) and counted by tasksFailed(); the loop goes on.
//
// Shutdown: shutdownGracefully(quietPeriod, timeout) first runs every loop's shutdown hooks (open
// channels flush what they have queued and close, acceptors stop accepting), then waits until every
// channel has closed, no task has been submitted for quietPeriod (counted from the shutdown's start
// at the earliest) and every submitted task has run (or until timeout has passed), then stops every
// loop and joins its thread. From then on execute() throws RejectedExecutionError; tasks still
// queued when the timeout cut the wait, and scheduled tasks not yet due, are destroyed without
// running. Nothing runs on the group's threads after shutdownGracefully() returns. The destructor
// shuts down with no quiet period and no timeout (queued tasks are dropped) if that has not been
// done; channels still open then get no more events, and a receive pending on one is destroyed
// unrun (receive_queue.hpp).
//
// Signals: shutdownGracefullyOnSignals() (SIGINT and SIGTERM by default) makes the first of those
// signals start shutdownGracefully() on a thread of the group's own; a second one ends the process
// at once (std::_Exit(128 + signal), as a shell does for an impatient Ctrl-C). With
// ServerChannel::waitClosed() a server's main is three lines:
//
//     EventLoopGroup group;
//     group.shutdownGracefullyOnSignals();
//     ServerBootstrap().group(group).childHandler(init).bind("0.0.0.0",
//     8080)->waitClosed(asio::use_future).wait();
//
// awaitTermination() waits for the end of a shutdown started elsewhere (a signal, another thread).
//
// Thread-safety: execute(), schedule(), next(), inEventLoop() and the statistics may be called from
// any thread; shutdownGracefully(), shutdownGracefullyOnSignals() and awaitTermination() from any
// thread except the group's own (the first and last join or wait for them).

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/system_executor.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/transport/channel_executor.hpp>
#include <netbuf/transport/detail/async_op.hpp>
#include <netbuf/transport/event_loop_executor.hpp>
#include <netbuf/transport/rejected_execution_error.hpp>
#include <netbuf/transport/transport.hpp>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace netbuf {

namespace detail {
class IoUringLoop;
}

class EventLoop final : public ChannelExecutor {
 public:
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  /// The loop's io_context (for Asio objects that must live on this loop: sockets, timers).
  boost::asio::io_context& context() {
    if (contextGone_) [[unlikely]]
      throwDestroyed();
    return *ctx_;
  }
  /// Position of this loop in its group.
  std::size_t index() const noexcept { return index_; }
  /// The loop's transport: Transport::Asio or Transport::IoUring (transport.hpp).
  Transport transport() const noexcept { return ring_ ? Transport::IoUring : Transport::Asio; }
  /// The loop's ring on the IoUring transport, nullptr on Asio (for the transport's channels).
  detail::IoUringLoop* ioUring() const noexcept { return ring_.get(); }
  ~EventLoop();

  /// This loop as an Asio executor (event_loop_executor.hpp): for co_spawn, timers, dispatch and
  /// post; the default executor of the completion handlers of netbuf's operations on this loop.
  using executor_type = EventLoopExecutor;
  executor_type get_executor() noexcept { return EventLoopExecutor(*this); }
  /// True when called from this loop's thread.
  bool inEventLoop() const noexcept override { return detail::tCurrentExecutor == this; }

  /// Runs task() on this loop's thread as soon as possible, after the tasks submitted before it
  /// (FIFO per loop). Throws RejectedExecutionError once the loop has shut down.
  template <class F>
  void execute(F&& task) {
    using Fn = std::decay_t<F>;
    Admission admit(*this);  // throws when shut down
    pending_.fetch_add(1, std::memory_order_relaxed);
    lastSubmitNs_.store(nowNs(), std::memory_order_relaxed);
    try {
      boost::asio::post(*ctx_, Task<Fn>{this, Fn(std::forward<F>(task))});
    } catch (...) {  // not queued (out of memory): a graceful shutdown must not wait for it
      pending_.fetch_sub(1, std::memory_order_release);
      throw;
    }
  }

  /// execute() for a type-erased task (the ChannelExecutor interface).
  void execute(std::function<void()> task) override {
    execute<std::function<void()>>(std::move(task));
  }
  std::chrono::steady_clock::time_point now() const noexcept override {
    return std::chrono::steady_clock::now();
  }

  /// Runs task() on this loop's thread once delay has passed, unless cancelled first. Scheduled
  /// tasks do not hold back a graceful shutdown: those not yet due when the loop stops never run.
  /// Throws RejectedExecutionError once the loop has shut down.
  ScheduledTask schedule(std::chrono::nanoseconds delay, std::function<void()> task) override;

  /// Graceful-shutdown hooks (for channels and acceptors living on this loop): fn runs on this
  /// loop when its group's shutdownGracefully() begins. Both calls on the loop thread only. The
  /// loop owns fn (and what it holds) until it is removed, or until the group is destroyed: an
  /// open SocketChannel's hook is what keeps the channel alive while it is open.
  std::uint64_t addShutdownHook(std::function<void()> fn);
  void removeShutdownHook(std::uint64_t id) noexcept;
  /// True once the group's graceful shutdown has run this loop's hooks: a channel, acceptor or
  /// connection attempt that would start now would never be closed by them, so it closes (or
  /// fails with ChannelErrc::rejected) instead. Any thread.
  bool isShuttingDown() const noexcept { return shuttingDown_.load(std::memory_order_acquire); }
  /// Open channels on this loop that graceful shutdown waits for (channels count themselves in
  /// and out; readable from any thread).
  void channelOpened() noexcept { channels_.fetch_add(1, std::memory_order_relaxed); }
  void channelClosed() noexcept { channels_.fetch_sub(1, std::memory_order_release); }
  std::size_t openChannels() const noexcept { return channels_.load(std::memory_order_acquire); }

  /// Tasks submitted with execute() and not yet run.
  std::size_t pendingTasks() const noexcept { return pending_.load(std::memory_order_acquire); }
  /// Tasks (execute or schedule) that threw.
  std::uint64_t tasksFailed() const noexcept { return failed_.load(std::memory_order_relaxed); }
  /// True once the loop's thread has stopped for good (its group's shutdown joined it): no task
  /// runs on it again; tasks still queued then were dropped (see the header comment).
  bool isTerminated() const noexcept { return terminated_.load(std::memory_order_acquire); }

 private:
  friend class EventLoopGroup;
  friend class EventLoopExecutor;

  explicit EventLoop(std::size_t index);

  /// Counts a submitter in while it posts, so shutdown can wait for it (see EventLoopGroup::stop).
  struct Admission {
    EventLoop& loop;
    explicit Admission(EventLoop& l) : loop(l) {
      loop.submitting_.fetch_add(1, std::memory_order_seq_cst);
      if (!loop.accepting_.load(std::memory_order_seq_cst)) {
        loop.submitting_.fetch_sub(1, std::memory_order_seq_cst);
        loop.reject();
      }
    }
    ~Admission() { loop.submitting_.fetch_sub(1, std::memory_order_seq_cst); }
  };

  template <class Fn>
  struct Task {
    EventLoop* loop;
    Fn fn;
    void operator()() {
      try {
        fn();
      } catch (...) {
        loop->reportFailure(std::current_exception());
      }
      loop->pending_.fetch_sub(1, std::memory_order_release);
    }
  };

  static std::int64_t nowNs() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  [[noreturn]] void reject() const;
  [[noreturn]] static void throwDestroyed();
  void reportFailure(std::exception_ptr e) noexcept;
  void run() noexcept;
  /// run() on the IoUring transport: completions of the ring, then the io_context's handlers.
  void runRing();

  std::thread thread_;
  std::size_t index_;
  std::atomic<bool> accepting_{true};
  std::atomic<bool> shuttingDown_{false};
  std::atomic<bool> terminated_{false};
  std::atomic<int> submitting_{0};
  std::atomic<std::size_t> pending_{0};
  std::atomic<std::int64_t> lastSubmitNs_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::size_t> channels_{0};
  // Loop thread only.
  std::vector<std::pair<std::uint64_t, std::function<void()>>> shutdownHooks_;
  std::uint64_t nextHookId_ = 1;
  void runShutdownHooks() noexcept;

  // An io_context whose execution_context::shutdown() the group can call: shutting a context
  // down destroys the handlers that never ran (dropped tasks, pending accepts and reads), and
  // those may own I/O objects of another loop's context (an accepted socket bound for the next
  // loop). Asio allows destroying an I/O object after its context's shutdown() but not after its
  // destruction, so the group shuts every context down before it destroys any.
  class Context : public boost::asio::io_context {
   public:
    using boost::asio::execution_context::shutdown;
    using boost::asio::io_context::io_context;
  };

  // The handlers destroyed with the io_context may still call into this loop or another loop of
  // the group (execute() then refuses them). So the group's destructor shuts down and then resets
  // every loop's io_context first, while all the loops and the group are whole (declared last
  // but for work_, it would also go early in a loop's own destruction).
  std::optional<Context> ctx_{std::in_place, 1};
  // Set by the group's destructor (its thread alone, after every loop thread has been joined)
  // before it shuts the io_context down: from then on context() throws.
  bool contextGone_ = false;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      ctx_->get_executor()};
  // The IoUring transport's ring (nullptr on Asio). Made by the group before the thread starts;
  // torn down by the group's destructor after every context has been shut down and before any is
  // destroyed (it watches its descriptor through the io_context).
  std::unique_ptr<detail::IoUringLoop> ring_;
};

// ------------------------------------------------------------------ EventLoopExecutor

inline bool EventLoopExecutor::runningInThisThread() const noexcept { return loop_->inEventLoop(); }

inline bool EventLoopExecutor::isStopped() const noexcept { return loop_->isTerminated(); }

inline boost::asio::io_context& EventLoopExecutor::query(
    boost::asio::execution::context_t) const noexcept {
  return *loop_->ctx_;
}

template <class F>
void EventLoopExecutor::execute(F&& f) const {
  if (!never_ && loop_->inEventLoop()) {
    // On a loop that has stopped, only the group's destructor runs "on the loop" (standing in
    // for it while it closes what is still open): work for the loop is dropped, as after a
    // shutdown.
    if (loop_->isTerminated()) return;
    static_cast<F&&>(f)();
    return;
  }
  submit(std::forward<F>(f));
}

template <class F>
void EventLoopExecutor::submit(F&& f) const {
  try {
    loop_->execute(std::forward<F>(f));  // admission is checked before f is moved from
  } catch (const RejectedExecutionError&) {
    // The loop has shut down: f is destroyed unrun where it is (see the header comment).
  }
}

class EventLoopGroup {
 public:
  /// Netty's defaults for shutdownGracefully().
  static constexpr std::chrono::milliseconds kDefaultQuietPeriod{2000};
  static constexpr std::chrono::milliseconds kDefaultTimeout{15000};

  /// Starts nThreads loops (0: std::thread::hardware_concurrency(), at least 1) on the given
  /// transport (transport.hpp; Default: NETBUF_TRANSPORT, else Asio). Throws
  /// TransportUnavailableError when the system refuses Transport::IoUring.
  explicit EventLoopGroup(std::size_t nThreads = 0, Transport transport = Transport::Default);
  ~EventLoopGroup();
  EventLoopGroup(const EventLoopGroup&) = delete;
  EventLoopGroup& operator=(const EventLoopGroup&) = delete;

  std::size_t size() const noexcept { return loops_.size(); }
  /// The transport the group's loops run: Transport::Asio or Transport::IoUring.
  Transport transport() const noexcept { return transport_; }
  EventLoop& loop(std::size_t i) { return *loops_.at(i); }
  /// The next loop, round robin (how channels are spread over the loops).
  EventLoop& next() noexcept {
    return *loops_[next_.fetch_add(1, std::memory_order_relaxed) % loops_.size()];
  }
  /// The loop whose thread is the caller's, or nullptr.
  EventLoop* currentLoop() noexcept;

  /// See the header comment. Safe to call more than once and from several threads (later calls
  /// wait for the first to finish). Throws IllegalStateError when called from one of the group's
  /// loop threads.
  void shutdownGracefully(std::chrono::milliseconds quietPeriod = kDefaultQuietPeriod,
                          std::chrono::milliseconds timeout = kDefaultTimeout);
  /// The same without blocking: the shutdown runs on a thread of the group's own, and token's
  /// handler completes (void(ErrorCode), always success) once it has returned, on the handler's
  /// associated executor, by default on that thread (the loops have stopped by then: a handler
  /// bound to one of them, such as a coroutine of the group's, is destroyed unrun). Callable from
  /// any thread, the group's loop threads included. The handler must not destroy the group (its
  /// destructor joins the thread the handler runs on).
  ///     co_await group.shutdownGracefully(0ms, 5s, asio::use_awaitable);   // from another context
  template <class Token>
  auto shutdownGracefully(std::chrono::milliseconds quietPeriod, std::chrono::milliseconds timeout,
                          Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(
        [this, quietPeriod, timeout](auto handler) {
          using H = decltype(handler);
          detail::SharedCompletion<H, boost::asio::system_executor> completion(
              std::move(handler), boost::asio::system_executor());
          startShutdownThread([this, quietPeriod, timeout, completion] {
            shutdownGracefully(quietPeriod, timeout);
            completion.dispatch(ErrorCode());
          });
        },
        token);
  }
  bool isShuttingDown() const noexcept { return shuttingDown_.load(std::memory_order_acquire); }
  bool isTerminated() const noexcept { return terminated_.load(std::memory_order_acquire); }

  /// Installs handlers for signals (see the header comment): the first one received starts
  /// shutdownGracefully(quietPeriod, timeout); a second one ends the process. Returns at once.
  /// Once per group (IllegalStateError the second time, or after shutdown).
  void shutdownGracefullyOnSignals(std::initializer_list<int> signals = {SIGINT, SIGTERM},
                                   std::chrono::milliseconds quietPeriod = kDefaultQuietPeriod,
                                   std::chrono::milliseconds timeout = kDefaultTimeout);
  /// Blocks until the group has terminated (shutdownGracefully() returned, wherever it was
  /// called). IllegalStateError on one of the group's loop threads.
  void awaitTermination();
  /// The same, for at most timeout: true when the group has terminated.
  bool awaitTermination(std::chrono::milliseconds timeout);

 private:
  bool quiet(std::chrono::nanoseconds quietPeriod, std::int64_t sinceNs) const noexcept;
  /// Runs fn on a new thread of the group's, joined by the destructor.
  void startShutdownThread(std::function<void()> fn);
  void stop() noexcept;

  void checkNotOnLoop(const char* what);

  Transport transport_ = Transport::Asio;
  std::vector<std::unique_ptr<EventLoop>> loops_;
  std::atomic<std::size_t> next_{0};
  std::mutex shutdownMutex_;
  std::atomic<bool> shuttingDown_{false};
  std::atomic<bool> terminated_{false};
  std::mutex terminationMutex_;  // with terminated_cv_: awaitTermination()
  std::condition_variable terminatedCv_;
  // shutdownGracefullyOnSignals(): the signal set (on loop 0, used there once armed; destroyed by
  // the group's destructor before any io_context) and the thread a signal starts the shutdown on.
  std::unique_ptr<boost::asio::signal_set> signals_;
  std::mutex signalMutex_;
  std::thread signalThread_;
  std::mutex shutdownThreadsMutex_;
  std::vector<std::thread> shutdownThreads_;  // asynchronous shutdownGracefully() calls
};

}  // namespace netbuf
