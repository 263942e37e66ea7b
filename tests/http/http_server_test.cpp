// HttpServer on an EmbeddedChannel (server.install(ch.pipeline())): routing, keep-alive rules,
// pipelining and the one-flush batch, coroutine handlers completing out of order (on the
// channel's virtual clock), handler errors, every decoder error status, Expect: 100-continue, the
// idle timeout, backpressure, the fields the server adds, and the counters. Real sockets are in
// http_server_thread_test.cpp, real peers (curl, Python) in http_interop_thread_test.cpp.
#include <netbuf/http/http_server.hpp>

#include <doctest/doctest.h>

#include "http/http_wire.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <memory>
#include <netbuf/codec/http/http_date.hpp>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using netbuf::test::httpRequest;
using netbuf::test::parseResponses;
using netbuf::test::WireResponse;

namespace {

/// Counts what the server hands towards the socket: writes and flushes (added at the head).
class WriteCounter : public ChannelHandler {
 public:
  int writes = 0;
  int flushes = 0;
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override {
    ++writes;
    ctx.write(std::move(msg), listener);
  }
  void flush(ChannelHandlerContext& ctx) override {
    ++flushes;
    ctx.flush();
  }
  MessageTypes inboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }
};

/// An EmbeddedChannel with the server installed, and a WriteCounter in front of it.
struct Conn {
  explicit Conn(HttpServer& server) {
    auto c = std::make_unique<WriteCounter>();
    counter = c.get();
    ch.pipeline().addLast("count", std::move(c));
    server.install(ch.pipeline());
  }
  ~Conn() {
    try {
      ch.finishAndReleaseAll();
    } catch (const std::exception& e) {  // not out of a destructor: that would end the program
      FAIL_CHECK("the channel recorded an exception: " << e.what());
    }
  }

  /// Feeds bytes as one read (one channelRead, one channelReadComplete).
  void send(std::string_view bytes) { ch.writeInbound(Unpooled::copiedBuffer(bytes)); }
  /// Every byte written and flushed so far (taken off the channel).
  std::string written() {
    std::string all;
    for (Message m = ch.readOutboundMessage(); !m.empty(); m = ch.readOutboundMessage()) {
      if (m.is<ByteBuf>()) {
        all += m.as<ByteBuf>().readableStringView();
      } else {
        all += readableBytesToString(m.as<AnyByteBuf>());
      }
    }
    return all;
  }
  /// The responses written so far (heads[i]: the i-th answers a HEAD); fails on trailing bytes.
  std::vector<WireResponse> responses(const std::vector<bool>& heads = {}) {
    std::string rest;
    const std::string w = written();
    auto r = parseResponses(w, heads, &rest);
    CHECK_MESSAGE(rest.empty(), "unparsed bytes after the responses: " << rest);
    return r;
  }
  /// Exactly one response.
  WireResponse response(bool head = false) {
    auto r = responses({head});
    REQUIRE(r.size() == 1);
    return r[0];
  }

  EmbeddedChannel ch;
  WriteCounter* counter = nullptr;
};

FullHttpResponse textOk(std::string_view body) {
  return HttpServer::text(HttpResponseStatus::OK, body);
}

/// The request's target and body, as a handler saw them.
FullHttpResponse describe(FullHttpRequest& req) {
  return textOk(std::string(req.method().name()) + " " + std::string(req.uri()) + " [" +
                std::string(req.content().readableStringView()) + "]");
}

/// Completes after d on the executor's clock: EmbeddedChannel's virtual one, which
/// advanceTimeBy() moves (an Asio timer made from an EmbeddedChannel's executor never fires).
asio::awaitable<void> sleepOn(ChannelExecutor& ex, std::chrono::nanoseconds d) {
  co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
      [&ex, d](auto handler) {
        auto held = std::make_shared<decltype(handler)>(std::move(handler));
        ex.schedule(d, [held] { std::move (*held)(); });
      },
      asio::use_awaitable);
}

/// The number after "ms=" in the target.
int millisOf(std::string_view uri) {
  const auto at = uri.find("ms=");
  return at == std::string_view::npos ? 0 : std::stoi(std::string(uri.substr(at + 3)));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Routing

TEST_CASE("HttpServer: routes match exactly or by prefix; 404; 405 with Allow") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe)
      .route(HttpMethod::GET, "/x/*", describe)
      .route(HttpMethod::POST, "/form", describe)
      .route(HttpMethod::PUT, "/form", describe)
      .route(HttpMethod::valueOf("PURGE"), "/cache", describe);
  Conn c(server);

  c.send(httpRequest("GET", "/"));
  CHECK(c.response().body == "GET / []");
  // The query string is not part of the path a route matches, but the handler sees it.
  c.send(httpRequest("GET", "/?a=1&b=/x/"));
  CHECK(c.response().body == "GET /?a=1&b=/x/ []");
  c.send(httpRequest("GET", "/x/a/b?q"));
  CHECK(c.response().body == "GET /x/a/b?q []");
  c.send(httpRequest("GET", "/x/"));
  CHECK(c.response().status == 200);
  // "/x/*" is every path under "/x/", not "/x" itself nor "/xy".
  c.send(httpRequest("GET", "/x"));
  CHECK(c.response().status == 404);
  c.send(httpRequest("GET", "/xy"));
  CHECK(c.response().status == 404);
  // Exact routes do not match longer paths.
  c.send(httpRequest("GET", "/index.html"));
  WireResponse nf = c.response();
  CHECK(nf.status == 404);
  CHECK(nf.body == "Not Found\n");
  CHECK(nf.header("content-type") == "text/plain; charset=utf-8");

  c.send(httpRequest("POST", "/form", "", "a=1"));
  CHECK(c.response().body == "POST /form [a=1]");
  // The path exists, the method does not: 405 naming every method the path has.
  c.send(httpRequest("DELETE", "/form?x"));
  WireResponse na = c.response();
  CHECK(na.status == 405);
  CHECK(na.header("allow") == "POST, PUT");
  CHECK(na.header("content-length") == std::to_string(na.body.size()));
  // An extension method routes like any other, and is named in Allow.
  c.send(httpRequest("PURGE", "/cache"));
  CHECK(c.response().body == "PURGE /cache []");
  c.send(httpRequest("GET", "/cache"));
  WireResponse na2 = c.response();
  CHECK(na2.status == 405);
  CHECK(na2.header("allow") == "PURGE");
  CHECK(c.ch.isOpen());  // 404 and 405 keep the connection

  const HttpServerStats s = server.stats();
  CHECK(s.requests == 6);
  CHECK(s.notFound == 5);
  CHECK(s.badRequests == 0);
  CHECK(s.handlerErrors == 0);
}

