#pragma once
// SslErrc: why a TLS connection failed, as the ErrorCode of SslHandshakeCompletionEvent,
// SslCloseCompletionEvent and the WriteListeners of writes the failure cut off. Each names the
// reason a user acts on (renew the certificate, fix the trust store, use the right host name);
// SslError (ssl_error.hpp) carries the code with OpenSSL's own detail.

#include <system_error>

namespace netbuf {

enum class SslErrc : int {
  /// The handshake failed for a reason none of the codes below names (OpenSSL's text says why).
  handshakeFailed = 1,
  /// The handshake did not complete within the handler's handshake timeout.
  handshakeTimeout,
  /// The peer does not speak TLS (a plaintext request, an HTTP proxy request, garbage).
  notTls,
  /// No protocol version in common (e.g. a TLS 1.0 client against the TLS 1.2+ default).
  unsupportedVersion,
  /// No cipher suite or group in common.
  noSharedCipher,
  /// The peer's certificate has expired.
  certificateExpired,
  /// The peer's certificate is not valid yet.
  certificateNotYetValid,
  /// The peer's certificate does not chain to a trusted root (self-signed, unknown issuer).
  unknownCa,
  /// The peer's certificate names neither the host name nor the IP address connected to.
  hostnameMismatch,
  /// The peer's certificate failed verification for another reason (OpenSSL's text says which).
  certificateVerifyFailed,
  /// Client authentication is required and the client sent no certificate.
  peerCertificateRequired,
  /// ALPN: the client offered no protocol the server serves.
  noApplicationProtocol,
  /// The peer sent a fatal alert (it rejected this side: its certificate, its version...).
  alertReceived,
  /// A record failed to decrypt or authenticate, or broke the record layer (a corrupted stream).
  badRecord,
  /// The peer started a renegotiation (refused: the connection is closed).
  renegotiationRefused,
  /// The connection closed during the handshake.
  closedDuringHandshake,
  /// The connection closed without the peer's close_notify (possibly truncated data).
  truncated,
  /// Another TLS protocol error after the handshake.
  protocolError,
  /// SslContext: a certificate, key, trust store, cipher or group list that does not load.
  badConfiguration,
};

const std::error_category& sslCategory() noexcept;

inline std::error_code make_error_code(SslErrc e) noexcept {
  return {static_cast<int>(e), sslCategory()};
}

}  // namespace netbuf

template <>
struct std::is_error_code_enum<netbuf::SslErrc> : std::true_type {};
