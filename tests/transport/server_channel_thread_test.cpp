// ServerChannel: its own pipeline (ServerBootstrap::handler) sees the server's life and each
// accepted connection; autoRead pauses accepting; closeFuture; a group shut down by a signal.
// Run under ThreadSanitizer ("threaded").
#include <netbuf/transport/server_channel.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <csignal>
#include <future>
#include <mutex>
#include <netbuf/transport/bootstrap.hpp>
#include <string>
#include <vector>

#include "support/thread_waits.hpp"

using namespace netbuf;
using namespace std::chrono_literals;
using netbuf::test::eventually;

namespace {

/// What the server channel's pipeline saw.
struct ServerLog {
  std::mutex m;
  std::vector<std::string> events;
  std::atomic<int> children{0};
  void add(std::string e) {
    std::lock_guard<std::mutex> g(m);
    events.push_back(std::move(e));
  }
  std::vector<std::string> get() {
    std::lock_guard<std::mutex> g(m);
    return events;
  }
};

/// Passes at most `limit` connections on; the rest are dropped (closed).
struct Limit : ChannelHandler {
  std::shared_ptr<ServerLog> log;
  int limit;
  Limit(std::shared_ptr<ServerLog> l, int n) : log(std::move(l)), limit(n) {}
  void channelActive(ChannelHandlerContext& ctx) override {
    log->add("active");
    ctx.fireChannelActive();
  }
  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    REQUIRE(msg.is<ServerChannel::Child>());
    const int n = ++log->children;
    log->add("child " + std::to_string(n));
    if (n <= limit) ctx.fireChannelRead(std::move(msg));  // dropped otherwise: its socket closes
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    log->add("inactive");
    ctx.fireChannelInactive();
  }
};

struct CountActive : ChannelHandler {
  std::atomic<int>* active;
  explicit CountActive(std::atomic<int>* a) : active(a) {}
  void channelActive(ChannelHandlerContext& ctx) override {
    ++*active;
    ctx.fireChannelActive();
  }
};

/// True once the peer has closed ch (EOF seen).
struct SeesClose : ChannelHandler {
  std::atomic<bool>* closed;
  explicit SeesClose(std::atomic<bool>* c) : closed(c) {}
  void channelInactive(ChannelHandlerContext& ctx) override {
    *closed = true;
    ctx.fireChannelInactive();
  }
};

}  // namespace

TEST_CASE("ServerChannel: its pipeline sees active, each child, inactive; a handler can drop one") {
  for (bool perLoop : {false, true}) {
    CAPTURE(perLoop);
    EventLoopGroup group(2);
    auto log = std::make_shared<ServerLog>();
    std::atomic<int> childActive{0};
    auto server = ServerBootstrap()
                      .group(group)
                      .acceptorPerLoop(perLoop)
                      .handler([log](ServerChannel& s) {
                        s.pipeline().addLast("limit", std::make_unique<Limit>(log, 2));
                      })
                      .childHandler([&childActive](SocketChannel& ch) {
                        ch.pipeline().addLast("count", std::make_unique<CountActive>(&childActive));
                      })
                      .bind("127.0.0.1", 0);
    REQUIRE(eventually([&] { return !log->get().empty(); }));
    CHECK(log->get().front() == "active");
    std::atomic<bool> closed[3] = {false, false, false};
    std::vector<std::shared_ptr<SocketChannel>> clients;
    for (int i = 0; i < 3; ++i) {
      auto* flag = &closed[i];
      clients.push_back(Bootstrap()
                            .group(group)
                            .handler([flag](SocketChannel& ch) {
                              ch.pipeline().addLast("close", std::make_unique<SeesClose>(flag));
                            })
                            .connect("127.0.0.1", server->port(), boost::asio::use_future)
                            .get());
      REQUIRE(eventually([&] { return log->children.load() == i + 1; }));
    }
    CHECK(eventually([&] { return childActive.load() == 2; }));
    CHECK(eventually([&] { return closed[2].load(); }));  // the third was dropped
    CHECK_FALSE(closed[0].load());
    CHECK_FALSE(closed[1].load());
    CHECK(server->acceptedCount() == 3);
    // write() is refused: a server channel does not write.
    struct Done : WriteListener {
      std::atomic<bool> failed{false};
      void operationComplete(std::error_code ec) noexcept override { failed = ec ? true : false; }
    } done;
    server->writeAndFlush(Unpooled::copiedBuffer("x"), &done);
    CHECK(eventually([&] { return done.failed.load(); }));
    server->close();  // from this thread: handed to the server's loop
    REQUIRE(server->waitClosed(boost::asio::use_future).wait_for(10s) == std::future_status::ready);
    CHECK(eventually([&] { return log->get().back() == "inactive"; }));
    CHECK_FALSE(server->isOpen());
    for (auto& c : clients) {
      c->close();
      c->waitClosed(boost::asio::use_future)
          .wait();  // its handler writes to `closed`, which goes with this scope
    }
  }
}