TEST_CASE("HttpServer: the fallback answers paths no route matches") {
  HttpServer server;
  server.route(HttpMethod::GET, "/known", describe).fallback([](FullHttpRequest& req) {
    FullHttpResponse res = HttpServer::text(HttpResponseStatus::NOT_FOUND,
                                            "no " + std::string(req.uri()), "text/x-custom");
    return res;
  });
  Conn c(server);
  c.send(httpRequest("DELETE", "/unknown?z"));
  WireResponse r = c.response();
  CHECK(r.status == 404);
  CHECK(r.body == "no /unknown?z");
  CHECK(r.header("content-type") == "text/x-custom");
  // A known path with another method is still 405 (the fallback is for unknown paths).
  c.send(httpRequest("POST", "/known"));
  CHECK(c.response().status == 405);
  CHECK(server.stats().notFound == 2);
}

TEST_CASE("HttpServer: a fallback that throws gets a 500 like any handler") {
  HttpServer server;
  server.fallback([](FullHttpRequest&) -> FullHttpResponse { throw std::runtime_error("x"); });
  Conn c(server);
  c.send(httpRequest("GET", "/anything"));
  WireResponse r = c.response();
  CHECK(r.status == 500);
  CHECK(c.ch.isOpen());
  CHECK(server.stats().handlerErrors == 1);
}

TEST_CASE("HttpServer: HEAD is answered by the GET route, without the body") {
  HttpServer server;
  server.route(HttpMethod::GET, "/doc", [](FullHttpRequest&) { return textOk("0123456789"); })
      .route(HttpMethod::GET, "/both", [](FullHttpRequest&) { return textOk("from GET"); })
      .route(HttpMethod::HEAD, "/both",
             [](FullHttpRequest&) {
               FullHttpResponse r = textOk("");
               r.headers().add("x-head", "own");
               return r;
             })
      .route(HttpMethod::POST, "/post", describe)
      .route(HttpMethod::GET, "/co", [](FullHttpRequest) -> asio::awaitable<FullHttpResponse> {
        co_return textOk("coroutine body");
      });
  Conn c(server);
  // HEAD then GET in one read: the HEAD response has no body bytes, so the GET's follows at once.
  c.send(httpRequest("HEAD", "/doc") + httpRequest("GET", "/doc"));
  auto r = c.responses({true, false});
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == 200);
  CHECK(r[0].header("content-length") == "10");
  CHECK(r[0].body.empty());
  CHECK(r[1].body == "0123456789");
  // A HEAD route of its own wins over the GET route.
  c.send(httpRequest("HEAD", "/both"));
  CHECK(c.response(true).header("x-head") == "own");
  // HEAD on a coroutine GET route.
  c.send(httpRequest("HEAD", "/co"));
  WireResponse co = c.response(true);
  CHECK(co.header("content-length") == "14");
  // No GET route: 405 (the path is known), and its body is left out too.
  c.send(httpRequest("HEAD", "/post") + httpRequest("GET", "/doc"));
  r = c.responses({true, false});
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == 405);
  CHECK(r[0].header("allow") == "POST");
  CHECK(r[1].body == "0123456789");
}

TEST_CASE("HttpServer: routes are fixed once serving starts") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  CHECK_THROWS_AS(server.route(HttpMethod::GET, "/late", describe), IllegalStateError);
  CHECK_THROWS_AS(server.fallback(describe), IllegalStateError);
}

// ---------------------------------------------------------------------------------------------
// Keep-alive

TEST_CASE("HttpServer: HTTP/1.1 keeps the connection open by default") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  for (int i = 0; i < 3; ++i) {
    c.send(httpRequest("GET", "/"));
    WireResponse r = c.response();
    CHECK(r.version == "HTTP/1.1");
    CHECK_FALSE(r.header("connection"));
    CHECK(c.ch.isOpen());
  }
}

TEST_CASE("HttpServer: Connection: close is answered with connection: close, then closed") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  // A request pipelined after the one that ends the connection is not answered.
  c.send(httpRequest("GET", "/", "Connection: close\r\n") + httpRequest("GET", "/?second"));
  auto r = c.responses();
  REQUIRE(r.size() == 1);
  CHECK(r[0].body == "GET / []");
  CHECK(r[0].header("connection") == "close");
  CHECK_FALSE(c.ch.isOpen());
  CHECK(server.stats().requests == 1);
}

