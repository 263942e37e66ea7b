// SocketChannel, ServerBootstrap and Bootstrap over loopback TCP (port 0): connect, accept, read,
// write, close, half-close, peer reset, water marks with a slow reader, many connections,
// exceptions in handlers, refused connections. Run under ThreadSanitizer ("threaded").
#include <netbuf/transport/socket_channel.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <sys/resource.h>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <netbuf/transport/bootstrap.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
using boost::asio::ip::tcp;

namespace {

using netbuf::test::eventually;
using netbuf::test::onLoop;

/// Writes back every buffer it reads; flushes once per read batch.
struct EchoHandler : ChannelHandler {
  std::atomic<int>* inactive;
  explicit EchoHandler(std::atomic<int>* i = nullptr) : inactive(i) {}
  void channelRead(ChannelHandlerContext& ctx, Message msg) override { ctx.write(std::move(msg)); }
  void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }
  void channelInactive(ChannelHandlerContext& ctx) override {
    if (inactive != nullptr) ++*inactive;
    ctx.fireChannelInactive();
  }
};

/// Collects what a channel receives (thread-safe view for the test thread).
struct Collector : ChannelHandler {
  std::mutex m;
  std::string bytes;
  std::atomic<bool> active{false};
  std::atomic<bool> inactive{false};
  std::atomic<int> writabilityChanges{0};
  void channelActive(ChannelHandlerContext& ctx) override {
    active = true;
    ctx.fireChannelActive();
  }
  void channelRead(ChannelHandlerContext&, Message msg) override {
    std::lock_guard<std::mutex> g(m);
    bytes += readableBytesToString(AnyByteBuf(msg.take<ByteBuf>()));
  }
  void channelInactive(ChannelHandlerContext&) override { inactive = true; }
  void channelWritabilityChanged(ChannelHandlerContext&) override { ++writabilityChanges; }
  std::size_t size() {
    std::lock_guard<std::mutex> g(m);
    return bytes.size();
  }
  std::string text() {
    std::lock_guard<std::mutex> g(m);
    return bytes;
  }
};

ByteBuf text(std::string_view s) { return Unpooled::copiedBuffer(s); }

/// The Collector named "collect" in ch's pipeline (looked up on the channel's loop: a pipeline
/// belongs to its loop).
Collector* collectorOf(SocketChannel& ch) {
  Collector* c = nullptr;
  onLoop(ch, [&] { c = static_cast<Collector*>(ch.pipeline().get("collect")); });
  return c;
}

/// A server on 127.0.0.1:0 whose channels each get one EchoHandler (counting into inactive).
std::shared_ptr<ServerChannel> echoServer(EventLoopGroup& group,
                                          std::atomic<int>* inactive = nullptr,
                                          const std::string& address = "127.0.0.1") {
  return ServerBootstrap()
      .group(group)
      .childHandler([inactive](SocketChannel& ch) {
        ch.pipeline().addLast("echo", std::make_unique<EchoHandler>(inactive));
      })
      .bind(address, 0);
}

/// A client connected to host:port whose pipeline is one Collector (returned through col).
std::shared_ptr<SocketChannel> collectingClient(EventLoopGroup& group, const std::string& host,
                                                unsigned short port, Collector*& col,
                                                const ChannelOptions& options = {}) {
  auto ch = Bootstrap()
                .group(group)
                .options(options)
                .connectTimeout(5s)
                .handler([](SocketChannel& c) {
                  c.pipeline().addLast("collect", std::make_unique<Collector>());
                })
                .connect(host, port, boost::asio::use_future)
                .get();
  col = collectorOf(*ch);
  return ch;
}

}  // namespace

