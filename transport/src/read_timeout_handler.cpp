#include <netbuf/transport/read_timeout_handler.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <memory>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <string>

#include "detail/duration_format.hpp"

namespace netbuf {

using namespace std::chrono_literals;

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
  ctx.fireExceptionCaught(std::make_exception_ptr(ReadTimeoutError(fmt::format(
      "read timed out: nothing read for {}", detail::formatDuration(readerIdleTime())))));
  // A handler after this one may have removed it (destroying ctx): then close the whole channel.
  if (!alive.expired()) {
    ctx.close();
  } else {
    channel.close();
  }
}

}  // namespace netbuf
