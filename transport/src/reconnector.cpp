#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <netbuf/transport/reconnector.hpp>

namespace netbuf {

namespace {

void checkOptions(const Reconnector::Options& o) {
  if (o.initialDelay.count() <= 0 || o.maxDelay < o.initialDelay) {
    throw IllegalArgumentError(
        fmt::format("Reconnector: initialDelay {} ms must be positive and at most maxDelay {} ms",
                    o.initialDelay.count(), o.maxDelay.count()));
  }
  if (!(o.multiplier >= 1.0) || !(o.jitter >= 0.0 && o.jitter < 1.0)) {
    throw IllegalArgumentError(fmt::format(
        "Reconnector: multiplier {} must be >= 1 and jitter {} in [0, 1)", o.multiplier, o.jitter));
  }
}

}  // namespace

Reconnector::Reconnector(Token, Bootstrap bootstrap, Connect connect, Options options)
    : bootstrap_(std::move(bootstrap)),
      connect_(std::move(connect)),
      options_(std::move(options)),
      rng_(std::random_device{}()) {}

std::shared_ptr<Reconnector> Reconnector::start(Bootstrap bootstrap, std::string host,
                                                unsigned short port, Options options) {
  if (bootstrap.group() == nullptr)
    throw IllegalStateError("Reconnector: bootstrap without a group");
  checkOptions(options);
  auto r = std::make_shared<Reconnector>(
      Token{}, std::move(bootstrap),
      [host = std::move(host), port](const detail::ConnectConfig& config, EventLoop& loop,
                                     detail::ConnectDone done) {
        return detail::makeTcpConnect(config, loop, host, port, std::move(done));
      },
      std::move(options));
  r->attempt();
  return r;
}

std::shared_ptr<Reconnector> Reconnector::startUnix(Bootstrap bootstrap, std::string path,
                                                    Options options) {
  if (bootstrap.group() == nullptr)
    throw IllegalStateError("Reconnector: bootstrap without a group");
  checkOptions(options);
  auto r = std::make_shared<Reconnector>(
      Token{}, std::move(bootstrap),
      [path = std::move(path)](const detail::ConnectConfig& config, EventLoop& loop,
                               detail::ConnectDone done) {
        return detail::makeUnixConnect(config, loop, path, std::move(done));
      },
      std::move(options));
  r->attempt();
  return r;
}

std::shared_ptr<SocketChannel> Reconnector::channel() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return channel_;
}

std::chrono::milliseconds Reconnector::backoff(std::uint32_t n) const noexcept {
  const double initial = static_cast<double>(options_.initialDelay.count());
  const double cap = static_cast<double>(options_.maxDelay.count());
  const double d = initial * std::pow(options_.multiplier, static_cast<double>(n > 0 ? n - 1 : 0));
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(d, cap)));
}

std::chrono::milliseconds Reconnector::jittered(std::chrono::milliseconds d) {
  if (options_.jitter == 0.0) return d;
  std::uniform_real_distribution<double> spread(1.0 - options_.jitter, 1.0 + options_.jitter);
  double f = 1.0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    f = spread(rng_);
  }
  return std::chrono::milliseconds(
      std::max<std::int64_t>(1, std::llround(static_cast<double>(d.count()) * f)));
}

void Reconnector::attempt() {
  if (isStopped()) return;
  attempts_.fetch_add(1, std::memory_order_relaxed);
  // A group that has shut down refuses the attempt: onResult then runs here with
  // ChannelErrc::rejected and gives up.
  connect_(config(), config().group->next(),
           [self = shared_from_this()](ErrorCode ec, std::shared_ptr<SocketChannel> ch, bool) {
             self->onResult(std::move(ch), ec);
           })
      ->start();
}

void Reconnector::onResult(std::shared_ptr<SocketChannel> ch, std::error_code ec) {
  if (isStopped()) {
    if (ch) ch->close();
    return;
  }
  if (ec) {
    std::uint32_t failures = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failures = ++failures_;
    }
    // The group is shutting down: no attempt can succeed any more.
    const bool final = ec == ChannelErrc::rejected;
    if (final || (options_.maxAttempts != 0 && failures >= options_.maxAttempts)) {
      stopped_.store(true, std::memory_order_release);
      if (options_.onGaveUp) options_.onGaveUp(ec);
      return;
    }
    scheduleRetry(jittered(backoff(failures)));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (isStopped()) {  // stop() ran since the check above: it could not see this channel
      ch->close();
      return;
    }
    failures_ = 0;
    channel_ = ch;
  }
  connections_.fetch_add(1, std::memory_order_relaxed);
  // Holding the reconnector until the channel closes: its close is what the next attempt follows.
  ch->addCloseListener([self = shared_from_this()] {
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->channel_.reset();
    }
    if (self->options_.onDisconnected) self->options_.onDisconnected();
    if (!self->isStopped()) self->scheduleRetry(self->jittered(self->options_.initialDelay));
  });
  if (options_.onConnected) options_.onConnected(std::move(ch));
}

void Reconnector::scheduleRetry(std::chrono::milliseconds delay) {
  EventLoopGroup* group = bootstrap_.group();
  try {
    ScheduledTask t =
        group->next().schedule(delay, [self = shared_from_this()] { self->attempt(); });
    std::lock_guard<std::mutex> lock(mutex_);
    timer_ = std::move(t);
    if (isStopped()) timer_.cancel();  // stop() ran between the schedule and here
  } catch (const RejectedExecutionError&) {
    stopped_.store(true, std::memory_order_release);
    if (options_.onGaveUp) options_.onGaveUp(ChannelErrc::rejected);
  }
}

void Reconnector::stop() {
  if (stopped_.exchange(true, std::memory_order_acq_rel)) return;
  std::shared_ptr<SocketChannel> ch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    timer_.cancel();
    ch = channel_;
  }
  if (ch) ch->close();
}

}  // namespace netbuf
