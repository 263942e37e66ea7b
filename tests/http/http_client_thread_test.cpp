// HttpClient over loopback TCP. Against netbuf's own HttpServer (in-process, 127.0.0.1:0): GET,
// POST and HEAD with a callback, use_awaitable (a coroutine on an io_context of the test's),
// use_future and deferred; keep-alive reuse, a pooled connection the server closed, requests from
// several threads, the per-host connection limit, pipelining, the request timeout, cancellation
// through bound slots (terminal, total, a coroutine's parallel group), refused connections,
// invalid URLs, close() and the destructor, redirects (methods, bodies, credentials, limits) and
// the content limit. Against a scripted raw socket peer that writes exact bytes: close-delimited
// and chunked bodies (with trailers, one byte per write), keep-alive by version and Connection,
// 204 / 304, HEAD with framing fields (pipelined too), interim 1xx responses, malformed responses
// and a peer that closes mid-response. Every wait is bounded. Run under ThreadSanitizer too
// ("threaded").
#include <netbuf/http/http_client.hpp>

#include <doctest/doctest.h>
#include <poll.h>

#include "support/http_test_client.hpp"
#include "support/thread_waits.hpp"

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/http/http_server.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;
using netbuf::test::eventually;
using Clock = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------------------------------------
// Outcomes of requests

struct Outcome {
  ErrorCode ec;
  FullHttpResponse res;
  bool onClientLoop = false;  ///< the completion ran on the client's loop thread

  int status() const { return res.status().code(); }
  std::string body() const { return std::string(res.content().readableStringView()); }
  std::string header(std::string_view name) const {
    return std::string(res.headers().get(name, "<none>"));
  }
};

/// Starts a request with a callback (start(handler)); the future is its outcome.
template <class Start>
std::future<Outcome> launch(HttpClient& client, Start&& start) {
  auto p = std::make_shared<std::promise<Outcome>>();
  std::future<Outcome> f = p->get_future();
  EventLoop* loop = &client.eventLoop();
  start([p, loop](ErrorCode ec, FullHttpResponse res) {
    p->set_value(Outcome{ec, std::move(res), loop->inEventLoop()});
  });
  return f;
}

/// The outcome, REQUIREd within 10 s (a request that never completes fails, never hangs).
Outcome await(std::future<Outcome>& f) {
  REQUIRE_MESSAGE(f.wait_for(10s) == std::future_status::ready, "the request never completed");
  return f.get();
}

template <class Start>
Outcome call(HttpClient& client, Start&& start) {
  std::future<Outcome> f = launch(client, std::forward<Start>(start));
  return await(f);
}

Outcome get(HttpClient& client, const std::string& url) {
  return call(client, [&](auto h) { client.get(url, std::move(h)); });
}

// ---------------------------------------------------------------------------------------------
// netbuf's HttpServer

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
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port()) + std::string(path);
  }

 private:
  EventLoopGroup group_;
  std::shared_ptr<ServerChannel> channel_;
};

using Client = test::TestHttpClient;

FullHttpResponse textOk(std::string_view body) {
  return HttpServer::text(HttpResponseStatus::OK, body);
}

/// "METHOD target [body] content-type": what a handler saw.
FullHttpResponse describe(FullHttpRequest& req) {
  return textOk(std::string(req.method().name()) + " " + std::string(req.uri()) + " [" +
                std::string(req.content().readableStringView()) + "] " +
                std::string(req.headers().get(HttpHeaderNames::kContentType, "-")));
}

FullHttpResponse redirect(std::uint16_t code, std::string_view location) {
  FullHttpResponse res(HttpResponseStatus::valueOf(code));
  res.headers().add(HttpHeaderNames::kLocation, location);
  return res;
}

int millisOf(std::string_view uri) {
  const auto at = uri.find("ms=");
  return at == std::string_view::npos ? 0 : std::stoi(std::string(uri.substr(at + 3)));
}

/// Handler-side counters the tests read from their own thread.
struct Probe {
  std::atomic<int> active{0};     // coroutine handlers running now
  std::atomic<int> maxActive{0};  // ... at most, at once
  std::atomic<int> entered{0};    // /hold handlers started
  std::atomic<int> loops{0};      // /loop requests seen
};

/// A coroutine route: sleeps ms= on a real timer on the connection's loop, counting how many run
/// at once (pipelined requests run concurrently on the server).
asio::awaitable<FullHttpResponse> sleepy(Probe* probe, FullHttpRequest req) {
  const int now = ++probe->active;
  int seen = probe->maxActive.load();
  while (now > seen && !probe->maxActive.compare_exchange_weak(seen, now)) {
  }
  if (req.uri().starts_with("/hold")) ++probe->entered;
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(std::chrono::milliseconds(millisOf(req.uri())));
  co_await t.async_wait(asio::use_awaitable);
  --probe->active;
  co_return textOk("slept " + std::string(req.uri()));
}

