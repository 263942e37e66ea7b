// RpcLoad (see rpc_load.hpp).

#include "rpc_load.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <netbuf/rpc/message_pack_rpc_client.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "latency_histogram.hpp"

namespace netbuf::tools {

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

/// One connection; after start, touched only by its client's loop thread (until the end).
struct Conn {
  Run* run = nullptr;
  std::size_t index = 0;
  std::unique_ptr<MessagePackRpcClient> client;
  LatencyHistogram histogram;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::string firstError;
  std::int64_t nextAdd = 0;
  std::vector<bool> putNext;  // per slot (put-get)
  std::atomic<std::size_t> inflight{0};

  void issue(std::size_t slot);
  void done(std::size_t slot, std::int64_t startNs, std::int64_t expected, RpcResult r);
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

void Conn::issue(std::size_t slot) {
  if (run->stopping.load(std::memory_order_relaxed)) {
    inflight.fetch_sub(1, std::memory_order_release);
    return;
  }
  const std::int64_t start = nowNs();
  const std::span<const std::byte> payload(run->payload);
  std::int64_t expected = -1;
  switch (run->options.method) {
    case RpcLoadMethod::Echo:
      expected = static_cast<std::int64_t>(payload.size());
      client->call(
          "echo", [payload](MessagePackWriter& w) { w.packArrayHeader(1).packBin(payload); },
          [this, slot, start, expected](RpcResult r) {
            done(slot, start, expected, std::move(r));
          });
      break;
    case RpcLoadMethod::Add: {
      const std::int64_t i = nextAdd++;
      expected = i + 1;
      client->call("add", {Value::integer(i), Value::integer(1)},
                   [this, slot, start, expected](RpcResult r) {
                     done(slot, start, expected, std::move(r));
                   });
      break;
    }
    case RpcLoadMethod::PutGet: {
      const std::string key = fmt::format("load-{}-{}", index, slot);
      if (putNext[slot]) {
        putNext[slot] = false;
        client->call(
            "put",
            [&key, payload](MessagePackWriter& w) {
              w.packArrayHeader(2).packStr(key).packBin(payload);
            },
            [this, slot, start](RpcResult r) { done(slot, start, -1, std::move(r)); });
      } else {
        putNext[slot] = true;
        expected = static_cast<std::int64_t>(payload.size());
        client->call(
            "get", [&key](MessagePackWriter& w) { w.packArrayHeader(1).packStr(key); },
            [this, slot, start, expected](RpcResult r) {
              done(slot, start, expected, std::move(r));
            });
      }
      break;
    }
  }
}

void Conn::done(std::size_t slot, std::int64_t startNs, std::int64_t expected, RpcResult r) {
  const std::int64_t end = nowNs();
  if (!r.ok()) {
    if (!run->stopping.load(std::memory_order_relaxed)) error(r.describe());
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
  if (r.status == RpcResult::Status::ConnectionLost) {
    // The connection is gone: this slot stops (a new call would only fail again).
    inflight.fetch_sub(1, std::memory_order_release);
    return;
  }
  issue(slot);
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
      c->client = std::make_unique<MessagePackRpcClient>(group, options.host, options.port, copt);
      ++result.connectionsOpened;
    } catch (const std::exception& e) {
      c->error(e.what());  // names the address already
    }
    conns.push_back(std::move(c));
  }

  const auto toNs = [](double s) { return static_cast<std::int64_t>(s * 1e9); };
  const std::int64_t start = nowNs();
  run.windowStart = start + toNs(options.warmupSeconds);
  run.windowEnd = run.windowStart + toNs(options.durationSeconds);
  for (auto& c : conns) {
    if (!c->client) continue;
    c->inflight.store(options.window, std::memory_order_relaxed);
    Conn* conn = c.get();
    c->client->eventLoop().execute([conn, w = options.window] {
      for (std::size_t slot = 0; slot < w; ++slot) conn->issue(slot);
    });
  }
  std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(run.windowEnd)));
  run.stopping.store(true, std::memory_order_relaxed);
  // Let the calls in flight finish (each stops issuing), then close everything.
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  for (auto& c : conns) {
    while (c->client && c->inflight.load(std::memory_order_acquire) != 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& c : conns) c->client.reset();
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
