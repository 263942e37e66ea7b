#pragma once
// Reconnector: keeps a client connection up, reconnecting with exponential backoff (what a Netty
// user writes by hand in channelInactive with eventLoop().schedule()).
//
//     auto link = Reconnector::start(Bootstrap().group(group).handler(init), "127.0.0.1", 7000);
//     ...
//     if (auto ch = link->channel()) ch->writeAndFlush(request);   // the current channel, if up
//     link->stop();                                                // no more reconnects; closes
//
// Backoff: the first attempt is made at once. After a failed attempt the next one waits
// initialDelay, then each wait is multiplier times the previous one, capped at maxDelay, each
// spread by +-jitter (a fraction: 0.2 waits between 0.8x and 1.2x, so that many clients of one
// server do not retry in step). A successful connection resets the wait to initialDelay; when it
// closes (the peer went away, an error, a handler's close), the next attempt follows after
// initialDelay. maxAttempts (0: unlimited) bounds the failed attempts in a row; reaching it ends
// the reconnector (onGaveUp), and so does the group's shutdown (onGaveUp(ChannelErrc::rejected)).
//
// Callbacks run on the loop of the attempt: onConnected(channel) after the channel is active (the
// Bootstrap's handler has built its pipeline), onDisconnected() after it closed, onGaveUp(error)
// once. They must not throw.
//
// Threading and lifetime: start() returns a shared handle; channel(), attempts(), isStopped() and
// stop() may be called from any thread. The reconnector keeps itself alive while it has work (a
// pending attempt, a timer, an open channel); stop() ends that. A graceful shutdown of the group
// closes its channel and ends it; call stop() before the group is destroyed, or not at all after.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <random>
#include <string>
#include <system_error>

namespace netbuf {

class Reconnector : public std::enable_shared_from_this<Reconnector> {
 public:
  struct Options {
    std::chrono::milliseconds initialDelay{100};
    std::chrono::milliseconds maxDelay{30000};
    double multiplier = 2.0;
    double jitter = 0.2;
    /// Failed attempts in a row before giving up (0: never).
    std::uint32_t maxAttempts = 0;
    std::function<void(std::shared_ptr<SocketChannel>)> onConnected;
    std::function<void()> onDisconnected;
    std::function<void(std::error_code)> onGaveUp;
  };

  /// Connects to host:port with bootstrap (its group, handler, options, connect timeout) and keeps
  /// reconnecting. Throws IllegalStateError when the bootstrap has no group, or an Options value is
  /// out of range (IllegalArgumentError: multiplier < 1, jitter outside [0, 1), delays <= 0).
  static std::shared_ptr<Reconnector> start(Bootstrap bootstrap, std::string host,
                                            unsigned short port, Options options);
  static std::shared_ptr<Reconnector> start(Bootstrap bootstrap, std::string host,
                                            unsigned short port) {
    return start(std::move(bootstrap), std::move(host), port, Options());
  }
  /// The same over a Unix domain socket.
  static std::shared_ptr<Reconnector> startUnix(Bootstrap bootstrap, std::string path,
                                                Options options);

  /// The connected channel, or nullptr between connections. Any thread.
  std::shared_ptr<SocketChannel> channel() const;
  /// Stops reconnecting and closes the current channel. Any thread; idempotent.
  void stop();
  bool isStopped() const noexcept { return stopped_.load(std::memory_order_acquire); }
  /// Connection attempts made / connections made so far.
  std::uint64_t attempts() const noexcept { return attempts_.load(std::memory_order_relaxed); }
  std::uint64_t connections() const noexcept {
    return connections_.load(std::memory_order_relaxed);
  }
  /// The wait before the n-th retry after a failure (n >= 1), before jitter: initialDelay *
  /// multiplier^(n-1), capped at maxDelay.
  std::chrono::milliseconds backoff(std::uint32_t n) const noexcept;

 private:
  struct Token {};

 public:
  /// Makes one connection attempt (detail::makeTcpConnect or makeUnixConnect, bound to the
  /// address).
  using Connect = std::function<std::shared_ptr<detail::ConnectAttempt>(
      const detail::ConnectConfig&, EventLoop&, detail::ConnectDone)>;
  Reconnector(Token, Bootstrap bootstrap, Connect connect, Options options);

 private:
  void attempt();
  void onResult(std::shared_ptr<SocketChannel> ch, std::error_code ec);
  const detail::ConnectConfig& config() const noexcept { return bootstrap_.config_; }
  void scheduleRetry(std::chrono::milliseconds delay);
  std::chrono::milliseconds jittered(std::chrono::milliseconds d);

  Bootstrap bootstrap_;
  Connect connect_;
  Options options_;
  mutable std::mutex mutex_;  // guards channel_, timer_, failures_, rng_
  std::shared_ptr<SocketChannel> channel_;
  ScheduledTask timer_;
  std::uint32_t failures_ = 0;  // failed attempts in a row
  std::minstd_rand rng_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> attempts_{0};
  std::atomic<std::uint64_t> connections_{0};
};

}  // namespace netbuf
