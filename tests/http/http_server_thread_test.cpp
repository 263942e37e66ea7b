// HttpServer over loopback TCP, driven by raw Boost.Asio client sockets: keep-alive, pipelining,
// coroutine handlers on real timers, graceful shutdown, and hostile peers (smuggling, a request
// line that never ends, a client that stalls, hundreds of connections, peers that reset). Every
// wait is bounded. Run under ThreadSanitizer too ("threaded").
#include <netbuf/http/http_server.hpp>

#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>

#include "http/http_wire.hpp"
#include "support/thread_waits.hpp"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;
using netbuf::test::eventually;
using netbuf::test::httpRequest;
using netbuf::test::parseResponse;
using netbuf::test::WireResponse;
using Clock = std::chrono::steady_clock;

namespace {

/// A blocking-style client on a non-blocking socket: every wait is a poll() with a deadline, so
/// a server that never answers fails the test instead of hanging it.
class RawClient {
 public:
  RawClient(asio::io_context& io, unsigned short port) : sock_(io) {
    sock_.connect({asio::ip::make_address("127.0.0.1"), port});
    sock_.non_blocking(true);
  }

  /// Sends every byte (fails the test if that takes over 10 s or the socket fails).
  void send(std::string_view bytes) {
    const auto deadline = Clock::now() + 10s;
    while (!bytes.empty()) {
      boost::system::error_code ec;
      const std::size_t n = sock_.write_some(asio::buffer(bytes.data(), bytes.size()), ec);
      if (ec == asio::error::would_block) {
        REQUIRE_MESSAGE(waitFor(POLLOUT, deadline), "send timed out");
        continue;
      }
      REQUIRE_MESSAGE(!ec, "send failed: " << ec.message());
      bytes.remove_prefix(n);
    }
  }

  /// The next response (heads: it answers a HEAD), or nothing when the connection ended or
  /// timeout passed first.
  std::optional<WireResponse> read(bool head = false, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      WireResponse r;
      if (const std::size_t n = parseResponse(buf_, r, head, eof_); n != 0) {
        buf_.erase(0, n);
        return r;
      }
      if (eof_ || !fill(deadline)) return std::nullopt;
    }
  }
  /// The next response, REQUIREd.
  WireResponse response(bool head = false) {
    auto r = read(head);
    REQUIRE_MESSAGE(r.has_value(), "no response; got so far: " << buf_);
    return *r;
  }

  /// Reads until the server closes (FIN or reset); false when timeout passed first.
  bool waitClosed(std::chrono::milliseconds timeout = 10s) {
    const auto deadline = Clock::now() + timeout;
    while (!eof_) {
      if (!fill(deadline) && !eof_) return false;
    }
    return true;
  }

  /// Sends nothing more and resets the connection (SO_LINGER 0: RST instead of FIN).
  void reset() {
    sock_.set_option(asio::socket_base::linger(true, 0));
    sock_.close();
  }

  bool closedByServer() const noexcept { return eof_; }
  const std::string& unread() const noexcept { return buf_; }
  tcp::socket& socket() noexcept { return sock_; }

 private:
  bool waitFor(short events, Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sock_.native_handle(), events, 0};
    return ::poll(&p, 1, static_cast<int>(left.count())) > 0;
  }
  /// Reads what is there (waiting until deadline); false on timeout. Sets eof_ at EOF or reset.
  bool fill(Clock::time_point deadline) {
    for (;;) {
      char tmp[65536];
      boost::system::error_code ec;
      const std::size_t n = sock_.read_some(asio::buffer(tmp), ec);
      if (!ec) {
        buf_.append(tmp, n);
        return true;
      }
      if (ec == asio::error::would_block) {
        if (!waitFor(POLLIN, deadline)) return false;
        continue;
      }
      eof_ = true;  // eof, connection_reset...
      return true;
    }
  }

  tcp::socket sock_;
  std::string buf_;
  bool eof_ = false;
};

