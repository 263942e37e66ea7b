// SslHandler on real sockets (loopback TCP, port 0): echo with TLS 1.2 and 1.3, 64 MiB through a
// slow reader with the water marks holding, 200 concurrent handshakes, a plaintext client and a
// silent client refused while the server carries on. Run under ThreadSanitizer ("threaded").
#include <netbuf/tls/ssl_handler.hpp>

#include <doctest/doctest.h>

#include <netbuf/tls/ssl_errc.hpp>
#include <netbuf/tls/ssl_handshake_completion_event.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/socket_channel.hpp>

#include <sys/resource.h>
#include <atomic>
#include <boost/asio/read.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/thread_waits.hpp"
#include "support/tls_test_pki.hpp"

using namespace netbuf;
using namespace netbuf::test;
using namespace std::chrono_literals;

namespace {

/// Contexts from the test certificates, up to a TLS version.
struct Pki : TlsTestPki {
  std::shared_ptr<SslContext> serverContext(TlsVersion max = TlsVersion::tls13) const {
    SslContext::Options o = serverOptions();
    o.maxVersion = max;
    return SslContext::forServer(o);
  }
  std::shared_ptr<SslContext> clientContext(TlsVersion max = TlsVersion::tls13) const {
    SslContext::Options o = clientOptions();
    o.maxVersion = max;
    return SslContext::forClient(o);
  }
};

const Pki& pki() {
  static const Pki p;
  return p;
}

struct EchoHandler : ChannelHandler {
  void channelRead(ChannelHandlerContext& ctx, Message msg) override { ctx.write(std::move(msg)); }
  void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }
};

/// Collects plaintext and the handshake's outcome (thread-safe views for the test thread).
struct Collector : ChannelHandler {
  std::mutex m;
  std::string bytes;
  std::atomic<int> handshakes{0};
  std::atomic<int> handshakeFailures{0};
  std::atomic<bool> inactive{false};
  std::string protocol;
  bool pauseAfterHandshake = false;

  void channelRead(ChannelHandlerContext&, Message msg) override {
    ByteBuf b = msg.take<ByteBuf>();
    std::lock_guard<std::mutex> g(m);
    bytes.append(b.readableStringView());
  }
  void userEventTriggered(ChannelHandlerContext& ctx, Message ev) override {
    if (!ev.is<SslHandshakeCompletionEvent>()) return;
    const auto& e = ev.as<SslHandshakeCompletionEvent>();
    if (e.isSuccess()) {
      {
        std::lock_guard<std::mutex> g(m);
        protocol = e.protocol;
      }
      if (pauseAfterHandshake) ctx.channel().setAutoRead(false);
      ++handshakes;
    } else {
      ++handshakeFailures;
    }
  }
  void channelInactive(ChannelHandlerContext&) override { inactive = true; }
  std::size_t size() {
    std::lock_guard<std::mutex> g(m);
    return bytes.size();
  }
  std::string text() {
    std::lock_guard<std::mutex> g(m);
    return bytes;
  }
};

std::shared_ptr<ServerChannel> tlsEchoServer(EventLoopGroup& group,
                                             const std::shared_ptr<SslContext>& tls,
                                             std::chrono::milliseconds handshakeTimeout = 10s) {
  return ServerBootstrap()
      .group(group)
      .childHandler([tls, handshakeTimeout](SocketChannel& ch) {
        auto h = tls->newHandler();
        h->setHandshakeTimeout(handshakeTimeout);
        ch.pipeline().addLast("tls", std::move(h));
        ch.pipeline().addLast("echo", std::make_unique<EchoHandler>());
      })
      .bind("127.0.0.1", 0);
}

std::shared_ptr<SocketChannel> tlsClient(EventLoopGroup& group,
                                         const std::shared_ptr<SslContext>& tls,
                                         unsigned short port, Collector*& col,
                                         const ChannelOptions& options = {},
                                         bool pauseAfterHandshake = false) {
  std::atomic<Collector*> made{nullptr};
  auto ch = Bootstrap()
                .group(group)
                .options(options)
                .connectTimeout(5s)
                .handler([&](SocketChannel& c) {
                  c.pipeline().addLast("tls", tls->newHandler("localhost", port));
                  auto collector = std::make_unique<Collector>();
                  collector->pauseAfterHandshake = pauseAfterHandshake;
                  made = collector.get();
                  c.pipeline().addLast("collect", std::move(collector));
                })
                .connect("127.0.0.1", port, boost::asio::use_future)
                .get();
  col = made.load();
  return ch;
}

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 31 + i / 997);
  return s;
}

}  // namespace

