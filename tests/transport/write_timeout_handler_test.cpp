#include <netbuf/transport/write_timeout_handler.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

/// Records each notification it gets.
struct Listener : WriteListener {
  std::vector<std::error_code> results;
  void operationComplete(std::error_code ec) noexcept override { results.push_back(ec); }
};

/// Counts the tasks scheduled on an EmbeddedChannel's virtual clock (to see the handler's timers).
class CountingExecutor final : public ChannelExecutor {
 public:
  explicit CountingExecutor(EmbeddedChannel& clock) : clock_(clock) {}
  void execute(std::function<void()> task) override { clock_.execute(std::move(task)); }
  ScheduledTask schedule(std::chrono::nanoseconds delay, std::function<void()> task) override {
    ++scheduled;
    return clock_.schedule(delay, std::move(task));
  }
  bool inEventLoop() const noexcept override { return true; }
  std::chrono::steady_clock::time_point now() const noexcept override { return clock_.now(); }
  int scheduled = 0;

 private:
  EmbeddedChannel& clock_;
};

/// A channel whose head holds every write until the test completes it (a socket that does not
/// drain). close() fails the held writes with closedBeforeWritten, as a socket channel does;
/// destroying the channel drops them without a word (as a channel destroyed open does).
class SlowChannel final : public Channel {
 public:
  explicit SlowChannel(ChannelExecutor& exec) : Channel(exec) {}
  ~SlowChannel() override { destroyPipeline(); }
  bool isOpen() const noexcept override { return open_; }
  bool isActive() const noexcept override { return open_; }
  std::string localAddress() const override { return "slow"; }
  std::string remoteAddress() const override { return "slow"; }

  struct Held {
    Message msg;
    WriteListener* listener;
  };
  std::vector<Held> held;
  int closes = 0;

  /// Completes the held write at index i (and forgets it).
  void complete(std::size_t i, std::error_code ec = {}) {
    WriteListener* l = held.at(i).listener;
    held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    if (l != nullptr) l->operationComplete(ec);
  }

 protected:
  void doWrite(Message msg, WriteListener* listener) override {
    if (!open_) {
      if (listener != nullptr) listener->operationComplete(ChannelErrc::closed);
      return;
    }
    held.push_back({std::move(msg), listener});
  }
  void doFlush() override {}
  void doClose() override {
    ++closes;
    if (!open_) return;
    open_ = false;
    std::vector<Held> failing = std::move(held);
    held.clear();
    for (auto& h : failing) {
      if (h.listener != nullptr) h.listener->operationComplete(ChannelErrc::closedBeforeWritten);
    }
    pipeline().fireChannelInactive();
  }

 private:
  bool open_ = true;
};

/// Catches the exceptions that reach it (they do not go on to the tail).
struct Errors : ChannelHandler {
  std::vector<std::string>* seen;
  explicit Errors(std::vector<std::string>* s) : seen(s) {}
  void exceptionCaught(ChannelHandlerContext&, std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const WriteTimeoutError& e) {
      seen->push_back(std::string("WriteTimeoutError: ") + e.what());
    } catch (const std::exception& e) {
      seen->push_back(e.what());
    }
  }
};

/// clock + counting executor + slow channel with [timeout handler, error catcher].
struct Fixture {
  EmbeddedChannel clock;
  CountingExecutor exec{clock};
  SlowChannel ch{exec};
  std::vector<std::string> errors;
  explicit Fixture(std::chrono::nanoseconds timeout) {
    ch.pipeline().addLast("timeout", std::make_unique<WriteTimeoutHandler>(timeout));
    ch.pipeline().addLast("errors", std::make_unique<Errors>(&errors));
  }
  WriteTimeoutHandler* handler() {
    return static_cast<WriteTimeoutHandler*>(ch.pipeline().get("timeout"));
  }
};

const std::error_code kTimeout = ChannelErrc::writeTimeout;
const std::error_code kOk{};

}  // namespace

