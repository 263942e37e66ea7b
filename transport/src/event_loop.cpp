#include <fmt/format.h>

#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <cstdlib>
#include <netbuf/transport/event_loop.hpp>

#include "detail/io_uring_loop.hpp"

namespace netbuf {

// ------------------------------------------------------------------ ScheduledTask

bool ScheduledTask::cancel() noexcept {
  if (!state_) return false;
  int expected = State::kWaiting;
  return state_->phase.compare_exchange_strong(expected, State::kCancelled,
                                               std::memory_order_acq_rel);
}

bool ScheduledTask::isDone() const noexcept {
  return state_ && state_->phase.load(std::memory_order_acquire) == State::kStarted;
}

bool ScheduledTask::isCancelled() const noexcept {
  return state_ && state_->phase.load(std::memory_order_acquire) == State::kCancelled;
}

// ------------------------------------------------------------------ EventLoop

EventLoop::EventLoop(std::size_t index) : index_(index) {}

EventLoop::~EventLoop() = default;

ScheduledTask EventLoop::schedule(std::chrono::nanoseconds delay, std::function<void()> task) {
  Admission admit(*this);
  auto state = std::make_shared<ScheduledTask::State>();
  auto timer = std::make_shared<boost::asio::steady_timer>(*ctx_);
  // steady_timer is not thread-safe: it is armed on the loop thread.
  boost::asio::post(*ctx_, [this, state, timer, delay, task = std::move(task)]() mutable {
    timer->expires_after(delay);
    timer->async_wait(
        [this, state, timer, task = std::move(task)](const boost::system::error_code& ec) {
          int expected = ScheduledTask::State::kWaiting;
          if (ec || !state->phase.compare_exchange_strong(expected, ScheduledTask::State::kStarted,
                                                          std::memory_order_acq_rel))
            return;
          try {
            task();
          } catch (...) {
            reportFailure(std::current_exception());
          }
        });
  });
  return ScheduledTask(std::move(state));
}

std::uint64_t EventLoop::addShutdownHook(std::function<void()> fn) {
  const std::uint64_t id = nextHookId_++;
  shutdownHooks_.emplace_back(id, std::move(fn));
  return id;
}

void EventLoop::removeShutdownHook(std::uint64_t id) noexcept {
  // The hook may own what it closes (a channel): destroy it after the list is consistent again,
  // since that destruction may add or remove other hooks.
  std::function<void()> removed;
  for (auto it = shutdownHooks_.begin(); it != shutdownHooks_.end(); ++it) {
    if (it->first == id) {
      removed = std::move(it->second);
      shutdownHooks_.erase(it);
      break;
    }
  }
}

void EventLoop::runShutdownHooks() noexcept {
  shuttingDown_.store(true, std::memory_order_release);  // no hook is added from here on
  // A hook may remove itself (a channel closing): run a copy.
  auto hooks = shutdownHooks_;
  for (auto& h : hooks) {
    try {
      h.second();
    } catch (...) {
      reportFailure(std::current_exception());
    }
  }
}

void EventLoop::throwDestroyed() {
  throw IllegalStateError(
      "EventLoop::context: the loop's io_context is gone (its group is being destroyed)");
}

void EventLoop::reject() const {
  throw RejectedExecutionError(fmt::format("event loop {} has shut down: task rejected", index_));
}

void EventLoop::reportFailure(std::exception_ptr e) noexcept {
  failed_.fetch_add(1, std::memory_order_relaxed);
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    std::fprintf(stderr, "netbuf: event loop %zu: a task threw: %s\n", index_, x.what());
  } catch (...) {
    std::fprintf(stderr, "netbuf: event loop %zu: a task threw a non-standard exception\n", index_);
  }
}

void EventLoop::run() noexcept {
  detail::tCurrentExecutor = this;  // what inEventLoop() compares, on this thread only
  // Tasks catch their own exceptions; this catches what other handlers (I/O completions) throw,
  // so that nothing escapes the thread. run() may be called again after an exception.
  for (;;) {
    try {
      if (ring_) {
        runRing();
      } else {
        ctx_->run();
      }
      return;
    } catch (...) {
      reportFailure(std::current_exception());
    }
  }
}

void EventLoop::runRing() {
  // One loop turn: the ring's completions (read from shared memory), then one io_uring_enter for
  // everything they and the previous turn's handlers prepared, then the io_context's handlers.
  // The loop sleeps only in run_one(), in Asio's epoll_wait, which watches the ring's descriptor
  // too. While completions keep coming, turns skip the io_context (and its epoll_wait) except
  // every kAsioEvery-th turn or when a task is queued, so tasks and timers are never starved.
  constexpr int kAsioEvery = 8;
  detail::IoUringLoop& ring = *ring_;
  int busyTurns = 0;
  while (!ctx_->stopped()) {
    ring.reap();
    ring.submit();
    if (ring.hasCompletions() || ring.hasUnsubmitted()) {
      if (++busyTurns < kAsioEvery && pending_.load(std::memory_order_relaxed) == 0) continue;
      busyTurns = 0;
      ctx_->poll();
      continue;
    }
    busyTurns = 0;
    ring.armWatch();
    ctx_->run_one();
  }
}

