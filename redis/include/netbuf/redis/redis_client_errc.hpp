#pragma once
// RedisClientErrc: why a RedisClient command (or connect) failed, as the ErrorCode of its
// completion. A reply the server sends, error replies included (-ERR ..., !...), is no failure:
// it completes with no error and a RedisReply whose isError() is true (as hiredis and redis-py hand
// over typed values). Errors of the transport (connection refused, reset, a connect timeout)
// arrive as Asio's codes; a cancelled command completes with asio::error::operation_aborted.

#include <string_view>
#include <system_error>

namespace netbuf {

class RespValue;

enum class RedisClientErrc : int {
  /// No connection and nowhere to make one: connect() never named a host and Options::host is
  /// empty, or Options::autoConnect is off.
  notConnected = 1,
  /// The connection closed (the server closed it, or it was reset) before the reply came.
  connectionClosed,
  /// The server sent bytes that are not RESP (the decoder's RedisProtocolError), or a reply no
  /// command was waiting for; the connection was closed and every command on it failed.
  protocolError,
  /// No reply within Options::commandTimeout (the reply, when it comes, is discarded); or no
  /// reply to the connection's handshake within Options::connectTimeout (or commandTimeout, when
  /// shorter): the connection was closed, and connect() and the commands waiting for it fail.
  timedOut,
  /// RedisClient::close() ran (or the client was destroyed) before the reply came.
  clientClosed,
  /// A command of the connection's handshake (HELLO, AUTH, SELECT, CLIENT SETNAME, sent first on
  /// each connection from Options) got an error reply; the connection was closed.
  handshakeFailed,
  /// A Pub/Sub command (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs) on a RESP2
  /// connection: its messages would come as ordinary replies that match no command. Use RESP3.
  pubsubNeedsResp3,
  /// A command with no arguments (not even a name).
  emptyCommand,
};

const std::error_category& redisClientCategory() noexcept;

inline std::error_code make_error_code(RedisClientErrc e) noexcept {
  return {static_cast<int>(e), redisClientCategory()};
}

/// The error code of an error reply: its first word ("ERR", "WRONGTYPE", "NOAUTH", "MOVED"...),
/// the text before the first space; empty for a value that is not an error.
std::string_view redisErrorCode(const RespValue& value) noexcept;

}  // namespace netbuf

template <>
struct std::is_error_code_enum<netbuf::RedisClientErrc> : std::true_type {};
