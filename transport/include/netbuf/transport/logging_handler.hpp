#pragma once
// LoggingHandler: Netty 4.1's io.netty.handler.logging.LoggingHandler on netbuf's pipeline. It
// logs every event that passes it, in both directions, and passes the event on untouched:
//
//     pipeline.addFirst("log", std::make_unique<LoggingHandler>(LogLevel::Info));
//
//     INFO [id: 0x00000007, L:/127.0.0.1:8080 - R:/127.0.0.1:51234] ACTIVE
//     INFO [id: 0x00000007, L:/127.0.0.1:8080 - R:/127.0.0.1:51234] READ: 5B
//              +-------------------------------------------------+
//              |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |
//     +--------+-------------------------------------------------+----------------+
//     |00000000| 68 65 6c 6c 6f                                  |hello           |
//     +--------+-------------------------------------------------+----------------+
//     INFO [id: 0x00000007, L:/127.0.0.1:8080 - R:/127.0.0.1:51234] READ COMPLETE
//
// Events and their lines (after the channel's description, as Netty writes them):
//
//     channelActive / channelInactive      ACTIVE / INACTIVE
//     channelRead / write                  READ: <message> / WRITE: <message>
//     channelReadComplete                  READ COMPLETE
//     channelWritabilityChanged            WRITABILITY CHANGED
//     userEventTriggered                   USER_EVENT: <message>
//     exceptionCaught                      EXCEPTION: <exception type>: <what()>
//     flush / close                        FLUSH / CLOSE
//
// <message>: for a buffer (ByteBuf, CompositeByteBuf, AnyByteBuf) its readable size, "5B", then,
// with ByteBufFormat::HexDump (the default) and at least one byte, a newline and the buffer's
// Netty-style table (the buffers' own fmt "{:x}" dump, so a composite prints its bytes across its
// components as one table); ByteBufFormat::Simple stops after the size. A std::string prints as
// "std::string, 5B", an IdleStateEvent as "IdleStateEvent(ReaderIdle, first)", any other type as
// its C++ name (typeName()): a Message holds any type and there is no toString() to call, so the
// contents of user types are not logged.
//
// The channel's description is Netty's: "[id: 0x<8 hex digits>, L:<local> - R:<remote>]", with
// " ! " instead of " - " while the channel is not active, "[id: 0x…, L:<local>]" when it has no
// remote address (a server channel). TCP addresses get Netty's leading '/' (L:/127.0.0.1:8080);
// other addresses (a Unix socket's path, EmbeddedChannel's "embedded") are printed as the
// channel gives them. Differences from Netty:
//   - The id: netbuf channels have no ChannelId, so the first LoggingHandler to meet a channel
//     gives it a process-wide sequence number, kept as a channel attribute (channelId()): every
//     LoggingHandler of that channel prints the same id. Netty's ids are random-looking.
//   - There is no logger framework. Each line goes to a sink, std::function<void(LogLevel,
//     std::string_view)>, given to the constructor; without one, to stderr as
//     "netbuf: <LEVEL> <line>\n", one fwrite per line (lines from different threads do not mix).
//     A line with a hex dump is one call with embedded newlines (Netty's NEWLINE), no trailing one.
//   - The level filter is one process-wide threshold instead of a logger's configuration: a
//     handler logs only when its level is at or above LoggingHandler::threshold(). The threshold
//     starts at Debug (so a LoggingHandler at its default level, Debug as in Netty, logs), is read
//     once from the environment variable NETBUF_LOG_LEVEL when the program starts (trace, debug,
//     info, warn, error, or off for nothing; any case; an unknown value is reported on stderr and
//     ignored), and setThreshold() changes it at any time, from any thread. A handler below the
//     threshold costs one relaxed atomic load and one branch per event, and formats nothing. The
//     threshold applies to custom sinks too.
//   - Netty's REGISTERED, UNREGISTERED, BIND, CONNECT, DISCONNECT, DEREGISTER and READ (the
//     outbound read request) events do not exist in this pipeline and are not logged. Exceptions
//     are logged by their type and what(), without a stack trace.
//
// Messages: an observer; every message and event passes on untouched in both directions
// (passThrough() for all four declared types), also when logging is off. The write's listener is
// passed on as it is.
//
// Errors: a sink that throws has its exception caught and dropped (logging never changes what the
// pipeline does). Formatting a message never throws for the types above.
//
// Ownership: the handler owns its sink (a copy of the std::function).
//
// Threading: like every handler, on the channel's thread; a sink shared by the handlers of several
// channels is called from several loop threads and must be thread-safe (the default is).
// setThreshold() and threshold() may be called from any thread; channelId() from any thread.

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/message.hpp>
#include <string>
#include <string_view>

