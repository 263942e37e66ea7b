#pragma once
// coSpawn: runs a coroutine that serves one channel on the channel's loop (asio::co_spawn with the
// channel's executor), so that a server's connections can be written as coroutines:
//
//     ServerBootstrap().group(group).childHandler([](SocketChannel& ch) {
//       ch.pipeline().addLast("frames", ...).addLast("queue",
//                                              std::make_unique<ReceiveQueue<std::string>>());
//       coSpawn(ch.shared_from_this(), session(ch.shared_from_this()));
//     });
//
// An exception that escapes the coroutine is fired into the channel's pipeline as exceptionCaught,
// on the loop, as a handler's would be: the tail logs it and closes the channel (a ReceiveQueue
// records it first). When the channel is gone by then, it is written to stderr. The coroutine
// holds whatever it captures: capture the channel by std::shared_ptr to keep it alive while the
// coroutine runs.
//
// Shutdown: a graceful shutdown of the group closes the channel, so a coroutine suspended in
// receive() resumes with asio::error::eof (or its write fails) and can finish; one suspended in
// anything else the loop never completes is destroyed with the loop's io_context (its frame and
// what it holds are released, nothing leaks).
//
// Threading: any thread (co_spawn hands the coroutine's start to the loop).

#include <boost/asio/co_spawn.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <utility>

namespace netbuf {

namespace detail {
/// co_spawn's completion handler: an escaped exception goes to the channel's pipeline.
struct CoSpawnCompletion {
  std::weak_ptr<Channel> channel;
  void operator()(std::exception_ptr error) const noexcept {
    if (error == nullptr) return;
    if (auto ch = channel.lock()) {
      ch->pipeline().fireExceptionCaught(std::move(error));
      return;
    }
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "netbuf: a channel's coroutine threw after the channel was gone: %s\n",
                   e.what());
    } catch (...) {
      std::fprintf(stderr, "netbuf: a channel's coroutine threw after the channel was gone\n");
    }
  }
};
}  // namespace detail

/// Spawns coroutine (an asio::awaitable<void>, or a callable returning one) on channel's loop; see
/// the header comment.
template <class Coroutine>
void coSpawn(const std::shared_ptr<Channel>& channel, Coroutine&& coroutine) {
  boost::asio::co_spawn(channel->get_executor(), std::forward<Coroutine>(coroutine),
                        detail::CoSpawnCompletion{channel});
}

}  // namespace netbuf
