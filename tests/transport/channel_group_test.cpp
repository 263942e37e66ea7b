// ChannelGroup and ChannelGroupFuture on EmbeddedChannels (everything runs on the test's thread):
// membership, broadcasts of each message kind, matchers, failures, close. The socket version with
// real threads is channel_group_thread_test.cpp.
#include <netbuf/transport/channel_group.hpp>

#include <doctest/doctest.h>

#include <boost/asio/use_future.hpp>
#include <future>
#include <memory>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

std::vector<std::shared_ptr<EmbeddedChannel>> makeChannels(int n) {
  std::vector<std::shared_ptr<EmbeddedChannel>> v;
  for (int i = 0; i < n; ++i) v.push_back(std::make_shared<EmbeddedChannel>());
  return v;
}

/// Fails every write with the given code (and drops the message).
struct FailWrites : ChannelHandler {
  std::error_code code;
  explicit FailWrites(std::error_code c) : code(c) {}
  void write(ChannelHandlerContext&, Message, WriteListener* listener) override {
    if (listener != nullptr) listener->operationComplete(code);
  }
};

}  // namespace

TEST_CASE("ChannelGroup: add, remove, contains, size, find, channels, clear") {
  auto chs = makeChannels(3);
  ChannelGroup group("test");
  CHECK(group.name() == "test");
  CHECK(group.empty());
  CHECK(group.add(chs[0]));
  CHECK(group.add(chs[1]));
  CHECK_FALSE(group.add(chs[0]));  // already a member
  CHECK(group.size() == 2);
  CHECK(group.contains(*chs[0]));
  CHECK_FALSE(group.contains(*chs[2]));
  CHECK_THROWS_AS(group.add(nullptr), IllegalArgumentError);

  CHECK(group.find([&](const Channel& c) { return &c == chs[1].get(); }) == chs[1]);
  CHECK(group.find([](const Channel&) { return false; }) == nullptr);
  CHECK(group.find({}) != nullptr);  // no predicate: any member
  CHECK(group.channels().size() == 2);

  CHECK(group.remove(*chs[0]));
  CHECK_FALSE(group.remove(*chs[0]));
  CHECK(group.size() == 1);
  CHECK(chs[0]->isOpen());  // removing does not close

  // A closed channel is never added, and a member that closes is dropped at the next query.
  chs[2]->close();
  CHECK_FALSE(group.add(chs[2]));
  CHECK(group.add(chs[0]));
  CHECK(group.size() == 2);
  chs[0]->close();
  CHECK(group.size() == 1);
  CHECK_FALSE(group.contains(*chs[0]));
  CHECK(chs[0].use_count() == 1);  // the group let go of it

  group.clear();
  CHECK(group.empty());
  CHECK(chs[1]->isOpen());
}

TEST_CASE("ChannelGroup: a ByteBuf goes to every channel as handles on one copy of the bytes") {
  auto chs = makeChannels(3);
  ChannelGroup group;
  for (auto& c : chs) group.add(c);
  ByteBuf msg = Unpooled::copiedBuffer("broadcast");
  const std::byte* bytes = msg.data();
  ChannelGroupFuture f = group.writeAndFlush(std::move(msg));
  CHECK(f.isDone());  // EmbeddedChannel completes writes at flush, inline
  CHECK(f.isSuccess());
  CHECK(f.size() == 3);
  CHECK(f.successCount() == 3);
  CHECK(f.failureCount() == 0);
  CHECK(f.failures().empty());
  std::vector<ByteBuf> received;
  for (auto& c : chs) {
    auto out = c->readOutbound<ByteBuf>();
    REQUIRE(out);
    CHECK(out->readableStringView() == "broadcast");
    CHECK(out->data() == bytes);  // the same memory: no copy
    received.push_back(std::move(*out));
  }
  CHECK(received[0].refCnt() == 3);  // three handles, the original among them
  for (auto& c : chs) CHECK_FALSE(c->finish());
}

TEST_CASE("ChannelGroup: composites and AnyByteBufs go out as AnyByteBuf slices; others copied") {
  auto chs = makeChannels(2);
  ChannelGroup group;
  for (auto& c : chs) group.add(c);

  CompositeByteBuf composite = chs[0]->alloc().compositeBuffer();
  composite.addComponent(true, Unpooled::copiedBuffer("comp"));
  composite.addComponent(true, Unpooled::copiedBuffer("osite"));
  CHECK(group.writeAndFlush(std::move(composite)).isSuccess());
  CHECK(group.writeAndFlush(AnyByteBuf(Unpooled::copiedBuffer("any"))).isSuccess());
  CHECK(group.writeAndFlush(std::string("text")).isSuccess());
  const std::string shared = "lvalue";
  CHECK(group.writeAndFlush(shared).isSuccess());  // an lvalue is copied for every channel
  CHECK(shared == "lvalue");
  for (auto& c : chs) {
    auto a = c->readOutbound<AnyByteBuf>();
    REQUIRE(a);
    CHECK(readableBytesToString(*a) == "composite");
    auto b = c->readOutbound<AnyByteBuf>();
    REQUIRE(b);
    CHECK(readableBytesToString(*b) == "any");
    CHECK(c->readOutbound<std::string>() == "text");
    CHECK(c->readOutbound<std::string>() == "lvalue");
    CHECK_FALSE(c->finish());
  }
}

