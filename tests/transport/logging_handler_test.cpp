#include <netbuf/transport/logging_handler.hpp>

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <memory>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <netbuf/transport/idle_state_handler.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace netbuf;

namespace {

struct Line {
  LogLevel level;
  std::string text;
};

/// A sink that keeps every line.
struct Lines {
  std::vector<Line> lines;
  LoggingHandler::Sink sink() {
    return [this](LogLevel level, std::string_view text) {
      lines.push_back({level, std::string(text)});
    };
  }
  std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (const auto& l : lines) out.push_back(l.text);
    return out;
  }
};

/// Restores the process-wide threshold when a test changed it.
struct ThresholdGuard {
  int saved = LoggingHandler::threshold();
  ~ThresholdGuard() { LoggingHandler::setThreshold(static_cast<LogLevel>(saved)); }
};

/// "[id: 0x…, L:embedded - R:embedded]" for an EmbeddedChannel.
std::string prefixOf(Channel& ch) {
  return fmt::format("[id: 0x{:08x}, L:embedded - R:embedded]", LoggingHandler::channelId(ch));
}

const char* const kHelloDump =
    "         +-------------------------------------------------+\n"
    "         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n"
    "+--------+-------------------------------------------------+----------------+\n"
    "|00000000| 68 65 6c 6c 6f                                  |hello           |\n"
    "+--------+-------------------------------------------------+----------------+";

/// A channel whose addresses and activity the test sets (executor: an EmbeddedChannel's).
class AddressedChannel final : public Channel {
 public:
  AddressedChannel(EmbeddedChannel& exec, std::string local, std::string remote)
      : Channel(static_cast<ChannelExecutor&>(exec)),
        local_(std::move(local)),
        remote_(std::move(remote)) {}
  ~AddressedChannel() override { destroyPipeline(); }
  bool isOpen() const noexcept override { return true; }
  bool isActive() const noexcept override { return active; }
  std::string localAddress() const override { return local_; }
  std::string remoteAddress() const override { return remote_; }
  bool active = true;

 protected:
  void doWrite(Message, WriteListener* listener) override {
    if (listener != nullptr) listener->operationComplete({});
  }
  void doFlush() override {}
  void doClose() override {}

 private:
  std::string local_;
  std::string remote_;
};

}  // namespace