/// The routes the HttpServer tests use. otherPort: a second server, for cross-host redirects.
void addRoutes(HttpServer& server, Probe& probe, unsigned short otherPort = 0) {
  auto sleeper = [&probe](FullHttpRequest req) { return sleepy(&probe, std::move(req)); };
  server.route(HttpMethod::GET, "/", describe)
      .route(HttpMethod::GET, "/n/*", describe)
      .route(HttpMethod::POST, "/echo", describe)
      .route(HttpMethod::GET, "/any", describe)
      .route(HttpMethod::POST, "/any", describe)
      .route(HttpMethod::GET, "/sleep", sleeper)
      .route(HttpMethod::GET, "/hold", sleeper)
      .route(HttpMethod::GET, "/big",
             [](FullHttpRequest&) { return textOk(std::string(5000, 'b')); })
      .route(HttpMethod::GET, "/r302", [](FullHttpRequest&) { return redirect(302, "/any"); })
      .route(HttpMethod::POST, "/r302", [](FullHttpRequest&) { return redirect(302, "/any"); })
      .route(HttpMethod::POST, "/r301", [](FullHttpRequest&) { return redirect(301, "/any"); })
      .route(HttpMethod::POST, "/r303", [](FullHttpRequest&) { return redirect(303, "/any?s=1"); })
      .route(HttpMethod::POST, "/r307", [](FullHttpRequest&) { return redirect(307, "/any"); })
      .route(HttpMethod::POST, "/r308", [](FullHttpRequest&) { return redirect(308, "/echo"); })
      .route(HttpMethod::GET, "/chain",
             [](FullHttpRequest& req) {
               // /chain?3 -> /chain?2 -> /chain?1 -> /any
               const int left = req.uri().back() - '0';
               return left <= 1 ? redirect(301, "/any")
                                : redirect(302, "/chain?" + std::to_string(left - 1));
             })
      .route(HttpMethod::GET, "/loop",
             [&probe](FullHttpRequest&) {
               ++probe.loops;
               return redirect(302, "/loop");
             })
      .route(HttpMethod::GET, "/rftp",
             [](FullHttpRequest&) { return redirect(302, "ftp://127.0.0.1/any"); })
      .route(HttpMethod::GET, "/nolocation",
             [](FullHttpRequest&) { return FullHttpResponse(HttpResponseStatus::FOUND); })
      .route(HttpMethod::GET, "/elsewhere",
             [otherPort](FullHttpRequest&) {
               return redirect(307, "http://127.0.0.1:" + std::to_string(otherPort) + "/n/other");
             })
      .route(HttpMethod::GET, "/creds",
             [](FullHttpRequest& req) {
               return textOk("auth=" + std::string(req.headers().get("authorization", "-")) +
                             " cookie=" + std::string(req.headers().get("cookie", "-")) +
                             " x=" + std::string(req.headers().get("x-custom", "-")));
             })
      .route(HttpMethod::GET, "/creds-here",
             [](FullHttpRequest&) { return redirect(302, "/creds"); })
      .route(HttpMethod::GET, "/creds-elsewhere", [otherPort](FullHttpRequest&) {
        return redirect(302, "http://127.0.0.1:" + std::to_string(otherPort) + "/creds");
      });
}

/// A port nothing listens on.
unsigned short closedPort() {
  asio::io_context io;
  tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ---------------------------------------------------------------------------------------------
// A raw socket peer that writes exact bytes

/// A scripted HTTP "server" on a raw Boost.Asio socket: each connection it accepts is handed, on
/// the peer's own thread and one at a time, to the script, which reads requests and writes the
/// bytes it chooses; the connection closes when the script returns. Every wait polls with a
/// deadline and stops when the peer is destroyed.
class RawPeer {
 public:
  class Conn {
   public:
    Conn(tcp::socket s, int index, RawPeer& peer)
        : sock_(std::move(s)), index_(index), peer_(peer) {
      sock_.non_blocking(true);
      sock_.set_option(tcp::no_delay(true));
    }
    /// Which connection this is (0 first).
    int index() const { return index_; }

    /// The next request (head and Content-Length body), recorded; nothing at EOF or after 10 s.
    std::optional<std::string> request() {
      const auto deadline = Clock::now() + 10s;
      for (;;) {
        if (auto r = take()) {
          peer_.record(*r);
          return r;
        }
        if (!fill(deadline)) return std::nullopt;
      }
    }
    /// Writes every byte (gives up after 10 s).
    void write(std::string_view bytes) {
      const auto deadline = Clock::now() + 10s;
      while (!bytes.empty() && Clock::now() < deadline && !peer_.stop_) {
        boost::system::error_code ec;
        const std::size_t n = sock_.write_some(asio::buffer(bytes.data(), bytes.size()), ec);
        if (ec == asio::error::would_block) {
          pollfd p{sock_.native_handle(), POLLOUT, 0};
          ::poll(&p, 1, 20);
          continue;
        }
        if (ec) return;
        bytes.remove_prefix(n);
      }
    }
    /// Writes bytes one at a time, pausing between them (every split point of the decoder).
    void trickle(std::string_view bytes, std::chrono::microseconds pause = 300us) {
      for (char c : bytes) {
        write(std::string_view(&c, 1));
        std::this_thread::sleep_for(pause);
      }
    }
    /// Waits for the client to close the connection (true) or 10 s (false).
    bool waitEof() {
      const auto deadline = Clock::now() + 10s;
      while (fill(deadline)) {
      }
      return eof_;
    }

   private:
    std::optional<std::string> take() {
      const std::size_t end = buf_.find("\r\n\r\n");
      if (end == std::string::npos) return std::nullopt;
      const std::string head = lower(buf_.substr(0, end + 2));
      std::size_t length = 0;
      if (const auto at = head.find("\r\ncontent-length:"); at != std::string::npos) {
        length = std::stoul(head.substr(at + 17));
      }
      if (buf_.size() < end + 4 + length) return std::nullopt;
      std::string r = buf_.substr(0, end + 4 + length);
      buf_.erase(0, end + 4 + length);
      return r;
    }
    /// Reads what comes (false at EOF, on an error, at the deadline or when the peer stops).
    bool fill(Clock::time_point deadline) {
      while (Clock::now() < deadline && !peer_.stop_) {
        char tmp[16384];
        boost::system::error_code ec;
        const std::size_t n = sock_.read_some(asio::buffer(tmp), ec);
        if (!ec) {
          buf_.append(tmp, n);
          return true;
        }
        if (ec != asio::error::would_block) {
          eof_ = true;
          return false;
        }
        pollfd p{sock_.native_handle(), POLLIN, 0};
        ::poll(&p, 1, 20);
      }
      return false;
    }

    tcp::socket sock_;
    int index_;
    RawPeer& peer_;
    std::string buf_;
    bool eof_ = false;
  };
  using Script = std::function<void(Conn&)>;

  explicit RawPeer(Script script)
      : script_(std::move(script)),
        acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        port_(acceptor_.local_endpoint().port()) {
    acceptor_.non_blocking(true);
    thread_ = std::thread([this] { run(); });
  }
  ~RawPeer() {
    stop_ = true;
    thread_.join();
  }
  unsigned short port() const { return port_; }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port()) + std::string(path);
  }
  /// Connections accepted so far.
  int accepted() const { return accepted_.load(); }
  /// Connections whose script has returned (and which are closed).
  int finished() const { return finished_.load(); }
  /// Every request read so far, in order.
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  void record(const std::string& r) {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(r);
  }
  void run() {
    int index = 0;
    while (!stop_) {
      pollfd p{acceptor_.native_handle(), POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      boost::system::error_code ec;
      tcp::socket s(io_);
      acceptor_.accept(s, ec);
      if (ec) continue;
      ++accepted_;
      {
        Conn c(std::move(s), index++, *this);
        script_(c);
      }
      ++finished_;
    }
  }

  Script script_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  unsigned short port_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> finished_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

/// A script that answers every request on a connection with the next of responses (in turn,
/// across connections), until the client closes.
RawPeer::Script answers(std::vector<std::string> responses) {
  auto next = std::make_shared<std::size_t>(0);
  return [responses = std::move(responses), next](RawPeer::Conn& c) {
    while (c.request()) {
      c.write(responses[(*next)++ % responses.size()]);
    }
  };
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Completion tokens

TEST_CASE("HttpClient: GET, POST and HEAD with callbacks") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  Client client;

  Outcome o = get(*client, running.url("/n/a?x=1"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 200);
  CHECK(o.body() == "GET /n/a?x=1 [] -");
  CHECK(o.res.protocolVersion() == HttpVersion::HTTP_1_1);
  CHECK(o.header("content-type") == "text/plain; charset=utf-8");
  // A callback has no executor of its own: it runs on the client's loop.
  CHECK(o.onClientLoop);

  o = call(*client, [&](auto h) {
    client->post(running.url("/echo"), Unpooled::copiedBuffer("payload"), "text/x-test",
                 std::move(h));
  });
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "POST /echo [payload] text/x-test");

  // HEAD: the server keeps Content-Length, the client reads no body (and stays in sync).
  o = call(*client, [&](auto h) { client->head(running.url("/n/a"), std::move(h)); });
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 200);
  CHECK_FALSE(o.res.content().isReadable());
  // (The GET route's body for this request: "HEAD /n/a [] -".)
  CHECK(o.header("content-length") == std::to_string(std::string("HEAD /n/a [] -").size()));

  // Any request through request(): the URL's target replaces the request's own uri.
  FullHttpRequest del(HttpMethod::DELETE, "/ignored");
  o = call(*client,
           [&](auto h) { client->request(std::move(del), running.url("/"), std::move(h)); });
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 405);  // "/" has only a GET route: the answer, whatever it is, completes

  // A body of 512 KiB each way (many writes and reads; the server's limit is 1 MiB).
  const std::string big(512 * 1024, 'q');
  o = call(*client, [&](auto h) {
    client->post(running.url("/echo"), Unpooled::copiedBuffer(big), "", std::move(h));
  });
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "POST /echo [" + big + "] -");

  // A 404 is a response like any other, not an error.
  o = get(*client, running.url("/missing"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 404);

  // All of it over one keep-alive connection.
  CHECK(client->connectionsMade() == 1);
  CHECK(server.stats().connections == 1);
}

