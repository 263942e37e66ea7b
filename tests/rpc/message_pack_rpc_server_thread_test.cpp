// MessagePackRpcServer on an EmbeddedChannel (sync and async methods, errors, notifications,
// out-of-order and cross-thread replies, double reply, dropped calls, protocol errors) and over
// loopback TCP (backpressure against a peer that never reads). The client's tests are in
// message_pack_rpc_client_thread_test.cpp. Run under ThreadSanitizer ("threaded").
#include <netbuf/rpc/message_pack_rpc_server.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <array>
#include <atomic>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_encoder.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

using netbuf::test::eventually;

/// Encodes a request / notification as the wire bytes a client would send.
ByteBuf request(std::uint32_t id, std::string_view method, std::initializer_list<Value> params) {
  ByteBuf b = Unpooled::buffer();
  MessagePackWriter w(b);
  writeRpcRequest(w, id, method, params);
  return b;
}
ByteBuf notification(std::string_view method, std::initializer_list<Value> params) {
  ByteBuf b = Unpooled::buffer();
  MessagePackWriter w(b);
  writeRpcNotification(w, method, params);
  return b;
}

/// Every response the channel wrote (the outbound ByteBufs, concatenated and decoded).
std::vector<RpcMessage> responses(EmbeddedChannel& ch) {
  ByteBuf all = Unpooled::buffer();
  for (Message m = ch.readOutboundMessage(); !m.empty(); m = ch.readOutboundMessage()) {
    if (m.is<ByteBuf>()) {
      all.writeBytes(m.as<ByteBuf>().readableSpan());
    } else {
      all.writeBytes(toContiguous(m.take<AnyByteBuf>()).readableSpan());
    }
  }
  std::vector<RpcMessage> out;
  std::span<const std::byte> rest = all.readableSpan();
  MessagePackReadOptions big;  // room for the bigBin result
  big.limits.maxBinLength = big.limits.maxMessageSize = std::size_t{128} << 20;
  while (!rest.empty()) {
    Document d;
    const std::size_t n = msgpack::decodeOne(rest, d, big);
    Document owned = msgpack::decode(Unpooled::copiedBuffer(rest.subspan(0, n)), big);
    out.push_back(RpcMessage::parse(std::move(owned)));
    rest = rest.subspan(n);
  }
  return out;
}

/// A server with the methods most tests use.
void addTestMethods(MessagePackRpcServer& rpc) {
  rpc.method(
         "add",
         [](std::span<const Value> p, MessagePackWriter& r) {
           r.packInt(p[0].asInt64() + p[1].asInt64());
         },
         2)
      .method("echo",
              [](std::span<const Value> p, MessagePackWriter& r) { r.pack(Value::arrayView(p)); })
      .method("nothing", [](std::span<const Value>, MessagePackWriter&) {})
      .method("fail",
              [](std::span<const Value>, MessagePackWriter& r) {
                r.packStr("partial");  // rolled back
                throw RpcError("failed on purpose");
              })
      .method("failValue",
              [](std::span<const Value>, MessagePackWriter&) {
                Document d;
                throw RpcError(d.array({Value::integer(42), d.str("custom")}));
              })
      .method("crash", [](std::span<const Value>,
                          MessagePackWriter&) { throw std::runtime_error("std exception"); })
      .method("two",
              [](std::span<const Value>, MessagePackWriter& r) {
                r.packInt(1).packInt(2);  // two values: refused
              })
      .method("throwInt", [](std::span<const Value>, MessagePackWriter&) { throw 42; })
      .method("bigBin", [](std::span<const Value>, MessagePackWriter& r) {
        // Larger than the default read limits (64 MiB): a legitimate result all the same.
        static const std::vector<std::byte> blob((64u << 20) + 1);
        r.packBin(blob);
      });
}