TEST_CASE("TLS over TCP: echo with TLS 1.3 and TLS 1.2") {
  EventLoopGroup group(2);
  for (TlsVersion v : {TlsVersion::tls13, TlsVersion::tls12}) {
    auto server = tlsEchoServer(group, pki().serverContext(v));
    Collector* col = nullptr;
    auto client = tlsClient(group, pki().clientContext(), server->port(), col);
    const std::string payload = pattern(1 << 20);
    client->writeAndFlush(Unpooled::copiedBuffer(payload));
    REQUIRE(eventually([&] { return col->size() == payload.size(); }));
    CHECK(col->text() == payload);
    CHECK(col->handshakes.load() == 1);
    {
      std::lock_guard<std::mutex> g(col->m);
      CHECK(col->protocol == (v == TlsVersion::tls13 ? "TLSv1.3" : "TLSv1.2"));
    }
    client->close();
    REQUIRE(eventually([&] { return col->inactive.load(); }));
    server->close();
  }
}

namespace {

/// A producer writing kTotal bytes in writes of `chunk` to a reader that stops reading after its
/// handshake, then reads everything: the producer must block on the water marks, and the
/// ciphertext queued at the socket stays under the high water mark plus what one write adds
/// (a 16 KiB write's records; for a write larger than SslHandler::kMaxCiphertextPerWrite, one
/// such step: SslHandler stops there until the channel is writable again).
void slowReader(std::size_t chunk, std::size_t bound) {
  EventLoopGroup group(2);
  constexpr std::size_t kTotal = 64 * 1024 * 1024;
  struct Producer : ChannelHandler {
    explicit Producer(std::size_t c) : chunk(c) {}
    const std::size_t chunk;
    std::size_t written = 0;
    std::size_t maxPending = 0;
    std::atomic<int> unwritableSeen{0};
    std::atomic<bool> done{false};
    bool started = false;
    void produce(ChannelHandlerContext& ctx) {
      auto& ch = static_cast<SocketChannel&>(ctx.channel());
      while (written < kTotal && ch.isWritable()) {
        ByteBuf b = ctx.alloc().buffer(chunk);
        b.writeZero(chunk);
        ctx.writeAndFlush(std::move(b));
        written += chunk;
        maxPending = std::max(maxPending, ch.pendingWriteBytes());
      }
      if (written >= kTotal) done = true;
    }
    void userEventTriggered(ChannelHandlerContext& ctx, Message ev) override {
      if (ev.is<SslHandshakeCompletionEvent>() &&
          ev.as<SslHandshakeCompletionEvent>().isSuccess()) {
        started = true;
        produce(ctx);
      }
    }
    void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
      if (!started) return;
      if (ctx.channel().isWritable()) {
        produce(ctx);
      } else {
        ++unwritableSeen;
      }
    }
  };
  std::atomic<Producer*> producer{nullptr};
  ChannelOptions serverOpts;
  serverOpts.sendBufferSize = 64 * 1024;
  auto tls = pki().serverContext();
  auto server = ServerBootstrap()
                    .group(group)
                    .childOptions(serverOpts)
                    .childHandler([&](SocketChannel& ch) {
                      ch.pipeline().addLast("tls", tls->newHandler());
                      auto p = std::make_unique<Producer>(chunk);
                      producer = p.get();
                      ch.pipeline().addLast("produce", std::move(p));
                    })
                    .bind("127.0.0.1", 0);
  ChannelOptions clientOpts;
  clientOpts.receiveBufferSize = 64 * 1024;
  Collector* col = nullptr;
  // The reader stops reading once its handshake is done: the producer must block.
  auto client = tlsClient(group, pki().clientContext(), server->port(), col, clientOpts, true);
  REQUIRE(eventually([&] {
    Producer* p = producer.load();
    return p != nullptr && p->unwritableSeen.load() >= 1;
  }));
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(producer.load()->done.load());
  client->setAutoRead(true);
  REQUIRE(eventually([&] { return col->size() == kTotal; }));
  CHECK(producer.load()->done.load());
  // Ciphertext queued never exceeded the high water mark by more than one chunk's records.
  onLoop(*client, [] {});
  CHECK(producer.load()->maxPending <= bound);
}

}  // namespace

