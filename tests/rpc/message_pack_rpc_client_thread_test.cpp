// MessagePackRpcClient against a MessagePackRpcServer over loopback TCP: every completion token
// (callbacks, use_future, as_tuple, use_awaitable, deferred, parallel groups), results and error
// codes, pipelining, timeouts, cancellation, connection loss, a loop stopped with calls pending,
// msgid wrap-around, calls from many threads. Run under ThreadSanitizer ("threaded").
#include <netbuf/rpc/message_pack_rpc_client.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/rpc/message_pack_rpc_server.hpp>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

using netbuf::test::eventually;

/// A server on its own group: add, echo, sleep(ms) (answers with ms after ms), park (answered
/// only when the test releases it).
struct TcpFixture {
  EventLoopGroup group{2};
  MessagePackRpcServer rpc;
  std::shared_ptr<ServerChannel> server;
  std::mutex m;
  std::vector<std::shared_ptr<RpcCall>> parked;

  TcpFixture() {
    rpc.method(
           "add",
           [](std::span<const Value> p, MessagePackWriter& r) {
             r.packInt(p[0].asInt64() + p[1].asInt64());
           },
           2)
        .method("echo",
                [](std::span<const Value> p, MessagePackWriter& r) { r.pack(Value::arrayView(p)); })
        .asyncMethod(
            "sleep",
            [](RpcCall call) {
              const auto ms = std::chrono::milliseconds(call.params()[0].asInt64());
              auto shared = std::make_shared<RpcCall>(std::move(call));
              shared->executor().schedule(
                  ms, [shared] { shared->reply(Value::uinteger(shared->params()[0].asUInt64())); });
            },
            1)
        .asyncMethod("park", [this](RpcCall call) {
          std::lock_guard<std::mutex> g(m);
          parked.push_back(std::make_shared<RpcCall>(std::move(call)));
        });
    server = rpc.bind(group, "127.0.0.1", 0);
  }
  ~TcpFixture() {
    server->close();
    server->closeChildren();
    {
      std::lock_guard<std::mutex> g(m);
      parked.clear();
    }
    group.shutdownGracefully(0ms, 5s);
  }
  unsigned short port() const { return server->port(); }
  std::size_t parkedCount() {
    std::lock_guard<std::mutex> g(m);
    return parked.size();
  }
};

MessagePackRpcClient connect(EventLoopGroup& group, unsigned short port,
                             const MessagePackRpcClient::Options& options = {}) {
  return MessagePackRpcClient::connect(group, "127.0.0.1", port, options, asio::use_future).get();
}

using Outcome = std::tuple<ErrorCode, RpcResult>;

/// The (error code, result) an operation completes with, through a callback (for a test thread
/// to wait on); start(handler) starts the operation.
template <class... T, class Start>
std::future<std::tuple<ErrorCode, T...>> outcome(Start start) {
  auto p = std::make_shared<std::promise<std::tuple<ErrorCode, T...>>>();
  auto f = p->get_future();
  start([p](ErrorCode ec, T... values) { p->set_value({ec, std::move(values)...}); });
  return f;
}
template <class Start>
std::future<Outcome> callOutcome(Start start) {
  return outcome<RpcResult>(std::move(start));
}

Value noParams() { return Value::arrayView({}); }

}  // namespace

