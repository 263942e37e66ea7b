#pragma once
// SslCloseCompletionEvent: the user event SslHandler fires towards the tail when the peer's side of
// the TLS session has ended (Netty's class of the same name): with an empty error when its
// close_notify arrived (everything it sent was received whole), or with the reason otherwise
// (SslErrc::truncated: the connection closed without its close_notify, before this side sent
// its own; badRecord, protocolError, renegotiationRefused: the session failed after the
// handshake and the channel is closing).

#include <system_error>

namespace netbuf {

struct SslCloseCompletionEvent {
  std::error_code error;

  bool isSuccess() const noexcept { return !error; }
};

}  // namespace netbuf
