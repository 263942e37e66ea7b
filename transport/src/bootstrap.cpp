#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <netbuf/transport/bootstrap.hpp>
#include <vector>

#include "detail/server_channel_state.hpp"

namespace netbuf {

using boost::asio::ip::tcp;
using unix_stream = boost::asio::local::stream_protocol;

namespace {

unix_stream::endpoint unixEndpoint(const std::string& path) {
  if (path.empty()) throw IllegalArgumentError("empty Unix socket path");
  std::string name = path;
  if (name[0] == '@') name[0] = '\0';  // Linux abstract namespace
  if (name.size() >= sizeof(sockaddr_un::sun_path)) {
    throw IllegalArgumentError(fmt::format("Unix socket path '{}' is longer than {} bytes", path,
                                           sizeof(sockaddr_un::sun_path) - 1));
  }
  return unix_stream::endpoint(name);
}

/// Removes a socket file nobody listens on any more (a server that did not clean up). A live
/// socket or a file that is not a socket is left alone (bind then fails with EADDRINUSE).
void removeStaleSocket(const std::string& path) {
  if (path.empty() || path[0] == '@') return;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err == ECONNREFUSED) ::unlink(path.c_str());
}

}  // namespace

// ------------------------------------------------------------------ ServerBootstrap

template <class Endpoint>
std::shared_ptr<ServerChannel> ServerBootstrap::listen(const Endpoint& endpoint,
                                                       const std::string& what,
                                                       const std::string& unixPath) {
  if (group_ == nullptr) throw IllegalStateError("ServerBootstrap::bind without a group()");
  constexpr bool kTcp = std::is_same_v<Endpoint, tcp::endpoint>;
  boost::system::error_code ec;
  auto check = [&](const char* step) {
    if (ec) {
      throw std::system_error(ec.value(), std::system_category(), fmt::format("{} {}", step, what));
    }
  };
  using ReusePort = boost::asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
  auto shared = std::make_shared<ServerChannel::Shared>();
  shared->childOptions = childOptions_;
  shared->childHandler = childHandler_;
  shared->hasHandler = static_cast<bool>(handler_);
  shared->address = what;
  shared->unixPath = unixPath;
  std::vector<std::shared_ptr<ServerChannel::State>> states;
  const bool perLoop = kTcp && acceptorPerLoop_;
  const std::size_t acceptors = perLoop ? group_->size() : 1;
  boost::asio::generic::stream_protocol::endpoint ep(endpoint);
  for (std::size_t a = 0; a < acceptors; ++a) {
    EventLoop& loop = perLoop ? group_->loop(a) : group_->next();
    auto state = std::make_shared<ServerChannel::State>(*group_, loop, shared);
    state->ownLoopChildren = perLoop;
    // Set up before the acceptor is shared with its loop: no other thread touches it yet.
    state->acceptor.open(ep.protocol(), ec);
    check("open");
    if constexpr (kTcp) {
      state->acceptor.set_option(boost::asio::socket_base::reuse_address(reuseAddress_), ec);
      check("SO_REUSEADDR");
      if (perLoop) {
        state->acceptor.set_option(ReusePort(true), ec);
        check("SO_REUSEPORT");
      }
      if (endpoint.protocol() == tcp::v6()) {
        state->acceptor.set_option(boost::asio::ip::v6_only(false), ec);
        ec.clear();  // dual stack where the system allows it
      }
    }
    state->acceptor.bind(ep, ec);
    check("bind");
    state->acceptor.listen(backlog_, ec);
    check("listen");
    ep = state->acceptor.local_endpoint(ec);  // the other acceptors share the port chosen first
    check("local_endpoint");
    states.push_back(std::move(state));
  }
  shared->openAcceptors.store(states.size(), std::memory_order_release);
  EventLoop& serverLoop = *states.front()->loop;
  shared->serverLoop = &serverLoop;
  auto server = std::shared_ptr<ServerChannel>(new ServerChannel(serverLoop, states, shared),
                                               ServerChannel::Deleter{});
  shared->server = server;
  serverLoop.execute([server, init = handler_] { server->start(init); });
  return server;
}

std::shared_ptr<ServerChannel> ServerBootstrap::bind(const std::string& address,
                                                     unsigned short port) {
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(address, ec);
  if (ec) throw std::system_error(ec.value(), std::system_category(), "invalid address " + address);
  return listen(tcp::endpoint(ip, port), fmt::format("{}:{}", address, port), std::string());
}

std::shared_ptr<ServerChannel> ServerBootstrap::bindUnix(const std::string& path) {
  const unix_stream::endpoint ep = unixEndpoint(path);
  removeStaleSocket(path);
  return listen(ep, path, path);
}

// ------------------------------------------------------------------ Bootstrap

void Bootstrap::checkGroup(const char* what) const {
  if (config_.group == nullptr)
    throw IllegalStateError(fmt::format("Bootstrap::{} without a group()", what));
}