TEST_CASE("HttpServer: garbage after a Connection: close request gets no second answer") {
  // The connection ends after the first response: what follows is never read, so a malformed
  // request there must not add a 400 after a response that said "connection: close".
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.send(httpRequest("GET", "/", "Connection: close\r\n") + "GARBAGE\r\n\r\n");
  auto r = c.responses();
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == 200);
  CHECK(r[0].closes());
  CHECK_FALSE(c.ch.isOpen());
}

TEST_CASE("HttpServer: Connection tokens are matched in lists and in any case") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.send(httpRequest("GET", "/", "Connection: Upgrade, CLOSE\r\n"));
  CHECK(c.response().closes());
  CHECK_FALSE(c.ch.isOpen());
}

TEST_CASE("HttpServer: HTTP/1.0 closes by default") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.send("GET / HTTP/1.0\r\n\r\n");  // no Host needed in 1.0
  WireResponse r = c.response();
  CHECK(r.version == "HTTP/1.0");  // answered in the request's version
  CHECK(r.status == 200);
  CHECK(r.header("connection") == "close");
  CHECK(r.header("content-length") == std::to_string(r.body.size()));
  CHECK_FALSE(c.ch.isOpen());
}

TEST_CASE("HttpServer: HTTP/1.0 with Connection: keep-alive stays open and says so") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  for (int i = 0; i < 2; ++i) {
    c.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    WireResponse r = c.response();
    CHECK(r.version == "HTTP/1.0");
    CHECK(r.header("connection") == "keep-alive");
    CHECK(c.ch.isOpen());
  }
  // And a 1.0 request without it ends the connection.
  c.send("GET / HTTP/1.0\r\n\r\n");
  CHECK(c.response().closes());
  CHECK_FALSE(c.ch.isOpen());
}

TEST_CASE("HttpServer: a closing response says connection: close once, whatever the handler set") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", [](FullHttpRequest&) {
    FullHttpResponse r = textOk("x");
    r.headers().set(HttpHeaderNames::kConnection, "keep-alive");
    return r;
  });
  Conn c(server);
  c.send(httpRequest("GET", "/", "Connection: close\r\n"));
  WireResponse r = c.response();
  CHECK(r.header("connection") == "close");
  CHECK(r.count("connection") == 1);
  CHECK_FALSE(c.ch.isOpen());
}

// ---------------------------------------------------------------------------------------------
// Pipelining

TEST_CASE(
    "HttpServer: pipelined requests in one read get their responses in one write, one flush") {
  HttpServer server;
  server.route(HttpMethod::GET, "/*", describe).route(HttpMethod::POST, "/echo", describe);
  Conn c(server);
  const int writesBefore = c.counter->writes;
  const int flushesBefore = c.counter->flushes;
  c.send(httpRequest("GET", "/one") + httpRequest("POST", "/echo", "", "two") +
         httpRequest("GET", "/three"));
  CHECK(c.counter->writes - writesBefore == 1);
  CHECK(c.counter->flushes - flushesBefore == 1);
  CHECK(c.ch.outboundCount() == 1);
  auto r = c.responses();
  REQUIRE(r.size() == 3);
  CHECK(r[0].body == "GET /one []");
  CHECK(r[1].body == "POST /echo [two]");
  CHECK(r[2].body == "GET /three []");
}

