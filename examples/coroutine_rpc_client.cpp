// A MessagePack-RPC client written as a coroutine: connect, one call, then calls in flight at once
// -- two different calls joined with asio::experimental::make_parallel_group, and a batch of
// concurrent co_spawned calls -- all awaited with asio::use_awaitable.
//
//   build/release/tools/netbuf serve rpc --port 7001 &
//   build/release/examples/coroutine_rpc_client 127.0.0.1 7001
//
// `coroutine_rpc_client --self-test` starts a MessagePack-RPC server (add, echo) in-process on a
// free port, runs the same coroutine against it and exits 0 when every result is right (CTest
// runs it so).

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <netbuf/netbuf.hpp>
#include <netbuf/rpc/message_pack_rpc_client.hpp>
#include <netbuf/rpc/message_pack_rpc_server.hpp>
#include <string>

namespace {

using namespace netbuf;
namespace asio = boost::asio;
using namespace std::chrono_literals;

/// The parameters [a, b], written straight into the request.
auto pair(std::int64_t a, std::int64_t b) {
  return [a, b](MessagePackWriter& w) { w.packArrayHeader(2).packInt(a).packInt(b); };
}

/// One call of the batch: add(i, i), counted when its result is right.
asio::awaitable<void> addOne(MessagePackRpcClient& client, std::int64_t i, int& right) {
  RpcResult r = co_await client.call("add", pair(i, i), asio::use_awaitable);
  if (r.value.asInt64() == 2 * i) ++right;
}

/// The whole conversation; returns how many results were wrong.
asio::awaitable<int> converse(EventLoopGroup& group, std::string host, unsigned short port) {
  int wrong = 0;
  MessagePackRpcClient client =
      co_await MessagePackRpcClient::connect(group, host, port, asio::use_awaitable);

  // One call at a time.
  RpcResult sum = co_await client.call("add", pair(40, 2), asio::use_awaitable);
  fmt::print("add(40, 2) = {}\n", sum.value.asInt64());
  wrong += sum.value.asInt64() != 42;

  // Two calls in flight at once, joined: both requests go out before either answer arrives.
  auto [order, addError, added, echoError, echoed] =
      co_await asio::experimental::make_parallel_group(
          client.call("add", pair(1, 2), asio::deferred),
          client.call(
              "echo", [](MessagePackWriter& w) { w.packArrayHeader(1).packStr("pipelined"); },
              asio::deferred))
          .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
  fmt::print("in parallel: add(1, 2) = {}, echo = {} (first done: call {})\n",
             added.value.asInt64(), echoed.value.toDebugString(), order[0]);
  wrong += addError || echoError || added.value.asInt64() != 3;

  // A batch of 100 calls, each its own coroutine on the client's loop, awaited together with a
  // timer that polls their count (a plain way to join detached coroutines).
  int right = 0;
  for (std::int64_t i = 0; i < 100; ++i)
    asio::co_spawn(co_await asio::this_coro::executor, addOne(client, i, right), asio::detached);
  asio::steady_timer poll(co_await asio::this_coro::executor);
  for (int tries = 0; right < 100 && tries < 1000; ++tries) {
    poll.expires_after(5ms);
    co_await poll.async_wait(asio::use_awaitable);
  }
  fmt::print("batch: {} of 100 concurrent calls right\n", right);
  wrong += 100 - right;

  // A server-side error arrives as an exception (or, with asio::as_tuple, as an error code
  // beside the server's error value).
  try {
    co_await client.call("nosuchmethod", pair(0, 0), asio::use_awaitable);
    ++wrong;
  } catch (const boost::system::system_error& e) {
    fmt::print("nosuchmethod: {}\n", e.code().message());
    wrong += e.code() != RpcErrc::errorResponse;
  }
  co_return wrong;
}

int run(const std::string& host, unsigned short port) {
  EventLoopGroup group(1);
  auto wrong =
      asio::co_spawn(group.loop(0).get_executor(), converse(group, host, port), asio::use_future);
  int result = 1;
  try {
    result = wrong.get() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "coroutine_rpc_client: {}\n", e.what());
  }
  group.shutdownGracefully(0ms, 2s);
  return result;
}

int selfTest() {
  EventLoopGroup serverGroup(1);
  MessagePackRpcServer rpc;
  rpc.method(
         "add",
         [](std::span<const Value> p, MessagePackWriter& r) {
           r.packInt(p[0].asInt64() + p[1].asInt64());
         },
         2)
      .method("echo",
              [](std::span<const Value> p, MessagePackWriter& r) { r.pack(Value::arrayView(p)); });
  auto server = rpc.bind(serverGroup, "127.0.0.1", 0);
  const int rc = run("127.0.0.1", server->port());
  server->close(asio::use_future).get();
  server->closeChildren();
  serverGroup.shutdownGracefully(0ms, 2s);
  fmt::print("coroutine_rpc_client self-test: {}\n", rc == 0 ? "ok" : "FAILED");
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--self-test") return selfTest();
  const std::string host = argc > 1 ? argv[1] : "127.0.0.1";
  const unsigned short port = argc > 2 ? static_cast<unsigned short>(std::atoi(argv[2]))
                                       : static_cast<unsigned short>(7001);
  return run(host, port);
}