TEST_CASE("WriteTimeoutHandler: a write not done in time fails, fires the error, closes, once") {
  Fixture f(1s);
  Listener l;
  f.ch.writeAndFlush(std::string("stuck"), &l);
  REQUIRE(f.ch.held.size() == 1);
  CHECK(f.ch.held[0].listener != &l);  // the handler's own node observes it
  CHECK(f.handler()->outstandingWrites() == 1);
  f.clock.advanceTimeBy(999ms);
  CHECK(l.results.empty());
  CHECK(f.ch.isOpen());
  f.clock.advanceTimeBy(1ms);
  CHECK(l.results == std::vector<std::error_code>{kTimeout});
  CHECK(l.results[0] == std::errc::timed_out);
  CHECK(f.errors == std::vector<std::string>{"WriteTimeoutError: write timed out: not written "
                                             "within 1 s"});
  CHECK(f.ch.closes == 1);
  CHECK_FALSE(f.ch.isOpen());
  // The close failed the held write: the node swallowed that second result.
  CHECK(f.ch.held.empty());
  CHECK(l.results.size() == 1);
  CHECK(f.handler()->outstandingWrites() == 0);
  f.clock.advanceTimeBy(1h);
  CHECK(f.errors.size() == 1);
  CHECK(f.ch.closes == 1);
}

TEST_CASE("WriteTimeoutHandler: a write done in time forwards its result; no timeout later") {
  Fixture f(1s);
  Listener ok;
  Listener failed;
  f.ch.writeAndFlush(std::string("a"), &ok);
  f.ch.writeAndFlush(std::string("b"), &failed);
  f.clock.advanceTimeBy(500ms);
  f.ch.complete(0);
  f.ch.complete(0, ChannelErrc::writeFailed);
  CHECK(ok.results == std::vector<std::error_code>{kOk});
  CHECK(failed.results == std::vector<std::error_code>{ChannelErrc::writeFailed});
  CHECK(f.handler()->outstandingWrites() == 0);
  f.clock.advanceTimeBy(1h);
  CHECK(f.errors.empty());
  CHECK(f.ch.isOpen());
  CHECK(ok.results.size() == 1);
  CHECK(failed.results.size() == 1);
  // The one timer fired once with nothing due and stopped (no re-arm).
  CHECK(f.exec.scheduled == 1);
}

TEST_CASE("WriteTimeoutHandler: each write times out at its own deadline; one timer at a time") {
  Fixture f(1s);
  Listener first, second, third;
  f.ch.writeAndFlush(std::string("1"), &first);  // due at 1.0 s
  f.clock.advanceTimeBy(400ms);
  f.ch.writeAndFlush(std::string("2"), &second);  // due at 1.4 s
  f.clock.advanceTimeBy(200ms);
  f.ch.writeAndFlush(std::string("3"), &third);  // due at 1.6 s
  CHECK(f.exec.scheduled == 1);
  f.ch.complete(0);              // the first is done at 0.6 s
  f.clock.advanceTimeBy(400ms);  // 1.0 s: the timer finds nothing due, re-arms for 1.4 s
  CHECK(f.errors.empty());
  CHECK(f.exec.scheduled == 2);
  f.ch.complete(0);              // the second is done at 1.0 s
  f.clock.advanceTimeBy(599ms);  // 1.599 s
  CHECK(third.results.empty());
  CHECK(f.ch.isOpen());
  f.clock.advanceTimeBy(1ms);  // 1.6 s
  CHECK(first.results == std::vector<std::error_code>{kOk});
  CHECK(second.results == std::vector<std::error_code>{kOk});
  CHECK(third.results == std::vector<std::error_code>{kTimeout});
  CHECK(f.errors.size() == 1);
  CHECK_FALSE(f.ch.isOpen());
}

TEST_CASE("WriteTimeoutHandler: a busy channel schedules one timer per period, not per write") {
  Fixture f(100ms);
  Listener l;
  for (int i = 0; i < 1000; ++i) {
    f.ch.writeAndFlush(std::string("x"), &l);
    f.clock.advanceTimeBy(1ms);
    f.ch.complete(0);
  }
  CHECK(l.results.size() == 1000);
  CHECK(f.errors.empty());
  CHECK(f.exec.scheduled <= 11);  // ~1 s of traffic, 100 ms timeout
  CHECK(f.handler()->outstandingWrites() == 0);
}

TEST_CASE("WriteTimeoutHandler: writes without a listener are timed too") {
  Fixture f(250ms);
  f.ch.writeAndFlush(std::string("no listener"));
  f.clock.advanceTimeBy(250ms);
  CHECK(f.errors.size() == 1);
  CHECK_FALSE(f.ch.isOpen());
}