namespace {

/// GET, POST and an invalid URL from a coroutine; where each resumption ran.
asio::awaitable<std::vector<std::string>> coroutineRequests(HttpClient& client, std::string base,
                                                            std::thread::id expected) {
  std::vector<std::string> out;
  FullHttpResponse a = co_await client.get(base + "/n/co", asio::use_awaitable);
  out.push_back(std::string(a.content().readableStringView()));
  out.push_back(std::this_thread::get_id() == expected ? "same thread" : "other thread");
  FullHttpResponse b = co_await client.post(base + "/echo", Unpooled::copiedBuffer("from coro"),
                                            "text/plain", asio::use_awaitable);
  out.push_back(std::string(b.content().readableStringView()));
  try {
    co_await client.get("ftp://127.0.0.1/", asio::use_awaitable);
    out.push_back("no exception");
  } catch (const boost::system::system_error& e) {
    out.push_back(e.code() == HttpClientErrc::invalidUrl ? "invalidUrl" : e.code().message());
  }
  out.push_back(std::this_thread::get_id() == expected ? "same thread" : "other thread");
  co_return out;
}

}  // namespace

TEST_CASE("HttpClient: use_awaitable in a coroutine on an io_context of the caller") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  Client client;

  // The coroutine runs on this thread's io_context; the client's completions come back to it (the
  // handler's associated executor), and the pending requests keep io.run_for() from returning
  // early (work is counted on that executor).
  asio::io_context io;
  auto f =
      asio::co_spawn(io, coroutineRequests(*client, running.url(""), std::this_thread::get_id()),
                     asio::use_future);
  io.run_for(10s);
  REQUIRE(f.wait_for(0s) == std::future_status::ready);
  const std::vector<std::string> out = f.get();
  REQUIRE(out.size() == 5);
  CHECK(out[0] == "GET /n/co [] -");
  CHECK(out[1] == "same thread");
  CHECK(out[2] == "POST /echo [from coro] text/plain");
  CHECK(out[3] == "invalidUrl");
  CHECK(out[4] == "same thread");
}

TEST_CASE("HttpClient: use_future and deferred") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  Client client;

  std::future<FullHttpResponse> f = client->get(running.url("/n/future"), asio::use_future);
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  FullHttpResponse res = f.get();
  CHECK(res.status().code() == 200);
  CHECK(std::string(res.content().readableStringView()) == "GET /n/future [] -");

  // deferred: nothing is sent until the operation is started with a token.
  auto op = client->get(running.url("/n/deferred"), asio::deferred);
  std::this_thread::sleep_for(50ms);
  CHECK(server.stats().requests == 1);
  std::future<FullHttpResponse> late = std::move(op)(asio::use_future);
  REQUIRE(late.wait_for(10s) == std::future_status::ready);
  CHECK(std::string(late.get().content().readableStringView()) == "GET /n/deferred [] -");
  CHECK(server.stats().requests == 2);

  // An error is the future's exception.
  std::future<FullHttpResponse> bad = client->get("ftp://127.0.0.1/", asio::use_future);
  REQUIRE(bad.wait_for(10s) == std::future_status::ready);
  try {
    bad.get();
    FAIL("an invalid URL did not throw");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == HttpClientErrc::invalidUrl);
  }
}