TEST_CASE("client: results and error codes through callbacks, use_future and as_tuple") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    CHECK(eventually([&] { return client.isConnected(); }));

    RpcResult r =
        client.call("add", {Value::integer(20), Value::integer(22)}, asio::use_future).get();
    CHECK(r.value.asInt64() == 42);
    CHECK(r.describe({}) == "Ok");

    // An error response: an error code, with the server's error value beside it.
    auto [ec, err] = callOutcome([&](auto h) { client.call("nope", noParams(), h); }).get();
    CHECK(ec == RpcErrc::errorResponse);
    CHECK(ec == std::errc::protocol_error);
    CHECK(err.value.asStr() == "NoMethodError: nope");
    CHECK(err.describe(ec) == "Error: \"NoMethodError: nope\"");
    // use_future alone throws it.
    try {
      client.call("nope", noParams(), asio::use_future).get();
      FAIL("an error response did not throw");
    } catch (const boost::system::system_error& e) {
      CHECK(e.code() == RpcErrc::errorResponse);
    }

    // Parameters written by a function; a bin comes back as a bin.
    r = client
            .call(
                "echo",
                [](MessagePackWriter& w) {
                  w.packArrayHeader(2).packStr("s").packBin(std::span<const std::byte>());
                },
                asio::use_future)
            .get();
    CHECK(r.value[0].asStr() == "s");
    CHECK(r.value[1].isBin());

    // A callback runs on the client's loop, with the error code first.
    std::promise<std::pair<bool, std::int64_t>> cb;
    client.call("add", {Value::integer(1), Value::integer(2)}, [&](ErrorCode e, RpcResult x) {
      cb.set_value({client.eventLoop().inEventLoop() && !e, x.value.asInt64()});
    });
    CHECK(cb.get_future().get() == std::pair<bool, std::int64_t>{true, 3});

    // A notification completes once written; the server counts it.
    client.notify("echo", {Value::integer(1)}, asio::use_future).get();
    CHECK(eventually([&] { return f.rpc.stats().notifications == 1; }));

    // Parameters that are not an array are refused before anything is sent.
    CHECK_THROWS_AS(client.call("x", Value::integer(1), [](ErrorCode, RpcResult) {}), EncoderError);
    CHECK(client.pendingCalls() == 0);
  }
  // A client that is not connected refuses its operations.
  MessagePackRpcClient none;
  CHECK_FALSE(none.isConnected());
  CHECK(none.pendingCalls() == 0);
  CHECK_THROWS_AS(none.call("add", noParams(), asio::detached), IllegalStateError);
  CHECK_THROWS_AS(none.eventLoop(), IllegalStateError);
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: 1000 pipelined calls, responses matched by msgid") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    std::atomic<int> ok{0}, bad{0};
    std::promise<void> all;
    std::atomic<int> done{0};
    for (int i = 0; i < 1000; ++i) {
      client.call("add", {Value::integer(i), Value::integer(1000)},
                  [&, i](ErrorCode ec, RpcResult r) {
                    if (!ec && r.value.asInt64() == i + 1000) {
                      ++ok;
                    } else {
                      ++bad;
                    }
                    if (++done == 1000) all.set_value();
                  });
    }
    REQUIRE(all.get_future().wait_for(20s) == std::future_status::ready);
    CHECK(ok == 1000);
    CHECK(bad == 0);
    CHECK(client.pendingCalls() == 0);

    // Calls issued from the loop itself (callbacks calling again) pipeline too.
    std::promise<int> chain;
    std::function<void(int)> next;
    next = [&](int n) {
      if (n == 200) return chain.set_value(n);
      client.call("add", {Value::integer(n), Value::integer(1)}, [&](ErrorCode ec, RpcResult r) {
        next(ec ? -1 : static_cast<int>(r.value.asInt64()));
      });
    };
    client.eventLoop().execute([&] { next(0); });
    auto fut = chain.get_future();
    REQUIRE(fut.wait_for(20s) == std::future_status::ready);
    CHECK(fut.get() == 200);
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: out-of-order responses with sleep") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    std::mutex m;
    std::vector<std::uint32_t> order;
    std::atomic<int> done{0};
    for (int ms : {300, 10, 0}) {
      client.call("sleep", {Value::integer(ms)}, [&](ErrorCode ec, RpcResult r) {
        CHECK(!ec);
        std::lock_guard<std::mutex> g(m);
        order.push_back(static_cast<std::uint32_t>(r.value.asUInt64()));
        ++done;
      });
    }
    CHECK(eventually([&] { return done == 3; }));
    std::lock_guard<std::mutex> g(m);
    CHECK(order == std::vector<std::uint32_t>{0, 10, 300});
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: timeouts, late responses ignored") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient::Options opt;
    opt.callTimeout = 100ms;
    MessagePackRpcClient client = connect(clientGroup, f.port(), opt);
    const auto t0 = std::chrono::steady_clock::now();
    auto [ec, r] =
        callOutcome([&](auto h) { client.call("sleep", {Value::integer(400)}, h); }).get();
    const auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(ec == RpcErrc::timedOut);
    CHECK(ec == std::errc::timed_out);
    CHECK_FALSE(r.message.empty());
    CHECK(waited >= 100ms);
    CHECK(waited < 350ms);
    // A per-call timeout overrides the default; zero disables.
    CHECK(client.call("sleep", {Value::integer(150)}, 2000ms, asio::use_future)
              .get()
              .value.asInt64() == 150);
    CHECK(
        client.call("sleep", {Value::integer(150)}, 0ms, asio::use_future).get().value.asInt64() ==
        150);
    // A short timeout armed after a longer one fires first.
    std::atomic<int> timeouts{0};
    client.call("sleep", {Value::integer(1000)}, 800ms, [&](ErrorCode e, RpcResult) {
      if (e == RpcErrc::timedOut) ++timeouts;
    });
    auto [ec2, r2] =
        callOutcome([&](auto h) { client.call("sleep", {Value::integer(1000)}, 50ms, h); }).get();
    CHECK(ec2 == RpcErrc::timedOut);
    CHECK(timeouts == 0);
    CHECK(eventually([&] { return timeouts == 1; }));
    // The late responses (the 400 ms and 1000 ms sleeps) arrive and are ignored.
    CHECK(eventually([&] { return client.lateResponses() >= 2; }));
    CHECK(client.pendingCalls() == 0);
    CHECK(client.call("add", {Value::integer(1), Value::integer(2)}, asio::use_future)
              .get()
              .value.asInt64() == 3);
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: connection loss fails every pending call, and every call after it") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    std::atomic<int> lost{0};
    for (int i = 0; i < 20; ++i) {
      client.call("park", noParams(), [&](ErrorCode ec, RpcResult) {
        if (ec == RpcErrc::connectionLost) ++lost;
      });
    }
    CHECK(eventually([&] { return f.parkedCount() == 20; }));
    CHECK(client.pendingCalls() == 20);
    f.server->closeChildren();  // the server drops the connection
    CHECK(eventually([&] { return lost == 20; }));
    CHECK(client.pendingCalls() == 0);
    CHECK(eventually([&] { return !client.isConnected(); }));
    // Calls after the loss fail at once, saying why.
    auto [ec, r] = callOutcome([&](auto h) {
                     client.call("add", {Value::integer(1), Value::integer(2)}, h);
                   }).get();
    CHECK(ec == RpcErrc::connectionLost);
    CHECK(ec == std::errc::connection_aborted);
    CHECK_FALSE(r.message.empty());
    auto [nec] = outcome<>([&](auto h) { client.notify("add", {Value::integer(1)}, h); }).get();
    CHECK(nec == ChannelErrc::closed);
    // A callback that calls again on a lost connection (as a load generator refilling its window
    // does) is completed from a later loop task, never inside call(): 100,000 rounds must not grow
    // the stack.
    std::atomic<int> rounds{0};
    std::function<void(ErrorCode, RpcResult)> again = [&](ErrorCode e, RpcResult) {
      CHECK(e == RpcErrc::connectionLost);
      if (++rounds < 100000) client.call("add", noParams(), again);
    };
    client.eventLoop().execute([&] { client.call("add", noParams(), again); });
    CHECK(eventually([&] { return rounds == 100000; }));
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: a timeout too large for the clock means no timeout") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    std::mutex m;
    std::optional<ErrorCode> code;
    client.call("park", noParams(), std::chrono::milliseconds::max(), [&](ErrorCode ec, RpcResult) {
      std::lock_guard<std::mutex> g(m);
      code = ec;
    });
    const auto seen = [&] {
      std::lock_guard<std::mutex> g(m);
      return code;
    };
    CHECK(eventually([&] { return f.parkedCount() == 1; }));
    std::this_thread::sleep_for(50ms);
    CHECK_FALSE(seen().has_value());  // not timed out at once (the deadline did not overflow)
    CHECK(client.pendingCalls() == 1);
    f.server->closeChildren();
    CHECK(eventually([&] { return seen() == ErrorCode(RpcErrc::connectionLost); }));
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: close(), the destructor and a move-assignment fail pending calls") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  std::atomic<int> lost{0};
  auto park = [&](MessagePackRpcClient& c) {
    c.call("park", noParams(), [&lost](ErrorCode ec, RpcResult) {
      if (ec == RpcErrc::connectionLost) ++lost;
    });
  };
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    for (int i = 0; i < 5; ++i) park(client);
    CHECK(eventually([&] { return client.pendingCalls() == 5; }));
    // Moved: the calls stay with the connection, now owned by `moved`.
    MessagePackRpcClient moved = std::move(client);
    CHECK(moved.pendingCalls() == 5);
    CHECK(client.pendingCalls() == 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
    park(moved);
    CHECK(eventually([&] { return moved.pendingCalls() == 6; }));
    moved.close();
    CHECK(eventually([&] { return lost == 6; }));
    // A second connection, replaced by assignment: its pending call fails.
    MessagePackRpcClient other = connect(clientGroup, f.port());
    park(other);
    CHECK(eventually([&] { return other.pendingCalls() == 1; }));
    other = connect(clientGroup, f.port());
    CHECK(eventually([&] { return lost == 7; }));
    park(other);
    CHECK(eventually([&] { return other.pendingCalls() == 1; }));
  }
  CHECK(eventually([&] { return lost == 8; }));  // the destructor's close
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: a loop stopped with calls queued or pending") {
  // A shutdown whose timeout cuts the wait stops the loop with tasks still queued; they never
  // run, and the connection never closes. The calls complete when the client's state goes (the
  // client object and the group's dropped tasks): handlers with an executor of their own (here
  // the system executor; use_future's is another) then run with connectionLost; handlers bound to
  // the stopped loop are destroyed unrun, as an io_context destroys the handlers it never ran.
  TcpFixture f;
  auto clientGroup = std::make_unique<EventLoopGroup>(1);
  std::atomic<int> loopHandlerRuns{0};
  std::future<Outcome> pendingCall;
  std::future<Outcome> queuedCall;
  {
    MessagePackRpcClient client = connect(*clientGroup, f.port());
    // One call parked at the server (pending in the client)...
    pendingCall = callOutcome([&](auto h) {
      client.call("park", noParams(), asio::bind_executor(asio::system_executor(), h));
    });
    REQUIRE(eventually([&] { return client.pendingCalls() == 1; }));
    // ...then calls queued behind a task that keeps the loop busy until the shutdown has stopped
    // it (so neither the calls nor the shutdown hooks ever run there).
    std::atomic<bool> busy{false};
    client.eventLoop().execute([&busy] {
      busy = true;
      std::this_thread::sleep_for(300ms);
    });
    REQUIRE(eventually([&] { return busy.load(); }));
    queuedCall = callOutcome([&](auto h) {
      client.call("add", {Value::integer(1), Value::integer(2)},
                  asio::bind_executor(asio::system_executor(), h));
    });
    client.call("add", {Value::integer(1), Value::integer(2)},
                [&](ErrorCode, RpcResult) { ++loopHandlerRuns; });
    clientGroup->shutdownGracefully(0ms, 0ms);
    CHECK(clientGroup->loop(0).isTerminated());
    CHECK(pendingCall.wait_for(0s) == std::future_status::timeout);
  }
  // Destroying the group destroys the dropped tasks, and with them the client's state.
  clientGroup.reset();
  REQUIRE(pendingCall.wait_for(10s) == std::future_status::ready);
  REQUIRE(queuedCall.wait_for(10s) == std::future_status::ready);
  auto [pec, pr] = pendingCall.get();
  auto [qec, qr] = queuedCall.get();
  CHECK(pec == RpcErrc::connectionLost);
  CHECK(qec == RpcErrc::connectionLost);
  CHECK(qr.msgid == pr.msgid + 1);  // the results name their calls
  CHECK(loopHandlerRuns == 0);
}

