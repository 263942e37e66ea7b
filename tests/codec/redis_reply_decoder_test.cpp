#include <netbuf/codec/redis/redis_reply_decoder.hpp>

#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/codec/decoder_runner.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "support/redis_split_checks.hpp"

// Every RESP2/RESP3 type (the RESP3 specification's examples), streamed strings and aggregates,
// attributes, every malformation and limit with its typed error and offset, at every way of
// splitting the input into reads. Netty's RedisDecoderTest behaviours (split simple strings,
// errors, integers, bulk strings, null and empty bulk strings and arrays, nested arrays, nothing
// leaked) are rewritten here for replies.

using namespace netbuf;
using netbuf::test::checkRedisSplits;
using netbuf::test::decodeRedis;
using netbuf::test::Transcript;

namespace {

using namespace std::string_literals;

auto replies(RedisDecoderOptions o = {}) {
  return [o] { return RedisReplyDecoder(o); };
}

void checkReply(const std::string& input, const std::string& want, RedisDecoderOptions o = {}) {
  CAPTURE(input);
  checkRedisSplits(replies(o), input, {want});
}

void checkFails(const std::string& input, const std::string& error, Transcript before = {},
                RedisDecoderOptions o = {}) {
  CAPTURE(input);
  before.push_back(error);
  checkRedisSplits(replies(o), input, before);
}

RedisReply one(std::string_view bytes, RedisDecoderOptions o = {}) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(bytes.size());
  b.writeBytes(bytes);
  return RedisReplyDecoder::decodeOne(std::move(b), o);
}

std::optional<std::size_t> heapInUse() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__clang__)
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#else
  return std::nullopt;
#endif
}

}  // namespace

// ---------------------------------------------------------------- RESP2 types (Netty's cases)

TEST_CASE("RedisReplyDecoder: simple strings, split anywhere (shouldDecodeSimpleString)") {
  checkReply("+OK\r\n", "+OK");
  checkReply("+\r\n", "+");
  DecoderRunner<RedisReplyDecoder> run;
  for (const char* part : {"+", "O", "K", "\r\n"}) run.feed(part);
  REQUIRE(run.messages().size() == 1);
  CHECK(run.messages()[0].type() == RespType::SimpleString);
  CHECK(run.messages()[0].root().asString() == "OK");
  // shouldDecodeTwoSimpleStrings
  DecoderRunner<RedisReplyDecoder> two;
  for (const char* part : {"+", "O", "K", "\r\n+SEC", "OND", "\r\n"}) two.feed(part);
  CHECK(test::redisTranscriptOf(two) == Transcript{"+OK", "+SECOND"});
}

TEST_CASE("RedisReplyDecoder: errors (shouldDecodeError)") {
  checkReply("-ERROR sample message\r\n", "-ERROR sample message");
  const RedisReply r = one("-ERR unknown command\r\n");
  CHECK(r.isError());
  CHECK(r.type() == RespType::SimpleError);
}

TEST_CASE("RedisReplyDecoder: integers (shouldDecodeInteger)") {
  checkReply(":12345678\r\n", ":12345678");
  checkReply(":0\r\n", ":0");
  checkReply(":-9223372036854775808\r\n", ":-9223372036854775808");
  checkReply(":9223372036854775807\r\n", ":9223372036854775807");
  checkReply(":+7\r\n", ":7");  // RESP3 allows the sign
  DecoderRunner<RedisReplyDecoder> run;
  run.feed(":1234").feed("5678\r\n");
  REQUIRE(run.messages().size() == 1);
  CHECK(run.messages()[0].root().asInteger() == 12345678);
}

