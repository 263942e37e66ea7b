// The transport's asynchronous operations with every kind of completion token (a callback,
// use_future, use_awaitable, deferred): Bootstrap::connect (refused, timed out, cancelled),
// Channel::writeAndFlush (completed when on the socket; a closed channel; a peer reset in the
// middle of a write), close and waitClosed on socket and server channels, DatagramChannel::connect.
// Run under ThreadSanitizer and AddressSanitizer ("threaded").
#include <netbuf/transport/bootstrap.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <netbuf/transport/datagram_channel.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;
using netbuf::test::eventually;

namespace {

/// Counts the bytes its channel reads (releases them).
struct ByteCounter : ChannelHandler {
  std::atomic<std::size_t>* total;
  explicit ByteCounter(std::atomic<std::size_t>* t) : total(t) {}
  void channelRead(ChannelHandlerContext&, Message msg) override {
    if (msg.is<ByteBuf>()) *total += msg.as<ByteBuf>().readableBytes();
  }
};

/// A server that counts what it receives.
std::shared_ptr<ServerChannel> countingServer(EventLoopGroup& group,
                                              std::atomic<std::size_t>* total) {
  return ServerBootstrap()
      .group(group)
      .childHandler([total](SocketChannel& ch) {
        ch.pipeline().addLast("count", std::make_unique<ByteCounter>(total));
      })
      .bind("127.0.0.1", 0);
}

/// A port nothing listens on.
unsigned short closedPort() {
  asio::io_context io;
  tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

asio::awaitable<std::size_t> connectWriteClose(Bootstrap b, unsigned short port) {
  std::shared_ptr<SocketChannel> ch = co_await b.connect("127.0.0.1", port, asio::use_awaitable);
  co_await ch->writeAndFlush(Unpooled::copiedBuffer("coroutine"), asio::use_awaitable);
  const std::size_t pending = ch->pendingWriteBytes();
  co_await ch->close(asio::use_awaitable);
  co_return pending;
}

}  // namespace

TEST_CASE("Bootstrap::connect: a callback, use_future, use_awaitable and deferred") {
  EventLoopGroup group(2);
  std::atomic<std::size_t> received{0};
  auto server = countingServer(group, &received);
  const unsigned short port = server->port();
  Bootstrap b;
  b.group(group);

  // A callback: on the channel's loop, the channel active.
  std::promise<std::pair<bool, bool>> cb;
  b.connect("127.0.0.1", port, [&](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
    cb.set_value({!ec && ch->isActive(), ch->inEventLoop()});
    ch->close();
  });
  CHECK(cb.get_future().get() == std::pair<bool, bool>{true, true});

  // use_future: blocking.
  std::shared_ptr<SocketChannel> ch = b.connect("127.0.0.1", port, asio::use_future).get();
  REQUIRE(ch != nullptr);
  CHECK(ch->isActive());
  ch->writeAndFlush(Unpooled::copiedBuffer("future|"), asio::use_future).get();

  // use_awaitable: connect, write, close in a coroutine on a loop.
  auto pending =
      asio::co_spawn(group.loop(0).get_executor(), connectWriteClose(b, port), asio::use_future);
  CHECK(pending.get() == 0);  // the write completed: nothing left queued

  // deferred: nothing happens until the operation is started with a token.
  auto op = b.connect("127.0.0.1", port, asio::deferred);
  const std::size_t acceptedBefore = server->acceptedCount();
  std::this_thread::sleep_for(50ms);
  CHECK(server->acceptedCount() == acceptedBefore);
  std::shared_ptr<SocketChannel> late = std::move(op)(asio::use_future).get();
  CHECK(late->isActive());
  CHECK(eventually([&] { return server->acceptedCount() == acceptedBefore + 1; }));

  CHECK(eventually([&] { return received.load() == std::string("future|coroutine").size(); }));
  ch->close(asio::use_future).get();
  late->close(asio::use_future).get();
  server->close(asio::use_future).get();
  CHECK_FALSE(server->isOpen());
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("Bootstrap::connect: errors are error codes, or system_error with use_awaitable") {
  EventLoopGroup group(1);
  const unsigned short port = closedPort();
  Bootstrap b;
  b.group(group).connectTimeout(5s);
  std::promise<std::pair<ErrorCode, bool>> refused;
  b.connect("127.0.0.1", port, [&](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
    refused.set_value({ec, ch == nullptr});
  });
  const auto [ec, none] = refused.get_future().get();
  CHECK(ec == asio::error::connection_refused);
  CHECK(none);
  // use_future and use_awaitable throw it.
  CHECK_THROWS_AS(b.connect("127.0.0.1", port, asio::use_future).get(),
                  boost::system::system_error);
  auto viaCoroutine = asio::co_spawn(
      group.loop(0).get_executor(),
      [b, port]() mutable -> asio::awaitable<ErrorCode> {
        try {
          co_await b.connect("127.0.0.1", port, asio::use_awaitable);
        } catch (const boost::system::system_error& e) {
          co_return e.code();
        }
        co_return ErrorCode();
      },
      asio::use_future);
  CHECK(viaCoroutine.get() == asio::error::connection_refused);
  // Misuse is refused before anything starts.
  CHECK_THROWS_AS(Bootstrap().connect("127.0.0.1", port, asio::use_future), IllegalStateError);
  CHECK_THROWS_AS(Bootstrap().group(group).connectUnix(std::string(200, 'x'), asio::use_future),
                  IllegalArgumentError);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("Bootstrap::connect: a timeout, when the SYN goes unanswered") {
  // A listener that never accepts, with its backlog full: the next SYN gets no answer.
  asio::io_context io;
  tcp::acceptor full(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  full.listen(0);
  const unsigned short port = full.local_endpoint().port();
  std::vector<tcp::socket> fillers;
  for (int i = 0; i < 4; ++i) {
    tcp::socket s(io);
    s.open(tcp::v4());
    s.non_blocking(true);
    const tcp::endpoint to(asio::ip::make_address("127.0.0.1"), port);
    (void)::connect(s.native_handle(), to.data(), static_cast<socklen_t>(to.size()));
    fillers.push_back(std::move(s));
  }
  EventLoopGroup group(1);
  const auto start = std::chrono::steady_clock::now();
  std::promise<ErrorCode> result;
  Bootstrap().group(group).connectTimeout(300ms).connect(
      "127.0.0.1", port, [&](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
        if (ch) ch->close();
        result.set_value(ec);
      });
  const ErrorCode ec = result.get_future().get();
  const auto took = std::chrono::steady_clock::now() - start;
  if (!ec) {
    MESSAGE("the kernel answered the SYN after all: no timeout to see in this run");
  } else {
    CHECK(ec == asio::error::timed_out);
    CHECK(ec == std::errc::timed_out);
    CHECK(took >= 300ms);
    CHECK(took < 5s);
  }
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("Bootstrap::connect: a cancellation signal ends a pending connect") {
  EventLoopGroup group(1);
  std::atomic<std::size_t> received{0};
  auto server = countingServer(group, &received);
  asio::cancellation_signal signal;
  std::promise<std::pair<ErrorCode, bool>> result;
  // Started and cancelled in one loop task: the cancellation runs before the connect can finish.
  group.loop(0).execute([&] {
    Bootstrap().group(group).connect(
        "127.0.0.1", server->port(),
        asio::bind_cancellation_slot(signal.slot(),
                                     [&](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
                                       result.set_value({ec, ch == nullptr});
                                     }));
    signal.emit(asio::cancellation_type::terminal);
  });
  const auto [aborted, none] = result.get_future().get();
  CHECK(aborted == asio::error::operation_aborted);
  CHECK(none);
  // A signal emitted after the connect completed does nothing.
  std::promise<ErrorCode> second;
  group.loop(0).execute([&] {
    Bootstrap().group(group).connect(
        "127.0.0.1", server->port(),
        asio::bind_cancellation_slot(signal.slot(),
                                     [&](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
                                       if (ch) ch->close();
                                       second.set_value(ec);
                                     }));
  });
  CHECK_FALSE(second.get_future().get());
  group.loop(0).execute([&] { signal.emit(asio::cancellation_type::terminal); });
  server->close();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("Channel::writeAndFlush: completes once on the socket; fails on a closed channel") {
  EventLoopGroup group(1);
  std::atomic<std::size_t> received{0};
  auto server = countingServer(group, &received);
  auto ch = Bootstrap().group(group).connect("127.0.0.1", server->port(), asio::use_future).get();
  // Off the loop: the write is handed over; the handler runs on the loop, as soon as the bytes
  // are on the socket (from inside the channel's write path: its byte count follows).
  std::promise<bool> done;
  ch->writeAndFlush(Unpooled::copiedBuffer("0123456789"),
                    [&](ErrorCode ec) { done.set_value(!ec && ch->inEventLoop()); });
  CHECK(done.get_future().get());
  CHECK(eventually([&] { return ch->pendingWriteBytes() == 0; }));
  // write() completes only once flushed.
  std::atomic<bool> written{false};
  ch->write(Unpooled::copiedBuffer("abc"), [&](ErrorCode ec) { written = !ec; });
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(written.load());
  ch->flush();
  CHECK(eventually([&] { return written.load(); }));
  CHECK(eventually([&] { return received.load() == 13; }));
  // A callback that throws: reported, and the channel goes on.
  std::atomic<bool> threw{false};
  ch->writeAndFlush(Unpooled::copiedBuffer("t"), [&](ErrorCode) {
    threw = true;
    throw std::runtime_error("a completion handler's own failure (expected by the test)");
  });
  CHECK(eventually([&] { return threw.load(); }));
  CHECK(eventually([&] { return received.load() == 14; }));
  // deferred: written when started.
  auto op = ch->writeAndFlush(Unpooled::copiedBuffer("xyz"), asio::deferred);
  std::move(op)(asio::use_future).get();
  CHECK(eventually([&] { return received.load() == 17; }));
  // A message the channel cannot write (no encoder): unsupportedMessageType.
  try {
    ch->writeAndFlush(std::string("no encoder"), asio::use_future).get();
    FAIL("a string reached the socket");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == ChannelErrc::unsupportedMessageType);
  }
  // After a close: ChannelErrc::closed.
  ch->close(asio::use_future).get();
  CHECK_FALSE(ch->isOpen());
  try {
    ch->writeAndFlush(Unpooled::copiedBuffer("late"), asio::use_future).get();
    FAIL("a write on a closed channel succeeded");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == ChannelErrc::closed);
    CHECK(e.code() == std::errc::not_connected);
  }
  // waitClosed on a closed channel completes at once.
  CHECK_NOTHROW(ch->waitClosed(asio::use_future).get());
  server->close();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("Channel::writeAndFlush: a peer reset in the middle of a write fails it") {
  // A raw peer that accepts, reads a little, then resets the connection (SO_LINGER 0) while the
  // client is still writing 32 MiB.
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const unsigned short port = acceptor.local_endpoint().port();
  std::thread peer([&] {
    tcp::socket s = acceptor.accept();
    std::vector<char> some(64 * 1024);
    asio::read(s, asio::buffer(some));
    s.set_option(asio::socket_base::linger(true, 0));
    s.close();  // RST
  });
  EventLoopGroup group(1);
  auto ch = Bootstrap().group(group).connect("127.0.0.1", port, asio::use_future).get();
  ByteBuf big = Unpooled::buffer(32u << 20);
  big.writeZero(32u << 20);
  auto f = ch->writeAndFlush(std::move(big), asio::use_future);
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  try {
    f.get();
    FAIL("32 MiB were written to a peer that reset the connection");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == ChannelErrc::closedBeforeWritten);
  }
  peer.join();
  CHECK(eventually([&] { return !ch->isOpen(); }));
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("waitClosed: completes when the peer closes, on the channel's loop") {
  EventLoopGroup group(2);
  std::atomic<std::size_t> received{0};
  auto server = countingServer(group, &received);
  auto ch = Bootstrap().group(group).connect("127.0.0.1", server->port(), asio::use_future).get();
  std::promise<bool> closed;
  ch->waitClosed(
      [&](ErrorCode ec) { closed.set_value(!ec && ch->inEventLoop() && !ch->isOpen()); });
  auto serverClosed = server->waitClosed(asio::use_future);
  CHECK(serverClosed.wait_for(50ms) == std::future_status::timeout);
  server->close();
  server->closeChildren();
  CHECK(closed.get_future().get());
  CHECK_NOTHROW(serverClosed.get());
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("DatagramChannel::connect with a completion token") {
  EventLoopGroup group(1);
  auto a = DatagramChannel::bind(group, "127.0.0.1", 0, nullptr);
  auto b = DatagramChannel::bind(group, "127.0.0.1", 0, nullptr);
  a->connect(b->localEndpoint(), asio::use_future).get();
  CHECK(a->isConnected());
  CHECK(a->remoteEndpoint() == b->localEndpoint());
  std::promise<bool> onLoop;
  a->connect(b->localEndpoint(), [&](ErrorCode ec) { onLoop.set_value(!ec && a->inEventLoop()); });
  CHECK(onLoop.get_future().get());
  a->close(asio::use_future).get();
  try {
    a->connect(b->localEndpoint(), asio::use_future).get();
    FAIL("a closed channel connected");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == ChannelErrc::closed);
  }
  group.shutdownGracefully(0ms, 5s);
}