TEST_CASE("ChannelGroup: matchers select channels; write then flush; an empty selection") {
  auto chs = makeChannels(3);
  ChannelGroup group;
  for (auto& c : chs) group.add(c);
  const Channel* skip = chs[1].get();
  ChannelGroupFuture f =
      group.write(std::string("x"), [skip](const Channel& c) { return &c != skip; });
  CHECK(f.size() == 2);
  CHECK_FALSE(f.isDone());  // written, not flushed: EmbeddedChannel completes at flush
  CHECK_FALSE(f.waitFor(1ms));
  group.flush();
  CHECK(f.isDone());
  CHECK(f.successCount() == 2);
  CHECK(chs[0]->readOutbound<std::string>() == "x");
  CHECK(chs[1]->outboundCount() == 0);
  CHECK(chs[2]->readOutbound<std::string>() == "x");

  ChannelGroupFuture none =
      group.writeAndFlush(std::string("y"), [](const Channel&) { return false; });
  CHECK(none.size() == 0);
  CHECK(none.isDone());
  CHECK(none.isSuccess());
  none.wait();  // returns at once

  ChannelGroup empty;
  CHECK(empty.writeAndFlush(Unpooled::copiedBuffer("z")).isSuccess());  // the buffer is released
  CHECK(empty.close().isDone());
}

TEST_CASE("ChannelGroup: failures are counted with their channel and code") {
  auto chs = makeChannels(3);
  chs[1]->pipeline().addLast("fail", std::make_unique<FailWrites>(ChannelErrc::closed));
  ChannelGroup group;
  for (auto& c : chs) group.add(c);
  ChannelGroupFuture f = group.writeAndFlush(std::string("m"));
  CHECK(f.isDone());
  CHECK_FALSE(f.isSuccess());
  CHECK(f.successCount() == 2);
  CHECK(f.failureCount() == 1);
  auto failures = f.failures();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].first == chs[1]);
  CHECK(failures[0].second == ChannelErrc::closed);
  for (auto& c : chs) c->finishAndReleaseAll();
}

TEST_CASE("ChannelGroupFuture: onComplete completes once, when done (posted if done already)") {
  auto chs = makeChannels(2);
  ChannelGroup group;
  for (auto& c : chs) group.add(c);
  ChannelGroupFuture f = group.write(std::string("a"));
  int calls = 0;
  std::size_t seenSuccesses = 0;
  std::optional<ErrorCode> seen;
  f.onComplete([&](ErrorCode ec) {
    ++calls;
    seen = ec;
    seenSuccesses = f.successCount();
    CHECK(f.isDone());
  });
  CHECK(calls == 0);
  chs[0]->flush();
  CHECK(calls == 0);
  chs[1]->flush();  // completes the operation: its handler runs here, on the completing thread
  CHECK(calls == 1);
  CHECK_FALSE(*seen);
  CHECK(seenSuccesses == 2);
  // Done already: completed through the token all the same (a callback is posted).
  CHECK_NOTHROW(f.onComplete(boost::asio::use_future).get());
  std::promise<bool> later;
  f.onComplete([&](ErrorCode ec) { later.set_value(!ec); });
  CHECK(later.get_future().get());
  CHECK(f.waitFor(0ns));
  for (auto& c : chs) c->finishAndReleaseAll();
}

TEST_CASE("ChannelGroupFuture: onComplete reports the first failure") {
  auto chs = makeChannels(3);
  chs[1]->pipeline().addLast("fail", std::make_unique<FailWrites>(ChannelErrc::closed));
  ChannelGroup group;
  for (auto& c : chs) group.add(c);
  ChannelGroupFuture f = group.writeAndFlush(std::string("m"));
  CHECK(f.isDone());
  CHECK(f.firstError() == ChannelErrc::closed);
  try {
    f.onComplete(boost::asio::use_future).get();
    FAIL("a failed group operation completed with success");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == ChannelErrc::closed);
  }
  for (auto& c : chs) c->finishAndReleaseAll();
}

TEST_CASE("ChannelGroupFuture: the operation outlives its handles until the channels complete") {
  auto ch = std::make_shared<EmbeddedChannel>();
  ChannelGroup group;
  group.add(ch);
  int calls = 0;
  std::size_t successes = 0;
  {
    ChannelGroupFuture f = group.write(std::string("a"));
    f.onComplete([&calls, &successes, op = f](ErrorCode) {
      ++calls;
      successes = op.successCount();
    });
  }  // the handle is gone; the channel still holds the operation's listener
  ch->flush();
  CHECK(calls == 1);
  CHECK(successes == 1);
  ch->finishAndReleaseAll();
}

TEST_CASE("ChannelGroup: close() closes every member; the closed members leave the group") {
  auto chs = makeChannels(3);
  ChannelGroup group;
  for (auto& c : chs) group.add(c);
  ChannelGroupFuture f = group.close([&](const Channel& c) { return &c != chs[2].get(); });
  CHECK(f.isDone());
  CHECK(f.successCount() == 2);
  CHECK_FALSE(chs[0]->isOpen());
  CHECK_FALSE(chs[1]->isOpen());
  CHECK(chs[2]->isOpen());
  CHECK(group.size() == 1);
  // Writing to a group whose members closed meanwhile skips them.
  chs[2]->close();
  ChannelGroupFuture w = group.writeAndFlush(std::string("late"));
  CHECK(w.size() == 0);
  CHECK(group.empty());
}
