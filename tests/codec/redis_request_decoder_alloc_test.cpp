#include <netbuf/codec/redis/redis_request_decoder.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/replaced_operator_new.hpp"

// The request decoder's hot path: pipelined commands of up to RedisCommand::kInlineArgs arguments
// cost no allocation per command (the arguments are views into a retained slice of the input,
// whose reference comes from the cumulation's batched credit), once the decoder's reusable tables
// have grown.

using namespace netbuf;

namespace {

std::string pipeline(int commands) {
  std::string s;
  for (int i = 0; i < commands; ++i) {
    const std::string k = fmt::format("key:{}", i);
    if (i % 2 == 0) {
      s += fmt::format("*3\r\n$3\r\nSET\r\n${}\r\n{}\r\n$5\r\nvalue\r\n", k.size(), k);
    } else {
      s += fmt::format("*2\r\n$3\r\nGET\r\n${}\r\n{}\r\n", k.size(), k);
    }
  }
  // One command of exactly kInlineArgs arguments.
  s += "*8\r\n$4\r\nMSET\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"
       "$1\r\ng\r\n";
  return s;
}

ByteBuf bufferOf(const std::string& s) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(s.size());
  b.writeBytes(s);
  return b;
}

}  // namespace

TEST_CASE("RedisRequestDecoder: pipelined commands allocate nothing per command") {
  test::disableLeakDetection();
  const std::string input = pipeline(1000);
  RedisRequestDecoder decoder;
  std::vector<RedisCommand> out;
  out.reserve(2048);
  decoder.channelRead(bufferOf(input), out);  // warm-up: the decoder's tables grow once
  REQUIRE(out.size() == 1001);
  out.clear();
  ByteBuf b = bufferOf(input);
  const std::uint64_t before = test::tAllocations;
  decoder.channelRead(std::move(b), out);
  const std::uint64_t used = test::tAllocations - before;
  REQUIRE(out.size() == 1001);
  CHECK(out.back().size() == 8);
  CHECK(out.back()[7] == "g");
  // A few at most for the whole read (reference credit, not per command).
  CHECK(used <= 4);
  out.clear();
}
