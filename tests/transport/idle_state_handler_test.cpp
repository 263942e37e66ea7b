#include <netbuf/transport/idle_state_handler.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <netbuf/transport/embedded_channel.hpp>
#include <string>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace doctest {
template <>
struct StringMaker<IdleStateEvent> {
  static String convert(const IdleStateEvent& e) {
    return String(idleStateName(e.state)) + (e.first ? "(first)" : "(repeat)");
  }
};
}  // namespace doctest

namespace {

using Events = std::vector<IdleStateEvent>;

/// What the recorder saw.
struct Log {
  Events events;
  std::vector<std::string> errors;  // what() of each exception
  int otherUserEvents = 0;
  int inactive = 0;
};

/// Records idle events and exceptions (handled here: they do not reach the tail).
struct Recorder : ChannelHandler {
  Log* log;
  explicit Recorder(Log* l) : log(l) {}
  void userEventTriggered(ChannelHandlerContext& ctx, Message e) override {
    if (e.is<IdleStateEvent>()) {
      log->events.push_back(e.as<IdleStateEvent>());
    } else {
      ++log->otherUserEvents;
      ctx.fireUserEventTriggered(std::move(e));
    }
  }
  void exceptionCaught(ChannelHandlerContext&, std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      log->errors.push_back(e.what());
    }
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    ++log->inactive;
    ctx.fireChannelInactive();
  }
};

/// A channel that starts inactive, with EmbeddedChannel's executor (its virtual clock).
class ManualChannel final : public Channel {
 public:
  explicit ManualChannel(EmbeddedChannel& clock) : Channel(static_cast<ChannelExecutor&>(clock)) {}
  ~ManualChannel() override { destroyPipeline(); }
  bool isOpen() const noexcept override { return open_; }
  bool isActive() const noexcept override { return active_; }
  std::string localAddress() const override { return "manual"; }
  std::string remoteAddress() const override { return "manual"; }
  void activate() {
    active_ = true;
    pipeline().fireChannelActive();
  }

 protected:
  void doWrite(Message, WriteListener* listener) override {
    if (listener != nullptr) listener->operationComplete({});
  }
  void doFlush() override {}
  void doClose() override {
    if (!open_) return;
    open_ = active_ = false;
    pipeline().fireChannelInactive();
  }

 private:
  bool open_ = true;
  bool active_ = false;
};

constexpr IdleStateEvent kReaderFirst{IdleState::ReaderIdle, true};
constexpr IdleStateEvent kReaderRepeat{IdleState::ReaderIdle, false};
constexpr IdleStateEvent kWriterFirst{IdleState::WriterIdle, true};
constexpr IdleStateEvent kWriterRepeat{IdleState::WriterIdle, false};
constexpr IdleStateEvent kAllFirst{IdleState::AllIdle, true};
constexpr IdleStateEvent kAllRepeat{IdleState::AllIdle, false};

}  // namespace

TEST_CASE("IdleStateHandler: reader idle fires, repeats with first=false, a read resets it") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(1s, 0s, 0s),
                     std::make_unique<Recorder>(&log));
  ch.advanceTimeBy(999ms);
  CHECK(log.events.empty());
  ch.advanceTimeBy(1ms);
  CHECK(log.events == Events{kReaderFirst});
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kReaderFirst, kReaderRepeat});
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kReaderFirst, kReaderRepeat, kReaderRepeat});

  // A read 500 ms into the next period: the check at its end reschedules for the rest.
  ch.advanceTimeBy(500ms);
  CHECK(ch.writeInbound(std::string("hello")));
  CHECK(ch.readInbound<std::string>() == "hello");  // passed through untouched
  log.events.clear();
  ch.advanceTimeBy(500ms);  // the check finds the read and reschedules for 500 ms more
  CHECK(log.events.empty());
  ch.advanceTimeBy(499ms);
  CHECK(log.events.empty());
  ch.advanceTimeBy(1ms);  // 1 s after the read: a new stretch of idleness
  CHECK(log.events == Events{kReaderFirst});
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kReaderFirst, kReaderRepeat});

  // Writes do not count as reads.
  log.events.clear();
  ch.advanceTimeBy(500ms);
  ch.writeOutbound(1);
  ch.advanceTimeBy(500ms);
  CHECK(log.events == Events{kReaderRepeat});
  CHECK(ch.readOutbound<int>() == 1);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("IdleStateHandler: a read in progress (channelRead without channelReadComplete)") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(1s, 0s, 1s),
                     std::make_unique<Recorder>(&log));
  ch.pipeline().fireChannelRead(Message(7));  // reading, not complete
  ch.advanceTimeBy(5s);
  CHECK(log.events.empty());                // never idle while reading (Netty's `reading`)
  ch.pipeline().fireChannelReadComplete();  // the read is counted now
  ch.advanceTimeBy(999ms);
  CHECK(log.events.empty());
  ch.advanceTimeBy(1ms);
  CHECK(log.events == Events{kReaderFirst, kAllFirst});
  CHECK(ch.readInbound<int>() == 7);
}

