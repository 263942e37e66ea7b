// Channel::writeAndFlush with a completion token allocates nothing per write once warmed up: the
// operation's state comes from the handler's associated allocator (Asio's per-thread recycling
// allocator by default), a coroutine's frames from Asio's frame recycling, the buffers from the
// pool. Counted with a replaced operator new on the loop thread, where the writes, their
// completions and the channel's I/O all run, over loopback TCP. (Not under TSan: see
// support/replaced_operator_new.hpp.)
#include <netbuf/transport/bootstrap.hpp>

#include <doctest/doctest.h>

#include "support/replaced_operator_new.hpp"
#include "support/thread_waits.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using netbuf::test::tAllocations;

namespace {

constexpr int kWarmUp = 20000;
constexpr int kMeasured = 20000;
constexpr std::size_t kMessage = 64;

/// Discards what its channel reads.
struct Sink : ChannelHandler {
  std::atomic<std::size_t>* total;
  explicit Sink(std::atomic<std::size_t>* t) : total(t) {}
  void channelRead(ChannelHandlerContext&, Message msg) override {
    if (msg.is<ByteBuf>()) *total += msg.as<ByteBuf>().readableBytes();
  }
};

struct Fixture {
  EventLoopGroup serverGroup{1};
  EventLoopGroup clientGroup{1};
  std::atomic<std::size_t> received{0};
  std::shared_ptr<ServerChannel> server;
  std::shared_ptr<SocketChannel> ch;

  Fixture() {
    test::disableLeakDetection();
    server = ServerBootstrap()
                 .group(serverGroup)
                 .childHandler([this](SocketChannel& c) {
                   c.pipeline().addLast("sink", std::make_unique<Sink>(&received));
                 })
                 .bind("127.0.0.1", 0);
    ch =
        Bootstrap().group(clientGroup).connect("127.0.0.1", server->port(), asio::use_future).get();
  }
  ~Fixture() {
    ch->close(asio::use_future).get();
    server->close();
    server->closeChildren();
    clientGroup.shutdownGracefully(0ms, 5s);
    serverGroup.shutdownGracefully(0ms, 5s);
  }
  ByteBuf message() const {
    ByteBuf b = ch->alloc().buffer(kMessage);
    b.writeZero(kMessage);
    return b;
  }
};

/// Allocations on the loop thread between the end of the warm-up and the last write.
struct Window {
  std::uint64_t atWarm = 0;
  std::uint64_t atEnd = 0;
  int errors = 0;
  std::promise<void> done;
  void mark(int completed) {
    if (completed == kWarmUp) atWarm = tAllocations;
    if (completed == kWarmUp + kMeasured) {
      atEnd = tAllocations;
      done.set_value();
    }
  }
};

/// One write after another, each issued from the previous one's callback.
struct CallbackWriter {
  Fixture* f;
  Window* w;
  int completed = 0;
  void next() {
    f->ch->writeAndFlush(f->message(), [this](ErrorCode ec) {
      if (ec) ++w->errors;
      w->mark(++completed);
      if (completed < kWarmUp + kMeasured) next();
    });
  }
};

asio::awaitable<void> coroutineWriter(Fixture* f, Window* w) {
  for (int completed = 1; completed <= kWarmUp + kMeasured; ++completed) {
    try {
      co_await f->ch->writeAndFlush(f->message(), asio::use_awaitable);
    } catch (const boost::system::system_error&) {
      ++w->errors;
    }
    w->mark(completed);
  }
}

}  // namespace

TEST_CASE("the counter counts this thread's operator new calls") {
  // (The operator itself: a new-expression's allocation may be elided.)
  const std::uint64_t before = tAllocations;
  ::operator delete(::operator new(sizeof(int)));
  CHECK(tAllocations == before + 1);
}

TEST_CASE("writeAndFlush with a callback: no allocation per write after warm-up") {
  Window w;
  CallbackWriter writer{nullptr, &w};
  Fixture f;  // destroyed first: its loops are stopped before w and writer go
  writer.f = &f;
  f.ch->eventLoop().execute([&] { writer.next(); });
  auto done = w.done.get_future();
  REQUIRE(done.wait_for(60s) == std::future_status::ready);
  CHECK(w.errors == 0);
  CHECK(w.atEnd - w.atWarm == 0);
  CHECK(netbuf::test::eventually(
      [&] { return f.received.load() == std::size_t{kWarmUp + kMeasured} * kMessage; }));
}

TEST_CASE("writeAndFlush with use_awaitable: no allocation per write after warm-up") {
  Window w;
  Fixture f;  // destroyed first: its loops are stopped before w goes
  asio::co_spawn(f.ch->eventLoop().get_executor(), coroutineWriter(&f, &w), asio::detached);
  auto done = w.done.get_future();
  REQUIRE(done.wait_for(60s) == std::future_status::ready);
  CHECK(w.errors == 0);
  CHECK(w.atEnd - w.atWarm == 0);
}
