#include <fmt/format.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <mutex>
#include <netbuf/transport/bootstrap.hpp>
#include <vector>

namespace netbuf {

using boost::asio::ip::tcp;

// ------------------------------------------------------------------ ServerChannel

struct ServerChannel::State : std::enable_shared_from_this<ServerChannel::State> {
  State(EventLoopGroup& g, EventLoop& l) : group(&g), loop(&l), acceptor(l.context()) {}

  EventLoopGroup* group;
  EventLoop* loop;         // the acceptor's
  tcp::acceptor acceptor;  // touched on loop only, once accepting has started
  tcp::endpoint local;
  ChannelOptions options;
  SocketChannel::Initializer init;
  bool ownLoopChildren = false;  // acceptor per loop: children stay on this loop
  std::atomic<std::size_t> accepted{0};
  std::atomic<bool> closed{false};
  std::mutex childrenMutex;  // children are registered from every loop
  std::vector<std::weak_ptr<SocketChannel>> children;

  void acceptNext() {
    if (closed.load(std::memory_order_acquire)) return;
    EventLoop& child = ownLoopChildren ? *loop : group->next();
    acceptor.async_accept(child.context(),
                          [self = shared_from_this(), &child](const boost::system::error_code& ec,
                                                              tcp::socket socket) mutable {
                            self->onAccept(ec, std::move(socket), child);
                          });
  }

  void onAccept(const boost::system::error_code& ec, tcp::socket socket, EventLoop& child) {
    if (ec == boost::asio::error::operation_aborted || closed.load(std::memory_order_acquire))
      return;
    if (ec) {
      // EMFILE and friends: try again shortly instead of spinning.
      auto timer = std::make_shared<boost::asio::steady_timer>(loop->context());
      timer->expires_after(std::chrono::milliseconds(10));
      timer->async_wait([self = shared_from_this(), timer](const boost::system::error_code&) {
        self->acceptNext();
      });
      return;
    }
    accepted.fetch_add(1, std::memory_order_relaxed);
    auto ch = SocketChannel::create(child, std::move(socket), options);
    {
      std::lock_guard<std::mutex> g(childrenMutex);
      // Drop entries of closed channels now and then, so the list stays the size of the open set.
      if (children.size() >= 64 && children.size() % 64 == 0) {
        std::erase_if(children, [](const std::weak_ptr<SocketChannel>& w) { return w.expired(); });
      }
      children.push_back(ch);
    }
    try {
      child.execute([ch, self = shared_from_this()] { ch->start(self->init); });
    } catch (const RejectedExecutionError&) {
      // The child loop is shutting down: the channel is dropped (its socket closes).
    }
    acceptNext();
  }
};

ServerChannel::~ServerChannel() { close(); }

tcp::endpoint ServerChannel::localEndpoint() const { return states_.front()->local; }

std::size_t ServerChannel::acceptedCount() const noexcept {
  std::size_t n = 0;
  for (const auto& st : states_) n += st->accepted.load(std::memory_order_relaxed);
  return n;
}

std::size_t ServerChannel::openChildren() const {
  std::size_t n = 0;
  for (const auto& st : states_) {
    std::lock_guard<std::mutex> g(st->childrenMutex);
    for (const auto& w : st->children) {
      if (auto ch = w.lock(); ch && ch->isOpen()) ++n;
    }
  }
  return n;
}

void ServerChannel::close() {
  for (const auto& st : states_) closeOne(st);
}

void ServerChannel::closeOne(const std::shared_ptr<State>& state) {
  if (state->closed.exchange(true)) return;
  auto closeAcceptor = [state] {
    boost::system::error_code ignored;
    state->acceptor.close(ignored);
  };
  if (state->loop->inEventLoop()) return closeAcceptor();
  std::promise<void> done;
  try {
    state->loop->execute([&] {
      closeAcceptor();
      done.set_value();
    });
  } catch (const RejectedExecutionError&) {
    closeAcceptor();  // the loop has stopped: nothing else touches the acceptor
    return;
  }
  // Wait for the loop, unless it stops first (then no thread touches the acceptor any more).
  auto f = done.get_future();
  while (f.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    if (state->group->isTerminated()) {
      closeAcceptor();
      return;
    }
  }
}

void ServerChannel::closeChildren() {
  std::vector<std::shared_ptr<SocketChannel>> open;
  for (const auto& st : states_) {
    std::lock_guard<std::mutex> g(st->childrenMutex);
    for (const auto& w : st->children) {
      if (auto ch = w.lock()) open.push_back(std::move(ch));
    }
  }
  for (auto& ch : open) {
    try {
      ch->eventLoop().execute([ch] { ch->close(); });
    } catch (const RejectedExecutionError&) {
    }
  }
}

// ------------------------------------------------------------------ ServerBootstrap

std::unique_ptr<ServerChannel> ServerBootstrap::bind(const std::string& address,
                                                     unsigned short port) {
  if (group_ == nullptr) throw IllegalStateError("ServerBootstrap::bind without a group()");
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(address, ec);
  if (ec) throw std::system_error(ec.value(), std::system_category(), "invalid address " + address);
  auto check = [&](const char* what) {
    if (ec) {
      throw std::system_error(ec.value(), std::system_category(),
                              fmt::format("{} {}:{}", what, address, port));
    }
  };
  using ReusePort = boost::asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
  std::vector<std::shared_ptr<ServerChannel::State>> states;
  const std::size_t acceptors = acceptorPerLoop_ ? group_->size() : 1;
  tcp::endpoint ep(ip, port);
  for (std::size_t a = 0; a < acceptors; ++a) {
    EventLoop& loop = acceptorPerLoop_ ? group_->loop(a) : group_->next();
    auto state = std::make_shared<ServerChannel::State>(*group_, loop);
    state->options = childOptions_;
    state->init = init_;
    state->ownLoopChildren = acceptorPerLoop_;
    // Set up before the acceptor is shared with its loop: no other thread touches it yet.
    state->acceptor.open(ep.protocol(), ec);
    check("open");
    state->acceptor.set_option(tcp::acceptor::reuse_address(reuseAddress_), ec);
    check("SO_REUSEADDR");
    if (acceptorPerLoop_) {
      state->acceptor.set_option(ReusePort(true), ec);
      check("SO_REUSEPORT");
    }
    if (ep.protocol() == tcp::v6()) {
      state->acceptor.set_option(boost::asio::ip::v6_only(false), ec);
      ec.clear();  // dual stack where the system allows it
    }
    state->acceptor.bind(ep, ec);
    check("bind");
    state->acceptor.listen(backlog_, ec);
    check("listen");
    state->local = state->acceptor.local_endpoint(ec);
    check("local_endpoint");
    ep = state->local;  // the other acceptors share the port chosen for the first (port 0)
    states.push_back(std::move(state));
  }
  for (auto& state : states) {
    state->loop->execute([state] {
      // Graceful shutdown of the group stops accepting first.
      state->loop->addShutdownHook([weak = std::weak_ptr<ServerChannel::State>(state)] {
        if (auto s = weak.lock()) {
          s->closed.store(true, std::memory_order_release);
          boost::system::error_code ignored;
          s->acceptor.close(ignored);
        }
      });
      state->acceptNext();
    });
  }
  return std::unique_ptr<ServerChannel>(new ServerChannel(std::move(states)));
}

// ------------------------------------------------------------------ Bootstrap

namespace {

struct ConnectAttempt : std::enable_shared_from_this<ConnectAttempt> {
  ConnectAttempt(EventLoop& l, ChannelOptions o, SocketChannel::Initializer i,
                 Bootstrap::ConnectHandler d)
      : loop(&l),
        options(std::move(o)),
        init(std::move(i)),
        done(std::move(d)),
        resolver(l.context()),
        socket(l.context()),
        timer(l.context()) {}