// ------------------------------------------------------------------ EventLoopGroup

EventLoopGroup::EventLoopGroup(std::size_t nThreads, Transport transport)
    : transport_(resolveTransport(transport)) {
  if (nThreads == 0) nThreads = std::max(1u, std::thread::hardware_concurrency());
  loops_.reserve(nThreads);
  // Every loop (and its ring) is made before any thread starts: a ring the system refuses fails
  // the constructor with nothing running yet, or, when Auto chose io_uring, falls back to Asio
  // (the probe's ring is small; a loop's may still meet a limit).
  for (std::size_t i = 0; i < nThreads; ++i) {
    loops_.push_back(std::unique_ptr<EventLoop>(new EventLoop(i)));
    if (transport_ == Transport::IoUring) {
      EventLoop& loop = *loops_.back();
      try {
        loop.ring_ =
            std::make_unique<detail::IoUringLoop>(*loop.ctx_, ByteBufAllocator::defaultAllocator());
      } catch (const TransportUnavailableError& e) {
        if (!detail::autoRequested(transport)) throw;
        std::fprintf(stderr, "netbuf: %s: using the Asio transport\n", e.what());
        for (auto& l : loops_) l->ring_.reset();
        transport_ = Transport::Asio;
      }
    }
  }
  for (auto& l : loops_) {
    EventLoop& loop = *l;
    loop.thread_ = std::thread([&loop] { loop.run(); });
  }
}

EventLoopGroup::~EventLoopGroup() {
  if (!isTerminated())
    shutdownGracefully(std::chrono::milliseconds(0), std::chrono::milliseconds(0));
  {
    std::lock_guard<std::mutex> lock(signalMutex_);
    if (signalThread_.joinable()) signalThread_.join();  // its shutdown has returned (terminated)
  }
  {
    // Their shutdowns have returned (terminated); their handlers may still be running.
    std::lock_guard<std::mutex> lock(shutdownThreadsMutex_);
    for (auto& t : shutdownThreads_) t.join();
    shutdownThreads_.clear();
  }
  signals_.reset();  // before its io_context; the loops are joined, nothing else touches it
  // Channels still open (the shutdown's timeout cut the wait) are not closed (no handler runs
  // after the shutdown), but their hooks, run now with this thread standing in for the stopped
  // loops, destroy a receive pending on them unrun: a coroutine suspended there holds its
  // channel, and that cycle would otherwise keep both alive for ever.
  const ChannelExecutor* const previous = detail::tCurrentExecutor;
  for (auto& l : loops_) {
    detail::tCurrentExecutor = l.get();
    l->runShutdownHooks();
  }
  detail::tCurrentExecutor = previous;
  // Their hooks own the channels: released next, while every io_context is alive for their
  // sockets. (Moved out first: a channel's destruction may add or remove hooks.)
  for (auto& l : loops_) {
    while (!l->shutdownHooks_.empty()) {  // a channel's destruction may add hooks: until none
      auto hooks = std::move(l->shutdownHooks_);
      l->shutdownHooks_.clear();
      hooks.clear();
    }
  }
  // Handlers dropped at shutdown (tasks, pending accepts, reads and timers) are destroyed when
  // their loop's io_context shuts down. They may own I/O objects of another loop's context, or
  // call into any loop of the group (and be refused): so every context is shut down before any is
  // destroyed, and every io_context goes before any loop.
  for (auto& l : loops_) {
    l->work_.reset();
    l->contextGone_ = true;
  }
  for (auto& l : loops_) l->ctx_->shutdown();
  // The rings go after the handlers that may hold channels and before the contexts (each watches
  // its descriptor through its context). A ring's teardown releases the channels and acceptors
  // its operations still held.
  for (auto& l : loops_) l->ring_.reset();
  for (auto& l : loops_) l->ctx_.reset();
}

EventLoop* EventLoopGroup::currentLoop() noexcept {
  for (auto& l : loops_) {
    if (l->inEventLoop()) return l.get();
  }
  return nullptr;
}

bool EventLoopGroup::quiet(std::chrono::nanoseconds quietPeriod,
                           std::int64_t sinceNs) const noexcept {
  // Quiet: nothing pending, and nothing submitted for quietPeriod, counted from the later of the
  // last submission and the start of the shutdown (as Netty does).
  const std::int64_t now = EventLoop::nowNs();
  for (const auto& l : loops_) {
    if (l->pending_.load(std::memory_order_acquire) != 0) return false;
    if (l->channels_.load(std::memory_order_acquire) != 0) return false;
    const std::int64_t last = std::max(sinceNs, l->lastSubmitNs_.load(std::memory_order_relaxed));
    if (now - last < quietPeriod.count()) return false;
  }
  return true;
}