TEST_CASE("IdleStateHandler: writer idle fires and a flushed write resets it") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(0s, 1s, 0s),
                     std::make_unique<Recorder>(&log));
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kWriterFirst});
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kWriterFirst, kWriterRepeat});

  log.events.clear();
  ch.advanceTimeBy(300ms);
  CHECK(ch.writeOutbound(std::string("x")));  // write + flush
  CHECK(ch.readOutbound<std::string>() == "x");
  ch.advanceTimeBy(700ms);  // the check finds the write, reschedules for 300 ms more
  CHECK(log.events.empty());
  ch.advanceTimeBy(299ms);
  CHECK(log.events.empty());
  ch.advanceTimeBy(1ms);
  CHECK(log.events == Events{kWriterFirst});

  // A write counts when it is flushed (where writes complete in this pipeline), not before.
  log.events.clear();
  ch.write(std::string("unflushed"));
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kWriterRepeat});
  ch.advanceTimeBy(500ms);
  ch.flush();
  CHECK(ch.readOutbound<std::string>() == "unflushed");
  ch.advanceTimeBy(500ms);
  CHECK(log.events == Events{kWriterRepeat});
  ch.advanceTimeBy(500ms);
  CHECK(log.events == Events{kWriterRepeat, kWriterFirst});

  // A flush without a write is not a write; reads are not writes.
  ch.flush();
  ch.writeInbound(1);
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kWriterRepeat, kWriterFirst, kWriterRepeat});
  CHECK(ch.readInbound<int>() == 1);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("IdleStateHandler: all idle counts reads and writes") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(0s, 0s, 1s),
                     std::make_unique<Recorder>(&log));
  ch.advanceTimeBy(600ms);
  ch.writeInbound(1);  // read at 0.6 s
  ch.advanceTimeBy(600ms);
  ch.writeOutbound(2);  // write at 1.2 s
  ch.advanceTimeBy(999ms);
  CHECK(log.events.empty());
  ch.advanceTimeBy(1ms);  // 2.2 s
  CHECK(log.events == Events{kAllFirst});
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kAllFirst, kAllRepeat});
  ch.writeInbound(3);
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kAllFirst, kAllRepeat, kAllFirst});
  ch.writeOutbound(4);
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kAllFirst, kAllRepeat, kAllFirst, kAllFirst});
  CHECK(ch.finishAndReleaseAll());
}

TEST_CASE("IdleStateHandler: the three checks together, each with its own time") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(1s, 2s, 3s),
                     std::make_unique<Recorder>(&log));
  const auto count = [&](IdleStateEvent e) {
    return std::count(log.events.begin(), log.events.end(), e);
  };
  ch.advanceTimeBy(1s);
  CHECK(log.events == Events{kReaderFirst});
  ch.advanceTimeBy(1s);  // events due at the same time: no order promised between checks
  CHECK(log.events.size() == 3);
  CHECK(count(kReaderRepeat) == 1);
  CHECK(count(kWriterFirst) == 1);
  ch.advanceTimeBy(1s);
  CHECK(log.events.size() == 5);
  CHECK(count(kReaderRepeat) == 2);
  CHECK(count(kAllFirst) == 1);
  ch.advanceTimeBy(1s);
  CHECK(log.events.size() == 7);
  CHECK(count(kWriterRepeat) == 1);
}

TEST_CASE("IdleStateHandler: a time of 0 disables its check; tiny times become 1 ms") {
  Log log;
  {
    EmbeddedChannel ch(std::make_unique<IdleStateHandler>(0s, 0s, 0s),
                       std::make_unique<Recorder>(&log));
    ch.advanceTimeBy(1h);
    CHECK(log.events.empty());
  }
  {
    EmbeddedChannel ch(std::make_unique<IdleStateHandler>(-1s, 1s, 0s),
                       std::make_unique<Recorder>(&log));
    ch.advanceTimeBy(1s);
    CHECK(log.events == Events{kWriterFirst});  // no reader, no all
  }
  IdleStateHandler h(1ns, 0s, -5ms);
  CHECK(h.readerIdleTime() == 1ms);
  CHECK(h.writerIdleTime() == 0s);
  CHECK(h.allIdleTime() == 0s);
}

TEST_CASE("IdleStateHandler: added to an inactive channel, the timers start at channelActive") {
  EmbeddedChannel clock;
  Log log;
  ManualChannel ch(clock);
  ch.pipeline().addLast("idle", std::make_unique<IdleStateHandler>(1s, 0s, 0s));
  ch.pipeline().addLast("rec", std::make_unique<Recorder>(&log));
  clock.advanceTimeBy(5s);
  CHECK(log.events.empty());  // not active: no timer
  ch.activate();
  clock.advanceTimeBy(999ms);
  CHECK(log.events.empty());
  clock.advanceTimeBy(1ms);
  CHECK(log.events == Events{kReaderFirst});
  ch.activate();  // a second channelActive does not start a second set of timers
  clock.advanceTimeBy(1s);
  CHECK(log.events == Events{kReaderFirst, kReaderRepeat});
  ch.close();
  CHECK(log.inactive == 1);
  clock.advanceTimeBy(10s);
  CHECK(log.events.size() == 2);
}

