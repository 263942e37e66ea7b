#pragma once
// ReadTimeoutHandler: Netty 4.1's handler of the same name, on netbuf's pipeline. An
// IdleStateHandler with only a reader time: when nothing has been read for that long it fires a
// ReadTimeoutError through exceptionCaught (towards the tail) and closes the channel
// (ctx.close()), once.
//
//     pipeline.addLast("timeout", std::make_unique<ReadTimeoutHandler>(30s));
//
// Timers, reads and the virtual clock of EmbeddedChannel work as for IdleStateHandler (see
// idle_state_handler.hpp). Messages of any type pass through untouched, both ways.
//
// Threading: like every handler, on the channel's thread only. One instance per pipeline.

#include <chrono>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/transport/idle_state_handler.hpp>

namespace netbuf {

/// Nothing was read for a ReadTimeoutHandler's timeout (Netty's ReadTimeoutException).
class ReadTimeoutError : public Error {
 public:
  using Error::Error;
};

/// Closes the channel when nothing has been read for a while, after firing a ReadTimeoutError
/// through exceptionCaught (towards the tail). Both happen once.
class ReadTimeoutHandler : public IdleStateHandler {
 public:
  /// timeout <= 0 disables the handler (it never times out).
  explicit ReadTimeoutHandler(std::chrono::nanoseconds timeout);

 protected:
  /// Reacts to the reader-idle event by calling readTimedOut() (the event is not passed on).
  void channelIdle(ChannelHandlerContext& ctx, IdleStateEvent evt) final;
  /// Fires ReadTimeoutError through ctx.fireExceptionCaught(), then ctx.close(), the first time
  /// only. An override must not touch the handler after firing or closing (see lifetimeToken()).
  virtual void readTimedOut(ChannelHandlerContext& ctx);

 private:
  bool closed_ = false;
};

}  // namespace netbuf