TEST_CASE("LoggingHandler: one exact line per event, both directions, messages untouched") {
  ThresholdGuard guard;
  LoggingHandler::setThreshold(LogLevel::Debug);
  Lines log;
  EmbeddedChannel ch(std::make_unique<LoggingHandler>(LogLevel::Info, log.sink()));
  const std::string p = prefixOf(ch);
  REQUIRE(log.texts() == std::vector<std::string>{p + " ACTIVE"});
  CHECK(log.lines[0].level == LogLevel::Info);
  log.lines.clear();

  CHECK(ch.writeInbound(Unpooled::copiedBuffer("hello")));
  CHECK(log.texts() ==
        std::vector<std::string>{p + " READ: 5B\n" + kHelloDump, p + " READ COMPLETE"});
  auto in = ch.readInbound<ByteBuf>();
  REQUIRE(in);
  CHECK(in->readableStringView() == "hello");  // passed on untouched
  log.lines.clear();

  CHECK(ch.writeOutbound(Unpooled::copiedBuffer("hello")));
  CHECK(log.texts() == std::vector<std::string>{p + " WRITE: 5B\n" + kHelloDump, p + " FLUSH"});
  CHECK(ch.readOutbound<ByteBuf>()->readableStringView() == "hello");
  log.lines.clear();

  // Messages of other types: their C++ name (and a string's size), in both directions.
  CHECK(ch.writeInbound(std::string("abc"), 42));
  CHECK(ch.writeOutbound(std::vector<int>{1, 2}));
  CHECK(log.texts() == std::vector<std::string>{p + " READ: std::string, 3B", p + " READ: int",
                                                p + " READ COMPLETE",
                                                p + " WRITE: std::vector<int>", p + " FLUSH"});
  CHECK(ch.readInbound<std::string>() == "abc");
  CHECK(ch.readInbound<int>() == 42);
  CHECK(ch.readOutbound<std::vector<int>>() == std::vector<int>{1, 2});
  log.lines.clear();

  // An empty buffer: "0B", no table.
  CHECK(ch.writeOutbound(Unpooled::buffer(8)));
  CHECK(log.texts() == std::vector<std::string>{p + " WRITE: 0B", p + " FLUSH"});
  ch.readOutbound<ByteBuf>();
  log.lines.clear();

  ch.pipeline().fireUserEventTriggered(Message(IdleStateEvent{IdleState::ReaderIdle, true}));
  ch.pipeline().fireUserEventTriggered(Message(IdleStateEvent{IdleState::AllIdle, false}));
  ch.pipeline().fireUserEventTriggered(Message(std::string("custom")));
  ch.setWritable(false);
  ch.setWritable(true);
  ch.pipeline().fireExceptionCaught(std::make_exception_ptr(IllegalStateError("boom")));
  CHECK_THROWS_WITH_AS(ch.checkException(), "boom", IllegalStateError);  // passed on to the tail
  ch.pipeline().fireExceptionCaught(std::make_exception_ptr(42));
  CHECK_THROWS_AS(ch.checkException(), int);
  CHECK(log.texts() == std::vector<std::string>{
                           p + " USER_EVENT: IdleStateEvent(ReaderIdle, first)",
                           p + " USER_EVENT: IdleStateEvent(AllIdle, repeat)",
                           p + " USER_EVENT: std::string, 6B",
                           p + " WRITABILITY CHANGED",
                           p + " WRITABILITY CHANGED",
                           p + " EXCEPTION: netbuf::IllegalStateError: boom",
                           p + " EXCEPTION: unknown exception",
                       });
  log.lines.clear();

  // close() logs CLOSE on the way out; the channel then fires INACTIVE, while no longer active.
  CHECK_FALSE(ch.finish());
  const std::string closed =
      fmt::format("[id: 0x{:08x}, L:embedded ! R:embedded]", LoggingHandler::channelId(ch));
  CHECK(log.texts() == std::vector<std::string>{p + " CLOSE", closed + " INACTIVE"});
}

TEST_CASE("LoggingHandler: hex dumps of a ByteBuf, a CompositeByteBuf and an AnyByteBuf") {
  ThresholdGuard guard;
  LoggingHandler::setThreshold(LogLevel::Trace);
  Lines log;
  EmbeddedChannel ch(std::make_unique<LoggingHandler>(LogLevel::Trace, log.sink()));
  const std::string p = prefixOf(ch);
  log.lines.clear();

  // 20 bytes: two rows, the second short; non-printable bytes as '.'.
  ByteBuf flat = Unpooled::buffer(32);
  flat.writeBytes(std::string_view("0123456789abcdef"));
  flat.writeByte(0x00);
  flat.writeByte(0x7f);
  flat.writeByte(0x0a);
  flat.writeByte(0x41);
  const std::string twoRows =
      "         +-------------------------------------------------+\n"
      "         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n"
      "+--------+-------------------------------------------------+----------------+\n"
      "|00000000| 30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66 |0123456789abcdef|\n"
      "|00000010| 00 7f 0a 41                                     |...A            |\n"
      "+--------+-------------------------------------------------+----------------+";
  ch.pipeline().fireChannelRead(Message(std::move(flat)));
  CHECK(log.texts() == std::vector<std::string>{p + " READ: 20B\n" + twoRows});
  log.lines.clear();

  // The same bytes in three components: one table across them.
  CompositeByteBuf composite = ch.alloc().compositeBuffer();
  composite.addComponent(true, Unpooled::copiedBuffer("0123456"));
  composite.addComponent(true, Unpooled::copiedBuffer("789abcdef"));
  ByteBuf tail = Unpooled::buffer(4);
  tail.writeByte(0x00);
  tail.writeByte(0x7f);
  tail.writeByte(0x0a);
  tail.writeByte(0x41);
  composite.addComponent(true, std::move(tail));
  ch.pipeline().fireChannelRead(Message(std::move(composite)));
  CHECK(log.texts() == std::vector<std::string>{p + " READ: 20B\n" + twoRows});
  log.lines.clear();

  ch.pipeline().fireChannelRead(Message(AnyByteBuf(Unpooled::copiedBuffer("hello"))));
  CHECK(log.texts() == std::vector<std::string>{p + " READ: 5B\n" + kHelloDump});
  CHECK(log.lines[0].level == LogLevel::Trace);
  CHECK(ch.inboundCount() == 3);
  ch.finishAndReleaseAll();
}

