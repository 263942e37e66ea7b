#include <algorithm>
#include <netbuf/transport/embedded_channel.hpp>
#include <system_error>

namespace netbuf {

EmbeddedChannel::EmbeddedChannel(ByteBufAllocator& alloc)
    : Channel(static_cast<ChannelExecutor&>(*this), alloc) {
  pipeline().fireChannelActive();
}

EmbeddedChannel::~EmbeddedChannel() { destroyPipeline(); }

Message EmbeddedChannel::readInboundMessage() {
  if (inbound_.empty()) return {};
  Message m = std::move(inbound_.front());
  inbound_.pop_front();
  return m;
}

Message EmbeddedChannel::readOutboundMessage() {
  if (outbound_.empty()) return {};
  Message m = std::move(outbound_.front());
  outbound_.pop_front();
  return m;
}

bool EmbeddedChannel::finish() {
  close();
  runPendingTasks();
  checkException();
  return !inbound_.empty() || !outbound_.empty();
}

bool EmbeddedChannel::finishAndReleaseAll() {
  const bool any = finish();
  inbound_.clear();
  outbound_.clear();
  return any;
}

void EmbeddedChannel::checkException() {
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void EmbeddedChannel::setWritable(bool writable) {
  if (writable == writable_) return;
  writable_ = writable;
  pipeline().fireChannelWritabilityChanged();
}

void EmbeddedChannel::execute(std::function<void()> task) { tasks_.push_back(std::move(task)); }

ScheduledTask EmbeddedChannel::schedule(std::chrono::nanoseconds delay,
                                        std::function<void()> task) {
  auto state = std::make_shared<ScheduledTask::State>();
  timed_.push_back({now_ + delay, timedSeq_++, state, std::move(task)});
  return ScheduledTask(std::move(state));
}

void EmbeddedChannel::runPendingTasks() {
  for (;;) {
    if (!tasks_.empty()) {
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      try {
        task();
      } catch (...) {
        onUnhandledException(std::current_exception());
      }
      continue;
    }
    // The earliest due scheduled task (ties: submission order).
    auto due = timed_.end();
    for (auto it = timed_.begin(); it != timed_.end(); ++it) {
      if (it->due <= now_ && (due == timed_.end() || it->due < due->due ||
                              (it->due == due->due && it->seq < due->seq)))
        due = it;
    }
    if (due == timed_.end()) return;
    Timed t = std::move(*due);
    timed_.erase(due);
    int expected = ScheduledTask::State::kWaiting;
    if (!t.state->phase.compare_exchange_strong(expected, ScheduledTask::State::kStarted))
      continue;  // cancelled
    try {
      t.task();
    } catch (...) {
      onUnhandledException(std::current_exception());
    }
  }
}

void EmbeddedChannel::advanceTimeBy(std::chrono::nanoseconds delta) {
  now_ += delta;
  runPendingTasks();
}

void EmbeddedChannel::doWrite(Message msg, WriteListener* listener) {
  if (!open_) {
    if (listener != nullptr) listener->operationComplete(ChannelErrc::closed);
    return;  // msg released here
  }
  pendingWrites_.push_back({std::move(msg), listener});
}

void EmbeddedChannel::doFlush() {
  std::vector<PendingWrite> writes = std::move(pendingWrites_);
  pendingWrites_.clear();
  for (PendingWrite& w : writes) {
    outbound_.push_back(std::move(w.msg));
    if (w.listener != nullptr) w.listener->operationComplete({});
  }
}

void EmbeddedChannel::doClose() {
  if (!open_) return;
  open_ = false;
  std::vector<PendingWrite> writes = std::move(pendingWrites_);
  pendingWrites_.clear();
  for (PendingWrite& w : writes) {
    if (w.listener != nullptr) w.listener->operationComplete(ChannelErrc::closedBeforeWritten);
  }
  pipeline().fireChannelInactive();
}

void EmbeddedChannel::onUnhandledMessage(Message msg) noexcept {
  try {
    inbound_.push_back(std::move(msg));
  } catch (...) {
  }
}

void EmbeddedChannel::onUnhandledException(std::exception_ptr error) noexcept {
  if (!error_) error_ = std::move(error);
}

void EmbeddedChannel::onWriteFailure(std::exception_ptr error) noexcept {
  if (!error_) error_ = std::move(error);
}

}  // namespace netbuf
