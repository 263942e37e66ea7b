#include <netbuf/tls/ssl_handler.hpp>

#include <doctest/doctest.h>
#include <openssl/ssl.h>

#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/tls/ssl_errc.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/file_region.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "support/test_certificates.hpp"
#include "support/tls_pair.hpp"
#include "support/tls_test_pki.hpp"

using namespace netbuf;
using namespace netbuf::test;
using namespace std::chrono_literals;

namespace {

const TlsTestPki& pki() {
  static const TlsTestPki p;
  return p;
}

struct Pair {
  TlsEnd client;
  TlsEnd server;
  Pair(const std::shared_ptr<SslContext>& c, const std::shared_ptr<SslContext>& s,
       std::string host = "localhost")
      : client(c->newHandler(std::move(host), 443)), server(s->newHandler()) {}
};

Pair handshake(const SslContext::Options& co, const SslContext::Options& so,
               std::string host = "localhost") {
  Pair p(SslContext::forClient(co), SslContext::forServer(so), std::move(host));
  pump(p.client, p.server);
  return p;
}

class CountingListener final : public WriteListener {
 public:
  std::vector<std::error_code> results;
  void operationComplete(std::error_code ec) noexcept override { results.push_back(ec); }
};

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 13) % 26);
  return s;
}

}  // namespace

TEST_CASE("handshake and echo with TLS 1.3 and TLS 1.2") {
  for (TlsVersion v : {TlsVersion::tls13, TlsVersion::tls12}) {
    auto co = pki().clientOptions();
    co.minVersion = co.maxVersion = v;
    auto p = handshake(co, pki().serverOptions());
    REQUIRE(p.client.handshakeSucceeded());
    REQUIRE(p.server.handshakeSucceeded());
    const auto& ev = p.client.rec->handshakes[0];
    CHECK(ev.protocol == (v == TlsVersion::tls13 ? "TLSv1.3" : "TLSv1.2"));
    CHECK(!ev.cipher.empty());
    CHECK(ev.serverName == "localhost");
    CHECK(ev.peerCertificate.commonName() == "localhost");
    CHECK(ev.peerCertificate.dnsNames() == std::vector<std::string>{"localhost"});
    CHECK(ev.peerCertificate.ipAddresses() == std::vector<std::string>{"127.0.0.1", "::1"});
    CHECK(!ev.resumed);
    CHECK(p.server.rec->handshakes[0].serverName == "localhost");
    CHECK(p.server.rec->handshakes[0].peerCertificate.empty());  // no client certificate
    CHECK(p.client.ssl->isHandshakeDone());
    CHECK(p.client.ssl->protocol() == ev.protocol);
    CHECK(p.client.ssl->cipher() == ev.cipher);

    p.client.send("hello over TLS");
    pump(p.client, p.server);
    CHECK(p.server.rec->received == "hello over TLS");
    p.server.send("and back");
    pump(p.client, p.server);
    CHECK(p.client.rec->received == "and back");
  }
}

TEST_CASE("writes made before the handshake wait for it, in order") {
  Pair p(SslContext::forClient(pki().clientOptions()),
         SslContext::forServer(pki().serverOptions()));
  CountingListener l;
  p.client.ch->write(Unpooled::copiedBuffer("early "), &l);
  p.client.ch->writeAndFlush(Unpooled::copiedBuffer("bird"));
  CHECK(l.results.empty());
  pump(p.client, p.server);
  REQUIRE(p.client.handshakeSucceeded());
  CHECK(p.server.rec->received == "early bird");
  REQUIRE(l.results.size() == 1);
  CHECK(!l.results[0]);
}

