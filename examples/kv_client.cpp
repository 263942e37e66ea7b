// The pipelined client of kv_server: many requests in flight on one connection, each answered by
// a std::future, called from any thread.
//
//   build/release/examples/kv_client --port 7000 --count 10000     # or --unix /tmp/kv.sock
//
// What it shows: the blocking Bootstrap::connect handing a channel to the main thread, which
// writes to it directly (channel operations are safe from any thread: they are handed to the
// channel's loop in order); responses matched to requests in order (the server answers one
// connection's requests in order); a plain ByteBuf written past the MessagePack encoder still
// framed by the length prepender (the server answers it with an error: it is not MessagePack).
// Exits 0 when every answer is right.
#include <fmt/format.h>

#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <future>
#include <mutex>
#include <netbuf/netbuf.hpp>
#include <string>
#include <string_view>

#include "kv_pipeline.hpp"

namespace {

using namespace netbuf;

/// Requests waiting for their response, oldest first (shared by the caller's threads and the
/// channel's loop).
struct Pending {
  std::mutex m;
  std::deque<std::promise<Document>> calls;
};

/// Completes the oldest pending call with each response; fails them all when the connection ends.
class ResponseHandler final : public InboundHandler<Document> {
 public:
  explicit ResponseHandler(std::shared_ptr<Pending> p) : pending_(std::move(p)) {}
  void messageReceived(ChannelHandlerContext&, Document response) override {
    std::promise<Document> call;
    {
      std::lock_guard<std::mutex> lock(pending_->m);
      if (pending_->calls.empty()) return;  // a response to nothing: ignored
      call = std::move(pending_->calls.front());
      pending_->calls.pop_front();
    }
    call.set_value(std::move(response));
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    std::deque<std::promise<Document>> calls;
    {
      std::lock_guard<std::mutex> lock(pending_->m);
      calls.swap(pending_->calls);
    }
    for (auto& c : calls)
      c.set_exception(std::make_exception_ptr(std::runtime_error("connection closed")));
    ctx.fireChannelInactive();
  }

 private:
  std::shared_ptr<Pending> pending_;
};

class KvClient {
 public:
  KvClient(EventLoopGroup& group, const std::string& host, unsigned short port,
           const std::string& unixPath)
      : pending_(std::make_shared<Pending>()) {
    Bootstrap b;
    b.group(group).handler([p = pending_](SocketChannel& ch) {
      kv::addCodecs(ch.pipeline());
      ch.pipeline().addLast("responses", std::make_unique<ResponseHandler>(p));
    });
    channel_ = unixPath.empty() ? b.connect(host, port, boost::asio::use_future).get()
                                : b.connectUnix(unixPath, boost::asio::use_future).get();
  }
  ~KvClient() {
    channel_->close();
    channel_->waitClosed(boost::asio::use_future).wait();
  }

  /// Sends a request; its response arrives through the future. Any thread.
  std::future<Document> call(Message request) {
    std::lock_guard<std::mutex> lock(pending_->m);  // the queue's order is the wire's order
    pending_->calls.emplace_back();
    auto f = pending_->calls.back().get_future();
    channel_->writeAndFlush(std::move(request));
    return f;
  }
  std::future<Document> set(std::string_view key, std::string_view value) {
    Document d;
    d.setRoot(d.array(
        {d.str("set"), d.str(key), d.bin(std::as_bytes(std::span(value.data(), value.size())))}));
    return call(Message(std::move(d)));
  }
  std::future<Document> get(std::string_view key) { return op("get", key); }
  std::future<Document> del(std::string_view key) { return op("del", key); }

 private:
  std::future<Document> op(std::string_view name, std::string_view key) {
    Document d;
    d.setRoot(d.array({d.str(name), d.str(key)}));
    return call(Message(std::move(d)));
  }

  std::shared_ptr<Pending> pending_;
  std::shared_ptr<SocketChannel> channel_;
};

std::string valueOf(std::size_t i) {
  return fmt::format("value-{}-{}", i, std::string(i % 50, '*'));
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  std::string unixPath;
  unsigned short port = 7000;
  std::size_t count = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--host" && i + 1 < argc) {
      host = argv[++i];
    } else if (a == "--port" && i + 1 < argc) {
      port = static_cast<unsigned short>(std::atoi(argv[++i]));
    } else if (a == "--unix" && i + 1 < argc) {
      unixPath = argv[++i];
    } else if (a == "--count" && i + 1 < argc) {
      count = static_cast<std::size_t>(std::atoll(argv[++i]));
    } else {
      fmt::print(stderr, "usage: kv_client [--host H] [--port P | --unix PATH] [--count N]\n");
      return 2;
    }
  }
  EventLoopGroup group(1);
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok && ++failures <= 10) fmt::print(stderr, "kv_client: {}\n", what);
  };
  const auto start = std::chrono::steady_clock::now();
  {
    KvClient kv(group, host, port, unixPath);
    // Pipelined: every set is on its way before the first answer is looked at.
    std::vector<std::future<Document>> sets, gets;
    for (std::size_t i = 0; i < count; ++i)
      sets.push_back(kv.set(fmt::format("key{}", i), valueOf(i)));
    for (std::size_t i = 0; i < count; ++i) gets.push_back(kv.get(fmt::format("key{}", i)));
    for (auto& f : sets) expect(f.get().root()[0].asBool(), "a set failed");
    for (std::size_t i = 0; i < count; ++i) {
      Document d = gets[i].get();
      const Value& r = d.root();
      const auto b = r[1].isBin() ? r[1].asBin() : std::span<const std::byte>();
      expect(r[0].asBool() &&
                 std::string(reinterpret_cast<const char*>(b.data()), b.size()) == valueOf(i),
             fmt::format("get key{} returned {}", i, r.toDebugString()));
    }
    expect(kv.del("key0").get().root()[0].asBool(), "del failed");
    expect(kv.get("key0").get().root()[1].isNil(), "a deleted key still has a value");
    // Bytes that are not MessagePack, written as a plain buffer: framed all the same, answered
    // with an error, and the connection goes on.
    Document bad = kv.call(Message(Unpooled::copiedBuffer("\xc1 not msgpack"))).get();
    expect(!bad.root()[0].asBool() && bad.root()[1].asStr().find("bad request") == 0,
           "a malformed request was not answered with an error: " + bad.root().toDebugString());
    expect(kv.get("key1").get().root()[0].asBool(), "the connection did not survive an error");
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(2));
  if (failures != 0) {
    fmt::print("kv_client: {} failure(s)\n", failures);
    return 1;
  }
  fmt::print(
      "kv_client: {} sets and {} gets pipelined, all answers right ({:.1f} ms, {:.0f} "
      "requests/s)\n",
      count, count, ms, (2.0 * static_cast<double>(count) + 4) / (ms / 1000.0));
  return 0;
}
