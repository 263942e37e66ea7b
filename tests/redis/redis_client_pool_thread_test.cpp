// RedisClientPool against a real redis-server on loopback: commands spread over every connection
// (each client's CLIENT ID seen), lazy connections, connect() of all, commands from several
// threads, the push handler on every client, close(). Run under ThreadSanitizer too ("threaded").
#include <netbuf/redis/redis_client_pool.hpp>

#include <doctest/doctest.h>

#include "support/redis_outcomes.hpp"
#include "support/redis_server_process.hpp"

#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using netbuf::test::await;
using netbuf::test::call;
using netbuf::test::launch;
using netbuf::test::RedisOutcome;
using netbuf::test::RedisServerProcess;

namespace {

RedisClient::Options at(const RedisServerProcess& server) {
  RedisClient::Options o;
  o.host = "127.0.0.1";
  o.port = server.port();
  return o;
}

}  // namespace

TEST_CASE("RedisClientPool: commands spread over every connection, opened lazily") {
  RedisServerProcess server;
  EventLoopGroup group(2);
  {
    RedisClientPool pool(group, 4, at(server));
    CHECK(pool.size() == 4);
    for (std::size_t i = 0; i < pool.size(); ++i) CHECK(pool.client(i).connectionsMade() == 0);

    std::vector<std::future<RedisOutcome>> pending;
    for (int i = 0; i < 400; ++i) pending.push_back(launch(pool, "CLIENT", "ID"));
    std::set<std::int64_t> ids;
    for (auto& f : pending) {
      RedisOutcome o = await(f);
      REQUIRE_FALSE(o.ec);
      ids.insert(o.reply.root().asInteger());
    }
    CHECK(ids.size() == 4);
    for (std::size_t i = 0; i < pool.size(); ++i) CHECK(pool.client(i).connectionsMade() == 1);
    // The connections are spread over the group's loops.
    CHECK(&pool.client(0).eventLoop() != &pool.client(1).eventLoop());
    CHECK(pool.pendingCommands() == 0);

    // Idle clients take turns.
    std::set<std::int64_t> turns;
    for (int i = 0; i < 4; ++i) turns.insert(call(pool, "CLIENT", "ID").reply.root().asInteger());
    CHECK(turns.size() == 4);
  }
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("RedisClientPool: connect(), threads, the push handler, close()") {
  RedisServerProcess server;
  EventLoopGroup group(2);
  {
    RedisClient::Options o = at(server);
    o.protocol = RespProtocol::Resp3;
    RedisClientPool pool(group, 3, o);
    std::future<void> connected = pool.connect(asio::use_future);
    REQUIRE(connected.wait_for(10s) == std::future_status::ready);
    connected.get();
    for (std::size_t i = 0; i < pool.size(); ++i) CHECK(pool.client(i).isConnected());

    std::atomic<int> pushes{0};
    pool.setPushHandler([&](RedisReply r) {
      if (r.root()[0].asString() == "message") ++pushes;
    });
    // Every client subscribes (a Pub/Sub command goes to one client: client(i)).
    for (std::size_t i = 0; i < pool.size(); ++i) {
      CHECK_FALSE(call(pool.client(i), "SUBSCRIBE", "all").ec);
    }

    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        std::vector<std::future<RedisOutcome>> fs;
        for (int i = 0; i < 100; ++i) fs.push_back(launch(pool, "INCR", "n"));
        for (auto& f : fs) {
          if (f.wait_for(10s) != std::future_status::ready || f.get().ec) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK(failures.load() == 0);
    CHECK(call(pool, "GET", "n").text() == "400");

    CHECK(call(pool, "PUBLISH", "all", "hi").reply.root().asInteger() == 3);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (pushes.load() < 3 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    CHECK(pushes.load() == 3);

    pool.close();
    CHECK(call(pool, "PING").ec == RedisClientErrc::clientClosed);
  }
  group.shutdownGracefully(0ms, 5s);
}