TEST_CASE("TCP: echo round trip, addresses, options, close on both sides") {
  EventLoopGroup group(2);
  std::atomic<int> serverInactive{0};
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([&](SocketChannel& ch) {
                      if (!ch.eventLoop().inEventLoop()) ++serverInactive;  // would fail below
                      ch.pipeline().addLast("echo", std::make_unique<EchoHandler>(&serverInactive));
                    })
                    .bind("127.0.0.1", 0);
  REQUIRE(server->port() != 0);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  REQUIRE(client);
  REQUIRE(col != nullptr);
  CHECK(client->isActive());
  onLoop(*client, [&] {
    CHECK(client->remoteEndpoint().port() == server->port());
    CHECK(client->remoteAddress() == "127.0.0.1:" + std::to_string(server->port()));
    CHECK(client->localAddress().rfind("127.0.0.1:", 0) == 0);
  });

  std::string sent;
  onLoop(*client, [&] {
    for (int i = 0; i < 100; ++i) {
      std::string piece = "message " + std::to_string(i) + "\n";
      sent += piece;
      client->write(text(piece));
    }
    client->flush();
  });
  REQUIRE(eventually([&] { return col->size() == sent.size(); }));
  CHECK(col->text() == sent);
  CHECK(eventually([&] { return server->acceptedCount() == 1 && server->openChildren() == 1; }));

  onLoop(*client, [&] {
    client->close();
    CHECK_FALSE(client->isOpen());
  });
  CHECK(col->inactive.load());
  CHECK(eventually([&] { return serverInactive.load() == 1; }));
  CHECK(eventually([&] { return server->openChildren() == 0; }));
  server->close();
  server->close();  // idempotent
}

