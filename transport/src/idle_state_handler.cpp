#include <netbuf/transport/idle_state_handler.hpp>

#include <algorithm>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <utility>

namespace netbuf {

using namespace std::chrono_literals;

namespace {

// Netty's MIN_TIMEOUT_NANOS: a positive idle time is at least this long.
constexpr std::chrono::nanoseconds kMinTimeout = 1ms;

std::chrono::nanoseconds normalize(std::chrono::nanoseconds t) noexcept {
  return t <= 0ns ? 0ns : std::max(t, kMinTimeout);
}

std::chrono::steady_clock::time_point nowOf(ChannelHandlerContext& ctx) noexcept {
  return ctx.channel().executor().now();
}

}  // namespace

const char* idleStateName(IdleState state) noexcept {
  switch (state) {
    case IdleState::ReaderIdle:
      return "ReaderIdle";
    case IdleState::WriterIdle:
      return "WriterIdle";
    case IdleState::AllIdle:
      return "AllIdle";
  }
  return "?";
}

// ------------------------------------------------------------------ IdleStateHandler

IdleStateHandler::IdleStateHandler(std::chrono::nanoseconds readerIdleTime,
                                   std::chrono::nanoseconds writerIdleTime,
                                   std::chrono::nanoseconds allIdleTime)
    : readerIdleTime_(normalize(readerIdleTime)),
      writerIdleTime_(normalize(writerIdleTime)),
      allIdleTime_(normalize(allIdleTime)),
      lifetime_(std::make_shared<char>()) {}

IdleStateHandler::~IdleStateHandler() { destroy(); }

void IdleStateHandler::handlerAdded(ChannelHandlerContext& ctx) {
  // Added to a channel that is already active: channelActive will not come, start now.
  if (ctx.channel().isActive()) initialize(ctx);
}

void IdleStateHandler::handlerRemoved(ChannelHandlerContext&) { destroy(); }

void IdleStateHandler::channelActive(ChannelHandlerContext& ctx) {
  initialize(ctx);  // a no-op when handlerAdded already started the timers
  ctx.fireChannelActive();
}

void IdleStateHandler::channelInactive(ChannelHandlerContext& ctx) {
  destroy();
  ctx.fireChannelInactive();
}

void IdleStateHandler::channelRead(ChannelHandlerContext& ctx, Message msg) {
  if (readerIdleTime_ > 0ns || allIdleTime_ > 0ns) {
    reading_ = true;
    firstReaderIdleEvent_ = firstAllIdleEvent_ = true;
  }
  ctx.fireChannelRead(std::move(msg));
}

void IdleStateHandler::channelReadComplete(ChannelHandlerContext& ctx) {
  if ((readerIdleTime_ > 0ns || allIdleTime_ > 0ns) && reading_) {
    lastReadTime_ = nowOf(ctx);
    reading_ = false;
  }
  ctx.fireChannelReadComplete();
}

void IdleStateHandler::write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) {
  // Counted at the next flush, where writes complete in this pipeline (see the header).
  if (writerIdleTime_ > 0ns || allIdleTime_ > 0ns) writePending_ = true;
  ctx.write(std::move(msg), listener);
}

void IdleStateHandler::flush(ChannelHandlerContext& ctx) {
  if (writePending_) {
    writePending_ = false;
    lastWriteTime_ = nowOf(ctx);
    firstWriterIdleEvent_ = firstAllIdleEvent_ = true;
  }
  ctx.flush();
}

void IdleStateHandler::channelIdle(ChannelHandlerContext& ctx, IdleStateEvent evt) {
  ctx.fireUserEventTriggered(Message(evt));
}

void IdleStateHandler::initialize(ChannelHandlerContext& ctx) {
  // Started already, or stopped for good (Netty: state 1 or 2).
  if (state_ != State::kNew) return;
  state_ = State::kStarted;
  ctx_ = &ctx;
  lastReadTime_ = lastWriteTime_ = nowOf(ctx);
  if (readerIdleTime_ > 0ns) readerIdleTimeout_ = schedule(readerIdleTime_, Check::kReader);
  if (writerIdleTime_ > 0ns) writerIdleTimeout_ = schedule(writerIdleTime_, Check::kWriter);
  if (allIdleTime_ > 0ns) allIdleTimeout_ = schedule(allIdleTime_, Check::kAll);
}

