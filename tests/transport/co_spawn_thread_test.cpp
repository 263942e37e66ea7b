// Servers written as coroutines over TCP: coSpawn from the child initializer, a ReceiveQueue at
// the tail, receive<T>() and writeAndFlush with use_awaitable. A line echo, a flooding peer
// against a slow consumer (memory stays bounded: the queue turns reading off), a coroutine that
// throws (the exception reaches exceptionCaught and closes the channel), and a graceful shutdown
// while coroutines are suspended (they resume with an error and finish; nothing leaks). Run under
// ThreadSanitizer and AddressSanitizer ("threaded").
#include <netbuf/transport/co_spawn.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <mutex>
#include <netbuf/codec/line_based_frame_decoder.hpp>
#include <netbuf/codec/string_decoder.hpp>
#include <netbuf/codec/string_encoder.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <netbuf/transport/receive_queue.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;
using netbuf::test::eventually;
using netbuf::test::onLoop;

namespace {

/// What the servers' coroutines saw (any thread).
struct Stats {
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  std::atomic<int> endedWithEof{0};
  std::mutex m;
  std::vector<std::string> exceptions;  // seen by an exceptionCaught handler before the queue
};

/// Records the exceptions that pass through the pipeline.
struct ExceptionRecorder : ChannelHandler {
  Stats* stats;
  explicit ExceptionRecorder(Stats* s) : stats(s) {}
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr e) override {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      std::lock_guard<std::mutex> g(stats->m);
      stats->exceptions.emplace_back(x.what());
    }
    ctx.fireExceptionCaught(std::move(e));
  }
};

/// Echoes each line back upper-cased; "boom" makes it throw; ends at the end of the stream.
asio::awaitable<void> lineSession(std::shared_ptr<SocketChannel> ch, Stats* stats) {
  ++stats->started;
  try {
    for (;;) {
      std::string line = co_await ch->receive<std::string>(asio::use_awaitable);
      if (line == "boom") throw std::runtime_error("the session gave up on boom");
      for (char& c : line) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      co_await ch->writeAndFlush(line + "\n", asio::use_awaitable);
    }
  } catch (const boost::system::system_error& e) {
    if (e.code() == asio::error::eof) ++stats->endedWithEof;
  }
  ++stats->finished;
}

std::shared_ptr<ServerChannel> lineServer(EventLoopGroup& group, Stats* stats) {
  return ServerBootstrap()
      .group(group)
      .childHandler([stats](SocketChannel& ch) {
        ch.pipeline()
            .addLast("errors", std::make_unique<ExceptionRecorder>(stats))
            .addLast("frames", std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(1024))
            .addLast("text", std::make_unique<DecoderChannelHandler<StringDecoder>>())
            .addLast("encoder", std::make_unique<EncoderChannelHandler<StringEncoder>>())
            .addLast("queue", std::make_unique<ReceiveQueue<std::string>>(16));
        coSpawn(ch.shared_from_this(), lineSession(ch.shared_from_this(), stats));
      })
      .bind("127.0.0.1", 0);
}

tcp::socket rawClient(asio::io_context& io, unsigned short port) {
  tcp::socket s(io);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  return s;
}

