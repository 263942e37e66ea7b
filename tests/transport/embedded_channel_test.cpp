#include <netbuf/transport/embedded_channel.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

TEST_CASE("EmbeddedChannel: inbound and outbound queues, typed reads, finish") {
  EmbeddedChannel ch;
  CHECK(ch.isOpen());
  CHECK(ch.isActive());
  CHECK(ch.localAddress() == "embedded");
  CHECK(ch.remoteAddress() == "embedded");
  CHECK(&ch.executor() == &ch);
  CHECK(ch.writeInbound(std::string("a"), 2));
  CHECK(ch.inboundCount() == 2);
  CHECK(ch.readInbound<std::string>() == "a");
  CHECK_THROWS_AS(ch.readInbound<std::string>(), MessageTypeError);  // the 2 is consumed
  CHECK_FALSE(ch.readInbound<int>().has_value());
  CHECK(ch.readInboundMessage().empty());

  CHECK(ch.writeOutbound(std::string("out")));
  CHECK(ch.outboundCount() == 1);
  Message m = ch.readOutboundMessage();
  CHECK(m.as<std::string>() == "out");
  CHECK(ch.readOutboundMessage().empty());

  ch.writeOutbound(1);
  CHECK(ch.finish());  // an outbound message is still queued
  CHECK_FALSE(ch.isOpen());
  CHECK(ch.readOutbound<int>() == 1);
  CHECK_FALSE(ch.finish());  // closing twice is harmless
}

TEST_CASE("EmbeddedChannel: tasks run on demand, scheduled tasks by a virtual clock") {
  EmbeddedChannel ch;
  CHECK(ch.inEventLoop());
  std::vector<std::string> ran;
  ch.execute([&] { ran.push_back("task"); });
  const auto t0 = ch.now();
  ScheduledTask later = ch.schedule(10s, [&] { ran.push_back("10s"); });
  ScheduledTask sooner = ch.schedule(5s, [&] { ran.push_back("5s"); });
  ScheduledTask same = ch.schedule(5s, [&] { ran.push_back("5s-second"); });
  ScheduledTask cancelled = ch.schedule(1s, [&] { ran.push_back("cancelled"); });
  CHECK(cancelled.cancel());
  CHECK(ran.empty());
  ch.runPendingTasks();
  CHECK(ran == std::vector<std::string>{"task"});
  ch.advanceTimeBy(5s);
  CHECK(ch.now() - t0 == 5s);
  CHECK(ran == std::vector<std::string>{"task", "5s", "5s-second"});
  CHECK(sooner.isDone());
  CHECK_FALSE(later.isDone());
  ch.advanceTimeBy(5s);
  CHECK(ran.back() == "10s");
  CHECK(later.isDone());
  CHECK(ran.size() == 4);

  ch.execute([] { throw std::runtime_error("task failed"); });
  CHECK_THROWS_AS(ch.writeInbound(1), std::runtime_error);  // recorded, rethrown
  ch.schedule(0s, [&ch] { ch.execute([] {}); });            // tasks may queue tasks
  ch.runPendingTasks();
}

TEST_CASE("EmbeddedChannel: setWritable fires channelWritabilityChanged on change; autoRead kept") {
  struct Watch : ChannelHandler {
    std::vector<bool> seen;
    void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
      seen.push_back(ctx.channel().isWritable());
      ctx.fireChannelWritabilityChanged();
    }
  };
  auto watch = std::make_unique<Watch>();
  Watch& w = *watch;
  EmbeddedChannel ch(std::move(watch));
  CHECK(ch.isWritable());
  ch.setWritable(true);  // no change: no event
  CHECK(w.seen.empty());
  ch.setWritable(false);
  CHECK_FALSE(ch.isWritable());
  ch.setWritable(false);
  ch.setWritable(true);
  CHECK(w.seen == std::vector<bool>{false, true});

  CHECK(ch.isAutoRead());
  ch.setAutoRead(false);
  CHECK_FALSE(ch.isAutoRead());
  CHECK(ch.writeInbound(std::string("fed by hand all the same")));
  ch.setAutoRead(true);
  CHECK(ch.isAutoRead());
  ch.finishAndReleaseAll();
}
