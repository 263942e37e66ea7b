#pragma once
// EchoLoad: the echo load generator behind `netbuf load echo` and `netbuf bench echo`. Latencies
// are recorded in a LatencyHistogram (latency_histogram.hpp) per client thread.
//
// Each of C connections keeps W messages of N bytes in flight against an echo server:
//
//   connect all ─► write W messages (one batched write) ─► for every N bytes echoed back, send one
//   more (writes batch: one write in flight per connection, messages owed meanwhile go out
//   together in the next) ─► after warmup + duration, close everything and report.
//
// Message layout: | sequence number (8 bytes, little endian) | fixed pattern (N - 8 bytes) |.
// Echo preserves order, so replies complete FIFO: the send time of each message sits in a ring of
// W timestamps per connection, and the latency of a message is the time from the write that sent
// it to the read that completed its last byte. The client checks every sequence number comes back
// in order, and compares the pattern bytes in full for messages up to 1 KiB (only the first 64
// pattern bytes of larger ones: a cheap check, not a full compare of each 16 KiB).
//
// Only messages completed in the measuring window [start + warmup, start + warmup + duration)
// count. Socket errors, connect failures and mismatches are counted and reported, never thrown:
// a connection that fails is closed and the others go on; when every connection has failed, the
// run ends early.
//
// Threads: run() blocks; the connections are spread round robin over `threads` io_contexts, each
// run by its own thread with its own statistics (merged at the end), so the hot path takes no lock
// and allocates nothing per message. With TLS (EchoLoadOptions::tls) each of those is the one
// EventLoop of a group of its own instead (on the Asio transport, whatever NETBUF_TRANSPORT
// says), and the connections are netbuf channels on it. stop() may be called from any thread to
// end a run early.
//
// Progress: every connection thread adds the messages a read completed to one relaxed atomic
// counter (one fetch_add per completed read, not per message), which any thread may sample with
// messagesCompleted(). With EchoLoadOptions::onProgress set, run()'s own thread samples it every
// progressIntervalSeconds while the run goes and calls onProgress with a snapshot, then once more
// (EchoLoadProgress::last) when the connection threads have ended. Without it, run() just waits.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "latency_histogram.hpp"

namespace netbuf {
class JsonStreamWriter;
class SslContext;
}  // namespace netbuf

namespace netbuf::tools {

/// A snapshot of a run in progress, passed to EchoLoadOptions::onProgress.
struct EchoLoadProgress {
  double elapsedSeconds = 0;      ///< since the clock started (after connecting), warmup included
  double totalSeconds = 0;        ///< warmup + duration: when the run is due to end
  bool warmingUp = false;         ///< the interval began before the measuring window (warmup)
  bool last = false;              ///< the final call, made after the connection threads ended
  std::uint64_t messages = 0;     ///< messages completed since the clock started, warmup included
  double intervalSeconds = 0;     ///< since the previous call (or the start)
  double messagesPerSecond = 0;   ///< over that interval
  double megabytesPerSecond = 0;  ///< echoed payload over that interval, 1 MB = 1e6 bytes
  std::uint64_t errors = 0;       ///< connect failures, socket errors and mismatches so far
};

struct EchoLoadOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t connections = 1;
  std::size_t messageSize = 128;  ///< bytes per message, >= 8 (the sequence number)
  std::size_t window = 1;         ///< messages in flight per connection, >= 1
  double durationSeconds = 5.0;   ///< the measuring window
  double warmupSeconds = 0.5;     ///< runs before the window, not counted
  std::size_t threads = 1;        ///< client io_contexts/threads (capped at `connections`)
  /// Called on run()'s thread about every progressIntervalSeconds during the run, and once at the
  /// end (EchoLoadProgress::last); empty: no progress reporting. An exception it throws ends the
  /// run early and is rethrown by run() once the connection threads are joined.
  std::function<void(const EchoLoadProgress&)> onProgress;
  double progressIntervalSeconds = 0.5;  ///< in [0.01, 60]
  /// A process (the server, when it runs as its own process) whose CPU time over the measuring
  /// window is reported in EchoLoadResult::serverCpuSeconds; 0: none. Read from /proc (Linux).
  int serverPid = 0;
  /// Instead of serverPid, for a server in this process: returns the server's CPU seconds so far
  /// (negative: unknown). Called on a thread of run() at the window's start and end; should not
  /// throw (if it does, the server's CPU time is left unmeasured).
  std::function<double()> serverCpuClock;
  /// A client SslContext: every connection runs TLS, through a netbuf channel whose pipeline
  /// starts with tls->newHandler(host, port) (instead of a plain Asio socket), and its handshake
  /// completes before the clock starts (a failed one counts as a connect failure). nullptr:
  /// plain TCP.
  std::shared_ptr<SslContext> tls;

