// HttpClient against real HTTP servers on loopback: nginx (text, 204, a 300 KB static file, HEAD,
// If-Modified-Since -> 304, chunked bodies from SSI and gzip, a request body it discards, an
// absolute redirect, pipelining), Python's `http.server` module (HTTP/1.0, one connection per
// response) and a Python BaseHTTPRequestHandler peer speaking HTTP/1.1 (http_client_peer.py:
// chunked bodies with trailers, 304, close-delimited, keep-alive seen from the server's side).
// A missing peer FAILS the test (REQUIRE), it never skips. Every peer runs in a process group of
// its own under timeout(1) and is killed (the whole group) at the end of its scope. Run under
// ThreadSanitizer too ("threaded").
#include <netbuf/http/http_client.hpp>

#include <doctest/doctest.h>

#include "support/http_test_client.hpp"
#include "support/nginx_config.hpp"
#include "support/peer_process.hpp"
#include "support/python_runner.hpp"
#include "support/temp_dir.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using netbuf::test::nginxConfig;
using netbuf::test::PeerProcess;
using netbuf::test::readFile;
using netbuf::test::startListening;
using netbuf::test::TempDir;
using netbuf::test::writeFile;

namespace {

// ---------------------------------------------------------------------------------------------
// Requests

struct Outcome {
  ErrorCode ec;
  FullHttpResponse res;
  int status() const { return res.status().code(); }
  std::string body() const { return std::string(res.content().readableStringView()); }
  std::string header(std::string_view name) const {
    return std::string(res.headers().get(name, "<none>"));
  }
};

template <class Start>
std::future<Outcome> launch(Start&& start) {
  auto p = std::make_shared<std::promise<Outcome>>();
  std::future<Outcome> f = p->get_future();
  start([p](ErrorCode ec, FullHttpResponse res) { p->set_value(Outcome{ec, std::move(res)}); });
  return f;
}

Outcome await(std::future<Outcome>& f) {
  REQUIRE_MESSAGE(f.wait_for(15s) == std::future_status::ready, "the request never completed");
  Outcome o = f.get();
  INFO("error: " << o.ec.message());
  REQUIRE_FALSE(o.ec);
  return o;
}

/// A request (any method, extra fields "name", "value", ...), its outcome REQUIREd successful.
Outcome send(HttpClient& client, HttpMethod method, const std::string& url,
             std::vector<std::string> fields = {}, std::string body = {}) {
  FullHttpRequest req(method, "/", body.empty() ? ByteBuf() : Unpooled::copiedBuffer(body));
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2)
    req.headers().add(fields[i], fields[i + 1]);
  auto f = launch([&](auto h) { client.request(std::move(req), url, std::move(h)); });
  return await(f);
}

Outcome get(HttpClient& client, const std::string& url, std::vector<std::string> fields = {}) {
  return send(client, HttpMethod::GET, url, std::move(fields));
}

using Client = test::TestHttpClient;

std::string randomBytes(std::size_t n) { return test::randomBytes(n, 4321); }

/// Text lines (SSI and gzip want text).
std::string textLines(std::size_t lines) {
  std::string s;
  for (std::size_t i = 0; i < lines; ++i) s += "line " + std::to_string(i) + " of the text\n";
  return s;
}

// ---------------------------------------------------------------------------------------------
// nginx

constexpr const char* kNginx = "/usr/sbin/nginx";

/// nginx on a free loopback port, its prefix a temp dir (config, pid file, temp paths, root).
class Nginx {
 public:
  Nginx() {
    REQUIRE_MESSAGE(fs::exists(kNginx),
                    kNginx << " is needed for this test (apt-get install nginx)");
    root_ = dir_.path / "root";
    fs::create_directories(root_ / "ssi");
    big_ = randomBytes(300 * 1024);
    text_ = textLines(4000);
    writeFile(root_ / "big.bin", big_);
    writeFile(root_ / "text.txt", text_);
    writeFile(root_ / "ssi" / "page.shtml",
              "head <!--# echo var=\"nothing\" default=\"SSI\" --> "
              "<!--# include virtual=\"/text.txt\" --> tail\n");
    const std::string p = dir_.path.string();
    port_ = startListening(
        process_,
        [&](unsigned short port) {
          writeConfig(port);
          return std::vector<std::string>{kNginx, "-p", p + "/", "-c", p + "/nginx.conf"};
        },
        dir_.path / "nginx.log", "nginx");
  }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }
  const std::string& big() const { return big_; }
  const std::string& text() const { return text_; }
  const fs::path& dir() const { return dir_.path; }
  std::string log() const { return process_->log(); }

 private:
  void writeConfig(unsigned short port) {
    const std::string p = dir_.path.string();
    writeFile(dir_.path / "nginx.conf", nginxConfig(p, R"(
  types { text/plain txt; }
  server {
    listen 127.0.0.1:)" + std::to_string(port) + R"(;
    root )" + root_.string() + R"(;
    location = /hello { default_type text/plain; return 200 "hello from nginx\n"; }
    location = /empty { return 204; }
    location = /post { return 200 "posted\n"; }
    location = /moved { return 302 /hello; }
    # SSI output has no length known up front: HTTP/1.1 gets it chunked.
    location /ssi/ { ssi on; ssi_types *; default_type text/plain; }
    # So does gzip'd output (the length of the compressed body is not known when the head goes).
    location /gzip/ { gzip on; gzip_types text/plain; gzip_min_length 0; alias )" +
                                                           root_.string() + R"(/; }
  })"));
  }

  TempDir dir_{"netbuf-http-client-interop"};
  fs::path root_;
  std::string big_;
  std::string text_;
  unsigned short port_ = 0;
  std::optional<PeerProcess> process_;  // stopped before dir_ goes
};

}  // namespace

