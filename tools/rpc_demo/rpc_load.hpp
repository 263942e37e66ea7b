#pragma once
// RpcLoad: the MessagePack-RPC load generator behind `netbuf load rpc`.
//
// C MessagePackRpcClients (one connection each, spread over `threads` event loops) each keep W
// calls in flight, in one of two styles, both on the client's loop (so the hot path takes no
// lock):
//   callback   every completed call issues the next one from its callback (a completion handler)
//   coroutine  W coroutines per connection, each awaiting one call after another (use_awaitable)
// Methods:
//   echo     echo([bin of N bytes])    checks the echoed bin's size
//   add      add(i, 1)                 checks the sum
//   put-get  put(key, bin of N bytes) then get(key), alternately per slot; checks get's bin size
// Latency: from call() to the completion (callback or resumed coroutine), recorded in a
// LatencyHistogram (latency_histogram.hpp) per connection, merged at the end. Only calls completed
// in [start + warmup, start + warmup + duration) count. Errors (error responses, timeouts, lost
// connections, wrong results) are counted and the first one is kept; they never throw.
#include <cstddef>
#include <cstdint>
#include <string>

namespace netbuf::tools {

enum class RpcLoadMethod { Echo, Add, PutGet };
enum class RpcLoadStyle { Callback, Coroutine };

struct RpcLoadOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t connections = 1;
  std::size_t window = 16;       ///< calls in flight per connection, >= 1
  double durationSeconds = 5.0;  ///< the measuring window
  double warmupSeconds = 0.5;
  RpcLoadMethod method = RpcLoadMethod::Echo;
  std::size_t payload = 16;  ///< bin bytes of echo / put
  std::size_t threads = 1;   ///< client event loops
  RpcLoadStyle style = RpcLoadStyle::Callback;

  /// Empty when valid, else what is wrong.
  std::string validate() const;
};

struct RpcLoadResult {
  std::size_t connectionsOpened = 0;
  double seconds = 0;
  std::uint64_t calls = 0;  ///< completed successfully in the window
  double callsPerSecond = 0;
  std::uint64_t p50Ns = 0, p99Ns = 0, p999Ns = 0, maxNs = 0;
  std::uint64_t errors = 0;  ///< any time
  std::string firstError;

  bool ok() const noexcept { return errors == 0 && calls > 0; }
};

/// Runs the load (blocking) and reports. Throws std::invalid_argument for invalid options;
/// connection failures are errors in the result.
RpcLoadResult runRpcLoad(const RpcLoadOptions& options);

const char* rpcLoadMethodName(RpcLoadMethod m) noexcept;
const char* rpcLoadStyleName(RpcLoadStyle s) noexcept;
bool parseRpcLoadStyle(const std::string& s, RpcLoadStyle& out) noexcept;
bool parseRpcLoadMethod(const std::string& s, RpcLoadMethod& out) noexcept;

}  // namespace netbuf::tools
