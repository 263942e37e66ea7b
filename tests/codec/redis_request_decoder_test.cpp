#include <netbuf/codec/redis/redis_request_decoder.hpp>

#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/codec/decoder_runner.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "support/redis_split_checks.hpp"

// Every rule of redis-server 7.0's request parsing (processMultibulkBuffer, processInlineBuffer,
// sdssplitargs) and every limit, with exact error texts and offsets, at every way of splitting the
// input into reads. The behaviours of Netty's RedisDecoderTest that apply to requests (inline
// commands, on and off; split input) are rewritten here.

using namespace netbuf;
using netbuf::test::checkRedisSplits;
using netbuf::test::decodeRedis;
using netbuf::test::Transcript;

namespace {

using namespace std::string_literals;

auto requests(RedisDecoderOptions o = {}) {
  return [o] { return RedisRequestDecoder(o); };
}

/// A multibulk request of these arguments.
std::string mb(std::initializer_list<std::string_view> args) {
  // (fmt rather than operator+ on std::to_string: g++ 12 -Wrestrict false positives)
  std::string s = fmt::format("*{}\r\n", args.size());
  for (std::string_view a : args) s += fmt::format("${}\r\n{}\r\n", a.size(), a);
  return s;
}

/// The first error of input decoded in one read.
RedisProtocolError firstError(std::string_view input, RedisDecoderOptions o = {}) {
  DecoderRunner<RedisRequestDecoder> run(o);
  run.feed(input).finish();
  REQUIRE_FALSE(run.errors().empty());
  try {
    run.rethrowError(0);
  } catch (const RedisProtocolError& e) {
    return e;
  }
  FAIL("not a RedisProtocolError");
  return RedisProtocolError(RedisProtocolErrc::Truncated, "", 0);
}

/// input fails with `error` after the transcript `before`, however it is split.
void checkFails(const std::string& input, const std::string& error, Transcript before = {},
                RedisDecoderOptions o = {}) {
  CAPTURE(input);
  before.push_back(error);
  checkRedisSplits(requests(o), input, before);
}

/// Bytes of the heap in use (glibc), for checks that a declared length allocates nothing; nullopt
/// where that cannot be measured (sanitizers replace malloc).
std::optional<std::size_t> heapInUse() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__clang__)
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#else
  return std::nullopt;
#endif
}

}  // namespace

// ---------------------------------------------------------------- multibulk requests

TEST_CASE("RedisRequestDecoder: a multibulk command") {
  checkRedisSplits(requests(), mb({"SET", "key", "value"}), {R"("SET" "key" "value")"});
  DecoderRunner<RedisRequestDecoder> run;
  run.feed("*2\r\n$3\r\nget\r\n$3\r\nkey\r\n");
  REQUIRE(run.messages().size() == 1);
  const RedisCommand& c = run.messages()[0];
  CHECK(c.size() == 2);
  CHECK(c.name() == "get");
  CHECK(c.is("GET"));
  CHECK(c[1] == "key");
  CHECK_FALSE(c.isInline());
  CHECK(c.offset() == 0);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("RedisRequestDecoder: payloads are binary-safe") {
  const std::string bin = "a\r\nb\0c\r"s;
  checkRedisSplits(requests(), mb({"SET", "k", bin}), {R"("SET" "k" "a\x0d\x0ab\x00c\x0d")"});
  // An empty argument, and one of 100 bytes (longer than any vector register).
  checkRedisSplits(requests(), mb({"SET", "", std::string(100, 'x')}),
                   {R"("SET" "" ")" + std::string(100, 'x') + "\""});
}

TEST_CASE("RedisRequestDecoder: pipelined commands come out in order with their offsets") {
  const std::string a = mb({"SET", "k", "v"});
  const std::string b = mb({"GET", "k"});
  const std::string input = a + b + "PING\r\n" + b;
  checkRedisSplits(requests(), input,
                   {R"("SET" "k" "v")", R"("GET" "k")", R"(inline "PING")", R"("GET" "k")"});
  DecoderRunner<RedisRequestDecoder> run;
  run.feed(input);
  REQUIRE(run.messages().size() == 4);
  CHECK(run.messages()[0].offset() == 0);
  CHECK(run.messages()[1].offset() == a.size());
  CHECK(run.messages()[2].offset() == a.size() + b.size());
  CHECK(run.messages()[3].offset() == a.size() + b.size() + 6);
}

