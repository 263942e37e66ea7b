#pragma once
// The counters both echo servers keep (netbuf's own and the plain-Asio floor), and their read side.
// They are shared (std::shared_ptr) with the servers' sessions, which may outlive a stop() until
// their last handler is destroyed; every counter is a relaxed atomic, readable from any thread.
// The I/O thread ids (for cpuSeconds()) are under a mutex; start() returns once every I/O thread
// has recorded its id, so a CPU reading right after start() covers them all.

#include "cpu_time.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace netbuf::tools {

struct EchoServerStats {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> open{0};
  std::atomic<std::uint64_t> bytesEchoed{0};
  std::atomic<std::uint64_t> datagrams{0};  // UDP: datagrams echoed
  /// Exceptions thrown by handlers and caught by the server's threads (the Asio server; netbuf's
  /// server routes them through its pipeline instead, which closes the channel).
  std::atomic<std::uint64_t> handlerFailures{0};

  /// Called by each of the server's I/O threads when it starts, so that cpuSeconds() can sum them.
  void recordThisThread() {
    {
      const std::lock_guard lock(threadsMutex);
      threadIds.push_back(currentThreadId());
    }
    threadRecorded.notify_all();
  }
  /// Called by start(): returns once n I/O threads have recorded their ids.
  void waitForThreads(std::size_t n) {
    std::unique_lock lock(threadsMutex);
    threadRecorded.wait(lock, [&] { return threadIds.size() >= n; });
  }
  /// Called by stop() once the threads have been joined.
  void forgetThreads() {
    const std::lock_guard lock(threadsMutex);
    threadIds.clear();
  }
  std::mutex threadsMutex;
  std::condition_variable threadRecorded;
  std::vector<int> threadIds;  // of the running server's I/O threads
};

/// Base of both echo servers: the counters and their accessors.
class EchoServerCounters {
 public:
  using Stats = EchoServerStats;

  /// Connections accepted since construction, and connections open now.
  std::uint64_t connectionsAccepted() const noexcept {
    return stats_->accepted.load(std::memory_order_relaxed);
  }
  std::uint64_t connectionsOpen() const noexcept {
    return stats_->open.load(std::memory_order_relaxed);
  }
  /// Bytes echoed (written back) since construction.
  std::uint64_t bytesEchoed() const noexcept {
    return stats_->bytesEchoed.load(std::memory_order_relaxed);
  }
  /// UDP datagrams echoed since construction.
  std::uint64_t datagramsEchoed() const noexcept {
    return stats_->datagrams.load(std::memory_order_relaxed);
  }
  /// CPU time (user + system) the server's I/O threads have used so far, summed over those still
  /// running (threadCpuSeconds: /proc, clock ticks); negative while none runs.
  double cpuSeconds() const {
    const std::lock_guard lock(stats_->threadsMutex);
    double sum = -1;
    for (int tid : stats_->threadIds) {
      const double t = threadCpuSeconds(tid);
      if (t >= 0) sum = (sum < 0 ? 0 : sum) + t;
    }
    return sum;
  }

 protected:
  EchoServerCounters() = default;
  ~EchoServerCounters() = default;

  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
};

}  // namespace netbuf::tools
