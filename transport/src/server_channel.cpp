#include <fmt/format.h>
#include <unistd.h>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <netbuf/transport/server_channel.hpp>
#include <thread>
#include <utility>

#include "detail/server_channel_state.hpp"

namespace netbuf {

// ------------------------------------------------------------------ State (one acceptor)

void ServerChannel::State::acceptNext() {
  if (detail::IoUringLoop* ring = loop->ioUring()) {
    if (closed.load(std::memory_order_acquire) || paused) {
      ring->cancel(ringAccept);  // accepting turns false with its last completion
      return;
    }
    accepting = true;
    if (ringAccept.inFlight()) return;
    io_uring_sqe* sqe = ring->prepare(ringAccept, shared_from_this());
    io_uring_prep_multishot_accept(sqe, acceptor.native_handle(), nullptr, nullptr,
                                   SOCK_NONBLOCK | SOCK_CLOEXEC);
    return;
  }
  if (closed.load(std::memory_order_acquire) || paused) {
    accepting = false;
    return;
  }
  accepting = true;
  EventLoop& child = ownLoopChildren ? *loop : group->next();
  using Accepted = boost::asio::basic_stream_socket<boost::asio::generic::stream_protocol,
                                                    boost::asio::io_context::executor_type>;
  acceptor.async_accept(child.context(),
                        [self = shared_from_this(), &child](const boost::system::error_code& ec,
                                                            Accepted socket) mutable {
                          self->onAccept(ec, SocketChannel::Socket(std::move(socket)), child);
                        });
}

void ServerChannel::State::onAccept(const boost::system::error_code& ec,
                                    SocketChannel::Socket socket, EventLoop& child) {
  accepting = false;
  if (ec == boost::asio::error::operation_aborted || closed.load(std::memory_order_acquire)) return;
  if (ec) return acceptFailed(ec.value());
  std::shared_ptr<SocketChannel> ch;
  try {
    ch = SocketChannel::create(child, std::move(socket), shared->childOptions);
  } catch (...) {
    reportError(std::current_exception());
    acceptNext();
    return;
  }
  acceptedChannel(std::move(ch));
  acceptNext();
}

void ServerChannel::State::onRingAccept(int res, unsigned flags) {
  const bool more = (flags & IORING_CQE_F_MORE) != 0;
  if (!more) accepting = false;
  if (res >= 0) {
    if (closed.load(std::memory_order_acquire)) {
      ::close(res);
    } else {
      EventLoop& child = ownLoopChildren ? *loop : group->next();
      try {
        acceptedChannel(SocketChannel::create(child, res, shared->childOptions));  // owns res
      } catch (...) {
        reportError(std::current_exception());
      }
    }
  } else if (res != -ECANCELED && !closed.load(std::memory_order_acquire)) {
    if (!more) return acceptFailed(-res);
    reportError(std::make_exception_ptr(std::system_error(
        -res, std::system_category(), fmt::format("accept on {}", shared->address))));
  }
  if (!more && !closed.load(std::memory_order_acquire) && !paused) acceptNext();
}

void ServerChannel::State::acceptFailed(int err) {
  // EMFILE and friends: report, then try again shortly instead of spinning.
  accepting = false;
  reportError(std::make_exception_ptr(std::system_error(
      err, std::system_category(), fmt::format("accept on {}", shared->address))));
  auto timer = std::make_shared<boost::asio::steady_timer>(loop->context());
  timer->expires_after(std::chrono::milliseconds(10));
  timer->async_wait([self = shared_from_this(), timer](const boost::system::error_code&) {
    if (!self->accepting) self->acceptNext();
  });
}

void ServerChannel::State::acceptedChannel(std::shared_ptr<SocketChannel> ch) {
  accepted.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> g(childrenMutex);
    // Drop entries of closed channels now and then, so the list stays the size of the open set.
    if (children.size() >= 64 && children.size() % 64 == 0) {
      std::erase_if(children, [](const std::weak_ptr<SocketChannel>& w) { return w.expired(); });
    }
    children.push_back(ch);
  }
  if (!shared->hasHandler) {
    shared->startChild(std::move(ch));
  } else if (loop == shared->serverLoop) {
    if (auto server = shared->server.lock()) server->onChild(std::move(ch));
  } else {
    try {
      shared->serverLoop->execute([weak = shared->server, ch = std::move(ch)]() mutable {
        if (auto server = weak.lock()) server->onChild(std::move(ch));
      });
    } catch (const RejectedExecutionError&) {
      // The server's loop is shutting down: the connection is dropped (its socket closes).
    }
  }
}