namespace netbuf {

class Channel;

/// Netty's LogLevel.
enum class LogLevel : std::uint8_t { Trace, Debug, Info, Warn, Error };

/// "TRACE", "DEBUG", "INFO", "WARN" or "ERROR".
const char* logLevelName(LogLevel level) noexcept;

/// How LoggingHandler prints buffers (Netty's ByteBufFormat): the size alone, or the size and a
/// hex dump.
enum class ByteBufFormat : std::uint8_t { Simple, HexDump };

class LoggingHandler : public ChannelHandler {
 public:
  /// Receives each line (no trailing newline) with the handler's level.
  using Sink = std::function<void(LogLevel, std::string_view)>;

  /// Logs at level (Netty's default: Debug) through sink (empty: stderr).
  explicit LoggingHandler(LogLevel level = LogLevel::Debug,
                          ByteBufFormat format = ByteBufFormat::HexDump, Sink sink = {});
  LoggingHandler(LogLevel level, Sink sink)
      : LoggingHandler(level, ByteBufFormat::HexDump, std::move(sink)) {}

  LogLevel level() const noexcept { return level_; }
  ByteBufFormat byteBufFormat() const noexcept { return format_; }
  /// True when this handler's level is at or above the threshold (it logs).
  bool isEnabled() const noexcept {
    return static_cast<int>(level_) >= threshold_.load(std::memory_order_relaxed);
  }

  /// The process-wide minimum level (see the header comment). Any thread.
  static void setThreshold(LogLevel level) noexcept;
  /// The current threshold; LogLevel values above Error (NETBUF_LOG_LEVEL=off) mean "nothing".
  static int threshold() noexcept { return threshold_.load(std::memory_order_relaxed); }
  /// The channel's id in log lines: a process-wide sequence number (from 1) given to the channel
  /// the first time it is asked for, kept as a channel attribute. Any thread.
  static std::uint32_t channelId(Channel& channel);
  /// The channel's description as it starts each line: "[id: 0x00000001, L:/1.2.3.4:80 - R:…]".
  static std::string channelString(Channel& channel);
  /// The default sink: "netbuf: <LEVEL> <line>\n" on stderr, one fwrite.
  static void stderrSink(LogLevel level, std::string_view line) noexcept;

  void channelActive(ChannelHandlerContext& ctx) override;
  void channelInactive(ChannelHandlerContext& ctx) override;
  void channelRead(ChannelHandlerContext& ctx, Message msg) override;
  void channelReadComplete(ChannelHandlerContext& ctx) override;
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override;
  void userEventTriggered(ChannelHandlerContext& ctx, Message event) override;
  void channelWritabilityChanged(ChannelHandlerContext& ctx) override;
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override;
  void flush(ChannelHandlerContext& ctx) override;
  void close(ChannelHandlerContext& ctx) override;
  /// An observer: every message passes on untouched in both directions.
  MessageTypes inboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

 protected:
  /// Hands one line to the sink (or stderr). Called only when isEnabled().
  void log(std::string_view line) const noexcept;

 private:
  /// "<channel> <event>" / "<channel> <event>: <message>" (the slow paths, out of line).
  void logEvent(ChannelHandlerContext& ctx, std::string_view event) const noexcept;
  void logMessage(ChannelHandlerContext& ctx, std::string_view event,
                  const Message& msg) const noexcept;
  void logException(ChannelHandlerContext& ctx, const std::exception_ptr& error) const noexcept;

  static std::atomic<int> threshold_;

  LogLevel level_;
  ByteBufFormat format_;
  Sink sink_;
};

}  // namespace netbuf
