// RpcLoad (see rpc_load.hpp).

#include "rpc_load.hpp"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <memory>
#include <netbuf/rpc/message_pack_rpc_client.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "latency_histogram.hpp"

namespace netbuf::tools {

namespace asio = boost::asio;

const char* rpcLoadStyleName(RpcLoadStyle s) noexcept {
  return s == RpcLoadStyle::Coroutine ? "coroutine" : "callback";
}

bool parseRpcLoadStyle(const std::string& s, RpcLoadStyle& out) noexcept {
  if (s == "callback") {
    out = RpcLoadStyle::Callback;
  } else if (s == "coroutine") {
    out = RpcLoadStyle::Coroutine;
  } else {
    return false;
  }
  return true;
}

const char* rpcLoadMethodName(RpcLoadMethod m) noexcept {
  switch (m) {
    case RpcLoadMethod::Echo:
      return "echo";
    case RpcLoadMethod::Add:
      return "add";
    case RpcLoadMethod::PutGet:
      return "put-get";
  }
  return "?";
}

bool parseRpcLoadMethod(const std::string& s, RpcLoadMethod& out) noexcept {
  if (s == "echo") {
    out = RpcLoadMethod::Echo;
  } else if (s == "add") {
    out = RpcLoadMethod::Add;
  } else if (s == "put-get") {
    out = RpcLoadMethod::PutGet;
  } else {
    return false;
  }
  return true;
}

std::string RpcLoadOptions::validate() const {
  if (port == 0) return "--port is required (1..65535)";
  if (connections < 1 || connections > 10000) return "--connections must be in [1, 10000]";
  if (window < 1 || window > 100000) return "--window must be in [1, 100000]";
  if (!(durationSeconds > 0)) return "--seconds must be > 0";
  if (payload > (std::size_t{16} << 20)) return "--payload must be at most 16 MiB";
  if (threads < 1 || threads > 256) return "--threads must be in [1, 256]";
  return {};
}

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

struct Run;

/// What one call of a slot sends, and the result it expects.
struct Plan {
  RpcLoadMethod method;
  bool put = false;            // put-get: put (else get)
  std::int64_t addArg = 0;     // add: the first argument
  std::int64_t expected = -1;  // echo, get: the bin's size; add: the sum; put: -1 (nil)
  std::string key;             // put-get
};

/// One connection; after start, touched only by its client's loop thread (until the end).
struct Conn {
  Run* run = nullptr;
  std::size_t index = 0;
  MessagePackRpcClient client;
  LatencyHistogram histogram;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::string firstError;
  std::int64_t nextAdd = 0;
  std::vector<bool> putNext;  // per slot (put-get)
  std::atomic<std::size_t> inflight{0};

  /// The next call of slot (advances the add counter and the put/get alternation).
  Plan plan(std::size_t slot);
  /// Starts the call p describes, completing through token.
  template <class Token>
  auto call(const Plan& p, Token&& token);
  /// The callback style: a call whose callback records it and issues the slot's next call.
  void issue(std::size_t slot);
  /// The coroutine style: one coroutine per slot, awaiting one call after another.
  asio::awaitable<void> slotLoop(std::size_t slot);
  /// Records a completed call; false when the slot must stop (the connection is gone).
  bool done(std::int64_t startNs, std::int64_t expected, const ErrorCode& ec, const RpcResult& r);
  void error(std::string what) {
    ++errors;
    if (firstError.empty()) firstError = std::move(what);
  }
};

struct Run {
  RpcLoadOptions options;
  std::vector<std::byte> payload;
  std::int64_t windowStart = 0, windowEnd = 0;
  std::atomic<bool> stopping{false};
};

Plan Conn::plan(std::size_t slot) {
  Plan p;
  p.method = run->options.method;
  switch (p.method) {
    case RpcLoadMethod::Echo:
      p.expected = static_cast<std::int64_t>(run->payload.size());
      break;
    case RpcLoadMethod::Add:
      p.addArg = nextAdd++;
      p.expected = p.addArg + 1;
      break;
    case RpcLoadMethod::PutGet:
      p.key = fmt::format("load-{}-{}", index, slot);
      p.put = putNext[slot];
      putNext[slot] = !p.put;
      p.expected = p.put ? -1 : static_cast<std::int64_t>(run->payload.size());
      break;
  }
  return p;
}

template <class Token>
auto Conn::call(const Plan& p, Token&& token) {
  const std::span<const std::byte> payload(run->payload);
  switch (p.method) {
    case RpcLoadMethod::Echo:
      break;
    case RpcLoadMethod::Add:
      return client.call("add", {Value::integer(p.addArg), Value::integer(1)},
                         std::forward<Token>(token));
    case RpcLoadMethod::PutGet:
      if (p.put) {
        return client.call(
            "put",
            [&p, payload](MessagePackWriter& w) {
              w.packArrayHeader(2).packStr(p.key).packBin(payload);
            },
            std::forward<Token>(token));
      }
      return client.call(
          "get", [&p](MessagePackWriter& w) { w.packArrayHeader(1).packStr(p.key); },
          std::forward<Token>(token));
  }
  return client.call(
      "echo", [payload](MessagePackWriter& w) { w.packArrayHeader(1).packBin(payload); },
      std::forward<Token>(token));
}

void Conn::issue(std::size_t slot) {
  if (run->stopping.load(std::memory_order_relaxed)) {
    inflight.fetch_sub(1, std::memory_order_release);
    return;
  }
  const std::int64_t startNs = nowNs();
  const Plan p = plan(slot);
  call(p, [this, slot, startNs, expected = p.expected](ErrorCode ec, RpcResult r) {
    if (done(startNs, expected, ec, r)) {
      issue(slot);
    } else {
      inflight.fetch_sub(1, std::memory_order_release);
    }
  });
}

asio::awaitable<void> Conn::slotLoop(std::size_t slot) {
  while (!run->stopping.load(std::memory_order_relaxed)) {
    const std::int64_t startNs = nowNs();
    const Plan p = plan(slot);
    auto [ec, r] = co_await call(p, asio::as_tuple(asio::use_awaitable));
    if (!done(startNs, p.expected, ec, r)) break;
  }
  inflight.fetch_sub(1, std::memory_order_release);
}

bool Conn::done(std::int64_t startNs, std::int64_t expected, const ErrorCode& ec,
                const RpcResult& r) {
  const std::int64_t end = nowNs();
  if (ec) {
    if (!run->stopping.load(std::memory_order_relaxed)) error(r.describe(ec));
  } else {
    bool good = true;
    switch (run->options.method) {
      case RpcLoadMethod::Echo:
        good = r.value.isArray() && r.value.size() == 1 && r.value[0].isBin() &&
               static_cast<std::int64_t>(r.value[0].size()) == expected;
        break;
      case RpcLoadMethod::Add:
        good = r.value.isInteger() && r.value.asInt64() == expected;
        break;
      case RpcLoadMethod::PutGet:
        good = expected < 0
                   ? r.value.isNil()
                   : r.value.isBin() && static_cast<std::int64_t>(r.value.size()) == expected;
        break;
    }
    if (!good) {
      error(fmt::format("unexpected result {} (msgid {})", r.value.toDebugString(), r.msgid));
    } else if (end >= run->windowStart && end < run->windowEnd) {
      ++calls;
      histogram.record(static_cast<std::uint64_t>(end - startNs));
    }
  }
  // The connection is gone: this slot stops (a new call would only fail again).
  return ec != RpcErrc::connectionLost && ec != ChannelErrc::rejected;
}

}  // namespace

