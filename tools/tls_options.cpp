// tls_options.hpp: the tool's TLS options as SslContexts.
#include "tls_options.hpp"
// (first include: proves the header is self-contained)

#include <cstdio>
#include <netbuf/tls/ssl_context.hpp>
#include <utility>

namespace netbuf::tools {

std::shared_ptr<SslContext> serverTlsContext(const ParsedOptions& options,
                                             std::vector<std::string> alpn) {
  const bool cert = options.given("--tls-cert");
  const bool key = options.given("--tls-key");
  const bool clientCa = options.given("--tls-client-ca");
  if (!cert && !key && !clientCa) return nullptr;
  if (cert != key) throw UsageError("--tls-cert and --tls-key are given together");
  if (!cert) throw UsageError("--tls-client-ca needs --tls-cert and --tls-key");
  SslContext::Options o;
  o.certificateChainFile = options.text("--tls-cert");
  o.privateKeyFile = options.text("--tls-key");
  if (clientCa) {
    o.trustedCaFile = options.text("--tls-client-ca");
    o.clientAuth = ClientAuth::require;
  }
  o.alpnProtocols = std::move(alpn);
  return SslContext::forServer(o);
}

std::shared_ptr<SslContext> clientTlsContext(const ParsedOptions& options) {
  const bool insecure = options.flag("--insecure");
  if (insecure && options.given("--cacert")) {
    throw UsageError("--cacert and --insecure exclude each other");
  }
  SslContext::Options o;
  if (options.given("--cacert")) o.trustedCaFile = options.text("--cacert");
  if (insecure) {
    o.insecureSkipVerification = true;
    std::fprintf(stderr,
                 "netbuf: warning: --insecure: the server's certificate is not verified; the "
                 "connection is encrypted, but anyone on the path can impersonate the server\n");
  }
  return SslContext::forClient(o);
}

}  // namespace netbuf::tools
