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

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <netbuf/transport/detail/async_op.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/server_channel.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <system_error>
#include <type_traits>
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

namespace detail {
/// How a connect attempt reports back, once: on the attempt's loop, or on the thread that started
/// it when the loop refused the attempt (then `onCaller` is true).
using ConnectDone = std::function<void(ErrorCode, std::shared_ptr<SocketChannel>, bool onCaller)>;

/// What a connect attempt needs, copied out of the Bootstrap when the operation starts (a
/// deferred connect may start after the Bootstrap is gone).
struct ConnectConfig {
  EventLoopGroup* group = nullptr;
  ChannelOptions options;
  SocketChannel::Initializer handler;
  std::chrono::milliseconds timeout{30000};
};

/// One connection attempt on one loop (bootstrap.cpp).
class ConnectAttempt {
 public:
  virtual ~ConnectAttempt() = default;
  /// Hands the attempt to its loop (any thread). A loop that has shut down refuses it: done then
  /// runs on this thread with ChannelErrc::rejected.
  virtual void start() = 0;
  /// Ends the attempt with operation_aborted, on its loop, unless it has ended (any thread).
  virtual void cancel() = 0;
};
std::shared_ptr<ConnectAttempt> makeTcpConnect(const ConnectConfig& config, EventLoop& loop,
                                               std::string host, unsigned short port,
                                               ConnectDone done);
std::shared_ptr<ConnectAttempt> makeUnixConnect(const ConnectConfig& config, EventLoop& loop,
                                                std::string path, ConnectDone done);

/// The initiation of Bootstrap::connect (Unix false) and connectUnix (Unix true).
template <bool Unix>
struct InitiateConnect {
  ConnectConfig config;

  struct Canceller {
    std::weak_ptr<ConnectAttempt> attempt;
    void operator()(boost::asio::cancellation_type_t type) const {
      if (!cancels(type)) return;
      if (auto a = attempt.lock()) a->cancel();
    }
  };

  template <class Handler>
  void operator()(Handler&& handler, std::string where, unsigned short port) const {
    EventLoop& loop = config.group->next();
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    SharedCompletion<std::decay_t<Handler>, boost::asio::any_io_executor> completion(
        std::forward<Handler>(handler), boost::asio::any_io_executor(loop.get_executor()));
    ConnectDone done = [completion](ErrorCode ec, std::shared_ptr<SocketChannel> ch,
                                    bool onCaller) {
      if (onCaller)
        completion.post(ec, std::move(ch));
      else
        completion.dispatch(ec, std::move(ch));
    };
    std::shared_ptr<ConnectAttempt> attempt =
        Unix ? makeUnixConnect(config, loop, std::move(where), std::move(done))
             : makeTcpConnect(config, loop, std::move(where), port, std::move(done));
    // Installed before the attempt starts, so that the completion (which clears the slot on the
    // loop) cannot race with it.
    if (slot.is_connected()) slot.template emplace<Canceller>(Canceller{attempt});
    attempt->start();
  }
};
}  // namespace detail

class Bootstrap {
 public:
  Bootstrap& group(EventLoopGroup& group) {
    config_.group = &group;
    return *this;
  }
  /// Builds the channel's pipeline once connected (on its loop, before channelActive).
  Bootstrap& handler(SocketChannel::Initializer init) {
    config_.handler = std::move(init);
    return *this;
  }
  Bootstrap& options(const ChannelOptions& options) {
    config_.options = options;
    return *this;
  }
  Bootstrap& connectTimeout(std::chrono::milliseconds timeout) {
    config_.timeout = timeout;
    return *this;
  }
  /// The group set by group(EventLoopGroup&), or nullptr.
  EventLoopGroup* group() const noexcept { return config_.group; }

  /// Resolves host and connects on the next loop of the group; completes with
  /// void(ErrorCode, std::shared_ptr<SocketChannel>): the channel once it is active (its
  /// initializer has run), or an error and nullptr: the resolver's or the socket's error
  /// (connection_refused...), asio::error::timed_out after connectTimeout,
  /// asio::error::operation_aborted when cancelled through the handler's cancellation slot,
  /// ChannelErrc::rejected when the loop is shutting down, ChannelErrc::initializerFailed when the
  /// initializer threw. token is any Asio completion token; the handler runs on its associated
  /// executor, by default the channel's loop. The channel is safe to use from any thread
  /// (Channel's rule).
  ///     auto ch = co_await bootstrap.connect("127.0.0.1", port, asio::use_awaitable);
  ///     auto ch = bootstrap.connect("127.0.0.1", port, asio::use_future).get();   // blocking
  /// Throws IllegalStateError (before anything starts) without a group.
  template <class Token>
  auto connect(std::string host, unsigned short port, Token&& token) {
    checkGroup("connect");
    return boost::asio::async_initiate<Token, void(ErrorCode, std::shared_ptr<SocketChannel>)>(
        detail::InitiateConnect<false>{config_}, token, std::move(host), port);
  }
  /// The same over a Unix domain stream socket at path ('@name': an abstract socket).
  template <class Token>
  auto connectUnix(std::string path, Token&& token) {
    checkGroup("connectUnix");
    return boost::asio::async_initiate<Token, void(ErrorCode, std::shared_ptr<SocketChannel>)>(
        detail::InitiateConnect<true>{config_}, token, std::move(path), 0);
  }

 private:
  friend class Reconnector;  // makes its attempts with the bootstrap's configuration
  void checkGroup(const char* what) const;

  detail::ConnectConfig config_;
};

}  // namespace netbuf
