#pragma once
// ServerBootstrap and Bootstrap: listen for and open stream connections, TCP or Unix domain
// (Netty's classes of the same names).
//
//     EventLoopGroup group(4);
//     auto server = ServerBootstrap()
//                       .group(group)
//                       .childHandler([](SocketChannel& ch) {
//                         ch.pipeline().addLast("echo", std::make_unique<EchoHandler>());
//                       })
//                       .bind("127.0.0.1", 0);          // port 0: any free port
//     unsigned short port = server->port();
//
//     auto ch = Bootstrap().group(group).handler(init).connect("127.0.0.1", port);   // blocking
//
// One naming scheme for both: handler() builds the pipeline of the channel the bootstrap makes
// (the ServerChannel for ServerBootstrap, the SocketChannel for Bootstrap); childHandler() and
// childOptions() are for the connections a server accepts; options() for the one a client opens.
//
// Accepting: by default one acceptor, on one loop of the group, hands each accepted socket to the
// next loop of the group (round robin), where its SocketChannel is built, initialised and started.
// acceptorPerLoop(true) binds one SO_REUSEPORT acceptor per loop instead (the kernel spreads the
// connections). docs/transport.md has the measurement behind the default.
//
// Bootstrap connects: resolve, connect with a timeout, then the same SocketChannel and handler.
// bindUnix/connectUnix do the same over a Unix domain stream socket (same pipeline, no TCP
// options).

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/server_channel.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <system_error>
#include <vector>

namespace netbuf {

class ServerBootstrap {
 public:
  /// The loops: the acceptor runs on one, channels on all (round robin).
  ServerBootstrap& group(EventLoopGroup& group) {
    group_ = &group;
    return *this;
  }
  /// Builds the server channel's own pipeline (see server_channel.hpp), before channelActive.
  ServerBootstrap& handler(ServerChannel::Initializer init) {
    handler_ = std::move(init);
    return *this;
  }
  /// Builds each accepted channel's pipeline (runs on the channel's loop, before channelActive).
  ServerBootstrap& childHandler(SocketChannel::Initializer init) {
    childHandler_ = std::move(init);
    return *this;
  }
  ServerBootstrap& childOptions(const ChannelOptions& options) {
    childOptions_ = options;
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
  /// both (docs/transport.md). TCP only.
  ServerBootstrap& acceptorPerLoop(bool on) {
    acceptorPerLoop_ = on;
    return *this;
  }
  /// Listens on address:port (IPv4 or IPv6 literal; port 0 picks a free port) and starts
  /// accepting. Throws std::system_error when the socket cannot be bound, IllegalStateError
  /// without a group.
  std::shared_ptr<ServerChannel> bind(const std::string& address, unsigned short port);
  /// Listens on a Unix domain stream socket at path (a stale socket file there is removed first;
  /// the path is removed again when the server stops accepting). A path starting with '@' names
  /// an abstract socket (Linux: no file). Throws std::system_error.
  std::shared_ptr<ServerChannel> bindUnix(const std::string& path);

 private:
  template <class Endpoint>
  std::shared_ptr<ServerChannel> listen(const Endpoint& endpoint, const std::string& what,
                                        const std::string& unixPath);

  EventLoopGroup* group_ = nullptr;
  ServerChannel::Initializer handler_;
  SocketChannel::Initializer childHandler_;
  ChannelOptions childOptions_;
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
  /// Builds the channel's pipeline once connected (on its loop, before channelActive).
  Bootstrap& handler(SocketChannel::Initializer init) {
    handler_ = std::move(init);
    return *this;
  }
  Bootstrap& options(const ChannelOptions& options) {
    options_ = options;
    return *this;
  }
  Bootstrap& connectTimeout(std::chrono::milliseconds timeout) {
    connectTimeout_ = timeout;
    return *this;
  }
  /// The group set by group(EventLoopGroup&), or nullptr.
  EventLoopGroup* group() const noexcept { return group_; }
  /// Resolves and connects on the next loop; done(channel, {}) runs on that loop once the channel
  /// is active, or done(nullptr, error) (std::errc::timed_out after the timeout).
  void connect(const std::string& host, unsigned short port, ConnectHandler done);
  /// Blocking form for threads that are not loop threads: the active channel, or throws
  /// std::system_error. The channel is safe to use from the calling thread (Channel's rule).
  std::shared_ptr<SocketChannel> connect(const std::string& host, unsigned short port);
  /// The same over a Unix domain stream socket ('@name': an abstract socket).
  void connectUnix(const std::string& path, ConnectHandler done);
  std::shared_ptr<SocketChannel> connectUnix(const std::string& path);

 private:
  EventLoopGroup* group_ = nullptr;
  ChannelOptions options_;
  SocketChannel::Initializer handler_;
  std::chrono::milliseconds connectTimeout_{30000};
};

}  // namespace netbuf
