// MessagePackRpcClient::call allocates nothing per call once warmed up, with a callback and with
// use_awaitable: the call's state comes from the handler's associated allocator (Asio's per-thread
// recycling allocator by default), coroutine frames from Asio's frame recycling, request and
// response buffers from the pool, pending calls from a reused table. Counted with a replaced
// operator new on the client's loop thread, where calls are issued and completed and the
// client's I/O runs, against a MessagePackRpcServer over loopback TCP (its own loop, not counted).
// (Not under TSan: see support/replaced_operator_new.hpp.)
#include <netbuf/rpc/message_pack_rpc_client.hpp>

#include <doctest/doctest.h>

#include "support/replaced_operator_new.hpp"

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <netbuf/rpc/message_pack_rpc_server.hpp>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using netbuf::test::tAllocations;

namespace {

constexpr int kWarmUp = 20000;
constexpr int kMeasured = 20000;
constexpr int kWindow = 16;  // calls in flight

struct Fixture {
  EventLoopGroup serverGroup{1};
  EventLoopGroup clientGroup{1};
  MessagePackRpcServer rpc;
  std::shared_ptr<ServerChannel> server;
  MessagePackRpcClient client;

  Fixture() {
    test::disableLeakDetection();
    rpc.method(
        "add",
        [](std::span<const Value> p, MessagePackWriter& r) {
          r.packInt(p[0].asInt64() + p[1].asInt64());
        },
        2);
    server = rpc.bind(serverGroup, "127.0.0.1", 0);
    client =
        MessagePackRpcClient::connect(clientGroup, "127.0.0.1", server->port(), asio::use_future)
            .get();
  }
  ~Fixture() {
    client = MessagePackRpcClient();
    server->close();
    server->closeChildren();
    clientGroup.shutdownGracefully(0ms, 5s);
    serverGroup.shutdownGracefully(0ms, 5s);
  }
};

/// Counts completed calls (on the loop) and the loop thread's allocations between the end of the
/// warm-up and the last completion.
struct Window {
  int issued = 0;
  int completed = 0;
  int wrong = 0;
  std::uint64_t atWarm = 0;
  std::uint64_t atEnd = 0;
  std::promise<void> done;
  /// Records a completion; true while more calls are to be issued.
  bool complete(const ErrorCode& ec, const RpcResult& r, std::int64_t expected) {
    if (ec || r.value.asInt64() != expected) ++wrong;
    ++completed;
    if (completed == kWarmUp) atWarm = tAllocations;
    if (completed == kWarmUp + kMeasured) {
      atEnd = tAllocations;
      done.set_value();
    }
    return issued < kWarmUp + kMeasured;
  }
};

/// kWindow chains of calls, each issued from the previous one's callback.
struct CallbackCaller {
  Fixture* f;
  Window* w;
  void issue() {
    const std::int64_t n = w->issued++;
    f->client.call("add", {Value::integer(n), Value::integer(1)},
                   [this, n](ErrorCode ec, RpcResult r) {
                     if (w->complete(ec, r, n + 1)) issue();
                   });
  }
};

/// One of kWindow coroutines, each awaiting one call after another.
asio::awaitable<void> coroutineCaller(Fixture* f, Window* w) {
  while (w->issued < kWarmUp + kMeasured) {
    const std::int64_t n = w->issued++;
    // (Parameters in a named array: g++ 12 miscompiles an initializer_list inside co_await.)
    const std::array<Value, 2> params{Value::integer(n), Value::integer(1)};
    ErrorCode ec;
    RpcResult r;
    try {
      r = co_await f->client.call("add", Value::arrayView(params), asio::use_awaitable);
    } catch (const boost::system::system_error& e) {
      ec = e.code();
    }
    w->complete(ec, r, n + 1);
  }
}

}  // namespace

TEST_CASE("call with a callback: no allocation per call after warm-up") {
  Window w;
  CallbackCaller caller{nullptr, &w};
  Fixture f;  // destroyed first: its loops are stopped before w and caller go
  caller.f = &f;
  f.client.eventLoop().execute([&] {
    for (int i = 0; i < kWindow; ++i) caller.issue();
  });
  auto done = w.done.get_future();
  REQUIRE(done.wait_for(60s) == std::future_status::ready);
  CHECK(w.wrong == 0);
  CHECK(w.atEnd - w.atWarm == 0);
}

TEST_CASE("call with use_awaitable: no allocation per call after warm-up") {
  Window w;
  Fixture f;  // destroyed first: its loops are stopped before w goes
  for (int i = 0; i < kWindow; ++i) {
    asio::co_spawn(f.client.eventLoop().get_executor(), coroutineCaller(&f, &w), asio::detached);
  }
  auto done = w.done.get_future();
  REQUIRE(done.wait_for(60s) == std::future_status::ready);
  CHECK(w.wrong == 0);
  CHECK(w.atEnd - w.atWarm == 0);
}