TEST_CASE("small writes are gathered into full records; large ones are split at 16 KiB") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  REQUIRE(p.client.handshakeSucceeded());
  (void)p.client.takeOutbound();

  // 200 writes of 10 bytes, one flush: one record, not 200.
  std::string expected;
  for (int i = 0; i < 200; ++i) {
    std::string piece = "piece-" + std::to_string(1000 + i);
    expected += piece;
    p.client.ch->write(Unpooled::copiedBuffer(piece));
  }
  p.client.ch->flush();
  std::string wire = p.client.takeOutbound();
  auto records = tlsRecords(wire);
  CHECK(records.size() == 1);
  p.server.feed(wire);
  CHECK(p.server.rec->received == expected);

  // 100 KiB in one buffer: seven records, each at most 16 KiB of plaintext.
  p.server.rec->received.clear();
  const std::string big = pattern(100 * 1024);
  p.client.send(big);
  wire = p.client.takeOutbound();
  records = tlsRecords(wire);
  CHECK(records.size() == 7);
  for (const auto& r : records) CHECK(r.length <= SslHandler::kMaxRecordPlaintext + 256);
  p.server.feed(wire);
  CHECK(p.server.rec->received == big);

  // A composite of three pieces and a small tail, as gathered records.
  p.server.rec->received.clear();
  CompositeByteBuf comp;
  comp.addComponent(true, Unpooled::copiedBuffer(big.substr(0, 5000)));
  comp.addComponent(true, Unpooled::copiedBuffer(big.substr(5000, 20000)));
  comp.addComponent(true, Unpooled::copiedBuffer(big.substr(25000, 100)));
  p.client.ch->write(std::move(comp));
  p.client.ch->writeAndFlush(AnyByteBuf(Unpooled::copiedBuffer(std::string_view("!"))));
  pump(p.client, p.server);
  CHECK(p.server.rec->received == big.substr(0, 25100) + "!");
}

TEST_CASE(
    "a write's listener hears once its ciphertext is written; later writes fail when closed") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  CountingListener a, b, c;
  p.client.ch->write(Unpooled::copiedBuffer("a"), &a);
  p.client.ch->write(Unpooled::copiedBuffer(pattern(40000)), &b);
  CHECK(a.results.empty());
  p.client.ch->flush();
  REQUIRE(a.results.size() == 1);
  REQUIRE(b.results.size() == 1);
  CHECK(!a.results[0]);
  CHECK(!b.results[0]);
  p.client.ch->close();
  p.client.ch->writeAndFlush(Unpooled::copiedBuffer("late"), &c);
  REQUIRE(c.results.size() == 1);
  CHECK(c.results[0] == ChannelErrc::closed);
}

TEST_CASE("every inbound byte boundary: the handshake and the records fed one byte at a time") {
  Pair p(SslContext::forClient(pki().clientOptions()),
         SslContext::forServer(pki().serverOptions()));
  p.client.send("ping");  // held until the handshake ends
  for (int round = 0; round < 8; ++round) {
    for (char ch : p.client.takeOutbound()) p.server.feed(std::string_view(&ch, 1));
    for (char ch : p.server.takeOutbound()) p.client.feed(std::string_view(&ch, 1));
  }
  REQUIRE(p.client.handshakeSucceeded());
  REQUIRE(p.server.handshakeSucceeded());
  CHECK(p.server.rec->received == "ping");

  // Two records split at every point between two reads.
  const std::string text = pattern(300);
  p.server.send(text.substr(0, 150));
  p.server.ch->writeAndFlush(Unpooled::copiedBuffer(text.substr(150)));
  const std::string wire = p.server.takeOutbound();
  REQUIRE(tlsRecords(wire).size() == 2);
  // The same client cannot take the bytes twice: each split gets a fresh pair with the same
  // ciphertext shape, checked against the plaintext.
  for (std::size_t cut = 1; cut < wire.size(); cut += 7) {
    auto q = handshake(pki().clientOptions(), pki().serverOptions());
    q.server.send(text.substr(0, 150));
    q.server.ch->writeAndFlush(Unpooled::copiedBuffer(text.substr(150)));
    const std::string w = q.server.takeOutbound();
    REQUIRE(w.size() == wire.size());
    q.client.feed(std::string_view(w).substr(0, cut));
    q.client.feed(std::string_view(w).substr(cut));
    CHECK(q.client.rec->received == text);
  }
}