  /// Empty when valid, else what is wrong (run() throws std::invalid_argument with it).
  std::string validate() const;
};

struct EchoLoadResult {
  std::size_t connectionsRequested = 0;
  std::size_t connectionsOpened = 0;
  double seconds = 0;          ///< length of the measuring window actually run
  std::uint64_t messages = 0;  ///< echoed messages completed in the window
  std::uint64_t bytes = 0;     ///< echoed payload bytes of those messages (messages * N)
  double messagesPerSecond = 0;
  double megabytesPerSecond = 0;  ///< bytes / seconds / 1e6 (the echoed payload, counted once)
  std::uint64_t p50Ns = 0, p99Ns = 0, p999Ns = 0, maxNs = 0;  ///< latency in the window
  std::uint64_t errors = 0;      ///< connect failures and socket errors (any time)
  std::uint64_t mismatches = 0;  ///< echoed bytes that were not what was sent
  std::string firstError;        ///< the first error's description, empty if none
  /// CPU time (user + system, all threads) used in the measuring window by this process (the
  /// client, and any server running in the same process) and by
  /// EchoLoadOptions::serverPid (or serverCpuClock); negative when not measured (no server pid,
  /// /proc unreadable, or the run ended before the window began). 10 ms resolution (clock ticks).
  double clientCpuSeconds = -1;
  double serverCpuSeconds = -1;

  bool ok() const noexcept { return errors == 0 && mismatches == 0 && messages > 0; }
  /// serverCpuSeconds per message in microseconds; negative when not measured or when no message
  /// completed (no cost per message, rather than a cost of 0).
  double serverCpuMicrosPerMessage() const noexcept {
    return serverCpuSeconds >= 0 && messages != 0
               ? serverCpuSeconds * 1e6 / static_cast<double>(messages)
               : -1;
  }
};

class EchoLoad {
 public:
  explicit EchoLoad(EchoLoadOptions options);
  EchoLoad(const EchoLoad&) = delete;
  EchoLoad& operator=(const EchoLoad&) = delete;

  /// Connects, runs warmup + duration (or until stop() or every connection failed), and reports.
  /// Throws std::invalid_argument for invalid options; network failures are in the result.
  /// May be called again after it returned.
  EchoLoadResult run();

  /// Ends the run in progress early, and any later run() at once (after connecting): sticky.
  /// May be called from any thread.
  void stop() noexcept { stopRequested_.store(true, std::memory_order_relaxed); }

  const EchoLoadOptions& options() const noexcept { return options_; }

  /// Messages completed since the current (or last) run's clock started, warmup included; counts
  /// whole reads, so it may lag the connections by one read each. Any thread.
  std::uint64_t messagesCompleted() const noexcept {
    return completed_.load(std::memory_order_relaxed);
  }

 private:
  EchoLoadOptions options_;
  std::atomic<bool> stopRequested_{false};
  // Bumped by every connection thread: on its own cache line, away from the rest of the object.
  alignas(64) std::atomic<std::uint64_t> completed_{0};
  // Errors and mismatches counted so far (rare: bumped on the failure path only).
  alignas(64) std::atomic<std::uint64_t> failures_{0};
};

/// One human-readable table row (see echoTableHeader()) for a result.
std::string echoTableHeader();
std::string echoTableRow(const EchoLoadOptions& options, const EchoLoadResult& result);
/// The result as JSON members, written into the object `w` has open: connections, size, window,
/// threads, seconds, messages, msgs_per_s, mb_per_s, p50_us, p99_us, p999_us, max_us,
/// connections_opened, mismatches, errors; client_cpu_s, server_cpu_s and server_cpu_us_per_msg
/// when measured; first_error when there was one.
void writeEchoFields(JsonStreamWriter& w, const EchoLoadOptions& options,
                     const EchoLoadResult& result);
/// Those members as one compact JSON object.
std::string echoJson(const EchoLoadOptions& options, const EchoLoadResult& result);
/// One progress line without line ends, e.g.
/// "  2.0 s / 3.5 s     1,234,567 msgs/s     158.0 MB/s   errors 0".
std::string echoProgressLine(const EchoLoadProgress& progress);

}  // namespace netbuf::tools
