// RedisClient against a real redis-server on loopback (RedisServerProcess; a missing redis-server
// fails the test): SET/GET with callbacks, 1000 pipelined commands answered in order, use_awaitable
// (a coroutine on an io_context of the test's), use_future, server error replies as values, RESP3
// (HELLO 3 by option and by hello(): Map, Double), push messages (CLIENT TRACKING invalidations,
// Pub/Sub), cancellation (terminal and total; the cancelled command's reply is discarded and the
// FIFO stays in step; the handler is in the slot before a completion on a thread pool can run,
// which needs no server), the command timeout, a refused connection, a server that kills the
// connection with a pipeline pending (and the automatic reconnection after it), AUTH and SELECT
// from options, close(), and commands from several threads at once. Every wait is bounded. Run
// under ThreadSanitizer too ("threaded").
#include <netbuf/redis/redis_client.hpp>

#include <doctest/doctest.h>

#include "support/redis_outcomes.hpp"
#include "support/redis_server_process.hpp"
#include "support/thread_waits.hpp"

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using netbuf::test::await;
using netbuf::test::call;
using netbuf::test::connectNow;
using netbuf::test::eventually;
using netbuf::test::launch;
using netbuf::test::ok;
using netbuf::test::RedisOutcome;
using netbuf::test::RedisServerProcess;

namespace {

/// A client on a group of its own, connected to the server, gone before the group.
class Client {
 public:
  explicit Client(const RedisServerProcess& server, RedisClient::Options options = {},
                  bool connect = true)
      : group_(1) {
    options.host = "127.0.0.1";
    options.port = server.port();
    client_.emplace(group_, std::move(options));
    if (connect) {
      const ErrorCode ec = connectNow(*client_, "127.0.0.1", server.port());
      INFO(ec.message());
      REQUIRE_FALSE(ec);
    }
  }
  ~Client() {
    client_.reset();
    group_.shutdownGracefully(0ms, 5s);
  }
  RedisClient& operator*() { return *client_; }
  RedisClient* operator->() { return &*client_; }

 private:
  EventLoopGroup group_;
  std::optional<RedisClient> client_;
};

RedisClient::Options resp3() {
  RedisClient::Options o;
  o.protocol = RespProtocol::Resp3;
  return o;
}

/// Push messages a handler received, readable from the test thread.
struct Pushes {
  std::mutex mutex;
  std::vector<std::vector<std::string>> items;  // each push's elements as text

  RedisClient::PushHandler handler() {
    return [this](RedisReply r) {
      std::vector<std::string> elems;
      for (const RespValue& v : r.root().elements()) {
        if (v.type() == RespType::Array || v.type() == RespType::Set) {
          std::string joined = "[";
          for (const RespValue& e : v.elements()) joined += std::string(e.asString()) + ",";
          elems.push_back(joined + "]");
        } else if (v.type() == RespType::Integer) {
          elems.push_back(std::to_string(v.asInteger()));
        } else if (v.isNull()) {
          elems.push_back("<null>");
        } else {
          elems.push_back(std::string(v.asString()));
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      items.push_back(std::move(elems));
    };
  }
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mutex);
    return items.size();
  }
  std::vector<std::string> at(std::size_t i) {
    std::lock_guard<std::mutex> lock(mutex);
    return items.at(i);
  }
};

}  // namespace

