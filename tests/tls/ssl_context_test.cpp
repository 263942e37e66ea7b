#include <netbuf/tls/ssl_context.hpp>

#include <doctest/doctest.h>

#include <netbuf/tls/ssl_error.hpp>
#include <netbuf/tls/ssl_handler.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "support/temp_dir.hpp"
#include "support/test_certificates.hpp"
#include "support/tls_pair.hpp"
#include "support/tls_test_pki.hpp"

using namespace netbuf;
using namespace netbuf::test;

namespace {

const TlsTestPki& pki() {
  static const TlsTestPki p;
  return p;
}

bool handshakes(const std::shared_ptr<SslContext>& client,
                const std::shared_ptr<SslContext>& server, const std::string& host = "localhost") {
  TlsEnd c(client->newHandler(host, 443));
  TlsEnd s(server->newHandler());
  pump(c, s);
  const bool ok = c.handshakeSucceeded() && s.handshakeSucceeded();
  c.ch->close();
  pump(c, s);
  return ok;
}

}  // namespace

TEST_CASE("contexts: server or client, options kept") {
  auto server = SslContext::forServer(pki().serverOptions());
  CHECK(server->isServer());
  CHECK(server->native() != nullptr);
  auto client = SslContext::forClient();
  CHECK(!client->isServer());
  CHECK(client->options().handshakeTimeout == std::chrono::seconds(10));
  CHECK(client->options().minVersion == TlsVersion::tls12);
  auto handler = client->newHandler("localhost", 443);
  CHECK(handler->isClient());
  CHECK(handler->context() == client);
  CHECK(!server->newHandler()->isClient());
  // Each side's handlers only: a client handler from a server context would never verify.
  CHECK_THROWS_AS(server->newHandler("example.com", 443), SslError);
}

TEST_CASE("certificates, keys and trusted CAs load from files as from memory") {
  TempDir dir("ssl-context");
  const auto chain = writeFile(dir.path, "chain.pem", pki().server.chainPem);
  const auto key = writeFile(dir.path, "key.pem", pki().server.keyPem);
  const auto ca = writeFile(dir.path, "ca.pem", pki().ca.certPem());
  SslContext::Options so;
  so.certificateChainFile = chain;
  so.privateKeyFile = key;
  so.logErrors = false;
  SslContext::Options co;
  co.trustedCaFile = ca;
  co.logErrors = false;
  CHECK(handshakes(SslContext::forClient(co), SslContext::forServer(so)));

  // A chain through an intermediate: the server sends it, the client trusts the root only.
  TestCa intermediate = pki().ca.intermediate("netbuf intermediate");
  const TestKeyPair leaf = intermediate.issue(CertificateSpec{});
  SslContext::Options io;
  io.certificateChainPem = leaf.chainPem;
  io.privateKeyPem = leaf.keyPem;
  io.logErrors = false;
  CHECK(handshakes(SslContext::forClient(co), SslContext::forServer(io)));

  // The system store alone does not know the test CA.
  CHECK(!handshakes(SslContext::forClient(), SslContext::forServer(so)));
  // alsoTrustSystemStore keeps the named CA trusted.
  co.alsoTrustSystemStore = true;
  CHECK(handshakes(SslContext::forClient(co), SslContext::forServer(so)));
}

TEST_CASE("RSA keys, cipher and group lists, version limits") {
  CertificateSpec rsa;
  rsa.keyType = TestKeyType::Rsa2048;
  const TestKeyPair rsaPair = pki().ca.issue(rsa);
  auto so = pki().serverOptions();
  so.certificateChainPem = rsaPair.chainPem;
  so.privateKeyPem = rsaPair.keyPem;
  so.cipherList = "ECDHE-RSA-AES128-GCM-SHA256";
  so.cipherSuites = "TLS_CHACHA20_POLY1305_SHA256";
  so.groups = "X25519";
  auto co = pki().clientOptions();
  for (TlsVersion v : {TlsVersion::tls13, TlsVersion::tls12}) {
    co.maxVersion = v;
    TlsEnd c(SslContext::forClient(co)->newHandler("localhost", 443));
    TlsEnd s(SslContext::forServer(so)->newHandler());
    pump(c, s);
    REQUIRE(c.handshakeSucceeded());
    CHECK(c.rec->handshakes[0].cipher == (v == TlsVersion::tls13
                                              ? "TLS_CHACHA20_POLY1305_SHA256"
                                              : "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"));
  }
  // A TLS 1.3-only server and a TLS 1.2-only client share no version.
  auto so13 = pki().serverOptions();
  so13.minVersion = TlsVersion::tls13;
  auto co12 = pki().clientOptions();
  co12.maxVersion = TlsVersion::tls12;
  TlsEnd c(SslContext::forClient(co12)->newHandler("localhost", 443));
  TlsEnd s(SslContext::forServer(so13)->newHandler());
  pump(c, s);
  CHECK(s.handshakeError() == SslErrc::unsupportedVersion);
  // No cipher in common.
  auto soC = pki().serverOptions();
  soC.maxVersion = TlsVersion::tls12;
  soC.cipherList = "ECDHE-ECDSA-AES256-GCM-SHA384";
  auto coC = pki().clientOptions();
  coC.cipherList = "ECDHE-ECDSA-AES128-GCM-SHA256";
  coC.maxVersion = TlsVersion::tls12;
  TlsEnd c2(SslContext::forClient(coC)->newHandler("localhost", 443));
  TlsEnd s2(SslContext::forServer(soC)->newHandler());
  pump(c2, s2);
  CHECK(s2.handshakeError() == SslErrc::noSharedCipher);
}