/// The server bound to 127.0.0.1:0 on its own group; stopped at the end of the scope.
class Running {
 public:
  explicit Running(HttpServer& server, std::size_t threads = 2)
      : group_(threads), channel_(server.bind(group_, "127.0.0.1", 0)) {}
  ~Running() {
    channel_->close();
    channel_->closeChildren();
    channel_.reset();
    group_.shutdownGracefully(0ms, 5s);
  }
  unsigned short port() const { return channel_->port(); }

 private:
  EventLoopGroup group_;
  std::shared_ptr<ServerChannel> channel_;
};

FullHttpResponse textOk(std::string_view body) {
  return HttpServer::text(HttpResponseStatus::OK, body);
}

/// The target and body a handler saw.
FullHttpResponse describe(FullHttpRequest& req) {
  return textOk(std::string(req.method().name()) + " " + std::string(req.uri()) + " [" +
                std::string(req.content().readableStringView()) + "]");
}

int millisOf(std::string_view uri) {
  const auto at = uri.find("ms=");
  return at == std::string_view::npos ? 0 : std::stoi(std::string(uri.substr(at + 3)));
}

/// A coroutine route: sleeps ms= on a real steady_timer on the connection's loop.
asio::awaitable<FullHttpResponse> sleepy(FullHttpRequest req) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(std::chrono::milliseconds(millisOf(req.uri())));
  co_await t.async_wait(asio::use_awaitable);
  co_return textOk("slept " + std::string(req.uri()));
}

/// The routes most tests use.
void addRoutes(HttpServer& server) {
  server.route(HttpMethod::GET, "/", describe)
      .route(HttpMethod::GET, "/n/*", describe)
      .route(HttpMethod::POST, "/echo", describe)
      .route(HttpMethod::GET, "/sleep", sleepy);
}

