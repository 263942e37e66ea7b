// ReceiveQueue<T> and Channel::receive<T>() on an EmbeddedChannel: queued and waiting receives,
// the capacity turning auto-read off and on, the end of the stream, an exception that closes the
// channel, one receive at a time, no queue, cancellation, removal, messages of other types, and a
// coroutine consuming the queue.
#include <netbuf/transport/receive_queue.hpp>

#include <doctest/doctest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <netbuf/codec/line_based_frame_decoder.hpp>
#include <netbuf/codec/string_decoder.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

using namespace netbuf;
namespace asio = boost::asio;

namespace {

/// What one receive completed with.
struct Got {
  std::optional<ErrorCode> ec;
  std::string value;
  int calls = 0;
};

/// A callback token that records into got.
auto into(Got& got) {
  return [&got](ErrorCode ec, std::string v) {
    ++got.calls;
    got.ec = ec;
    got.value = std::move(v);
  };
}

/// An EmbeddedChannel with a ReceiveQueue<std::string> of capacity at its tail.
std::unique_ptr<EmbeddedChannel> stringChannel(std::size_t capacity) {
  auto ch = std::make_unique<EmbeddedChannel>();
  ch->pipeline().addLast("queue", std::make_unique<ReceiveQueue<std::string>>(capacity));
  return ch;
}

ReceiveQueue<std::string>& queueOf(EmbeddedChannel& ch) {
  return *dynamic_cast<ReceiveQueue<std::string>*>(ch.pipeline().get("queue"));
}

/// Throws on every message (to see an exception close the channel).
struct Thrower : ChannelHandler {
  std::exception_ptr error;
  void channelRead(ChannelHandlerContext&, Message) override { std::rethrow_exception(error); }
};

}  // namespace

TEST_CASE("ReceiveQueue: a queued message completes a receive, posted; a waiting one at once") {
  auto ch = stringChannel(8);
  ch->writeInbound(std::string("a"), std::string("b"));
  CHECK(queueOf(*ch).size() == 2);
  CHECK(ch->inboundCount() == 0);  // taken by the queue, not passed to the tail

  Got first;
  ch->receive<std::string>(into(first));
  CHECK(first.calls == 0);  // never inside receive() itself
  ch->runPendingTasks();
  CHECK(first.calls == 1);
  CHECK_FALSE(*first.ec);
  CHECK(first.value == "a");

  Got second;
  ch->receive<std::string>(into(second));
  ch->runPendingTasks();
  CHECK(second.value == "b");
  CHECK(queueOf(*ch).size() == 0);

  // A receive waiting for a message completes when it arrives (dispatched: on the channel's
  // thread, at once).
  Got third;
  ch->receive<std::string>(into(third));
  ch->runPendingTasks();
  CHECK(third.calls == 0);
  ch->pipeline().fireChannelRead(Message(std::string("c")));
  CHECK(third.calls == 1);
  CHECK(third.value == "c");
  CHECK(queueOf(*ch).size() == 0);
}

TEST_CASE("ReceiveQueue: capacity turns auto-read off, half the capacity turns it back on") {
  auto ch = stringChannel(4);
  auto& q = queueOf(*ch);
  CHECK(q.capacity() == 4);
  ch->writeInbound(std::string("1"), std::string("2"), std::string("3"));
  CHECK(ch->isAutoRead());
  CHECK_FALSE(q.isPaused());
  ch->writeInbound(std::string("4"));
  CHECK_FALSE(ch->isAutoRead());
  CHECK(q.isPaused());
  // Messages of a read already in progress are still queued.
  ch->writeInbound(std::string("5"));
  CHECK(q.size() == 5);
  std::vector<std::string> got;
  auto take = [&] {
    ch->receive<std::string>([&](ErrorCode ec, std::string v) {
      CHECK_FALSE(ec);
      got.push_back(std::move(v));
    });
    ch->runPendingTasks();
  };
  take();  // 4 left
  take();  // 3 left
  CHECK_FALSE(ch->isAutoRead());
  take();  // 2 left: half the capacity
  CHECK(ch->isAutoRead());
  CHECK_FALSE(q.isPaused());
  take();
  take();
  CHECK(got == std::vector<std::string>{"1", "2", "3", "4", "5"});
  CHECK_THROWS_AS(ReceiveQueue<std::string>(0), IllegalArgumentError);
}