TEST_CASE("configuration errors are SslError badConfiguration with the reason") {
  auto expectBad = [](auto&& make, const char* what) {
    CAPTURE(what);
    try {
      make();
      FAIL("no SslError");
    } catch (const SslError& e) {
      CHECK(e.code() == SslErrc::badConfiguration);
      CHECK(std::string(e.what()).find("TLS configuration did not load") == 0);
    }
  };
  SslContext::Options none;
  none.logErrors = false;
  expectBad([&] { SslContext::forServer(none); }, "server without a certificate");
  auto garbage = pki().serverOptions();
  garbage.certificateChainPem = "not a certificate";
  expectBad([&] { SslContext::forServer(garbage); }, "garbage certificate");
  auto mismatched = pki().serverOptions();
  mismatched.privateKeyPem = selfSigned(CertificateSpec{}).keyPem;
  expectBad([&] { SslContext::forServer(mismatched); }, "key of another certificate");
  auto noKey = pki().serverOptions();
  noKey.privateKeyPem.clear();
  expectBad([&] { SslContext::forServer(noKey); }, "certificate without key");
  auto missingFile = pki().serverOptions();
  missingFile.certificateChainPem.clear();
  missingFile.certificateChainFile = "/nonexistent/cert.pem";
  expectBad([&] { SslContext::forServer(missingFile); }, "missing file");
  auto badCiphers = pki().clientOptions();
  badCiphers.cipherList = "NO-SUCH-CIPHER";
  expectBad([&] { SslContext::forClient(badCiphers); }, "cipher list");
  auto badSuites = pki().clientOptions();
  badSuites.cipherSuites = "TLS_NO_SUCH_SUITE";
  expectBad([&] { SslContext::forClient(badSuites); }, "cipher suites");
  auto badGroups = pki().clientOptions();
  badGroups.groups = "no-such-group";
  expectBad([&] { SslContext::forClient(badGroups); }, "groups");
  auto badRange = pki().clientOptions();
  badRange.minVersion = TlsVersion::tls13;
  badRange.maxVersion = TlsVersion::tls12;
  expectBad([&] { SslContext::forClient(badRange); }, "version range");
  auto badAlpn = pki().clientOptions();
  badAlpn.alpnProtocols = {""};
  expectBad([&] { SslContext::forClient(badAlpn); }, "empty ALPN protocol");
  auto mtls = pki().serverOptions();
  mtls.clientAuth = ClientAuth::require;
  expectBad([&] { SslContext::forServer(mtls); }, "client auth without CAs");
  expectBad([&] { SslContext::forClient()->newHandler(); }, "client context, server handler");
  expectBad([&] { SslContext::forClient()->addServerName("x", nullptr); }, "SNI on a client");
  // Nothing was left behind by the failures.
  CHECK(SslContext::liveObjects().contexts == 0);
}

TEST_CASE("the client session cache: one session per host and port, bounded, clearable") {
  auto co = pki().clientOptions();
  co.sessionCacheSize = 2;
  auto client = SslContext::forClient(co);
  auto server = SslContext::forServer(pki().serverOptions());
  for (std::uint16_t port : {1, 2, 3}) {
    TlsEnd c(client->newHandler("localhost", port));
    TlsEnd s(server->newHandler());
    pump(c, s);
    c.ch->close();
    pump(c, s);
  }
  CHECK(client->cachedSessions() == 2);
  client->clearSessionCache();
  CHECK(client->cachedSessions() == 0);
  // Tickets off: nothing to cache, nothing resumed.
  co.sessionTickets = false;
  auto noTickets = SslContext::forClient(co);
  TlsEnd c(noTickets->newHandler("localhost", 1));
  TlsEnd s(server->newHandler());
  pump(c, s);
  CHECK(noTickets->cachedSessions() == 0);
}

TEST_CASE("failure lines are limited per second; the rest are counted") {
  auto so = pki().serverOptions();
  so.logErrors = true;
  so.maxLogLinesPerSecond = 2;
  auto server = SslContext::forServer(so);
  TempDir dir("ssl-log");
  const auto logPath = dir.path / "stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, 2);
  auto plaintextClient = [&] {
    EmbeddedChannel ch(server->newHandler());
    ch.writeInbound(Unpooled::copiedBuffer("GET / HTTP/1.1\r\n\r\n"));
    CHECK(!ch.isOpen());
  };
  for (int i = 0; i < 5; ++i) plaintextClient();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  plaintextClient();  // a new second: the held-back count, then this line
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(fd);
  const std::string log = readFile(logPath);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = log.find("the peer does not speak TLS", at)) != std::string::npos;
       ++at) {
    ++lines;
  }
  CHECK(lines == 3);
  CHECK(log.find("netbuf: 3 more TLS failures not logged (at most 2 lines a second)") !=
        std::string::npos);
  CHECK(log.find("netbuf: TLS handshake failed on channel embedded -> embedded: the peer does "
                 "not speak TLS") != std::string::npos);
}

TEST_CASE("no OpenSSL object outlives its owner") {
  const auto before = SslContext::liveObjects();
  {
    auto client = SslContext::forClient(pki().clientOptions());
    auto server = SslContext::forServer(pki().serverOptions());
    for (int i = 0; i < 2; ++i) {
      TlsEnd c(client->newHandler("localhost", 443));
      TlsEnd s(server->newHandler());
      pump(c, s);
      CHECK(SslContext::liveObjects().connections == before.connections + 2);
      c.ch->close();
      pump(c, s);
    }
    CHECK(SslContext::liveObjects().contexts == before.contexts + 2);
    CHECK(SslContext::liveObjects().sessions == before.sessions + 1);
  }
  const auto after = SslContext::liveObjects();
  CHECK(after.contexts == before.contexts);
  CHECK(after.connections == before.connections);
  CHECK(after.sessions == before.sessions);
}