  EventLoop* loop;
  ChannelOptions options;
  SocketChannel::Initializer init;
  Bootstrap::ConnectHandler done;
  tcp::resolver resolver;
  tcp::socket socket;
  boost::asio::steady_timer timer;
  bool finished = false;

  void start(const std::string& host, unsigned short port, std::chrono::milliseconds timeout) {
    timer.expires_after(timeout);
    timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->finished) return;
      self->finish(nullptr, std::make_error_code(std::errc::timed_out));
    });
    resolver.async_resolve(
        host, std::to_string(port),
        [self = shared_from_this()](const boost::system::error_code& ec,
                                    tcp::resolver::results_type results) {
          if (self->finished) return;
          if (ec) return self->finish(nullptr, std::error_code(ec.value(), std::system_category()));
          boost::asio::async_connect(
              self->socket, results,
              [self](const boost::system::error_code& ec2, const tcp::endpoint&) {
                if (self->finished) return;
                if (ec2) {
                  return self->finish(nullptr,
                                      std::error_code(ec2.value(), std::system_category()));
                }
                auto ch =
                    SocketChannel::create(*self->loop, std::move(self->socket), self->options);
                ch->start(self->init);
                self->finish(std::move(ch), {});
              });
        });
  }

  void finish(std::shared_ptr<SocketChannel> ch, std::error_code ec) {
    finished = true;
    timer.cancel();
    if (ec) {
      resolver.cancel();
      boost::system::error_code ignored;
      socket.close(ignored);
    }
    if (done) done(std::move(ch), ec);
  }
};

}  // namespace

void Bootstrap::connect(const std::string& host, unsigned short port, ConnectHandler done) {
  if (group_ == nullptr) throw IllegalStateError("Bootstrap::connect without a group()");
  EventLoop& loop = group_->next();
  auto attempt = std::make_shared<ConnectAttempt>(loop, options_, init_, std::move(done));
  loop.execute(
      [attempt, host, port, timeout = connectTimeout_] { attempt->start(host, port, timeout); });
}

std::shared_ptr<SocketChannel> Bootstrap::connect(const std::string& host, unsigned short port) {
  if (group_ != nullptr && group_->currentLoop() != nullptr)
    throw IllegalStateError("the blocking Bootstrap::connect was called on a loop thread");
  std::promise<std::pair<std::shared_ptr<SocketChannel>, std::error_code>> result;
  connect(host, port, [&result](std::shared_ptr<SocketChannel> ch, std::error_code ec) {
    result.set_value({std::move(ch), ec});
  });
  auto [ch, ec] = result.get_future().get();
  if (ec) throw std::system_error(ec, fmt::format("connect to {}:{}", host, port));
  return ch;
}

}  // namespace netbuf