TEST_CASE("a corrupted record fails the session with badRecord and closes that channel") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  p.server.send("secret");
  std::string wire = p.server.takeOutbound();
  REQUIRE(!wire.empty());
  wire[wire.size() - 3] ^= 0x40;  // inside the authentication tag
  p.client.feed(wire);
  CHECK(p.client.rec->received.empty());
  REQUIRE(p.client.rec->closes.size() == 1);
  CHECK(p.client.rec->closes[0].error == SslErrc::badRecord);
  CHECK(!p.client.ch->isOpen());
  // The alert OpenSSL wrote went out first: the server learns why.
  p.server.feed(p.client.takeOutbound());
  REQUIRE(p.server.rec->closes.size() == 1);
  CHECK(p.server.rec->closes[0].error == SslErrc::alertReceived);
}

TEST_CASE("a plaintext client on the TLS port is refused as notTls") {
  TlsEnd server(SslContext::forServer(pki().serverOptions())->newHandler());
  server.feed("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
  CHECK(server.handshakeError() == SslErrc::notTls);
  CHECK(!server.ch->isOpen());
  CHECK(server.rec->received.empty());
}

TEST_CASE("a handshake cut half way: closedDuringHandshake on both ends") {
  Pair p(SslContext::forClient(pki().clientOptions()),
         SslContext::forServer(pki().serverOptions()));
  const std::string hello = p.client.takeOutbound();
  p.server.feed(std::string_view(hello).substr(0, hello.size() / 2));
  p.server.ch->finish();
  CHECK(p.server.handshakeError() == SslErrc::closedDuringHandshake);
  p.client.ch->finish();
  CHECK(p.client.handshakeError() == SslErrc::closedDuringHandshake);
}

TEST_CASE("a handshake that does not complete in time fails with handshakeTimeout") {
  auto ctx = SslContext::forServer(pki().serverOptions());
  auto handler = ctx->newHandler();
  handler->setHandshakeTimeout(5s);
  TlsEnd server(std::move(handler));
  server.ch->advanceTimeBy(4s);
  CHECK(server.ch->isOpen());
  server.ch->advanceTimeBy(2s);
  CHECK(server.handshakeError() == SslErrc::handshakeTimeout);
  CHECK(!server.ch->isOpen());
}

TEST_CASE("close sends close_notify; the peer answers and both see a clean close") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  p.client.ch->write(Unpooled::copiedBuffer("last words"));  // queued: goes before close_notify
  p.client.ch->close();
  CHECK(!p.client.ch->isOpen());  // the close_notify was written at once
  const std::string wire = p.client.takeOutbound();
  p.server.feed(wire);
  CHECK(p.server.rec->received == "last words");
  REQUIRE(p.server.rec->closes.size() == 1);
  CHECK(p.server.rec->closes[0].isSuccess());
  CHECK(!p.server.ch->isOpen());  // answered with its own close_notify and closed
  p.client.ch->runPendingTasks();
  // The side that closed first sees no truncation: the peer owes it nothing after close_notify.
  CHECK(p.client.rec->closes.empty());
  CHECK(p.client.rec->inactive == 1);
}

TEST_CASE("writes after the channel went inactive fail at once") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  p.client.ch->finish();
  CountingListener l;
  p.client.ch->pipeline().context("handler0")->write(Unpooled::copiedBuffer("late"), &l);
  REQUIRE(l.results.size() == 1);
  CHECK(l.results[0] == ChannelErrc::closed);
}

TEST_CASE("listeners that write, flush and close from inside a large flush") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  // Each completed write queues the next one (as a chunked writer does) until five are sent;
  // the fifth's listener closes the channel: everything queued must still precede close_notify.
  struct Chain final : WriteListener {
    EmbeddedChannel* ch;
    std::string* sent;
    int left = 5;
    int completions = 0;
    void operationComplete(std::error_code ec) noexcept override {
      CHECK(!ec);
      ++completions;
      if (--left > 0) {
        std::string piece(300 * 1024, static_cast<char>('a' + left));
        *sent += piece;
        ch->writeAndFlush(Unpooled::copiedBuffer(piece), this);
      } else {
        ch->write(Unpooled::copiedBuffer("tail"));
        *sent += "tail";
        ch->close();
      }
    }
  } chain;
  std::string sent(300 * 1024, 'z');
  chain.ch = p.client.ch.get();
  chain.sent = &sent;
  p.client.ch->writeAndFlush(Unpooled::copiedBuffer(sent), &chain);
  CHECK(chain.completions == 5);
  CHECK(!p.client.ch->isOpen());
  p.server.feed(p.client.takeOutbound());
  CHECK(p.server.rec->received == sent);
  REQUIRE(p.server.rec->closes.size() == 1);
  CHECK(p.server.rec->closes[0].isSuccess());  // close_notify came last, after "tail"
}