TEST_CASE("LoggingHandler: ByteBufFormat::Simple prints the size only") {
  ThresholdGuard guard;
  LoggingHandler::setThreshold(LogLevel::Debug);
  Lines log;
  EmbeddedChannel ch(
      std::make_unique<LoggingHandler>(LogLevel::Warn, ByteBufFormat::Simple, log.sink()));
  const std::string p = prefixOf(ch);
  log.lines.clear();
  CompositeByteBuf composite = ch.alloc().compositeBuffer();
  composite.addComponent(true, Unpooled::copiedBuffer("abc"));
  composite.addComponent(true, Unpooled::copiedBuffer("de"));
  CHECK(ch.writeOutbound(Unpooled::copiedBuffer("hello"), std::move(composite)));
  CHECK(log.texts() == std::vector<std::string>{p + " WRITE: 5B", p + " WRITE: 5B", p + " FLUSH"});
  CHECK(log.lines[0].level == LogLevel::Warn);
  CHECK(ch.finishAndReleaseAll());
}

TEST_CASE("LoggingHandler: below the threshold nothing is logged, everything still passes") {
  ThresholdGuard guard;
  Lines log;
  LoggingHandler::setThreshold(LogLevel::Warn);
  EmbeddedChannel ch(
      std::make_unique<LoggingHandler>(LogLevel::Info, log.sink()),
      std::make_unique<LoggingHandler>(LogLevel::Error, ByteBufFormat::Simple,
                                       [&](LogLevel l, std::string_view t) {
                                         log.lines.push_back({l, "E " + std::string(t)});
                                       }));
  const std::string p = prefixOf(ch);
  // Only the Error handler logs.
  CHECK(log.texts() == std::vector<std::string>{"E " + p + " ACTIVE"});
  CHECK_FALSE(ch.pipeline().get("handler0") == nullptr);
  CHECK_FALSE(static_cast<LoggingHandler*>(ch.pipeline().get("handler0"))->isEnabled());
  CHECK(static_cast<LoggingHandler*>(ch.pipeline().get("handler1"))->isEnabled());
  log.lines.clear();

  LoggingHandler::setThreshold(static_cast<LogLevel>(static_cast<int>(LogLevel::Error) + 1));
  CHECK(ch.writeInbound(Unpooled::copiedBuffer("hello")));
  CHECK(ch.writeOutbound(Unpooled::copiedBuffer("x")));
  ch.setWritable(false);
  ch.pipeline().fireUserEventTriggered(Message(1));
  CHECK(log.lines.empty());  // "off": nothing at all
  CHECK(ch.readInbound<ByteBuf>()->readableStringView() == "hello");
  CHECK(ch.readOutbound<ByteBuf>()->readableStringView() == "x");

  // Changing the threshold takes effect at the next event.
  LoggingHandler::setThreshold(LogLevel::Info);
  ch.setWritable(true);
  CHECK(log.texts() ==
        std::vector<std::string>{p + " WRITABILITY CHANGED", "E " + p + " WRITABILITY CHANGED"});
  CHECK_FALSE(ch.finish());
}