TEST_CASE("HttpServer: requests split across reads at every byte are answered the same") {
  HttpServer server;
  server.route(HttpMethod::POST, "/echo", describe);
  const std::string wire = httpRequest("POST", "/echo", "", "hello") +
                           httpRequest("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                           "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n";
  Conn c(server);
  for (char b : wire) c.send(std::string_view(&b, 1));
  auto r = c.responses();
  REQUIRE(r.size() == 2);
  CHECK(r[0].body == "POST /echo [hello]");
  CHECK(r[1].body == "POST /echo [abcde]");
}

TEST_CASE("HttpServer: a large batch is handed over before the read ends, still flushed once") {
  // The batch is bounded (16 KiB): past it, responses are written without a flush; the flush
  // comes once, at the end of the read.
  HttpServer server;
  const std::string big(6000, 'b');
  server.route(HttpMethod::GET, "/big", [&](FullHttpRequest&) { return textOk(big); });
  Conn c(server);
  std::string many;
  for (int i = 0; i < 10; ++i) many += httpRequest("GET", "/big");
  const int flushesBefore = c.counter->flushes;
  c.send(many);
  CHECK(c.counter->flushes - flushesBefore == 1);
  CHECK(c.counter->writes > 1);
  auto r = c.responses();
  REQUIRE(r.size() == 10);
  for (const auto& x : r) CHECK(x.body == big);
}

TEST_CASE("HttpServer: coroutine responses completing out of order go out in request order") {
  HttpServer server;
  EmbeddedChannel* chp = nullptr;  // set before the first request
  server
      .route(HttpMethod::GET, "/sleep",
             [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
               co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
               co_return textOk("slept " + std::string(req.uri()));
             })
      .route(HttpMethod::GET, "/sync", describe);
  Conn c(server);
  chp = &c.ch;
  c.send(httpRequest("GET", "/sleep?ms=30") + httpRequest("GET", "/sleep?ms=10") +
         httpRequest("GET", "/sync") + httpRequest("GET", "/sleep?ms=0"));
  // The first is still sleeping: nothing may go out, even though /sync and ms=0 are ready.
  CHECK(c.written().empty());
  c.ch.advanceTimeBy(10ms);  // the second completes: held behind the first
  CHECK(c.written().empty());
  const int writesBefore = c.counter->writes;
  c.ch.advanceTimeBy(20ms);  // the first completes: all four go out, in order, in one write
  CHECK(c.counter->writes - writesBefore == 1);
  auto r = c.responses();
  REQUIRE(r.size() == 4);
  CHECK(r[0].body == "slept /sleep?ms=30");
  CHECK(r[1].body == "slept /sleep?ms=10");
  CHECK(r[2].body == "GET /sync []");
  CHECK(r[3].body == "slept /sleep?ms=0");
  // Then the connection serves as before.
  c.send(httpRequest("GET", "/sync"));
  CHECK(c.response().body == "GET /sync []");
  CHECK(server.stats().requests == 5);
}

TEST_CASE("HttpServer: Connection: close on a pipelined coroutine request closes after it") {
  HttpServer server;
  EmbeddedChannel* chp = nullptr;
  server.route(HttpMethod::GET, "/sleep",
               [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
                 co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
                 co_return textOk(std::string(req.uri()));
               });
  Conn c(server);
  chp = &c.ch;
  c.send(httpRequest("GET", "/sleep?ms=20") +
         httpRequest("GET", "/sleep?ms=5", "Connection: close\r\n") +
         httpRequest("GET", "/sleep?ms=1"));  // after the close: never answered
  c.ch.advanceTimeBy(10ms);
  CHECK(c.ch.isOpen());  // the closing response waits for the earlier one
  CHECK(c.written().empty());
  c.ch.advanceTimeBy(20ms);
  auto r = c.responses();
  REQUIRE(r.size() == 2);
  CHECK(r[0].body == "/sleep?ms=20");
  CHECK_FALSE(r[0].header("connection"));
  CHECK(r[1].body == "/sleep?ms=5");
  CHECK(r[1].closes());
  CHECK_FALSE(c.ch.isOpen());
}

TEST_CASE("HttpServer: a coroutine that completes after its connection closed writes nothing") {
  HttpServer server;
  EmbeddedChannel* chp = nullptr;
  int completed = 0;
  server.route(HttpMethod::GET, "/sleep",
               [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
                 co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
                 ++completed;
                 co_return textOk("late");
               });
  {
    Conn c(server);
    chp = &c.ch;
    c.send(httpRequest("GET", "/sleep?ms=10") + httpRequest("GET", "/sleep?ms=20"));
    c.ch.close();
    c.ch.advanceTimeBy(10ms);  // the first completes on a closed channel
    CHECK(completed == 1);
    CHECK(c.written().empty());
  }  // the second is still sleeping: its frame goes with the channel's tasks (no leak)
  CHECK(completed == 1);
}

TEST_CASE("HttpServer: an HTTP/1.0 request with Transfer-Encoding closes after its response") {
  // Its framing is faulty in 1.0 (RFC 9112 §6.1): the decoder marks it "connection: close".
  HttpServer server;
  server.route(HttpMethod::POST, "/echo", describe);
  Conn c(server);
  c.send(
      "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\r\nhi\r\n0\r\n\r\n");
  WireResponse r = c.response();
  CHECK(r.body == "POST /echo [hi]");
  CHECK(r.closes());
  CHECK_FALSE(c.ch.isOpen());
}

// ---------------------------------------------------------------------------------------------
// Handler errors

TEST_CASE("HttpServer: a handler that throws gets a 500 and the connection goes on") {
  HttpServer server;
  server
      .route(HttpMethod::GET, "/throw",
             [](FullHttpRequest&) -> FullHttpResponse { throw std::runtime_error("boom"); })
      .route(HttpMethod::GET, "/throw-int", [](FullHttpRequest&) -> FullHttpResponse { throw 42; })
      .route(HttpMethod::GET, "/co-throw",
             [](FullHttpRequest) -> asio::awaitable<FullHttpResponse> {
               throw std::runtime_error("coroutine boom");
               co_return textOk("never");
             })
      .route(HttpMethod::GET, "/ok", describe);
  Conn c(server);
  c.send(httpRequest("GET", "/throw") + httpRequest("GET", "/co-throw") +
         httpRequest("GET", "/throw-int") + httpRequest("GET", "/ok"));
  auto r = c.responses();
  REQUIRE(r.size() == 4);
  for (int i = 0; i < 3; ++i) {
    CHECK(r[i].status == 500);
    CHECK(r[i].body == "Internal Server Error\n");  // the exception's text is not leaked
    CHECK_FALSE(r[i].header("connection"));
  }
  CHECK(r[3].body == "GET /ok []");
  CHECK(c.ch.isOpen());
  const HttpServerStats s = server.stats();
  CHECK(s.handlerErrors == 3);
  CHECK(s.requests == 4);
}

// ---------------------------------------------------------------------------------------------
// Refused requests: the error's status, connection: close, then the close

namespace {

struct Refusal {
  const char* what;
  std::string wire;
  int status;
};

}  // namespace

TEST_CASE("HttpServer: each decoder error is answered with its status and the connection closes") {
  HttpServer::Options o;
  o.decoder.maxInitialLineLength = 256;
  o.decoder.maxHeaderSize = 512;
  o.maxContentLength = 64;
  const std::string longField = "X-Long: " + std::string(600, 'v') + "\r\n";
  const std::vector<Refusal> cases = {
      {"Content-Length with Transfer-Encoding (smuggling)",
       httpRequest("POST", "/echo", "Transfer-Encoding: chunked\r\n", "0\r\n\r\n"), 400},
      {"two different Content-Lengths",
       "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
      {"obsolete line folding", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  folded\r\n\r\n", 400},
      {"HTTP/1.1 without Host", "GET / HTTP/1.1\r\n\r\n", 400},
      {"bare LF", "GET / HTTP/1.1\nHost: a\n\n", 400},
      {"invalid chunk size",
       httpRequest("POST", "/echo", "Transfer-Encoding: chunked\r\n") + "zz\r\nab\r\n0\r\n\r\n",
       400},
      {"request line too long", "GET /" + std::string(300, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n",
       414},
      {"request line too long, still arriving", "GET /" + std::string(300, 'a'), 414},
      {"header section too large", httpRequest("GET", "/", longField), 431},
      {"unknown transfer coding",
       httpRequest("POST", "/echo", "Transfer-Encoding: gzip2, chunked\r\n"), 501},
      {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
      {"declared content over maxContentLength (aggregator)",
       httpRequest("POST", "/echo", "", std::string(65, 'c')), 413},
      {"chunked content over maxContentLength (aggregator)",
       httpRequest("POST", "/echo", "Transfer-Encoding: chunked\r\n") + "40\r\n" +
           std::string(64, 'c') + "\r\n1\r\nc\r\n0\r\n\r\n",
       413},
      {"Expect: 100-continue over maxContentLength",
       "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 65\r\n\r\n", 413},
      {"unknown expectation",
       "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: foo\r\nContent-Length: 2\r\n\r\nab", 417},
  };
  for (const Refusal& x : cases) {
    INFO("case: " << std::string(x.what));
    HttpServer server(o);
    server.route(HttpMethod::POST, "/echo", describe).route(HttpMethod::GET, "/", describe);
    Conn c(server);
    // A valid request first: it is answered, the bad one after it refused in the same batch.
    c.send(httpRequest("GET", "/") + x.wire);
    auto r = c.responses();
    REQUIRE(r.size() == 2);
    CHECK(r[0].status == 200);
    CHECK_FALSE(r[0].header("connection"));
    CHECK(r[1].status == x.status);
    CHECK(r[1].closes());
    CHECK(r[1].header("date"));
    CHECK_FALSE(r[1].body.empty());  // says why
    CHECK_FALSE(c.ch.isOpen());
    // Whatever follows is never read as a request.
    const HttpServerStats s = server.stats();
    CHECK(s.badRequests == 1);
    CHECK(s.requests == 1);
  }
}

TEST_CASE("HttpServer: a request line without CRLF is refused once it passes the limit") {
  // The decoder must not wait for a CRLF that never comes (a 64 MB request line): at the limit
  // it answers 414 and closes, whatever else is still arriving.
  HttpServer::Options o;
  o.decoder.maxInitialLineLength = 1024;
  HttpServer server(o);
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.send("GET /");
  const std::string chunk(200, 'a');
  int sent = 0;
  while (c.ch.isOpen() && sent < 100) {
    c.send(chunk);
    ++sent;
  }
  CHECK_FALSE(c.ch.isOpen());
  CHECK(sent * 200 <= 1024 + 200);
  WireResponse r = c.response();
  CHECK(r.status == 414);
  CHECK(r.closes());
}

TEST_CASE("HttpServer: requests after a refused one in the same read are dropped") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.send("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n" +
         httpRequest("GET", "/?smuggled"));
  auto r = c.responses();
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == 400);
  CHECK_FALSE(c.ch.isOpen());
  CHECK(server.stats().requests == 0);
}

TEST_CASE("HttpServer: a refused request behind a pending coroutine waits for its response") {
  HttpServer server;
  EmbeddedChannel* chp = nullptr;
  server.route(HttpMethod::GET, "/sleep",
               [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
                 co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
                 co_return textOk("slept");
               });
  Conn c(server);
  chp = &c.ch;
  c.send(httpRequest("GET", "/sleep?ms=10") + "GET / HTTP/3.0\r\nHost: a\r\n\r\n");
  CHECK(c.written().empty());
  c.ch.advanceTimeBy(10ms);
  auto r = c.responses();
  REQUIRE(r.size() == 2);
  CHECK(r[0].body == "slept");
  CHECK(r[1].status == 505);
  CHECK(r[1].closes());
  CHECK_FALSE(c.ch.isOpen());
}

// ---------------------------------------------------------------------------------------------
// Expect: 100-continue

TEST_CASE("HttpServer: Expect: 100-continue gets 100 Continue before the body is sent") {
  HttpServer server;
  server.route(HttpMethod::POST, "/echo", describe);
  Conn c(server);
  c.send("POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  // Written and flushed on its own, before any body byte arrived.
  CHECK(c.written() == "HTTP/1.1 100 Continue\r\n\r\n");
  c.send("hel");
  CHECK(c.written().empty());
  c.send("lo");
  WireResponse r = c.response();
  CHECK(r.status == 200);
  CHECK(r.body == "POST /echo [hello]");
  CHECK(c.ch.isOpen());
  // A chunked body too.
  c.send(
      "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: "
      "chunked\r\n\r\n");
  CHECK(c.written() == "HTTP/1.1 100 Continue\r\n\r\n");
  c.send("2\r\nok\r\n0\r\n\r\n");
  CHECK(c.response().body == "POST /echo [ok]");
}

TEST_CASE("HttpServer: 100 Continue never overtakes the responses to earlier requests") {
  // An interim response belongs to its request: responses go out in request order (RFC 9112
  // §9.3.2), so a client reading them in order would take a "100 Continue" that overtook an
  // earlier final response as that earlier request's interim answer.
  HttpServer server;
  EmbeddedChannel* chp = nullptr;
  server
      .route(HttpMethod::GET, "/sleep",
             [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
               co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
               co_return textOk("slept");
             })
      .route(HttpMethod::GET, "/sync", [](FullHttpRequest&) { return textOk("sync"); })
      .route(HttpMethod::POST, "/echo", describe);
  const std::string expect =
      "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  for (const char* first : {"/sync", "/sleep?ms=10"}) {
    CAPTURE(first);
    Conn c(server);
    chp = &c.ch;
    c.send(httpRequest("GET", first) + expect);
    std::string wire = c.written();
    c.ch.advanceTimeBy(10ms);
    wire += c.written();
    c.send("ab");
    wire += c.written();
    INFO("wire: " << wire);
    const auto firstAt = wire.find("\r\n\r\nslept");
    const auto syncAt = wire.find("\r\n\r\nsync");
    const auto contAt = wire.find("HTTP/1.1 100 Continue\r\n\r\n");
    REQUIRE(contAt != std::string::npos);
    CHECK(std::min(firstAt, syncAt) < contAt);
    CHECK(wire.find("POST /echo [ab]") > contAt);
  }
}

// ---------------------------------------------------------------------------------------------
// Idle timeout

TEST_CASE("HttpServer: a connection idle for idleTimeout is closed") {
  HttpServer::Options o;
  o.idleTimeout = 1s;
  HttpServer server(o);
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.ch.advanceTimeBy(900ms);
  c.send(httpRequest("GET", "/"));  // activity restarts the clock
  CHECK(c.response().status == 200);
  c.ch.advanceTimeBy(900ms);
  CHECK(c.ch.isOpen());
  // A client that stalls in the middle of a request head (slow loris) is closed, unanswered.
  c.send("GET / HTTP/1.1\r\nHo");
  c.ch.advanceTimeBy(999ms);
  CHECK(c.ch.isOpen());
  c.ch.advanceTimeBy(2ms);
  CHECK_FALSE(c.ch.isOpen());
  CHECK(c.written().empty());
  CHECK(server.stats().idleClosed == 1);
}

TEST_CASE("HttpServer: the idle timeout spares a connection waiting for its coroutine") {
  HttpServer::Options o;
  o.idleTimeout = 1s;
  HttpServer server(o);
  EmbeddedChannel* chp = nullptr;
  server.route(HttpMethod::GET, "/sleep",
               [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
                 co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
                 co_return textOk("slept");
               });
  Conn c(server);
  chp = &c.ch;
  c.send(httpRequest("GET", "/sleep?ms=3500"));
  c.ch.advanceTimeBy(3s);  // three idle periods: the server is the slow one, not the client
  CHECK(c.ch.isOpen());
  c.ch.advanceTimeBy(500ms);
  CHECK(c.response().body == "slept");
  CHECK(c.ch.isOpen());
  c.ch.advanceTimeBy(1100ms);  // now idle on both sides
  CHECK_FALSE(c.ch.isOpen());
  CHECK(server.stats().idleClosed == 1);
}

TEST_CASE("HttpServer: idleTimeout and requestHeadTimeout 0 never close") {
  HttpServer::Options o;
  o.idleTimeout = 0ms;
  o.requestHeadTimeout = 0ms;
  HttpServer server(o);
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  CHECK(c.ch.pipeline().get("http-idle") == nullptr);
  c.ch.advanceTimeBy(std::chrono::hours(24));
  CHECK(c.ch.isOpen());
}

// ---------------------------------------------------------------------------------------------
// Request-head timeout (slow loris)

TEST_CASE("HttpServer: a head trickled in faster than idleTimeout is ended by requestHeadTimeout") {
  // One byte every 100 ms keeps the connection from ever being idle for 1 s; the head timeout
  // (2 s, checked once per period) closes it within two periods, unanswered.
  HttpServer::Options o;
  o.idleTimeout = 1s;
  o.requestHeadTimeout = 2s;
  HttpServer server(o);
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  const std::string head = "GET / HTTP/1.1\r\nHost: a\r\nX-Slow: " + std::string(100, 'z');
  std::size_t sent = 0;
  while (c.ch.isOpen() && sent < head.size()) {
    c.send(std::string_view(head).substr(sent, 1));
    ++sent;
    c.ch.advanceTimeBy(100ms);
  }
  CHECK_FALSE(c.ch.isOpen());
  CHECK(sent >= 20);  // not before one period
  CHECK(sent <= 41);  // nor after two
  CHECK(c.written().empty());
  const HttpServerStats st = server.stats();
  CHECK(st.headTimeouts == 1);
  CHECK(st.idleClosed == 0);
}

TEST_CASE("HttpServer: requestHeadTimeout spares connections that keep sending requests") {
  HttpServer::Options o;
  o.idleTimeout = 0ms;
  o.requestHeadTimeout = 1s;
  HttpServer server(o);
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  // A request every 900 ms for 9 s: each period sees a new head.
  for (int i = 0; i < 10; ++i) {
    c.send(httpRequest("GET", "/"));
    CHECK(c.response().status == 200);
    c.ch.advanceTimeBy(900ms);
    CHECK(c.ch.isOpen());
  }
  // Then nothing: an idle keep-alive connection ends within two periods.
  c.ch.advanceTimeBy(2s);
  CHECK_FALSE(c.ch.isOpen());
  CHECK(server.stats().headTimeouts == 1);
}

TEST_CASE("HttpServer: requestHeadTimeout spares a body being received and a response owed") {
  HttpServer::Options o;
  o.idleTimeout = 0ms;
  o.requestHeadTimeout = 1s;
  HttpServer server(o);
  EmbeddedChannel* chp = nullptr;
  server.route(HttpMethod::POST, "/echo", describe)
      .route(HttpMethod::GET, "/sleep",
             [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
               co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
               co_return textOk("slept");
             });
  Conn c(server);
  chp = &c.ch;
  // A slow upload: the head is in, the body takes 5 s (the head timeout is for heads only).
  c.send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n");
  for (char b : std::string("hello")) {
    c.ch.advanceTimeBy(1s);
    CHECK(c.ch.isOpen());
    c.send(std::string_view(&b, 1));
  }
  CHECK(c.response().body == "POST /echo [hello]");
  // A coroutine that takes 5 s: the server owes a response, the client is not late.
  c.send(httpRequest("GET", "/sleep?ms=5000"));
  c.ch.advanceTimeBy(4900ms);
  CHECK(c.ch.isOpen());
  c.ch.advanceTimeBy(100ms);
  CHECK(c.response().body == "slept");
  CHECK(server.stats().headTimeouts == 0);
}

// ---------------------------------------------------------------------------------------------
// Fields the server adds, backpressure, counters

TEST_CASE("HttpServer: every response has date, content-length, and server when configured") {
  HttpServer::Options o;
  o.serverName = "netbuf-test";
  HttpServer server(o);
  server.route(HttpMethod::GET, "/", describe)
      .route(HttpMethod::GET, "/empty",
             [](FullHttpRequest&) { return FullHttpResponse(HttpResponseStatus::NO_CONTENT); })
      .route(HttpMethod::GET, "/framed", [](FullHttpRequest&) {
        FullHttpResponse r = textOk("abc");
        r.headers().set(HttpHeaderNames::kContentLength, std::uint64_t{3});
        return r;
      });
  Conn c(server);
  c.send(httpRequest("GET", "/") + httpRequest("GET", "/nothing") + httpRequest("GET", "/empty") +
         httpRequest("GET", "/framed"));
  auto r = c.responses();
  REQUIRE(r.size() == 4);
  for (const WireResponse& x : r) {
    CAPTURE(x.status);
    const auto date = x.header("date");
    REQUIRE(date);
    CHECK(HttpDate::parse(*date).has_value());
    const auto now = std::time(nullptr);
    CHECK(std::abs(static_cast<long>(*HttpDate::parse(*date) - now)) <= 2);
    CHECK(x.count("date") == 1);
    CHECK(x.header("server") == "netbuf-test");
  }
  CHECK(r[0].header("content-length") == std::to_string(r[0].body.size()));
  CHECK(r[1].status == 404);
  CHECK(r[1].header("content-length") == std::to_string(r[1].body.size()));
  CHECK(r[2].status == 204);
  CHECK_FALSE(r[2].header("content-length"));  // a 204 has no content: no Content-Length
  CHECK(r[3].count("content-length") == 1);    // the handler's own is not doubled
  CHECK(r[3].body == "abc");
}

TEST_CASE("HttpServer: no server field by default") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.send(httpRequest("GET", "/"));
  CHECK_FALSE(c.response().header("server"));
}

TEST_CASE("HttpServer: reading stops while maxPendingResponses coroutines are in flight") {
  HttpServer::Options o;
  o.maxPendingResponses = 2;
  HttpServer server(o);
  EmbeddedChannel* chp = nullptr;
  server.route(HttpMethod::GET, "/sleep",
               [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
                 co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
                 co_return textOk("slept");
               });
  Conn c(server);
  chp = &c.ch;
  CHECK(c.ch.isAutoRead());
  c.send(httpRequest("GET", "/sleep?ms=10"));
  CHECK(c.ch.isAutoRead());
  c.send(httpRequest("GET", "/sleep?ms=10"));
  CHECK_FALSE(c.ch.isAutoRead());
  c.ch.advanceTimeBy(10ms);
  CHECK(c.ch.isAutoRead());
  CHECK(c.responses().size() == 2);
}

TEST_CASE("HttpServer: responses held behind a slow coroutine stop reading too") {
  // Synchronous answers queued behind a coroutine still running are not written yet: a peer
  // sending requests behind it must not make them pile up without bound.
  HttpServer::Options o;
  o.maxPendingResponses = 4;
  HttpServer server(o);
  EmbeddedChannel* chp = nullptr;
  server.route(HttpMethod::GET, "/sleep",
               [&](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> {
                 co_await sleepOn(*chp, std::chrono::milliseconds(millisOf(req.uri())));
                 co_return textOk("slept");
               });
  server.route(HttpMethod::GET, "/fast", [](FullHttpRequest&) { return textOk("fast"); });
  Conn c(server);
  chp = &c.ch;
  c.send(httpRequest("GET", "/sleep?ms=10"));
  for (int i = 0; i < 3; ++i) {
    CHECK(c.ch.isAutoRead());
    c.send(httpRequest("GET", "/fast"));
  }
  CHECK_FALSE(c.ch.isAutoRead());  // four responses owed: reading stops
  c.ch.advanceTimeBy(10ms);
  CHECK(c.ch.isAutoRead());
  const auto r = c.responses();
  REQUIRE(r.size() == 4);
  CHECK(r[0].body == "slept");
  CHECK(r[3].body == "fast");
}

TEST_CASE("HttpServer: reading stops while the channel is not writable") {
  HttpServer server;
  server.route(HttpMethod::GET, "/", describe);
  Conn c(server);
  c.ch.setWritable(false);
  c.ch.runPendingTasks();
  CHECK_FALSE(c.ch.isAutoRead());
  c.ch.setWritable(true);
  c.ch.runPendingTasks();
  CHECK(c.ch.isAutoRead());
}

TEST_CASE("HttpServer: stats count connections, requests and every kind of refusal") {
  HttpServer::Options o;
  o.idleTimeout = 1s;
  HttpServer server(o);
  server.route(HttpMethod::GET, "/", describe)
      .route(HttpMethod::GET, "/throw",
             [](FullHttpRequest&) -> FullHttpResponse { throw std::runtime_error("x"); });
  {
    Conn c(server);
    c.send(httpRequest("GET", "/") + httpRequest("GET", "/throw") + httpRequest("GET", "/nope") +
           httpRequest("POST", "/"));
    CHECK(c.responses().size() == 4);
    c.ch.advanceTimeBy(2s);
    CHECK_FALSE(c.ch.isOpen());
  }
  {
    Conn c(server);
    c.send("GET / HTTP/9.9\r\n\r\n");
    CHECK(c.response().status == 505);
  }
  const HttpServerStats s = server.stats();
  CHECK(s.connections == 2);
  CHECK(s.requests == 2);
  CHECK(s.handlerErrors == 1);
  CHECK(s.notFound == 2);
  CHECK(s.badRequests == 1);
  CHECK(s.idleClosed == 1);
}

// ---------------------------------------------------------------------------------------------
// Streaming routes

namespace {

/// Counts the bytes of an upload as they arrive and answers with the count, the parts seen and
/// the trailers; throws when told to by the head.
class CountingStream : public HttpStreamHandler {
 public:
  explicit CountingStream(std::vector<std::string>* log) : log_(log) {}
  void onHead(const HttpRequest& head) override {
    failOn_ = head.headers().get("x-fail-on", "");
    if (failOn_ == "head") throw std::runtime_error("head refused");
    log_->push_back("head " + std::string(head.uri()));
  }
  void onContent(ByteBuf content) override {
    if (failOn_ == "content") throw std::runtime_error("content refused");
    bytes_ += content.readableBytes();
    ++parts_;
  }
  FullHttpResponse onEnd(const HttpHeaders* trailers) override {
    log_->push_back("end");
    std::string t = trailers != nullptr ? std::string(trailers->get("x-sum", "")) : "";
    return HttpServer::text(HttpResponseStatus::OK,
                            std::to_string(bytes_) + " bytes" + (t.empty() ? "" : " sum " + t));
  }

 private:
  std::vector<std::string>* log_;
  std::string failOn_;
  std::uint64_t bytes_ = 0;
  int parts_ = 0;
};

}  // namespace

TEST_CASE("HttpServer: a streaming route gets the content part by part, past maxContentLength") {
  HttpServer::Options o;
  o.maxContentLength = 1024;  // the aggregated routes' limit: a streaming route is not aggregated
  HttpServer server(o);
  std::vector<std::string> log;
  server.routeStreaming(HttpMethod::PUT, "/upload",
                        [&log] { return std::make_unique<CountingStream>(&log); });
  server.route(HttpMethod::POST, "/small", describe);
  Conn c(server);
  c.send("PUT /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n");
  CHECK(log == std::vector<std::string>{"head /upload"});  // before any content
  for (int i = 0; i < 5; ++i) c.send(std::string(1000, 'x'));
  WireResponse r = c.response();
  CHECK(r.status == 200);
  CHECK(r.body == "5000 bytes");
  CHECK(log.back() == "end");
  // Chunked, with a trailer and an Expect: 100-continue answered at the head.
  c.send(
      "PUT /upload HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: "
      "chunked\r\n\r\n");
  CHECK(c.written() == "HTTP/1.1 100 Continue\r\n\r\n");
  c.send("800\r\n" + std::string(2048, 'y') + "\r\n3\r\nabc\r\n0\r\nx-sum: 42\r\n\r\n");
  r = c.response();
  CHECK(r.body == "2051 bytes sum 42");
  // An aggregated route on the same server keeps its limit.
  c.send("POST /small HTTP/1.1\r\nHost: a\r\nContent-Length: 2000\r\n\r\n");
  CHECK(c.response().status == 413);
}

TEST_CASE("HttpServer: a streaming handler that throws is answered 500 after its content") {
  HttpServer server;
  std::vector<std::string> log;
  server.routeStreaming(HttpMethod::POST, "/up",
                        [&log] { return std::make_unique<CountingStream>(&log); });
  Conn c(server);
  for (const char* where : {"head", "content"}) {
    CAPTURE(where);
    c.send(std::string("POST /up HTTP/1.1\r\nHost: a\r\nx-fail-on: ") + where +
           "\r\nContent-Length: 6\r\n\r\nabc");
    CHECK(c.written().empty());  // answered once the request has been read whole
    c.send("def");
    WireResponse r = c.response();
    CHECK(r.status == 500);
    CHECK(c.ch.isOpen());  // the connection goes on: the request was read to its end
  }
  CHECK(server.stats().handlerErrors == 2);
  // Other expectations than 100-continue: 417 after the content, then the connection closes.
  c.send("POST /up HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\nok");
  WireResponse r = c.response();
  CHECK(r.status == 417);
  CHECK_FALSE(c.ch.isOpen());
}

TEST_CASE("HttpServer: a streaming route takes its method only; others get 405, HEAD too") {
  HttpServer server;
  std::vector<std::string> log;
  server.routeStreaming(HttpMethod::GET, "/s",
                        [&log] { return std::make_unique<CountingStream>(&log); });
  Conn c(server);
  c.send("GET /s HTTP/1.1\r\nHost: a\r\n\r\n");
  CHECK(c.response().body == "0 bytes");
  c.send("HEAD /s HTTP/1.1\r\nHost: a\r\n\r\n");
  WireResponse r = c.response(true);
  CHECK(r.status == 405);
  c.send("POST /s HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
  CHECK(c.response().status == 405);
}