TEST_CASE("RedisReplyDecoder: bulk strings (shouldDecodeBulkString, empty, null)") {
  checkReply("$21\r\nbulk\nstring\ntest\n1234\r\n", R"($"bulk\x0astring\x0atest\x0a1234")");
  checkReply("$0\r\n\r\n", R"($"")");
  checkReply("$-1\r\n", "$-1");
  checkReply("$4\r\n\r\n\r\n\r\n", R"($"\x0d\x0a\x0d\x0a")");
  DecoderRunner<RedisReplyDecoder> run;
  for (const char* part : {"$", "2", "1\r\nbulk\nst", "ring\ntest\n", "1234\r\n"}) run.feed(part);
  REQUIRE(run.messages().size() == 1);
  CHECK(run.messages()[0].root().asString() == "bulk\nstring\ntest\n1234");
  const RedisReply null = one("$-1\r\n");
  CHECK(null.root().isNull());
  CHECK(null.root().nullForm() == '$');
}

TEST_CASE("RedisReplyDecoder: arrays (simple, empty, null, nested)") {
  checkReply("*3\r\n:1234\r\n+sim\r\n$6\r\nstring\r\n", R"(*[:1234, +sim, $"string"])");
  checkReply("*0\r\n", "*[]");
  checkReply("*-1\r\n", "*-1");
  checkReply("*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Foo\r\n-Bar\r\n",
             "*[*[:1, :2, :3], *[+Foo, -Bar]]");
  checkReply("*3\r\n*0\r\n*-1\r\n*1\r\n*1\r\n$-1\r\n", "*[*[], *-1, *[*[$-1]]]");
  const RedisReply r = one("*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Foo\r\n-Bar\r\n");
  REQUIRE(r.type() == RespType::Array);
  CHECK(r.root().size() == 2);
  CHECK(r.root()[0][2].asInteger() == 3);
  CHECK(r.root()[1][1].isError());
  CHECK(one("*-1\r\n").root().nullForm() == '*');
}

TEST_CASE("RedisReplyDecoder: pipelined replies come out in order with offsets and sizes") {
  const std::string input = "+OK\r\n$3\r\nfoo\r\n*2\r\n:1\r\n:2\r\n-ERR x\r\n";
  checkRedisSplits(replies(), input, {"+OK", R"($"foo")", "*[:1, :2]", "-ERR x"});
  DecoderRunner<RedisReplyDecoder> run;
  run.feed(input);
  REQUIRE(run.messages().size() == 4);
  CHECK(run.messages()[1].offset() == 5);
  CHECK(run.messages()[1].wireSize() == 9);
  CHECK(run.messages()[2].offset() == 14);
  CHECK(run.messages()[2].wireSize() == 12);
}

// ---------------------------------------------------------------- RESP3 types

TEST_CASE("RedisReplyDecoder: RESP3 null, booleans, big numbers, bulk errors") {
  checkReply("_\r\n", "_");
  CHECK(one("_\r\n").root().nullForm() == '_');
  checkReply("#t\r\n", "#t");
  checkReply("#f\r\n", "#f");
  checkReply("(3492890328409238509324850943850943825024385\r\n",
             "(3492890328409238509324850943850943825024385");
  checkReply("(-3492890328409238509324850943850943825024385\r\n",
             "(-3492890328409238509324850943850943825024385");
  checkReply("!21\r\nSYNTAX invalid syntax\r\n", R"(!"SYNTAX invalid syntax")");
  CHECK(one("!21\r\nSYNTAX invalid syntax\r\n").isError());
}

TEST_CASE("RedisReplyDecoder: doubles") {
  checkReply(",1.23\r\n", ",1.23");
  checkReply(",10\r\n", ",10");
  checkReply(",-0.25e-3\r\n", ",-0.00025");
  checkReply(",+1.5E+2\r\n", ",150");
  checkReply(",inf\r\n", ",inf");
  checkReply(",-inf\r\n", ",-inf");
  checkReply(",nan\r\n", ",nan");
  checkReply(",1e400\r\n", ",inf");
  checkReply(",-1e400\r\n", ",-inf");
  CHECK(one(",1.5000000000000001e+300\r\n").root().asDouble() == 1.5000000000000001e+300);
  CHECK(one(",0.10000000000000001\r\n").root().asDouble() == 0.1);
  CHECK(std::isnan(one(",nan\r\n").root().asDouble()));
}

