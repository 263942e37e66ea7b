#include <netbuf/codec/redis/redis_request_decoder.hpp>
// RedisRequestDecoder and RedisReplyDecoder when memory runs out: every operator new made while a
// pipelined batch is decoded is made to fail in turn, with the batch whole and split in two reads
// at every byte. ByteToMessageDecoder's rule for an exception that is no CodecError: the
// cumulation keeps what was not consumed and the decoder its state, so decoding again afterwards
// must give exactly the messages (and stream offsets) of a run that did not fail. This program
// replaces the global operator new and delete (support/replaced_operator_new.hpp).
#include <netbuf/codec/redis/redis_reply_decoder.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "support/redis_transcript.hpp"
#include "support/replaced_operator_new.hpp"

#include <cstddef>
#include <new>
#include <string>
#include <string_view>
#include <vector>

using namespace netbuf;
using netbuf::test::tFailIn;
using netbuf::test::Transcript;

namespace {

/// A multibulk request of these arguments.
std::string request(const std::vector<std::string_view>& args) {
  std::string s = fmt::format("*{}\r\n", args.size());
  for (std::string_view a : args) s += fmt::format("${}\r\n{}\r\n", a.size(), a);
  return s;
}

/// Commands of every shape: more arguments than RedisCommand keeps inline (their views take a
/// heap block), up to that many, inline ones that view the line and that own their bytes.
std::string requests() {
  return request({"GET", "a"}) +
         request({"RPUSH", "list", "a", "b", "c", "d", "e", "f", "g", "h", "i"}) +
         "SET \"k\\x41\" v\r\n" + "PING\r\n" +
         request({"MSET", "k1", "v1", "k2", "v2", "k3", "v3", "k4"}) +
         request({"SADD", "s", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}) +
         request({"SET", "k", "v"});
}

/// Replies of every shape: nested aggregates, a map, an attribute, a streamed string (owned
/// bytes), a streamed aggregate inside another, a push.
std::string replies() {
  return std::string("+OK\r\n") +
         "*3\r\n:1\r\n*2\r\n$1\r\na\r\n%1\r\n+k\r\n#t\r\n|1\r\n+ttl\r\n:5\r\n$3\r\nval\r\n" +
         "$?\r\n;2\r\nab\r\n;1\r\nc\r\n;0\r\n" +
         "*?\r\n:1\r\n%?\r\n+a\r\n:2\r\n.\r\n~1\r\n_\r\n.\r\n" +
         ">2\r\n$7\r\nmessage\r\n$2\r\nhi\r\n" + "$-1\r\n";
}

std::string describe(const RedisCommand& c) {
  return fmt::format("{}@{}", test::describeCommand(c), c.offset());
}
std::string describe(const RedisReply& r) {
  return fmt::format("{}@{}+{}", test::describeResp(r.root()), r.offset(), r.wireSize());
}

ByteBuf bufferOf(std::string_view s, std::size_t capacity) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(capacity);
  b.writeBytes(s);
  return b;
}

/// Decodes input in two reads split at cut with the failAt-th operator new from the first read
/// on failing (none when failAt is -1), then decodes again what is left. `failed` tells whether
/// the failure happened.
template <class Decoder>
Transcript decodeFailing(std::string_view input, std::size_t cut, long failAt, bool& failed) {
  Decoder decoder;
  std::vector<typename Decoder::OutputType> out;
  // Made before the failure is armed. The first read has room for the second: the cumulation
  // takes it without allocating, so every failure is the decoder's (or its output vector's).
  ByteBuf reads[2] = {bufferOf(input.substr(0, cut), input.size()),
                      bufferOf(input.substr(cut), input.size() - cut)};
  failed = false;
  tFailIn = failAt;
  for (ByteBuf& read : reads) {
    try {
      decoder.channelRead(std::move(read), out);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
  }
  tFailIn = -1;
  decoder.decodeAgain(out);
  Transcript t;
  for (const auto& m : out) t.push_back(describe(m));
  t.push_back(
      fmt::format("consumed {}, left {}", decoder.bytesConsumed(), decoder.actualReadableBytes()));
  return t;
}

template <class Decoder>
void checkEveryFailure(std::string_view input, std::size_t messages) {
  bool failed = false;
  const Transcript expected = decodeFailing<Decoder>(input, 0, -1, failed);
  REQUIRE(expected.size() == messages + 1);
  CHECK(expected.back() == fmt::format("consumed {}, left 0", input.size()));
  long failures = 0;
  for (std::size_t cut = 0; cut < input.size(); ++cut) {
    for (long failAt = 0;; ++failAt) {
      CAPTURE(cut);
      CAPTURE(failAt);
      const Transcript t = decodeFailing<Decoder>(input, cut, failAt, failed);
      if (!failed) break;  // past every allocation of the batch
      ++failures;
      REQUIRE(t == expected);
    }
  }
  CHECK(failures > static_cast<long>(input.size()));
}

}  // namespace

TEST_CASE("RedisRequestDecoder: an allocation that fails loses no request and no place") {
  test::disableLeakDetection();
  checkEveryFailure<RedisRequestDecoder>(requests(), 7);
}

TEST_CASE("RedisReplyDecoder: an allocation that fails loses no reply and no place") {
  test::disableLeakDetection();
  checkEveryFailure<RedisReplyDecoder>(replies(), 6);
}