TEST_CASE("RedisClient: SET, GET, integers, a missing key, on the client's loop") {
  RedisServerProcess server;
  Client client(server);
  INFO(server.log());
  CHECK(client->isConnected());
  CHECK(client->protocol() == RespProtocol::Resp2);

  RedisOutcome o = ok(*client, "SET", "greeting", "hello");
  CHECK(o.reply.type() == RespType::SimpleString);
  CHECK(o.text() == "OK");
  std::future<RedisOutcome> f = netbuf::test::launchOnLoop(*client, "GET", "greeting");
  o = await(f);
  CHECK_FALSE(o.ec);
  CHECK(o.onClientLoop);
  CHECK(o.reply.type() == RespType::BulkString);
  CHECK(o.text() == "hello");

  // Integers are formatted; std::string and string_view arguments too.
  const std::string key = "n";
  ok(*client, "SET", key, -42);
  CHECK(ok(*client, "INCRBY", std::string_view(key), 100u).reply.root().asInteger() == 58);
  CHECK(ok(*client, "GET", "missing").reply.root().isNull());

  // The span form.
  const std::string_view args[] = {"RPUSH", "list", "a", "b", "c"};
  CHECK(ok(*client, std::span<const std::string_view>(args)).reply.root().asInteger() == 3);
  o = ok(*client, "LRANGE", "list", 0, -1);
  REQUIRE(o.reply.type() == RespType::Array);
  REQUIRE(o.reply.root().size() == 3);
  CHECK(o.reply.root()[2].asString() == "c");

  // Binary-safe values.
  const std::string binary("a\0b\r\nc", 6);
  ok(*client, "SET", "bin", binary);
  CHECK(ok(*client, "GET", "bin").text() == binary);
  CHECK(client->pendingCommands() == 0);
  CHECK(client->connectionsMade() == 1);
}

TEST_CASE("RedisClient: 1000 pipelined commands, replies matched in order") {
  RedisServerProcess server;
  Client client(server);
  std::vector<std::future<RedisOutcome>> pending;
  std::mutex mutex;
  std::vector<int> order;  // the order the completions ran in
  std::vector<std::promise<RedisOutcome>> promises(1000);
  for (int i = 0; i < 1000; ++i) {
    pending.push_back(promises[static_cast<std::size_t>(i)].get_future());
    auto done = [&, i](ErrorCode ec, RedisReply r) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        order.push_back(i);
      }
      promises[static_cast<std::size_t>(i)].set_value(RedisOutcome{ec, std::move(r)});
    };
    if (i % 2 == 0) {
      client->command(done, "INCR", "counter");
    } else {
      client->command(done, "SET", "key:" + std::to_string(i), i);
    }
  }
  for (int i = 0; i < 1000; ++i) {
    CAPTURE(i);
    RedisOutcome o = await(pending[static_cast<std::size_t>(i)]);
    REQUIRE_FALSE(o.ec);
    if (i % 2 == 0) {
      CHECK(o.reply.root().asInteger() == i / 2 + 1);
    } else {
      CHECK(o.text() == "OK");
    }
  }
  std::vector<int> expected(1000);
  for (int i = 0; i < 1000; ++i) expected[static_cast<std::size_t>(i)] = i;
  CHECK(order == expected);
  CHECK(ok(*client, "GET", "key:999").text() == "999");
  CHECK(client->connectionsMade() == 1);
}

TEST_CASE("RedisClient: co_await with use_awaitable, use_future") {
  RedisServerProcess server;
  Client client(server);
  asio::io_context io;
  std::string got;
  std::int64_t len = 0;
  bool finished = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        RedisClient& c = *client;
        co_await c.command(asio::use_awaitable, "SET", "k", "from a coroutine");
        RedisReply r = co_await c.command(asio::use_awaitable, "GET", "k");
        got = std::string(r.root().asString());
        RedisReply n = co_await c.command(asio::use_awaitable, "STRLEN", "k");
        len = n.root().asInteger();
        finished = true;
      },
      asio::detached);
  io.run_for(10s);
  REQUIRE(finished);
  CHECK(got == "from a coroutine");
  CHECK(len == 16);

  std::future<RedisReply> f = client->command(asio::use_future, "GET", "k");
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get().root().asString() == "from a coroutine");

  // An error reply is a value for use_future too (no exception).
  ok(*client, "SET", "text", "abc");
  std::future<RedisReply> e = client->command(asio::use_future, "INCR", "text");
  REQUIRE(e.wait_for(10s) == std::future_status::ready);
  CHECK(e.get().isError());
}