TEST_CASE(
    "HttpClient: nginx: text, 204, a 300 KB file, HEAD and If-Modified-Since on one connection") {
  Nginx nginx;
  Client client;
  INFO(nginx.log());

  Outcome o = get(*client, nginx.url("/hello"));
  CHECK(o.status() == 200);
  CHECK(o.body() == "hello from nginx\n");
  CHECK(o.header("server").starts_with("nginx"));

  o = get(*client, nginx.url("/empty"));
  CHECK(o.status() == 204);
  CHECK_FALSE(o.res.content().isReadable());

  // 300 KB of every byte value: many reads here.
  o = get(*client, nginx.url("/big.bin"));
  CHECK(o.status() == 200);
  CHECK(o.header("content-length") == "307200");
  CHECK(o.res.content().readableBytes() == nginx.big().size());
  CHECK(o.body() == nginx.big());
  const std::string lastModified = o.header("last-modified");
  REQUIRE(lastModified != "<none>");

  o = send(*client, HttpMethod::HEAD, nginx.url("/big.bin"));
  CHECK(o.status() == 200);
  CHECK(o.header("content-length") == "307200");
  CHECK_FALSE(o.res.content().isReadable());

  o = get(*client, nginx.url("/big.bin"), {"If-Modified-Since", lastModified});
  CHECK(o.status() == 304);
  CHECK_FALSE(o.res.content().isReadable());

  o = get(*client, nginx.url("/missing"));
  CHECK(o.status() == 404);

  // A 300 KB body nginx reads and throws away; the connection stays usable.
  o = send(*client, HttpMethod::POST, nginx.url("/post"), {"Content-Type", "application/x-test"},
           nginx.big());
  CHECK(o.status() == 200);
  CHECK(o.body() == "posted\n");

  o = get(*client, nginx.url("/hello"));
  CHECK(o.body() == "hello from nginx\n");
  CHECK(client->connectionsMade() == 1);
}

TEST_CASE("HttpClient: nginx: chunked responses (SSI and gzip)") {
  Nginx nginx;
  Client client;
  INFO(nginx.log());

  // SSI: the expansion streams out as it is produced, chunked.
  Outcome o = get(*client, nginx.url("/ssi/page.shtml"));
  CHECK(o.status() == 200);
  CHECK(o.header("transfer-encoding") == "chunked");
  CHECK(o.header("content-length") == "<none>");
  CHECK(o.body() == "head SSI " + nginx.text() + " tail\n");

  // gzip: chunked too; the body decompresses to the file.
  o = get(*client, nginx.url("/gzip/text.txt"), {"Accept-Encoding", "gzip"});
  CHECK(o.status() == 200);
  CHECK(o.header("transfer-encoding") == "chunked");
  CHECK(o.header("content-encoding") == "gzip");
  const std::string compressed = o.body();
  CHECK(compressed.size() < nginx.text().size());
  writeFile(nginx.dir() / "body.gz", compressed);
  const test::Output gunzip =
      test::run("gzip -dc " + test::shellQuote((nginx.dir() / "body.gz").string()));
  CHECK(gunzip.status == 0);
  CHECK(gunzip.text == nginx.text());

  // Without Accept-Encoding the same file comes plain, with its length.
  o = get(*client, nginx.url("/gzip/text.txt"));
  CHECK(o.header("content-length") == std::to_string(nginx.text().size()));
  CHECK(o.body() == nginx.text());
  CHECK(client->connectionsMade() == 1);
}

