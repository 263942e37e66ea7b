// A key-value server speaking length-prefixed MessagePack (kv_pipeline.hpp has the format), over
// TCP or a Unix domain socket. kv_client is its pipelined client.
//
//   build/release/examples/kv_server --port 7000 &            # or --unix /tmp/kv.sock
//   build/release/examples/kv_client --port 7000 --count 10000
//
// What it shows: the pipeline of frame codecs and per-frame MessagePack codecs, a handler of typed
// messages that answers each request and flushes once per read batch (pipelined requests go out
// as one gather write), decoding errors answered without dropping the connection, state shared by
// every connection, and a server's main in three lines (signals shut the group down gracefully).
#include <fmt/format.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <cstdlib>
#include <mutex>
#include <netbuf/netbuf.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kv_pipeline.hpp"

namespace {

using namespace netbuf;

/// The data every connection shares (connections live on several loops: one lock).
struct Store {
  std::mutex m;
  std::unordered_map<std::string, std::string> data;
  std::atomic<std::uint64_t> requests{0};
};

class KvHandler final : public InboundHandler<Document> {
 public:
  explicit KvHandler(std::shared_ptr<Store> store) : store_(std::move(store)) {}

  void messageReceived(ChannelHandlerContext& ctx, Document request) override {
    store_->requests.fetch_add(1, std::memory_order_relaxed);
    ctx.write(answer(request.root()));  // flushed once per read batch, below
  }
  void channelReadComplete(ChannelHandlerContext& ctx) override {
    ctx.flush();
    ctx.fireChannelReadComplete();
  }
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const TooLongFrameError&) {
      ctx.close();  // the stream cannot be trusted past a frame it refused to buffer
    } catch (const CodecError& e) {
      // One bad frame (not one MessagePack value, invalid UTF-8...): answer it, go on.
      ctx.writeAndFlush(failure(std::string("bad request: ") + e.what()));
    } catch (...) {
      ctx.close();
    }
  }

 private:
  static Document failure(std::string_view why) {
    Document d;
    d.setRoot(d.array({Value::boolean(false), d.str(why)}));
    return d;
  }
  static Document success(const std::string* value) {
    Document d;
    const Value v = value == nullptr
                        ? Value::nil()
                        : d.bin(std::as_bytes(std::span(value->data(), value->size())));
    d.setRoot(d.array({Value::boolean(true), v}));
    return d;
  }

  Document answer(const Value& req) {
    if (!req.isArray() || req.size() < 2 || !req[0].isStr() || !req[1].isStr())
      return failure("a request is [op, key, ...] with op and key strings");
    const std::string_view op = req[0].asStr();
    std::string key(req[1].asStr());
    std::lock_guard<std::mutex> lock(store_->m);
    if (op == "get") {
      auto it = store_->data.find(key);
      return success(it == store_->data.end() ? nullptr : &it->second);
    }
    if (op == "set") {
      if (req.size() != 3 || !(req[2].isBin() || req[2].isStr()))
        return failure("set takes [\"set\", key, value] with a bin or str value");
      std::string value;
      if (req[2].isBin()) {
        const auto b = req[2].asBin();
        value.assign(reinterpret_cast<const char*>(b.data()), b.size());
      } else {
        value = std::string(req[2].asStr());
      }
      store_->data[std::move(key)] = std::move(value);
      return success(nullptr);
    }
    if (op == "del") {
      store_->data.erase(key);
      return success(nullptr);
    }
    return failure(fmt::format("unknown op '{}'", op));
  }

  std::shared_ptr<Store> store_;
};

int usage() {
  fmt::print(stderr, "usage: kv_server [--host ADDR] [--port P] | --unix PATH\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  std::string unixPath;
  unsigned short port = 7000;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--host" && i + 1 < argc) {
      host = argv[++i];
    } else if (a == "--port" && i + 1 < argc) {
      port = static_cast<unsigned short>(std::atoi(argv[++i]));
    } else if (a == "--unix" && i + 1 < argc) {
      unixPath = argv[++i];
    } else {
      return usage();
    }
  }
  auto store = std::make_shared<Store>();
  ServerBootstrap bootstrap;
  EventLoopGroup group(2);
  group.shutdownGracefullyOnSignals();  // SIGINT / SIGTERM: graceful shutdown
  bootstrap.group(group).childHandler([store](SocketChannel& ch) {
    kv::addCodecs(ch.pipeline());
    ch.pipeline().addLast("kv", std::make_unique<KvHandler>(store));
  });
  auto server = unixPath.empty() ? bootstrap.bind(host, port) : bootstrap.bindUnix(unixPath);
  fmt::print("kv_server listening on {}\n", server->localAddress());
  std::fflush(stdout);
  server->waitClosed(boost::asio::use_future).wait();  // until a signal shuts the group down
  group.awaitTermination();
  fmt::print("kv_server stopped after {} requests\n", store->requests.load());
}