TEST_CASE("TCP: an accepted channel with reading off and nothing in flight stays open") {
  // Netty's backpressure idiom: a handler turns autoRead off and on again later. While it is off
  // and nothing is being written, no I/O operation holds the channel; it must stay open (and
  // alive) until it is closed, not be destroyed with its socket still open.
  EventLoopGroup group(1);
  std::atomic<int> inactive{0};
  std::mutex m;
  std::weak_ptr<SocketChannel> accepted;
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([&](SocketChannel& ch) {
                      {
                        std::lock_guard<std::mutex> g(m);
                        accepted = ch.shared_from_this();
                      }
                      ch.setAutoRead(false);
                      ch.pipeline().addLast("echo", std::make_unique<EchoHandler>(&inactive));
                    })
                    .bind("127.0.0.1", 0);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  onLoop(*client, [&] { client->writeAndFlush(text("ping")); });
  REQUIRE(eventually([&] {
    std::lock_guard<std::mutex> g(m);
    return !accepted.expired();
  }));
  std::this_thread::sleep_for(100ms);  // nothing read, nothing written: no operation in flight
  std::shared_ptr<SocketChannel> ch;
  {
    std::lock_guard<std::mutex> g(m);
    ch = accepted.lock();
  }
  REQUIRE(ch != nullptr);
  bool open = false;
  onLoop(*ch, [&] { open = ch->isOpen(); });
  CHECK(open);
  CHECK(inactive == 0);
  CHECK(server->openChildren() == 1);
  onLoop(*ch, [&] { ch->setAutoRead(true); });
  CHECK(eventually([&] { return col->text() == "ping"; }));  // read and echoed after all
  ch.reset();
  onLoop(*client, [&] { client->close(); });
  CHECK(eventually([&] { return inactive == 1; }));
  server->close();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("TCP: a channel owned only by its loop may be closed from a loop task") {
  // Reading off from the start, nothing written: the loop's hook is the channel's only owner. A
  // close from a plain loop task (no event, no operation holding the channel) must not destroy
  // it under the pipeline code that runs the close (ASan: use after free otherwise).
  EventLoopGroup group(1);
  std::atomic<int> inactive{0};
  std::atomic<SocketChannel*> accepted{nullptr};
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([&](SocketChannel& ch) {
                      ch.setAutoRead(false);
                      ch.pipeline().addLast("echo", std::make_unique<EchoHandler>(&inactive));
                      accepted = &ch;
                    })
                    .bind("127.0.0.1", 0);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  REQUIRE(eventually([&] { return accepted.load() != nullptr; }));
  std::this_thread::sleep_for(50ms);  // start() has finished: the hook holds the channel
  SocketChannel* raw = accepted.load();
  raw->eventLoop().execute([raw] { raw->close(); });
  CHECK(eventually([&] { return inactive == 1; }));
  CHECK(eventually([&] { return col->inactive.load(); }));  // the client sees the close
  CHECK(eventually([&] { return server->openChildren() == 0; }));
  server->close();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("TCP: an initializer may close the channel it is given") {
  EventLoopGroup group(1);
  std::atomic<int> initialized{0};
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([&](SocketChannel& ch) {
                      ++initialized;
                      ch.close();  // e.g. a connection limit
                    })
                    .bind("127.0.0.1", 0);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  CHECK(eventually([&] { return col->inactive.load(); }));  // closed by the server at once
  CHECK(initialized == 1);
  CHECK(eventually([&] { return server->openChildren() == 0; }));
  server->close();
  const auto start = std::chrono::steady_clock::now();
  group.shutdownGracefully(0ms, 5s);  // nothing left open: no wait for the timeout
  CHECK(std::chrono::steady_clock::now() - start < 2s);
}

TEST_CASE("TCP: gather writes of composites, write listeners, writes after close fail") {
  EventLoopGroup group(1);
  auto server = echoServer(group);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  struct Listener : WriteListener {
    std::atomic<int> ok{0}, failed{0};
    void operationComplete(std::error_code ec) noexcept override { ec ? ++failed : ++ok; }
  } listener;
  onLoop(*client, [&] {
    ByteBuf parts[] = {text("com"), text("po"), text("site|")};
    client->write(compositeOf(parts), &listener);
    client->write(AnyByteBuf(text("any|")), &listener);
    client->write(ByteBuf(), &listener);  // an empty buffer completes too
    client->writeAndFlush(text("plain|"), &listener);
  });
  REQUIRE(eventually([&] { return col->size() == 20; }));
  CHECK(col->text() == "composite|any|plain|");
  CHECK(listener.ok.load() == 4);
  onLoop(*client, [&] {
    client->close();
    client->writeAndFlush(text("late"), &listener);
    CHECK(client->pendingWriteBytes() == 0);
  });
  CHECK(listener.failed.load() == 1);
}

TEST_CASE("TCP: half-close delivers queued data, then EOF; a peer reset is an inactive event") {
  EventLoopGroup group(2);
  std::atomic<int> serverInactive{0};
  auto server = echoServer(group, &serverInactive);
  SUBCASE("shutdownOutput") {
    Collector* col = nullptr;
    auto client = collectingClient(group, "127.0.0.1", server->port(), col);
    onLoop(*client, [&] {
      client->write(text("last words"));
      client->shutdownOutput();
    });
    // The server reads the data, echoes it, then sees EOF and closes; the client reads the echo.
    REQUIRE(eventually([&] { return col->inactive.load(); }));
    CHECK(col->text() == "last words");
    onLoop(*client, [&] { CHECK(client->isOutputShutdown()); });
    CHECK(eventually([&] { return serverInactive.load() == 1; }));
  }
  SUBCASE("peer reset") {
    boost::asio::io_context io;
    tcp::socket raw(io);
    raw.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), server->port()));
    boost::asio::write(raw, boost::asio::buffer(std::string("x")));
    char back = 0;
    boost::asio::read(raw, boost::asio::buffer(&back, 1));
    CHECK(back == 'x');
    raw.set_option(boost::asio::socket_base::linger(true, 0));  // close sends RST
    raw.close();
    CHECK(eventually([&] { return serverInactive.load() == 1; }));
  }
}

