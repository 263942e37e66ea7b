// Transport (transport.hpp): names, the choice NETBUF_TRANSPORT makes, and a group of each
// transport made explicitly (whatever NETBUF_TRANSPORT says): loops, tasks, timers, TCP and Unix
// echo, an adopted descriptor, and the ring's buffers back in the pool once the group is gone.
// The whole transport suite runs on io_uring too (tests/CMakeLists.txt); this file checks what
// only the explicit choice shows. Run under ThreadSanitizer by scripts/test ("threaded").
#include <netbuf/transport/transport.hpp>

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdlib>
#include <future>
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
#include <netbuf/netbuf.hpp>
#include <string>
#include <vector>

#include "support/thread_waits.hpp"

using namespace netbuf;
using namespace netbuf::test;
using namespace std::chrono_literals;

namespace {

ByteBuf text(std::string_view s) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(s.size());
  b.writeBytes(s.data(), s.size());
  return b;
}

/// Echoes what it reads.
struct Echo : ChannelHandler {
  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    ctx.writeAndFlush(std::move(msg));
  }
};

/// What a Collect handler read, owned by the test (it outlives the channel).
struct Sink {
  std::mutex m;
  std::string got;
  std::string text() {
    std::lock_guard<std::mutex> g(m);
    return got;
  }
};

/// Appends what it reads (loop thread) to a Sink.
struct Collect : ChannelHandler {
  Sink* sink;
  explicit Collect(Sink* s) : sink(s) {}
  void channelRead(ChannelHandlerContext&, Message msg) override {
    ByteBuf b = msg.take<ByteBuf>();
    std::lock_guard<std::mutex> g(sink->m);
    sink->got.append(reinterpret_cast<const char*>(b.readableBuffer().data()), b.readableBytes());
  }
};

std::vector<Transport> availableTransports() {
  std::vector<Transport> t{Transport::Asio};
  if (ioUringSupport().available) t.push_back(Transport::IoUring);
  return t;
}