/// An EmbeddedChannel with the server installed (decoder, encoder, handler).
std::unique_ptr<EmbeddedChannel> embedded(MessagePackRpcServer& rpc) {
  auto ch = std::make_unique<EmbeddedChannel>();
  rpc.install(ch->pipeline());
  return ch;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Server on EmbeddedChannel

TEST_CASE("server: sync methods, results, errors") {
  MessagePackRpcServer rpc;
  addTestMethods(rpc);
  auto ch = embedded(rpc);
  ch->writeInbound(request(1, "add", {Value::integer(2), Value::integer(40)}));
  ch->writeInbound(request(2, "nothing", {}));
  ch->writeInbound(request(3, "fail", {}));
  ch->writeInbound(request(4, "failValue", {}));
  ch->writeInbound(request(5, "crash", {}));
  ch->writeInbound(request(6, "two", {}));
  ch->writeInbound(request(7, "nope", {}));
  ch->writeInbound(request(8, "add", {Value::integer(1)}));
  ch->writeInbound(request(0xffffffffu, "echo", {Value::strView("x"), Value::boolean(false)}));
  ch->writeInbound(request(10, "throwInt", {}));
  ch->writeInbound(request(11, "bigBin", {}));
  auto r = responses(*ch);
  REQUIRE(r.size() == 11);
  // A method throwing something that is not a std::exception is still an answer, not a close.
  CHECK(r[9].error().asStr() == "InternalError: a method threw a non-std::exception");
  // Results are checked for being one value, not against the read limits.
  CHECK(r[10].result().size() == (64u << 20) + 1);
  CHECK(r[0].msgid() == 1);
  CHECK(r[0].result().asInt64() == 42);
  CHECK(r[1].result().isNil());
  CHECK_FALSE(r[1].isError());
  CHECK(r[2].error().asStr() == "failed on purpose");
  CHECK(r[2].result().isNil());
  CHECK(r[3].error()[0].asInt64() == 42);
  CHECK(r[3].error()[1].asStr() == "custom");
  CHECK(r[4].error().asStr() == "InternalError: std exception");
  CHECK(r[5].error().asStr() == "InternalError: two wrote more than one result value");
  CHECK(r[6].error().asStr() == "NoMethodError: nope");
  CHECK(r[7].error().asStr() == "ArgumentError: add takes 2 params, got 1");
  CHECK(r[8].msgid() == 0xffffffffu);
  CHECK(r[8].result()[0].asStr() == "x");
  CHECK(r[8].result()[1].asBool() == false);
  const RpcServerStats s = rpc.stats();
  CHECK(s.requests == 11);
  CHECK(s.unknownMethods == 1);
  CHECK(s.errorResponses == 7);
  CHECK(s.connections == 1);
  CHECK(s.protocolErrors == 0);
  CHECK(ch->isOpen());
  ch->finishAndReleaseAll();
}

TEST_CASE("server: many requests in one read are answered in one flushed buffer") {
  MessagePackRpcServer rpc;
  addTestMethods(rpc);
  auto ch = embedded(rpc);
  ByteBuf all = Unpooled::buffer();
  for (std::uint32_t i = 0; i < 50; ++i) {
    MessagePackWriter w(all);
    writeRpcRequest(w, i, "add", {Value::integer(i), Value::integer(1)});
  }
  ch->writeInbound(std::move(all));
  CHECK(ch->outboundCount() == 1);
  auto r = responses(*ch);
  REQUIRE(r.size() == 50);
  for (std::uint32_t i = 0; i < 50; ++i) {
    CHECK(r[i].msgid() == i);
    CHECK(r[i].result().asInt64() == i + 1);
  }
  ch->finishAndReleaseAll();
}

TEST_CASE("server: registering after the first handler is refused") {
  MessagePackRpcServer rpc;
  addTestMethods(rpc);
  auto ch = embedded(rpc);
  CHECK_THROWS_AS(rpc.method("late", [](std::span<const Value>, MessagePackWriter&) {}),
                  IllegalStateError);
  CHECK_THROWS_AS(MessagePackRpcServer().method("x", nullptr), IllegalArgumentError);
  ch->finishAndReleaseAll();
}

TEST_CASE("server: notifications never get a response") {
  MessagePackRpcServer rpc;
  int logged = 0;
  int asyncCalls = 0;
  rpc.method("log",
             [&](std::span<const Value> p, MessagePackWriter& r) {
               ++logged;
               r.packStr("ignored");
               if (p.size() == 1 && p[0].isNil()) throw RpcError("ignored too");
             })
      .asyncMethod("alog",
                   [&](RpcCall call) {
                     ++asyncCalls;
                     CHECK(call.isNotification());
                     call.reply(Value::integer(1));  // a no-op for notifications
                     CHECK_THROWS_AS(call.reply(Value::integer(1)), IllegalStateError);
                   })
      .asyncMethod(
          "adrop", [&](RpcCall) { ++asyncCalls; }, 0)
      .asyncMethod("aerr",
                   [&](RpcCall call) {
                     ++asyncCalls;
                     call.replyError(std::string_view("not sent, not counted"));
                   })
      .method(
          "one", [](std::span<const Value>, MessagePackWriter&) {}, 1);
  auto ch = embedded(rpc);
  ch->writeInbound(notification("log", {Value::strView("a")}));
  ch->writeInbound(notification("log", {Value::nil()}));
  ch->writeInbound(notification("alog", {}));
  ch->writeInbound(notification("adrop", {}));    // dropped: no NoReplyError either
  ch->writeInbound(notification("aerr", {}));     // an error reply to a notification: dropped
  ch->writeInbound(notification("unknown", {}));  // counted, ignored
  ch->writeInbound(notification("one", {}));      // wrong arity: counted, ignored
  CHECK(ch->outboundCount() == 0);
  CHECK(logged == 2);
  CHECK(asyncCalls == 3);
  const RpcServerStats s = rpc.stats();
  CHECK(s.notifications == 7);
  CHECK(s.errorResponses == 0);
  CHECK(s.unknownNotifications == 2);
  CHECK(s.droppedCalls == 0);
  CHECK(ch->isOpen());
  ch->finishAndReleaseAll();
}

TEST_CASE("server: async replies, out of order, from another thread, twice, dropped") {
  MessagePackRpcServer rpc;
  std::vector<RpcCall> held;
  rpc.asyncMethod("hold", [&](RpcCall call) { held.push_back(std::move(call)); })
      .asyncMethod("now", [](RpcCall call) {
        call.reply([&](MessagePackWriter& w) { w.packStr(call.method()); });
      });
  auto ch = embedded(rpc);

  SUBCASE("immediate async reply") {
    ch->writeInbound(request(9, "now", {}));
    auto r = responses(*ch);
    REQUIRE(r.size() == 1);
    CHECK(r[0].result().asStr() == "now");
  }
  SUBCASE("out of order: completed in reverse") {
    for (std::uint32_t i = 1; i <= 3; ++i)
      ch->writeInbound(request(i, "hold", {Value::uinteger(i)}));
    CHECK(ch->outboundCount() == 0);
    REQUIRE(held.size() == 3);
    CHECK(held[1].params()[0].asUInt64() == 2);
    held[2].reply(Value::uinteger(30));
    held[0].reply(Value::uinteger(10));
    held[1].replyError(std::string_view("late"));
    ch->runPendingTasks();
    auto r = responses(*ch);
    REQUIRE(r.size() == 3);
    CHECK(r[0].msgid() == 3);
    CHECK(r[0].result().asUInt64() == 30);
    CHECK(r[1].msgid() == 1);
    CHECK(r[2].msgid() == 2);
    CHECK(r[2].error().asStr() == "late");
  }
  SUBCASE("reply from another thread is posted to the channel's executor") {
    ch->writeInbound(request(5, "hold", {}));
    REQUIRE(held.size() == 1);
    std::thread t([c = std::move(held[0])]() mutable {
      c.reply([](MessagePackWriter& w) { w.packStr("from a thread"); });
    });
    t.join();
    CHECK(ch->outboundCount() == 0);  // queued until the channel's thread runs its tasks
    ch->runPendingTasks();
    auto r = responses(*ch);
    REQUIRE(r.size() == 1);
    CHECK(r[0].msgid() == 5);
    CHECK(r[0].result().asStr() == "from a thread");
  }
  SUBCASE("completing twice is an error; only one response goes out") {
    ch->writeInbound(request(5, "hold", {}));
    held[0].reply(Value::nil());
    CHECK(held[0].isCompleted());
    CHECK_THROWS_AS(held[0].reply(Value::nil()), IllegalStateError);
    CHECK_THROWS_AS(held[0].replyError(std::string_view("x")), IllegalStateError);
    ch->runPendingTasks();
    CHECK(responses(*ch).size() == 1);
  }
  SUBCASE("a dropped call answers NoReplyError") {
    ch->writeInbound(request(6, "hold", {}));
    held.clear();
    ch->runPendingTasks();
    auto r = responses(*ch);
    REQUIRE(r.size() == 1);
    CHECK(r[0].msgid() == 6);
    CHECK(r[0].error().asStr() == "NoReplyError: hold dropped its call without replying");
    CHECK(rpc.stats().droppedCalls == 1);
  }
  SUBCASE("a moved call: the moved-from one is inert, the new one replies") {
    ch->writeInbound(request(7, "hold", {}));
    RpcCall moved = std::move(held[0]);
    CHECK_THROWS_AS(held[0].reply(Value::nil()), IllegalStateError);
    CHECK_THROWS_AS(held[0].msgid(), IllegalStateError);  // no request left to look at
    CHECK_THROWS_AS(held[0].params(), IllegalStateError);
    CHECK_THROWS_AS(held[0].executor(), IllegalStateError);
    CHECK(moved.msgid() == 7);
    held.clear();  // destroying the moved-from call sends nothing
    ch->runPendingTasks();
    CHECK(ch->outboundCount() == 0);
    moved.reply(Value::boolean(true));
    ch->runPendingTasks();
    CHECK(responses(*ch).size() == 1);
  }
  SUBCASE("replies after the channel closed are dropped") {
    ch->writeInbound(request(8, "hold", {}));
    ch->finishAndReleaseAll();
    held[0].reply(Value::nil());
    held.clear();
    CHECK(ch->outboundCount() == 0);
  }
  held.clear();
  ch->finishAndReleaseAll();
}

TEST_CASE("server: calls outliving their channel do nothing") {
  MessagePackRpcServer rpc;
  std::vector<RpcCall> held;
  rpc.asyncMethod("hold", [&](RpcCall call) { held.push_back(std::move(call)); });
  {
    auto ch = embedded(rpc);
    ch->writeInbound(request(1, "hold", {}));
    ch->writeInbound(request(2, "hold", {}));
    ch->finishAndReleaseAll();
  }
  held[0].reply(Value::nil());  // the connection is detached: dropped, no crash
  held.clear();                 // NoReplyError for the second: dropped too
  CHECK(rpc.stats().droppedCalls == 1);
}

TEST_CASE("server: protocol errors close the connection without answering") {
  MessagePackRpcServer rpc;
  addTestMethods(rpc);
  std::atomic<int> reported{0};
  rpc.onProtocolError([&](Channel&, std::exception_ptr) { ++reported; });
  auto ch = embedded(rpc);
  std::vector<int> wire;
  SUBCASE("not an RPC message") { wire = {0x94, 0x05, 0x01, 0xa1, 'm', 0x90}; }
  SUBCASE("a map") { wire = {0x80}; }
  SUBCASE("a response sent to the server") { wire = {0x94, 0x01, 0x01, 0xc0, 0xc0}; }
  SUBCASE("malformed MessagePack (reserved byte)") { wire = {0xc1}; }
  SUBCASE("invalid UTF-8 in the method") { wire = {0x94, 0x00, 0x01, 0xa1, 0xff, 0x90}; }
  ByteBuf in = Unpooled::buffer();
  for (int b : wire) in.writeByte(static_cast<std::int8_t>(b));
  // A valid request after the bad one in the same read is not answered either.
  {
    MessagePackWriter w(in);
    writeRpcRequest(w, 1, "add", {Value::integer(1), Value::integer(1)});
  }
  ch->writeInbound(std::move(in));
  CHECK_FALSE(ch->isOpen());
  CHECK(ch->outboundCount() == 0);
  CHECK(reported == 1);
  CHECK(rpc.stats().protocolErrors == 1);
  ch->finishAndReleaseAll();
}

// ---------------------------------------------------------------------------------------------
// Backpressure and async reply writers (EmbeddedChannel)

namespace {

/// Plays a socket's write buffer on an EmbeddedChannel: counts the bytes written through it and
/// marks the channel unwritable once more than `highWater` have been written since reset().
class WriteBufferStandIn final : public ChannelHandler {
 public:
  WriteBufferStandIn(EmbeddedChannel& ch, std::size_t highWater) : ch_(&ch), high_(highWater) {}
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override {
    if (msg.is<ByteBuf>()) queued_ += msg.as<ByteBuf>().readableBytes();
    ctx.write(std::move(msg), listener);
    if (queued_ > high_) ch_->setWritable(false);
  }
  void reset() { queued_ = 0; }

 private:
  EmbeddedChannel* ch_;
  std::size_t high_;
  std::size_t queued_ = 0;
};

ByteBuf requests(std::uint32_t first, std::uint32_t count, std::string_view method,
                 std::initializer_list<Value> params) {
  ByteBuf all = Unpooled::buffer();
  for (std::uint32_t i = first; i < first + count; ++i) {
    MessagePackWriter w(all);
    writeRpcRequest(w, i, method, params);
  }
  return all;
}

}  // namespace

TEST_CASE(
    "server backpressure: requests wait while the channel is unwritable, then go on in order") {
  MessagePackRpcServer rpc;
  addTestMethods(rpc);
  auto ch = embedded(rpc);
  ch->setWritable(false);  // the peer is not reading
  ch->writeInbound(requests(0, 20, "add", {Value::integer(1), Value::integer(2)}));
  CHECK(ch->outboundCount() == 0);
  CHECK(rpc.stats().requests == 0);
  CHECK_FALSE(ch->isAutoRead());
  // More arriving meanwhile (the read that was already in progress) waits behind them.
  ch->writeInbound(requests(20, 5, "echo", {Value::integer(7)}));
  CHECK(rpc.stats().requests == 0);

  ch->setWritable(true);
  CHECK(ch->isAutoRead());
  auto r = responses(*ch);
  REQUIRE(r.size() == 25);
  for (std::uint32_t i = 0; i < 25; ++i) CHECK(r[i].msgid() == i);
  CHECK(r[0].result().asInt64() == 3);
  CHECK(r[24].result()[0].asInt64() == 7);
  ch->finishAndReleaseAll();
}

TEST_CASE("server backpressure: autoRead is restored as it was, and kept off while paused") {
  MessagePackRpcServer rpc;
  addTestMethods(rpc);

  SUBCASE("autoRead that was off before the pause stays off after it") {
    auto ch = embedded(rpc);
    ch->setAutoRead(false);
    ch->setWritable(false);
    ch->writeInbound(requests(0, 3, "add", {Value::integer(1), Value::integer(1)}));
    ch->setWritable(true);
    CHECK(responses(*ch).size() == 3);
    CHECK_FALSE(ch->isAutoRead());
    ch->finishAndReleaseAll();
  }
  SUBCASE("another handler turning reading on while paused: off again at the next request") {
    auto ch = embedded(rpc);
    ch->setWritable(false);
    ch->writeInbound(requests(0, 2, "add", {Value::integer(1), Value::integer(1)}));
    ch->setAutoRead(true);  // e.g. a handler that follows writability on its own
    ch->writeInbound(requests(2, 2, "add", {Value::integer(1), Value::integer(1)}));
    CHECK_FALSE(ch->isAutoRead());
    ch->setWritable(true);
    auto r = responses(*ch);
    REQUIRE(r.size() == 4);
    CHECK(r[3].msgid() == 3);
    CHECK(ch->isAutoRead());
    ch->finishAndReleaseAll();
  }
  SUBCASE("the handler removed while paused gives reading back; what waited is dropped") {
    auto ch = embedded(rpc);
    ch->setWritable(false);
    ch->writeInbound(requests(0, 2, "add", {Value::integer(1), Value::integer(1)}));
    CHECK_FALSE(ch->isAutoRead());
    ch->pipeline().remove("rpc");
    CHECK(ch->isAutoRead());
    ch->setWritable(true);
    CHECK(ch->outboundCount() == 0);
    ch->finishAndReleaseAll();
  }
}

TEST_CASE("server backpressure: a batch stops when its responses fill the write buffer") {
  MessagePackRpcServer rpc;
  std::atomic<int> calls{0};
  rpc.method("blob", [&](std::span<const Value>, MessagePackWriter& r) {
    ++calls;
    static const std::vector<std::byte> blob(4096, std::byte{0x5a});
    r.packBin(blob);
  });
  auto ch = std::make_unique<EmbeddedChannel>();
  auto standIn = std::make_unique<WriteBufferStandIn>(*ch, 32 * 1024);
  WriteBufferStandIn& buffer = *standIn;
  ch->pipeline().addLast("write-buffer", std::move(standIn));
  rpc.install(ch->pipeline());

  constexpr std::uint32_t kRequests = 200;  // 800 KiB of responses to 2 KiB of requests
  ch->writeInbound(requests(0, kRequests, "blob", {}));
  // Responses are handed to the channel every 16 KiB, so the batch stops soon after the write
  // buffer passes its mark instead of answering all 200 into memory.
  CHECK(calls.load() > 0);
  CHECK(calls.load() < 20);
  CHECK_FALSE(ch->isAutoRead());

  std::vector<RpcMessage> all;
  int rounds = 0;
  while (all.size() < kRequests && rounds++ < 1000) {
    for (auto& m : responses(*ch)) all.push_back(std::move(m));  // the peer reads...
    buffer.reset();
    ch->setWritable(true);  // ...the buffer drains below its low mark: the server goes on
  }
  REQUIRE(all.size() == kRequests);
  CHECK(rounds > 5);  // it really went in steps
  for (std::uint32_t i = 0; i < kRequests; ++i) {
    CHECK(all[i].msgid() == i);
    CHECK(all[i].result().size() == 4096);
  }
  CHECK(ch->isAutoRead());
  ch->finishAndReleaseAll();
}

TEST_CASE("server backpressure: at most maxConcurrentCalls async calls in flight per connection") {
  MessagePackRpcServer::Options opts;
  opts.maxConcurrentCalls = 0;
  CHECK_THROWS_AS(MessagePackRpcServer{opts}, IllegalArgumentError);  // would never read again
  opts.maxConcurrentCalls = 2;
  MessagePackRpcServer rpc(opts);
  std::vector<RpcCall> held;
  rpc.asyncMethod("hold", [&](RpcCall call) { held.push_back(std::move(call)); });
  auto ch = embedded(rpc);

  ByteBuf in = requests(0, 3, "hold", {});
  {
    MessagePackWriter w(in);
    writeRpcNotification(w, "hold", Value::arrayView({}));  // notifications count as calls too
    writeRpcRequest(w, 4, "hold", Value::arrayView({}));
  }
  ch->writeInbound(std::move(in));
  REQUIRE(held.size() == 2);
  CHECK_FALSE(ch->isAutoRead());

  held[0].reply(Value::integer(0));  // on the loop thread: the next call starts from a task
  ch->runPendingTasks();
  REQUIRE(held.size() == 3);
  CHECK(held[2].msgid() == 2);

  // A call completed on another thread frees its slot once the loop has taken the reply.
  std::thread([c = std::move(held[1])]() mutable { c.reply(Value::integer(1)); }).join();
  ch->runPendingTasks();
  REQUIRE(held.size() == 4);
  CHECK(held[3].isNotification());
  CHECK_FALSE(ch->isAutoRead());

  { RpcCall dropped = std::move(held[3]); }  // a dropped notification frees its slot, no answer
  ch->runPendingTasks();
  REQUIRE(held.size() == 5);
  CHECK(held[4].msgid() == 4);
  CHECK(ch->isAutoRead());  // nothing waits any more
  held[2].reply(Value::integer(2));
  held[4].replyError(std::string_view("four"));
  ch->runPendingTasks();
  auto r = responses(*ch);
  REQUIRE(r.size() == 4);
  CHECK(r[0].msgid() == 0);
  CHECK(r[1].msgid() == 1);
  CHECK(r[2].msgid() == 2);
  CHECK(r[3].error().asStr() == "four");
  held.clear();
  ch->finishAndReleaseAll();
  CHECK(rpc.stats().droppedCalls == 0);  // a dropped notification is not a dropped call
}

TEST_CASE("server backpressure: a resumed request may remove the handler") {
  // Deferred requests resume from a loop task, outside any pipeline event. A method that removes
  // the rpc handler there must not destroy it while the resume is still running (ASan finds that).
  MessagePackRpcServer::Options opts;
  opts.maxConcurrentCalls = 1;
  MessagePackRpcServer rpc(opts);
  std::vector<RpcCall> held;
  EmbeddedChannel* channel = nullptr;
  rpc.asyncMethod("hold", [&](RpcCall call) { held.push_back(std::move(call)); })
      .method("leave", [&](std::span<const Value>, MessagePackWriter& r) {
        channel->pipeline().remove("rpc");
        r.packStr("left");
      });
  auto ch = embedded(rpc);
  channel = ch.get();
  ByteBuf in = Unpooled::buffer();
  {
    MessagePackWriter w(in);
    writeRpcRequest(w, 1, "hold", Value::arrayView({}));
    writeRpcRequest(w, 2, "leave", Value::arrayView({}));
    writeRpcRequest(w, 3, "hold", Value::arrayView({}));
  }
  ch->writeInbound(std::move(in));
  REQUIRE(held.size() == 1);  // 2 and 3 wait: one call in flight is the limit
  CHECK_FALSE(ch->isAutoRead());
  held[0].reply(Value::integer(1));
  ch->runPendingTasks();  // the resume runs "leave", which removes the handler
  CHECK(ch->pipeline().get("rpc") == nullptr);
  CHECK(held.size() == 1);  // 3 was dropped with the handler
  CHECK(ch->isAutoRead());  // reading given back
  auto r = responses(*ch);
  REQUIRE(r.size() == 2);
  CHECK(r[0].msgid() == 1);
  CHECK(r[1].msgid() == 2);
  CHECK(r[1].result().asStr() == "left");
  held.clear();
  ch->finishAndReleaseAll();
}

TEST_CASE("server: async reply writers are checked like sync results") {
  MessagePackRpcServer rpc;
  std::vector<RpcCall> held;
  rpc.asyncMethod("hold", [&](RpcCall call) { held.push_back(std::move(call)); });
  auto ch = embedded(rpc);
  ch->writeInbound(requests(1, 4, "hold", {}));
  REQUIRE(held.size() == 4);
  held[0].reply([](MessagePackWriter& w) { w.packInt(1).packInt(2); });
  held[1].replyError([](MessagePackWriter& w) { w.packStr("a").packStr("b"); });
  CHECK_THROWS_AS(held[2].replyError([](MessagePackWriter&) {}), EncoderError);
  CHECK_THROWS_AS(held[2].replyError([](MessagePackWriter& w) { w.packNil(); }), EncoderError);
  CHECK_FALSE(held[2].isCompleted());  // may still be answered
  held[2].replyError([](MessagePackWriter& w) { w.packArrayHeader(1).packInt(3); });
  CHECK_THROWS_AS(held[3].reply([](MessagePackWriter&) { throw std::runtime_error("no"); }),
                  std::runtime_error);
  held[3].reply([](MessagePackWriter& w) { w.packStr("fine"); });
  ch->runPendingTasks();
  auto r = responses(*ch);
  REQUIRE(r.size() == 4);
  CHECK(r[0].error().asStr() == "InternalError: hold wrote more than one result value");
  CHECK(r[1].error().asStr() == "InternalError: hold wrote more than one result value");
  CHECK(r[2].error()[0].asInt64() == 3);
  CHECK(r[3].result().asStr() == "fine");
  CHECK(rpc.stats().errorResponses == 3);
  held.clear();
  ch->finishAndReleaseAll();
}

// ---------------------------------------------------------------------------------------------
// Client and server over TCP

TEST_CASE("server backpressure over TCP: a peer that never reads cannot make the server buffer") {
  // The client pipelines 4,000 requests whose responses are 16 KiB each (64 MiB in all) and reads
  // nothing. The server must stop once its write buffer is full, with its queued bytes near the
  // high water mark, and answer everything in order once the client reads.
  EventLoopGroup group(1);
  MessagePackRpcServer rpc;
  std::atomic<int> calls{0};
  constexpr std::size_t kBlob = 16 * 1024;
  rpc.method("blob", [&](std::span<const Value>, MessagePackWriter& r) {
    ++calls;
    static const std::vector<std::byte> blob(kBlob, std::byte{0x42});
    r.packBin(blob);
  });
  std::shared_ptr<SocketChannel> serverSide;
  std::mutex m;
  ChannelOptions childOpts;
  childOpts.sendBufferSize = 64 * 1024;  // keep the kernel's share small too
  auto server = ServerBootstrap()
                    .group(group)
                    .childOptions(childOpts)
                    .childHandler([&](SocketChannel& ch) {
                      rpc.install(ch.pipeline());
                      std::lock_guard<std::mutex> g(m);
                      serverSide = ch.shared_from_this();
                    })
                    .bind("127.0.0.1", 0);

  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.open(boost::asio::ip::tcp::v4());
  sock.set_option(boost::asio::socket_base::receive_buffer_size(64 * 1024));
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), server->port()});
  constexpr std::uint32_t kRequests = 4000;
  ByteBuf wire = requests(0, kRequests, "blob", {});
  boost::asio::write(sock, boost::asio::buffer(wire.readableSpan().data(), wire.readableBytes()));

  // Wait until the server has stalled: the call count stops moving.
  int last = -1;
  CHECK(eventually([&] {
    std::this_thread::sleep_for(100ms);
    const int now = calls.load();
    return std::exchange(last, now) == now && now > 0;
  }));
  CHECK(calls.load() < static_cast<int>(kRequests) / 4);
  std::promise<std::pair<std::size_t, bool>> pending;
  {
    std::lock_guard<std::mutex> g(m);
    REQUIRE(serverSide != nullptr);
    serverSide->executor().execute([&, ch = serverSide] {
      pending.set_value({ch->pendingWriteBytes(), ch->isAutoRead()});
    });
  }
  const std::pair<std::size_t, bool> state = pending.get_future().get();
  const std::size_t queued = state.first;
  const bool reading = state.second;
  INFO("bytes queued on the server: " << queued);
  CHECK(queued < 256 * 1024);  // high water mark (64 KiB) + a batch, not megabytes
  CHECK_FALSE(reading);        // and it stopped reading the requests it cannot answer yet

  // Now read everything: every response arrives, in order, each a 16 KiB bin.
  std::vector<std::byte> got;
  std::size_t parsed = 0;
  std::uint32_t next = 0;
  std::array<std::byte, 65536> chunk;
  sock.non_blocking(false);
  while (next < kRequests) {
    const std::size_t n = sock.read_some(boost::asio::buffer(chunk));
    got.insert(got.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
    for (;;) {
      std::span<const std::byte> rest(got.data() + parsed, got.size() - parsed);
      if (rest.empty()) break;
      Document d;
      std::size_t used = 0;
      try {
        used = msgpack::decodeOne(rest, d);
      } catch (const MessagePackError& e) {
        if (e.code() == MessagePackErrc::Truncated) break;  // the rest is on its way
        throw;
      }
      RpcMessage resp =
          RpcMessage::parse(msgpack::decode(Unpooled::copiedBuffer(rest.subspan(0, used))));
      CHECK(resp.msgid() == next);
      CHECK(resp.result().size() == kBlob);
      ++next;
      parsed += used;
    }
    if (parsed > (1u << 20)) {  // keep the buffer small
      got.erase(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(parsed));
      parsed = 0;
    }
  }
  CHECK(next == kRequests);
  CHECK(calls.load() == static_cast<int>(kRequests));
  sock.close();
  {
    std::lock_guard<std::mutex> g(m);
    serverSide.reset();
  }
  server->close();
  server->closeChildren();
  group.shutdownGracefully(0ms, 5s);
}