TEST_CASE("TCP: water marks bound a fast writer to a slow reader") {
  EventLoopGroup group(2);
  constexpr std::size_t kTotal = 64 * 1024 * 1024;  // the size
  constexpr std::size_t kChunk = 16 * 1024;
  struct Producer : ChannelHandler {
    std::size_t written = 0;
    std::size_t maxPending = 0;
    std::atomic<int> unwritableSeen{0}, writableAgain{0};
    std::atomic<bool> done{false};
    void produce(ChannelHandlerContext& ctx) {
      auto& ch = static_cast<SocketChannel&>(ctx.channel());
      while (written < kTotal && ch.isWritable()) {
        ByteBuf b = ctx.alloc().buffer(kChunk);
        b.writeZero(kChunk);
        ctx.writeAndFlush(std::move(b));
        written += kChunk;
        maxPending = std::max(maxPending, ch.pendingWriteBytes());
      }
      if (written >= kTotal) done = true;
    }
    void channelActive(ChannelHandlerContext& ctx) override { produce(ctx); }
    void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
      if (ctx.channel().isWritable()) {
        ++writableAgain;
        produce(ctx);
      } else {
        ++unwritableSeen;
      }
    }
  };
  Producer* producer = nullptr;
  std::atomic<bool> ready{false};
  ChannelOptions serverOpts;
  serverOpts.sendBufferSize = 64 * 1024;  // keep the kernel's share small and predictable
  auto server = ServerBootstrap()
                    .group(group)
                    .childOptions(serverOpts)
                    .childHandler([&](SocketChannel& ch) {
                      auto p = std::make_unique<Producer>();
                      producer = p.get();
                      ch.pipeline().addLast("produce", std::move(p));
                      ready = true;
                    })
                    .bind("127.0.0.1", 0);
  ChannelOptions clientOpts;
  clientOpts.autoRead = false;  // the slow reader: reads nothing at first
  clientOpts.receiveBufferSize = 64 * 1024;
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col, clientOpts);
  REQUIRE(eventually([&] { return ready.load() && producer->unwritableSeen.load() >= 1; }));
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(producer->done.load());  // blocked by the water mark, not buffering 64 MiB
  onLoop(*client, [&] { client->setAutoRead(true); });
  REQUIRE(eventually([&] { return col->size() == kTotal; }));
  CHECK(producer->done.load());
  CHECK(producer->writableAgain.load() >= 1);
  // Queued bytes never exceeded the high water mark by more than the chunk that crossed it.
  CHECK(producer->maxPending <= 64 * 1024 + kChunk);
  onLoop(*client, [&] { CHECK(client->isAutoRead()); });
}

TEST_CASE("TCP: many concurrent connections, each echoed exactly") {
  EventLoopGroup serverGroup(2);
  EventLoopGroup clientGroup(2);
  auto server = echoServer(serverGroup);
  // 500 connections need ~1000 descriptors here (both ends): raise the soft limit if it is lower.
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 2048 && lim.rlim_max > lim.rlim_cur) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 2048);
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  constexpr int kConnections = 500;  // the count
  std::vector<std::shared_ptr<SocketChannel>> clients;
  std::atomic<int> connected{0};
  std::atomic<int> failed{0};
  std::mutex m;
  for (int i = 0; i < kConnections; ++i) {
    Bootstrap()
        .group(clientGroup)
        .handler([](SocketChannel& ch) {
          ch.pipeline().addLast("collect", std::make_unique<Collector>());
        })
        .connect("127.0.0.1", server->port(),
                 [&, i](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
                   if (ec) {
                     ++failed;
                     return;
                   }
                   ch->writeAndFlush(text("hello " + std::to_string(i)));
                   std::lock_guard<std::mutex> g(m);
                   clients.push_back(std::move(ch));
                   ++connected;
                 });
  }
  REQUIRE(eventually([&] { return connected.load() + failed.load() == kConnections; }));
  CHECK(failed.load() == 0);
  std::lock_guard<std::mutex> g(m);
  for (auto& ch : clients) {
    auto* col = collectorOf(*ch);
    CHECK(eventually([&] { return col->size() >= 7; }));
    CHECK(col->text().rfind("hello ", 0) == 0);
  }
  CHECK(eventually([&] { return server->openChildren() == kConnections; }));
  server->closeChildren();
  CHECK(eventually([&] {
    for (auto& ch : clients) {
      if (ch->isOpen()) return false;
    }
    return true;
  }));
}