TEST_CASE("RedisReplyDecoder: verbatim strings") {
  checkReply("=15\r\ntxt:Some string\r\n", R"(="txt:Some string")");
  const RedisReply r = one("=15\r\ntxt:Some string\r\n");
  CHECK(r.type() == RespType::VerbatimString);
  CHECK(r.root().verbatimFormat() == "txt");
  CHECK(r.root().asString() == "Some string");
  checkReply("=4\r\nmkd:\r\n", R"(="mkd:")");
}

TEST_CASE("RedisReplyDecoder: maps, sets and pushes") {
  checkReply("%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", "%{+first: :1, +second: :2}");
  checkReply("%0\r\n", "%{}");
  checkReply("~5\r\n+orange\r\n+apple\r\n#t\r\n:100\r\n:999\r\n",
             "~[+orange, +apple, #t, :100, :999]");
  checkReply(">3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n",
             R"(>[$"message", $"channel", $"hello"])");
  const RedisReply m = one("%2\r\n+first\r\n:1\r\n$6\r\nsecond\r\n*1\r\n:2\r\n");
  REQUIRE(m.type() == RespType::Map);
  CHECK(m.root().size() == 2);
  REQUIRE(m.root().find("first") != nullptr);
  CHECK(m.root().find("first")->asInteger() == 1);
  CHECK(m.root().find("second")->elements()[0].asInteger() == 2);
  CHECK(m.root().find("third") == nullptr);
  CHECK(one(">1\r\n+x\r\n").isPush());
}

TEST_CASE("RedisReplyDecoder: streamed strings are assembled") {
  checkReply("$?\r\n;4\r\nHell\r\n;5\r\no wor\r\n;1\r\nd\r\n;0\r\n", R"($"Hello word")");
  checkReply("$?\r\n;0\r\n", R"($"")");
  checkReply("*2\r\n$?\r\n;2\r\n\r\n\r\n;0\r\n:1\r\n", R"(*[$"\x0d\x0a", :1])");
  const RedisReply r = one("$?\r\n;4\r\nHell\r\n;5\r\no wor\r\n;1\r\nd\r\n;0\r\n");
  CHECK(r.type() == RespType::BulkString);
  CHECK(r.root().asString() == "Hello word");
}

TEST_CASE("RedisReplyDecoder: streamed aggregates") {
  checkReply("*?\r\n:1\r\n:2\r\n:3\r\n.\r\n", "*[:1, :2, :3]");
  checkReply("*?\r\n.\r\n", "*[]");
  checkReply("%?\r\n+a\r\n:1\r\n+b\r\n:2\r\n.\r\n", "%{+a: :1, +b: :2}");
  checkReply("~?\r\n+a\r\n.\r\n", "~[+a]");
  checkReply(">?\r\n+a\r\n.\r\n", ">[+a]");
  // Nested in one another and in fixed-size aggregates.
  checkReply("*?\r\n*?\r\n:1\r\n.\r\n*2\r\n*?\r\n.\r\n:2\r\n$?\r\n;1\r\nx\r\n;0\r\n.\r\n",
             R"(*[*[:1], *[*[], :2], $"x"])");
}

TEST_CASE("RedisReplyDecoder: attributes annotate the value that follows") {
  // The specification's example.
  checkReply(
      "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n"
      "*2\r\n:2039123\r\n:9543892\r\n",
      R"(|{+key-popularity: %{$"a": ,0.1923, $"b": ,0.0012}} *[:2039123, :9543892])");
  checkReply("*2\r\n|1\r\n+ttl\r\n:3600\r\n+a\r\n+b\r\n", "*[|{+ttl: :3600} +a, +b]");
  checkReply("%1\r\n|1\r\n+k\r\n+v\r\n+key\r\n:1\r\n", "%{|{+k: +v} +key: :1}");
  checkReply("|0\r\n:1\r\n", "|{} :1");
  // Attributes of attribute keys, and in streamed aggregates.
  checkReply("|1\r\n|1\r\n+a\r\n+b\r\n+k\r\n+v\r\n:1\r\n", "|{|{+a: +b} +k: +v} :1");
  checkReply("*?\r\n|1\r\n+a\r\n+b\r\n:1\r\n.\r\n", "*[|{+a: +b} :1]");
  const RedisReply r = one("|1\r\n+ttl\r\n:5\r\n$1\r\nx\r\n");
  REQUIRE(r.root().attributes() != nullptr);
  CHECK(r.root().attributes()->type() == RespType::Map);
  CHECK(r.root().attributes()->find("ttl")->asInteger() == 5);
  CHECK(r.root().asString() == "x");
  // A reply is one top-level value: an attribute alone is not a reply yet.
  DecoderRunner<RedisReplyDecoder> run;
  run.feed("|1\r\n+a\r\n+b\r\n");
  CHECK(run.messages().empty());
  run.feed("+OK\r\n");
  CHECK(test::redisTranscriptOf(run) == Transcript{"|{+a: +b} +OK"});
}

