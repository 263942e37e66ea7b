// libFuzzer target for RedisReplyDecoder (redis_reply_decoder.hpp): see redis_fuzz.hpp for the
// invariants. The same bytes decoded whole, cut at one fuzzer-chosen point, in small reads and
// byte by byte give the same replies and the same error (kind, offset, value, limit); the decoder
// never buffers beyond its limits; after an error it only discards. Each reply's wire bytes
// (offset, wireSize) decoded alone with decodeOne give the same value, and its string payloads
// lie inside those bytes (zero copy) unless assembled from a streamed string.
//
// Input layout: [options] [cut] [read-size seed] [stream...] (redis_fuzz.hpp: redisOptions).
#include <netbuf/codec/redis/redis_reply_decoder.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "redis_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const netbuf::RedisDecoderOptions o = netbuf::fuzz::redisOptions(data[0]);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 3, size - 3);
  auto checkReplies = [&](auto& run) {
    for (const netbuf::RedisReply& r : run.messages()) {
      netbuf::fuzz::check(r.wireSize() >= 3, "a reply shorter than any value");
      netbuf::fuzz::check(r.offset() + r.wireSize() <= stream.size(), "a reply past the stream");
      const std::string_view wire = stream.substr(r.offset(), r.wireSize());
      netbuf::ByteBuf b = netbuf::ByteBufAllocator::defaultAllocator().buffer(wire.size());
      b.writeBytes(wire);
      try {
        const netbuf::RedisReply alone = netbuf::RedisReplyDecoder::decodeOne(std::move(b), o);
        netbuf::fuzz::check(
            netbuf::test::describeResp(alone.root()) == netbuf::test::describeResp(r.root()),
            "decodeOne of a reply's bytes gives another value");
      } catch (const netbuf::RedisProtocolError&) {
        netbuf::fuzz::fail("decodeOne refused a reply's bytes");
      }
    }
  };
  netbuf::fuzz::checkRedisStream([&o] { return netbuf::RedisReplyDecoder(o); }, o, stream, data[1],
                                 data[2], checkReplies);
  return 0;
}