TEST_CASE("LoggingHandler: channel descriptions as Netty's (TCP slash, inactive '!', no peer)") {
  EmbeddedChannel exec;
  AddressedChannel tcp(exec, "127.0.0.1:8080", "127.0.0.1:51234");
  const std::uint32_t id = LoggingHandler::channelId(tcp);
  CHECK(id != 0);
  CHECK(LoggingHandler::channelId(tcp) == id);   // stable
  CHECK(LoggingHandler::channelId(exec) != id);  // one per channel
  CHECK(LoggingHandler::channelString(tcp) ==
        fmt::format("[id: 0x{:08x}, L:/127.0.0.1:8080 - R:/127.0.0.1:51234]", id));
  tcp.active = false;
  CHECK(LoggingHandler::channelString(tcp) ==
        fmt::format("[id: 0x{:08x}, L:/127.0.0.1:8080 ! R:/127.0.0.1:51234]", id));

  AddressedChannel v6(exec, "[::1]:8080", "[::1]:40000");
  CHECK(
      LoggingHandler::channelString(v6) ==
      fmt::format("[id: 0x{:08x}, L:/[::1]:8080 - R:/[::1]:40000]", LoggingHandler::channelId(v6)));
  AddressedChannel server(exec, "0.0.0.0:80", "");
  CHECK(LoggingHandler::channelString(server) ==
        fmt::format("[id: 0x{:08x}, L:/0.0.0.0:80]", LoggingHandler::channelId(server)));
  AddressedChannel domain(exec, "/tmp/x.sock", "(unnamed)");
  CHECK(LoggingHandler::channelString(domain) ==
        fmt::format("[id: 0x{:08x}, L:/tmp/x.sock - R:(unnamed)]",
                    LoggingHandler::channelId(domain)));
  AddressedChannel nothing(exec, "", "");
  CHECK(LoggingHandler::channelString(nothing) ==
        fmt::format("[id: 0x{:08x}]", LoggingHandler::channelId(nothing)));

  // The lines of a handler on such a channel carry its description.
  ThresholdGuard guard;
  LoggingHandler::setThreshold(LogLevel::Debug);
  Lines log;
  tcp.active = true;
  tcp.pipeline().addLast("log", std::make_unique<LoggingHandler>(LogLevel::Debug, log.sink()));
  tcp.pipeline().fireChannelActive();
  tcp.writeAndFlush(Unpooled::copiedBuffer("hello"));
  CHECK(log.texts() ==
        std::vector<std::string>{
            fmt::format("[id: 0x{:08x}, L:/127.0.0.1:8080 - R:/127.0.0.1:51234] ACTIVE", id),
            fmt::format("[id: 0x{:08x}, L:/127.0.0.1:8080 - R:/127.0.0.1:51234] WRITE: 5B\n{}", id,
                        kHelloDump),
            fmt::format("[id: 0x{:08x}, L:/127.0.0.1:8080 - R:/127.0.0.1:51234] FLUSH", id)});
}

TEST_CASE("LoggingHandler: a throwing sink changes nothing; level names") {
  ThresholdGuard guard;
  LoggingHandler::setThreshold(LogLevel::Trace);
  int calls = 0;
  EmbeddedChannel ch(
      std::make_unique<LoggingHandler>(LogLevel::Info, [&](LogLevel, std::string_view) {
        ++calls;
        throw std::runtime_error("sink failed");
      }));
  CHECK(ch.writeInbound(std::string("a")));
  CHECK(ch.readInbound<std::string>() == "a");
  CHECK_NOTHROW(ch.checkException());
  CHECK(calls == 3);  // ACTIVE, READ, READ COMPLETE
  CHECK(std::string(logLevelName(LogLevel::Trace)) == "TRACE");
  CHECK(std::string(logLevelName(LogLevel::Debug)) == "DEBUG");
  CHECK(std::string(logLevelName(LogLevel::Info)) == "INFO");
  CHECK(std::string(logLevelName(LogLevel::Warn)) == "WARN");
  CHECK(std::string(logLevelName(LogLevel::Error)) == "ERROR");
  LoggingHandler defaults;
  CHECK(defaults.level() == LogLevel::Debug);
  CHECK(defaults.byteBufFormat() == ByteBufFormat::HexDump);
  CHECK_FALSE(ch.finish());
}