// ---------------------------------------------------------------------------------------------
// Connections

TEST_CASE("HttpClient: one keep-alive connection serves sequential requests") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  Client client;

  for (int i = 0; i < 20; ++i) {
    const std::string path = "/n/" + std::to_string(i);
    const Outcome o = i % 2 == 0 ? get(*client, running.url(path)) : call(*client, [&](auto h) {
      client->post(running.url("/echo"), Unpooled::copiedBuffer(path), "", std::move(h));
    });
    REQUIRE_FALSE(o.ec);
    CHECK(o.body() == (i % 2 == 0 ? "GET " + path + " [] -" : "POST /echo [" + path + "] -"));
  }
  CHECK(client->connectionsMade() == 1);
  CHECK(client->openConnections() == 1);  // idle in the pool
  CHECK(server.stats().connections == 1);
  CHECK(server.stats().requests == 20);
}

TEST_CASE("HttpClient: an idle pooled connection is closed after idleTimeout") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  HttpClient::Options opt;
  opt.idleTimeout = 100ms;
  Client client(opt);

  REQUIRE_FALSE(get(*client, running.url("/")).ec);
  CHECK(client->openConnections() == 1);
  CHECK(eventually([&] { return client->openConnections() == 0; }));
  // The next request opens a fresh one.
  REQUIRE_FALSE(get(*client, running.url("/")).ec);
  CHECK(client->connectionsMade() == 2);
}

TEST_CASE("HttpClient: a pooled connection the server closed is not reused") {
  HttpServer::Options serverOptions;
  serverOptions.idleTimeout = 100ms;
  HttpServer server(serverOptions);
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  Client client;

  REQUIRE_FALSE(get(*client, running.url("/")).ec);
  // The server's idle timeout ends the connection; the client notices and drops it from the pool.
  CHECK(eventually([&] { return server.stats().idleClosed == 1; }));
  CHECK(eventually([&] { return client->openConnections() == 0; }));
  const Outcome o = get(*client, running.url("/n/again"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "GET /n/again [] -");
  CHECK(client->connectionsMade() == 2);
}

TEST_CASE("HttpClient: requests started from several threads at once") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server, 4);
  HttpClient::Options opt;
  opt.maxConnectionsPerHost = 3;
  Client client(opt);

  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<std::vector<std::future<Outcome>>> pending(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string url = running.url("/n/" + std::to_string(t) + "-" + std::to_string(i));
        pending[static_cast<std::size_t>(t)].push_back(
            launch(*client, [&](auto h) { client->get(url, std::move(h)); }));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; ++i) {
      const Outcome o = await(pending[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)]);
      REQUIRE_FALSE(o.ec);
      CHECK(o.body() == "GET /n/" + std::to_string(t) + "-" + std::to_string(i) + " [] -");
    }
  }
  CHECK(client->connectionsMade() <= 3);
  CHECK(server.stats().requests == kThreads * kEach);
}

TEST_CASE("HttpClient: 50 concurrent requests within maxConnectionsPerHost") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  HttpClient::Options opt;
  opt.maxConnectionsPerHost = 4;
  Client client(opt);

  std::vector<std::future<Outcome>> pending;
  for (int i = 0; i < 50; ++i) {
    const std::string url = running.url("/sleep?ms=20&i=" + std::to_string(i));
    pending.push_back(launch(*client, [&](auto h) { client->get(url, std::move(h)); }));
  }
  std::size_t maxOpen = 0;
  for (int i = 0; i < 50; ++i) {
    maxOpen = std::max(maxOpen, client->openConnections());
    const Outcome o = await(pending[static_cast<std::size_t>(i)]);
    REQUIRE_FALSE(o.ec);
    CHECK(o.body() == "slept /sleep?ms=20&i=" + std::to_string(i));
  }
  CHECK(maxOpen <= 4);
  CHECK(client->connectionsMade() <= 4);
  CHECK(client->connectionsMade() >= 2);  // the limit, not a lack of demand, kept it there
  CHECK(server.stats().connections <= 4);
  // Without pipelining one request per connection at a time: never more than 4 handlers at once.
  CHECK(probe.maxActive.load() <= 4);
}

TEST_CASE("HttpClient: pipelining puts requests in flight together on one connection") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);

  SUBCASE("pipelining on") {
    HttpClient::Options opt;
    opt.pipelining = true;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    std::vector<std::future<Outcome>> pending;
    // The first sleeps longest: the server finishes them out of order, answers in order, and
    // each response must reach its own request.
    for (int i = 0; i < 10; ++i) {
      const std::string url =
          running.url("/sleep?ms=" + std::to_string(200 - i * 15) + "&i=" + std::to_string(i));
      pending.push_back(launch(*client, [&](auto h) { client->get(url, std::move(h)); }));
    }
    for (int i = 0; i < 10; ++i) {
      const Outcome o = await(pending[static_cast<std::size_t>(i)]);
      REQUIRE_FALSE(o.ec);
      CHECK(o.body() ==
            "slept /sleep?ms=" + std::to_string(200 - i * 15) + "&i=" + std::to_string(i));
    }
    CHECK(client->connectionsMade() == 1);
    CHECK(server.stats().connections == 1);
    // Several requests were on the server at once over that one connection.
    CHECK(probe.maxActive.load() >= 2);
  }
  SUBCASE("pipelining off, one connection: strictly one at a time") {
    HttpClient::Options opt;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    std::vector<std::future<Outcome>> pending;
    for (int i = 0; i < 5; ++i) {
      const std::string url = running.url("/sleep?ms=20&i=" + std::to_string(i));
      pending.push_back(launch(*client, [&](auto h) { client->get(url, std::move(h)); }));
    }
    for (auto& p : pending) CHECK_FALSE(await(p).ec);
    CHECK(client->connectionsMade() == 1);
    CHECK(probe.maxActive.load() == 1);
  }
  SUBCASE("maxPipelineDepth bounds the requests in flight") {
    HttpClient::Options opt;
    opt.pipelining = true;
    opt.maxPipelineDepth = 2;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    std::vector<std::future<Outcome>> pending;
    for (int i = 0; i < 8; ++i) {
      const std::string url = running.url("/sleep?ms=30&i=" + std::to_string(i));
      pending.push_back(launch(*client, [&](auto h) { client->get(url, std::move(h)); }));
    }
    for (auto& p : pending) CHECK_FALSE(await(p).ec);
    CHECK(client->connectionsMade() == 1);
    CHECK(probe.maxActive.load() <= 2);
  }
}

