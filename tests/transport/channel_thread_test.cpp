// Channel operations from any thread: writes, flushes and a close from 8 threads on one client
// channel (every accepted message arrives exactly once, in per-thread order), pipeline access off
// the loop refused, context writes handed to the loop, writes after the loop shut down, attributes
// and autoRead from other threads. Run under ThreadSanitizer and AddressSanitizer ("threaded").
#include <netbuf/transport/channel.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <netbuf/codec/length_field_prepender.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
using netbuf::test::eventually;
using netbuf::test::onLoop;

namespace {

/// One write's completion, as the test sees it: 0 pending, 1 written, 2 failed (with the code).
struct Completion final : WriteListener {
  std::atomic<int> state{0};
  std::error_code error;
  void operationComplete(std::error_code ec) noexcept override {
    error = ec;
    state.store(ec ? 2 : 1, std::memory_order_release);
  }
};

/// What the server received: each length-prefixed frame (thread id byte, 4-byte sequence number).
/// Owned by the test (the handler goes with its channel).
struct Received {
  std::mutex m;
  std::map<int, std::vector<std::uint32_t>> seqs;  // per writer thread, in arrival order
  std::atomic<int> frames{0};
  std::atomic<bool> inactive{false};
  std::atomic<int> malformed{0};
};

struct FrameLog : ChannelHandler {
  Received* log;
  explicit FrameLog(Received* r) : log(r) {}
  void channelRead(ChannelHandlerContext&, Message msg) override {
    Received& r = *log;
    std::string f = readableBytesToString(msg.take<AnyByteBuf>());
    if (f.size() != 5) {
      ++r.malformed;
      return;
    }
    const int thread = static_cast<unsigned char>(f[0]);
    std::uint32_t seq = 0;
    for (int i = 1; i < 5; ++i) seq = (seq << 8) | static_cast<unsigned char>(f[i]);
    {
      std::lock_guard<std::mutex> g(r.m);
      r.seqs[thread].push_back(seq);
    }
    ++r.frames;
  }
  void channelInactive(ChannelHandlerContext&) override { log->inactive = true; }
};

ByteBuf frameOf(int thread, std::uint32_t seq) {
  ByteBuf b = Unpooled::buffer(5);
  b.writeByte(static_cast<std::int8_t>(thread));
  b.writeInt(static_cast<std::int32_t>(seq));
  return b;
}

}  // namespace