TEST_CASE("client: msgid wraps from 0xffffffff to 0") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient::Options opt;
    opt.firstMsgid = 0xfffffffeu;
    MessagePackRpcClient client = connect(clientGroup, f.port(), opt);
    std::vector<std::uint32_t> ids;
    for (int i = 0; i < 4; ++i) {
      RpcResult r =
          client.call("add", {Value::integer(i), Value::integer(0)}, asio::use_future).get();
      CHECK(r.value.asInt64() == i);
      ids.push_back(r.msgid);
    }
    CHECK(ids == std::vector<std::uint32_t>{0xfffffffeu, 0xffffffffu, 0, 1});
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: many threads calling at once") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 50; ++i) {
          auto [ec, r] = callOutcome([&](auto h) {
                           client.call("add", {Value::integer(t), Value::integer(i)}, h);
                         }).get();
          if (!ec && r.value.asInt64() == t + i) ++ok;
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK(ok == 200);
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

namespace {

/// What the coroutine test saw.
struct Seen {
  std::int64_t sum = 0;
  ErrorCode errorResponse;
  std::int64_t deferredSum = 0;
  std::int64_t slept = 0, added = 0;
  ErrorCode firstError, secondError;
  bool addFirst = false;
  bool timerWon = false;
  bool onLoop = false;
};

/// The coroutine of the coroutine test: every await form against the fixture's server.
asio::awaitable<Seen> coroutineSession(EventLoopGroup& clientGroup, unsigned short port) {
  using namespace asio::experimental::awaitable_operators;
  Seen s;
  MessagePackRpcClient c =
      co_await MessagePackRpcClient::connect(clientGroup, "127.0.0.1", port, asio::use_awaitable);
  // Parameters are named arrays here, not braced lists: g++ 12 cannot compile an initializer
  // list's array inside a co_await expression ("array used as initializer").
  const Value oneTwo[] = {Value::integer(1), Value::integer(2)};
  const Value twoThree[] = {Value::integer(2), Value::integer(3)};
  const Value fifty[] = {Value::integer(50)};
  const Value fiveFive[] = {Value::integer(5), Value::integer(5)};
  RpcResult r = co_await c.call("add", Value::arrayView(oneTwo), asio::use_awaitable);
  s.sum = r.value.asInt64();
  s.onLoop = c.eventLoop().inEventLoop();
  try {
    co_await c.call("nope", noParams(), asio::use_awaitable);
  } catch (const boost::system::system_error& e) {
    s.errorResponse = e.code();
  }
  // deferred: the call starts when the operation is awaited.
  auto op = c.call("add", Value::arrayView(twoThree), asio::deferred);
  RpcResult d = co_await std::move(op)(asio::use_awaitable);
  s.deferredSum = d.value.asInt64();
  // Two calls in flight at once, both awaited.
  auto both = co_await asio::experimental::make_parallel_group(
                  c.call("sleep", Value::arrayView(fifty), asio::deferred),
                  c.call("add", Value::arrayView(fiveFive), asio::deferred))
                  .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
  s.firstError = std::get<1>(both);
  s.secondError = std::get<3>(both);
  s.slept = std::get<2>(both).value.asInt64();
  s.added = std::get<4>(both).value.asInt64();
  s.addFirst = std::get<0>(both)[0] == 1;  // the add finished first
  // A call raced against a timer: the timer wins, the call is cancelled.
  asio::steady_timer timer(co_await asio::this_coro::executor, 50ms);
  auto winner = co_await (c.call("park", noParams(), asio::use_awaitable) ||
                          timer.async_wait(asio::use_awaitable));
  s.timerWon = winner.index() == 1;
  co_return s;
}

}  // namespace