TEST_CASE("RedisRequestDecoder: a thousand pipelined SET/GET in one read and byte by byte") {
  std::string input;
  Transcript want;
  for (int i = 0; i < 1000; ++i) {
    const std::string k = fmt::format("key:{}", i);
    if (i % 2 == 0) {
      const std::string v = fmt::format("value-{}", i);
      input += mb({"SET", k, v});
      want.push_back(fmt::format("\"SET\" \"{}\" \"{}\"", k, v));
    } else {
      input += mb({"GET", k});
      want.push_back("\"GET\" \"" + k + "\"");
    }
  }
  CHECK(decodeRedis(requests(), input) == want);
  DecoderRunner<RedisRequestDecoder> run;
  run.feedInChunks(input, 1).finish();
  CHECK(test::redisTranscriptOf(run) == want);
  DecoderRunner<RedisRequestDecoder> run7;
  run7.feedInChunks(input, 7).finish();
  CHECK(test::redisTranscriptOf(run7) == want);
}

TEST_CASE("RedisRequestDecoder: more arguments than a command stores inline") {
  std::vector<std::string> args;
  std::string input = "*20\r\n";
  std::string want;
  for (int i = 0; i < 20; ++i) {
    args.push_back(fmt::format("a{}", i));
    input += fmt::format("${}\r\n{}\r\n", args.back().size(), args.back());
    want += fmt::format("{}\"{}\"", i ? " " : "", args.back());
  }
  checkRedisSplits(requests(), input, {want});
}

TEST_CASE("RedisRequestDecoder: *0, *-1 and negative counts are skipped, as Redis does") {
  const std::string get = mb({"GET", "k"});
  checkRedisSplits(requests(), "*0\r\n" + get + "*-1\r\n*-7\r\n" + get,
                   {R"("GET" "k")", R"("GET" "k")"});
  checkRedisSplits(requests(), "*0\r\n*-1\r\n", {});
}

TEST_CASE("RedisRequestDecoder: the two bytes after a line's CR and after a payload are skipped") {
  // processMultibulkBuffer looks for '\r' and steps over the byte after it; after a payload it
  // steps over two bytes without reading them.
  checkRedisSplits(requests(), "*1\rX$4\rYPINGab", {R"("PING")"});
  checkRedisSplits(requests(), "*2\r\n$3\r\nGET\r\n$1\r\nkXY" + mb({"PING"}),
                   {R"("GET" "k")", R"("PING")"});
}

TEST_CASE("RedisRequestDecoder: a line's CR waits for the byte after it") {
  DecoderRunner<RedisRequestDecoder> run;
  run.feed("*1\r");
  CHECK(run.messages().empty());
  run.feed("\n$4\r");
  CHECK(run.messages().empty());
  run.feed("\nPING\r");
  CHECK(run.messages().empty());
  run.feed("\n");
  REQUIRE(run.messages().size() == 1);
  CHECK(run.messages()[0].name() == "PING");
  CHECK(run.errors().empty());
}

// ---------------------------------------------------------------- inline requests

TEST_CASE("RedisRequestDecoder: inline commands (Netty's shouldDecodeInlineCommand)") {
  checkRedisSplits(requests(), "PING\r\n", {R"(inline "PING")"});
  checkRedisSplits(requests(), "PING\n", {R"(inline "PING")"});
  checkRedisSplits(requests(), "  set\tkey   value \r\n", {R"(inline "set" "key" "value")"});
  DecoderRunner<RedisRequestDecoder> run;
  for (const char* part : {"P", "I", "N", "G", "\r\n"}) run.feed(part);
  REQUIRE(run.messages().size() == 1);
  CHECK(run.messages()[0].isInline());
  CHECK(run.messages()[0].name() == "PING");
}