void IdleStateHandler::destroy() noexcept {
  state_ = State::kStopped;
  readerIdleTimeout_.cancel();
  writerIdleTimeout_.cancel();
  allIdleTimeout_.cancel();
  readerIdleTimeout_ = ScheduledTask();
  writerIdleTimeout_ = ScheduledTask();
  allIdleTimeout_ = ScheduledTask();
  ctx_ = nullptr;
}

IdleStateHandler::Clock::time_point IdleStateHandler::now() const noexcept { return nowOf(*ctx_); }

ScheduledTask IdleStateHandler::schedule(std::chrono::nanoseconds delay, Check check) {
  // The task runs only while this handler is started: stopping (and destruction) cancels it.
  return ctx_->channel().executor().schedule(delay, [this, check] { runCheck(check); });
}

void IdleStateHandler::runCheck(Check check) {
  switch (check) {
    case Check::kReader:
      readerIdleCheck();
      break;
    case Check::kWriter:
      writerIdleCheck();
      break;
    case Check::kAll:
      allIdleCheck();
      break;
  }
}

void IdleStateHandler::readerIdleCheck() {
  if (state_ != State::kStarted || !ctx_->channel().isOpen()) return;
  std::chrono::nanoseconds nextDelay = readerIdleTime_;
  if (!reading_) nextDelay -= now() - lastReadTime_;
  if (nextDelay <= 0ns) {
    // Idle: check again a full period later, then tell the pipeline (the last step: the handler
    // may be removed and destroyed by whoever handles the event).
    readerIdleTimeout_ = schedule(readerIdleTime_, Check::kReader);
    const bool first = std::exchange(firstReaderIdleEvent_, false);
    fireIdle(IdleStateEvent{IdleState::ReaderIdle, first});
  } else {
    // Read meanwhile: check again when the idle time since that read has passed.
    readerIdleTimeout_ = schedule(nextDelay, Check::kReader);
  }
}

void IdleStateHandler::writerIdleCheck() {
  if (state_ != State::kStarted || !ctx_->channel().isOpen()) return;
  const std::chrono::nanoseconds nextDelay = writerIdleTime_ - (now() - lastWriteTime_);
  if (nextDelay <= 0ns) {
    writerIdleTimeout_ = schedule(writerIdleTime_, Check::kWriter);
    const bool first = std::exchange(firstWriterIdleEvent_, false);
    fireIdle(IdleStateEvent{IdleState::WriterIdle, first});
  } else {
    writerIdleTimeout_ = schedule(nextDelay, Check::kWriter);
  }
}

void IdleStateHandler::allIdleCheck() {
  if (state_ != State::kStarted || !ctx_->channel().isOpen()) return;
  std::chrono::nanoseconds nextDelay = allIdleTime_;
  if (!reading_) nextDelay -= now() - std::max(lastReadTime_, lastWriteTime_);
  if (nextDelay <= 0ns) {
    allIdleTimeout_ = schedule(allIdleTime_, Check::kAll);
    const bool first = std::exchange(firstAllIdleEvent_, false);
    fireIdle(IdleStateEvent{IdleState::AllIdle, first});
  } else {
    allIdleTimeout_ = schedule(nextDelay, Check::kAll);
  }
}

void IdleStateHandler::fireIdle(IdleStateEvent evt) noexcept {
  ChannelHandlerContext& ctx = *ctx_;
  Channel& channel = ctx.channel();
  const std::weak_ptr<const void> alive = lifetime_;
  try {
    channelIdle(ctx, evt);
  } catch (...) {
    // Netty: an exception from channelIdle goes to exceptionCaught. If channelIdle removed this
    // handler (destroying it and its context), it enters at the head instead.
    if (!alive.expired()) {
      ctx.fireExceptionCaught(std::current_exception());
    } else {
      channel.pipeline().fireExceptionCaught(std::current_exception());
    }
  }
}

}  // namespace netbuf