RpcLoadResult runRpcLoad(const RpcLoadOptions& options) {
  if (const std::string why = options.validate(); !why.empty()) throw std::invalid_argument(why);
  Run run;
  run.options = options;
  run.payload.resize(options.payload);
  for (std::size_t i = 0; i < run.payload.size(); ++i)
    run.payload[i] = static_cast<std::byte>((i * 131 + 7) & 0xff);

  RpcLoadResult result;
  EventLoopGroup group(std::min(options.threads, options.connections));
  std::vector<std::unique_ptr<Conn>> conns;
  for (std::size_t i = 0; i < options.connections; ++i) {
    auto c = std::make_unique<Conn>();
    c->run = &run;
    c->index = i;
    c->putNext.assign(options.window, true);
    try {
      MessagePackRpcClient::Options copt;
      copt.callTimeout = std::chrono::milliseconds(10000);
      c->client =
          MessagePackRpcClient::connect(group, options.host, options.port, copt, asio::use_future)
              .get();
      ++result.connectionsOpened;
    } catch (const std::exception& e) {
      c->error(fmt::format("connect to {}:{}: {}", options.host, options.port, e.what()));
    }
    conns.push_back(std::move(c));
  }

  const auto toNs = [](double s) { return static_cast<std::int64_t>(s * 1e9); };
  const std::int64_t start = nowNs();
  run.windowStart = start + toNs(options.warmupSeconds);
  run.windowEnd = run.windowStart + toNs(options.durationSeconds);
  for (auto& c : conns) {
    if (!c->client.isConnected()) continue;
    c->inflight.store(options.window, std::memory_order_relaxed);
    Conn* conn = c.get();
    if (options.style == RpcLoadStyle::Coroutine) {
      for (std::size_t slot = 0; slot < options.window; ++slot)
        asio::co_spawn(conn->client.eventLoop().get_executor(), conn->slotLoop(slot),
                       asio::detached);
    } else {
      conn->client.eventLoop().execute([conn, w = options.window] {
        for (std::size_t slot = 0; slot < w; ++slot) conn->issue(slot);
      });
    }
  }
  std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(run.windowEnd)));
  run.stopping.store(true, std::memory_order_relaxed);
  // Let the calls in flight finish (each stops issuing), then close everything.
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  for (auto& c : conns) {
    while (c->client.isConnected() && c->inflight.load(std::memory_order_acquire) != 0 &&
           Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& c : conns) c->client.close();
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));

  LatencyHistogram all;
  for (auto& c : conns) {
    all.merge(c->histogram);
    result.calls += c->calls;
    result.errors += c->errors;
    if (result.firstError.empty()) result.firstError = c->firstError;
  }
  result.seconds = options.durationSeconds;
  result.callsPerSecond = static_cast<double>(result.calls) / options.durationSeconds;
  result.p50Ns = all.percentile(0.50);
  result.p99Ns = all.percentile(0.99);
  result.p999Ns = all.percentile(0.999);
  result.maxNs = all.max();
  return result;
}

}  // namespace netbuf::tools
