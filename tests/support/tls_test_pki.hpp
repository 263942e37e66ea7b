#pragma once
// The certificates most TLS tests need, made once per use: a CA, a server certificate it issued
// (localhost, 127.0.0.1, ::1) and a client certificate (clientAuth only), with the SslContext
// options that serve and trust them, and the same as PEM files for real peers (openssl s_client,
// curl, redis-cli, Python's ssl).

#include <netbuf/tls/ssl_context.hpp>

#include <string>
#include <string_view>

#include "support/temp_dir.hpp"
#include "support/test_certificates.hpp"

namespace netbuf::test {

struct TlsTestPki {
  TestCa ca;
  TestKeyPair server;
  TestKeyPair client;

  explicit TlsTestPki(std::string caName = "netbuf test CA",
                      std::string clientName = "netbuf test client")
      : ca(std::move(caName)), server(ca.issue(CertificateSpec{})) {
    CertificateSpec spec;
    spec.commonName = std::move(clientName);
    spec.dnsNames = {};
    spec.ipAddresses = {};
    spec.serverAuth = false;
    spec.clientAuth = true;
    client = ca.issue(spec);
  }

  /// A server's options: the server certificate and key (PEM), failures not logged.
  SslContext::Options serverOptions() const {
    SslContext::Options o;
    o.certificateChainPem = server.chainPem;
    o.privateKeyPem = server.keyPem;
    o.logErrors = false;
    return o;
  }
  /// A client's options: trusts the CA only, failures not logged.
  SslContext::Options clientOptions() const {
    SslContext::Options o;
    o.trustedCaPem = ca.certPem();
    o.logErrors = false;
    return o;
  }
};

/// A TlsTestPki's certificates and keys as files in a fresh directory.
struct TlsTestFiles {
  TlsTestPki pki;
  TempDir dir;
  std::string caFile, serverCert, serverKey, clientCert, clientKey;

  explicit TlsTestFiles(std::string_view tag, TlsTestPki p = TlsTestPki())
      : pki(std::move(p)), dir(tag) {
    caFile = writeFile(dir.path, "ca.pem", pki.ca.certPem());
    serverCert = writeFile(dir.path, "server.pem", pki.server.chainPem);
    serverKey = writeFile(dir.path, "server.key", pki.server.keyPem);
    clientCert = writeFile(dir.path, "client.pem", pki.client.chainPem);
    clientKey = writeFile(dir.path, "client.key", pki.client.keyPem);
  }
};

}  // namespace netbuf::test
