// WriteTimeoutHandler over loopback TCP: a peer that does not read (small socket buffers, reading
// off) leaves a large write stuck; the timeout fails it, fires WriteTimeoutError and closes the
// channel. Run under ThreadSanitizer ("threaded").
#include <netbuf/transport/write_timeout_handler.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <system_error>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

using netbuf::test::eventually;

/// A listener another thread can wait on.
struct WaitableListener : WriteListener {
  std::promise<std::error_code> result;
  std::atomic<int> calls{0};
  void operationComplete(std::error_code ec) noexcept override {
    if (calls.fetch_add(1) == 0) result.set_value(ec);
  }
};

/// Records the exceptions that reach it (thread-safe view for the test thread).
struct ErrorRecorder : ChannelHandler {
  std::mutex m;
  std::vector<std::string> errors;
  void exceptionCaught(ChannelHandlerContext&, std::exception_ptr error) override {
    std::lock_guard<std::mutex> g(m);
    try {
      std::rethrow_exception(error);
    } catch (const WriteTimeoutError& e) {
      errors.push_back(std::string("WriteTimeoutError: ") + e.what());
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> g(m);
    return errors;
  }
};

}  // namespace

TEST_CASE("WriteTimeoutHandler over TCP: a peer that does not read makes the write time out") {
  EventLoopGroup group(2);
  ChannelOptions serverOpts;
  serverOpts.autoRead = false;  // the peer never reads
  serverOpts.receiveBufferSize = 4096;
  std::atomic<int> accepted{0};
  auto server = ServerBootstrap()
                    .group(group)
                    .childOptions(serverOpts)
                    .childHandler([&](SocketChannel&) { ++accepted; })
                    .bind("127.0.0.1", 0);
  ChannelOptions clientOpts;
  clientOpts.sendBufferSize = 4096;
  ErrorRecorder* recorder = nullptr;
  std::promise<ErrorRecorder*> made;
  auto client =
      Bootstrap()
          .group(group)
          .options(clientOpts)
          .connectTimeout(5s)
          .handler([&](SocketChannel& ch) {
            ch.pipeline().addLast("writeTimeout", std::make_unique<WriteTimeoutHandler>(200ms));
            auto r = std::make_unique<ErrorRecorder>();
            made.set_value(r.get());
            ch.pipeline().addLast("errors", std::move(r));
          })
          .connect("127.0.0.1", server->port(), boost::asio::use_future)
          .get();
  recorder = made.get_future().get();
  REQUIRE(eventually([&] { return accepted.load() == 1; }));

  // A small write goes out in time: it completes, nothing times out.
  WaitableListener small;
  auto smallResult = small.result.get_future();
  client->writeAndFlush(Unpooled::copiedBuffer("hello"), &small);
  REQUIRE(smallResult.wait_for(5s) == std::future_status::ready);
  CHECK(smallResult.get() == std::error_code());

  // 8 MiB cannot fit in the two small socket buffers: the write stays queued.
  WaitableListener big;
  auto bigResult = big.result.get_future();
  const auto start = std::chrono::steady_clock::now();
  ByteBuf payload = Unpooled::buffer(8 << 20);
  payload.writeZero(8 << 20);
  client->writeAndFlush(std::move(payload), &big);
  REQUIRE(bigResult.wait_for(10s) == std::future_status::ready);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(bigResult.get() == ChannelErrc::writeTimeout);
  CHECK(waited >= 200ms);
  REQUIRE(client->waitClosed(boost::asio::use_future).wait_for(10s) == std::future_status::ready);
  CHECK_FALSE(client->isOpen());
  CHECK(recorder->seen() ==
        std::vector<std::string>{"WriteTimeoutError: write timed out: not written within 200 ms"});
  CHECK(client->pendingWriteBytes() == 0);
  CHECK(big.calls.load() == 1);  // the close's failure of the queued write was swallowed
  CHECK(small.calls.load() == 1);
  client.reset();
  server->closeChildren();
  group.shutdownGracefully(0ms, 5s);
}
