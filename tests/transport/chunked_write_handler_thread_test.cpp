// ChunkedWriteHandler over loopback TCP: a few MiB of a temporary file streamed to a server that
// reads nothing at first; the bytes queued in the client never exceed the high water mark by more
// than a chunk, and the server receives exactly the file. Run under ThreadSanitizer ("threaded").
#include <netbuf/transport/chunked_write_handler.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/chunked_file.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <random>
#include <string>
#include <thread>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

using netbuf::test::eventually;

/// Between the chunked writer and the socket: watches what the channel holds after each write.
struct Monitor : ChannelHandler {
  std::atomic<std::size_t> maxPending{0};
  std::atomic<int> writes{0};
  std::atomic<int> unwritable{0};
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override {
    ctx.write(std::move(msg), listener);
    auto& ch = static_cast<SocketChannel&>(ctx.channel());
    const std::size_t now = ch.pendingWriteBytes();
    if (now > maxPending.load(std::memory_order_relaxed)) maxPending.store(now);
    ++writes;
  }
  void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
    if (!ctx.channel().isWritable()) ++unwritable;
    ctx.fireChannelWritabilityChanged();
  }
};

/// Collects what the server receives.
struct Sink : ChannelHandler {
  std::mutex m;
  std::string bytes;
  void channelRead(ChannelHandlerContext&, Message msg) override {
    ByteBuf b = msg.take<ByteBuf>();
    std::lock_guard<std::mutex> g(m);
    bytes += b.readableStringView();
  }
  std::size_t size() {
    std::lock_guard<std::mutex> g(m);
    return bytes.size();
  }
};

struct WaitableListener : WriteListener {
  std::promise<std::error_code> result;
  std::atomic<int> calls{0};
  void operationComplete(std::error_code ec) noexcept override {
    if (calls.fetch_add(1) == 0) result.set_value(ec);
  }
};

}  // namespace

TEST_CASE("ChunkedWriteHandler over TCP: a file streams within the water marks, byte exact") {
  // A temporary file of 3 MiB + 123 bytes of seeded random data.
  constexpr std::size_t kSize = 3 * 1024 * 1024 + 123;
  constexpr std::size_t kChunk = ChunkedFile::kDefaultChunkSize;
  std::string content(kSize, '\0');
  std::mt19937 rng(20240601);
  for (char& c : content) c = static_cast<char>(rng());
  char path[] = "/tmp/netbuf_chunked_thread_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
  ::close(fd);

  EventLoopGroup group(2);
  ChannelOptions serverOpts;
  serverOpts.autoRead = false;  // reads nothing until the test says so
  serverOpts.receiveBufferSize = 32 * 1024;
  std::promise<std::pair<std::shared_ptr<SocketChannel>, Sink*>> accepted;
  auto server = ServerBootstrap()
                    .group(group)
                    .childOptions(serverOpts)
                    .childHandler([&](SocketChannel& ch) {
                      auto sink = std::make_unique<Sink>();
                      Sink* raw = sink.get();
                      ch.pipeline().addLast("sink", std::move(sink));
                      accepted.set_value({ch.shared_from_this(), raw});
                    })
                    .bind("127.0.0.1", 0);

  ChannelOptions clientOpts;
  clientOpts.sendBufferSize = 32 * 1024;
  clientOpts.writeBufferHighWaterMark = 64 * 1024;
  clientOpts.writeBufferLowWaterMark = 32 * 1024;
  std::promise<Monitor*> monitorMade;
  auto client = Bootstrap()
                    .group(group)
                    .options(clientOpts)
                    .connectTimeout(5s)
                    .handler([&](SocketChannel& ch) {
                      auto monitor = std::make_unique<Monitor>();
                      monitorMade.set_value(monitor.get());
                      ch.pipeline().addLast("monitor", std::move(monitor));
                      ch.pipeline().addLast("chunked", std::make_unique<ChunkedWriteHandler>());
                    })
                    .connect("127.0.0.1", server->port(), boost::asio::use_future)
                    .get();
  Monitor* monitor = monitorMade.get_future().get();
  auto acceptedChild = accepted.get_future().get();
  std::shared_ptr<SocketChannel> serverChild = std::move(acceptedChild.first);
  Sink* sink = acceptedChild.second;

  WaitableListener done;
  auto result = done.result.get_future();
  client->writeAndFlush(std::make_unique<ChunkedFile>(path), &done);

  // The peer reads nothing: the transfer stops at the high water mark instead of reading the file.
  REQUIRE(eventually([&] { return monitor->unwritable.load() >= 1; }));
  std::this_thread::sleep_for(100ms);
  CHECK(result.wait_for(0s) == std::future_status::timeout);
  const int writesWhileBlocked = monitor->writes.load();
  CHECK(static_cast<std::size_t>(writesWhileBlocked) * kChunk < kSize / 2);
  CHECK(client->pendingWriteBytes() <= clientOpts.writeBufferHighWaterMark + kChunk);

  serverChild->setAutoRead(true);
  REQUIRE(result.wait_for(20s) == std::future_status::ready);
  CHECK(result.get() == std::error_code());
  REQUIRE(eventually([&] { return sink->size() >= kSize; }));
  {
    std::lock_guard<std::mutex> g(sink->m);
    CHECK(sink->bytes.size() == kSize);
    CHECK(sink->bytes == content);
  }
  CHECK(monitor->maxPending.load() <= clientOpts.writeBufferHighWaterMark + kChunk);
  CHECK(monitor->writes.load() == static_cast<int>((kSize + kChunk - 1) / kChunk));
  CHECK(done.calls.load() == 1);

  client->close();
  client->waitClosed(boost::asio::use_future).wait();
  serverChild.reset();
  client.reset();
  server->close();
  server->waitClosed(boost::asio::use_future).wait();
  ::unlink(path);
}
