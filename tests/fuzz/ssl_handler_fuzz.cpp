// libFuzzer target for SslHandler (ssl_handler.hpp): whatever bytes a peer sends, in whatever
// reads, a server handler (or a client handler that has sent its ClientHello) never crashes,
// never hands on plaintext before a successful handshake, fires exactly one handshake event once
// it fails and is then closed, and frees everything (LeakSanitizer, and the OpenSSL object count).
//
// Input layout: [mode] [read-size seed] [stream...]; mode bit 0 picks the client side.
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_handler.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "support/test_certificates.hpp"
#include "support/tls_pair.hpp"

namespace {

struct Contexts {
  std::shared_ptr<netbuf::SslContext> server;
  std::shared_ptr<netbuf::SslContext> client;
  Contexts() {
    const netbuf::test::TestCa ca;
    const auto pair = ca.issue(netbuf::test::CertificateSpec{});
    netbuf::SslContext::Options so;
    so.certificateChainPem = pair.chainPem;
    so.privateKeyPem = pair.keyPem;
    so.logErrors = false;
    server = netbuf::SslContext::forServer(so);
    netbuf::SslContext::Options co;
    co.trustedCaPem = ca.certPem();
    co.logErrors = false;
    client = netbuf::SslContext::forClient(co);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using netbuf::fuzz::check;
  static const Contexts contexts;
  if (size < 2) return 0;
  const bool client = (data[0] & 1) != 0;
  const std::size_t readSize = 1 + data[1] % 64;
  std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
  const auto before = netbuf::SslContext::liveObjects().connections;
  {
    netbuf::test::TlsEnd end(client ? contexts.client->newHandler("localhost", 443)
                                    : contexts.server->newHandler());
    while (!stream.empty() && end.ch->isOpen()) {
      const std::size_t n = std::min(readSize, stream.size());
      end.feed(stream.substr(0, n));
      stream.remove_prefix(n);
      (void)end.takeOutbound();
      const auto& rec = *end.rec;
      check(rec.handshakes.size() <= 1, "more than one handshake event");
      if (!rec.handshakes.empty() && !rec.handshakes[0].isSuccess()) {
        check(!end.ch->isOpen(), "a failed handshake left the channel open");
      }
      if (rec.handshakes.empty() || !rec.handshakes[0].isSuccess()) {
        check(rec.received.empty(), "plaintext before a successful handshake");
      }
    }
    end.ch->finish();
    check(end.rec->handshakes.size() == 1, "no handshake event by the end");
  }
  check(netbuf::SslContext::liveObjects().connections == before, "an SSL object leaked");
  return 0;
}
