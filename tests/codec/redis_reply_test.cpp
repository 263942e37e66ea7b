#include <netbuf/codec/redis/redis_reply.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

// RedisReply on its own: a tree built by hand from Parts (as the decoder builds one), its
// ownership of nodes, input and assembled strings across moves, and retainedSlice's contract.

using namespace netbuf;

namespace {

ByteBuf bufferOf(std::string_view s) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(s.size());
  b.writeBytes(s);
  return b;
}

/// The reply of "*3\r\n$5\r\nhello\r\n=9\r\ntxt:world\r\n" plus a streamed string "abc", built
/// by hand: three nodes, the payloads viewing `input`, the streamed string in owned storage.
RedisReply handBuilt(ByteBuf input) {
  const auto* p = reinterpret_cast<const char*>(input.readPtr());
  const std::string_view wire(p, input.readableBytes());
  RedisReply::Parts parts;
  parts.nodes = std::make_unique<RespValue[]>(3);
  parts.nodes[0] = RespValue::bulkString(wire.substr(wire.find("hello"), 5));
  parts.nodes[1] = RespValue::verbatimString(wire.substr(wire.find("txt:"), 9));
  parts.owned = std::make_unique<char[]>(3);
  std::memcpy(parts.owned.get(), "abc", 3);
  parts.ownedSize = 3;
  parts.nodes[2] = RespValue::bulkString({parts.owned.get(), 3});
  parts.root = RespValue::aggregate(RespType::Array, {parts.nodes.get(), 3});
  parts.offset = 100;
  parts.wireSize = wire.size();
  parts.input = std::move(input);
  return RedisReply(std::move(parts));
}

const char* kWire = "*3\r\n$5\r\nhello\r\n=9\r\ntxt:world\r\n";

}  // namespace

TEST_CASE("RedisReply: a default reply is a null with no storage") {
  const RedisReply r{};
  CHECK(r.type() == RespType::Null);
  CHECK(r.root().isNull());
  CHECK(r.offset() == 0);
  CHECK(r.wireSize() == 0);
  CHECK_FALSE(r.isError());
  CHECK_FALSE(r.isPush());
}

TEST_CASE("RedisReply: shorthands of the root") {
  RedisReply::Parts parts;
  parts.root = RespValue::simpleError("ERR x");
  const RedisReply e(std::move(parts));
  CHECK(e.isError());
  CHECK(e.type() == RespType::SimpleError);
  RedisReply::Parts push;
  push.root = RespValue::aggregate(RespType::Push, {});
  CHECK(RedisReply(std::move(push)).isPush());
}

TEST_CASE("RedisReply: moving keeps nodes, payload views and owned strings valid") {
  RedisReply r = handBuilt(bufferOf(kWire));
  CHECK(r.offset() == 100);
  CHECK(r.wireSize() == std::strlen(kWire));
  const RespValue* firstNode = &r.root().elements()[0];
  RedisReply moved = std::move(r);
  RedisReply again;
  again = std::move(moved);
  REQUIRE(again.root().size() == 3);
  CHECK(&again.root().elements()[0] == firstNode);
  CHECK(again.root()[0].asString() == "hello");
  CHECK(again.root()[1].asString() == "world");
  CHECK(again.root()[2].asString() == "abc");
}

TEST_CASE("RedisReply::retainedSlice") {
  ByteBuf input = bufferOf(kWire);
  const char* begin = reinterpret_cast<const char*>(input.readPtr());
  const RedisReply r = handBuilt(std::move(input));
  SUBCASE("a payload of the input: a slice sharing its memory") {
    const ByteBuf s = r.retainedSlice(r.root()[0]);
    CHECK(s.readableStringView() == "hello");
    CHECK(reinterpret_cast<const char*>(s.readPtr()) == begin + 8);
  }
  SUBCASE("a verbatim string: its text after the format") {
    const ByteBuf s = r.retainedSlice(r.root()[1]);
    CHECK(s.readableStringView() == "world");
    CHECK(reinterpret_cast<const char*>(s.readPtr()) ==
          begin + std::string_view(kWire).find("world"));
  }
  SUBCASE("an assembled string: a copy") {
    const ByteBuf s = r.retainedSlice(r.root()[2]);
    CHECK(s.readableStringView() == "abc");
    CHECK(reinterpret_cast<const char*>(s.readPtr()) != r.root()[2].asString().data());
  }
  SUBCASE("a value whose bytes are not the reply's, or that is no string") {
    CHECK_THROWS_AS(r.retainedSlice(RespValue::bulkString("hello")), std::invalid_argument);
    CHECK_THROWS_AS(r.retainedSlice(r.root()), std::invalid_argument);
    CHECK_THROWS_AS(r.retainedSlice(RespValue::integer(1)), std::invalid_argument);
    // A value straddling the end of the input is not held by it either.
    const RespValue straddling = RespValue::bulkString({begin + 20, 100});
    CHECK_THROWS_AS(r.retainedSlice(straddling), std::invalid_argument);
  }
  SUBCASE("slices outlive the reply") {
    ByteBuf s;
    {
      RedisReply local = handBuilt(bufferOf(kWire));
      s = local.retainedSlice(local.root()[0]);
    }
    CHECK(s.readableStringView() == "hello");
  }
}