TEST_CASE("client: coroutines: use_awaitable, deferred, a parallel group, an awaitable operator") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  auto future = asio::co_spawn(clientGroup.loop(0).get_executor(),
                               coroutineSession(clientGroup, f.port()), asio::use_future);
  REQUIRE(future.wait_for(20s) == std::future_status::ready);
  const Seen s = future.get();
  CHECK(s.sum == 3);
  CHECK(s.onLoop);
  CHECK(s.errorResponse == RpcErrc::errorResponse);
  CHECK(s.deferredSum == 5);
  CHECK_FALSE(s.firstError);
  CHECK_FALSE(s.secondError);
  CHECK(s.slept == 50);
  CHECK(s.added == 10);
  CHECK(s.addFirst);
  CHECK(s.timerWon);
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: a cancellation signal cancels a pending call; its response is then late") {
  TcpFixture f;
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, f.port());
    asio::cancellation_signal signal;
    std::promise<ErrorCode> got;
    // Started and cancelled on the client's loop, where the handler runs (Asio's rule).
    client.eventLoop().execute([&] {
      client.call("park", noParams(),
                  asio::bind_cancellation_slot(
                      signal.slot(), [&](ErrorCode ec, RpcResult) { got.set_value(ec); }));
    });
    REQUIRE(eventually([&] { return f.parkedCount() == 1; }));
    CHECK(client.pendingCalls() == 1);
    client.eventLoop().execute([&] { signal.emit(asio::cancellation_type::terminal); });
    auto fut = got.get_future();
    REQUIRE(fut.wait_for(10s) == std::future_status::ready);
    CHECK(fut.get() == asio::error::operation_aborted);
    CHECK(client.pendingCalls() == 0);
    // The server answers after all: nobody waits for it any more.
    {
      std::lock_guard<std::mutex> g(f.m);
      f.parked.front()->reply(Value::integer(1));
    }
    CHECK(eventually([&] { return client.lateResponses() == 1; }));
    // A signal emitted after the call completed does nothing.
    std::promise<ErrorCode> second;
    client.eventLoop().execute([&] {
      client.call("add", {Value::integer(1), Value::integer(1)},
                  asio::bind_cancellation_slot(
                      signal.slot(), [&](ErrorCode ec, RpcResult) { second.set_value(ec); }));
    });
    CHECK_FALSE(second.get_future().get());
    client.eventLoop().execute([&] { signal.emit(asio::cancellation_type::terminal); });
    CHECK(client.call("add", {Value::integer(2), Value::integer(2)}, asio::use_future)
              .get()
              .value.asInt64() == 4);
  }
  clientGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: a server sending garbage is a protocol error (connectionLost)") {
  EventLoopGroup group(1);
  // A raw server that answers any bytes with a reserved byte.
  struct Garbage : ChannelHandler {
    void channelRead(ChannelHandlerContext& ctx, Message) override {
      ByteBuf b = Unpooled::buffer(1);
      b.writeByte(static_cast<std::int8_t>(0xc1));
      ctx.writeAndFlush(std::move(b));
    }
  };
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([](SocketChannel& ch) {
                      ch.pipeline().addLast("garbage", std::make_unique<Garbage>());
                    })
                    .bind("127.0.0.1", 0);
  EventLoopGroup clientGroup(1);
  {
    MessagePackRpcClient client = connect(clientGroup, server->port());
    auto [ec, r] = callOutcome([&](auto h) { client.call("x", noParams(), h); }).get();
    CHECK(ec == RpcErrc::connectionLost);
    CHECK(r.message.find("protocol error") != std::string::npos);
  }
  server->close();
  server->closeChildren();
  clientGroup.shutdownGracefully(0ms, 5s);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("client: connecting to a closed port fails with connection_refused") {
  EventLoopGroup clientGroup(1);
  unsigned short port = 0;
  {
    EventLoopGroup g(1);
    auto s = ServerBootstrap().group(g).childHandler([](SocketChannel&) {}).bind("127.0.0.1", 0);
    port = s->port();
    s->close();
    g.shutdownGracefully(0ms, 5s);
  }
  auto [ec, client] = outcome<MessagePackRpcClient>([&](auto h) {
                        MessagePackRpcClient::connect(clientGroup, "127.0.0.1", port, h);
                      }).get();
  CHECK(ec == asio::error::connection_refused);
  CHECK_FALSE(client.isConnected());
  CHECK_THROWS_AS(
      MessagePackRpcClient::connect(clientGroup, "127.0.0.1", port, asio::use_future).get(),
      boost::system::system_error);
  clientGroup.shutdownGracefully(0ms, 5s);
}