/// Whether a new connection to port is refused.
bool refused(unsigned short port) {
  asio::io_context io;
  tcp::socket s(io);
  boost::system::error_code ec;
  s.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  return ec == asio::error::connection_refused;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Keep-alive, pipelining, coroutines

TEST_CASE("HttpServer: one keep-alive connection serves many requests") {
  HttpServer server;
  addRoutes(server);
  Running run(server);
  asio::io_context io;
  RawClient c(io, run.port());
  for (int i = 0; i < 200; ++i) {
    if (i % 2 == 0) {
      c.send(httpRequest("GET", "/n/" + std::to_string(i)));
      WireResponse r = c.response();
      CHECK(r.status == 200);
      CHECK(r.body == "GET /n/" + std::to_string(i) + " []");
    } else {
      const std::string body(static_cast<std::size_t>(i) * 37, 'x');
      c.send(httpRequest("POST", "/echo", "Content-Type: text/plain\r\n", body));
      WireResponse r = c.response();
      CHECK(r.body == "POST /echo [" + body + "]");
    }
  }
  CHECK_FALSE(c.closedByServer());
  CHECK(server.stats().connections == 1);
  CHECK(server.stats().requests == 200);
}

TEST_CASE("HttpServer: 16 pipelined requests are answered in order") {
  HttpServer server;
  addRoutes(server);
  Running run(server);
  asio::io_context io;
  RawClient c(io, run.port());
  for (int round = 0; round < 5; ++round) {
    std::string wire;
    for (int i = 0; i < 16; ++i) {
      wire += i % 3 == 0 ? httpRequest("POST", "/echo", "", "body " + std::to_string(i))
                         : httpRequest("GET", "/n/" + std::to_string(i));
    }
    c.send(wire);
    for (int i = 0; i < 16; ++i) {
      CAPTURE(i);
      WireResponse r = c.response();
      CHECK(r.body == (i % 3 == 0 ? "POST /echo [body " + std::to_string(i) + "]"
                                  : "GET /n/" + std::to_string(i) + " []"));
    }
  }
  CHECK(server.stats().requests == 80);
}

TEST_CASE("HttpServer: coroutines on real timers run concurrently and answer in order") {
  HttpServer server;
  addRoutes(server);
  Running run(server);
  asio::io_context io;
  RawClient c(io, run.port());
  const auto start = Clock::now();
  c.send(httpRequest("GET", "/sleep?ms=500") + httpRequest("GET", "/sleep?ms=500") +
         httpRequest("GET", "/sleep?ms=20") + httpRequest("GET", "/n/sync") +
         httpRequest("GET", "/sleep?ms=500"));
  CHECK(c.response().body == "slept /sleep?ms=500");
  CHECK(c.response().body == "slept /sleep?ms=500");
  CHECK(c.response().body == "slept /sleep?ms=20");
  CHECK(c.response().body == "GET /n/sync []");
  CHECK(c.response().body == "slept /sleep?ms=500");
  const auto took = Clock::now() - start;
  CHECK(took >= 500ms);
  // Three 500 ms sleeps at once (one after the other would take over 1.5 s).
  CHECK(took < 1400ms);
}

// ---------------------------------------------------------------------------------------------
// Graceful shutdown

TEST_CASE("HttpServer: shutdownGracefully finishes the request in flight and refuses new ones") {
  HttpServer server;
  std::atomic<int> started{0};
  server.route(HttpMethod::GET, "/", describe)
      .route(HttpMethod::GET, "/slow", [&](FullHttpRequest req) {
        ++started;
        return sleepy(std::move(req));
      });
  EventLoopGroup group(2);
  auto channel = server.bind(group, "127.0.0.1", 0);
  const unsigned short port = channel->port();
  asio::io_context io;
  RawClient busy(io, port);
  RawClient idle(io, port);
  idle.send(httpRequest("GET", "/"));
  CHECK(idle.response().status == 200);

  busy.send(httpRequest("GET", "/slow?ms=1000"));
  REQUIRE(eventually([&] { return started.load() == 1; }));
  const auto start = Clock::now();
  auto done = std::async(std::launch::async, [&] { return server.shutdownGracefully(5s); });
  // At once: no more connections, and the idle keep-alive connection is closed.
  CHECK(eventually([&] { return refused(port); }));
  CHECK(idle.waitClosed(5s));
  CHECK(done.wait_for(0s) == std::future_status::timeout);
  // The request in flight completes, says the connection ends, and the connection ends.
  WireResponse r = busy.response();
  CHECK(r.status == 200);
  CHECK(r.body == "slept /slow?ms=1000");
  CHECK(r.closes());
  CHECK(busy.waitClosed(5s));
  REQUIRE(done.wait_for(5s) == std::future_status::ready);
  CHECK(done.get());
  CHECK(Clock::now() - start >= 900ms);
  CHECK(refused(port));
  channel.reset();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("HttpServer: shutdownGracefully gives up after its timeout and closes what is left") {
  HttpServer server;
  server.route(HttpMethod::GET, "/sleep", sleepy);
  EventLoopGroup group(1);
  auto channel = server.bind(group, "127.0.0.1", 0);
  asio::io_context io;
  RawClient c(io, channel->port());
  c.send(httpRequest("GET", "/sleep?ms=5000"));
  std::this_thread::sleep_for(50ms);  // the request is being handled
  const auto start = Clock::now();
  CHECK_FALSE(server.shutdownGracefully(300ms));
  CHECK(Clock::now() - start < 3s);
  CHECK(c.waitClosed(5s));
  channel.reset();
  group.shutdownGracefully(0ms, 5s);
}

// ---------------------------------------------------------------------------------------------
// Hostile peers

TEST_CASE("HttpServer: smuggling attempts are answered with an error and the connection closed") {
  struct Attempt {
    const char* what;
    std::string wire;
    int status;
  };
  const std::vector<Attempt> attempts = {
      {"Content-Length with Transfer-Encoding",
       "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n"
       "0\r\n\r\nGET /n/smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
       400},
      // 0x100000004 is 4 in 32 bits: a parser that wraps would read a 4-byte chunk and take what
      // follows as the next request. Refused as a chunk over maxChunkSize.
      {"chunk size that wraps in 32 bits",
       "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n100000004\r\nabcd\r\n"
       "0\r\n\r\nGET /n/smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
       413},
      {"chunk size with a sign",
       "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-4\r\nabcd\r\n"
       "0\r\n\r\n",
       400},
      {"chunk size of 17 hex digits",
       "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
       "10000000000000004\r\nabcd\r\n0\r\n\r\n",
       400},
      {"obs-fold hiding a Transfer-Encoding",
       "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nX-A: b\r\n Transfer-Encoding: "
       "chunked\r\n\r\nabcd",
       400},
      {"Transfer-Encoding with a space before the colon",
       "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\nContent-Length: 4\r\n\r\n"
       "abcd",
       400},
      {"chunked not final",
       "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400},
      {"chunked twice",
       "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
       "chunked\r\n\r\n0\r\n\r\n",
       400},
  };
  HttpServer server;
  addRoutes(server);
  Running run(server);
  asio::io_context io;
  for (const Attempt& a : attempts) {
    INFO("case: " << std::string(a.what));
    RawClient c(io, run.port());
    c.send(a.wire);
    WireResponse r = c.response();
    CHECK(r.status == a.status);
    CHECK(r.closes());
    CHECK(c.waitClosed(5s));
    // Nothing after the refusal: the smuggled request got no answer.
    CHECK(c.unread().empty());
  }
  CHECK(server.stats().badRequests == attempts.size());
  CHECK(server.stats().requests == 0);
}

TEST_CASE("HttpServer: a 64 MB request line is cut off at the limit") {
  // The client writes a request line with no CRLF, as fast as the server takes it, on a thread of
  // its own, while this thread reads. The server must answer 414 and close long before 64 MB.
  HttpServer server;
  addRoutes(server);
  Running run(server);
  asio::io_context io;
  tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), run.port()});
  const int fd = s.native_handle();
  constexpr std::size_t kTotal = std::size_t{64} << 20;
  std::atomic<std::size_t> sent{0};
  std::atomic<int> sendErrno{0};
  std::thread writer([&] {
    const std::string chunk = "GET /" + std::string(64 * 1024 - 5, 'a');
    std::string_view rest = chunk;
    const auto deadline = Clock::now() + 20s;
    while (sent.load() < kTotal && Clock::now() < deadline) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        sendErrno = errno;
        return;
      }
      sent += static_cast<std::size_t>(n);
      rest.remove_prefix(static_cast<std::size_t>(n));
      if (rest.empty()) rest = std::string_view(chunk).substr(5);  // more of the target
    }
  });
  std::string got;
  bool closed = false;
  const auto deadline = Clock::now() + 20s;
  while (!closed && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      got.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      closed = true;
    }
  }
  writer.join();
  INFO("bytes sent: " << sent.load() << ", send error: " << sendErrno.load() << ", got: " << got);
  CHECK(closed);
  CHECK(sent.load() < kTotal / 4);  // the kernel's buffers (about 3 MB here), not the line
  // The server closes with unread bytes in its receive buffer, so the close is a reset, which
  // discards what the server had not sent yet; on loopback the answer, written before the close,
  // has already arrived (and Linux lets it be read before the reset is reported).
  WireResponse r;
  REQUIRE(parseResponse(got, r) != 0);
  CHECK(r.status == 414);
  CHECK(r.closes());
  CHECK(server.stats().badRequests == 1);
}