TEST_CASE("RedisReplyDecoder: every type in one deep reply, split anywhere") {
  const std::string input =
      "*12\r\n+s\r\n-e\r\n:1\r\n$1\r\nb\r\n_\r\n#t\r\n,1.5\r\n(12\r\n!1\r\nE\r\n=5\r\ntxt:x\r\n"
      "%1\r\n~1\r\n>1\r\n$?\r\n;1\r\ny\r\n;0\r\n*?\r\n|1\r\n+a\r\n$-1\r\n*-1\r\n.\r\n"
      "*1\r\n*1\r\n*1\r\n*0\r\n";
  checkReply(input, R"(*[+s, -e, :1, $"b", _, #t, ,1.5, (12, !"E", ="txt:x", )"
                    R"(%{~[>[$"y"]]: *[|{+a: $-1} *-1]}, *[*[*[*[]]]]])");
}

// ---------------------------------------------------------------- malformed replies

TEST_CASE("RedisReplyDecoder: malformed lines and payloads") {
  checkFails("?x\r\n", "!UnknownType@0");
  checkFails("+OK\r\n\r\n", "!UnknownType@5", {"+OK"});
  checkFails(":abc\r\n", "!InvalidInteger@0");
  checkFails(":\r\n", "!InvalidInteger@0");
  checkFails(":01\r\n", "!InvalidInteger@0");
  checkFails(":9223372036854775808\r\n", "!InvalidInteger@0");
  checkFails(":+-1\r\n", "!InvalidInteger@0");
  for (const char* d : {"", ".5", "1.", "1e", "1e+", "--1", "1.5x", "infinity", "0x10", " 1"}) {
    CAPTURE(d);
    checkFails(fmt::format(",{}\r\n", d), "!InvalidDouble@0");
  }
  checkFails("#x\r\n", "!InvalidBoolean@0");
  checkFails("#tt\r\n", "!InvalidBoolean@0");
  checkFails("#\r\n", "!InvalidBoolean@0");
  checkFails("(12a\r\n", "!InvalidBigNumber@0");
  checkFails("(\r\n", "!InvalidBigNumber@0");
  checkFails("(-\r\n", "!InvalidBigNumber@0");
  checkFails("=3\r\ntxt\r\n", "!InvalidVerbatim@0");
  checkFails("=5\r\ntxt-a\r\n", "!InvalidVerbatim@0");
  checkFails("+OK\rX", "!MissingCrlf@3");
  checkFails("$3\r\nfooXY", "!MissingCrlf@7");
  checkFails("$3\r\nfoo\rX", "!MissingCrlf@7");
  checkFails("_x\r\n", "!MissingCrlf@1");
  for (const char* len : {"-2", "abc", "", "01", "+1"}) {
    CAPTURE(len);
    checkFails(fmt::format("${}\r\n", len), "!InvalidInteger@0");
    checkFails(fmt::format("*{}\r\n", len), "!InvalidInteger@0");
  }
  checkFails("%-1\r\n", "!InvalidInteger@0");
  checkFails("!-1\r\n", "!InvalidInteger@0");
  checkFails("|?\r\n", "!InvalidInteger@0");
  // Offsets count from the start of the stream, inside aggregates too.
  checkFails("+OK\r\n*2\r\n:1\r\n:x\r\n", "!InvalidInteger@13", {"+OK"});
}