TEST_CASE("TCP: a handler's exception closes its channel; refused and timed-out connects fail") {
  EventLoopGroup group(1);
  struct Thrower : ChannelHandler {
    void channelRead(ChannelHandlerContext&, Message) override {
      throw std::runtime_error("handler failed (expected by the test)");
    }
  };
  std::atomic<int> inactive{0};
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([&](SocketChannel& ch) {
                      ch.pipeline().addLast("throw", std::make_unique<Thrower>());
                      ch.pipeline().addLast("count", std::make_unique<EchoHandler>(&inactive));
                    })
                    .bind("127.0.0.1", 0);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  onLoop(*client, [&] { client->writeAndFlush(text("boom")); });
  CHECK(eventually([&] { return inactive.load() == 1; }));  // the server closed the channel
  CHECK(eventually([&] { return col->inactive.load(); }));

  const unsigned short port = server->port();
  server->close();
  server.reset();
  try {
    Bootstrap()
        .group(group)
        .connectTimeout(2s)
        .connect("127.0.0.1", port, boost::asio::use_future)
        .get();
    FAIL("connected to a closed port");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code().value() != 0);
  }
  CHECK_THROWS_AS(Bootstrap().connect("127.0.0.1", port, boost::asio::use_future).get(),
                  IllegalStateError);
  CHECK_THROWS_AS(ServerBootstrap().bind("127.0.0.1", 0), IllegalStateError);
  CHECK_THROWS_AS(ServerBootstrap().group(group).bind("not an address", 0), std::system_error);
}

TEST_CASE("TCP: IPv6 loopback, when the machine has it") {
  EventLoopGroup group(1);
  std::shared_ptr<ServerChannel> server;
  try {
    server = echoServer(group, nullptr, "::1");
  } catch (const std::system_error&) {
    MESSAGE("no IPv6 loopback here: skipped");
    return;
  }
  Collector* col = nullptr;
  auto client = collectingClient(group, "::1", server->port(), col);
  onLoop(*client, [&] { client->writeAndFlush(text("six")); });
  CHECK(eventually([&] { return col->text() == "six"; }));
  onLoop(*client, [&] { CHECK(client->remoteEndpoint().address().is_v6()); });
}

TEST_CASE("TCP: graceful shutdown stops accepting, lets queued writes drain, closes channels") {
  constexpr std::size_t kTotal = 2 * 1024 * 1024;
  struct Sender : ChannelHandler {
    void channelActive(ChannelHandlerContext& ctx) override {
      // Everything queued at once: far above the water mark, so most of it is still queued when
      // the shutdown begins.
      for (std::size_t sent = 0; sent < kTotal; sent += 64 * 1024) {
        ByteBuf b = ctx.alloc().buffer(64 * 1024);
        b.writeZero(64 * 1024);
        ctx.write(std::move(b));
      }
      ctx.flush();
    }
  };
  EventLoopGroup serverGroup(1);
  EventLoopGroup clientGroup(1);
  auto server = ServerBootstrap()
                    .group(serverGroup)
                    .childHandler([](SocketChannel& ch) {
                      ch.pipeline().addLast("send", std::make_unique<Sender>());
                    })
                    .bind("127.0.0.1", 0);
  const unsigned short port = server->port();
  ChannelOptions slow;
  slow.receiveBufferSize = 32 * 1024;
  Collector* col = nullptr;
  auto client = collectingClient(clientGroup, "127.0.0.1", port, col, slow);
  REQUIRE(eventually([&] { return col->size() > 0; }));
  CHECK(serverGroup.loop(0).openChannels() == 1);
  serverGroup.shutdownGracefully(0ms, 10s);
  CHECK(serverGroup.loop(0).openChannels() == 0);
  // Everything queued before the shutdown arrived, then the connection closed.
  CHECK(eventually([&] { return col->inactive.load(); }));
  CHECK(col->size() == kTotal);
  // The acceptor was closed: nobody listens on the port any more.
  CHECK_THROWS_AS(Bootstrap()
                      .group(clientGroup)
                      .connectTimeout(2s)
                      .connect("127.0.0.1", port, boost::asio::use_future)
                      .get(),
                  boost::system::system_error);
  server.reset();  // after its group: the acceptor is already closed, nothing touches the loop
}