TEST_CASE("closeOutbound from a listener inside a flush goes after the queued writes") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  p.server.ssl->setCloseOnPeerCloseNotify(false);
  struct HalfClose final : WriteListener {
    SslHandler* ssl;
    int calls = 0;
    void operationComplete(std::error_code) noexcept override {
      ++calls;
      ssl->closeOutbound();
    }
  } half;
  half.ssl = p.client.ssl;
  const std::string first(400 * 1024, 'f');
  p.client.ch->write(Unpooled::copiedBuffer(first), &half);
  p.client.ch->writeAndFlush(Unpooled::copiedBuffer(std::string(1000, 's')));
  CHECK(half.calls == 1);
  CHECK(p.client.ch->isOpen());
  p.server.feed(p.client.takeOutbound());
  CHECK(p.server.rec->received == first + std::string(1000, 's'));
  REQUIRE(p.server.rec->closes.size() == 1);
  CHECK(p.server.rec->closes[0].isSuccess());
}

TEST_CASE("half-close: the peer's close_notify ends reading only; writing goes on") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  p.server.ssl->setCloseOnPeerCloseNotify(false);
  p.client.ssl->setCloseOnPeerCloseNotify(false);
  p.client.send("request");
  p.client.ssl->closeOutbound();
  CountingListener late;
  p.client.ch->writeAndFlush(Unpooled::copiedBuffer("too late"), &late);
  REQUIRE(late.results.size() == 1);
  CHECK(late.results[0] == ChannelErrc::closed);
  pump(p.client, p.server);
  CHECK(p.server.rec->received == "request");
  REQUIRE(p.server.rec->closes.size() == 1);
  CHECK(p.server.rec->closes[0].isSuccess());
  CHECK(p.server.ch->isOpen());
  p.server.send("response after the client's close_notify");
  pump(p.client, p.server);
  CHECK(p.client.rec->received == "response after the client's close_notify");
  p.server.ch->close();
  pump(p.client, p.server);
  REQUIRE(p.client.rec->closes.size() == 1);
  CHECK(p.client.rec->closes[0].isSuccess());
}

TEST_CASE("a connection the peer ends without close_notify is reported as truncated") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  p.server.send("partial");
  p.client.feed(p.server.takeOutbound());
  // The socket's EOF, as the transport reports it: channelInactive, no close from this side.
  p.client.ch->pipeline().fireChannelInactive();
  CHECK(p.client.rec->received == "partial");
  REQUIRE(p.client.rec->closes.size() == 1);
  CHECK(p.client.rec->closes[0].error == SslErrc::truncated);
}

