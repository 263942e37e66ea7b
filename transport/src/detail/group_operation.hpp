#pragma once
// The state behind a ChannelGroupFuture: one ChannelGroup operation over N channels. It owns one
// WriteListener (a Slot) per channel and keeps itself alive (self) until every slot has completed,
// so no slot is freed while a channel may still call it.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_group_future.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <system_error>
#include <vector>

namespace netbuf::detail {

struct GroupOperation {
  /// The listener of one channel's part of the operation.
  struct Slot final : WriteListener {
    GroupOperation* op = nullptr;
    std::shared_ptr<Channel> channel;
    void operationComplete(std::error_code ec) noexcept override { op->complete(*this, ec); }
  };

  /// An operation over these channels; for a non-empty set it holds itself until done.
  static std::shared_ptr<GroupOperation> create(std::vector<std::shared_ptr<Channel>> channels);

  explicit GroupOperation(std::size_t n) : slots(n), remaining(n), done(n == 0) {}

  /// One channel finished (exactly once per slot).
  void complete(Slot& slot, std::error_code ec) noexcept;

  std::vector<Slot> slots;  // sized once: the addresses never change
  std::atomic<std::size_t> remaining;
  std::atomic<std::size_t> successes{0};
  std::atomic<std::size_t> failed{0};
  std::atomic<bool> done;
  mutable std::mutex m;
  mutable std::condition_variable cv;
  std::vector<ChannelGroupFuture::Failure> failures;  // under m
  std::vector<std::function<void()>> callbacks;       // under m, until done
  std::shared_ptr<GroupOperation> self;               // until done
};

}  // namespace netbuf::detail