TEST_CASE("WriteTimeoutHandler: a write that completes inside ctx.write (closed channel)") {
  Fixture f(1s);
  f.ch.close();
  Listener l;
  f.ch.writeAndFlush(std::string("late"), &l);
  CHECK(l.results == std::vector<std::error_code>{ChannelErrc::closed});
  CHECK(f.handler()->outstandingWrites() == 0);
  f.clock.advanceTimeBy(10s);
  CHECK(f.errors.empty());
  CHECK(l.results.size() == 1);
}

TEST_CASE("WriteTimeoutHandler: removed (and destroyed) while writes are outstanding") {
  SUBCASE("the channel completes the write later") {
    Fixture f(1s);
    Listener l;
    f.ch.writeAndFlush(std::string("a"), &l);
    f.ch.pipeline().remove("timeout");  // destroyed at once: no event in flight
    CHECK(f.ch.pipeline().get("timeout") == nullptr);
    f.clock.advanceTimeBy(10s);  // untimed now
    CHECK(l.results.empty());
    CHECK(f.errors.empty());
    f.ch.complete(0);  // the node outlived the handler: it forwards once
    CHECK(l.results == std::vector<std::error_code>{kOk});
  }
  SUBCASE("the close fails it later") {
    Fixture f(1s);
    Listener l;
    f.ch.writeAndFlush(std::string("a"), &l);
    f.ch.pipeline().remove("timeout");
    f.ch.close();
    CHECK(l.results == std::vector<std::error_code>{ChannelErrc::closedBeforeWritten});
  }
  SUBCASE("after it timed out, the late failure is still swallowed") {
    Fixture f(1s);
    // A handler before it (towards the head) that swallows the close: the write stays held.
    struct KeepOpen : ChannelHandler {
      void close(ChannelHandlerContext&) override {}
    };
    f.ch.pipeline().addFirst("keepOpen", std::make_unique<KeepOpen>());
    Listener l;
    f.ch.writeAndFlush(std::string("a"), &l);
    f.clock.advanceTimeBy(1s);
    CHECK(l.results == std::vector<std::error_code>{kTimeout});
    CHECK(f.ch.isOpen());
    f.ch.pipeline().remove("timeout");
    f.ch.complete(0, ChannelErrc::closedBeforeWritten);
    CHECK(l.results.size() == 1);
  }
  SUBCASE("the channel is destroyed with the write still held (never completed)") {
    Listener l;
    {
      Fixture f(1s);
      f.ch.writeAndFlush(std::string("a"), &l);
    }  // pipeline, then the held write, then the pool: nothing is called, nothing leaks
    CHECK(l.results.empty());
  }
}

TEST_CASE("WriteTimeoutHandler: listeners and exception handlers may close or remove it") {
  SUBCASE("the timed-out write's listener closes the channel (completing the others)") {
    Fixture f(1s);
    struct Closer : WriteListener {
      Channel* ch;
      std::vector<std::error_code> results;
      void operationComplete(std::error_code ec) noexcept override {
        results.push_back(ec);
        ch->close();
      }
    } closer;
    closer.ch = &f.ch;
    Listener later;
    f.ch.writeAndFlush(std::string("a"), &closer);
    f.clock.advanceTimeBy(500ms);
    f.ch.writeAndFlush(std::string("b"), &later);
    f.clock.advanceTimeBy(500ms);
    CHECK(closer.results == std::vector<std::error_code>{kTimeout});
    CHECK(later.results == std::vector<std::error_code>{ChannelErrc::closedBeforeWritten});
    CHECK(f.errors.size() == 1);  // still fired, once
    CHECK(f.ch.closes >= 1);
    f.clock.advanceTimeBy(1h);
    CHECK(later.results.size() == 1);
  }
  SUBCASE("the exception handler removes the timeout handler") {
    EmbeddedChannel clock;
    SlowChannel ch(clock);
    struct RemoveOnError : ChannelHandler {
      int errors = 0;
      void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr) override {
        ++errors;
        ctx.pipeline().remove("timeout");
      }
    };
    ch.pipeline().addLast("timeout", std::make_unique<WriteTimeoutHandler>(1s));
    auto& remover = ch.pipeline().emplaceLast<RemoveOnError>("remover");
    Listener a, b;
    ch.writeAndFlush(std::string("a"), &a);
    ch.writeAndFlush(std::string("b"), &b);
    clock.advanceTimeBy(1s);
    CHECK(remover.errors == 1);
    CHECK(ch.pipeline().get("timeout") == nullptr);
    CHECK_FALSE(ch.isOpen());  // the close still went out, from the removed context
    CHECK(a.results == std::vector<std::error_code>{kTimeout});
    CHECK(b.results == std::vector<std::error_code>{kTimeout});
  }
}

