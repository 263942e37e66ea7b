#include <netbuf/transport/read_timeout_handler.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <netbuf/transport/embedded_channel.hpp>
#include <string>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

/// What the recorder saw.
struct Log {
  std::vector<IdleStateEvent> events;
  std::vector<std::string> errors;  // what() of each exception
  int readTimeouts = 0;             // of which ReadTimeoutErrors
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
      ctx.fireUserEventTriggered(std::move(e));
    }
  }
  void exceptionCaught(ChannelHandlerContext&, std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const ReadTimeoutError& e) {
      ++log->readTimeouts;
      log->errors.push_back(e.what());
    } catch (const std::exception& e) {
      log->errors.push_back(e.what());
    }
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    ++log->inactive;
    ctx.fireChannelInactive();
  }
};

/// Counts the close operations that pass it (put it before the handler under test, towards the
/// head, to count that handler's ctx.close()).
struct CloseCounter : ChannelHandler {
  int* closes;
  explicit CloseCounter(int* c) : closes(c) {}
  void close(ChannelHandlerContext& ctx) override {
    ++*closes;
    ctx.close();
  }
};

}  // namespace

TEST_CASE("ReadTimeoutHandler: fires ReadTimeoutError and closes the channel, once") {
  SUBCASE("caught by a handler after it") {
    Log log;
    int closes = 0;
    EmbeddedChannel ch(std::make_unique<CloseCounter>(&closes),
                       std::make_unique<ReadTimeoutHandler>(30s), std::make_unique<Recorder>(&log));
    ch.advanceTimeBy(20s);
    CHECK(ch.writeInbound(1));  // a read keeps it alive
    ch.advanceTimeBy(29s);
    CHECK(ch.isOpen());
    CHECK(log.readTimeouts == 0);
    ch.advanceTimeBy(1s);
    CHECK(log.readTimeouts == 1);
    CHECK(log.errors == std::vector<std::string>{"read timed out: nothing read for 30 s"});
    CHECK(closes == 1);
    CHECK_FALSE(ch.isOpen());
    CHECK(log.inactive == 1);
    ch.advanceTimeBy(5min);
    CHECK(log.readTimeouts == 1);
    CHECK(closes == 1);
    CHECK(log.events.empty());  // the idle event itself is not passed on
    CHECK(ch.readInbound<int>() == 1);
    ch.checkException();  // nothing reached the tail
  }
  SUBCASE("reaching the tail: rethrown by checkException") {
    EmbeddedChannel ch(std::make_unique<ReadTimeoutHandler>(1500ms));
    ch.advanceTimeBy(1499ms);
    CHECK(ch.isOpen());
    ch.advanceTimeBy(1ms);
    CHECK_FALSE(ch.isOpen());
    CHECK_THROWS_WITH_AS(ch.checkException(), "read timed out: nothing read for 1500 ms",
                         ReadTimeoutError);
    ch.advanceTimeBy(1h);
    CHECK_NOTHROW(ch.checkException());  // once
  }
  SUBCASE("the handler catching the error removes it: the channel is still closed once") {
    struct RemoveOnError : ChannelHandler {
      int* errors;
      explicit RemoveOnError(int* e) : errors(e) {}
      void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr) override {
        ++*errors;
        ctx.pipeline().remove("handler1");
      }
    };
    int closes = 0;
    int errors = 0;
    EmbeddedChannel ch(std::make_unique<CloseCounter>(&closes),
                       std::make_unique<ReadTimeoutHandler>(1s),
                       std::make_unique<RemoveOnError>(&errors));
    ch.advanceTimeBy(1s);
    CHECK(errors == 1);
    CHECK(closes == 1);
    CHECK_FALSE(ch.isOpen());
    ch.advanceTimeBy(1h);
    CHECK(errors == 1);
    CHECK(closes == 1);
  }
  SUBCASE("a timeout of 0 never fires") {
    EmbeddedChannel ch(std::make_unique<ReadTimeoutHandler>(0s));
    ch.advanceTimeBy(24h);
    CHECK(ch.isOpen());
    CHECK_NOTHROW(ch.checkException());
  }
}