TEST_CASE("IdleStateHandler: added to an active channel, the timers start at once") {
  Log log;
  EmbeddedChannel ch;
  ch.pipeline().addLast("rec", std::make_unique<Recorder>(&log));
  ch.advanceTimeBy(5s);
  ch.pipeline().addFirst("idle", std::make_unique<IdleStateHandler>(0s, 1s, 0s));
  ch.advanceTimeBy(999ms);
  CHECK(log.events.empty());  // measured from when it was added
  ch.advanceTimeBy(1ms);
  CHECK(log.events == Events{kWriterFirst});
}

TEST_CASE("IdleStateHandler: removal cancels the timers") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(1s, 1s, 1s),
                     std::make_unique<Recorder>(&log));
  ch.advanceTimeBy(500ms);
  ch.pipeline().remove("handler0");  // handlerRemoved cancels; the handler is destroyed
  ch.advanceTimeBy(10s);
  CHECK(log.events.empty());
  CHECK(ch.pipeline().names() == std::vector<std::string>{"handler1"});
}

namespace {
/// Removes the named handler when it sees the first idle event (from inside the timer's event).
struct RemoveOnIdle : ChannelHandler {
  Log* log;
  std::string victim;
  RemoveOnIdle(Log* l, std::string v) : log(l), victim(std::move(v)) {}
  void userEventTriggered(ChannelHandlerContext& ctx, Message e) override {
    log->events.push_back(e.as<IdleStateEvent>());
    if (ctx.pipeline().get(victim) != nullptr) ctx.pipeline().remove(victim);
  }
};
/// Closes the channel on the first idle event.
struct CloseOnIdle : ChannelHandler {
  Log* log;
  explicit CloseOnIdle(Log* l) : log(l) {}
  void userEventTriggered(ChannelHandlerContext& ctx, Message e) override {
    log->events.push_back(e.as<IdleStateEvent>());
    ctx.close();
  }
};
}  // namespace

TEST_CASE("IdleStateHandler: removed by the handler of its own event, it stops (no crash)") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(1s, 1s, 1s),
                     std::make_unique<RemoveOnIdle>(&log, "handler0"));
  ch.advanceTimeBy(1s);  // reader fires first: the handler is removed, the other two cancelled
  CHECK(log.events == Events{kReaderFirst});
  ch.advanceTimeBy(10s);
  CHECK(log.events == Events{kReaderFirst});
  CHECK(ch.pipeline().names() == std::vector<std::string>{"handler1"});
}

TEST_CASE("IdleStateHandler: closing the channel stops the timers") {
  SUBCASE("finish") {
    Log log;
    EmbeddedChannel ch(std::make_unique<IdleStateHandler>(1s, 1s, 1s),
                       std::make_unique<Recorder>(&log));
    ch.advanceTimeBy(1s);
    CHECK(log.events.size() == 3);
    CHECK_FALSE(ch.finish());
    CHECK(log.inactive == 1);
    ch.advanceTimeBy(10s);
    CHECK(log.events.size() == 3);
  }
  SUBCASE("closed by the handler of an idle event") {
    Log log;
    EmbeddedChannel ch(std::make_unique<IdleStateHandler>(0s, 1s, 0s),
                       std::make_unique<CloseOnIdle>(&log));
    ch.advanceTimeBy(1s);
    CHECK_FALSE(ch.isOpen());
    ch.advanceTimeBy(10s);
    CHECK(log.events == Events{kWriterFirst});
  }
}

TEST_CASE("IdleStateHandler: other user events and messages pass through untouched") {
  Log log;
  EmbeddedChannel ch(std::make_unique<IdleStateHandler>(1s, 1s, 1s),
                     std::make_unique<Recorder>(&log));
  ch.pipeline().fireUserEventTriggered(Message(std::string("custom")));
  CHECK(log.otherUserEvents == 1);
  CHECK(ch.writeInbound(std::string("in"), 42));
  CHECK(ch.readInbound<std::string>() == "in");
  CHECK(ch.readInbound<int>() == 42);
  CHECK(ch.writeOutbound(std::string("out")));
  CHECK(ch.readOutbound<std::string>() == "out");
  CHECK_FALSE(ch.finish());
}

namespace {
/// An IdleStateHandler whose channelIdle throws: the exception goes to exceptionCaught.
struct ThrowingIdle : IdleStateHandler {
  ThrowingIdle() : IdleStateHandler(1s, 0s, 0s) {}
  void channelIdle(ChannelHandlerContext&, IdleStateEvent) override {
    throw IllegalArgumentError("idle failed");
  }
};
}  // namespace

TEST_CASE("IdleStateHandler: an exception from channelIdle goes to exceptionCaught") {
  Log log;
  EmbeddedChannel ch(std::make_unique<ThrowingIdle>(), std::make_unique<Recorder>(&log));
  ch.advanceTimeBy(1s);
  ch.advanceTimeBy(1s);
  CHECK(log.errors == std::vector<std::string>{"idle failed", "idle failed"});
  CHECK(ch.isOpen());
}