TEST_CASE("ReceiveQueue: the end of the stream, after the queued messages") {
  auto ch = stringChannel(8);
  ch->writeInbound(std::string("last"));
  ch->finish();
  Got a, b, c;
  ch->receive<std::string>(into(a));
  ch->runPendingTasks();
  CHECK(a.value == "last");
  CHECK_FALSE(*a.ec);
  ch->receive<std::string>(into(b));
  ch->runPendingTasks();
  CHECK(*b.ec == asio::error::eof);
  CHECK(b.value.empty());
  // And again: the end stays the end.
  ch->receive<std::string>(into(c));
  ch->runPendingTasks();
  CHECK(*c.ec == asio::error::eof);

  // A receive already waiting when the channel closes.
  auto ch2 = stringChannel(8);
  Got waiting;
  ch2->receive<std::string>(into(waiting));
  ch2->runPendingTasks();
  CHECK(waiting.calls == 0);
  ch2->finish();
  CHECK(waiting.calls == 1);
  CHECK(*waiting.ec == asio::error::eof);
}

TEST_CASE("ReceiveQueue: an exception closes the channel; receives then report it") {
  SUBCASE("a decoder's error: ChannelErrc::exceptionCaught, exception() holds it") {
    EmbeddedChannel ch;
    ch.pipeline()
        .addLast("frames", std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(8))
        .addLast("text", std::make_unique<DecoderChannelHandler<StringDecoder>>())
        .addLast("queue", std::make_unique<ReceiveQueue<std::string>>(8));
    Got ok, failed;
    CHECK(ch.writeInbound(Unpooled::copiedBuffer("fine\n")) == false);
    // A line longer than 8 bytes: the decoder's TooLongFrame error goes to the queue, then to the
    // tail (recorded by the EmbeddedChannel), and the channel closes.
    CHECK_THROWS(ch.writeInbound(Unpooled::copiedBuffer("far too long for the limit\n")));
    CHECK_FALSE(ch.isOpen());
    ch.receive<std::string>(into(ok));
    ch.runPendingTasks();
    CHECK(ok.value == "fine");  // what came before the error is delivered first
    ch.receive<std::string>(into(failed));
    ch.runPendingTasks();
    CHECK(*failed.ec == ChannelErrc::exceptionCaught);
    CHECK(*failed.ec == std::errc::io_error);
    auto& q = *dynamic_cast<ReceiveQueue<std::string>*>(ch.pipeline().get("queue"));
    CHECK(q.exception() != nullptr);
  }
  SUBCASE("a std::system_error: its own code") {
    EmbeddedChannel ch;
    auto thrower = std::make_unique<Thrower>();
    thrower->error = std::make_exception_ptr(
        std::system_error(std::make_error_code(std::errc::connection_reset), "peer"));
    ch.pipeline()
        .addLast("thrower", std::move(thrower))
        .addLast("queue", std::make_unique<ReceiveQueue<std::string>>(8));
    CHECK_THROWS(ch.writeInbound(std::string("x")));
    Got got;
    ch.receive<std::string>(into(got));
    ch.runPendingTasks();
    CHECK(*got.ec == std::errc::connection_reset);
  }
}

