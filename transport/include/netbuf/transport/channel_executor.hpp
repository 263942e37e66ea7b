#pragma once
// ChannelExecutor: what a channel's handlers may use to run work on the channel's thread, now or
// later. EventLoop implements it for real channels; EmbeddedChannel implements it with a manual
// task queue and a virtual clock, so time-based handlers are testable without waiting.
//
// ScheduledTask: the handle schedule() returns (cancel from any thread).

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

namespace netbuf {

/// Handle on a task given to EventLoop::schedule(): cancel() it from any thread. Copyable; a
/// default-constructed handle refers to nothing.
class ScheduledTask {
 public:
  ScheduledTask() = default;
  /// Prevents the task from running if it has not started yet; returns false when it already
  /// started, was cancelled, or the handle is empty. (The timer still expires at its deadline and
  /// then does nothing; it does not hold back shutdown.)
  bool cancel() noexcept;
  /// True once the task has run (or started running).
  bool isDone() const noexcept;
  bool isCancelled() const noexcept;

 private:
  friend class EventLoop;
  friend class EmbeddedChannel;
  // Shared by the handle and the loop's timer handler. The timer itself belongs to the handler
  // (it must not outlive its io_context, which a handle may): a cancelled task's timer still
  // expires, finds the task cancelled and does nothing.
  struct State {
    enum : int { kWaiting, kStarted, kCancelled };
    std::atomic<int> phase{kWaiting};
  };
  explicit ScheduledTask(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

class ChannelExecutor;

namespace detail {
/// The executor whose thread this is (EventLoop::run sets it for its thread), or nullptr. It makes
/// the "am I on this channel's loop?" test of every channel operation one thread-local load and a
/// compare, with no call into the C library.
inline thread_local const ChannelExecutor* tCurrentExecutor = nullptr;
}  // namespace detail

class ChannelExecutor {
 public:
  /// Runs task on the executor's thread, after the tasks submitted before it.
  virtual void execute(std::function<void()> task) = 0;
  /// Runs task once delay has passed (by now()), unless cancelled first.
  virtual ScheduledTask schedule(std::chrono::nanoseconds delay, std::function<void()> task) = 0;
  /// True on the executor's thread.
  virtual bool inEventLoop() const noexcept = 0;
  /// The executor's clock (steady_clock, or EmbeddedChannel's virtual clock).
  virtual std::chrono::steady_clock::time_point now() const noexcept = 0;

 protected:
  ~ChannelExecutor() = default;
};

}  // namespace netbuf
