// SslHandler against TLS peers no one here wrote, in-process on 127.0.0.1:0: an echo server with
// TLS (SslHandler first in each connection's pipeline) and certificates made by
// support/test_certificates.hpp, driven by `openssl s_client` (TLS 1.2 and 1.3 with chain
// verification, mutual TLS with and without a client certificate, ALPN) and Python's ssl module
// (a verifying context: version, ALPN, the echo). A client that does not speak TLS is closed and
// the server goes on serving. A missing peer FAILS the test (REQUIRE), it never skips; every peer
// runs under timeout(1). Run under ThreadSanitizer too ("threaded").
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_handler.hpp>

#include <doctest/doctest.h>

#include "support/python_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_test_pki.hpp"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <netbuf/tls/ssl_errc.hpp>
#include <netbuf/tls/ssl_handshake_completion_event.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using netbuf::test::Output;
using netbuf::test::shellQuote;
using netbuf::test::TempDir;

namespace {

/// What the server's handlers saw of each connection's handshake (any thread).
class HandshakeLog {
 public:
  void add(const SslHandshakeCompletionEvent& e) {
    const std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(e);
  }
  /// The n-th handshake's outcome (0-based), waiting up to 10 s for it.
  SslHandshakeCompletionEvent wait(std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (events_.size() > n) return events_[n];
      }
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline,
                      "the server saw no handshake end (#" << n << ")");
      std::this_thread::sleep_for(10ms);
    }
  }

 private:
  std::mutex mutex_;
  std::vector<SslHandshakeCompletionEvent> events_;
};

/// Writes back what it reads (plaintext: it sits behind the SslHandler); records handshakes.
class EchoHandler final : public ChannelHandler {
 public:
  explicit EchoHandler(std::shared_ptr<HandshakeLog> log) : log_(std::move(log)) {}
  void channelRead(ChannelHandlerContext& ctx, Message msg) override { ctx.write(std::move(msg)); }
  void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }
  void userEventTriggered(ChannelHandlerContext& ctx, Message event) override {
    if (event.is<SslHandshakeCompletionEvent>()) log_->add(event.as<SslHandshakeCompletionEvent>());
    ctx.fireUserEventTriggered(std::move(event));
  }
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr) override { ctx.close(); }

 private:
  std::shared_ptr<HandshakeLog> log_;
};

/// The test certificates as files (ca.pem, server.pem/.key, client.pem/.key).
struct Certificates : test::TlsTestFiles {
  Certificates()
      : TlsTestFiles("netbuf-tls-interop",
                     test::TlsTestPki("netbuf interop CA", "netbuf interop client")) {}
};

/// The echo server with TLS on 127.0.0.1:0, on loops of its own.
class TlsEchoServer {
 public:
  TlsEchoServer(const Certificates& certs, ClientAuth clientAuth = ClientAuth::none,
                std::vector<std::string> alpn = {})
      : group_(2), log_(std::make_shared<HandshakeLog>()) {
    SslContext::Options o;
    o.certificateChainFile = certs.serverCert;
    o.privateKeyFile = certs.serverKey;
    o.clientAuth = clientAuth;
    if (clientAuth != ClientAuth::none) o.trustedCaFile = certs.caFile;
    o.alpnProtocols = std::move(alpn);
    tls_ = SslContext::forServer(o);
    channel_ = ServerBootstrap()
                   .group(group_)
                   .childHandler([tls = tls_, log = log_](SocketChannel& ch) {
                     ch.pipeline().addFirst("tls", tls->newHandler());
                     ch.pipeline().addLast("echo", std::make_unique<EchoHandler>(log));
                   })
                   .bind("127.0.0.1", 0);
  }
  ~TlsEchoServer() {
    channel_->close();
    channel_->closeChildren();
    channel_.reset();
    group_.shutdownGracefully(0ms, 5s);
  }
  unsigned short port() const { return channel_->port(); }
  HandshakeLog& handshakes() { return *log_; }

 private:
  EventLoopGroup group_;
  std::shared_ptr<SslContext> tls_;
  std::shared_ptr<HandshakeLog> log_;
  std::shared_ptr<ServerChannel> channel_;
};

/// openssl's path, REQUIREd.
std::string requireOpenssl() {
  const Output o = test::run("command -v openssl");
  std::string path = o.text.substr(0, o.text.find('\n'));
  REQUIRE_MESSAGE((o.status == 0 && !path.empty()),
                  "openssl is needed for this test (apt-get install openssl): " << o.text);
  return path;
}

