#include <netbuf/transport/channel_group_future.hpp>

#include <utility>

#include "detail/group_operation.hpp"

namespace netbuf {

namespace detail {

std::shared_ptr<GroupOperation> GroupOperation::create(
    std::vector<std::shared_ptr<Channel>> channels) {
  auto op = std::make_shared<GroupOperation>(channels.size());
  for (std::size_t i = 0; i < channels.size(); ++i) {
    op->slots[i].op = op.get();
    op->slots[i].channel = std::move(channels[i]);
  }
  if (!op->slots.empty()) op->self = op;  // released by the last completion
  return op;
}

void GroupOperation::complete(Slot& slot, std::error_code ec) noexcept {
  if (ec) {
    std::lock_guard<std::mutex> lock(m);
    try {
      failures.emplace_back(slot.channel, ec);
    } catch (...) {  // out of memory: still counted below
    }
    failed.fetch_add(1, std::memory_order_relaxed);
  } else {
    successes.fetch_add(1, std::memory_order_relaxed);
  }
  // The counts above are final before the last decrement (acq_rel orders them for its reader).
  if (remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::shared_ptr<GroupOperation> keep;  // this state lives until the callbacks have run
  std::vector<std::function<void()>> run;
  {
    std::lock_guard<std::mutex> lock(m);
    keep = std::move(self);
    run = std::move(callbacks);
    callbacks.clear();
    done.store(true, std::memory_order_release);
  }
  cv.notify_all();
  for (auto& fn : run) {
    try {
      fn();
    } catch (...) {
    }
  }
}

}  // namespace detail

std::size_t ChannelGroupFuture::size() const noexcept { return op_->slots.size(); }

bool ChannelGroupFuture::isDone() const noexcept {
  return op_->done.load(std::memory_order_acquire);
}

bool ChannelGroupFuture::isSuccess() const noexcept {
  return isDone() && op_->failed.load(std::memory_order_relaxed) == 0;
}

std::size_t ChannelGroupFuture::successCount() const noexcept {
  return op_->successes.load(std::memory_order_acquire);
}

std::size_t ChannelGroupFuture::failureCount() const noexcept {
  return op_->failed.load(std::memory_order_acquire);
}

std::vector<ChannelGroupFuture::Failure> ChannelGroupFuture::failures() const {
  std::lock_guard<std::mutex> lock(op_->m);
  return op_->failures;
}

void ChannelGroupFuture::wait() const {
  std::unique_lock<std::mutex> lock(op_->m);
  op_->cv.wait(lock, [&] { return op_->done.load(std::memory_order_acquire); });
}

bool ChannelGroupFuture::waitFor(std::chrono::nanoseconds timeout) const {
  std::unique_lock<std::mutex> lock(op_->m);
  return op_->cv.wait_for(lock, timeout, [&] { return op_->done.load(std::memory_order_acquire); });
}

std::error_code ChannelGroupFuture::firstError() const {
  std::lock_guard<std::mutex> lock(op_->m);
  return op_->failures.empty() ? std::error_code() : op_->failures.front().second;
}

void ChannelGroupFuture::whenDone(std::function<void()> fn) const {
  {
    std::lock_guard<std::mutex> lock(op_->m);
    if (!op_->done.load(std::memory_order_acquire)) {
      op_->callbacks.push_back(std::move(fn));
      return;
    }
  }
  try {
    fn();
  } catch (...) {
  }
}

}  // namespace netbuf
