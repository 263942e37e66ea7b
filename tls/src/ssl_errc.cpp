#include <netbuf/tls/ssl_errc.hpp>
#include <netbuf/tls/ssl_error.hpp>
#include <string>

namespace netbuf {

namespace {

class SslCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "netbuf.ssl"; }
  std::string message(int ev) const override {
    switch (static_cast<SslErrc>(ev)) {
      case SslErrc::handshakeFailed:
        return "TLS handshake failed";
      case SslErrc::handshakeTimeout:
        return "TLS handshake timed out";
      case SslErrc::notTls:
        return "the peer does not speak TLS";
      case SslErrc::unsupportedVersion:
        return "no TLS protocol version in common";
      case SslErrc::noSharedCipher:
        return "no cipher suite or group in common";
      case SslErrc::certificateExpired:
        return "the peer's certificate has expired";
      case SslErrc::certificateNotYetValid:
        return "the peer's certificate is not valid yet";
      case SslErrc::unknownCa:
        return "the peer's certificate does not chain to a trusted root";
      case SslErrc::hostnameMismatch:
        return "the peer's certificate does not name the host";
      case SslErrc::certificateVerifyFailed:
        return "the peer's certificate failed verification";
      case SslErrc::peerCertificateRequired:
        return "the client sent no certificate and one is required";
      case SslErrc::noApplicationProtocol:
        return "no ALPN protocol in common";
      case SslErrc::alertReceived:
        return "the peer sent a fatal TLS alert";
      case SslErrc::badRecord:
        return "a TLS record failed to decrypt or authenticate";
      case SslErrc::renegotiationRefused:
        return "the peer started a TLS renegotiation";
      case SslErrc::closedDuringHandshake:
        return "the connection closed during the TLS handshake";
      case SslErrc::truncated:
        return "the connection closed without a TLS close_notify";
      case SslErrc::protocolError:
        return "TLS protocol error";
      case SslErrc::badConfiguration:
        return "TLS configuration did not load";
    }
    return "unknown TLS error";
  }
};

}  // namespace

const std::error_category& sslCategory() noexcept {
  static const SslCategory category;
  return category;
}

SslError::SslError(SslErrc code, const std::string& detail)
    : Error(detail.empty() ? make_error_code(code).message()
                           : make_error_code(code).message() + ": " + detail),
      code_(code) {}

}  // namespace netbuf