TEST_CASE("8 threads write, flush and close one channel: accepted messages arrive once, in order") {
  constexpr int kThreads = 8;
  constexpr std::uint32_t kMax = 4000;       // writes per thread at most
  constexpr std::uint32_t kAfterClose = 20;  // writes each thread makes once the close was issued
  constexpr int kCloseAfterWritten = 6000;   // the close comes once this many were written
  constexpr std::uint32_t kWindow = 64;      // writes in flight per thread
  EventLoopGroup group(2);
  Received received;
  Received* log = &received;
  auto server =
      ServerBootstrap()
          .group(group)
          .childHandler([log](SocketChannel& ch) {
            ch.pipeline().addLast(
                "frames", std::make_unique<DecoderChannelHandler<LengthFieldBasedFrameDecoder>>(
                              1 << 20, 0, 4, 0, 4));
            ch.pipeline().addLast("log", std::make_unique<FrameLog>(log));
          })
          .bind("127.0.0.1", 0);
  // The client's pipeline frames plain ByteBufs: the prepender must take them.
  auto client =
      Bootstrap()
          .group(group)
          .handler([](SocketChannel& ch) {
            ch.pipeline().addLast("prepend",
                                  std::make_unique<EncoderChannelHandler<LengthFieldPrepender>>(4));
          })
          .connect("127.0.0.1", server->port(), boost::asio::use_future)
          .get();
  REQUIRE(!client->inEventLoop());

  std::vector<std::vector<Completion>> done(kThreads);
  for (auto& d : done) d = std::vector<Completion>(kMax);
  std::vector<std::atomic<std::uint32_t>> issued(kThreads);
  std::atomic<int> parked{0};
  std::atomic<bool> closeIssued{false};
  auto writtenSoFar = [&] {
    int n = 0;
    for (int t = 0; t < kThreads; ++t) {
      const std::uint32_t end = issued[t].load(std::memory_order_acquire);
      for (std::uint32_t i = 0; i < end; ++i)
        n += done[t][i].state.load(std::memory_order_acquire) == 1;
    }
    return n;
  };
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      std::uint32_t afterClose = 0;
      std::uint32_t firstPending = 0;
      for (std::uint32_t i = 0; i < kMax; ++i) {
        // At most kWindow writes of this thread in flight, so that the close lands in the middle
        // of the traffic rather than after everything queued before it.
        while (!closeIssued.load(std::memory_order_acquire) && i - firstPending >= kWindow) {
          if (done[t][firstPending].state.load(std::memory_order_acquire) != 0) {
            ++firstPending;
          } else {
            std::this_thread::yield();
          }
        }
        if (!closeIssued.load(std::memory_order_acquire) && i == kMax - kAfterClose) {
          // The last writes are kept for after the close: every thread writes into it.
          ++parked;
          while (!closeIssued.load(std::memory_order_acquire)) std::this_thread::sleep_for(100us);
        }
        if (closeIssued.load(std::memory_order_acquire) && ++afterClose > kAfterClose) break;
        switch (i % 4) {
          case 0:  // write, then a flush of its own
            client->write(frameOf(t, i), &done[t][i]);
            client->flush();
            break;
          case 1:  // write without flush: the next operation flushes it
            client->write(frameOf(t, i), &done[t][i]);
            break;
          default:
            client->writeAndFlush(frameOf(t, i), &done[t][i]);
        }
        issued[t].store(i + 1, std::memory_order_release);
      }
      client->flush();
    });
  }
  std::thread closer([&] {
    while (writtenSoFar() < kCloseAfterWritten && parked.load() < kThreads)
      std::this_thread::sleep_for(200us);
    client->close();
    closeIssued.store(true, std::memory_order_release);
  });
  for (auto& w : writers) w.join();
  closer.join();

  // Every write is completed exactly once, one way or the other.
  REQUIRE(eventually([&] {
    for (int t = 0; t < kThreads; ++t)
      for (std::uint32_t i = 0; i < issued[t].load(); ++i)
        if (done[t][i].state.load(std::memory_order_acquire) == 0) return false;
    return true;
  }));
  REQUIRE(eventually([&] { return log->inactive.load(); }));
  CHECK(log->malformed.load() == 0);

  std::lock_guard<std::mutex> g(log->m);
  int ok = 0, failed = 0;
  for (int t = 0; t < kThreads; ++t) {
    const std::vector<std::uint32_t>& got = log->seqs[t];
    // Per-thread order, no duplicates, nothing that was not written.
    for (std::size_t k = 1; k < got.size(); ++k) REQUIRE(got[k - 1] < got[k]);
    if (!got.empty()) REQUIRE(got.back() < issued[t].load());
    std::size_t k = 0;
    for (std::uint32_t i = 0; i < issued[t].load(); ++i) {
      const bool arrived = k < got.size() && got[k] == i;
      if (arrived) ++k;
      if (done[t][i].state.load() == 1) {
        ++ok;
        INFO("thread " << t << " message " << i << " was written but did not arrive");
        REQUIRE(arrived);
      } else {
        ++failed;
        const std::error_code ec = done[t][i].error;
        // Failed by the close: queued when it came, or offered after it.
        CHECK((ec == ChannelErrc::closedBeforeWritten || ec == ChannelErrc::closed));
      }
    }
  }
  CHECK(ok > 0);
  CHECK(failed >= kThreads);  // every thread wrote after the close was issued
  MESSAGE("written " << ok << ", failed " << failed);
}