TEST_CASE("client verification: every failure is named") {
  const TestCa& ca = pki().ca;
  struct Case {
    const char* name;
    TestKeyPair pair;
    std::string host;
    SslErrc expected;
  };
  CertificateSpec expired;
  expired.notBefore = std::chrono::hours(-48);
  expired.notAfter = std::chrono::hours(-24);
  CertificateSpec future;
  future.notBefore = std::chrono::hours(24);
  future.notAfter = std::chrono::hours(48);
  CertificateSpec other;
  other.commonName = "other.example";
  other.dnsNames = {"other.example"};
  other.ipAddresses = {"10.1.2.3"};
  std::vector<Case> cases = {
      {"expired", ca.issue(expired), "localhost", SslErrc::certificateExpired},
      {"not yet valid", ca.issue(future), "localhost", SslErrc::certificateNotYetValid},
      {"self-signed", selfSigned(CertificateSpec{}), "localhost", SslErrc::unknownCa},
      {"other CA", TestCa("another CA").issue(CertificateSpec{}), "localhost", SslErrc::unknownCa},
      {"name mismatch", ca.issue(other), "localhost", SslErrc::hostnameMismatch},
      {"IP mismatch", ca.issue(other), "127.0.0.1", SslErrc::hostnameMismatch},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    auto so = pki().serverOptions();
    so.certificateChainPem = c.pair.chainPem;
    so.privateKeyPem = c.pair.keyPem;
    auto p = handshake(pki().clientOptions(), so, c.host);
    CHECK(p.client.handshakeError() == c.expected);
    CHECK(!p.client.ch->isOpen());
    // The server hears of it by the client's alert.
    CHECK(!p.server.handshakeSucceeded());
  }
  // The right names pass: a DNS name and an IP address in the certificate.
  for (const char* host : {"localhost", "127.0.0.1", "::1"}) {
    CAPTURE(host);
    auto p = handshake(pki().clientOptions(), pki().serverOptions(), host);
    CHECK(p.client.handshakeSucceeded());
  }
  // insecureSkipVerification accepts anything, loudly named.
  auto co = pki().clientOptions();
  co.insecureSkipVerification = true;
  auto so = pki().serverOptions();
  const TestKeyPair self = selfSigned(CertificateSpec{});
  so.certificateChainPem = self.chainPem;
  so.privateKeyPem = self.keyPem;
  auto p = handshake(co, so, "wrong.name");
  CHECK(p.client.handshakeSucceeded());
}

TEST_CASE("mutual TLS: required, optional, and a client without a certificate") {
  CertificateSpec clientSpec;
  clientSpec.commonName = "client-7";
  clientSpec.serverAuth = false;
  clientSpec.clientAuth = true;
  const TestKeyPair clientCert = pki().ca.issue(clientSpec);

  auto so = pki().serverOptions();
  so.trustedCaPem = pki().ca.certPem();
  so.clientAuth = ClientAuth::require;
  auto co = pki().clientOptions();
  co.certificateChainPem = clientCert.chainPem;
  co.privateKeyPem = clientCert.keyPem;
  for (TlsVersion v : {TlsVersion::tls13, TlsVersion::tls12}) {
    co.maxVersion = v;
    auto p = handshake(co, so);
    REQUIRE(p.server.handshakeSucceeded());
    CHECK(p.server.rec->handshakes[0].peerCertificate.commonName() == "client-7");
    p.client.send("authenticated");
    pump(p.client, p.server);
    CHECK(p.server.rec->received == "authenticated");
  }

  auto anonymous = pki().clientOptions();
  auto refused = handshake(anonymous, so);
  CHECK(refused.server.handshakeError() == SslErrc::peerCertificateRequired);
  CHECK(!refused.server.ch->isOpen());

  // A client certificate from another CA is refused as unknownCa on the server.
  const TestKeyPair stranger = TestCa("stranger CA").issue(clientSpec);
  auto co2 = pki().clientOptions();
  co2.certificateChainPem = stranger.chainPem;
  co2.privateKeyPem = stranger.keyPem;
  auto p2 = handshake(co2, so);
  CHECK(p2.server.handshakeError() == SslErrc::unknownCa);

  so.clientAuth = ClientAuth::optional;
  auto optional = handshake(anonymous, so);
  CHECK(optional.server.handshakeSucceeded());
  CHECK(optional.server.rec->handshakes[0].peerCertificate.empty());
}

TEST_CASE("ALPN: the server's preference among the client's; none in common is refused") {
  auto so = pki().serverOptions();
  so.alpnProtocols = {"h2", "http/1.1"};
  auto co = pki().clientOptions();
  co.alpnProtocols = {"http/1.1", "h2"};
  auto p = handshake(co, so);
  REQUIRE(p.client.handshakeSucceeded());
  CHECK(p.client.rec->handshakes[0].applicationProtocol == "h2");
  CHECK(p.server.ssl->applicationProtocol() == "h2");

  co.alpnProtocols = {"spdy/3"};
  auto q = handshake(co, so);
  CHECK(q.server.handshakeError() == SslErrc::noApplicationProtocol);
  CHECK(q.client.handshakeError() == SslErrc::noApplicationProtocol);  // the alert names it

  co.alpnProtocols = {};  // a client without ALPN gets none
  auto r = handshake(co, so);
  REQUIRE(r.client.handshakeSucceeded());
  CHECK(r.client.rec->handshakes[0].applicationProtocol.empty());
}