TEST_CASE("RedisClient: error replies are values") {
  RedisServerProcess server;
  Client client(server);
  ok(*client, "SET", "text", "not a number");
  RedisOutcome o = ok(*client, "INCR", "text");
  CHECK(o.reply.isError());
  CHECK(o.reply.type() == RespType::SimpleError);
  CHECK(redisErrorCode(o.reply.root()) == "ERR");
  CHECK(o.text() == "ERR value is not an integer or out of range");

  ok(*client, "LPUSH", "list", "x");
  o = ok(*client, "GET", "list");
  CHECK(redisErrorCode(o.reply.root()) == "WRONGTYPE");
  o = ok(*client, "NOSUCHCOMMAND", "x");
  CHECK(o.reply.isError());
  // The connection goes on.
  CHECK(ok(*client, "PING").text() == "PONG");
  CHECK(redisErrorCode(ok(*client, "PING").reply.root()).empty());
}

TEST_CASE("RedisClient: RESP3 by option and by hello(): Map, Double, Set, Null") {
  RedisServerProcess server;
  {
    Client client(server, resp3());
    CHECK(client->protocol() == RespProtocol::Resp3);
    ok(*client, "HSET", "h", "a", 1, "b", 2);
    RedisOutcome o = ok(*client, "HGETALL", "h");
    REQUIRE(o.reply.type() == RespType::Map);
    CHECK(o.reply.root().size() == 2);
    REQUIRE(o.reply.root().find("a") != nullptr);
    CHECK(o.reply.root().find("a")->asString() == "1");
    CHECK(o.reply.root().find("b")->asString() == "2");

    ok(*client, "ZADD", "z", "1.5", "m");
    o = ok(*client, "ZSCORE", "z", "m");
    REQUIRE(o.reply.type() == RespType::Double);
    CHECK(o.reply.root().asDouble() == 1.5);

    ok(*client, "SADD", "s", "x", "y");
    CHECK(ok(*client, "SMEMBERS", "s").reply.type() == RespType::Set);
    o = ok(*client, "GET", "missing");
    CHECK(o.reply.root().isNull());
    CHECK(o.reply.root().nullForm() == '_');
  }
  {
    // hello(token, 3) on a RESP2 connection switches it.
    Client client(server);
    CHECK(ok(*client, "HGETALL", "h").reply.type() == RespType::Array);
    std::promise<RedisOutcome> p;
    client->hello([&](ErrorCode ec, RedisReply r) { p.set_value({ec, std::move(r)}); }, 3);
    auto f = p.get_future();
    RedisOutcome o = await(f);
    REQUIRE_FALSE(o.ec);
    REQUIRE(o.reply.type() == RespType::Map);
    REQUIRE(o.reply.root().find("proto") != nullptr);
    CHECK(o.reply.root().find("proto")->asInteger() == 3);
    CHECK(client->protocol() == RespProtocol::Resp3);
    CHECK(ok(*client, "HGETALL", "h").reply.type() == RespType::Map);
    // RESET goes back to RESP2.
    CHECK(ok(*client, "RESET").text() == "RESET");
    CHECK(client->protocol() == RespProtocol::Resp2);
    CHECK(ok(*client, "HGETALL", "h").reply.type() == RespType::Array);
  }
}

TEST_CASE("RedisClient: RESP3 push messages: CLIENT TRACKING invalidation") {
  RedisServerProcess server;
  Client tracked(server, resp3());
  Client other(server);
  Pushes pushes;
  tracked->setPushHandler(pushes.handler());

  ok(*other, "SET", "watched", "1");
  CHECK(ok(*tracked, "CLIENT", "TRACKING", "ON").text() == "OK");
  CHECK(ok(*tracked, "GET", "watched").text() == "1");  // now tracked
  ok(*other, "SET", "watched", "2");
  REQUIRE(eventually([&] { return pushes.size() >= 1; }));
  const std::vector<std::string> push = pushes.at(0);
  REQUIRE(push.size() == 2);
  CHECK(push[0] == "invalidate");
  CHECK(push[1] == "[watched,]");
  // Pushes are matched to no command: the next reply is the next command's.
  CHECK(ok(*tracked, "GET", "watched").text() == "2");
  CHECK(ok(*tracked, "PING").text() == "PONG");
}