void EventLoopGroup::checkNotOnLoop(const char* what) {
  if (currentLoop() != nullptr) {
    throw IllegalStateError(fmt::format(
        "EventLoopGroup::{} called from one of its own loop threads (it waits for them)", what));
  }
}

void EventLoopGroup::shutdownGracefullyOnSignals(std::initializer_list<int> signals,
                                                 std::chrono::milliseconds quietPeriod,
                                                 std::chrono::milliseconds timeout) {
  checkNotOnLoop("shutdownGracefullyOnSignals");
  std::lock_guard<std::mutex> lock(signalMutex_);
  if (signals_ != nullptr) {
    throw IllegalStateError("EventLoopGroup::shutdownGracefullyOnSignals called twice");
  }
  if (isShuttingDown()) {
    throw IllegalStateError("EventLoopGroup::shutdownGracefullyOnSignals after the shutdown began");
  }
  EventLoop& loop = *loops_.front();
  auto set = std::make_unique<boost::asio::signal_set>(loop.context());
  for (int sig : signals) set->add(sig);
  boost::asio::signal_set* raw = set.get();
  signals_ = std::move(set);
  // Armed on the loop, where the set is used from then on. The first signal starts the shutdown
  // on a thread of the group's own (a loop thread cannot: the shutdown joins it); the set is
  // armed again so that a second signal does not fall back to the default action unannounced.
  struct Waiter {
    EventLoopGroup* group;
    boost::asio::signal_set* set;
    std::chrono::milliseconds quiet;
    std::chrono::milliseconds timeout;
    int received = 0;
    void arm() {
      set->async_wait([w = *this](const boost::system::error_code& ec, int sig) mutable {
        if (ec) return;  // cancelled: the group is going away
        if (++w.received > 1) {
          std::fprintf(stderr, "netbuf: signal %d during graceful shutdown: exiting now\n", sig);
          std::_Exit(128 + sig);
        }
        std::fprintf(stderr, "netbuf: signal %d: shutting down gracefully\n", sig);
        {
          std::lock_guard<std::mutex> g(w.group->signalMutex_);
          EventLoopGroup* g2 = w.group;
          auto q = w.quiet;
          auto t = w.timeout;
          w.group->signalThread_ = std::thread([g2, q, t] {
            try {
              g2->shutdownGracefully(q, t);
            } catch (...) {
            }
          });
        }
        w.arm();
      });
    }
  };
  try {
    loop.execute([waiter = Waiter{this, raw, quietPeriod, timeout}]() mutable { waiter.arm(); });
  } catch (const RejectedExecutionError&) {  // a shutdown began meanwhile
    signals_.reset();
    throw IllegalStateError("EventLoopGroup::shutdownGracefullyOnSignals after the shutdown began");
  }
}

void EventLoopGroup::startShutdownThread(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(shutdownThreadsMutex_);
  shutdownThreads_.emplace_back([fn = std::move(fn)] {
    try {
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "netbuf: asynchronous shutdownGracefully: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "netbuf: asynchronous shutdownGracefully: a non-standard exception\n");
    }
  });
}

void EventLoopGroup::awaitTermination() {
  checkNotOnLoop("awaitTermination");
  std::unique_lock<std::mutex> lock(terminationMutex_);
  terminatedCv_.wait(lock, [this] { return isTerminated(); });
}

bool EventLoopGroup::awaitTermination(std::chrono::milliseconds timeout) {
  checkNotOnLoop("awaitTermination");
  std::unique_lock<std::mutex> lock(terminationMutex_);
  return terminatedCv_.wait_for(lock, timeout, [this] { return isTerminated(); });
}

void EventLoopGroup::shutdownGracefully(std::chrono::milliseconds quietPeriod,
                                        std::chrono::milliseconds timeout) {
  checkNotOnLoop("shutdownGracefully");
  std::lock_guard<std::mutex> lock(shutdownMutex_);
  if (isTerminated()) return;
  shuttingDown_.store(true, std::memory_order_release);
  const std::int64_t startNs = EventLoop::nowNs();
  for (auto& l : loops_) {
    EventLoop* loop = l.get();
    loop->execute([loop] { loop->runShutdownHooks(); });
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto nap = std::clamp<std::chrono::nanoseconds>(
      quietPeriod / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(10));
  while (!quiet(quietPeriod, startNs) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(nap);
  }
  stop();
  {
    std::lock_guard<std::mutex> g(terminationMutex_);
    terminated_.store(true, std::memory_order_release);
  }
  terminatedCv_.notify_all();
}

void EventLoopGroup::stop() noexcept {
  for (auto& l : loops_) {
    // Close admission, then wait out submitters that passed the check before it closed, so that
    // no task is posted after the loop stops (seq_cst pairs with Admission).
    l->accepting_.store(false, std::memory_order_seq_cst);
    while (l->submitting_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    l->work_.reset();
    l->ctx_->stop();
  }
  for (auto& l : loops_) {
    if (l->thread_.joinable()) l->thread_.join();
    l->terminated_.store(true, std::memory_order_release);
  }
}

}  // namespace netbuf