TEST_CASE("SNI: the server answers a registered name with that context's certificate") {
  CertificateSpec apiSpec;
  apiSpec.commonName = "api.example";
  apiSpec.dnsNames = {"api.example"};
  const TestKeyPair api = pki().ca.issue(apiSpec);
  CertificateSpec wildSpec;
  wildSpec.commonName = "*.apps.example";
  wildSpec.dnsNames = {"*.apps.example"};
  const TestKeyPair wild = pki().ca.issue(wildSpec);

  auto server = SslContext::forServer(pki().serverOptions());
  auto apiOptions = pki().serverOptions();
  apiOptions.certificateChainPem = api.chainPem;
  apiOptions.privateKeyPem = api.keyPem;
  server->addServerName("API.example", SslContext::forServer(apiOptions));
  auto wildOptions = pki().serverOptions();
  wildOptions.certificateChainPem = wild.chainPem;
  wildOptions.privateKeyPem = wild.keyPem;
  server->addServerName("*.apps.example", SslContext::forServer(wildOptions));
  auto client = SslContext::forClient(pki().clientOptions());

  for (const auto& names :
       {std::pair{"api.example", "api.example"}, std::pair{"one.apps.example", "*.apps.example"},
        std::pair{"localhost", "localhost"}}) {
    const std::string host = names.first;
    const std::string cn = names.second;
    CAPTURE(host);
    Pair p(client, server, host);
    pump(p.client, p.server);
    REQUIRE(p.client.handshakeSucceeded());
    CHECK(p.client.rec->handshakes[0].peerCertificate.commonName() == cn);
    CHECK(p.server.rec->handshakes[0].serverName == host);
  }
  // No registered name: the default certificate, which does not name the host.
  Pair p(client, server, "a.b.apps.example");
  pump(p.client, p.server);
  CHECK(p.client.handshakeError() == SslErrc::hostnameMismatch);
}

TEST_CASE("session resumption: the second connection to a host resumes (TLS 1.3 and 1.2)") {
  for (TlsVersion v : {TlsVersion::tls13, TlsVersion::tls12}) {
    auto co = pki().clientOptions();
    co.maxVersion = v;
    auto client = SslContext::forClient(co);
    auto server = SslContext::forServer(pki().serverOptions());
    {
      Pair p(client, server);
      pump(p.client, p.server);
      REQUIRE(p.client.handshakeSucceeded());
      CHECK(!p.client.rec->handshakes[0].resumed);
      // Closed with close_notify: a session whose connection just stopped is not resumed.
      p.client.ch->close();
      pump(p.client, p.server);
    }
    CHECK(client->cachedSessions() == 1);
    // Every later connection resumes, the third too (a resumed TLS 1.2 handshake brings no
    // new session: the cache keeps the one it has).
    for (int i = 0; i < 2; ++i) {
      Pair q(client, server);
      pump(q.client, q.server);
      REQUIRE(q.client.handshakeSucceeded());
      CHECK(q.client.rec->handshakes[0].resumed);
      CHECK(q.server.rec->handshakes[0].resumed);
      q.client.ch->close();
      pump(q.client, q.server);
    }
    // A connection that ends without close_notify spoils its session (OpenSSL's rule): the
    // next one makes a full handshake.
    {
      Pair q(client, server);
      pump(q.client, q.server);
      CHECK(q.client.rec->handshakes[0].resumed);
    }
    Pair q(client, server);
    pump(q.client, q.server);
    REQUIRE(q.client.handshakeSucceeded());
    CHECK(!q.client.rec->handshakes[0].resumed);
    // Another port is another peer: no session to offer.
    TlsEnd c3(client->newHandler("localhost", 8443));
    TlsEnd s3(server->newHandler());
    pump(c3, s3);
    REQUIRE(c3.handshakeSucceeded());
    CHECK(!c3.rec->handshakes[0].resumed);
  }
}