TEST_CASE("RedisRequestDecoder: empty and blank inline lines are no command") {
  checkRedisSplits(requests(), "\r\n\n   \r\n\t\n" + mb({"PING"}) + "\r\n", {R"("PING")"});
}

TEST_CASE("RedisRequestDecoder: inline quoting follows sdssplitargs") {
  struct Case {
    std::string line;
    std::string want;
  };
  const std::vector<Case> cases = {
      {R"(set "a b" c)", R"(inline "set" "a b" "c")"},
      {R"(set "" '')", R"(inline "set" "" "")"},
      {R"(x "\x41\x4a\x6b\xff")", R"(inline "x" "AJk\xff")"},
      // \x needs two hex digits; otherwise the backslash escapes the x.
      {R"(x "\x4" "\xg1")", R"(inline "x" "x4" "xg1")"},
      {R"(x "\n\r\t\b\a\\\"\q")", R"(inline "x" "\x0a\x0d\x09\x08\x07\\\"q")"},
      // Single quotes: only \' is an escape.
      {R"(x 'it\'s' 'a\nb' 'a\\b')", R"(inline "x" "it's" "a\\nb" "a\\\\b")"},
      // ... so a backslash before the closing quote escapes it: '\\' is unterminated.
      // Quotes inside a token join it; the closing quote then needs a blank or the end.
      {R"(a"b c" d)", R"(inline "ab c" "d")"},
      {R"(a'b c')", R"(inline "ab c")"},
      {R"(foo"")", R"(inline "foo")"},
      // Blanks: any isspace() between tokens; inside a token only space, tab, CR and LF end it.
      {"\x0b\x0cping\x0b"
       "a\tb\rc",
       R"(inline "ping\x0ba" "b" "c")"},
      // A NUL ends the arguments (sdssplitargs reads a C string).
      {"get a\0b c"s, R"(inline "get" "a")"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    checkRedisSplits(requests(), c.line + "\r\n", {c.want});
  }
}

TEST_CASE("RedisRequestDecoder: unbalanced quotes") {
  const std::string err = "!UnbalancedQuotes@0";
  for (const char* line : {R"(set "foo)", R"(set 'foo)", R"(set "foo"bar)", R"(set 'foo'bar)",
                           R"(a"b c"d)", R"(x "\")", R"(x "abc\")", R"(x '\\')"}) {
    CAPTURE(line);
    checkFails(line + "\r\n"s, err);
  }
  // After earlier commands, at the offset of the request.
  checkFails(mb({"PING"}) + "set \"x\r\n" + mb({"PING"}), "!UnbalancedQuotes@14", {R"("PING")"});
  CHECK(std::string(firstError("\"\r\n").what()) == "Protocol error: unbalanced quotes in request");
}

TEST_CASE("RedisRequestDecoder: arguments needing no unescaping view the input") {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(64);
  b.writeBytes(std::string_view("set plain \"quoted\" \"esc\\x41\" 'it\\'s'\r\n"));
  const char* begin = reinterpret_cast<const char*>(b.readPtr());
  const char* end = begin + b.readableBytes();
  DecoderRunner<RedisRequestDecoder> run;
  run.feed(std::move(b));
  REQUIRE(run.messages().size() == 1);
  const RedisCommand& c = run.messages()[0];
  REQUIRE(c.size() == 5);
  auto inInput = [&](std::string_view a) {
    return a.data() >= begin && a.data() + a.size() <= end;
  };
  CHECK(inInput(c[0]));
  CHECK(inInput(c[1]));
  CHECK(inInput(c[2]));
  CHECK(c[2] == "quoted");
  CHECK_FALSE(inInput(c[3]));
  CHECK(c[3] == "escA");
  CHECK_FALSE(inInput(c[4]));
  CHECK(c[4] == "it's");
}

TEST_CASE("RedisRequestDecoder: inline commands can be refused (Netty's default)") {
  const RedisDecoderOptions off = RedisDecoderOptions().setAllowInline(false);
  checkFails("PING\r\n", "!InlineNotAllowed@0", {}, off);
  checkFails(mb({"PING"}) + "PING\r\n" + mb({"PING"}), "!InlineNotAllowed@14", {R"("PING")"}, off);
  CHECK(std::string(firstError("\r\n", off).what()) ==
        "Protocol error: inline commands are disabled");
}

// ---------------------------------------------------------------- malformed multibulk requests

TEST_CASE("RedisRequestDecoder: an invalid multibulk length") {
  for (const char* count :
       {"", "abc", "+1", "01", "-0", " 1", "1 ", "1x", "99999999999999999999", "2147483648"}) {
    CAPTURE(count);
    const std::string input = "*"s + count + "\r\n";
    const bool tooMany = std::string_view(count) == "2147483648";
    checkFails(input, tooMany ? "!InvalidMultibulkLength@0=2147483648/2147483647"
                              : "!InvalidMultibulkLength@0");
  }
  CHECK(std::string(firstError("*x\r\n").what()) == "Protocol error: invalid multibulk length");
  // At the limit (INT_MAX by default) the count is accepted: the request waits for its arguments.
  checkRedisSplits(requests(), "*2147483647\r\n$4\r\nPING\r\n", {});
}

TEST_CASE("RedisRequestDecoder: an argument not starting with '$'") {
  checkFails("*1\r\n!3\r\nfoo\r\n", "!ExpectedDollar@4");
  CHECK(std::string(firstError("*2\r\n$3\r\nGET\r\n:1\r\n").what()) ==
        "Protocol error: expected '$', got ':'");
  // Redis reports it once the line's CR and the byte after it have arrived.
  DecoderRunner<RedisRequestDecoder> run;
  run.feed("*1\r\nfoo");
  CHECK(run.errors().empty());
  run.feed("\r\n");
  CHECK(run.errors().size() == 1);
}

TEST_CASE("RedisRequestDecoder: an invalid bulk length") {
  for (const char* len : {"", "-1", "-5", "abc", "01", "+3", "3 ", "99999999999999999999"}) {
    CAPTURE(len);
    checkFails("*1\r\n$"s + len + "\r\nfoo\r\n", "!InvalidBulkLength@4");
  }
  CHECK(std::string(firstError("*1\r\n$-1\r\n").what()) == "Protocol error: invalid bulk length");
}

TEST_CASE("RedisRequestDecoder: after an error everything is discarded") {
  const std::string input = mb({"PING"}) + "*1\r\n$x\r\n" + mb({"PING"}) + "PING\r\n";
  checkFails(input, "!InvalidBulkLength@18", {R"("PING")"});
  DecoderRunner<RedisRequestDecoder> run;
  run.feed(input);
  CHECK(run.decoder().isDiscarding());
  CHECK(run.decoder().actualReadableBytes() == 0);
  run.feed(mb({"PING"}));
  CHECK(run.messages().size() == 1);
  CHECK(run.errors().size() == 1);
  CHECK(run.decoder().bytesConsumed() == run.decoder().bytesReceived());
}

TEST_CASE("RedisRequestDecoder: a request cut short by the end of the stream is dropped") {
  for (const std::string& input : {"*2\r\n$3\r\nGET\r\n"s, "*2\r\n$3\r\nGE"s, "*2"s, "PING"s}) {
    CAPTURE(input);
    checkRedisSplits(requests(), mb({"PING"}) + input, {R"("PING")"});
    DecoderRunner<RedisRequestDecoder> run;
    run.feed(input).finish();
    CHECK(run.errors().empty());
    CHECK(run.decoder().bytesDropped() == input.size());
  }
}

// ---------------------------------------------------------------- limits

TEST_CASE("RedisRequestDecoder: maxMultibulkLength") {
  const auto o = RedisDecoderOptions().setMaxMultibulkLength(2);
  checkRedisSplits(requests(o), mb({"GET", "k"}), {R"("GET" "k")"});
  checkFails(mb({"SET", "k", "v"}), "!InvalidMultibulkLength@0=3/2", {}, o);
  const RedisProtocolError e = firstError(mb({"SET", "k", "v"}), o);
  CHECK(e.value() == 3);
  CHECK(e.limit() == 2);
  CHECK(e.isTooLong());
  CHECK(std::string(e.what()) == "Protocol error: invalid multibulk length");
}

TEST_CASE("RedisRequestDecoder: maxBulkLength") {
  const auto o = RedisDecoderOptions().setMaxBulkLength(5);
  checkRedisSplits(requests(o), mb({"SET", "k", "12345"}), {R"("SET" "k" "12345")"});
  checkFails(mb({"SET", "k", "123456"}), "!InvalidBulkLength@20=6/5", {}, o);
  // The default, proto-max-bulk-len: 512 MB.
  checkFails("*1\r\n$536870913\r\n", "!InvalidBulkLength@4=536870913/536870912");
}

TEST_CASE("RedisRequestDecoder: maxInlineSize bounds the count and length lines") {
  const auto o = RedisDecoderOptions().setMaxInlineSize(4);
  // "*-10" is 4 bytes before its CR: accepted (and skipped); "*-100" is 5.
  checkRedisSplits(requests(o), "*-10\r\n" + mb({"PING"}), {R"("PING")"});
  checkFails("*-100\r\n", "!TooBigMultibulkCount@0=5/4", {}, o);
  checkFails("*12345", "!TooBigMultibulkCount@0=5/4", {}, o);
  CHECK(std::string(firstError("*12345", o).what()) ==
        "Protocol error: too big mbulk count string");
  // A length line of 4 bytes ("$100") is fine; of 5 bytes it is too big, with or without its CR.
  const std::string hundred(100, 'x');
  checkRedisSplits(requests(o), "*1\r\n$100\r\n" + hundred + "\r\n", {"\"" + hundred + "\""});
  checkFails("*1\r\n$1000\r\n", "!TooBigBulkCount@4=5/4", {}, o);
  checkFails("*1\r\n$1000", "!TooBigBulkCount@4=5/4", {}, o);
  CHECK(std::string(firstError("*1\r\n$1000", o).what()) ==
        "Protocol error: too big bulk count string");
  // The default, 64 KB, without a CR.
  checkFails("*1\r\n$" + std::string(70000, '1'), "!TooBigBulkCount@4=65537/65536");
}

TEST_CASE("RedisRequestDecoder: maxInlineSize bounds an inline request") {
  const auto o = RedisDecoderOptions().setMaxInlineSize(8);
  checkRedisSplits(requests(o), "1234 678\n", {R"(inline "1234" "678")"});
  checkRedisSplits(requests(o), "1234 67\r\n", {R"(inline "1234" "67")"});
  checkFails("1234 6789\n", "!TooBigInlineRequest@0=9/8", {}, o);
  checkFails("1234 6789", "!TooBigInlineRequest@0=9/8", {}, o);
  CHECK(std::string(firstError("1234 6789", o).what()) == "Protocol error: too big inline request");
  // The default, 64 KB.
  checkFails(std::string(65537, 'a'), "!TooBigInlineRequest@0=65537/65536");
  checkRedisSplits(requests(), std::string(65536, 'a') + "\n",
                   {"inline \"" + std::string(65536, 'a') + "\""});
}

TEST_CASE("RedisRequestDecoder: maxMessageBytes bounds one request") {
  const std::string set = mb({"SET", "k", "v"});  // 4 + 9 + 7 + 7 = 27 bytes
  REQUIRE(set.size() == 27);
  checkRedisSplits(requests(RedisDecoderOptions().setMaxMessageBytes(27)), set + set,
                   {R"("SET" "k" "v")", R"("SET" "k" "v")"});
  // 26: the last argument's length line (at offset 20) announces a request of 27 bytes.
  checkFails(set, "!MessageTooLarge@20=27/26", {}, RedisDecoderOptions().setMaxMessageBytes(26));
  checkFails(set, "!MessageTooLarge@0=4/3", {}, RedisDecoderOptions().setMaxMessageBytes(3));
  checkFails("PING PONG\r\n", "!MessageTooLarge@0=11/10", {},
             RedisDecoderOptions().setMaxMessageBytes(10));
  CHECK(std::string(firstError(set, RedisDecoderOptions().setMaxMessageBytes(26)).what()) ==
        "Protocol error: request exceeds the query buffer limit");
}

TEST_CASE("RedisRequestDecoder: declared counts and lengths allocate nothing in advance") {
  // A peer announcing 2^31-1 arguments, or a 512 MB bulk, and sending a few bytes: the decoder
  // buffers only what arrived and reserves nothing for what was announced.
  const auto before = heapInUse();
  {
    DecoderRunner<RedisRequestDecoder> run;
    run.feed("*2147483647\r\n");
    for (int i = 0; i < 100; ++i) run.feed("$1\r\na\r\n");
    run.feed("$536870912\r\nabc");
    CHECK(run.messages().empty());
    CHECK(run.errors().empty());
    CHECK(run.maxBuffered() < 1024);
    if (const auto during = heapInUse(); during && before) {
      CHECK(*during < *before + 256 * 1024);
    }
    run.finish();
    CHECK(run.errors().empty());
  }
  {
    DecoderRunner<RedisRequestDecoder> run;
    run.feed("*1\r\n$536870912\r\n");
    run.feed(std::string(1000, 'x'));
    CHECK(run.maxBuffered() < 2048);
    if (const auto during = heapInUse(); during && before) {
      CHECK(*during < *before + 256 * 1024);
    }
  }
}

// ---------------------------------------------------------------- ownership

TEST_CASE("RedisRequestDecoder: arguments view the received buffer (zero copy)") {
  const std::string input = mb({"SET", "key", "value"}) + mb({"GET", "key"});
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(input.size());
  b.writeBytes(input);
  const char* begin = reinterpret_cast<const char*>(b.readPtr());
  const char* end = begin + b.readableBytes();
  DecoderRunner<RedisRequestDecoder> run;
  run.feed(std::move(b));
  REQUIRE(run.messages().size() == 2);
  for (const RedisCommand& c : run.messages()) {
    for (std::string_view a : c.args()) {
      CHECK(a.data() >= begin);
      CHECK(a.data() + a.size() <= end);
    }
  }
  CHECK(run.messages()[0][2].data() == begin + input.find("value"));
  // A retained slice of an argument shares the memory too.
  const ByteBuf v = run.messages()[0].retainedSlice(2);
  CHECK(v.readableStringView() == "value");
  CHECK(reinterpret_cast<const char*>(v.readPtr()) == run.messages()[0][2].data());
}

TEST_CASE("RedisRequestDecoder: commands outlive the decoder and its cumulation") {
  std::vector<RedisCommand> kept;
  {
    DecoderRunner<RedisRequestDecoder> run;
    run.feed("*2\r\n$3\r\nGET\r\n$3").feed("\r\nabc\r\n*1\r\n$4\r\nPI").feed("NG\r\n").finish();
    kept = std::move(run.messages());
  }
  REQUIRE(kept.size() == 2);
  CHECK(kept[0][1] == "abc");
  CHECK(kept[1].name() == "PING");
  RedisCommand moved = std::move(kept[0]);
  kept.clear();
  CHECK(moved[0] == "GET");
  CHECK(moved[1] == "abc");
  // Nothing leaks: test_main's leak check runs after each test case.
}

TEST_CASE("RedisRequestDecoder: the cumulation moving between reads keeps a request's progress") {
  // A request split across reads in which the merge cumulation is compacted and reallocated
  // (small first read, large later ones).
  const std::string big(5000, 'z');
  const std::string input = mb({"SET", "k", big}) + mb({"GET", "k"});
  DecoderRunner<RedisRequestDecoder> run;
  run.feed(input.substr(0, 10));
  run.feed(input.substr(10, 30));
  run.feed(input.substr(40, 4000));
  run.feed(input.substr(4040));
  REQUIRE(run.messages().size() == 2);
  CHECK(run.messages()[0][2] == big);
  CHECK(run.messages()[1][1] == "k");
}

TEST_CASE("RedisRequestDecoder: a composite cumulation is refused") {
  DecoderRunner<RedisRequestDecoder> run;
  run.decoder().setCumulator(Cumulator::Composite);
  run.feed("*1\r\n");
  CHECK_THROWS_AS(run.feed("$4\r\nPING\r\n"), IllegalStateError);
}