void ServerChannel::State::reportError(std::exception_ptr error) {
  auto fire = [weak = shared->server, error] {
    if (auto server = weak.lock()) server->pipeline().fireExceptionCaught(error);
  };
  if (loop == shared->serverLoop) return fire();
  try {
    shared->serverLoop->execute(std::move(fire));
  } catch (const RejectedExecutionError&) {
  }
}

void ServerChannel::State::closeOnLoop() {
  closed.store(true, std::memory_order_release);
  if (closeDone) return;
  closeDone = true;
  if (shutdownHook != 0) {
    loop->removeShutdownHook(std::exchange(shutdownHook, 0));
  }
  if (detail::IoUringLoop* ring = loop->ioUring(); ring != nullptr && !loop->isTerminated()) {
    // The multishot accept holds the listening socket open until it ends: cancelled now, inside
    // this submit, so that the port is free once closing returns.
    ring->cancel(ringAccept);
    ring->submit();
  }
  boost::system::error_code ignored;
  acceptor.close(ignored);
  if (shared->openAcceptors.fetch_sub(1, std::memory_order_acq_rel) == 1) shared->allClosed(shared);
}

void ServerChannel::State::closeFromAnyThread() {
  if (loop->inEventLoop() || loop->isTerminated()) return closeOnLoop();
  const bool onOtherLoop = detail::tCurrentExecutor != nullptr;
  auto done = std::make_shared<std::promise<void>>();
  auto f = done->get_future();
  try {
    loop->execute([self = shared_from_this(), done] {
      self->closeOnLoop();
      done->set_value();
    });
  } catch (const RejectedExecutionError&) {
    // The loop is shutting down: its hooks have closed the acceptor, or will never run again
    // once it has terminated; only then may another thread touch it.
    if (onOtherLoop) return;
    while (!loop->isTerminated()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return closeOnLoop();
  }
  if (onOtherLoop) return;  // a loop must never wait for another: the task closes it
  // Wait for the loop, unless it stops first (then no thread touches the acceptor any more).
  while (f.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    if (loop->isTerminated()) return closeOnLoop();
  }
}

// ------------------------------------------------------------------ Shared

void ServerChannel::Shared::startChild(std::shared_ptr<SocketChannel> ch) {
  EventLoop& loop = ch->eventLoop();
  try {
    loop.execute([ch = std::move(ch), init = childHandler] { ch->start(init); });
  } catch (const RejectedExecutionError&) {
    // The child's loop is shutting down: the channel is dropped (its socket closes).
  }
}

void ServerChannel::Shared::allClosed(const std::shared_ptr<Shared>& self) {
  if (!unixPath.empty() && unixPath[0] != '@') ::unlink(unixPath.c_str());
  // On the server's loop: channelInactive first, then the close listeners (waitClosed), so that
  // a waiter sees the server closed. When that loop no longer runs tasks, the listeners run here.
  auto finish = [self] {
    if (auto s = self->server.lock()) s->onAllClosed();
    self->runCloseListeners();
  };
  try {
    serverLoop->execute(finish);
  } catch (...) {  // the server loop has shut down (or its io_context is gone)
    runCloseListeners();
  }
}

void ServerChannel::Shared::runCloseListeners() {
  std::vector<std::function<void()>> listeners;
  {
    std::lock_guard<std::mutex> lock(closedMutex);
    if (closed) return;
    closed = true;
    listeners.swap(closeListeners);
  }
  for (auto& fn : listeners) {
    try {
      fn();
    } catch (...) {
    }
  }
}

// ------------------------------------------------------------------ ServerChannel

ServerChannel::ServerChannel(EventLoop& loop, std::vector<std::shared_ptr<State>> states,
                             std::shared_ptr<Shared> shared)
    : Channel(loop), loop_(&loop), states_(std::move(states)), shared_(std::move(shared)) {
  boost::system::error_code ec;
  const auto local = states_.front()->acceptor.local_endpoint(ec);
  if (!ec) {
    domain_ = detail::isDomain(local);
    localAddress_ = domain_ ? shared_->unixPath : detail::formatEndpoint(local);
    localTcp_ = detail::toTcp(local);
  }
}

void ServerChannel::Deleter::operator()(ServerChannel* s) const noexcept {
  EventLoop& loop = *s->loop_;
  if (loop.inEventLoop() || loop.isTerminated()) {
    delete s;
    return;
  }
  s->closeAcceptorsNow();
  try {
    boost::asio::post(loop.context(), [owned = std::unique_ptr<ServerChannel>(s)] {});
  } catch (...) {  // the io_context is gone (group teardown): nothing runs on the loop
    delete s;
  }
}

ServerChannel::~ServerChannel() {
  closeAcceptorsNow();
  destroyPipeline();
}

void ServerChannel::start(const Initializer& init) {
  if (init) init(*this);
  if (!open_.load(std::memory_order_acquire)) return;  // the initializer closed it
  active_ = true;
  pipeline().fireChannelActive();
  for (auto& state : states_) {
    auto begin = [state] {
      if (state->closeDone) return;
      // A loop whose shutdown hooks have run would never close this acceptor: close it now.
      if (state->loop->isShuttingDown()) return state->closeOnLoop();
      // Graceful shutdown of the group stops accepting first.
      state->shutdownHook = state->loop->addShutdownHook([weak = std::weak_ptr<State>(state)] {
        if (auto s = weak.lock()) s->closeOnLoop();
      });
      if (!state->accepting) state->acceptNext();
    };
    if (state->loop == loop_) {
      begin();
    } else {
      try {
        state->loop->execute(std::move(begin));
      } catch (const RejectedExecutionError&) {
      }
    }
  }
}

void ServerChannel::onChild(Child child) { pipeline().fireChannelRead(Message(std::move(child))); }

void ServerChannel::onAllClosed() {
  open_.store(false, std::memory_order_release);
  if (active_) {
    active_ = false;
    pipeline().fireChannelInactive();
  }
}

void ServerChannel::addCloseListener(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(shared_->closedMutex);
    if (!shared_->closed) {
      shared_->closeListeners.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void ServerChannel::closeAcceptorsNow() noexcept {
  for (const auto& st : states_) {
    try {
      st->closeFromAnyThread();
    } catch (...) {
    }
  }
}

void ServerChannel::doWrite(Message, WriteListener*) {
  // The pipeline fails the listener (ChannelErrc::writeFailed) with this.
  throw IllegalStateError(
      fmt::format("ServerChannel {} accepts connections; it does not write", localAddress_));
}

void ServerChannel::doClose() {
  for (auto& state : states_) {
    if (state->loop->inEventLoop()) {
      state->closeOnLoop();
      continue;
    }
    try {
      state->loop->execute([state] { state->closeOnLoop(); });
    } catch (const RejectedExecutionError&) {
      // Its loop is shutting down: its shutdown hook has closed the acceptor already.
    }
  }
}

void ServerChannel::onAutoReadChanged() {
  const bool on = isAutoRead();
  for (auto& state : states_) {
    auto apply = [state, on] {
      state->paused = !on;
      if (on && !state->accepting) state->acceptNext();
      if (!on && state->loop->ioUring() != nullptr) state->acceptNext();  // cancels the accept
    };
    if (state->loop->inEventLoop()) {
      apply();
    } else {
      try {
        state->loop->execute(std::move(apply));
      } catch (const RejectedExecutionError&) {
      }
    }
  }
}

void ServerChannel::onUnhandledMessage(Message msg) noexcept {
  // An accepted connection that every handler passed on: start it. Anything else is released.
  if (msg.is<Child>()) shared_->startChild(msg.take<Child>());
}

void ServerChannel::onUnhandledException(std::exception_ptr error) noexcept {
  logException("unhandled exception", error, "accepting goes on");
}

void ServerChannel::closeChildren() {
  std::vector<std::shared_ptr<SocketChannel>> open;
  for (const auto& st : states_) {
    std::lock_guard<std::mutex> g(st->childrenMutex);
    for (const auto& w : st->children) {
      if (auto ch = w.lock()) open.push_back(std::move(ch));
    }
  }
  for (auto& ch : open) ch->close();  // handed to each channel's loop
}

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

}  // namespace netbuf