TEST_CASE("session cache: a connection dropped without close_notify spoils only its own session") {
  // TLS 1.3: every connection stores the ticket it was issued. A connection that resumed and was
  // then dropped without close_notify forgets only the entry it stored: a newer one, stored by a
  // connection that ended cleanly meanwhile, is still offered and resumed.
  auto client = SslContext::forClient(pki().clientOptions());
  auto server = SslContext::forServer(pki().serverOptions());
  {
    Pair first(client, server);
    pump(first.client, first.server);
    REQUIRE(first.client.handshakeSucceeded());
    first.client.ch->close();
    pump(first.client, first.server);
  }
  auto dropped = std::make_unique<Pair>(client, server);
  pump(dropped->client, dropped->server);
  REQUIRE(dropped->client.handshakeSucceeded());
  CHECK(dropped->client.rec->handshakes[0].resumed);
  {
    Pair clean(client, server);
    pump(clean.client, clean.server);
    REQUIRE(clean.client.handshakeSucceeded());
    clean.client.ch->close();
    pump(clean.client, clean.server);
  }
  dropped.reset();  // no close_notify: its (older) entry is already replaced
  CHECK(client->cachedSessions() == 1);
  Pair next(client, server);
  pump(next.client, next.server);
  REQUIRE(next.client.handshakeSucceeded());
  CHECK(next.client.rec->handshakes[0].resumed);
}

TEST_CASE("a renegotiation attempt closes the connection") {
  // A raw OpenSSL client over memory BIOs: netbuf's own client refuses to renegotiate.
  auto server = SslContext::forServer(pki().serverOptions());
  TlsEnd s(server->newHandler());
  SSL_CTX* cctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_max_proto_version(cctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, nullptr);
  SSL* c = SSL_new(cctx);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(c, in, out);
  SSL_set_connect_state(c);
  auto exchange = [&] {
    for (int i = 0; i < 6; ++i) {
      SSL_do_handshake(c);
      char buf[16384];
      std::string toServer;
      int n;
      while ((n = BIO_read(out, buf, sizeof buf)) > 0) toServer.append(buf, n);
      s.feed(toServer);
      const std::string back = s.takeOutbound();
      BIO_write(in, back.data(), static_cast<int>(back.size()));
    }
  };
  exchange();
  REQUIRE(SSL_is_init_finished(c));
  REQUIRE(s.handshakeSucceeded());
  REQUIRE(SSL_renegotiate(c) == 1);
  exchange();
  REQUIRE(s.rec->closes.size() == 1);
  CHECK(s.rec->closes[0].error == SslErrc::renegotiationRefused);
  CHECK(!s.ch->isOpen());
  SSL_free(c);
  SSL_CTX_free(cctx);
}

TEST_CASE("a file region is read and encrypted (TLS cannot sendfile)") {
  TempDir dir("ssl-file");
  const std::string content = pattern(70000);
  const auto path = dir.path / "body.bin";
  writeFile(path, content);
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  CountingListener l;
  p.server.ch->write(Unpooled::copiedBuffer("head|"));
  p.server.ch->writeAndFlush(FileRegion::open(path, 100, 50000), &l);
  pump(p.client, p.server);
  CHECK(p.client.rec->received == "head|" + content.substr(100, 50000));
  REQUIRE(l.results.size() == 1);
  CHECK(!l.results[0]);
}

TEST_CASE("a flush larger than one socket write stops while the channel is not writable") {
  auto p = handshake(pki().clientOptions(), pki().serverOptions());
  const std::string big = pattern(1024 * 1024);
  p.server.ch->setWritable(false);
  CountingListener l;
  p.server.ch->writeAndFlush(Unpooled::copiedBuffer(big), &l);
  std::string wire = p.server.takeOutbound();
  CHECK(wire.size() >= SslHandler::kMaxCiphertextPerWrite);
  CHECK(wire.size() < 2 * SslHandler::kMaxCiphertextPerWrite);
  CHECK(l.results.empty());
  p.server.ch->setWritable(true);  // channelWritabilityChanged: the flush goes on
  wire += p.server.takeOutbound();
  p.client.feed(wire);
  CHECK(p.client.rec->received == big);
  REQUIRE(l.results.size() == 1);
  CHECK(!l.results[0]);
}
