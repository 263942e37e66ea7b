// HttpServer against real HTTP clients, in-process on 127.0.0.1:0: curl (GET, a 100 KiB upload
// with Expect: 100-continue, a chunked upload, HTTP/1.0, HEAD, several URLs over one reused
// connection) and Python's http.client (keep-alive over one HTTPConnection). A missing peer FAILS
// the test (REQUIRE), it never skips. Every peer runs under `timeout`. Run under ThreadSanitizer
// too ("threaded").
#include <netbuf/http/http_server.hpp>

#include <doctest/doctest.h>

#include <unistd.h>
#include "support/temp_dir.hpp"

#include "support/python_runner.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <netbuf/codec/http/http_header_names.hpp>
#include <random>
#include <string>
#include <string_view>

using namespace netbuf;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using netbuf::test::Output;
using netbuf::test::shellQuote;

using netbuf::test::readFile;
using netbuf::test::TempDir;
using netbuf::test::writeFile;

namespace {

/// The demo server's routes (tools/http_command.cpp): GET / and POST /echo.
class DemoServer {
 public:
  DemoServer() : group_(2) {
    server_
        .route(HttpMethod::GET, "/",
               [](FullHttpRequest&) {
                 return HttpServer::text(HttpResponseStatus::OK, "Hello, World!", "text/plain");
               })
        .route(HttpMethod::POST, "/echo", [](FullHttpRequest& req) {
          FullHttpResponse res(HttpResponseStatus::OK, std::move(req.content()));
          res.headers().add(
              HttpHeaderNames::kContentType,
              req.headers().get(HttpHeaderNames::kContentType, "application/octet-stream"));
          return res;
        });
    channel_ = server_.bind(group_, "127.0.0.1", 0);
  }
  ~DemoServer() {
    channel_->close();
    channel_->closeChildren();
    channel_.reset();
    group_.shutdownGracefully(0ms, 5s);
  }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(channel_->port()) + std::string(path);
  }
  unsigned short port() const { return channel_->port(); }
  HttpServerStats stats() const { return server_.stats(); }

 private:
  HttpServer server_;
  EventLoopGroup group_;
  std::shared_ptr<ServerChannel> channel_;
};

/// curl's path, REQUIREd (apt-get install curl).
std::string requireCurl() {
  const Output o = netbuf::test::run("command -v curl");
  std::string path = o.text.substr(0, o.text.find('\n'));
  const bool found = o.status == 0 && !path.empty();
  REQUIRE_MESSAGE(found, "curl is needed for this test (apt-get install curl): " << o.text);
  return path;
}

/// Runs curl with args (already quoted), bounded by timeout(1).
Output curl(const std::string& curlPath, const std::string& args) {
  return netbuf::test::run("timeout 20 " + shellQuote(curlPath) + " --no-progress-meter " + args);
}

/// 100 KiB of random bytes (every byte value, so nothing depends on text).
std::string randomBody(std::size_t n) {
  std::mt19937 rng(1234);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

}  // namespace

