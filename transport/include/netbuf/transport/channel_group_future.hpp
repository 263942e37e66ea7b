#pragma once
// ChannelGroupFuture: the completion of one ChannelGroup operation (a write, a writeAndFlush or a
// close applied to every channel of the group), Netty's ChannelGroupFuture.
//
//     ChannelGroupFuture f = group.writeAndFlush(Unpooled::copiedBuffer("tick\n"));
//     f.onComplete([f](ErrorCode firstError) {                 // on the last channel's loop
//       if (firstError) log(f.failureCount(), "channels missed the tick");
//     });
//     co_await f.onComplete(asio::use_awaitable);             // throws with the first failure
//     if (!f.waitFor(5s)) ...                                  // or block (not on a loop thread)
//
// The operation is done when it has finished on every channel it was applied to: for a write,
// when each channel's WriteListener has been notified (the bytes handed to the socket, or the
// write failed); for a close, when each channel has closed (see ChannelGroup::close). Each channel
// counts once, as a success or as a failure with its error_code (failures() names the channel).
//
// Netty's differences: no cancel() (a write handed to a channel cannot be taken back), no
// per-channel future lookup (find(channel)): failures() lists the channels that failed, the rest
// succeeded. isPartialSuccess/isPartialFailure are successCount() > 0 / failureCount() > 0.
//
// Ownership: a handle (copyable, cheap: one std::shared_ptr) on the operation's state. The state
// owns one WriteListener per channel (the listeners the group passed with each write), and keeps
// itself alive until the last channel has completed, whether or not a handle is kept: dropping
// every handle never frees a listener a channel still holds. It also holds a reference to each
// channel it was applied to, released when the state goes (after the operation has completed and
// the last handle has gone). A write that a channel never completes (a channel destroyed open,
// when its EventLoopGroup is destroyed without a graceful shutdown) leaves the operation undone
// for ever: wait with waitFor() where that can happen.
//
// Threading: every member may be called from any thread. wait() and waitFor() block: never call
// them on the loop of a channel the operation involves (that loop completes it). onComplete()'s
// handler runs once, on its associated executor; without one, on the thread that completes the
// operation (a loop thread), or, when it is done already, posted to Asio's system executor. It
// must not block.

#include <boost/asio/async_result.hpp>
#include <boost/asio/system_executor.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <netbuf/transport/detail/async_op.hpp>
#include <system_error>
#include <utility>
#include <vector>

namespace netbuf {

class Channel;
class ChannelGroup;

namespace detail {
struct GroupOperation;
}  // namespace detail

class ChannelGroupFuture {
 public:
  /// A channel that failed, and why.
  using Failure = std::pair<std::shared_ptr<Channel>, std::error_code>;

  /// The number of channels the operation was applied to.
  std::size_t size() const noexcept;
  /// True once every channel has completed.
  bool isDone() const noexcept;
  /// Done, and no channel failed (also true for an operation on no channel).
  bool isSuccess() const noexcept;
  /// Channels completed so far, successfully / with an error.
  std::size_t successCount() const noexcept;
  std::size_t failureCount() const noexcept;
  /// The channels that failed so far, in the order they failed.
  std::vector<Failure> failures() const;
  /// The error of the first channel that failed; empty while none has.
  std::error_code firstError() const;

  /// Blocks until done.
  void wait() const;
  /// Blocks until done or timeout has passed; true when done.
  bool waitFor(std::chrono::nanoseconds timeout) const;
  /// Completes (void(ErrorCode)) once the operation is done: with the first channel's error when
  /// any failed (the counts and failures() say the rest), else success. token is any Asio
  /// completion token (see the header comment for where the handler runs).
  template <class Token>
  auto onComplete(Token&& token) const {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(
        [op = op_](auto handler) {
          detail::SharedCompletion<decltype(handler), boost::asio::system_executor> completion(
              std::move(handler), boost::asio::system_executor());
          const ChannelGroupFuture self(op);
          self.whenDone([completion, op] {
            completion.complete(ErrorCode(ChannelGroupFuture(op).firstError()));
          });
          completion.initiated();
        },
        token);
  }

 private:
  friend class ChannelGroup;
  friend struct detail::GroupOperation;
  explicit ChannelGroupFuture(std::shared_ptr<detail::GroupOperation> op) noexcept
      : op_(std::move(op)) {}
  /// Runs fn once the operation is done: at once on the calling thread if it is, else on the
  /// thread that completes it. An exception fn throws is caught and dropped.
  void whenDone(std::function<void()> fn) const;

  std::shared_ptr<detail::GroupOperation> op_;
};

}  // namespace netbuf
