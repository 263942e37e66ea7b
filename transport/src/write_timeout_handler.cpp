#include <netbuf/transport/write_timeout_handler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <string>
#include <utility>

#include "detail/duration_format.hpp"

namespace netbuf {

using namespace std::chrono_literals;

namespace detail {

/// The listener a WriteTimeoutHandler passes down with a write. It lives in its channel's pool
/// (never freed before the channel), so whoever completes the write may call it at any time.
struct WriteTimeoutNode final : WriteListener {
  explicit WriteTimeoutNode(WriteTimeoutPool* p) noexcept : pool(p) {}

  void operationComplete(std::error_code ec) noexcept override;

  WriteTimeoutPool* pool;
  WriteTimeoutHandler* owner = nullptr;  // the handler timing it (nullptr: timed out, detached)
  WriteListener* user = nullptr;         // the caller's listener, until notified
  std::chrono::steady_clock::time_point deadline{};
  WriteTimeoutNode* prev = nullptr;  // owner's list
  WriteTimeoutNode* next = nullptr;  // owner's list, or the pool's free list
  bool live = false;                 // handed down with a write that has not completed yet
};

/// Every node made for one channel's WriteTimeoutHandlers (a channel attribute: destroyed with the
/// channel). Loop thread only.
struct WriteTimeoutPool {
  WriteTimeoutNode* acquire() {
    WriteTimeoutNode* n = free;
    if (n != nullptr) {
      free = n->next;
    } else {
      n = &nodes.emplace_back(this);  // deque: the addresses of earlier nodes do not change
    }
    n->live = true;
    n->prev = n->next = nullptr;
    return n;
  }
  void release(WriteTimeoutNode* n) noexcept {
    n->live = false;
    n->owner = nullptr;
    n->user = nullptr;
    n->prev = nullptr;
    n->next = free;
    free = n;
  }

  std::deque<WriteTimeoutNode> nodes;
  WriteTimeoutNode* free = nullptr;
};

void WriteTimeoutNode::operationComplete(std::error_code ec) noexcept {
  if (!live) return;  // a channel completing a write twice: ignored
  if (owner != nullptr) owner->unlink(this);
  WriteListener* caller = user;  // nullptr once it has heard of the timeout
  pool->release(this);           // reusable from here on, also by what the caller does next
  if (caller != nullptr) caller->operationComplete(ec);
}

}  // namespace detail

namespace {

// Netty's MIN_TIMEOUT_NANOS.
constexpr std::chrono::nanoseconds kMinTimeout = 1ms;

/// Where a channel keeps its pool.
const AttributeKey<std::shared_ptr<detail::WriteTimeoutPool>> kPoolKey{"netbuf.writeTimeoutPool"};

}  // namespace

WriteTimeoutHandler::WriteTimeoutHandler(std::chrono::nanoseconds timeout)
    : timeout_(timeout <= 0ns ? 0ns : std::max(timeout, kMinTimeout)) {}

WriteTimeoutHandler::~WriteTimeoutHandler() { stop(); }

void WriteTimeoutHandler::handlerAdded(ChannelHandlerContext& ctx) {
  ctx_ = &ctx;
  if (timeout_ == 0ns) return;
  std::shared_ptr<detail::WriteTimeoutPool>& pool = ctx.channel().attr(kPoolKey);
  if (pool == nullptr) pool = std::make_shared<detail::WriteTimeoutPool>();
  pool_ = pool;
}

void WriteTimeoutHandler::handlerRemoved(ChannelHandlerContext&) { stop(); }

void WriteTimeoutHandler::stop() noexcept {
  timer_.cancel();
  timer_ = ScheduledTask();
  timerArmed_ = false;
  // The outstanding writes stay with the channel: their nodes go on forwarding completions.
  for (detail::WriteTimeoutNode* n = head_; n != nullptr;) {
    detail::WriteTimeoutNode* next = n->next;
    n->owner = nullptr;
    n->prev = n->next = nullptr;
    n = next;
  }
  head_ = tail_ = nullptr;
  outstanding_ = 0;
  ctx_ = nullptr;
}

void WriteTimeoutHandler::write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) {
  if (pool_ == nullptr || ctx_ == nullptr) [[unlikely]] {  // disabled, or removed meanwhile
    ctx.write(std::move(msg), listener);
    return;
  }
  detail::WriteTimeoutNode* n = pool_->acquire();
  n->owner = this;
  n->user = listener;
  n->deadline = ctx.channel().executor().now() + timeout_;
  // Deadlines only grow (fixed timeout, monotonic clock): appending keeps the list sorted.
  n->prev = tail_;
  if (tail_ != nullptr) {
    tail_->next = n;
  } else {
    head_ = n;
  }
  tail_ = n;
  ++outstanding_;
  if (!timerArmed_) arm(timeout_);
  // Linked before it goes down: the write may complete (or fail) before ctx.write() returns.
  ctx.write(std::move(msg), n);
}

void WriteTimeoutHandler::unlink(detail::WriteTimeoutNode* n) noexcept {
  if (n->prev != nullptr) {
    n->prev->next = n->next;
  } else {
    head_ = n->next;
  }
  if (n->next != nullptr) {
    n->next->prev = n->prev;
  } else {
    tail_ = n->prev;
  }
  n->prev = n->next = nullptr;
  n->owner = nullptr;
  --outstanding_;
}

void WriteTimeoutHandler::arm(std::chrono::nanoseconds delay) {
  timerArmed_ = true;
  // Captures only this (no allocation by std::function); stop() cancels it before the handler
  // goes. The scope keeps this handler and its context alive while the timer's code runs, even if
  // a listener or an exception handler removes the handler.
  timer_ = ctx_->channel().executor().schedule(delay, [this] {
    ChannelPipeline::EventScope scope(ctx_->pipeline());
    onTimer();
  });
}

void WriteTimeoutHandler::onTimer() {
  timerArmed_ = false;
  timer_ = ScheduledTask();
  ChannelHandlerContext* ctx = ctx_;
  const Clock::time_point now = ctx->channel().executor().now();
  bool timedOut = false;
  // Pop one due write at a time: a caller's listener may close the channel (completing other
  // writes, which unlinks them) or remove this handler (stop() empties the list).
  while (head_ != nullptr && head_->deadline <= now) {
    detail::WriteTimeoutNode* n = head_;
    unlink(n);  // detached: stays live until the channel completes the write, then is reused
    WriteListener* caller = std::exchange(n->user, nullptr);
    timedOut = true;
    if (caller != nullptr) caller->operationComplete(ChannelErrc::writeTimeout);
  }
  if (timedOut) writeTimedOut(*ctx);
  if (ctx_ != nullptr && head_ != nullptr && !timerArmed_) {
    arm(std::max<std::chrono::nanoseconds>(head_->deadline - now, 0ns));
  }
}

void WriteTimeoutHandler::writeTimedOut(ChannelHandlerContext& ctx) {
  if (closed_) return;
  closed_ = true;  // before firing: whatever the exception handlers do, this happens once
  ctx.fireExceptionCaught(std::make_exception_ptr(WriteTimeoutError(
      fmt::format("write timed out: not written within {}", detail::formatDuration(timeout_)))));
  ctx.close();
}

}  // namespace netbuf
