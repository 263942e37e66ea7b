#pragma once
// SslCertificate: an X.509 certificate as TLS presented it (the peer's, in
// SslHandshakeCompletionEvent and SslHandler::peerCertificate()), with the fields a handler checks
// after the handshake: who it names, who issued it, when it is valid, its alternative names.
//
// Ownership: a counted reference on OpenSSL's X509 object (copies share it; no OpenSSL header is
// needed to hold one). Any thread: the object is immutable once the handshake has verified it.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

struct x509_st;  // OpenSSL's X509

namespace netbuf {

class SslCertificate {
 public:
  SslCertificate() noexcept = default;
  /// Takes a new reference on cert (nullptr: an empty certificate).
  explicit SslCertificate(x509_st* cert) noexcept;
  SslCertificate(const SslCertificate& o) noexcept;
  SslCertificate(SslCertificate&& o) noexcept;
  SslCertificate& operator=(SslCertificate o) noexcept;
  ~SslCertificate();

  bool empty() const noexcept { return cert_ == nullptr; }
  explicit operator bool() const noexcept { return cert_ != nullptr; }

  /// The subject and issuer as one line in RFC 2253 order ("CN=localhost,O=netbuf").
  std::string subject() const;
  std::string issuer() const;
  /// The subject's common name ("" when it has none).
  std::string commonName() const;
  /// subjectAltName entries: DNS names, and IP addresses in text form.
  std::vector<std::string> dnsNames() const;
  std::vector<std::string> ipAddresses() const;
  /// The serial number in hexadecimal.
  std::string serialNumber() const;
  std::chrono::system_clock::time_point notBefore() const;
  std::chrono::system_clock::time_point notAfter() const;
  /// The certificate's DER and PEM encodings.
  std::vector<std::byte> der() const;
  std::string pem() const;

  /// OpenSSL's object (no new reference), for what this class does not offer.
  x509_st* native() const noexcept { return cert_; }

 private:
  x509_st* cert_ = nullptr;
};

}  // namespace netbuf