TEST_CASE("HttpServer: curl GET") {
  const std::string c = requireCurl();
  DemoServer server;
  TempDir tmp("netbuf-http-interop");
  const Output o =
      curl(c, "-sS -D " + shellQuote((tmp.path / "head").string()) + " -o " +
                  shellQuote((tmp.path / "body").string()) + " " + shellQuote(server.url("/")));
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(readFile(tmp.path / "body") == "Hello, World!");
  const std::string head = readFile(tmp.path / "head");
  CHECK(head.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(head.find("content-length: 13\r\n") != std::string::npos);
  CHECK(head.find("date: ") != std::string::npos);

  // A missing path: 404, and curl --fail says so with exit status 22.
  const Output nf = curl(c, "-sS --fail -o /dev/null " + shellQuote(server.url("/missing")));
  CHECK(nf.status == 22);
}

TEST_CASE("HttpServer: curl uploads 100 KiB with Expect: 100-continue") {
  const std::string c = requireCurl();
  DemoServer server;
  TempDir tmp("netbuf-http-interop");
  const std::string body = randomBody(100 * 1024);
  writeFile(tmp.path / "in", body);
  // curl asks on its own only for bodies over 1 MiB (7.88; older ones from 1 KiB): -H makes it
  // ask for this one. With --expect100-timeout 10, a run near 10 s would mean that the server
  // never said 100 Continue and curl sent the body anyway.
  const auto start = std::chrono::steady_clock::now();
  const Output o =
      curl(c, "-v --expect100-timeout 10 -H 'Expect: 100-continue' --data-binary @" +
                  shellQuote((tmp.path / "in").string()) + " -o " +
                  shellQuote((tmp.path / "out").string()) + " " + shellQuote(server.url("/echo")));
  const auto took = std::chrono::steady_clock::now() - start;
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(o.text.find("> Expect: 100-continue") != std::string::npos);
  CHECK(o.text.find("< HTTP/1.1 100 Continue") != std::string::npos);
  CHECK(o.text.find("< HTTP/1.1 200 OK") != std::string::npos);
  CHECK(took < 8s);
  CHECK(readFile(tmp.path / "out") == body);

  // A body over the server's limit (1 MiB), for which curl asks on its own: 413 before the body
  // is sent, and no 100 Continue.
  const std::string big(2 << 20, 'b');
  writeFile(tmp.path / "big", big);
  const Output tooBig = curl(c, "-v --expect100-timeout 10 --data-binary @" +
                                    shellQuote((tmp.path / "big").string()) + " -o /dev/null " +
                                    shellQuote(server.url("/echo")));
  INFO(tooBig.text);
  CHECK(tooBig.text.find("> Expect: 100-continue") != std::string::npos);
  CHECK(tooBig.text.find("< HTTP/1.1 413 Content Too Large") != std::string::npos);
  CHECK(tooBig.text.find("100 Continue") == std::string::npos);
  CHECK(server.stats().badRequests == 1);

  // And without the explicit field: whatever curl decides, the echo is right.
  const Output plain =
      curl(c, "-sS --data-binary @" + shellQuote((tmp.path / "in").string()) + " -o " +
                  shellQuote((tmp.path / "out2").string()) + " " + shellQuote(server.url("/echo")));
  INFO(plain.text);
  REQUIRE(plain.status == 0);
  CHECK(readFile(tmp.path / "out2") == body);
}

TEST_CASE("HttpServer: curl chunked upload") {
  const std::string c = requireCurl();
  DemoServer server;
  TempDir tmp("netbuf-http-interop");
  const std::string body = randomBody(300 * 1024 + 7);
  writeFile(tmp.path / "in", body);
  const Output o =
      curl(c,
           "-v -H 'Transfer-Encoding: chunked' -H 'Content-Type: application/x-t'"
           " --data-binary @" +
               shellQuote((tmp.path / "in").string()) + " -o " +
               shellQuote((tmp.path / "out").string()) + " " + shellQuote(server.url("/echo")));
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(o.text.find("> Transfer-Encoding: chunked") != std::string::npos);
  CHECK(o.text.find("< content-type: application/x-t") != std::string::npos);
  CHECK(readFile(tmp.path / "out") == body);
}

TEST_CASE("HttpServer: curl --http1.0") {
  const std::string c = requireCurl();
  DemoServer server;
  const Output o = curl(c, "-sS -i --http1.0 " + shellQuote(server.url("/")));
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(o.text.rfind("HTTP/1.0 200 OK\r\n", 0) == 0);
  CHECK(o.text.find("connection: close\r\n") != std::string::npos);
  CHECK(o.text.find("\r\n\r\nHello, World!") != std::string::npos);
}

TEST_CASE("HttpServer: curl HEAD (-I)") {
  const std::string c = requireCurl();
  DemoServer server;
  const Output o = curl(c, "-sS -I " + shellQuote(server.url("/")));
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(o.text.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(o.text.find("content-length: 13\r\n") != std::string::npos);
  CHECK(o.text.find("Hello") == std::string::npos);
}

TEST_CASE("HttpServer: curl reuses one connection for several URLs") {
  const std::string c = requireCurl();
  DemoServer server;
  // --next: -d applies to the last URL only (curl's options are otherwise for every URL).
  const Output o = curl(
      c, "-v " + shellQuote(server.url("/")) + " " + shellQuote(server.url("/missing")) + " " +
             shellQuote(server.url("/")) + " --next -v -d abc " + shellQuote(server.url("/echo")));
  INFO(o.text);
  REQUIRE(o.status == 0);
  std::size_t reused = 0;
  for (std::size_t at = o.text.find("Re-using existing connection"); at != std::string::npos;
       at = o.text.find("Re-using existing connection", at + 1)) {
    ++reused;
  }
  CHECK(reused == 3);
  const HttpServerStats s = server.stats();
  CHECK(s.connections == 1);
  CHECK(s.requests == 3);
  CHECK(s.notFound == 1);
  CHECK(o.text.find("\nabc") != std::string::npos);  // the echo
}

TEST_CASE("HttpServer: Python http.client keep-alive") {
  const std::string python = netbuf::test::requirePython("http.client", "apt-get install python3");
  DemoServer server;
  TempDir tmp("netbuf-http-interop");
  const fs::path script = tmp.path / "client.py";
  writeFile(script, R"PY(
import http.client, sys
port = int(sys.argv[1])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
socks = []

def request(method, path, body=None, headers={}):
    conn.request(method, path, body=body, headers=headers)
    socks.append(conn.sock.getsockname())  # the connection this request went out on
    r = conn.getresponse()
    data = r.read()
    return r, data

r, data = request("GET", "/")
assert r.status == 200, r.status
assert data == b"Hello, World!", data
assert r.getheader("content-length") == "13"
assert r.getheader("content-type") == "text/plain"
assert r.getheader("date"), r.getheaders()
assert not r.will_close

payload = bytes(range(256)) * 40
r, data = request("POST", "/echo", payload, {"Content-Type": "application/x-bin"})
assert r.status == 200, r.status
assert data == payload, len(data)
assert r.getheader("content-type") == "application/x-bin"

r, data = request("GET", "/nope?x=1")
assert r.status == 404, r.status
assert data == b"Not Found\n", data

r, data = request("DELETE", "/")
assert r.status == 405, r.status
assert r.getheader("allow") == "GET", r.getheader("allow")

r, data = request("HEAD", "/")
assert r.status == 200 and data == b"", (r.status, data)
assert r.getheader("content-length") == "13"

for i in range(20):
    body = b"x" * (i * 1000)
    r, data = request("POST", "/echo", body)
    assert data == body, i

r, data = request("GET", "/", headers={"Connection": "close"})
assert r.status == 200 and r.will_close
assert len(set(socks)) == 1, set(socks)
assert conn.sock is None  # closed after the response that said so
print("ok", len(socks))
)PY");
  const Output o = netbuf::test::run(
      "timeout 20 " + netbuf::test::pythonCommand(python, script, {std::to_string(server.port())}));
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(o.text.find("ok 26") != std::string::npos);
  const HttpServerStats s = server.stats();
  CHECK(s.connections == 1);
  CHECK(s.requests == 24);
  CHECK(s.notFound == 2);
}
