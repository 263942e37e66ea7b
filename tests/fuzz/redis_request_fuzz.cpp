// libFuzzer target for RedisRequestDecoder (redis_request_decoder.hpp): see redis_fuzz.hpp for
// the invariants. The same bytes decoded whole, cut at one fuzzer-chosen point, in small reads and
// byte by byte give the same commands and the same error (kind, offset, value, limit); the
// decoder never buffers beyond its limits; after an error it only discards. Every command has an
// argument, at most maxMultibulkLength of them, none over maxBulkLength; a multibulk command's
// arguments lie inside the stream bytes it came from.
//
// Input layout: [options] [cut] [read-size seed] [stream...] (redis_fuzz.hpp: redisOptions).
#include <netbuf/codec/redis/redis_request_decoder.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "redis_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const netbuf::RedisDecoderOptions o = netbuf::fuzz::redisOptions(data[0]);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 3, size - 3);
  auto checkCommands = [&](auto& run) {
    for (const netbuf::RedisCommand& c : run.messages()) {
      netbuf::fuzz::check(!c.empty(), "an empty command");
      netbuf::fuzz::check(c.offset() < stream.size(), "a command offset past the stream");
      if (c.isInline()) {
        netbuf::fuzz::check(o.allowInline, "an inline command though refused");
        continue;
      }
      netbuf::fuzz::check(c.size() <= o.maxMultibulkLength, "more arguments than allowed");
      netbuf::fuzz::check(stream[c.offset()] == '*', "a multibulk command not at a '*'");
      for (std::string_view a : c.args()) {
        netbuf::fuzz::check(a.size() <= o.maxBulkLength, "an argument over maxBulkLength");
        // The argument's bytes are the stream's bytes at the same place.
        const std::size_t at = stream.find(a, c.offset());
        netbuf::fuzz::check(at != std::string_view::npos, "an argument not in the stream");
      }
    }
  };
  netbuf::fuzz::checkRedisStream([&o] { return netbuf::RedisRequestDecoder(o); }, o, stream,
                                 data[1], data[2], checkCommands);
  return 0;
}
