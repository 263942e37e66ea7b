#pragma once
// NetbufEchoServer: the echo server built from netbuf's transport (`netbuf serve echo --impl
// netbuf`), measured against the hand-written AsioEchoServer by `netbuf bench echo`.
//
// ServerBootstrap on an EventLoopGroup of `threads` loops on options.transport, listening on
// address:port or, with options.unixPath, on a Unix domain socket; each connection's pipeline is
// one EchoHandler (behind an SslHandler with options.tls): every read buffer is written back as it
// is (no copy) and flushed once per read batch, so replies go out as gather writes. Backpressure:
// when the channel stops being writable (more than the high water mark queued because the client
// does not read), reading pauses until it is writable again, so a client cannot grow the server
// without bound. Buffers come from the default allocator (the process-wide pool), as in any
// ServerBootstrap left untuned.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "asio_echo_server.hpp"
#include "echo_server_stats.hpp"

namespace netbuf::tools {

class NetbufEchoServer : public EchoServerCounters {
 public:
  explicit NetbufEchoServer(AsioEchoServerOptions options = {});
  ~NetbufEchoServer();  ///< stop()s
  NetbufEchoServer(const NetbufEchoServer&) = delete;
  NetbufEchoServer& operator=(const NetbufEchoServer&) = delete;

  /// Binds, listens and starts the loops; throws std::system_error when the address cannot be
  /// bound, std::logic_error when already started.
  void start();
  /// Closes the acceptor and every connection, then shuts the loops down. Idempotent.
  void stop();
  bool running() const noexcept { return impl_ != nullptr; }
  /// The running server's transport (Asio or IoUring: options.transport resolved); options'
  /// transport as given when not running.
  Transport transport() const noexcept;
  std::uint16_t port() const noexcept { return port_.load(std::memory_order_acquire); }

 private:
  struct Impl;
  AsioEchoServerOptions options_;
  std::unique_ptr<Impl> impl_;
  std::atomic<std::uint16_t> port_{0};
};

}  // namespace netbuf::tools