namespace detail {

namespace {

ErrorCode asioError(const boost::system::error_code& ec) { return ec; }

/// One connection attempt, on one loop: TCP (resolve, then connect to each address in turn) or a
/// Unix domain socket, bounded by a timer. Every step runs on the loop; done runs once.
template <class Protocol>
class Attempt final : public ConnectAttempt,
                      public std::enable_shared_from_this<Attempt<Protocol>> {
 public:
  using Endpoint = typename Protocol::endpoint;

  Attempt(const ConnectConfig& config, EventLoop& l, std::string host, unsigned short port,
          ConnectDone d)
      : loop(&l),
        options(config.options),
        init(config.handler),
        timeout(config.timeout),
        host_(std::move(host)),
        port_(port),
        done(std::move(d)),
        socket(l.context()),
        timer(l.context()) {}

  void start() override {
    try {
      loop->execute([self = this->shared_from_this()] { self->run(); });
    } catch (const RejectedExecutionError&) {
      done(ErrorCode(ChannelErrc::rejected), nullptr, true);
    }
  }

  void cancel() override {
    // Always a later loop task, never inline: the completion clears the cancellation slot, which
    // must not happen from inside the slot's own handler.
    try {
      loop->execute([self = this->shared_from_this()] {
        if (!self->finished) self->finish(nullptr, boost::asio::error::operation_aborted);
      });
    } catch (const RejectedExecutionError&) {
      // The loop has shut down: its shutdown hook ended the attempt, or its task is dropped.
    }
  }

 private:
  /// Loop thread, first: fails with ChannelErrc::rejected when the loop is shutting down, since
  /// its hooks would never end this attempt; otherwise a hook ends it when the shutdown comes.
  void run() {
    if (finished) return;  // cancelled before it started
    if (loop->isShuttingDown()) return finish(nullptr, ChannelErrc::rejected);
    shutdownHook = loop->addShutdownHook([weak = this->weak_from_this()] {
      if (auto self = weak.lock(); self && !self->finished)
        self->finish(nullptr, ChannelErrc::rejected);
    });
    timer.expires_after(timeout);
    timer.async_wait([self = this->shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->finished) return;
      self->finish(nullptr, boost::asio::error::timed_out);
    });
    if constexpr (std::is_same_v<Protocol, tcp>) {
      resolver = std::make_unique<tcp::resolver>(loop->context());
      resolver->async_resolve(
          host_, std::to_string(port_),
          [self = this->shared_from_this()](const boost::system::error_code& ec,
                                            tcp::resolver::results_type results) {
            if (self->finished) return;
            if (ec) return self->finish(nullptr, asioError(ec));
            boost::asio::async_connect(self->socket, results,
                                       [self](const boost::system::error_code& ec2,
                                              const tcp::endpoint&) { self->connected(ec2); });
          });
    } else {
      socket.async_connect(unixEndpoint(host_),
                           [self = this->shared_from_this()](const boost::system::error_code& ec) {
                             self->connected(ec);
                           });
    }
  }

  void connected(const boost::system::error_code& ec) {
    if (finished) return;
    if (ec) return finish(nullptr, asioError(ec));
    auto ch = SocketChannel::create(*loop, std::move(socket), options);
    try {
      ch->start(init);  // closes the channel itself when the loop is shutting down
    } catch (...) {
      // The handler threw: start() closed the channel. The loop reports the exception.
      finish(nullptr, ChannelErrc::initializerFailed);
      throw;
    }
    // Closed by start() because the loop is shutting down (an initializer may close it too, a
    // connection limit: that channel is handed over, closed, as it is).
    if (!ch->isOpen() && loop->isShuttingDown()) return finish(nullptr, ChannelErrc::rejected);
    finish(std::move(ch), {});
  }

  void finish(std::shared_ptr<SocketChannel> ch, ErrorCode ec) {
    finished = true;
    if (shutdownHook != 0) loop->removeShutdownHook(std::exchange(shutdownHook, 0));
    timer.cancel();
    if (ec) {
      if (resolver) resolver->cancel();
      boost::system::error_code ignored;
      socket.close(ignored);
    }
    ConnectDone d = std::move(done);
    if (d) d(ec, std::move(ch), false);
  }

  EventLoop* loop;
  ChannelOptions options;
  SocketChannel::Initializer init;
  std::chrono::milliseconds timeout;
  std::string host_;  // the host, or the Unix socket's path
  unsigned short port_;
  ConnectDone done;
  typename Protocol::socket socket;
  boost::asio::steady_timer timer;
  std::unique_ptr<tcp::resolver> resolver;
  bool finished = false;
  std::uint64_t shutdownHook = 0;  // on loop, while the attempt is in progress
};

}  // namespace

std::shared_ptr<ConnectAttempt> makeTcpConnect(const ConnectConfig& config, EventLoop& loop,
                                               std::string host, unsigned short port,
                                               ConnectDone done) {
  return std::make_shared<Attempt<tcp>>(config, loop, std::move(host), port, std::move(done));
}

std::shared_ptr<ConnectAttempt> makeUnixConnect(const ConnectConfig& config, EventLoop& loop,
                                                std::string path, ConnectDone done) {
  unixEndpoint(path);  // throws IllegalArgumentError for a path no socket can have
  return std::make_shared<Attempt<unix_stream>>(config, loop, std::move(path), 0, std::move(done));
}

}  // namespace detail

}  // namespace netbuf