TEST_CASE("TLS over TCP: 64 MiB in 16 KiB writes through a slow reader; the water marks hold") {
  slowReader(16 * 1024, 64 * 1024 + 16 * 1024 + 1024);
}

TEST_CASE("TLS over TCP: 64 MiB in 4 MiB writes through a slow reader; SslHandler pauses") {
  slowReader(4 * 1024 * 1024, 64 * 1024 + SslHandler::kMaxCiphertextPerWrite + 8 * 1024);
}

TEST_CASE("TLS over TCP: 200 concurrent handshakes, each echoed exactly") {
  EventLoopGroup serverGroup(2);
  EventLoopGroup clientGroup(2);
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 1024 && lim.rlim_max > lim.rlim_cur) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 1024);
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  auto server = tlsEchoServer(serverGroup, pki().serverContext());
  auto tls = pki().clientContext();
  constexpr int kConnections = 200;
  std::mutex m;
  std::vector<std::shared_ptr<SocketChannel>> clients;
  std::vector<Collector*> collectors;
  std::atomic<int> failed{0};
  for (int i = 0; i < kConnections; ++i) {
    auto collector = std::make_shared<Collector*>(nullptr);
    Bootstrap()
        .group(clientGroup)
        .handler([&, i, collector](SocketChannel& ch) {
          ch.pipeline().addLast("tls", tls->newHandler("localhost", server->port()));
          auto c = std::make_unique<Collector>();
          *collector = c.get();
          ch.pipeline().addLast("collect", std::move(c));
          // Written before the handshake ends: SslHandler holds it until then.
          ch.writeAndFlush(Unpooled::copiedBuffer("connection " + std::to_string(i)));
        })
        .connect("127.0.0.1", server->port(),
                 [&, collector](ErrorCode ec, std::shared_ptr<SocketChannel> ch) {
                   std::lock_guard<std::mutex> g(m);
                   if (ec) {
                     ++failed;
                     return;
                   }
                   clients.push_back(std::move(ch));
                   collectors.push_back(*collector);
                 });
  }
  REQUIRE(eventually([&] {
    std::lock_guard<std::mutex> g(m);
    return clients.size() + static_cast<std::size_t>(failed.load()) == kConnections;
  }));
  CHECK(failed.load() == 0);
  REQUIRE(eventually([&] {
    std::lock_guard<std::mutex> g(m);
    for (Collector* c : collectors) {
      if (c->handshakes.load() != 1 || c->size() < std::string("connection ").size() + 1) {
        return false;
      }
    }
    return true;
  }));
  std::lock_guard<std::mutex> g(m);
  std::vector<bool> seen(kConnections, false);
  for (Collector* c : collectors) {
    const std::string t = c->text();
    REQUIRE(t.rfind("connection ", 0) == 0);
    const int id = std::stoi(t.substr(11));
    CHECK(!seen[id]);
    seen[id] = true;
  }
  for (auto& c : clients) c->close();
}

TEST_CASE("TLS over TCP: a plaintext client and a silent one are closed; the server carries on") {
  EventLoopGroup group(2);
  auto server = tlsEchoServer(group, pki().serverContext(), 300ms);
  boost::asio::io_context io;
  using boost::asio::ip::tcp;
  const tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"), server->port());

  // Plaintext: the server answers with an alert (or nothing) and closes.
  tcp::socket plain(io);
  plain.connect(ep);
  boost::asio::write(plain, boost::asio::buffer(std::string("GET / HTTP/1.1\r\nhost: x\r\n\r\n")));
  std::string reply;
  boost::system::error_code ec;
  char buf[512];
  for (;;) {
    const std::size_t n = plain.read_some(boost::asio::buffer(buf), ec);
    if (ec) break;
    reply.append(buf, n);
  }
  CHECK(ec == boost::asio::error::eof);
  CHECK(reply.find("HTTP") == std::string::npos);  // no plaintext answer

  // Silent: closed by the handshake timeout.
  tcp::socket silent(io);
  silent.connect(ep);
  const auto t0 = std::chrono::steady_clock::now();
  silent.read_some(boost::asio::buffer(buf), ec);
  CHECK(ec == boost::asio::error::eof);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);

  // And a real client still gets its echo.
  Collector* col = nullptr;
  auto client = tlsClient(group, pki().clientContext(), server->port(), col);
  client->writeAndFlush(Unpooled::copiedBuffer("still serving"));
  REQUIRE(eventually([&] { return col->text() == "still serving"; }));
}