TEST_CASE("ReceiveQueue: one receive at a time; none without a queue") {
  auto ch = stringChannel(8);
  Got first, second;
  ch->receive<std::string>(into(first));
  ch->receive<std::string>(into(second));
  ch->runPendingTasks();
  CHECK(first.calls == 0);
  CHECK(*second.ec == asio::error::already_started);
  ch->pipeline().fireChannelRead(Message(std::string("x")));
  CHECK(first.value == "x");

  // A queue of another type, or none: noReceiveQueue.
  Got wrongType;
  ch->receive<int>([&](ErrorCode ec, int) {
    ++wrongType.calls;
    wrongType.ec = ec;
  });
  ch->runPendingTasks();
  CHECK(*wrongType.ec == ChannelErrc::noReceiveQueue);
  EmbeddedChannel bare;
  Got none;
  bare.receive<std::string>(into(none));
  bare.runPendingTasks();
  CHECK(*none.ec == ChannelErrc::noReceiveQueue);
}

TEST_CASE("ReceiveQueue: messages of other types pass on to the tail") {
  auto ch = stringChannel(8);
  ch->writeInbound(42, std::string("text"));
  CHECK(ch->inboundCount() == 1);
  CHECK(ch->readInbound<int>() == 42);
  CHECK(queueOf(*ch).size() == 1);
}

TEST_CASE("ReceiveQueue: a cancellation signal ends a waiting receive; the next message waits") {
  auto ch = stringChannel(8);
  asio::cancellation_signal signal;
  Got got;
  ch->receive<std::string>(asio::bind_cancellation_slot(signal.slot(), into(got)));
  ch->runPendingTasks();
  signal.emit(asio::cancellation_type::terminal);
  ch->runPendingTasks();  // the cancellation runs as a task of the channel's executor
  CHECK(got.calls == 1);
  CHECK(*got.ec == asio::error::operation_aborted);
  ch->pipeline().fireChannelRead(Message(std::string("kept")));
  CHECK(queueOf(*ch).size() == 1);  // queued for the next receive, not lost
  Got next;
  ch->receive<std::string>(into(next));
  ch->runPendingTasks();
  CHECK(next.value == "kept");
  // A type the receive does not honour (none) leaves it waiting.
  Got stays;
  ch->receive<std::string>(asio::bind_cancellation_slot(signal.slot(), into(stays)));
  ch->runPendingTasks();
  signal.emit(asio::cancellation_type::none);
  ch->runPendingTasks();
  CHECK(stays.calls == 0);
  ch->pipeline().fireChannelRead(Message(std::string("late")));
  CHECK(stays.value == "late");
}

TEST_CASE("ReceiveQueue: removing the queue ends a waiting receive and restores auto-read") {
  auto ch = stringChannel(1);
  ch->writeInbound(std::string("fills"));
  CHECK_FALSE(ch->isAutoRead());
  ch->pipeline().remove("queue");
  CHECK(ch->isAutoRead());
  auto ch2 = stringChannel(8);
  Got got;
  ch2->receive<std::string>(into(got));
  ch2->runPendingTasks();
  ch2->pipeline().remove("queue");
  CHECK(got.calls == 0);  // posted: never run inside the pipeline change
  ch2->runPendingTasks();
  REQUIRE(got.calls == 1);
  CHECK(*got.ec == asio::error::operation_aborted);
}

namespace {
asio::awaitable<void> readThree(std::shared_ptr<EmbeddedChannel> ch, std::vector<std::string>& out,
                                ErrorCode& end) {
  for (;;) {
    std::string line;
    try {
      line = co_await ch->receive<std::string>(asio::use_awaitable);
    } catch (const boost::system::system_error& e) {
      end = e.code();
      co_return;
    }
    out.push_back(std::move(line));
  }
}
}  // namespace

TEST_CASE("ReceiveQueue: a coroutine reads the messages in order, then the end as an exception") {
  auto ch = std::make_shared<EmbeddedChannel>();
  ch->pipeline().addLast("queue", std::make_unique<ReceiveQueue<std::string>>(8));
  std::vector<std::string> got;
  ErrorCode end;
  asio::co_spawn(ch->get_executor(), readThree(ch, got, end), asio::detached);
  ch->runPendingTasks();
  ch->writeInbound(std::string("one"), std::string("two"));
  ch->writeInbound(std::string("three"));
  ch->finish();
  CHECK(got == std::vector<std::string>{"one", "two", "three"});
  CHECK(end == asio::error::eof);
}
