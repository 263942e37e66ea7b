#pragma once
// RedisSession: what a RedisServer knows about one client connection (Redis's client struct, the
// parts its commands read and change): the protocol HELLO chose, the name CLIENT SETNAME gave,
// the connection id, and whether the connection must close after the reply being written.
//
// Owned by the connection; read and written only on the connection's loop.

#include <cstdint>
#include <netbuf/codec/redis/resp_type.hpp>
#include <string>

namespace netbuf {

struct RedisSession {
  RespProtocol protocol = RespProtocol::Resp2;
  /// CLIENT ID: unique in the server, from 1.
  std::uint64_t id = 0;
  /// CLIENT SETNAME; empty when unnamed.
  std::string name;
  /// "ip:port" of the peer and of the local end (CLIENT INFO / CLIENT LIST).
  std::string peerAddress;
  std::string localAddress;
  /// Set by a command (QUIT, a protocol error) that ends the connection once its reply is out.
  bool closeAfterReply = false;
};

}  // namespace netbuf