/// `openssl s_client` against 127.0.0.1:port with args, its stdin a line and then (s_client ends
/// at the end of its input) a pause long enough for the echo to come back.
Output sClient(const std::string& openssl, unsigned short port, const std::string& args,
               std::string_view line = "hello over tls") {
  const std::string command =
      "(printf '%s\\n' " + shellQuote(line) + "; sleep 2) | timeout 20 " + shellQuote(openssl) +
      " s_client -connect 127.0.0.1:" + std::to_string(port) + " -servername localhost " + args;
  return test::run(command);
}

bool contains(const std::string& text, std::string_view what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("SslHandler: openssl s_client, TLS 1.2 and 1.3, verifying the chain") {
  const std::string openssl = requireOpenssl();
  Certificates certs;
  TlsEchoServer server(certs);
  std::size_t n = 0;
  for (const std::string version : {"-tls1_2", "-tls1_3"}) {
    CAPTURE(version);
    const Output o =
        sClient(openssl, server.port(),
                std::string(version) + " -verify_return_error -CAfile " + shellQuote(certs.caFile));
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(contains(o.text, "Verify return code: 0 (ok)"));
    CHECK(contains(o.text, "hello over tls\n"));  // the echo
    const bool v13 = std::string_view(version) == "-tls1_3";
    CHECK(contains(o.text, v13 ? "New, TLSv1.3" : "New, TLSv1.2"));
    const SslHandshakeCompletionEvent e = server.handshakes().wait(n++);
    INFO("server: " << e.error.message());
    CHECK(e.isSuccess());
    CHECK(e.protocol == (v13 ? "TLSv1.3" : "TLSv1.2"));
    CHECK(e.serverName == "localhost");
    CHECK(e.peerCertificate.empty());  // no client certificate asked for
  }

  // s_client refuses a chain it cannot verify (no CA given: the system store knows none of it).
  const Output o = sClient(openssl, server.port(), "-verify_return_error");
  INFO(o.text);
  CHECK(o.status != 0);
  CHECK_FALSE(contains(o.text, "hello over tls\n"));
}

TEST_CASE("SslHandler: openssl s_client with and without a client certificate (mutual TLS)") {
  const std::string openssl = requireOpenssl();
  Certificates certs;
  TlsEchoServer server(certs, ClientAuth::require);
  const std::string verify = "-verify_return_error -CAfile " + shellQuote(certs.caFile);

  for (const std::string version : {"-tls1_2", "-tls1_3"}) {
    CAPTURE(version);
    const Output o = sClient(openssl, server.port(),
                             verify + " " + version + " -cert " + shellQuote(certs.clientCert) +
                                 " -key " + shellQuote(certs.clientKey));
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(contains(o.text, "Verify return code: 0 (ok)"));
    CHECK(contains(o.text, "hello over tls\n"));
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const SslHandshakeCompletionEvent e = server.handshakes().wait(i);
    INFO("server: " << e.error.message());
    CHECK(e.isSuccess());
    CHECK(e.peerCertificate.commonName() == "netbuf interop client");
    CHECK(e.peerCertificate.issuer() == "CN=netbuf interop CA");
  }

  // Without one: refused, whatever the version (in TLS 1.3 the client's side of the handshake
  // ends first, so s_client sees the server's alert only when it reads).
  std::size_t n = 2;
  for (const std::string version : {"-tls1_2", "-tls1_3"}) {
    CAPTURE(version);
    const Output o = sClient(openssl, server.port(), verify + " " + version);
    INFO(o.text);
    CHECK_FALSE(contains(o.text, "hello over tls\n"));
    const SslHandshakeCompletionEvent e = server.handshakes().wait(n++);
    CHECK(e.error == make_error_code(SslErrc::peerCertificateRequired));
  }
}

TEST_CASE("SslHandler: openssl s_client negotiates ALPN, and is refused without a common one") {
  const std::string openssl = requireOpenssl();
  Certificates certs;
  TlsEchoServer server(certs, ClientAuth::none, {"x-netbuf-echo", "http/1.1"});
  const std::string verify = "-verify_return_error -CAfile " + shellQuote(certs.caFile);

  Output o = sClient(openssl, server.port(), verify + " -alpn http/1.1");
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "ALPN protocol: http/1.1"));
  CHECK(contains(o.text, "hello over tls\n"));
  SslHandshakeCompletionEvent e = server.handshakes().wait(0);
  CHECK(e.isSuccess());
  CHECK(e.applicationProtocol == "http/1.1");

  // The server's preference wins among those the client offers.
  o = sClient(openssl, server.port(), verify + " -alpn http/1.1,x-netbuf-echo");
  INFO(o.text);
  CHECK(contains(o.text, "ALPN protocol: x-netbuf-echo"));
  CHECK(server.handshakes().wait(1).applicationProtocol == "x-netbuf-echo");

  // No protocol in common: refused (RFC 7301's no_application_protocol alert).
  o = sClient(openssl, server.port(), verify + " -alpn h2");
  INFO(o.text);
  CHECK(o.status != 0);
  CHECK_FALSE(contains(o.text, "hello over tls\n"));
  e = server.handshakes().wait(2);
  CHECK(e.error == make_error_code(SslErrc::noApplicationProtocol));

  // Offering no ALPN at all is fine: none is chosen.
  o = sClient(openssl, server.port(), verify);
  INFO(o.text);
  CHECK(contains(o.text, "No ALPN negotiated"));
  CHECK(contains(o.text, "hello over tls\n"));
  e = server.handshakes().wait(3);
  CHECK(e.isSuccess());
  CHECK(e.applicationProtocol.empty());
}