TEST_CASE("TCP: one SO_REUSEPORT acceptor per loop serves every connection on its own loop") {
  EventLoopGroup group(2);
  auto server = ServerBootstrap()
                    .group(group)
                    .acceptorPerLoop(true)
                    .childHandler([](SocketChannel& ch) {
                      ch.pipeline().addLast("echo", std::make_unique<EchoHandler>());
                    })
                    .bind("127.0.0.1", 0);
  EventLoopGroup clientGroup(1);
  std::vector<std::shared_ptr<SocketChannel>> clients;
  std::vector<Collector*> cols;
  for (int i = 0; i < 40; ++i) {
    Collector* col = nullptr;
    clients.push_back(collectingClient(clientGroup, "127.0.0.1", server->port(), col));
    cols.push_back(col);
    auto& ch = clients.back();
    onLoop(*ch, [&] { ch->writeAndFlush(text("ping")); });
  }
  for (Collector* col : cols) CHECK(eventually([&] { return col->text() == "ping"; }));
  CHECK(server->acceptedCount() == 40);
  // The kernel spread the connections over both acceptors (2^-39 odds of all on one).
  CHECK(group.loop(0).openChannels() > 0);
  CHECK(group.loop(1).openChannels() > 0);
  CHECK(group.loop(0).openChannels() + group.loop(1).openChannels() == 40);
  server->closeChildren();
  CHECK(eventually([&] { return server->openChildren() == 0; }));
}

TEST_CASE("TCP: a channel whose last reference goes on another thread is destroyed on its loop") {
  EventLoopGroup group(1);
  auto server = echoServer(group);
  struct Watch : ChannelHandler {
    std::promise<std::thread::id>* destroyedOn;
    explicit Watch(std::promise<std::thread::id>* p) : destroyedOn(p) {}
    ~Watch() override { destroyedOn->set_value(std::this_thread::get_id()); }
  };
  std::promise<std::thread::id> destroyedOn;
  std::promise<std::thread::id> loopThread;
  group.loop(0).execute([&] { loopThread.set_value(std::this_thread::get_id()); });
  auto client = Bootstrap()
                    .group(group)
                    .handler([&](SocketChannel& ch) {
                      ch.pipeline().addLast("watch", std::make_unique<Watch>(&destroyedOn));
                    })
                    .connect("127.0.0.1", server->port(), boost::asio::use_future)
                    .get();
  client->close();
  client->waitClosed(boost::asio::use_future).wait();
  client.reset();  // the last reference, on this thread
  auto f = destroyedOn.get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get() == loopThread.get_future().get());
}

TEST_CASE("TCP: one flush hands a thousand buffers to the socket in one gather write") {
  EventLoopGroup group(1);
  auto server = echoServer(group);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  struct Count : WriteListener {
    std::atomic<int> done{0};
    void operationComplete(std::error_code ec) noexcept override { done += ec ? 0 : 1; }
  } count;
  std::size_t pendingAfterFlush = 1;
  onLoop(*client, [&] {
    for (int i = 0; i < 1000; ++i) client->write(text("0123456789"), &count);
    client->flush();
    pendingAfterFlush = client->pendingWriteBytes();  // written before flush() returned
  });
  if (group.transport() == Transport::Asio) {
    // Asio's flush writes before it returns.
    CHECK(pendingAfterFlush == 0);
    CHECK(count.done.load() == 1000);
  } else {
    // io_uring's is one sendmsg submission, at the end of the loop turn.
    CHECK(pendingAfterFlush == 10000);
    CHECK(eventually([&] { return count.done.load() == 1000; }));
  }
  CHECK(eventually([&] { return col->size() == 10000; }));
  client->close();
}