TEST_CASE("the pipeline refuses changes, lookups and inbound events off its loop") {
  EventLoopGroup group(1);
  auto server = ServerBootstrap().group(group).bind("127.0.0.1", 0);
  auto client = Bootstrap()
                    .group(group)
                    .handler([](SocketChannel& ch) {
                      ch.pipeline().addLast("a", std::make_unique<ChannelHandler>());
                    })
                    .connect("127.0.0.1", server->port(), boost::asio::use_future)
                    .get();
  ChannelPipeline& p = client->pipeline();
  CHECK_THROWS_AS(p.addLast("b", std::make_unique<ChannelHandler>()), IllegalStateError);
  CHECK_THROWS_AS(p.addFirst("b", std::make_unique<ChannelHandler>()), IllegalStateError);
  CHECK_THROWS_AS(p.remove("a"), IllegalStateError);
  CHECK_THROWS_AS(p.replace("a", "b", std::make_unique<ChannelHandler>()), IllegalStateError);
  CHECK_THROWS_AS(p.get("a"), IllegalStateError);
  CHECK_THROWS_AS(p.names(), IllegalStateError);
  CHECK_THROWS_AS(p.fireChannelRead(Message(1)), IllegalStateError);
  try {
    p.addLast("b", std::make_unique<ChannelHandler>());
  } catch (const IllegalStateError& e) {
    CHECK(std::string(e.what()).find(
              "ChannelPipeline::addLast called off the channel's event loop") != std::string::npos);
  }
  // On the loop all of it works.
  std::vector<std::string> names;
  onLoop(*client, [&] {
    p.addLast("b", std::make_unique<ChannelHandler>());
    names = p.names();
  });
  CHECK(names == std::vector<std::string>{"a", "b"});
  // A context's inbound events are the loop's too.
  ChannelHandlerContext* ctx = nullptr;
  onLoop(*client, [&] { ctx = p.context("a"); });
  REQUIRE(ctx != nullptr);
  CHECK_THROWS_AS(ctx->fireChannelRead(Message(1)), IllegalStateError);
  CHECK_THROWS_AS(ctx->fireUserEventTriggered(Message(1)), IllegalStateError);
  client->close();
  client->waitClosed(boost::asio::use_future).wait();
}

TEST_CASE("a context's writes from another thread run on the loop; a removed one fails them") {
  EventLoopGroup group(1);
  std::atomic<int> received{0};
  struct Count : ChannelHandler {
    std::atomic<int>* n;
    explicit Count(std::atomic<int>* c) : n(c) {}
    void channelRead(ChannelHandlerContext&, Message msg) override {
      *n += static_cast<int>(readableBytes(msg.take<ByteBuf>()));
    }
  };
  auto server = ServerBootstrap()
                    .group(group)
                    .childHandler([&](SocketChannel& ch) {
                      ch.pipeline().addLast("count", std::make_unique<Count>(&received));
                    })
                    .bind("127.0.0.1", 0);
  auto client = Bootstrap()
                    .group(group)
                    .handler([](SocketChannel& ch) {
                      ch.pipeline().addLast("a", std::make_unique<ChannelHandler>());
                    })
                    .connect("127.0.0.1", server->port(), boost::asio::use_future)
                    .get();
  ChannelHandlerContext* ctx = nullptr;
  onLoop(*client, [&] { ctx = client->pipeline().context("a"); });
  Completion first;
  ctx->writeAndFlush(Unpooled::copiedBuffer("abc"), &first);  // from this thread
  REQUIRE(eventually([&] { return received.load() == 3; }));
  CHECK(first.state.load() == 1);
  // A write handed over while the handler is still in the pipeline, run after a removal that was
  // queued before it: the write fails and its message is released. (The loop is held up so that
  // ctx is still alive when this thread uses it: a removed context goes once the loop is idle.)
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  client->executor().execute([released] { released.wait(); });
  client->executor().execute([&] { client->pipeline().remove("a"); });
  Completion late;
  ctx->writeAndFlush(Unpooled::copiedBuffer("xyz"), &late);
  release.set_value();
  REQUIRE(eventually([&] { return late.state.load() != 0; }));
  CHECK(late.error == ChannelErrc::handlerRemoved);
  CHECK(late.error == std::errc::operation_canceled);
  client->close();
  client->waitClosed(boost::asio::use_future).wait();
  CHECK(received.load() == 3);
}

