#include <boost/asio/post.hpp>
#include <netbuf/transport/event_loop_channel.hpp>

namespace netbuf {

EventLoopChannel::EventLoopChannel(EventLoop& loop, ByteBufAllocator& alloc,
                                   std::size_t highWaterMark, std::size_t lowWaterMark)
    : Channel(loop, alloc),
      loop_(&loop),
      highWaterMark_(highWaterMark),
      lowWaterMark_(lowWaterMark) {}

void EventLoopChannel::DestroyOnLoop::operator()(EventLoopChannel* ch) const noexcept {
  // On the loop, or once the loop runs no more: here. Elsewhere the loop may be running one of
  // the channel's timers or handlers right now, so the destruction is handed to it; a task the
  // loop never runs is destroyed with its io_context, and the channel with it.
  if (loop->inEventLoop() || loop->isTerminated()) {
    delete ch;
    return;
  }
  try {
    boost::asio::post(loop->context(), [owned = std::unique_ptr<EventLoopChannel>(ch)] {});
  } catch (...) {  // the io_context is gone (group teardown): nothing runs on the loop
    delete ch;
  }
}

void EventLoopChannel::submit(detail::OutboundTask& task) {
  loop_->execute(std::move(task));  // posted as is: no std::function around it
}

bool EventLoopChannel::runOnLoop(std::function<void()> fn) {
  if (inEventLoop()) {
    fn();
    return true;
  }
  try {
    loop_->execute([self = shared_from_this(), fn = std::move(fn)] { fn(); });
    return true;
  } catch (const RejectedExecutionError&) {
    return false;
  }
}

bool EventLoopChannel::registerOnLoop() {
  if (loop_->isShuttingDown()) return false;
  loop_->channelOpened();
  // The hook holds the channel: an open channel is owned by its loop until it closes (beginClose
  // removes the hook), as a Netty channel is registered with its event loop. Without that, a
  // channel with reading off and nothing in flight would be destroyed with its socket open once
  // its other owners let go.
  // Once the loop has terminated, only the group's destructor runs the hook (see
  // ~EventLoopGroup): the channel is not closed then (no handler runs), but a receive pending on
  // it is destroyed unrun, so a coroutine suspended there, which holds the channel, is freed.
  shutdownHook_ = loop_->addShutdownHook(
      [self = std::static_pointer_cast<EventLoopChannel>(shared_from_this())] {
        if (self->eventLoop().isTerminated()) {
          self->dropPendingReceive();
        } else {
          self->closeGracefully();
        }
      });
  active_.store(true, std::memory_order_release);
  return true;
}

EventLoopChannel::CloseGuard EventLoopChannel::beginClose() {
  // Removing the hook may drop the last owner; the guard keeps the channel until a later task.
  CloseGuard guard(weak_from_this().lock(), loop_);
  open_.store(false, std::memory_order_release);
  if (shutdownHook_ != 0) {  // registered: the channel counted itself in on its loop
    loop_->removeShutdownHook(shutdownHook_);
    loop_->channelClosed();
    shutdownHook_ = 0;
  }
  return guard;
}

EventLoopChannel::CloseGuard::~CloseGuard() {
  if (keep_ == nullptr) return;
  try {
    boost::asio::post(loop_->context(), [k = std::move(keep_)] {});
  } catch (...) {  // the loop's io_context is gone (group teardown): released here
  }
}

void EventLoopChannel::endClose() {
  if (active_.exchange(false, std::memory_order_acq_rel)) pipeline().fireChannelInactive();
  auto listeners = std::move(closeListeners_);
  closeListeners_.clear();
  for (auto& fn : listeners) {
    try {
      fn();
    } catch (...) {
    }
  }
}

void EventLoopChannel::addCloseListener(std::function<void()> fn) {
  auto run = [this, fn]() mutable {
    if (!isOpen()) {
      fn();
      return;
    }
    closeListeners_.push_back(std::move(fn));
  };
  if (!runOnLoop(run)) fn();  // the loop is gone: the channel will never run it
}

void EventLoopChannel::addPending(std::size_t n) {
  const std::size_t now = pendingBytes_.load(std::memory_order_relaxed) + n;
  pendingBytes_.store(now, std::memory_order_relaxed);
  if (now > highWaterMark_ && writable_.load(std::memory_order_relaxed)) {
    writable_.store(false, std::memory_order_relaxed);
    pipeline().fireChannelWritabilityChanged();
  }
}

void EventLoopChannel::removePending(std::size_t n) {
  const std::size_t now = pendingBytes_.load(std::memory_order_relaxed) - n;
  pendingBytes_.store(now, std::memory_order_relaxed);
  if (now < lowWaterMark_ && !writable_.load(std::memory_order_relaxed)) {
    writable_.store(true, std::memory_order_relaxed);
    pipeline().fireChannelWritabilityChanged();
  }
}

}  // namespace netbuf