TEST_CASE("HttpClient: requestTimeout fails a slow request with timedOut") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  HttpClient::Options opt;
  opt.requestTimeout = 200ms;
  Client client(opt);

  const auto t0 = Clock::now();
  Outcome o = get(*client, running.url("/sleep?ms=2000"));
  const auto waited = Clock::now() - t0;
  CHECK(o.ec == HttpClientErrc::timedOut);
  CHECK(waited >= 200ms);
  CHECK(waited < 1800ms);
  // Its connection was closed (a late response must not answer the next request); the next
  // request opens a new one and succeeds well within the limit.
  CHECK(eventually([&] { return client->openConnections() == 0; }));
  o = get(*client, running.url("/n/after"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "GET /n/after [] -");
  CHECK(client->connectionsMade() == 2);
}

TEST_CASE("HttpClient: a bound cancellation slot cancels with operation_aborted") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);

  SUBCASE("a request in flight: its connection is closed") {
    Client client;
    asio::cancellation_signal sig;
    auto f = launch(*client, [&](auto h) {
      client->get(running.url("/hold?ms=3000"),
                  asio::bind_cancellation_slot(sig.slot(), std::move(h)));
    });
    REQUIRE(eventually([&] { return probe.entered.load() == 1; }));
    const auto t0 = Clock::now();
    sig.emit(asio::cancellation_type::terminal);
    const Outcome o = await(f);
    CHECK(o.ec == asio::error::operation_aborted);
    CHECK(Clock::now() - t0 < 2s);
    CHECK(eventually([&] { return client->openConnections() == 0; }));
    // A later cancellation of the finished request does nothing.
    sig.emit(asio::cancellation_type::terminal);
    CHECK_FALSE(get(*client, running.url("/")).ec);
  }
  SUBCASE("a request waiting for a connection: the connection stays") {
    HttpClient::Options opt;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    auto first =
        launch(*client, [&](auto h) { client->get(running.url("/hold?ms=1000"), std::move(h)); });
    REQUIRE(eventually([&] { return probe.entered.load() == 1; }));
    asio::cancellation_signal sig;
    auto second = launch(*client, [&](auto h) {
      client->get(running.url("/n/second"), asio::bind_cancellation_slot(sig.slot(), std::move(h)));
    });
    sig.emit(asio::cancellation_type::terminal);
    const Outcome o2 = await(second);
    CHECK(o2.ec == asio::error::operation_aborted);
    CHECK(first.wait_for(0s) == std::future_status::timeout);  // still waiting for its response
    const Outcome o1 = await(first);
    REQUIRE_FALSE(o1.ec);
    CHECK(o1.body() == "slept /hold?ms=1000");
    CHECK(client->connectionsMade() == 1);
    CHECK(server.stats().requests == 1);  // the cancelled one never went out
  }
  SUBCASE("total cancellation: only a request not sent yet (one sent has had side effects)") {
    HttpClient::Options opt;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    asio::cancellation_signal sentSig;
    asio::cancellation_signal waitingSig;
    auto sent = launch(*client, [&](auto h) {
      client->get(running.url("/hold?ms=1000"),
                  asio::bind_cancellation_slot(sentSig.slot(), std::move(h)));
    });
    REQUIRE(eventually([&] { return probe.entered.load() == 1; }));
    auto waiting = launch(*client, [&](auto h) {
      client->get(running.url("/n/w"),
                  asio::bind_cancellation_slot(waitingSig.slot(), std::move(h)));
    });
    sentSig.emit(asio::cancellation_type::total);
    waitingSig.emit(asio::cancellation_type::total);
    CHECK(await(waiting).ec == asio::error::operation_aborted);
    const Outcome o = await(sent);
    REQUIRE_FALSE(o.ec);
    CHECK(o.body() == "slept /hold?ms=1000");
    CHECK(client->connectionsMade() == 1);
  }
  SUBCASE("a coroutine's awaitable_operators race: the loser is cancelled") {
    Client client;
    using namespace asio::experimental::awaitable_operators;
    const std::string url = running.url("/hold?ms=3000");
    auto race = [&]() -> asio::awaitable<std::string> {
      asio::steady_timer t(co_await asio::this_coro::executor, 300ms);
      auto r =
          co_await (client->get(url, asio::use_awaitable) || t.async_wait(asio::use_awaitable));
      co_return r.index() == 0 ? "response" : "timer";
    };
    asio::io_context io;
    auto f = asio::co_spawn(io, race(), asio::use_future);
    const auto t0 = Clock::now();
    io.run_for(10s);
    REQUIRE(f.wait_for(0s) == std::future_status::ready);
    CHECK(f.get() == "timer");
    CHECK(Clock::now() - t0 < 2500ms);
    CHECK(eventually([&] { return client->openConnections() == 0; }));
  }
}

TEST_CASE("HttpClient: connection refused and invalid URLs") {
  Client client;
  Outcome o = get(*client, "http://127.0.0.1:" + std::to_string(closedPort()) + "/");
  CHECK(o.ec == asio::error::connection_refused);
  CHECK(o.onClientLoop);

  for (const char* url :
       {"httpx://127.0.0.1/", "ftp://127.0.0.1/", "127.0.0.1:80/", "http://user@127.0.0.1/",
        "http://127.0.0.1:99999/", "http://127.0.0.1/a b", ""}) {
    CAPTURE(url);
    o = get(*client, url);
    CHECK(o.ec == HttpClientErrc::invalidUrl);
    CHECK(o.ec.message() == "not an http(s)://host[:port][/path] URL");
    CHECK(o.onClientLoop);  // completed on the loop, never inside get()
  }
  CHECK(client->connectionsMade() == 0);
}