TEST_CASE("HttpClient: nginx: an absolute redirect, and pipelining") {
  Nginx nginx;
  INFO(nginx.log());
  {
    HttpClient::Options opt;
    opt.followRedirects = true;
    Client client(opt);
    // nginx makes the Location absolute (http://127.0.0.1:PORT/hello): same pool, same connection.
    const Outcome o = get(*client, nginx.url("/moved"));
    CHECK(o.status() == 200);
    CHECK(o.body() == "hello from nginx\n");
    CHECK(client->connectionsMade() == 1);
  }
  {
    HttpClient::Options opt;
    opt.pipelining = true;
    opt.maxConnectionsPerHost = 1;
    Client client(opt);
    std::vector<std::future<Outcome>> pending;
    for (int i = 0; i < 24; ++i) {
      const std::string url = nginx.url(i % 3 == 0 ? "/big.bin" : i % 3 == 1 ? "/hello" : "/empty");
      if (i % 6 == 5) {
        pending.push_back(launch([&](auto h) { client->head(url, std::move(h)); }));
      } else {
        pending.push_back(launch([&](auto h) { client->get(url, std::move(h)); }));
      }
    }
    for (int i = 0; i < 24; ++i) {
      CAPTURE(i);
      const Outcome o = await(pending[static_cast<std::size_t>(i)]);
      if (i % 3 == 0) {
        CHECK(o.body() == nginx.big());
      } else if (i % 3 == 1) {
        CHECK(o.body() == "hello from nginx\n");
      } else {
        CHECK(o.status() == 204);
        CHECK_FALSE(o.res.content().isReadable());
      }
    }
    CHECK(client->connectionsMade() == 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Python's http.server module

TEST_CASE("HttpClient: python3 -m http.server (HTTP/1.0, a connection per response)") {
  const std::string python = test::requirePython("http.server", "apt-get install python3");
  TempDir dir("netbuf-http-client-interop");
  const fs::path files = dir.path / "files";
  fs::create_directories(files);
  const std::string big = randomBytes(200 * 1024);
  writeFile(files / "big.bin", big);
  writeFile(files / "hello.txt", "hello from python\n");
  std::optional<PeerProcess> py;
  const unsigned short port = startListening(
      py,
      [&](unsigned short p) {
        return std::vector<std::string>{python,        "-m",          "http.server",
                                        "--bind",      "127.0.0.1",   std::to_string(p),
                                        "--directory", files.string()};
      },
      dir.path / "python.log", "python3 -m http.server");
  INFO(py->log());
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  Client client;

  Outcome o = get(*client, base + "/hello.txt");
  CHECK(o.status() == 200);
  CHECK(o.res.protocolVersion() == HttpVersion::HTTP_1_0);
  CHECK(o.body() == "hello from python\n");

  o = get(*client, base + "/big.bin");
  CHECK(o.body() == big);
  const std::string lastModified = o.header("last-modified");
  REQUIRE(lastModified != "<none>");

  o = send(*client, HttpMethod::HEAD, base + "/big.bin");
  CHECK(o.status() == 200);
  CHECK(o.header("content-length") == std::to_string(big.size()));
  CHECK_FALSE(o.res.content().isReadable());

  o = get(*client, base + "/big.bin", {"If-Modified-Since", lastModified});
  CHECK(o.status() == 304);
  CHECK_FALSE(o.res.content().isReadable());

  // A directory listing (generated HTML) and an error page.
  o = get(*client, base + "/");
  CHECK(o.status() == 200);
  CHECK(o.body().find("hello.txt") != std::string::npos);
  o = get(*client, base + "/missing");
  CHECK(o.status() == 404);

  // HTTP/1.0 without keep-alive: no connection went back to the pool.
  CHECK(client->connectionsMade() == 6);

  // Several at once, each on its own connection.
  std::vector<std::future<Outcome>> pending;
  for (int i = 0; i < 8; ++i) {
    pending.push_back(launch([&](auto h) { client->get(base + "/hello.txt", std::move(h)); }));
  }
  for (auto& f : pending) CHECK(await(f).body() == "hello from python\n");
}

// ---------------------------------------------------------------------------------------------
// A BaseHTTPRequestHandler peer speaking HTTP/1.1

namespace {

/// http_client_peer.py on a port of its own choosing (read back from a file).
class PythonPeer {
 public:
  PythonPeer() {
    const std::string python = test::requirePython("http.server", "apt-get install python3");
    const fs::path script = fs::path(__FILE__).parent_path() / "http_client_peer.py";
    REQUIRE_MESSAGE(fs::exists(script), "missing " << script.string());
    const fs::path portFile = dir_.path / "port";
    process_.emplace(std::vector<std::string>{python, script.string(), portFile.string(), "45"},
                     dir_.path / "peer.log");
    const auto deadline = Clock::now() + 10s;
    while (!fs::exists(portFile)) {
      REQUIRE_MESSAGE(process_->running(), "http_client_peer.py exited:\n" << process_->log());
      REQUIRE_MESSAGE(Clock::now() < deadline, "http_client_peer.py wrote no port in 10 s:\n"
                                                   << process_->log());
      std::this_thread::sleep_for(20ms);
    }
    port_ = static_cast<unsigned short>(std::stoi(readFile(portFile)));
  }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }
  std::string log() const { return process_->log(); }

 private:
  TempDir dir_{"netbuf-http-client-interop"};
  unsigned short port_ = 0;
  std::optional<PeerProcess> process_;
};

/// The body of /chunked?n=N&size=S (chunk_body() in http_client_peer.py).
std::string chunkBody(int n, int size) {
  std::string body;
  for (int i = 0; i < n; ++i) {
    const std::string unit = std::to_string(i) + ",";
    const int times = size / static_cast<int>(unit.size()) + i % 3;
    for (int k = 0; k < times; ++k) body += unit;
  }
  return body;
}

}  // namespace

TEST_CASE("HttpClient: Python HTTP/1.1 peer: chunked, trailers, 304, close-delimited, keep-alive") {
  PythonPeer peer;
  INFO(peer.log());
  Client client;

  // Keep-alive as the server sees it: the same client port every time.
  const std::string port = get(*client, peer.url("/port")).body();
  CHECK(get(*client, peer.url("/port")).body() == port);

  Outcome o = get(*client, peer.url("/chunked?n=50&size=100"));
  CHECK(o.status() == 200);
  CHECK(o.header("transfer-encoding") == "chunked");
  CHECK(o.body() == chunkBody(50, 100));
  REQUIRE(o.res.trailers() != nullptr);
  CHECK(o.res.trailers()->get("x-pieces") == std::optional<std::string_view>("50"));

  // 2 MB in 64 KB chunks.
  o = get(*client, peer.url("/chunked?n=32&size=65536"));
  CHECK(o.body() == chunkBody(32, 65536));

  // HEAD of a chunked resource: the head only, and the next response is read right.
  o = send(*client, HttpMethod::HEAD, peer.url("/chunked"));
  CHECK(o.header("transfer-encoding") == "chunked");
  CHECK_FALSE(o.res.content().isReadable());

  o = get(*client, peer.url("/cached"));
  CHECK(o.status() == 200);
  CHECK(o.body() == "fresh representation");
  o = get(*client, peer.url("/cached"), {"If-None-Match", "\"v1\""});
  CHECK(o.status() == 304);
  CHECK_FALSE(o.res.content().isReadable());

  // A POST whose echo comes back chunked.
  const std::string upload = randomBytes(100000);
  o = send(*client, HttpMethod::POST, peer.url("/echo"), {"Content-Type", "application/x-up"},
           upload);
  CHECK(o.header("content-type") == "application/x-up");
  CHECK(o.body() == upload);

  // Still the first connection.
  CHECK(get(*client, peer.url("/port")).body() == port);
  CHECK(client->connectionsMade() == 1);

  // HTTP/1.1, Connection: close, no length: the body ends when the connection does.
  o = get(*client, peer.url("/close"));
  CHECK(o.header("connection") == "close");
  std::string expected;
  for (int i = 0; i < 1000; ++i) expected += "until the connection closes ";
  CHECK(o.body() == expected);
  // That connection is gone: the next request opens another (a new client port).
  const std::string port2 = get(*client, peer.url("/port")).body();
  CHECK(port2 != port);
  CHECK(client->connectionsMade() == 2);
}

TEST_CASE("HttpClient: Python HTTP/1.1 peer: pipelined requests answered in order") {
  PythonPeer peer;
  INFO(peer.log());
  HttpClient::Options opt;
  opt.pipelining = true;
  opt.maxConnectionsPerHost = 1;
  Client client(opt);

  std::vector<std::future<Outcome>> pending;
  for (int i = 1; i <= 12; ++i) {
    const std::string url =
        peer.url("/chunked?n=" + std::to_string(i) + "&size=" + std::to_string(i * 50));
    pending.push_back(launch([&](auto h) { client->get(url, std::move(h)); }));
  }
  for (int i = 1; i <= 12; ++i) {
    CAPTURE(i);
    CHECK(await(pending[static_cast<std::size_t>(i - 1)]).body() == chunkBody(i, i * 50));
  }
  CHECK(client->connectionsMade() == 1);
}