TEST_CASE("RedisReplyDecoder: malformed streams and attributes") {
  checkFails(".\r\n", "!InvalidStreamChunk@0");
  checkFails("*1\r\n.\r\n", "!InvalidStreamChunk@4");
  checkFails("*?\r\n:1\r\n.x\r\n", "!InvalidStreamChunk@8");
  checkFails("$?\r\n+x\r\n", "!InvalidStreamChunk@4");
  checkFails("$?\r\n;-1\r\n", "!InvalidInteger@4");
  checkFails("$?\r\n;3\r\nabcXY", "!MissingCrlf@11");
  checkFails("%?\r\n+a\r\n.\r\n", "!InvalidStreamChunk@8");
  checkFails("*?\r\n|1\r\n+a\r\n+b\r\n.\r\n", "!InvalidAttribute@16");
  checkFails("|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n:1\r\n", "!InvalidAttribute@12");
}

TEST_CASE("RedisReplyDecoder: after an error everything is discarded") {
  const std::string input = "+OK\r\n:x\r\n+OK\r\n";
  checkFails(input, "!InvalidInteger@5", {"+OK"});
  DecoderRunner<RedisReplyDecoder> run;
  run.feed(input);
  CHECK(run.decoder().isDiscarding());
  run.feed("+OK\r\n");
  CHECK(run.messages().size() == 1);
  CHECK(run.errors().size() == 1);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("RedisReplyDecoder: a reply cut short by the end of the stream is dropped") {
  for (const std::string& input : {"*2\r\n:1\r\n"s, "$5\r\nab"s, "+O"s, "|1\r\n+a\r\n+b\r\n"s}) {
    CAPTURE(input);
    checkRedisSplits(replies(), "+OK\r\n" + input, {"+OK"});
    DecoderRunner<RedisReplyDecoder> run;
    run.feed(input).finish();
    CHECK(run.errors().empty());
    CHECK(run.decoder().bytesDropped() == input.size());
    // The decoder starts afresh on a new stream.
    run.feed("*1\r\n:7\r\n");
    CHECK(test::redisTranscriptOf(run) == Transcript{"*[:7]"});
  }
}

TEST_CASE("RedisReplyDecoder: a composite cumulation is refused") {
  DecoderRunner<RedisReplyDecoder> run;
  run.decoder().setCumulator(Cumulator::Composite);
  run.feed("$3\r\n");
  CHECK_THROWS_AS(run.feed("foo\r\n"), IllegalStateError);
}

// ---------------------------------------------------------------- limits

TEST_CASE("RedisReplyDecoder: maxBulkLength") {
  const auto o = RedisDecoderOptions().setMaxBulkLength(3);
  checkReply("$3\r\nfoo\r\n", R"($"foo")", o);
  checkFails("$4\r\nfoox\r\n", "!InvalidBulkLength@0=4/3", {}, o);
  checkFails("*1\r\n!4\r\nfoox\r\n", "!InvalidBulkLength@4=4/3", {}, o);
  checkFails("$?\r\n;4\r\nfoox\r\n", "!InvalidBulkLength@4=4/3", {}, o);
  checkFails("$536870913\r\n", "!InvalidBulkLength@0=536870913/536870912");
}

TEST_CASE("RedisReplyDecoder: maxMultibulkLength") {
  const auto o = RedisDecoderOptions().setMaxMultibulkLength(2);
  checkReply("*2\r\n:1\r\n:2\r\n", "*[:1, :2]", o);
  checkReply("%2\r\n:1\r\n:2\r\n:3\r\n:4\r\n", "%{:1: :2, :3: :4}", o);  // pairs count
  checkFails("*3\r\n", "!InvalidMultibulkLength@0=3/2", {}, o);
  checkFails("~3\r\n", "!InvalidMultibulkLength@0=3/2", {}, o);
  checkFails("*1\r\n%3\r\n", "!InvalidMultibulkLength@4=3/2", {}, o);
  checkFails("|3\r\n", "!InvalidMultibulkLength@0=3/2", {}, o);
  checkFails("*2147483648\r\n", "!InvalidMultibulkLength@0=2147483648/2147483647");
}

TEST_CASE("RedisReplyDecoder: maxNestingDepth") {
  const auto o = RedisDecoderOptions().setMaxNestingDepth(3);
  checkReply("*1\r\n*1\r\n*1\r\n:1\r\n", "*[*[*[:1]]]", o);
  checkFails("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", "!NestingTooDeep@12=4/3", {}, o);
  // Streamed aggregates and attributes nest too.
  checkFails("*?\r\n%?\r\n~1\r\n|1\r\n", "!NestingTooDeep@12=4/3", {}, o);
  // Empty aggregates open nothing.
  checkReply("*1\r\n*1\r\n*1\r\n*0\r\n", "*[*[*[*[]]]]", o);
  // The default, 128.
  std::string deep;
  for (int i = 0; i < 129; ++i) deep += "*1\r\n";
  checkFails(deep, "!NestingTooDeep@512=129/128");
}

TEST_CASE("RedisReplyDecoder: maxInlineSize bounds every line") {
  const auto o = RedisDecoderOptions().setMaxInlineSize(4);
  checkReply("+abc\r\n", "+abc", o);  // 4 bytes before the CR
  checkFails("+abcd\r\n", "!TooBigInlineRequest@0=5/4", {}, o);
  checkFails("+abcd", "!TooBigInlineRequest@0=5/4", {}, o);
  checkFails("*1000\r\n", "!TooBigMultibulkCount@0=5/4", {}, o);
  checkFails("$1000\r\n", "!TooBigBulkCount@0=5/4", {}, o);
  checkFails("$?\r\n;1000\r\n", "!TooBigBulkCount@4=5/4", {}, o);
  // A payload is no line: a bulk string longer than maxInlineSize is fine.
  checkReply("$10\r\n0123456789\r\n", R"($"0123456789")", o);
}

TEST_CASE("RedisReplyDecoder: maxMessageBytes bounds one reply") {
  const std::string r = "*2\r\n$3\r\nfoo\r\n:1\r\n";  // 4 + 9 + 4 = 17 bytes
  checkRedisSplits(replies(RedisDecoderOptions().setMaxMessageBytes(17)), r + r,
                   {R"(*[$"foo", :1])", R"(*[$"foo", :1])"});
  checkFails(r, "!MessageTooLarge@13=17/16", {}, RedisDecoderOptions().setMaxMessageBytes(16));
  checkFails(r, "!MessageTooLarge@4=13/12", {}, RedisDecoderOptions().setMaxMessageBytes(12));
}

TEST_CASE("RedisReplyDecoder: declared counts and lengths allocate nothing in advance") {
  const auto before = heapInUse();
  for (const char* header : {"*2147483647\r\n", "%2147483647\r\n", "~?\r\n", "$536870912\r\n"}) {
    CAPTURE(header);
    DecoderRunner<RedisReplyDecoder> run;
    run.feed(header);
    for (int i = 0; i < 100; ++i) run.feed(":1\r\n");
    CHECK(run.messages().empty());
    CHECK(run.errors().empty());
    CHECK(run.maxBuffered() < 1024);
    if (const auto during = heapInUse(); during && before) {
      CHECK(*during < *before + 256 * 1024);
    }
  }
}

TEST_CASE("RedisReplyDecoder: a large reply split in many reads is decoded whole") {
  std::string input = "*20000\r\n";
  for (int i = 0; i < 20000; ++i)
    input += fmt::format("${}\r\n{}\r\n", i % 10 + 1,
                         std::string(static_cast<std::size_t>(i % 10 + 1), 'v'));
  DecoderRunner<RedisReplyDecoder> run;
  run.feedInChunks(input, 13);
  REQUIRE(run.messages().size() == 1);
  const RespValue& root = run.messages()[0].root();
  REQUIRE(root.size() == 20000);
  CHECK(root[19999].asString() == std::string(10, 'v'));
  CHECK(run.messages()[0].wireSize() == input.size());
}

// ---------------------------------------------------------------- decodeOne

TEST_CASE("RedisReplyDecoder::decodeOne") {
  const RedisReply r = one("*2\r\n$3\r\nfoo\r\n:1\r\n");
  CHECK(test::describeResp(r.root()) == R"(*[$"foo", :1])");
  CHECK(r.wireSize() == 17);
  auto kindOf = [](std::string_view bytes) -> std::string {
    try {
      one(bytes);
    } catch (const RedisProtocolError& e) {
      return fmt::format("{}@{}", test::redisErrcName(e.kind()), e.offset());
    }
    return "ok";
  };
  CHECK(kindOf("*2\r\n$3\r\nfoo\r\n") == "Truncated@13");
  CHECK(kindOf("") == "Truncated@0");
  CHECK(kindOf("+OK\r\n+OK\r\n") == "Truncated@5");
  CHECK(kindOf("+OK\r") == "Truncated@4");
  CHECK(kindOf(":x\r\n") == "InvalidInteger@0");
  CHECK(kindOf("*2\r\n:1\r\n:1\r\n") == "ok");
  CHECK(kindOf("*2\r\n*1\r\n") == "Truncated@8");
}

// ---------------------------------------------------------------- ownership

TEST_CASE("RedisReplyDecoder: payloads view the received buffer (zero copy)") {
  const std::string input = "*3\r\n$5\r\nhello\r\n+simple\r\n=9\r\ntxt:world\r\n";
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(input.size());
  b.writeBytes(input);
  const char* begin = reinterpret_cast<const char*>(b.readPtr());
  DecoderRunner<RedisReplyDecoder> run;
  run.feed(std::move(b));
  REQUIRE(run.messages().size() == 1);
  const RedisReply& r = run.messages()[0];
  CHECK(r.root()[0].asString().data() == begin + input.find("hello"));
  CHECK(r.root()[1].asString().data() == begin + input.find("simple"));
  const ByteBuf hello = r.retainedSlice(r.root()[0]);
  CHECK(hello.readableStringView() == "hello");
  CHECK(reinterpret_cast<const char*>(hello.readPtr()) == begin + input.find("hello"));
  const ByteBuf world = r.retainedSlice(r.root()[2]);  // a verbatim string: its text
  CHECK(world.readableStringView() == "world");
  CHECK_THROWS_AS(r.retainedSlice(r.root()), std::invalid_argument);
  const RespValue foreign = RespValue::bulkString("elsewhere");
  CHECK_THROWS_AS(r.retainedSlice(foreign), std::invalid_argument);
}

TEST_CASE("RedisReplyDecoder: a streamed string is copied; retainedSlice copies it") {
  const RedisReply r = one("*2\r\n$?\r\n;3\r\nabc\r\n;2\r\nde\r\n;0\r\n$?\r\n;0\r\n");
  CHECK(r.root()[0].asString() == "abcde");
  const ByteBuf s = r.retainedSlice(r.root()[0]);
  CHECK(s.readableStringView() == "abcde");
  CHECK(r.retainedSlice(r.root()[1]).readableBytes() == 0);
}

TEST_CASE("RedisReplyDecoder: replies outlive the decoder; moving keeps their views") {
  std::vector<RedisReply> kept;
  {
    DecoderRunner<RedisReplyDecoder> run;
    run.feed("*2\r\n$3\r\nfo").feed("o\r\n|1\r\n+a\r\n+b\r\n%1\r\n$?\r\n;1\r\nk\r\n;0\r\n:1\r\n");
    run.feed("+next\r\n").finish();
    kept = std::move(run.messages());
  }
  REQUIRE(kept.size() == 2);
  RedisReply moved = std::move(kept[0]);
  kept.clear();
  CHECK(test::describeResp(moved.root()) == R"(*[$"foo", |{+a: +b} %{$"k": :1}])");
  RedisReply again(std::move(moved));
  CHECK(again.root()[1].attributes()->find("a")->asString() == "b");
  CHECK(again.root()[0].asString() == "foo");
  // Nothing leaks: test_main's leak check runs after each test case (Netty's "should not leak").
}
