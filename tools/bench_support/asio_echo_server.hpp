#pragma once
// AsioEchoServer: a plain Boost.Asio TCP echo server, written by hand the way one would without
// netbuf. It is the floor that netbuf's own echo server is measured against (`netbuf bench echo`,
// `netbuf serve echo --impl asio`), so it is meant to be fast, not clever:
//
//   thread 0: io_context 0 ── acceptor ── sessions 0, T, 2T, ...
//   thread 1: io_context 1 ────────────── sessions 1, T+1, ...       (accepted sockets are handed
//   ...                                                                out round robin)
//
// Each session (TCP_NODELAY) keeps one async_read_some and at most one async_write in flight:
//
//   read ─► in  ──(no write in flight)──► swap into out, async_write(out)   (no copy)
//               ──(write in flight)─────► append to pending                 (one copy)
//   write done ─► pending non-empty? swap into out, write it all at once (natural batching)
//
// The read buffer starts at 16 KiB and doubles (up to 1 MiB) whenever a read fills it, so a
// client that pipelines a lot is read in few calls. Reading pauses while more than 4 MiB wait in
// pending (a client that does not read its replies cannot grow the server without bound).
//
// Threads: start() and stop() may be called from any thread (not from the server's own); port(),
// and the counters from any thread. No exception escapes the server's threads: one thrown by a
// handler is reported on stderr and the loop goes on.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <netbuf/transport/transport.hpp>
#include <string>

#include "echo_server_stats.hpp"

namespace netbuf {
class SslContext;
}  // namespace netbuf

namespace netbuf::tools {

struct AsioEchoServerOptions {
  std::string address = "127.0.0.1";  ///< address to listen on (IPv4 or IPv6 literal)
  std::uint16_t port = 0;             ///< 0: any free port (see AsioEchoServer::port())
  std::size_t threads = 1;            ///< io_contexts, one thread each (Netty's figure: 1)
  /// NetbufEchoServer only: listen on this Unix domain socket path instead of address:port.
  std::string unixPath;
  /// NetbufEchoServer only: echo UDP datagrams on address:port (a DatagramChannel) instead.
  bool udp = false;
  /// NetbufEchoServer only: a server SslContext; every connection runs TLS, with
  /// tls->newHandler() first in its pipeline (the echo handler sees plaintext). Not with udp.
  std::shared_ptr<SslContext> tls;
  /// NetbufEchoServer only: the transport of its EventLoopGroup (Default: NETBUF_TRANSPORT, else
  /// Asio); start() throws TransportUnavailableError where the system refuses io_uring.
  Transport transport = Transport::Default;
};

class AsioEchoServer : public EchoServerCounters {
 public:
  explicit AsioEchoServer(AsioEchoServerOptions options = {});
  ~AsioEchoServer();  ///< stop()s
  AsioEchoServer(const AsioEchoServer&) = delete;
  AsioEchoServer& operator=(const AsioEchoServer&) = delete;

  /// Binds, listens and starts the threads. Throws boost::system::system_error when the address
  /// cannot be bound, std::invalid_argument for a bad address or thread count, and
  /// std::logic_error when already started.
  void start();
  /// Closes the acceptor and every connection and joins the threads. Idempotent; the server can
  /// be started again afterwards.
  void stop();

  bool running() const;
  /// The bound port (useful with port 0); 0 before start().
  std::uint16_t port() const noexcept { return port_.load(std::memory_order_acquire); }
  const AsioEchoServerOptions& options() const noexcept { return options_; }

  /// Exceptions thrown by handlers (and caught by the threads) since construction.
  std::uint64_t handlerFailures() const noexcept {
    return stats_->handlerFailures.load(std::memory_order_relaxed);
  }

 private:
  struct Impl;

  AsioEchoServerOptions options_;
  std::atomic<std::uint16_t> port_{0};
  mutable std::mutex mutex_;  // guards impl_ (start/stop)
  std::unique_ptr<Impl> impl_;
};

}  // namespace netbuf::tools
