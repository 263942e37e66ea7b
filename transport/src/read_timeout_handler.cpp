#include <netbuf/transport/read_timeout_handler.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <memory>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <string>

namespace netbuf {

using namespace std::chrono_literals;

namespace {

std::string describe(std::chrono::nanoseconds d) {
  if (d % 1s == 0ns) return fmt::format("{} s", d / 1s);
  if (d % 1ms == 0ns) return fmt::format("{} ms", d / 1ms);
  if (d % 1us == 0ns) return fmt::format("{} us", d / 1us);
  return fmt::format("{} ns", d.count());
}

}  // namespace

ReadTimeoutHandler::ReadTimeoutHandler(std::chrono::nanoseconds timeout)
    : IdleStateHandler(timeout, 0ns, 0ns) {}

void ReadTimeoutHandler::channelIdle(ChannelHandlerContext& ctx, IdleStateEvent evt) {
  if (evt.state == IdleState::ReaderIdle) readTimedOut(ctx);
}

void ReadTimeoutHandler::readTimedOut(ChannelHandlerContext& ctx) {
  if (closed_) return;
  closed_ = true;  // before firing: whatever the exception handlers do, this happens once
  Channel& channel = ctx.channel();
  const std::weak_ptr<const void> alive = lifetimeToken();
  ctx.fireExceptionCaught(std::make_exception_ptr(ReadTimeoutError(
      fmt::format("read timed out: nothing read for {}", describe(readerIdleTime())))));
  // A handler after this one may have removed it (destroying ctx): then close the whole channel.
  if (!alive.expired()) {
    ctx.close();
  } else {
    channel.close();
  }
}

}  // namespace netbuf