TEST_CASE("SslHandler: Python's ssl module, verifying, TLS 1.3 and 1.2 with ALPN") {
  const std::string python = test::requirePython("ssl", "apt-get install python3");
  Certificates certs;
  TlsEchoServer server(certs, ClientAuth::none, {"http/1.1"});
  const std::string script = test::writeFile(certs.dir.path, "peer.py", R"(
import socket, ssl, sys
port, cafile, maximum = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=cafile)  # verifies the chain and the host name
ctx.maximum_version = getattr(ssl.TLSVersion, maximum)
ctx.set_alpn_protocols(["http/1.1"])
with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
    with ctx.wrap_socket(raw, server_hostname="localhost") as s:
        data = b"".join(b"python line %d\n" % i for i in range(2000))
        s.sendall(data)
        got = b""
        while len(got) < len(data):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        assert got == data, (len(got), len(data))
        print("version", s.version())
        print("alpn", s.selected_alpn_protocol())
        print("peer", dict(x[0] for x in s.getpeercert()["subject"])["commonName"])
)");
  for (const std::string maximum : {"TLSv1_3", "TLSv1_2"}) {
    CAPTURE(maximum);
    const Output o = test::run("timeout 20 " + test::pythonCommand(python, script,
                                                                   {std::to_string(server.port()),
                                                                    certs.caFile, maximum}));
    INFO(o.text);
    REQUIRE(o.status == 0);
    CHECK(contains(o.text, std::string_view(maximum) == "TLSv1_3" ? "version TLSv1.3\n"
                                                                  : "version TLSv1.2\n"));
    CHECK(contains(o.text, "alpn http/1.1\n"));
    CHECK(contains(o.text, "peer localhost\n"));
  }

  // A context that trusts nothing of ours refuses the server.
  const Output o = test::run("timeout 20 " + shellQuote(python) + " -c " +
                             shellQuote("import socket, ssl, sys\n"
                                        "ctx = ssl.create_default_context()\n"
                                        "raw = socket.create_connection(('127.0.0.1', " +
                                        std::to_string(server.port()) +
                                        "), timeout=10)\n"
                                        "try:\n"
                                        "    ctx.wrap_socket(raw, server_hostname='localhost')\n"
                                        "except ssl.SSLCertVerificationError as e:\n"
                                        "    print('refused', e.verify_message)\n"
                                        "    sys.exit(0)\n"
                                        "sys.exit(1)\n"));
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "refused"));
}

TEST_CASE("SslHandler: a plaintext client is closed, and the server goes on serving TLS") {
  const std::string openssl = requireOpenssl();
  Certificates certs;
  TlsEchoServer server(certs);

  asio::io_context io;
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), server.port()});
  asio::write(s, asio::buffer(std::string_view("GET / HTTP/1.1\r\n\r\n")));
  // The server closes: the read ends (perhaps after an alert record, never an echo). Bounded:
  // a server that kept the connection open fails here after 10 s, it does not hang the test.
  std::string got;
  boost::system::error_code ec = asio::error::timed_out;
  std::array<char, 4096> buf{};
  std::function<void()> readMore = [&] {
    s.async_read_some(asio::buffer(buf), [&](boost::system::error_code e, std::size_t n) {
      got.append(buf.data(), n);
      if (e) {
        ec = e;
        return;
      }
      readMore();
    });
  };
  readMore();
  io.run_for(10s);
  const bool closedByServer = ec == asio::error::eof || ec == asio::error::connection_reset;
  s.close();
  INFO("read ended with: " << ec.message());
  CHECK(closedByServer);
  CHECK_FALSE(contains(got, "GET / HTTP/1.1"));  // nothing was echoed in clear
  const SslHandshakeCompletionEvent e = server.handshakes().wait(0);
  CHECK(e.error == make_error_code(SslErrc::notTls));

  // The next TLS client is served as usual.
  const Output o =
      sClient(openssl, server.port(), "-verify_return_error -CAfile " + shellQuote(certs.caFile));
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "hello over tls\n"));
  CHECK(server.handshakes().wait(1).isSuccess());
}