TEST_CASE("HttpClient: close() fails pending requests with clientClosed") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);

  SUBCASE("close()") {
    HttpClient::Options opt;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    auto inFlight =
        launch(*client, [&](auto h) { client->get(running.url("/hold?ms=3000"), std::move(h)); });
    auto waiting = launch(*client, [&](auto h) { client->get(running.url("/n/w"), std::move(h)); });
    REQUIRE(eventually([&] { return probe.entered.load() == 1; }));
    const auto t0 = Clock::now();
    client->close();
    CHECK(await(inFlight).ec == HttpClientErrc::clientClosed);
    CHECK(await(waiting).ec == HttpClientErrc::clientClosed);
    CHECK(Clock::now() - t0 < 2s);
    CHECK(eventually([&] { return client->openConnections() == 0; }));
    // Closed for good: new requests fail the same way; close() again is harmless.
    CHECK(get(*client, running.url("/")).ec == HttpClientErrc::clientClosed);
    client->close();
  }
  SUBCASE("the destructor") {
    Client client;
    auto inFlight =
        launch(*client, [&](auto h) { client->get(running.url("/hold?ms=3000"), std::move(h)); });
    REQUIRE(eventually([&] { return probe.entered.load() == 1; }));
    client.destroy();
    CHECK(await(inFlight).ec == HttpClientErrc::clientClosed);
  }
  SUBCASE("close() from a completion on the client's loop") {
    Client client;
    auto later =
        launch(*client, [&](auto h) { client->get(running.url("/hold?ms=3000"), std::move(h)); });
    REQUIRE(eventually([&] { return probe.entered.load() == 1; }));
    HttpClient& c = *client;
    auto first = launch(*client, [&](auto h) {
      c.get(running.url("/"), [&c, h = std::move(h)](ErrorCode ec, FullHttpResponse res) mutable {
        c.close();  // on the loop: closes at once, without waiting for itself
        h(ec, std::move(res));
      });
    });
    CHECK_FALSE(await(first).ec);
    CHECK(await(later).ec == HttpClientErrc::clientClosed);
  }
}

TEST_CASE("HttpClient: close() from the completion of a request closed by close() itself") {
  // Two connections with a request in flight each: closing the first completes its request,
  // whose completion calls close() again; the outer close() still closes the second.
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  Client client;
  HttpClient& c = *client;
  auto second = launch(*client, [&](auto h) { c.get(running.url("/hold?ms=3000"), std::move(h)); });
  auto first = launch(*client, [&](auto h) {
    c.get(running.url("/hold?ms=3000"),
          [&c, h = std::move(h)](ErrorCode ec, FullHttpResponse res) mutable {
            c.close();  // re-entered from inside close()
            h(ec, std::move(res));
          });
  });
  REQUIRE(eventually([&] { return probe.entered.load() == 2; }));
  client->close();
  CHECK(await(first).ec == HttpClientErrc::clientClosed);
  CHECK(await(second).ec == HttpClientErrc::clientClosed);
  CHECK(eventually([&] { return client->openConnections() == 0; }));
}

TEST_CASE("HttpClient: a connection switched by 101 is never reused") {
  // After a 101 the connection speaks another protocol: the next request must get a new one.
  RawPeer peer([&](RawPeer::Conn& c) {
    if (!c.request()) return;
    if (c.index() == 0) {
      c.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n");
      c.waitEof();
    } else {
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      c.waitEof();
    }
  });
  Client client;
  CHECK(get(*client, peer.url("/up")).status() == 101);
  const Outcome next = get(*client, peer.url("/next"));
  CHECK_FALSE(next.ec);
  CHECK(next.body() == "ok");
  CHECK(client->connectionsMade() == 2);
}

// ---------------------------------------------------------------------------------------------
// Redirects and limits

TEST_CASE("HttpClient: redirects are returned as they are unless followRedirects") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  Client client;
  Outcome o = get(*client, running.url("/r302"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 302);
  CHECK(o.header("location") == "/any");
  CHECK(server.stats().requests == 1);
}

