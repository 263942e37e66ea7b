#include <netbuf/transport/logging_handler.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/idle_state_handler.hpp>
#include <string>
#include <utility>

namespace netbuf {

namespace {

constexpr int kOff = static_cast<int>(LogLevel::Error) + 1;

/// The channel attribute holding a channel's log id (0: none yet).
const AttributeKey<std::atomic<std::uint32_t>> kChannelId{"netbuf.logging.channelId"};
std::atomic<std::uint32_t> gNextChannelId{1};

/// NETBUF_LOG_LEVEL's value as a threshold, or -1 when it is not one.
int parseLevel(std::string_view text) {
  std::string lower;
  for (char c : text)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "trace") return static_cast<int>(LogLevel::Trace);
  if (lower == "debug") return static_cast<int>(LogLevel::Debug);
  if (lower == "info") return static_cast<int>(LogLevel::Info);
  if (lower == "warn" || lower == "warning") return static_cast<int>(LogLevel::Warn);
  if (lower == "error") return static_cast<int>(LogLevel::Error);
  if (lower == "off" || lower == "none") return kOff;
  return -1;
}

/// Netty prints a TCP address as Java's InetSocketAddress does: "/127.0.0.1:8080".
std::string displayAddress(std::string address) {
  if (!address.empty() &&
      (std::isdigit(static_cast<unsigned char>(address[0])) != 0 || address[0] == '[')) {
    address.insert(address.begin(), '/');
  }
  return address;
}

/// "5B" and, with a hex dump and at least one byte, a newline and the table.
template <class Buffer>
std::string describeBuffer(const Buffer& buf, ByteBufFormat format) {
  const std::size_t n = buf.readableBytes();
  if (format == ByteBufFormat::Simple || n == 0) return fmt::format("{}B", n);
  return fmt::format("{}B\n{:x}", n, buf);
}

std::string describeMessage(const Message& msg, ByteBufFormat format) {
  if (msg.is<ByteBuf>()) return describeBuffer(msg.as<ByteBuf>(), format);
  if (msg.is<CompositeByteBuf>()) return describeBuffer(msg.as<CompositeByteBuf>(), format);
  if (msg.is<AnyByteBuf>()) {
    return visitBuf(msg.as<AnyByteBuf>(),
                    [format](const auto& buf) { return describeBuffer(buf, format); });
  }
  if (msg.is<std::string>()) return fmt::format("std::string, {}B", msg.as<std::string>().size());
  if (msg.is<IdleStateEvent>()) {
    const auto& e = msg.as<IdleStateEvent>();
    return fmt::format("IdleStateEvent({}, {})", idleStateName(e.state),
                       e.first ? "first" : "repeat");
  }
  if (msg.empty()) return "(empty message)";
  return typeName(msg.type());
}

/// Reads NETBUF_LOG_LEVEL before main() (see the header comment).
struct ThresholdFromEnvironment {
  ThresholdFromEnvironment() {
    const char* env = std::getenv("NETBUF_LOG_LEVEL");
    if (env == nullptr || *env == '\0') return;
    const int level = parseLevel(env);
    if (level < 0) {
      std::fprintf(stderr,
                   "netbuf: NETBUF_LOG_LEVEL=%s is not a level (trace, debug, info, warn, error, "
                   "off): ignored\n",
                   env);
      return;
    }
    LoggingHandler::setThreshold(static_cast<LogLevel>(level));
  }
};

}  // namespace

constinit std::atomic<int> LoggingHandler::threshold_{static_cast<int>(LogLevel::Debug)};

namespace {
// After threshold_'s constant initialisation (done at compile time), before main().
const ThresholdFromEnvironment kThresholdFromEnvironment;
}  // namespace

const char* logLevelName(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Trace:
      return "TRACE";
    case LogLevel::Debug:
      return "DEBUG";
    case LogLevel::Info:
      return "INFO";
    case LogLevel::Warn:
      return "WARN";
    case LogLevel::Error:
      return "ERROR";
  }
  return "?";
}

LoggingHandler::LoggingHandler(LogLevel level, ByteBufFormat format, Sink sink)
    : level_(level), format_(format), sink_(std::move(sink)) {}

void LoggingHandler::setThreshold(LogLevel level) noexcept {
  // A LogLevel beyond Error (only "off" from the environment makes one) disables everything.
  threshold_.store(static_cast<int>(level), std::memory_order_relaxed);
}

