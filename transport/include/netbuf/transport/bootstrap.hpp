#pragma once
// ServerBootstrap and Bootstrap: listen for and open TCP connections (Netty's classes of the same
// names).
//
//     EventLoopGroup group(4);
//     auto server = ServerBootstrap()
//                       .group(group)
//                       .childInitializer([](SocketChannel& ch) {
//                         ch.pipeline().addLast("echo", std::make_unique<EchoHandler>());
//                       })
//                       .bind("127.0.0.1", 0);          // port 0: any free port
//     unsigned short port = server->port();
//
// Accepting: by default one acceptor, on one loop of the group, hands each accepted socket to the
// next loop of the group (round robin), where its SocketChannel is built, initialised and started.
// acceptorPerLoop(true) binds one SO_REUSEPORT acceptor per loop instead (the kernel spreads the
// connections). docs/transport.md has the measurement behind the default.
//
// Bootstrap connects: resolve, connect with a timeout, then the same SocketChannel and initializer.

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <system_error>
#include <vector>

namespace netbuf {

/// A listening socket made by ServerBootstrap::bind. Destroying it stops accepting (accepted
/// channels stay open: closeChildren() closes them). Destroy it before its EventLoopGroup (its
/// acceptor belongs to one of the group's io_contexts).
class ServerChannel {
 public:
  ~ServerChannel();
  ServerChannel(const ServerChannel&) = delete;
  ServerChannel& operator=(const ServerChannel&) = delete;

  boost::asio::ip::tcp::endpoint localEndpoint() const;
  unsigned short port() const { return localEndpoint().port(); }
  /// Stops accepting; waits until the acceptor is closed. Callable from any thread (from a loop
  /// thread it does not wait). Idempotent.
  void close();
  /// Closes every accepted channel that is still open (each on its own loop).
  void closeChildren();
  /// Connections accepted so far / accepted and still open.
  std::size_t acceptedCount() const noexcept;
  std::size_t openChildren() const;

  struct State;  // shared with the acceptor's pending operation

 private:
  friend class ServerBootstrap;
  explicit ServerChannel(std::vector<std::shared_ptr<State>> states) : states_(std::move(states)) {}
  void closeOne(const std::shared_ptr<State>& state);
  std::vector<std::shared_ptr<State>> states_;  // one per acceptor
};

class ServerBootstrap {
 public:
  /// The loops: the acceptor runs on one, channels on all (round robin).
  ServerBootstrap& group(EventLoopGroup& group) {
    group_ = &group;
    return *this;
  }
  ServerBootstrap& childOptions(const ChannelOptions& options) {
    childOptions_ = options;
    return *this;
  }
  /// Builds each accepted channel's pipeline (runs on the channel's loop, before channelActive).
  ServerBootstrap& childInitializer(SocketChannel::Initializer init) {
    init_ = std::move(init);
    return *this;
  }
  ServerBootstrap& backlog(int backlog) {
    backlog_ = backlog;
    return *this;
  }
  ServerBootstrap& reuseAddress(bool on) {
    reuseAddress_ = on;
    return *this;
  }
  /// One acceptor per loop, all bound to the same port with SO_REUSEPORT, each keeping the
  /// connections it accepts on its own loop (the kernel spreads connections over them), instead of
  /// the default single acceptor handing sockets out round robin. `netbuf bench accept` measures
  /// both (docs/transport.md).
  ServerBootstrap& acceptorPerLoop(bool on) {
    acceptorPerLoop_ = on;
    return *this;
  }
  /// Listens on address:port (IPv4 or IPv6 literal; port 0 picks a free port) and starts
  /// accepting. Throws std::system_error when the socket cannot be bound, IllegalStateError
  /// without a group.
  std::unique_ptr<ServerChannel> bind(const std::string& address, unsigned short port);

 private:
  EventLoopGroup* group_ = nullptr;
  ChannelOptions childOptions_;
  SocketChannel::Initializer init_;
  int backlog_ = boost::asio::socket_base::max_listen_connections;
  bool reuseAddress_ = true;
  bool acceptorPerLoop_ = false;
};

class Bootstrap {
 public:
  using ConnectHandler = std::function<void(std::shared_ptr<SocketChannel>, std::error_code)>;

  Bootstrap& group(EventLoopGroup& group) {
    group_ = &group;
    return *this;
  }
  Bootstrap& options(const ChannelOptions& options) {
    options_ = options;
    return *this;
  }
  /// Builds the channel's pipeline once connected (on its loop, before channelActive).
  Bootstrap& handler(SocketChannel::Initializer init) {
    init_ = std::move(init);
    return *this;
  }
  Bootstrap& connectTimeout(std::chrono::milliseconds timeout) {
    connectTimeout_ = timeout;
    return *this;
  }
  /// Resolves and connects on the next loop; done(channel, {}) runs on that loop once the channel
  /// is active, or done(nullptr, error) (std::errc::timed_out after the timeout).
  void connect(const std::string& host, unsigned short port, ConnectHandler done);
  /// Blocking form for threads that are not loop threads: the active channel, or throws
  /// std::system_error.
  std::shared_ptr<SocketChannel> connect(const std::string& host, unsigned short port);

 private:
  EventLoopGroup* group_ = nullptr;
  ChannelOptions options_;
  SocketChannel::Initializer init_;
  std::chrono::milliseconds connectTimeout_{30000};
};

}  // namespace netbuf