TEST_CASE("RedisClient: RESP3 Pub/Sub: confirmations and messages to the push handler") {
  RedisServerProcess server;
  Client sub(server, resp3());
  Client pub(server);
  Pushes pushes;
  sub->setPushHandler(pushes.handler());

  RedisOutcome o = ok(*sub, "SUBSCRIBE", "news", "sports");
  CHECK(o.reply.root().isNull());
  REQUIRE(pushes.size() == 2);  // both confirmations came before the command completed
  CHECK(pushes.at(0) == std::vector<std::string>{"subscribe", "news", "1"});
  CHECK(pushes.at(1) == std::vector<std::string>{"subscribe", "sports", "2"});

  // A subscribed RESP3 connection still runs commands, in step with their replies.
  CHECK(ok(*sub, "SET", "k", "v").text() == "OK");
  CHECK(ok(*pub, "PUBLISH", "news", "hello").reply.root().asInteger() == 1);
  REQUIRE(eventually([&] { return pushes.size() >= 3; }));
  CHECK(pushes.at(2) == std::vector<std::string>{"message", "news", "hello"});
  CHECK(ok(*sub, "GET", "k").text() == "v");

  ok(*sub, "PSUBSCRIBE", "s*");
  ok(*pub, "PUBLISH", "sports", "goal");
  REQUIRE(eventually([&] { return pushes.size() >= 6; }));
  CHECK(pushes.at(3) == std::vector<std::string>{"psubscribe", "s*", "3"});
  // Delivered twice: to the channel and to the pattern (in the order Redis sends them).
  std::vector<std::string> kinds = {pushes.at(4).at(0), pushes.at(5).at(0)};
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"message", "pmessage"});

  o = ok(*sub, "UNSUBSCRIBE", "news");
  CHECK(o.reply.root().isNull());
  CHECK(ok(*pub, "PUBLISH", "news", "nobody").reply.root().asInteger() == 0);
  CHECK(ok(*sub, "PING").reply.type() == RespType::SimpleString);

  // An error reply to a Pub/Sub command is its reply (no push comes).
  o = ok(*sub, "SUBSCRIBE");
  CHECK(o.reply.isError());
  CHECK(ok(*sub, "GET", "k").text() == "v");

  // RESP2 cannot tell Pub/Sub messages from replies: refused.
  Client resp2(server);
  CHECK(call(*resp2, "SUBSCRIBE", "news").ec == RedisClientErrc::pubsubNeedsResp3);
  CHECK(ok(*resp2, "PING").text() == "PONG");
}

TEST_CASE("RedisClient: cancellation completes at once; the reply is discarded in step") {
  RedisServerProcess server;
  Client client(server);
  Client other(server);

  // Terminal: BLPOP blocks on the server; the cancelled command completes now.
  asio::cancellation_signal signal;
  std::promise<RedisOutcome> p;
  auto f = p.get_future();
  client->command(asio::bind_cancellation_slot(signal.slot(),
                                               [&](ErrorCode ec, RedisReply r) {
                                                 p.set_value({ec, std::move(r)});
                                               }),
                  "BLPOP", "queue", 0);
  std::future<RedisOutcome> next = launch(*client, "GET", "after");
  std::this_thread::sleep_for(50ms);  // (written: BLPOP is on the server)
  signal.emit(asio::cancellation_type::terminal);
  RedisOutcome o = await(f);
  CHECK(o.ec == asio::error::operation_aborted);
  CHECK(next.wait_for(100ms) == std::future_status::timeout);  // still behind BLPOP
  ok(*other, "SET", "after", "value");
  ok(*other, "LPUSH", "queue", "item");  // answers the BLPOP: discarded
  o = await(next);
  CHECK_FALSE(o.ec);
  CHECK(o.text() == "value");
  CHECK(ok(*client, "LLEN", "queue").reply.root().asInteger() == 0);  // BLPOP took the item

  // Total: a command already written is left to finish.
  asio::cancellation_signal total;
  std::promise<RedisOutcome> p2;
  auto f2 = p2.get_future();
  client->command(asio::bind_cancellation_slot(total.slot(),
                                               [&](ErrorCode ec, RedisReply r) {
                                                 p2.set_value({ec, std::move(r)});
                                               }),
                  "BLPOP", "queue", 0);
  std::this_thread::sleep_for(50ms);
  total.emit(asio::cancellation_type::total);
  CHECK(f2.wait_for(200ms) == std::future_status::timeout);
  ok(*other, "LPUSH", "queue", "second");
  o = await(f2);
  CHECK_FALSE(o.ec);
  REQUIRE(o.reply.type() == RespType::Array);
  CHECK(o.reply.root()[1].asString() == "second");
  CHECK(client->pendingCommands() == 0);
}