TEST_CASE("HttpServer: a client that stalls mid-head is closed by the idle timeout") {
  HttpServer::Options o;
  o.idleTimeout = 300ms;
  o.requestHeadTimeout = 10s;  // so that it is the idle timeout that acts
  HttpServer server(o);
  addRoutes(server);
  Running run(server);
  asio::io_context io;
  RawClient c(io, run.port());
  c.send("GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ");
  const auto start = Clock::now();
  CHECK(c.waitClosed(5s));
  const auto took = Clock::now() - start;
  CHECK(took >= 250ms);
  CHECK(took < 3s);
  CHECK(c.unread().empty());  // closed without an answer
  CHECK(eventually([&] { return server.stats().idleClosed == 1; }));
  // A connection that is busy reading responses is not idle: 10 requests 100 ms apart, 1 s in all.
  RawClient active(io, run.port());
  for (int i = 0; i < 10; ++i) {
    active.send(httpRequest("GET", "/"));
    CHECK(active.response().status == 200);
    std::this_thread::sleep_for(100ms);
  }
  CHECK_FALSE(active.closedByServer());
}

TEST_CASE("HttpServer: a client trickling its head is closed by requestHeadTimeout") {
  // One byte every 50 ms: never idle for idleTimeout, so only the head timeout (300 ms, checked
  // once per period: one to two periods) ends it.
  HttpServer::Options o;
  o.idleTimeout = 300ms;
  o.requestHeadTimeout = 300ms;
  HttpServer server(o);
  addRoutes(server);
  Running run(server);
  asio::io_context io;
  RawClient c(io, run.port());
  const std::string head = "GET / HTTP/1.1\r\nHost: a\r\nX-Slow: " + std::string(200, 'z');
  const auto start = Clock::now();
  std::size_t sent = 0;
  for (; sent < head.size(); ++sent) {
    boost::system::error_code ec;
    c.socket().write_some(asio::buffer(head.data() + sent, 1), ec);
    if (ec || c.waitClosed(50ms)) break;
  }
  const auto took = Clock::now() - start;
  INFO("closed after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                       << " ms, " << sent << " bytes");
  CHECK(c.waitClosed(5s));
  CHECK(took >= 250ms);
  CHECK(took < 3s);
  CHECK(c.unread().empty());
  CHECK(eventually([&] { return server.stats().headTimeouts == 1; }));
  CHECK(server.stats().idleClosed == 0);
}

TEST_CASE("HttpServer: 500 concurrent keep-alive connections") {
  HttpServer server;
  addRoutes(server);
  Running run(server, 2);
  asio::io_context io;
  const auto start = Clock::now();
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 500; ++i) clients.push_back(std::make_unique<RawClient>(io, run.port()));
  // Each round: every connection has a request in flight at once, then every answer is read.
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < clients.size(); ++i) {
      clients[i]->send(round == 1 ? httpRequest("POST", "/echo", "", "c" + std::to_string(i))
                                  : httpRequest("GET", "/n/" + std::to_string(i)));
    }
    for (std::size_t i = 0; i < clients.size(); ++i) {
      WireResponse r = clients[i]->response();
      CHECK(r.body == (round == 1 ? "POST /echo [c" + std::to_string(i) + "]"
                                  : "GET /n/" + std::to_string(i) + " []"));
    }
  }
  const auto took = Clock::now() - start;
  INFO("took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(took < 20s);
  const HttpServerStats s = server.stats();
  CHECK(s.connections == 500);
  CHECK(s.requests == 1500);
}

