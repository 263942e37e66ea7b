#pragma once
// SslHandshakeCompletionEvent: the user event SslHandler fires towards the tail once its handshake
// has ended (Netty's class of the same name): successfully, with what was negotiated, or with the
// reason it failed (the channel is closing then). Handlers after SslHandler wait for it before they
// trust the peer's identity; writes made earlier are held by SslHandler and go out after it.

#include <netbuf/tls/ssl_certificate.hpp>
#include <string>
#include <system_error>

namespace netbuf {

struct SslHandshakeCompletionEvent {
  /// Empty on success; an SslErrc otherwise.
  std::error_code error;
  /// "TLSv1.3", "TLSv1.2".
  std::string protocol;
  /// The cipher suite's IANA name ("TLS_AES_128_GCM_SHA256").
  std::string cipher;
  /// The ALPN protocol chosen ("" when none was).
  std::string applicationProtocol;
  /// The SNI name the client sent (server side) or sent (client side); "" when none.
  std::string serverName;
  /// The peer's certificate (empty when it sent none: a client without mutual TLS).
  SslCertificate peerCertificate;
  /// True when the session was resumed (no full handshake).
  bool resumed = false;

  bool isSuccess() const noexcept { return !error; }
};

}  // namespace netbuf
