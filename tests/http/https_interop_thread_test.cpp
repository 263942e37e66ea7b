// HTTPS: HttpServer with Options::tls against curl (GET with the CA, ALPN http/1.1, an upload,
// keep-alive over one TLS connection, refused without the CA), and HttpClient with https:// URLs
// against nginx serving TLS (a small and a 300 KB body over one connection; an unknown CA, a
// certificate for another name and a plaintext port each fail with the SslErrc that says why) and
// against HttpServer. Certificates are made by support/test_certificates.hpp for each test. A
// missing peer FAILS the test (REQUIRE), it never skips; every peer runs under timeout(1). Run
// under ThreadSanitizer too ("threaded").
#include <netbuf/http/http_client.hpp>
#include <netbuf/http/http_server.hpp>

#include <doctest/doctest.h>

#include "support/http_test_client.hpp"
#include "support/nginx_config.hpp"
#include "support/peer_process.hpp"
#include "support/python_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_certificates.hpp"

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_errc.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using netbuf::test::Output;
using netbuf::test::PeerProcess;
using netbuf::test::readFile;
using netbuf::test::shellQuote;
using netbuf::test::startListening;
using netbuf::test::TempDir;

namespace {

/// A CA and a server certificate it issued (localhost, 127.0.0.1, ::1), as files in dir.
struct Certificates {
  explicit Certificates(const fs::path& dir, test::CertificateSpec spec = {})
      : ca("netbuf https CA") {
    const test::TestKeyPair server = ca.issue(spec);
    caFile = test::writeFile(dir, "ca.pem", ca.certPem());
    cert = test::writeFile(dir, "server.pem", server.chainPem);
    key = test::writeFile(dir, "server.key", server.keyPem);
  }
  test::TestCa ca;
  std::string caFile, cert, key;
};

std::shared_ptr<SslContext> serverContext(const Certificates& certs) {
  SslContext::Options o;
  o.certificateChainFile = certs.cert;
  o.privateKeyFile = certs.key;
  o.alpnProtocols = {"http/1.1"};
  return SslContext::forServer(o);
}

std::shared_ptr<SslContext> clientContext(const std::string& caFile) {
  SslContext::Options o;
  o.trustedCaFile = caFile;
  return SslContext::forClient(o);
}

/// The demo routes (GET /, POST /echo) served over TLS on 127.0.0.1:0.
class HttpsServer {
 public:
  explicit HttpsServer(std::shared_ptr<SslContext> tls) : server_(options(std::move(tls))) {
    server_
        .route(HttpMethod::GET, "/",
               [](FullHttpRequest&) {
                 return HttpServer::text(HttpResponseStatus::OK, "Hello, World!", "text/plain");
               })
        .route(HttpMethod::POST, "/echo", [](FullHttpRequest& req) {
          return FullHttpResponse(HttpResponseStatus::OK, std::move(req.content()));
        });
    channel_ = server_.bind(group_, "127.0.0.1", 0);
  }
  ~HttpsServer() {
    channel_->close();
    channel_->closeChildren();
    channel_.reset();
    group_.shutdownGracefully(0ms, 5s);
  }
  unsigned short port() const { return channel_->port(); }
  std::string url(std::string_view host, std::string_view path) const {
    return "https://" + std::string(host) + ":" + std::to_string(port()) + std::string(path);
  }
  HttpServerStats stats() const { return server_.stats(); }

 private:
  static HttpServer::Options options(std::shared_ptr<SslContext> tls) {
    HttpServer::Options o;
    o.tls = std::move(tls);
    return o;
  }