TEST_CASE("HttpServer: peers that reset mid-request do not disturb the others") {
  HttpServer server;
  addRoutes(server);
  Running run(server, 2);
  asio::io_context io;
  RawClient steady(io, run.port());
  for (int i = 0; i < 50; ++i) {
    RawClient rude(io, run.port());
    switch (i % 3) {
      case 0:  // half a head
        rude.send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Le");
        break;
      case 1:  // a head and half its body
        rude.send(httpRequest("POST", "/echo", "Content-Length: 100\r\n").substr(0, 60) +
                  std::string(50, 'x'));
        break;
      default:  // a whole request whose response it will not read, and half the next
        rude.send(httpRequest("GET", "/sleep?ms=20") + "GET / HT");
        break;
    }
    rude.reset();
    if (i % 10 == 0) {
      steady.send(httpRequest("GET", "/n/" + std::to_string(i)));
      CHECK(steady.response().body == "GET /n/" + std::to_string(i) + " []");
    }
  }
  std::this_thread::sleep_for(100ms);  // the coroutines of the reset connections complete
  // New connections and the old one are still served.
  RawClient after(io, run.port());
  after.send(httpRequest("GET", "/n/after"));
  CHECK(after.response().body == "GET /n/after []");
  steady.send(httpRequest("GET", "/n/steady"));
  CHECK(steady.response().body == "GET /n/steady []");
  CHECK(server.stats().connections == 52);
}