std::string readLine(tcp::socket& s, asio::streambuf& buf) {
  asio::read_until(s, buf, '\n');
  std::istream in(&buf);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

TEST_CASE("coSpawn: a line server as a coroutine, three clients at once") {
  EventLoopGroup group(2);
  Stats stats;
  auto server = lineServer(group, &stats);
  asio::io_context io;
  std::vector<tcp::socket> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(rawClient(io, server->port()));
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < clients.size(); ++i) {
      const std::string line = "client " + std::to_string(i) + " round " + std::to_string(round);
      asio::write(clients[i], asio::buffer(line + "\n"));
    }
    for (std::size_t i = 0; i < clients.size(); ++i) {
      asio::streambuf buf;
      CHECK(readLine(clients[i], buf) ==
            "CLIENT " + std::to_string(i) + " ROUND " + std::to_string(round));
    }
  }
  for (auto& c : clients) c.close();
  CHECK(eventually([&] { return stats.finished == 3; }));
  CHECK(stats.endedWithEof == 3);
  server->close();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("coSpawn: an exception from the coroutine reaches exceptionCaught and closes") {
  EventLoopGroup group(1);
  Stats stats;
  auto server = lineServer(group, &stats);
  asio::io_context io;
  tcp::socket c = rawClient(io, server->port());
  asio::write(c, asio::buffer(std::string("boom\n")));
  // The server closes the connection: the client reads EOF.
  std::array<char, 16> buf{};
  boost::system::error_code ec;
  c.read_some(asio::buffer(buf), ec);
  CHECK(ec == asio::error::eof);
  CHECK(eventually([&] {
    std::lock_guard<std::mutex> g(stats.m);
    return stats.exceptions.size() == 1;
  }));
  {
    std::lock_guard<std::mutex> g(stats.m);
    CHECK(stats.exceptions.front() == "the session gave up on boom");
  }
  CHECK(stats.finished == 0);  // it ended by the exception, not by the loop
  server->close();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("coSpawn: a graceful shutdown resumes suspended coroutines with an error") {
  auto group = std::make_unique<EventLoopGroup>(2);
  Stats stats;
  auto server = lineServer(*group, &stats);
  asio::io_context io;
  std::vector<tcp::socket> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(rawClient(io, server->port()));
  CHECK(eventually([&] { return stats.started == 4; }));
  // Every session is suspended in receive(); the shutdown closes their channels.
  group->shutdownGracefully(0ms, 5s);
  CHECK(stats.finished == 4);
  CHECK(stats.endedWithEof == 4);
  server.reset();
  group.reset();  // nothing left to free: the leak check at the end of the test agrees
  for (auto& c : clients) {
    std::array<char, 16> buf{};
    boost::system::error_code ec;
    c.read_some(asio::buffer(buf), ec);
    CHECK(ec == asio::error::eof);
  }
}

namespace {
/// Takes one buffer every *pauseMs, counting the bytes, until the end of the stream.
asio::awaitable<void> slowConsumer(std::shared_ptr<SocketChannel> ch, std::atomic<int>* pauseMs,
                                   std::atomic<std::size_t>* consumed, std::atomic<bool>* ended) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    auto [ec, buf] = co_await ch->receive<ByteBuf>(asio::as_tuple(asio::use_awaitable));
    if (ec) break;
    *consumed += buf.readableBytes();
    if (const int ms = pauseMs->load(); ms > 0) {
      timer.expires_after(std::chrono::milliseconds(ms));
      co_await timer.async_wait(asio::use_awaitable);
    }
  }
  *ended = true;
}
}  // namespace