TEST_CASE("ServerChannel: setAutoRead(false) stops accepting, true resumes") {
  EventLoopGroup group(1);
  std::atomic<int> childActive{0};
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([&childActive](SocketChannel& ch) {
                      ch.pipeline().addLast("count", std::make_unique<CountActive>(&childActive));
                    })
                    .bind("127.0.0.1", 0);
  auto first =
      Bootstrap().group(group).connect("127.0.0.1", server->port(), boost::asio::use_future).get();
  REQUIRE(eventually([&] { return childActive.load() == 1; }));
  server->setAutoRead(false);
  // One accept may already be pending when accepting pauses; the connection after it waits in the
  // kernel's backlog.
  auto second =
      Bootstrap().group(group).connect("127.0.0.1", server->port(), boost::asio::use_future).get();
  auto third =
      Bootstrap().group(group).connect("127.0.0.1", server->port(), boost::asio::use_future).get();
  std::this_thread::sleep_for(200ms);
  CHECK(childActive.load() <= 2);
  server->setAutoRead(true);
  CHECK(eventually([&] { return childActive.load() == 3; }));
  for (auto* c : {&first, &second, &third}) (*c)->close();
}

TEST_CASE("ServerChannel: a server's main in three lines, ended by SIGTERM") {
  std::atomic<int> childActive{0};
  std::thread killer;
  {
    EventLoopGroup group(2);
    group.shutdownGracefullyOnSignals({SIGINT, SIGTERM}, 0ms, 5s);
    CHECK_THROWS_AS(group.shutdownGracefullyOnSignals(), IllegalStateError);
    auto server = ServerBootstrap()
                      .group(group)
                      .childHandler([&childActive](SocketChannel& ch) {
                        ch.pipeline().addLast("count", std::make_unique<CountActive>(&childActive));
                      })
                      .bind("127.0.0.1", 0);
    auto client = Bootstrap()
                      .group(group)
                      .connect("127.0.0.1", server->port(), boost::asio::use_future)
                      .get();
    REQUIRE(eventually([&] { return childActive.load() == 1; }));
    killer = std::thread([] {
      std::this_thread::sleep_for(50ms);
      std::raise(SIGTERM);  // delivered to the set the group installed
    });
    server->waitClosed(boost::asio::use_future).wait();  // what the server's main does
    CHECK(group.awaitTermination(10s));
    CHECK(group.isTerminated());
    CHECK_FALSE(client->isOpen());  // the graceful shutdown closed every channel
  }
  killer.join();
}

TEST_CASE("EventLoopGroup: awaitTermination waits for a shutdown made elsewhere") {
  EventLoopGroup group(1);
  CHECK_FALSE(group.awaitTermination(10ms));
  std::thread t([&] { group.shutdownGracefully(0ms, 1s); });
  group.awaitTermination();
  CHECK(group.isTerminated());
  t.join();
  std::promise<bool> threw;
  EventLoopGroup other(1);
  other.loop(0).execute([&] {
    try {
      other.awaitTermination();
      threw.set_value(false);
    } catch (const IllegalStateError&) {
      threw.set_value(true);
    }
  });
  CHECK(threw.get_future().get());
}

TEST_CASE("ServerChannel: released on a loop thread, with an acceptor per loop, without a stall") {
  EventLoopGroup group(2);
  auto server = ServerBootstrap().group(group).acceptorPerLoop(true).bind("127.0.0.1", 0);
  auto closed = server->waitClosed(boost::asio::use_future);
  std::promise<std::chrono::steady_clock::duration> took;
  group.loop(0).execute([&took, s = std::move(server)]() mutable {
    const auto start = std::chrono::steady_clock::now();
    s.reset();  // the last reference, on a loop: hands the close to the other loop, no wait
    took.set_value(std::chrono::steady_clock::now() - start);
  });
  CHECK(took.get_future().get() < 1s);
  CHECK(closed.wait_for(10s) == std::future_status::ready);
}

TEST_CASE("ServerChannel: a write fails its listener exactly once") {
  EventLoopGroup group(1);
  auto server = ServerBootstrap().group(group).bind("127.0.0.1", 0);
  struct Count : WriteListener {
    std::atomic<int> calls{0};
    std::error_code ec;
    void operationComplete(std::error_code e) noexcept override {
      ec = e;
      ++calls;
    }
  } count;
  server->writeAndFlush(Unpooled::copiedBuffer("x"), &count);
  CHECK(eventually([&] { return count.calls.load() == 1; }));
  std::this_thread::sleep_for(50ms);
  CHECK(count.calls.load() == 1);
  CHECK(count.ec == ChannelErrc::writeFailed);
  CHECK(server->isOpen());  // the server goes on
}

TEST_CASE("EventLoopGroup: shutdownGracefullyOnSignals after the shutdown is refused") {
  EventLoopGroup group(1);
  group.shutdownGracefully(0ms, 1s);
  CHECK_THROWS_AS(group.shutdownGracefullyOnSignals(), IllegalStateError);
}