TEST_CASE("RedisClient: the cancellation handler is installed before the command can complete") {
  // The completion runs on a thread pool as soon as the command fails (no connection), and the
  // caller reuses its slot there: the handler must already be in the slot, and the initiating
  // function must not touch the slot after starting the command (ThreadSanitizer sees a race
  // otherwise).
  EventLoopGroup group(1);
  RedisClient::Options options;
  options.autoConnect = false;
  asio::thread_pool pool(2);
  {
    RedisClient client(group, options);
    for (int i = 0; i < 50; ++i) {
      CAPTURE(i);
      asio::cancellation_signal signal;
      std::promise<std::pair<ErrorCode, bool>> p;
      auto f = p.get_future();
      client.command(asio::bind_cancellation_slot(
                         signal.slot(),
                         asio::bind_executor(pool,
                                             [&](ErrorCode ec, RedisReply) {
                                               const bool installed = signal.slot().has_handler();
                                               // Too late: does nothing.
                                               signal.emit(asio::cancellation_type::terminal);
                                               signal.slot().clear();
                                               p.set_value({ec, installed});
                                             })),
                     "GET", "k");
      REQUIRE(f.wait_for(10s) == std::future_status::ready);
      const auto [ec, installed] = f.get();
      CHECK(ec == RedisClientErrc::notConnected);
      CHECK(installed);
    }
  }
  pool.join();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("RedisClient: the command timeout") {
  RedisServerProcess server;
  RedisClient::Options options;
  options.commandTimeout = 300ms;
  Client client(server, options);
  Client other(server);
  const auto t0 = std::chrono::steady_clock::now();
  std::future<RedisOutcome> blocked = launch(*client, "BLPOP", "queue", 0);
  RedisOutcome o = await(blocked);
  CHECK(o.ec == RedisClientErrc::timedOut);
  CHECK(std::chrono::steady_clock::now() - t0 >= 250ms);
  // The connection stays; BLPOP's reply, when it comes, is discarded.
  std::future<RedisOutcome> next = launch(*client, "GET", "k");
  ok(*other, "SET", "k", "v");
  ok(*other, "LPUSH", "queue", "x");
  o = await(next);
  CHECK_FALSE(o.ec);
  CHECK(o.text() == "v");
  CHECK(client->connectionsMade() == 1);
}

TEST_CASE("RedisClient: a refused connection is an ErrorCode") {
  const unsigned short port = netbuf::test::freePort();  // nothing listens there
  EventLoopGroup group(1);
  {
    RedisClient client(group);
    CHECK(connectNow(client, "127.0.0.1", port) == asio::error::connection_refused);
    // The address is remembered: a command tries again, and fails the same way.
    CHECK(call(client, "PING").ec == asio::error::connection_refused);
    std::future<RedisReply> f = client.command(asio::use_future, "PING");
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    CHECK_THROWS_AS(f.get(), boost::system::system_error);
  }
  {
    // No address at all.
    RedisClient client(group);
    CHECK(call(client, "PING").ec == RedisClientErrc::notConnected);
    RedisClient::Options o;
    o.host = "127.0.0.1";
    o.port = port;
    o.autoConnect = false;
    RedisClient manual(group, o);
    CHECK(call(manual, "PING").ec == RedisClientErrc::notConnected);
  }
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("RedisClient: the server kills the connection with a pipeline pending") {
  RedisServerProcess server;
  Client client(server);
  Client admin(server);
  const std::int64_t id = ok(*client, "CLIENT", "ID").reply.root().asInteger();
  // BLPOP blocks the connection on the server: what follows waits behind it, unanswered.
  std::vector<std::future<RedisOutcome>> pending;
  pending.push_back(launch(*client, "BLPOP", "nothing", 0));
  for (int i = 0; i < 10; ++i) pending.push_back(launch(*client, "INCR", "c"));
  REQUIRE(eventually(
      [&] { return ok(*admin, "CLIENT", "LIST").text().find("cmd=blpop") != std::string::npos; }));
  CHECK(ok(*admin, "CLIENT", "KILL", "ID", id).reply.root().asInteger() == 1);
  for (auto& f : pending) CHECK(await(f).ec == RedisClientErrc::connectionClosed);
  CHECK(eventually([&] { return !client->isConnected(); }));
  // The next command connects again, to the address connect() named.
  CHECK(ok(*client, "PING").text() == "PONG");
  CHECK(client->connectionsMade() == 2);
  CHECK(ok(*client, "GET", "c").reply.root().isNull());  // none of the INCRs ran
}

TEST_CASE("RedisClient: lazy connection, AUTH, CLIENT SETNAME and SELECT from options") {
  RedisServerProcess server({"--requirepass", "sekret"});
  {
    Client noAuth(server);
    RedisOutcome o = ok(*noAuth, "GET", "k");
    CHECK(redisErrorCode(o.reply.root()) == "NOAUTH");
  }
  for (const RespProtocol proto : {RespProtocol::Resp2, RespProtocol::Resp3}) {
    CAPTURE(static_cast<int>(proto));
    RedisClient::Options o;
    o.protocol = proto;
    o.password = "sekret";
    o.clientName = "netbuf-test";
    o.database = 3;
    Client client(server, o, /*connect=*/false);
    CHECK_FALSE(client->isConnected());
    // The first command opens the connection; it runs after the handshake.
    CHECK(ok(*client, "SET", "k", "in db 3").text() == "OK");
    CHECK(client->isConnected());
    CHECK(client->protocol() == proto);
    CHECK(ok(*client, "CLIENT", "GETNAME").text() == "netbuf-test");
    CHECK(ok(*client, "SELECT", 0).text() == "OK");
    CHECK(ok(*client, "GET", "k").reply.root().isNull());
    CHECK(ok(*client, "SELECT", 3).text() == "OK");
    CHECK(ok(*client, "GET", "k").text() == "in db 3");
  }
  {
    RedisClient::Options o;
    o.password = "wrong";
    Client client(server, o, /*connect=*/false);
    CHECK(connectNow(*client, "127.0.0.1", server.port()) == RedisClientErrc::handshakeFailed);
    CHECK(call(*client, "PING").ec == RedisClientErrc::handshakeFailed);
  }
}

TEST_CASE("RedisClient: close() fails what is pending and what comes after") {
  RedisServerProcess server;
  Client client(server);
  std::future<RedisOutcome> blocked = launch(*client, "BLPOP", "queue", 0);
  std::this_thread::sleep_for(50ms);
  client->close();
  CHECK(await(blocked).ec == RedisClientErrc::clientClosed);
  CHECK(call(*client, "PING").ec == RedisClientErrc::clientClosed);
  CHECK(connectNow(*client, "127.0.0.1", server.port()) == RedisClientErrc::clientClosed);
  CHECK_FALSE(client->isConnected());
  client->close();  // idempotent
}

TEST_CASE("RedisClient: commands from several threads at once") {
  RedisServerProcess server;
  Client client(server);
  Pushes pushes;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::int64_t>> seen(kThreads);
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (t == 0) client->setPushHandler(pushes.handler());
      std::vector<std::future<RedisOutcome>> fs;
      for (int i = 0; i < kPerThread; ++i) fs.push_back(launch(*client, "INCR", "shared"));
      for (auto& f : fs) {
        if (f.wait_for(10s) != std::future_status::ready) {
          ++failures;
          continue;
        }
        RedisOutcome o = f.get();
        if (o.ec || o.reply.type() != RespType::Integer) {
          ++failures;
          continue;
        }
        seen[static_cast<std::size_t>(t)].push_back(o.reply.root().asInteger());
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  // Each thread's commands went out in its order: the values it saw grow.
  for (const auto& s : seen) {
    CHECK(s.size() == kPerThread);
    CHECK(std::is_sorted(s.begin(), s.end()));
  }
  CHECK(ok(*client, "GET", "shared").text() == std::to_string(kThreads * kPerThread));
  CHECK(client->pendingCommands() == 0);
}