TEST_CASE("ReceiveQueue over TCP: a flooding peer against a slow consumer stays bounded") {
  constexpr std::size_t kCapacity = 4;
  constexpr std::size_t kMaxRead = 16 * 1024;
  EventLoopGroup group(1);
  std::atomic<std::size_t> consumed{0};
  std::atomic<bool> ended{false};
  std::atomic<int> pauseMs{20};
  std::shared_ptr<SocketChannel> serverSide;
  std::mutex m;
  ChannelOptions options;
  options.maxReadSize = kMaxRead;
  options.receiveBufferSize = 64 * 1024;
  auto server =
      ServerBootstrap()
          .group(group)
          .childOptions(options)
          .childHandler([&](SocketChannel& ch) {
            ch.pipeline().addLast("queue", std::make_unique<ReceiveQueue<ByteBuf>>(kCapacity));
            {
              std::lock_guard<std::mutex> g(m);
              serverSide = ch.shared_from_this();
            }
            coSpawn(ch.shared_from_this(),
                    slowConsumer(ch.shared_from_this(), &pauseMs, &consumed, &ended));
          })
          .bind("127.0.0.1", 0);
  // The peer writes as fast as the connection takes it, from its own thread.
  asio::io_context io;
  tcp::socket peer = rawClient(io, server->port());
  peer.set_option(asio::socket_base::send_buffer_size(64 * 1024));
  peer.non_blocking(true);
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> sent{0};
  std::thread flood([&] {
    std::vector<char> chunk(64 * 1024, 'x');
    while (!stop) {
      boost::system::error_code ec;
      const std::size_t n = peer.write_some(asio::buffer(chunk), ec);
      if (ec == asio::error::would_block) {
        std::this_thread::sleep_for(1ms);
      } else if (ec) {
        break;
      } else {
        sent += n;
      }
    }
  });
  REQUIRE(eventually([&] {
    std::lock_guard<std::mutex> g(m);
    return serverSide != nullptr;
  }));
  // For a second, sample what the server holds: the queue stays within its capacity plus one
  // read, reading is off while it is full, and the peer is held back by the kernel's buffers.
  std::size_t maxQueued = 0;
  bool sawPaused = false;
  const auto until = std::chrono::steady_clock::now() + 1s;
  while (std::chrono::steady_clock::now() < until) {
    std::shared_ptr<SocketChannel> ch;
    {
      std::lock_guard<std::mutex> g(m);
      ch = serverSide;
    }
    onLoop(*ch, [&] {
      auto* q = dynamic_cast<ReceiveQueue<ByteBuf>*>(ch->pipeline().get("queue"));
      maxQueued = std::max(maxQueued, q->size());
      sawPaused = sawPaused || (q->isPaused() && !ch->isAutoRead());
    });
    std::this_thread::sleep_for(5ms);
  }
  const std::size_t boundBytes = (kCapacity + 1) * kMaxRead;
  INFO("sent " << sent.load() << " B, consumed " << consumed.load() << " B, at most " << maxQueued
               << " buffers queued");
  CHECK(maxQueued <= kCapacity + 1);
  CHECK(sawPaused);
  // What was sent but not consumed sits in the queue (at most boundBytes) and in the two kernels'
  // socket buffers, not in the server's memory: far less than a second of loopback flooding.
  CHECK(sent.load() - consumed.load() < boundBytes + (8u << 20));
  stop = true;
  flood.join();
  // The consumer speeds up: everything sent arrives, nothing was lost while reading was off.
  pauseMs = 0;
  CHECK(eventually([&] { return consumed.load() == sent.load(); }));
  peer.close();
  CHECK(eventually([&] { return ended.load(); }));
  {
    std::lock_guard<std::mutex> g(m);
    serverSide.reset();
  }
  server->close();
  group.shutdownGracefully(0ms, 5s);
}

namespace {
/// Counts its own destruction: lives in a coroutine's frame.
struct FrameProbe {
  std::atomic<int>* destroyed;
  explicit FrameProbe(std::atomic<int>* d) : destroyed(d) {}
  FrameProbe(const FrameProbe&) = delete;
  FrameProbe& operator=(const FrameProbe&) = delete;
  ~FrameProbe() { ++*destroyed; }
};

asio::awaitable<void> waitForever(std::shared_ptr<SocketChannel> ch, std::atomic<int>* started,
                                  std::atomic<int>* destroyed, std::atomic<int>* resumed) {
  FrameProbe probe(destroyed);
  ++*started;
  try {
    co_await ch->receive<std::string>(asio::use_awaitable);
  } catch (...) {
  }
  ++*resumed;
}
}  // namespace

TEST_CASE("coSpawn: destroying a group without a graceful shutdown frees suspended coroutines") {
  // No shutdownGracefully first: the destructor's shutdown stops the loops at once (its hooks
  // may close some channels on their loops first: those coroutines resume with eof). The other
  // sessions' channels are still open, each holding its suspended coroutine (the receive's
  // handler) while the coroutine holds the channel. The destructor closes them standing in for
  // the stopped loops and drops the handlers: either way every frame is destroyed.
  std::atomic<int> started{0}, destroyed{0}, resumed{0};
  asio::io_context io;
  std::vector<tcp::socket> clients;
  {
    auto group = std::make_unique<EventLoopGroup>(2);
    auto server =
        ServerBootstrap()
            .group(*group)
            .childHandler([&](SocketChannel& ch) {
              ch.pipeline().addLast("queue", std::make_unique<ReceiveQueue<std::string>>());
              coSpawn(ch.shared_from_this(),
                      waitForever(ch.shared_from_this(), &started, &destroyed, &resumed));
            })
            .bind("127.0.0.1", 0);
    for (int i = 0; i < 3; ++i) clients.push_back(rawClient(io, server->port()));
    REQUIRE(eventually([&] { return started == 3; }));
    server.reset();
    group.reset();
  }
  CHECK(destroyed == 3);
}