TEST_CASE("WriteTimeoutHandler: on EmbeddedChannel, flushed writes complete; unflushed time out") {
  EmbeddedChannel ch(std::make_unique<WriteTimeoutHandler>(2s));
  Listener flushed, unflushed;
  ch.writeAndFlush(std::string("now"), &flushed);
  CHECK(flushed.results == std::vector<std::error_code>{kOk});
  ch.write(std::string("never flushed"), &unflushed);
  ch.advanceTimeBy(2s);
  CHECK(unflushed.results == std::vector<std::error_code>{kTimeout});
  CHECK_FALSE(ch.isOpen());
  CHECK_THROWS_WITH_AS(ch.checkException(), "write timed out: not written within 2 s",
                       WriteTimeoutError);
  CHECK(ch.readOutbound<std::string>() == "now");
}

TEST_CASE("WriteTimeoutHandler: zero disables it; tiny timeouts become 1 ms; messages untouched") {
  {
    EmbeddedChannel clock;
    SlowChannel ch(clock);
    ch.pipeline().addLast("timeout", std::make_unique<WriteTimeoutHandler>(0s));
    Listener l;
    ch.writeAndFlush(std::string("a"), &l);
    REQUIRE(ch.held.size() == 1);
    CHECK(ch.held[0].listener == &l);  // passed as is: not timed
    clock.advanceTimeBy(24h);
    CHECK(ch.isOpen());
    ch.complete(0);
    CHECK(l.results == std::vector<std::error_code>{kOk});
  }
  CHECK(WriteTimeoutHandler(1ns).timeout() == 1ms);
  CHECK(WriteTimeoutHandler(-1s).timeout() == 0s);
  CHECK(WriteTimeoutHandler(30s).timeout() == 30s);
  {
    Fixture f(1ns);
    f.ch.writeAndFlush(std::string("a"));
    f.clock.advanceTimeBy(999us);
    CHECK(f.ch.isOpen());
    f.clock.advanceTimeBy(1us);
    CHECK_FALSE(f.ch.isOpen());
    CHECK(f.errors == std::vector<std::string>{"WriteTimeoutError: write timed out: not written "
                                               "within 1 ms"});
  }
  EmbeddedChannel ch(std::make_unique<WriteTimeoutHandler>(1s));
  CHECK(ch.writeInbound(std::string("in"), 7));
  CHECK(ch.readInbound<std::string>() == "in");
  CHECK(ch.readInbound<int>() == 7);
  CHECK(ch.writeOutbound(std::string("out")));
  CHECK(ch.readOutbound<std::string>() == "out");
  CHECK_FALSE(ch.finish());
}

TEST_CASE("WriteTimeoutHandler: two handlers in one pipeline share the channel's pool") {
  EmbeddedChannel clock;
  SlowChannel ch(clock);
  std::vector<std::string> errors;
  ch.pipeline().addLast("short", std::make_unique<WriteTimeoutHandler>(1s));
  ch.pipeline().addLast("long", std::make_unique<WriteTimeoutHandler>(5s));
  ch.pipeline().addLast("errors", std::make_unique<Errors>(&errors));
  Listener l;
  ch.writeAndFlush(std::string("a"), &l);  // long's node -> short's node -> the channel
  clock.advanceTimeBy(1s);
  CHECK(errors == std::vector<std::string>{"WriteTimeoutError: write timed out: not written "
                                           "within 1 s"});
  // short's timeout reached long's node, which told the caller; the close then failed the write,
  // which short's node swallowed.
  CHECK(l.results == std::vector<std::error_code>{kTimeout});
  clock.advanceTimeBy(10s);
  CHECK(errors.size() == 1);
  CHECK(l.results.size() == 1);
}