  HttpServer server_;
  EventLoopGroup group_{2};
  std::shared_ptr<ServerChannel> channel_;
};

/// curl's path, REQUIREd (apt-get install curl).
std::string requireCurl() {
  const Output o = test::run("command -v curl");
  std::string path = o.text.substr(0, o.text.find('\n'));
  REQUIRE_MESSAGE((o.status == 0 && !path.empty()),
                  "curl is needed for this test (apt-get install curl): " << o.text);
  return path;
}

Output curl(const std::string& curlPath, const std::string& args) {
  return test::run("timeout 20 " + shellQuote(curlPath) + " --no-progress-meter " + args);
}

bool contains(const std::string& text, std::string_view what) {
  return text.find(what) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// HttpClient requests

struct Outcome {
  ErrorCode ec;
  FullHttpResponse res;
  std::string body() const { return std::string(res.content().readableStringView()); }
};

/// One GET, waited for (15 s at most).
Outcome get(HttpClient& client, const std::string& url) {
  auto p = std::make_shared<std::promise<Outcome>>();
  std::future<Outcome> f = p->get_future();
  client.get(url, [p](ErrorCode ec, FullHttpResponse res) {
    p->set_value(Outcome{ec, std::move(res)});
  });
  REQUIRE_MESSAGE(f.wait_for(15s) == std::future_status::ready, "the request never completed");
  return f.get();
}

using Client = test::TestHttpClient;

std::string randomBytes(std::size_t n) { return test::randomBytes(n, 2024); }

// ---------------------------------------------------------------------------------------------
// nginx

constexpr const char* kNginx = "/usr/sbin/nginx";

/// nginx serving TLS on a free loopback port with the given certificate, and plain HTTP on
/// another (a plaintext peer for an https:// URL).
class TlsNginx {
 public:
  TlsNginx(const fs::path& dir, const std::string& cert, const std::string& key) : dir_(dir) {
    REQUIRE_MESSAGE(fs::exists(kNginx),
                    kNginx << " is needed for this test (apt-get install nginx)");
    big_ = randomBytes(300 * 1024);
    fs::create_directories(dir_ / "root");
    test::writeFile(dir_ / "root" / "big.bin", big_);
    plainPort_ = test::freePort();
    const std::string p = dir_.string();
    port_ = startListening(
        process_,
        [&](unsigned short port) {
          writeConfig(port, cert, key);
          return std::vector<std::string>{kNginx, "-p", p + "/", "-c", p + "/nginx.conf"};
        },
        dir_ / "nginx.log", "nginx");
  }
  std::string url(std::string_view host, std::string_view path) const {
    return "https://" + std::string(host) + ":" + std::to_string(port_) + std::string(path);
  }
  std::string plainPortUrl() const {
    return "https://127.0.0.1:" + std::to_string(plainPort_) + "/hello";
  }
  const std::string& big() const { return big_; }
  std::string log() const { return process_->log(); }

 private:
  void writeConfig(unsigned short port, const std::string& cert, const std::string& key) {
    const std::string p = dir_.string();
    test::writeFile(dir_ / "nginx.conf", test::nginxConfig(p, R"(
  server {
    listen 127.0.0.1:)" + std::to_string(port) + R"( ssl;
    ssl_certificate )" + cert + R"(;
    ssl_certificate_key )" + key + R"(;
    ssl_protocols TLSv1.2 TLSv1.3;
    root )" + p + R"(/root;
    location = /hello { default_type text/plain; return 200 "hello over tls\n"; }
  }
  server {
    listen 127.0.0.1:)" + std::to_string(plainPort_) + R"(;
    location = /hello { default_type text/plain; return 200 "hello in clear\n"; }
  })"));
  }

  fs::path dir_;
  std::string big_;
  unsigned short port_ = 0;
  unsigned short plainPort_ = 0;
  std::optional<PeerProcess> process_;
};

}  // namespace

TEST_CASE("HttpServer with TLS: curl GET verifies, negotiates ALPN http/1.1, and uploads") {
  const std::string c = requireCurl();
  TempDir tmp("netbuf-https-interop");
  const Certificates certs(tmp.path);
  HttpsServer server(serverContext(certs));
  const std::string ca = "--cacert " + shellQuote(certs.caFile) + " ";

  Output o = curl(c, ca + "-sS -v -w '\\nversion %{http_version}\\n' " +
                         shellQuote(server.url("localhost", "/")));
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(contains(o.text, "Hello, World!\nversion 1.1\n"));
  CHECK(contains(o.text, "ALPN: server accepted http/1.1"));
  CHECK(contains(o.text, "SSL certificate verify ok"));

  // By IP address: the certificate names 127.0.0.1 too.
  o = curl(c, ca + "-sS " + shellQuote(server.url("127.0.0.1", "/")));
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(o.text == "Hello, World!");

  // 100 KiB up and back, then three requests over one TLS connection.
  const std::string body = randomBytes(100 * 1024);
  test::writeFile(tmp.path / "upload.bin", body);
  o = curl(c, ca + "-sS -o " + shellQuote((tmp.path / "echoed.bin").string()) + " --data-binary @" +
                  shellQuote((tmp.path / "upload.bin").string()) + " " +
                  shellQuote(server.url("localhost", "/echo")));
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(readFile(tmp.path / "echoed.bin") == body);
  o = curl(c, ca + "-sS -v " + shellQuote(server.url("localhost", "/")) + " " +
                  shellQuote(server.url("localhost", "/")) + " " +
                  shellQuote(server.url("localhost", "/missing")));
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "Re-using existing connection"));
  CHECK(contains(o.text, "< HTTP/1.1 404"));

  // Without the CA curl refuses the server (60: the peer's certificate cannot be verified).
  o = curl(c, "-sS " + shellQuote(server.url("localhost", "/")));
  INFO(o.text);
  CHECK(o.status == 60);
  // And a plaintext request to the TLS port gets no HTTP answer.
  o = curl(c, "-sS http://127.0.0.1:" + std::to_string(server.port()) + "/");
  INFO(o.text);
  CHECK(o.status != 0);
  CHECK_FALSE(contains(o.text, "Hello"));
}