TEST_CASE("TCP: autoRead turned on in channelActive starts exactly one read; order holds") {
  EventLoopGroup group(1);
  struct LateReader : ChannelHandler {
    void channelActive(ChannelHandlerContext& ctx) override {
      ctx.channel().setAutoRead(true);
      ctx.fireChannelActive();
    }
    void channelRead(ChannelHandlerContext& ctx, Message msg) override {
      ctx.write(std::move(msg));
    }
    void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }
  };
  ChannelOptions off;
  off.autoRead = false;
  auto server = ServerBootstrap()
                    .group(group)
                    .childOptions(off)
                    .childHandler([](SocketChannel& ch) {
                      ch.pipeline().addLast("late", std::make_unique<LateReader>());
                    })
                    .bind("127.0.0.1", 0);
  Collector* col = nullptr;
  auto client = collectingClient(group, "127.0.0.1", server->port(), col);
  std::string sent;
  for (int i = 0; i < 2000; ++i) {
    const std::string line = std::to_string(i) + ",";
    sent += line;
    client->writeAndFlush(text(line));
  }
  REQUIRE(eventually([&] { return col->size() == sent.size(); }));
  CHECK(col->text() == sent);
  client->close();
}

TEST_CASE("TCP: a handler that throws while a connection starts fails the connect at once") {
  EventLoopGroup group(1);
  auto server = echoServer(group);
  const auto start = std::chrono::steady_clock::now();
  try {
    Bootstrap()
        .group(group)
        .connectTimeout(20s)
        .handler([](SocketChannel&) { throw std::runtime_error("no pipeline today"); })
        .connect("127.0.0.1", server->port(), boost::asio::use_future)
        .get();
    FAIL("connect succeeded");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == ChannelErrc::initializerFailed);
  }
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("TCP: a connect in flight when the group shuts down fails with rejected") {
  // A listener that never accepts, with its backlog full: the next SYN gets no answer, so the
  // connect waits (on loopback, without a route anywhere).
  boost::asio::io_context io;
  tcp::acceptor full(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  full.listen(0);
  const unsigned short port = full.local_endpoint().port();
  std::vector<tcp::socket> fillers;
  for (int i = 0; i < 4; ++i) {
    tcp::socket s(io);
    s.open(tcp::v4());
    s.non_blocking(true);
    // A raw connect (Asio's waits for the handshake): fills the backlog, or sits in SYN-SENT.
    const tcp::endpoint to(boost::asio::ip::make_address("127.0.0.1"), port);
    (void)::connect(s.native_handle(), to.data(), static_cast<socklen_t>(to.size()));
    fillers.push_back(std::move(s));
  }
  EventLoopGroup group(1);
  std::promise<std::error_code> result;
  Bootstrap().group(group).connectTimeout(30s).connect(
      "127.0.0.1", port, [&](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
        if (ch) ch->close();
        result.set_value(ec);
      });
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  group.shutdownGracefully(0ms, 10s);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  auto f = result.get_future();
  REQUIRE(f.wait_for(1s) == std::future_status::ready);
  const std::error_code ec = f.get();
  // The SYN may still have been answered (then the connect succeeded and was closed): most runs
  // see the shutdown end the attempt.
  MESSAGE("the connect ended with: " << (ec ? ec.message() : std::string("success")));
  CHECK((ec == ChannelErrc::rejected || !ec));
}