std::uint32_t LoggingHandler::channelId(Channel& channel) {
  std::atomic<std::uint32_t>& id = channel.attr(kChannelId);
  std::uint32_t current = id.load(std::memory_order_acquire);
  if (current != 0) return current;
  const std::uint32_t mine = gNextChannelId.fetch_add(1, std::memory_order_relaxed);
  // Two threads asking at once: the first to store wins, the other's number is skipped.
  if (id.compare_exchange_strong(current, mine, std::memory_order_acq_rel)) return mine;
  return current;
}

std::string LoggingHandler::channelString(Channel& channel) {
  const std::uint32_t id = channelId(channel);
  std::string local = channel.localAddress();
  std::string remote = channel.remoteAddress();
  if (!remote.empty()) {
    return fmt::format("[id: 0x{:08x}, L:{}{}R:{}]", id, displayAddress(std::move(local)),
                       channel.isActive() ? " - " : " ! ", displayAddress(std::move(remote)));
  }
  if (!local.empty()) return fmt::format("[id: 0x{:08x}, L:{}]", id, displayAddress(local));
  return fmt::format("[id: 0x{:08x}]", id);
}

void LoggingHandler::stderrSink(LogLevel level, std::string_view line) noexcept {
  try {
    const std::string text = fmt::format("netbuf: {} {}\n", logLevelName(level), line);
    std::fwrite(text.data(), 1, text.size(), stderr);
  } catch (...) {
  }
}

void LoggingHandler::log(std::string_view line) const noexcept {
  try {
    if (sink_) {
      sink_(level_, line);
    } else {
      stderrSink(level_, line);
    }
  } catch (...) {
    // A failing sink must not change what the pipeline does.
  }
}

void LoggingHandler::logEvent(ChannelHandlerContext& ctx, std::string_view event) const noexcept {
  try {
    log(fmt::format("{} {}", channelString(ctx.channel()), event));
  } catch (...) {
  }
}

void LoggingHandler::logMessage(ChannelHandlerContext& ctx, std::string_view event,
                                const Message& msg) const noexcept {
  try {
    log(fmt::format("{} {}: {}", channelString(ctx.channel()), event,
                    describeMessage(msg, format_)));
  } catch (...) {
  }
}

void LoggingHandler::logException(ChannelHandlerContext& ctx,
                                  const std::exception_ptr& error) const noexcept {
  try {
    std::string what;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = fmt::format("{}: {}", typeName(typeid(e)), e.what());
    } catch (...) {
      what = "unknown exception";
    }
    log(fmt::format("{} EXCEPTION: {}", channelString(ctx.channel()), what));
  } catch (...) {
  }
}

void LoggingHandler::channelActive(ChannelHandlerContext& ctx) {
  if (isEnabled()) [[unlikely]]
    logEvent(ctx, "ACTIVE");
  ctx.fireChannelActive();
}

void LoggingHandler::channelInactive(ChannelHandlerContext& ctx) {
  if (isEnabled()) [[unlikely]]
    logEvent(ctx, "INACTIVE");
  ctx.fireChannelInactive();
}

void LoggingHandler::channelRead(ChannelHandlerContext& ctx, Message msg) {
  if (isEnabled()) [[unlikely]]
    logMessage(ctx, "READ", msg);
  ctx.fireChannelRead(std::move(msg));
}

void LoggingHandler::channelReadComplete(ChannelHandlerContext& ctx) {
  if (isEnabled()) [[unlikely]]
    logEvent(ctx, "READ COMPLETE");
  ctx.fireChannelReadComplete();
}

void LoggingHandler::exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) {
  if (isEnabled()) [[unlikely]]
    logException(ctx, error);
  ctx.fireExceptionCaught(std::move(error));
}

void LoggingHandler::userEventTriggered(ChannelHandlerContext& ctx, Message event) {
  if (isEnabled()) [[unlikely]]
    logMessage(ctx, "USER_EVENT", event);
  ctx.fireUserEventTriggered(std::move(event));
}

void LoggingHandler::channelWritabilityChanged(ChannelHandlerContext& ctx) {
  if (isEnabled()) [[unlikely]]
    logEvent(ctx, "WRITABILITY CHANGED");
  ctx.fireChannelWritabilityChanged();
}

void LoggingHandler::write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) {
  if (isEnabled()) [[unlikely]]
    logMessage(ctx, "WRITE", msg);
  ctx.write(std::move(msg), listener);
}

void LoggingHandler::flush(ChannelHandlerContext& ctx) {
  if (isEnabled()) [[unlikely]]
    logEvent(ctx, "FLUSH");
  ctx.flush();
}

void LoggingHandler::close(ChannelHandlerContext& ctx) {
  if (isEnabled()) [[unlikely]]
    logEvent(ctx, "CLOSE");
  ctx.close();
}

}  // namespace netbuf