TEST_CASE("HttpServer with TLS: static files (read and encrypted: no sendfile) to curl") {
  const std::string c = requireCurl();
  TempDir tmp("netbuf-https-files");
  const Certificates certs(tmp.path);
  fs::create_directories(tmp.path / "root");
  const std::string big = randomBytes(3 * 1024 * 1024 + 123);
  test::writeFile(tmp.path / "root" / "big.bin", big);
  HttpServer::Options o;
  o.tls = serverContext(certs);
  HttpServer server(o);
  server.staticFiles("/files/", tmp.path / "root");
  EventLoopGroup group(1);
  auto channel = server.bind(group, "127.0.0.1", 0);
  const std::string url = "https://localhost:" + std::to_string(channel->port()) + "/files/big.bin";
  const std::string ca = "--cacert " + shellQuote(certs.caFile) + " ";
  const std::string out = (tmp.path / "got.bin").string();
  Output r = curl(c, ca + "-sS -o " + shellQuote(out) + " " + shellQuote(url));
  INFO(r.text);
  CHECK(r.status == 0);
  CHECK(readFile(out) == big);
  // One byte range out of the middle.
  r = curl(c, ca + "-sS -r 1000000-1000099 " + shellQuote(url));
  CHECK(r.status == 0);
  CHECK(r.text == big.substr(1000000, 100));
  channel->close();
  channel->closeChildren();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("HttpClient: https against nginx, with the CA and without") {
  TempDir tmp("netbuf-https-nginx");
  // The certificate names localhost only (no IP address): https://127.0.0.1 must not verify.
  test::CertificateSpec spec;
  spec.ipAddresses = {};
  const Certificates certs(tmp.path, spec);
  TlsNginx nginx(tmp.path, certs.cert, certs.key);
  INFO(nginx.log());

  {
    HttpClient::Options o;
    o.tls = clientContext(certs.caFile);
    Client client(o);
    Outcome r = get(*client, nginx.url("localhost", "/hello"));
    INFO(r.ec.message());
    REQUIRE_FALSE(r.ec);
    CHECK(r.res.status().code() == 200);
    CHECK(r.body() == "hello over tls\n");
    CHECK(r.res.headers().get("server", "").starts_with("nginx"));
    // 300 KB over the same connection: many records, many reads.
    r = get(*client, nginx.url("localhost", "/big.bin"));
    REQUIRE_FALSE(r.ec);
    CHECK(r.body() == nginx.big());
    CHECK(client->connectionsMade() == 1);

    // The certificate does not name 127.0.0.1.
    r = get(*client, nginx.url("127.0.0.1", "/hello"));
    CHECK(r.ec == SslErrc::hostnameMismatch);
    // A server that does not speak TLS.
    r = get(*client, nginx.plainPortUrl());
    CHECK(r.ec == SslErrc::notTls);
  }
  {
    // No context given: the client's default verifies against the system store, which does not
    // know this CA.
    Client client;
    const Outcome r = get(*client, nginx.url("localhost", "/hello"));
    CHECK(r.ec == SslErrc::unknownCa);
    CHECK(r.ec.message() == make_error_code(SslErrc::unknownCa).message());
    // A second request (on the same default context) fails the same way.
    CHECK(get(*client, nginx.url("localhost", "/hello")).ec == SslErrc::unknownCa);
  }
  {
    // A CA that did not issue the certificate is no better.
    TempDir other("netbuf-https-other-ca");
    const Certificates stranger(other.path);
    HttpClient::Options o;
    o.tls = clientContext(stranger.caFile);
    Client client(o);
    CHECK(get(*client, nginx.url("localhost", "/hello")).ec == SslErrc::unknownCa);
  }
}

TEST_CASE("HttpClient: https against HttpServer with TLS, and http and https pooled apart") {
  TempDir tmp("netbuf-https-self");
  const Certificates certs(tmp.path);
  HttpsServer server(serverContext(certs));
  HttpClient::Options o;
  o.tls = clientContext(certs.caFile);
  Client client(o);
  for (int i = 0; i < 3; ++i) {
    const Outcome r = get(*client, server.url("localhost", "/"));
    INFO(r.ec.message());
    REQUIRE_FALSE(r.ec);
    CHECK(r.body() == "Hello, World!");
  }
  CHECK(client->connectionsMade() == 1);
  // The same host and port with http:// is another pool (and here a failure: the server wants
  // TLS), not the TLS connection reused in clear.
  const Outcome r = get(*client, "http://localhost:" + std::to_string(server.port()) + "/");
  CHECK(r.ec);
  CHECK(client->connectionsMade() == 2);
  CHECK(get(*client, server.url("localhost", "/")).body() == "Hello, World!");
}