/// A sorted-out environment variable for one test (restored after).
struct EnvVar {
  const char* name;
  std::string saved;
  bool had;
  EnvVar(const char* n, const char* value) : name(n) {
    const char* old = std::getenv(n);
    had = old != nullptr;
    if (had) saved = old;
    if (value != nullptr) {
      ::setenv(n, value, 1);
    } else {
      ::unsetenv(n);
    }
  }
  ~EnvVar() {
    if (had) {
      ::setenv(name, saved.c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
};

}  // namespace

TEST_CASE("Transport: names round trip; unknown names are refused") {
  for (Transport t : {Transport::Asio, Transport::IoUring, Transport::Auto, Transport::Default}) {
    CHECK(parseTransport(transportName(t)) == t);
  }
  CHECK(parseTransport("iouring") == Transport::IoUring);
  CHECK(parseTransport("io-uring") == Transport::IoUring);
  CHECK_FALSE(parseTransport("epoll").has_value());
  CHECK_FALSE(parseTransport("").has_value());
  CHECK_FALSE(parseTransport("ASIO").has_value());
}

TEST_CASE("Transport: Default is NETBUF_TRANSPORT's choice, else Asio") {
  {
    EnvVar env("NETBUF_TRANSPORT", nullptr);
    CHECK(resolveTransport(Transport::Default) == Transport::Asio);
  }
  {
    EnvVar env("NETBUF_TRANSPORT", "asio");
    CHECK(resolveTransport(Transport::Default) == Transport::Asio);
  }
  {
    EnvVar env("NETBUF_TRANSPORT", "auto");
    CHECK(resolveTransport(Transport::Default) ==
          (ioUringSupport().available ? Transport::IoUring : Transport::Asio));
  }
  {
    EnvVar env("NETBUF_TRANSPORT", "epoll");
    CHECK_THROWS_AS(resolveTransport(Transport::Default), IllegalArgumentError);
    CHECK_THROWS_AS(EventLoopGroup(1), IllegalArgumentError);
  }
  CHECK(resolveTransport(Transport::Asio) == Transport::Asio);
  if (ioUringSupport().available) {
    CHECK(ioUringSupport().reason.empty());
    CHECK(resolveTransport(Transport::IoUring) == Transport::IoUring);
    CHECK(resolveTransport(Transport::Auto) == Transport::IoUring);
  } else {
    MESSAGE("io_uring unavailable here: " << ioUringSupport().reason);
    CHECK_FALSE(ioUringSupport().reason.empty());
    CHECK_THROWS_AS(resolveTransport(Transport::IoUring), TransportUnavailableError);
    CHECK_THROWS_AS(EventLoopGroup(1, Transport::IoUring), TransportUnavailableError);
    CHECK(resolveTransport(Transport::Auto) == Transport::Asio);
  }
}

TEST_CASE("Transport: a group of each transport runs tasks, timers and TCP and Unix echo") {
  for (Transport transport : availableTransports()) {
    CAPTURE(transportName(transport));
    EventLoopGroup group(2, transport);
    CHECK(group.transport() == transport);
    CHECK(group.loop(0).transport() == transport);
    CHECK(group.loop(1).transport() == transport);
    CHECK((group.loop(0).ioUring() != nullptr) == (transport == Transport::IoUring));
    // Tasks from another thread wake a sleeping loop; timers fire on it.
    std::promise<bool> ran;
    group.loop(1).execute([&] { ran.set_value(group.loop(1).inEventLoop()); });
    CHECK(ran.get_future().get());
    std::promise<void> fired;
    const auto start = std::chrono::steady_clock::now();
    group.loop(0).schedule(20ms, [&] { fired.set_value(); });
    REQUIRE(fired.get_future().wait_for(5s) == std::future_status::ready);
    CHECK(std::chrono::steady_clock::now() - start >= 20ms);

    auto init = [](SocketChannel& ch) { ch.pipeline().addLast("echo", std::make_unique<Echo>()); };
    auto tcp = ServerBootstrap().group(group).childHandler(init).bind("127.0.0.1", 0);
    const std::string path = "@netbuf-transport-test-" + std::to_string(::getpid()) + "-" +
                             std::string(transportName(transport));
    auto unix = ServerBootstrap().group(group).childHandler(init).bindUnix(path);
    Sink tcpSink;
    Sink unixSink;
    Sink* tcpCol = &tcpSink;
    Sink* unixCol = &unixSink;
    auto tcpClient = Bootstrap()
                         .group(group)
                         .handler([&](SocketChannel& ch) {
                           ch.pipeline().addLast("collect", std::make_unique<Collect>(&tcpSink));
                         })
                         .connect("127.0.0.1", tcp->port(), boost::asio::use_future)
                         .get();
    auto unixClient = Bootstrap()
                          .group(group)
                          .handler([&](SocketChannel& ch) {
                            ch.pipeline().addLast("collect", std::make_unique<Collect>(&unixSink));
                          })
                          .connectUnix(path, boost::asio::use_future)
                          .get();
    // 256 KiB in 4 KiB writes: more than the ring's buffers hold at once, and more than a socket
    // buffer, so reads and writes both go round several times.
    std::string expect;
    for (int i = 0; i < 64; ++i) {
      std::string chunk(4096, static_cast<char>('a' + i % 26));
      expect += chunk;
      tcpClient->write(text(chunk));
      unixClient->write(text(chunk));
    }
    tcpClient->flush();
    unixClient->flush();
    CHECK(eventually([&] { return tcpCol->text().size() == expect.size(); }));
    CHECK(eventually([&] { return unixCol->text().size() == expect.size(); }));
    CHECK(tcpCol->text() == expect);
    CHECK(unixCol->text() == expect);
    tcpClient->close(boost::asio::use_future).get();
    unixClient->close(boost::asio::use_future).get();
    tcp->close();
    unix->close();
    group.shutdownGracefully(0ms, 5s);
  }
}

TEST_CASE("Transport: SocketChannel::create adopts a connected descriptor on either transport") {
  for (Transport transport : availableTransports()) {
    CAPTURE(transportName(transport));
    EventLoopGroup group(1, transport);
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    auto ch = SocketChannel::create(group.loop(0), fds[0], ChannelOptions{});
    CHECK(ch->isDomainSocket());
    CHECK(ch->remoteAddress() == "(unnamed)");
    std::promise<void> started;
    group.loop(0).execute([&] {
      ch->start([](SocketChannel& c) { c.pipeline().addLast("echo", std::make_unique<Echo>()); });
      started.set_value();
    });
    started.get_future().wait();
    CHECK(ch->isActive());
    REQUIRE(::write(fds[1], "ping", 4) == 4);
    char buf[4] = {};
    std::size_t got = 0;
    while (got < 4) {
      const ssize_t n = ::read(fds[1], buf + got, 4 - got);
      REQUIRE(n > 0);
      got += static_cast<std::size_t>(n);
    }
    CHECK(std::string(buf, 4) == "ping");
    // The peer's end of stream closes the adopted channel (and its descriptor).
    ::close(fds[1]);
    CHECK(eventually([&] { return !ch->isOpen(); }));
  }
}

TEST_CASE("Transport: the ring's buffers go back to the pool with their group") {
  if (!ioUringSupport().available) {
    MESSAGE("io_uring unavailable here: " << ioUringSupport().reason);
    return;
  }
  auto* pooled = dynamic_cast<PooledByteBufAllocator*>(&ByteBufAllocator::defaultAllocator());
  REQUIRE(pooled != nullptr);
  const auto before = pooled->totalStats().liveBuffers;
  {
    EventLoopGroup group(2, Transport::IoUring);
    // Each loop's ring holds its provided buffers while the group lives.
    CHECK(pooled->totalStats().liveBuffers >= before + 2 * 256);
  }
  CHECK(pooled->totalStats().liveBuffers == before);
}

TEST_CASE("Transport: a write flushed just before close() goes out, and its listener hears so") {
  for (Transport transport : availableTransports()) {
    CAPTURE(transportName(transport));
    EventLoopGroup group(1, transport);
    Sink sink;
    auto server = ServerBootstrap()
                      .group(group)
                      .childHandler([&](SocketChannel& ch) {
                        ch.pipeline().addLast("collect", std::make_unique<Collect>(&sink));
                      })
                      .bind("127.0.0.1", 0);
    auto client = Bootstrap()
                      .group(group)
                      .handler([](SocketChannel&) {})
                      .connect("127.0.0.1", server->port(), boost::asio::use_future)
                      .get();
    struct Listener : WriteListener {
      std::atomic<int> ok{0};
      std::atomic<int> failed{0};
      void operationComplete(std::error_code ec) noexcept override { ++(ec ? failed : ok); }
    } listener;
    onLoop(*client, [&] {
      client->writeAndFlush(text("last words"), &listener);
      client->close();
    });
    CHECK(eventually([&] { return listener.ok.load() + listener.failed.load() == 1; }));
    CHECK(listener.ok.load() == 1);
    CHECK(eventually([&] { return sink.text() == "last words"; }));
    server->close();
  }
}

TEST_CASE("Transport: once a server has closed, its port can be bound again at once") {
  for (Transport transport : availableTransports()) {
    CAPTURE(transportName(transport));
    EventLoopGroup group(2, transport);
    auto server =
        ServerBootstrap().group(group).childHandler([](SocketChannel&) {}).bind("127.0.0.1", 0);
    const auto port = server->port();
    server->close();
    server->waitClosed(boost::asio::use_future).get();
    // A listening socket still held (by an accept the ring has not cancelled) would refuse this.
    auto again =
        ServerBootstrap().group(group).childHandler([](SocketChannel&) {}).bind("127.0.0.1", port);
    CHECK(again->port() == port);
    again->close();
  }
}
