// Reconnector: reconnects with exponential backoff when the connection fails or closes, gives up
// after maxAttempts, stops on request. Run under ThreadSanitizer ("threaded").
#include <netbuf/transport/reconnector.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "support/thread_waits.hpp"

using namespace netbuf;
using namespace std::chrono_literals;
using netbuf::test::eventually;

namespace {

/// A free port nobody listens on (bound once, then closed).
unsigned short freePort(EventLoopGroup& group) {
  auto s = ServerBootstrap().group(group).bind("127.0.0.1", 0);
  const unsigned short port = s->port();
  s->close();
  s->waitClosed(boost::asio::use_future).wait();
  return port;
}

}  // namespace

TEST_CASE("Reconnector: backoff grows by the multiplier up to the cap") {
  EventLoopGroup group(1);
  Reconnector::Options o;
  o.initialDelay = 100ms;
  o.maxDelay = 1000ms;
  o.multiplier = 3.0;
  o.maxAttempts = 1;
  auto r = Reconnector::start(Bootstrap().group(group).connectTimeout(1s), "127.0.0.1",
                              freePort(group), o);
  CHECK(r->backoff(1) == 100ms);
  CHECK(r->backoff(2) == 300ms);
  CHECK(r->backoff(3) == 900ms);
  CHECK(r->backoff(4) == 1000ms);
  CHECK(r->backoff(40) == 1000ms);
  CHECK(eventually([&] { return r->isStopped(); }));  // one failure: gave up
  o.multiplier = 0.5;
  CHECK_THROWS_AS(Reconnector::start(Bootstrap().group(group), "127.0.0.1", 1, o),
                  IllegalArgumentError);
  CHECK_THROWS_AS(Reconnector::start(Bootstrap(), "127.0.0.1", 1), IllegalStateError);
}

TEST_CASE("Reconnector: retries until the server is there, reconnects after it closes") {
  EventLoopGroup group(2);
  const unsigned short port = freePort(group);
  std::mutex m;
  std::vector<std::chrono::steady_clock::time_point> connectedAt;
  std::atomic<int> disconnected{0};
  Reconnector::Options o;
  o.initialDelay = 20ms;
  o.maxDelay = 80ms;
  o.jitter = 0.0;
  o.onConnected = [&](std::shared_ptr<SocketChannel> ch) {
    CHECK(ch->isActive());
    std::lock_guard<std::mutex> g(m);
    connectedAt.push_back(std::chrono::steady_clock::now());
  };
  o.onDisconnected = [&] { ++disconnected; };
  auto link = Reconnector::start(Bootstrap().group(group).connectTimeout(1s), "127.0.0.1", port, o);
  // Nobody listens yet: attempts go on, spaced 20, 40, 80, 80... ms.
  REQUIRE(eventually([&] { return link->attempts() >= 4; }));
  CHECK(link->channel() == nullptr);
  CHECK(link->connections() == 0);
  auto server = ServerBootstrap().group(group).bind("127.0.0.1", port);
  REQUIRE(eventually([&] { return link->connections() == 1; }));
  REQUIRE(eventually([&] { return server->openChildren() == 1; }));
  CHECK(link->channel() != nullptr);
  // The server closes the connection: the reconnector connects again.
  server->closeChildren();
  REQUIRE(eventually([&] { return link->connections() == 2; }));
  CHECK(disconnected.load() >= 1);
  REQUIRE(eventually([&] { return link->channel() != nullptr; }));
  // stop(): closes, and no more attempts.
  auto ch = link->channel();
  link->stop();
  CHECK(link->isStopped());
  ch->waitClosed(boost::asio::use_future).wait();
  const auto attempts = link->attempts();
  std::this_thread::sleep_for(100ms);
  CHECK(link->attempts() == attempts);
  CHECK(link->channel() == nullptr);
  server->close();
}

TEST_CASE("Reconnector: gives up after maxAttempts failures in a row") {
  EventLoopGroup group(1);
  std::promise<std::error_code> gaveUp;
  Reconnector::Options o;
  o.initialDelay = 5ms;
  o.maxAttempts = 3;
  o.onGaveUp = [&](std::error_code ec) { gaveUp.set_value(ec); };
  auto link = Reconnector::start(Bootstrap().group(group).connectTimeout(1s), "127.0.0.1",
                                 freePort(group), o);
  auto f = gaveUp.get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get() == std::errc::connection_refused);
  CHECK(link->attempts() == 3);
  CHECK(link->isStopped());
}

TEST_CASE("Reconnector: the group's graceful shutdown closes its channel and ends it promptly") {
  EventLoopGroup serverGroup(1);
  auto server = ServerBootstrap().group(serverGroup).bind("127.0.0.1", 0);
  std::promise<std::error_code> gaveUp;
  std::shared_ptr<Reconnector> link;
  {
    EventLoopGroup group(1);
    Reconnector::Options o;
    o.initialDelay = 10ms;
    o.jitter = 0.0;
    o.onGaveUp = [&](std::error_code ec) { gaveUp.set_value(ec); };
    link = Reconnector::start(Bootstrap().group(group), "127.0.0.1", server->port(), o);
    REQUIRE(eventually([&] { return link->connections() == 1; }));
    const auto start = std::chrono::steady_clock::now();
    group.shutdownGracefully(200ms, 10s);  // the channel closes; the retry meets the shutdown
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    auto f = gaveUp.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK(f.get() == ChannelErrc::rejected);
    CHECK(link->isStopped());
    CHECK(link->channel() == nullptr);
  }
  link->stop();  // after the group: nothing left to touch
}

TEST_CASE("Reconnector: over a Unix domain socket") {
  EventLoopGroup group(1);
  const std::string path = "@netbuf-reconnector-" + std::to_string(::getpid());
  Reconnector::Options o;
  o.initialDelay = 10ms;
  o.jitter = 0.0;
  auto link = Reconnector::startUnix(Bootstrap().group(group), path, o);
  REQUIRE(eventually([&] { return link->attempts() >= 2; }));  // nobody listens yet
  auto server = ServerBootstrap().group(group).bindUnix(path);
  REQUIRE(eventually([&] { return link->connections() == 1; }));
  CHECK(link->channel()->isDomainSocket());
  link->stop();
  server->close();
  server->waitClosed(boost::asio::use_future).wait();
}