TEST_CASE("writes handed to a loop that shut down fail with ChannelErrc::rejected") {
  EventLoopGroup serverGroup(1);
  auto server = ServerBootstrap().group(serverGroup).bind("127.0.0.1", 0);
  std::shared_ptr<SocketChannel> client;
  {
    EventLoopGroup group(1);
    client = Bootstrap()
                 .group(group)
                 .connect("127.0.0.1", server->port(), boost::asio::use_future)
                 .get();
    group.shutdownGracefully(0ms, 1s);
    Completion c;
    client->writeAndFlush(Unpooled::copiedBuffer("late"), &c);  // released here
    CHECK(c.state.load() == 2);
    CHECK(c.error == ChannelErrc::rejected);
    client->close();  // nothing to do, no crash
    client->flush();
    client->setAutoRead(false);
    client.reset();  // before its group
  }
}

TEST_CASE("attributes and autoRead from other threads") {
  EventLoopGroup group(1);
  auto server = ServerBootstrap().group(group).bind("127.0.0.1", 0);
  auto client =
      Bootstrap().group(group).connect("127.0.0.1", server->port(), boost::asio::use_future).get();
  static const AttributeKey<std::atomic<int>> kHits{"hits"};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) client->attr(kHits).fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(client->findAttr(kHits)->load() == 8000);
  CHECK(client->isAutoRead());
  client->setAutoRead(false);
  CHECK(eventually([&] { return !client->isAutoRead(); }));
  client->setAutoRead(true);
  CHECK(eventually([&] { return client->isAutoRead(); }));
  client->close();
  client->waitClosed(boost::asio::use_future).wait();
  CHECK_FALSE(client->isOpen());
}

TEST_CASE("a message that reaches the socket unencoded fails its write, naming its type") {
  EventLoopGroup group(1);
  auto server = ServerBootstrap().group(group).bind("127.0.0.1", 0);
  struct Errors : ChannelHandler {
    std::shared_ptr<std::promise<std::string>> seen;
    explicit Errors(std::shared_ptr<std::promise<std::string>> p) : seen(std::move(p)) {}
    void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr e) override {
      try {
        std::rethrow_exception(e);
      } catch (const MessageTypeError& x) {
        seen->set_value(x.what());
      } catch (...) {
      }
      ctx.close();
    }
  };
  auto seen = std::make_shared<std::promise<std::string>>();
  auto client = Bootstrap()
                    .group(group)
                    .handler([seen](SocketChannel& ch) {
                      ch.pipeline().addLast("errors", std::make_unique<Errors>(seen));
                    })
                    .connect("127.0.0.1", server->port(), boost::asio::use_future)
                    .get();
  // With a listener: the listener hears a typed code, the channel logs the MessageTypeError and
  // stays open (the listener's owner decides, as with a failed promise in Netty).
  Completion c;
  client->writeAndFlush(Message(std::vector<int>{1, 2}), &c);
  REQUIRE(eventually([&] { return c.state.load() != 0; }));
  CHECK(c.error == ChannelErrc::unsupportedMessageType);
  CHECK(c.error == std::errc::invalid_argument);
  Completion after;
  client->writeAndFlush(Unpooled::copiedBuffer("still open"), &after);
  REQUIRE(eventually([&] { return after.state.load() != 0; }));
  CHECK(after.state.load() == 1);
  CHECK(client->isOpen());
  client->close();
  client->waitClosed(boost::asio::use_future).wait();
  // Without one: the pipeline hears the MessageTypeError, which names the type.
  auto other = Bootstrap()
                   .group(group)
                   .handler([seen](SocketChannel& ch) {
                     ch.pipeline().addLast("errors", std::make_unique<Errors>(seen));
                   })
                   .connect("127.0.0.1", server->port(), boost::asio::use_future)
                   .get();
  other->writeAndFlush(std::string("not bytes"));
  auto f = seen->get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  const std::string what = f.get();
  CHECK(what.find("not std::string") != std::string::npos);
  CHECK(what.find("encoder") != std::string::npos);
  other->waitClosed(boost::asio::use_future).wait();
}