TEST_CASE("HttpClient: followRedirects") {
  HttpServer other;
  Probe otherProbe;
  addRoutes(other, otherProbe);
  Running otherRunning(other);
  HttpServer server;
  Probe probe;
  addRoutes(server, probe, otherRunning.port());
  Running running(server);
  HttpClient::Options opt;
  opt.followRedirects = true;
  opt.maxRedirects = 3;
  Client client(opt);

  auto post = [&](std::string_view path, std::string_view body) {
    return call(*client, [&](auto h) {
      client->post(running.url(path), Unpooled::copiedBuffer(body), "text/x-body", std::move(h));
    });
  };

  // 302 on GET: followed, still a GET.
  Outcome o = get(*client, running.url("/r302"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 200);
  CHECK(o.body() == "GET /any [] -");

  // 303 on POST: a GET without the body or its content-type.
  o = post("/r303", "the body");
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "GET /any?s=1 [] -");
  // 301 and 302 on POST: a GET too (what browsers do, RFC 9110 15.4.2 allows it).
  o = post("/r301", "x");
  CHECK(o.body() == "GET /any [] -");
  o = post("/r302", "x");
  CHECK(o.body() == "GET /any [] -");

  // 307 and 308: the method, the body and its fields are kept.
  o = post("/r307", "the body");
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "POST /any [the body] text/x-body");
  o = post("/r308", "again");
  CHECK(o.body() == "POST /echo [again] text/x-body");

  // A chain within the limit (3 redirects).
  o = get(*client, running.url("/chain?3"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "GET /any [] -");

  // To another host:port (an absolute Location): its own pool.
  o = get(*client, running.url("/elsewhere"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "GET /n/other [] -");
  CHECK(other.stats().requests == 1);

  // Credentials follow a redirect on the same host:port only; other fields go everywhere.
  auto withCredentials = [&](std::string_view path) {
    return call(*client, [&](auto h) {
      FullHttpRequest req(HttpMethod::GET, "/");
      req.headers().add("Authorization", "Bearer secret").add("Cookie", "s=1").add("X-Custom", "y");
      client->request(std::move(req), running.url(path), std::move(h));
    });
  };
  o = withCredentials("/creds-here");
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "auth=Bearer secret cookie=s=1 x=y");
  o = withCredentials("/creds-elsewhere");
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "auth=- cookie=- x=y");

  // Too many: the original request plus maxRedirects redirects, then the error.
  o = get(*client, running.url("/loop"));
  CHECK(o.ec == HttpClientErrc::tooManyRedirects);
  CHECK(probe.loops.load() == 4);

  // A Location the client cannot follow (another scheme), or none: the 3xx itself.
  o = get(*client, running.url("/rftp"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 302);
  CHECK(o.header("location") == "ftp://127.0.0.1/any");
  o = get(*client, running.url("/nolocation"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 302);

  // Everything same-host went over one connection.
  CHECK(server.stats().connections == 1);
}

TEST_CASE("HttpClient: maxContentLength fails a larger response with responseTooLarge") {
  HttpServer server;
  Probe probe;
  addRoutes(server, probe);
  Running running(server);
  HttpClient::Options opt;
  opt.maxContentLength = 1000;
  Client client(opt);

  Outcome o = get(*client, running.url("/big"));
  CHECK(o.ec == HttpClientErrc::responseTooLarge);
  // The rest of that response is unread: the connection is not reused.
  o = get(*client, running.url("/n/small"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "GET /n/small [] -");
  CHECK(client->connectionsMade() == 2);
}

// ---------------------------------------------------------------------------------------------
// Exact bytes from a raw peer

TEST_CASE("HttpClient: close-delimited bodies (HTTP/1.0 and Connection: close)") {
  const std::string part1 = "a close-delimited body, ";
  const std::string part2(100000, 'z');  // several reads
  RawPeer peer([&](RawPeer::Conn& c) {
    if (!c.request()) return;
    if (c.index() == 0) {
      c.write("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n");
      c.write(part1);
      std::this_thread::sleep_for(20ms);
      c.write(part2);
    } else {
      c.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + part1);
    }
  });  // returning closes: the body ends there
  Client client;

  Outcome o = get(*client, peer.url("/one"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 200);
  CHECK(o.res.protocolVersion() == HttpVersion::HTTP_1_0);
  CHECK(o.body() == part1 + part2);

  o = get(*client, peer.url("/two"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == part1);
  CHECK(client->connectionsMade() == 2);
  CHECK(eventually([&] { return client->openConnections() == 0; }));

  // What the client sent: origin-form target, Host with the port, its user-agent.
  const std::vector<std::string> reqs = peer.requests();
  REQUIRE(reqs.size() == 2);
  const std::string first = lower(reqs[0]);
  CHECK(first.starts_with("get /one http/1.1\r\n"));
  CHECK(first.find("\r\nhost: 127.0.0.1:" + std::to_string(peer.port()) + "\r\n") !=
        std::string::npos);
  CHECK(first.find("\r\nuser-agent: netbuf\r\n") != std::string::npos);
}

TEST_CASE("HttpClient: keep-alive follows the response's version and Connection field") {
  std::atomic<int> closedByClient{0};
  RawPeer peer([&](RawPeer::Conn& c) {
    if (c.index() == 0) {
      // HTTP/1.0 asking for keep-alive: reusable.
      for (int i = 0; i < 2; ++i) {
        if (!c.request()) return;
        c.write("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nka");
      }
      // HTTP/1.1 saying close, with a length: the client closes once it has read it.
      if (!c.request()) return;
      c.write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nclose");
      if (c.waitEof()) ++closedByClient;
    } else if (c.request()) {
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nnew");
      c.waitEof();
    }
  });
  Client client;
  CHECK(get(*client, peer.url("/a")).body() == "ka");
  CHECK(get(*client, peer.url("/b")).body() == "ka");
  CHECK(get(*client, peer.url("/c")).body() == "close");
  CHECK(client->connectionsMade() == 1);
  CHECK(eventually([&] { return closedByClient.load() == 1; }));
  CHECK(eventually([&] { return client->openConnections() == 0; }));
  CHECK(get(*client, peer.url("/d")).body() == "new");
  CHECK(client->connectionsMade() == 2);
}

TEST_CASE("HttpClient: chunked bodies with extensions and trailers, split anywhere") {
  std::string many = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string manyBody;
  for (int i = 1; i <= 300; ++i) {
    const std::string piece(static_cast<std::size_t>(i % 37 + 1), static_cast<char>('a' + i % 26));
    char size[16];
    std::snprintf(size, sizeof size, "%zx", piece.size());
    many += std::string(size) + "\r\n" + piece + "\r\n";
    manyBody += piece;
  }
  many += "0\r\n\r\n";
  RawPeer peer([&](RawPeer::Conn& c) {
    if (!c.request()) return;
    // One byte at a time: every split point of head, sizes, data and trailers.
    c.trickle(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n"
        "5\r\nhello\r\n6;name=value\r\n world\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n");
    if (!c.request()) return;
    c.write(many);
    if (!c.request()) return;
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext");
    c.waitEof();
  });
  Client client;

  Outcome o = get(*client, peer.url("/trailers"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "hello world");
  REQUIRE(o.res.trailers() != nullptr);
  CHECK(o.res.trailers()->get("x-checksum") == std::optional<std::string_view>("abc"));
  CHECK(o.res.trailers()->get("x-other") == std::optional<std::string_view>("1"));

  o = get(*client, peer.url("/many"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == manyBody);

  // The connection stayed in sync and in use.
  o = get(*client, peer.url("/next"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "next");
  CHECK(client->connectionsMade() == 1);
  CHECK(peer.accepted() == 1);
}

TEST_CASE("HttpClient: 204 and 304 have no body, whatever their fields say") {
  RawPeer peer(answers({
      "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n",
      // A 304 carries the Content-Length of the representation it stands for (RFC 9110 8.6).
      "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 1234\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
  }));
  Client client;

  Outcome o = get(*client, peer.url("/204"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 204);
  CHECK_FALSE(o.res.content().isReadable());
  CHECK(o.header("x-a") == "1");

  o = get(*client, peer.url("/304"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 304);
  CHECK_FALSE(o.res.content().isReadable());
  CHECK(o.header("content-length") == "1234");

  o = get(*client, peer.url("/200"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "ok");
  CHECK(client->connectionsMade() == 1);
}

TEST_CASE("HttpClient: a response to HEAD has no body, then the next response follows") {
  SUBCASE("one request at a time") {
    RawPeer peer(answers({
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
    }));
    Client client;
    Outcome o = call(*client, [&](auto h) { client->head(peer.url("/h"), std::move(h)); });
    REQUIRE_FALSE(o.ec);
    CHECK(o.status() == 200);
    CHECK_FALSE(o.res.content().isReadable());
    CHECK(o.header("content-length") == "100");
    o = get(*client, peer.url("/g"));
    REQUIRE_FALSE(o.ec);
    CHECK(o.body() == "abc");
    CHECK(client->connectionsMade() == 1);
  }
  SUBCASE("pipelined: both responses in one write") {
    // The HEAD response claims a chunked body and the GET's follows at once: only a decoder that
    // knows the request was HEAD splits them right.
    RawPeer peer([](RawPeer::Conn& c) {
      if (!c.request() || !c.request() || !c.request()) return;
      c.write(
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
          "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
          "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz");
      c.waitEof();
    });
    HttpClient::Options opt;
    opt.pipelining = true;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    auto h1 = launch(*client, [&](auto h) { client->head(peer.url("/h1"), std::move(h)); });
    auto h2 = launch(*client, [&](auto h) { client->head(peer.url("/h2"), std::move(h)); });
    auto g = launch(*client, [&](auto h) { client->get(peer.url("/g"), std::move(h)); });
    Outcome o = await(h1);
    REQUIRE_FALSE(o.ec);
    CHECK_FALSE(o.res.content().isReadable());
    o = await(h2);
    REQUIRE_FALSE(o.ec);
    CHECK(o.header("content-length") == "100");
    CHECK_FALSE(o.res.content().isReadable());
    o = await(g);
    REQUIRE_FALSE(o.ec);
    CHECK(o.body() == "xyz");
    const std::vector<std::string> reqs = peer.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[0].starts_with("HEAD /h1 "));
    CHECK(reqs[1].starts_with("HEAD /h2 "));
    CHECK(reqs[2].starts_with("GET /g "));
    CHECK(client->connectionsMade() == 1);
  }
}

TEST_CASE("HttpClient: interim 1xx responses before the final one") {
  RawPeer peer([](RawPeer::Conn& c) {
    if (!c.request()) return;
    c.write("HTTP/1.1 100 Continue\r\n\r\n");
    std::this_thread::sleep_for(20ms);
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone");
    if (!c.request()) return;
    // Several interim responses, one with fields, all in one write with the final one.
    c.write(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n"
        "\r\nHTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nmade!");
    if (!c.request()) return;
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast");
    c.waitEof();
  });
  Client client;

  Outcome o = call(*client, [&](auto h) {
    client->post(peer.url("/upload"), Unpooled::copiedBuffer("data"), "text/plain", std::move(h));
  });
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 200);
  CHECK(o.body() == "done");

  o = get(*client, peer.url("/hints"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.status() == 201);
  CHECK(o.body() == "made!");

  // Still in step: the third request gets the third response.
  o = get(*client, peer.url("/last"));
  REQUIRE_FALSE(o.ec);
  CHECK(o.body() == "last");
  CHECK(client->connectionsMade() == 1);
}

TEST_CASE("HttpClient: a malformed response fails with malformedResponse and closes") {
  const std::vector<std::string> responses = {
      "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",                           // status code
      "NOT-HTTP garbage\r\n\r\n",                                               // status line
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",            // chunk size
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",  // two lengths
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nBad Field\r\n\r\n",  // no colon
  };
  std::atomic<int> closedByClient{0};
  RawPeer peer([&](RawPeer::Conn& c) {
    if (!c.request()) return;
    c.write(responses[static_cast<std::size_t>(c.index()) % responses.size()]);
    if (c.waitEof()) ++closedByClient;  // the client gave the connection up
  });
  Client client;
  for (std::size_t i = 0; i < responses.size(); ++i) {
    CAPTURE(responses[i]);
    const Outcome o = get(*client, peer.url("/bad"));
    CHECK(o.ec == HttpClientErrc::malformedResponse);
    CHECK(eventually([&] { return closedByClient.load() == static_cast<int>(i + 1); }));
  }
  CHECK(client->connectionsMade() == responses.size());
}

TEST_CASE("HttpClient: the peer closing before the whole response fails with ChannelErrc::closed") {
  const std::vector<std::string> partial = {
      "",                                                                    // nothing at all
      "HTTP/1.1 200 OK\r\nContent-Le",                                       // inside the head
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..",            // inside the body
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nhalf",     // inside a chunk
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nfull\r\n",  // between chunks
  };
  RawPeer peer([&](RawPeer::Conn& c) {
    if (!c.request()) return;
    c.write(partial[static_cast<std::size_t>(c.index()) % partial.size()]);
  });  // and close
  Client client;
  for (const std::string& bytes : partial) {
    CAPTURE(bytes);
    const Outcome o = get(*client, peer.url("/cut"));
    CHECK(o.ec == ChannelErrc::closed);
  }
}

TEST_CASE("HttpClient: a chunked body over maxContentLength fails with responseTooLarge") {
  std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 20; ++i) chunked += "64\r\n" + std::string(100, 'c') + "\r\n";
  chunked += "0\r\n\r\n";
  RawPeer peer(answers({chunked}));
  HttpClient::Options opt;
  opt.maxContentLength = 1000;  // 2000 bytes come, in chunks: no length to refuse up front
  Client client(opt);
  CHECK(get(*client, peer.url("/chunked")).ec == HttpClientErrc::responseTooLarge);
}
