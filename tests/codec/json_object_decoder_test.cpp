#include <netbuf/codec/json_object_decoder.hpp>

#include "support/split_checks.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace netbuf;
using netbuf::test::checkAllSplits;
using netbuf::test::Transcript;
using netbuf::test::transcriptOf;

namespace {

auto makeDecoder(std::size_t maxObjectLength = JsonObjectDecoder::kDefaultMaxObjectLength,
                 bool stream = false, std::size_t maxDepth = JsonObjectDecoder::kDefaultMaxDepth) {
  return [=](Cumulator c) { return JsonObjectDecoder(maxObjectLength, stream, maxDepth, c); };
}

/// Feeds parts as separate reads and records messages().size() after each.
std::vector<std::size_t> countsAfterEachRead(DecoderRunner<JsonObjectDecoder>& run,
                                             const std::vector<std::string>& parts) {
  std::vector<std::size_t> counts;
  for (const auto& p : parts) {
    run.feed(p);
    counts.push_back(run.messages().size());
  }
  return counts;
}

std::string concat(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += p;
  return s;
}

}  // namespace

// ---------------------------------------------------------------- Netty's JsonObjectDecoderTest

TEST_CASE("JsonObjectDecoder: testJsonObjectOverMultipleWrites") {
  const std::string part1 = "{ \"firstname\": \"John";
  const std::string part2 = "\" ,\n \"surname\" :";
  const std::string part3 = "\"Doe\", age:22   \n}";
  DecoderRunner<JsonObjectDecoder> run;
  run.feed("  \n\n  " + part1).feed(part2).feed(part3 + "   \n\n  \n").finish();
  CHECK(transcriptOf(run) == Transcript{part1 + part2 + part3});
  CHECK(run.decoder().bytesDropped() == 0);
  checkAllSplits(makeDecoder(), "  \n\n  " + part1 + part2 + part3 + "   \n\n  \n",
                 Transcript{part1 + part2 + part3});
}

TEST_CASE("JsonObjectDecoder: testMultipleJsonObjectsOverMultipleWrites") {
  const std::vector<std::string> parts = {"{\"name\":\"Jo",
                                          "hn\"}{\"name\":\"John\"}{\"name\":\"Jo", "hn\"}"};
  DecoderRunner<JsonObjectDecoder> run;
  CHECK(countsAfterEachRead(run, parts) == std::vector<std::size_t>{0, 2, 3});
  const std::string john = "{\"name\":\"John\"}";
  CHECK(transcriptOf(run) == Transcript{john, john, john});
  checkAllSplits(makeDecoder(), concat(parts), Transcript{john, john, john});
}

TEST_CASE("JsonObjectDecoder: testJsonArrayOverMultipleWrites (an array is one frame by default)") {
  const std::vector<std::string> parts = {
      "[{\"test", "case\"  : \"\\\"}]Escaped dou\\\"ble quotes \\\" in JSON str\\\"ing\"",
      "  }\n\n    , ", "{\"testcase\" : \"Streaming string me", "ssage\"} ]"};
  checkAllSplits(makeDecoder(), "   " + concat(parts) + "      ", Transcript{concat(parts)});
}

TEST_CASE("JsonObjectDecoder: testStreamJsonArrayOverMultipleWrites 1, 2 and 3") {
  const std::string first =
      "{\"testcase\"  : \"\\\"}]Escaped dou\\\"ble quotes \\\" in JSON str\\\"ing\"  }";
  struct Case {
    std::vector<std::string> parts;
    Transcript expected;
  };
  const std::vector<Case> cases = {
      {{"   [{\"test", "case\"  : \"\\\"}]Escaped dou\\\"ble quotes \\\" in JSON str\\\"ing\"",
        "  }\n\n    , ", "{\"testcase\" : \"Streaming string me", "ssage\"} ]      "},
       {first, "{\"testcase\" : \"Streaming string message\"}"}},
      {{"   [{\"test", "case\"  : \"\\\"}]Escaped dou\\\"ble quotes \\\" in JSON str\\\"ing\"",
        "  }\n\n    , {\"test", "case\" : \"Streaming string me", "ssage\"} ]      "},
       {first, "{\"testcase\" : \"Streaming string message\"}"}},
      {{"   [{\"test", "case\"  : \"\\\"}]Escaped dou\\\"ble quotes \\\" in JSON str\\\"ing\"",
        "  }\n\n    , [{\"test", "case\" : \"Streaming string me", "ssage\"}] ]      "},
       {first, "[{\"testcase\" : \"Streaming string message\"}]"}},
  };
  for (const auto& c : cases) {
    CAPTURE(concat(c.parts));
    // As in Netty, an element is emitted when the ',' or ']' after it arrives (third read).
    DecoderRunner<JsonObjectDecoder> run(JsonObjectDecoder::kDefaultMaxObjectLength, true);
    CHECK(countsAfterEachRead(run, c.parts) == std::vector<std::size_t>{0, 0, 1, 1, 2});
    run.finish();
    CHECK(transcriptOf(run) == c.expected);
    checkAllSplits(makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, true), concat(c.parts),
                   c.expected);
  }
}

TEST_CASE(
    "JsonObjectDecoder: testStreamArrayElementsSimple (objects, strings, numbers, literals)") {
  const std::string array =
      "[  12, \"bla\"  , 13.4   \t  ,{\"key0\" : [1,2], \"key1\" : 12, \"key2\" : {}} , "
      "true, false, null, [\"bla\", {}, [1,2,3]] ]";
  const std::string object = "{\"bla\" : \"blub\"}";
  checkAllSplits(
      makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, true), array + object,
      Transcript{"12", "\"bla\"", "13.4", "{\"key0\" : [1,2], \"key1\" : 12, \"key2\" : {}}",
                 "true", "false", "null", "[\"bla\", {}, [1,2,3]]", object});
}

TEST_CASE("JsonObjectDecoder: testSingleByteStream") {
  const std::string json = "{\"foo\" : {\"bar\" : [{},{}]}}";
  DecoderRunner<JsonObjectDecoder> run;
  run.feedInChunks(json, 1);
  CHECK(transcriptOf(run) == Transcript{json});
  CHECK(run.decoder().actualReadableBytes() == 0);
  checkAllSplits(makeDecoder(), json, Transcript{json});
}

TEST_CASE("JsonObjectDecoder: testBackslashInString 1, 2 and 3 (escaped quotes and backslashes)") {
  for (const std::string json : {
           R"({"foo" : "bar\""})",    // an escaped quote does not end the string
           R"({"foo" : "bar\\"})",    // an escaped backslash: the quote after it ends the string
           R"({"foo" : "bar\\\""})",  // backslash, then an escaped quote
       }) {
    CAPTURE(json);
    checkAllSplits(makeDecoder(), json + "[1]", Transcript{json, "[1]"});
  }
  // An escaped backslash before a bracket inside a string, and a string that ends in "\\\\".
  checkAllSplits(makeDecoder(), R"({"a":"\\}\\\\"}{"b":"\"{"})",
                 Transcript{R"({"a":"\\}\\\\"})", R"({"b":"\"{"})"});
}

TEST_CASE("JsonObjectDecoder: testMultipleJsonObjectsInOneWrite and testOneJsonObjectPerWrite") {
  const std::string o1 = "{\"key\" : \"value1\"}", o2 = "{\"key\" : \"value2\"}",
                    o3 = "{\"key\" : \"value3\"}";
  DecoderRunner<JsonObjectDecoder> one;
  one.feed(o1 + o2 + o3);
  CHECK(transcriptOf(one) == Transcript{o1, o2, o3});
  DecoderRunner<JsonObjectDecoder> each;
  CHECK(countsAfterEachRead(each, {o1, o2, o3}) == std::vector<std::size_t>{1, 2, 3});
  CHECK(transcriptOf(each) == Transcript{o1, o2, o3});
  checkAllSplits(makeDecoder(), o1 + o2 + o3, Transcript{o1, o2, o3});
}

TEST_CASE("JsonObjectDecoder: testNonJsonContent 1 and 2 (reported once, decoding resumes)") {
  // Netty throws and then drops the rest of the stream; netbuf reports the junk and goes on at the
  // next '{' or '['.
  checkAllSplits(makeDecoder(), "  b [1,2,3]", Transcript{"!Corrupted@2=98/-", "[1,2,3]"});
  DecoderRunner<JsonObjectDecoder> run;
  run.feed("  [1,2,3]  ");
  CHECK(transcriptOf(run) == Transcript{"[1,2,3]"});
  run.feed(" a {\"key\" : 10}");
  CHECK(transcriptOf(run) == Transcript{"[1,2,3]", "!Corrupted@12=97/-", "{\"key\" : 10}"});
  REQUIRE_THROWS_AS(run.rethrowError(0), CorruptedFrameError);
  checkAllSplits(makeDecoder(), "  [1,2,3]   a {\"key\" : 10}",
                 Transcript{"[1,2,3]", "!Corrupted@12=97/-", "{\"key\" : 10}"});
}

TEST_CASE(
    "JsonObjectDecoder: junk is one error per run, whatever the reads; closing brackets too") {
  // Whitespace does not end junk: only '{' or '[' does.
  checkAllSplits(makeDecoder(), "{\"a\":1} xyz uvw {\"b\":2}",
                 Transcript{"{\"a\":1}", "!Corrupted@8=120/-", "{\"b\":2}"});
  checkAllSplits(makeDecoder(), "{}}{}", Transcript{"{}", "!Corrupted@2=125/-", "{}"});
  checkAllSplits(makeDecoder(), "{} abc", Transcript{"{}", "!Corrupted@3=97/-"});
  checkAllSplits(makeDecoder(), "1 [2] 3 {}",
                 Transcript{"!Corrupted@0=49/-", "[2]", "!Corrupted@6=51/-", "{}"});
  // The error message names the byte and the offset.
  DecoderRunner<JsonObjectDecoder> run;
  run.feed("  x");
  REQUIRE(run.errors().size() == 1);
  try {
    run.rethrowError(0);
  } catch (const CorruptedFrameError& e) {
    CHECK(std::string(e.what()).find("0x78") != std::string::npos);
    CHECK(std::string(e.what()).find("stream offset 2") != std::string::npos);
    CHECK(e.offset() == 2);
  }
  CHECK(run.decoder().actualReadableBytes() == 0);  // junk is not buffered
}

TEST_CASE("JsonObjectDecoder: testMaxObjectLength, exact limit, recovery") {
  // Netty: maxObjectLength 6, "[2,4,5]" (7 bytes) fails.
  checkAllSplits(makeDecoder(6), "[2,4,5]", Transcript{"!TooLong@0=7/6"});
  // A value of exactly maxObjectLength bytes passes.
  checkAllSplits(makeDecoder(7), "[2,4,5]", Transcript{"[2,4,5]"});
  // The rest of the too-long value is discarded, brackets inside its strings included, and the
  // next value decodes.
  checkAllSplits(makeDecoder(6), "[2,4,5] [1]", Transcript{"!TooLong@0=7/6", "[1]"});
  checkAllSplits(makeDecoder(10), R"({"a":"0123456789"} {"b":1})",
                 Transcript{"!TooLong@0=11/10", R"({"b":1})"});
  checkAllSplits(makeDecoder(8), R"( {"a":"}}}]]\"}}}", "b":[1,2,{}]}[1]{"c":2})",
                 Transcript{"!TooLong@1=9/8", "[1]", R"({"c":2})"});
  DecoderRunner<JsonObjectDecoder> run(6);
  run.feed("  [2,4,5]");
  REQUIRE(run.errors().size() == 1);
  try {
    run.rethrowError(0);
  } catch (const TooLongFrameError& e) {
    CHECK(e.offset() == 2);
    CHECK(e.value() == 7);
    CHECK(e.limit() == 6);
    CHECK(std::string(e.what()).find("maxObjectLength 6") != std::string::npos);
  }
}

TEST_CASE(
    "JsonObjectDecoder: testCorruptedFrameException (Netty: deep objects over three writes)") {
  const std::string part1 =
      "{\"a\":{\"b\":{\"c\":{ \"d\":\"27301\", \"med\":\"d\", \"path\":\"27310\"} }, "
      "\"status\":\"OK\" } }{\"";
  const std::string part2 =
      "a\":{\"b\":{\"c\":{\"ory\":[{\"competi\":[{\"event\":[{\"externalI\":{\"external\""
      ":[{\"id\":\"O\"} ]";
  const std::string part3 = "}}]}]}]}}}}";
  const std::string first =
      "{\"a\":{\"b\":{\"c\":{ \"d\":\"27301\", \"med\":\"d\", \"path\":\"27310\"} }, "
      "\"status\":\"OK\" } }";
  const std::string second =
      "{\"a\":{\"b\":{\"c\":{\"ory\":[{\"competi\":[{\"event\":[{\"externalI\":{\"external\":[{"
      "\"id\":\"O\"} ]}}]}]}]}}}}";
  DecoderRunner<JsonObjectDecoder> run;
  CHECK(countsAfterEachRead(run, {part1, part2, part3}) == std::vector<std::size_t>{1, 1, 2});
  CHECK(transcriptOf(run) == Transcript{first, second});
  checkAllSplits(makeDecoder(), part1 + part2 + part3, Transcript{first, second});
  // The second object is 13 levels deep.
  checkAllSplits(makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, false, 13),
                 part1 + part2 + part3, Transcript{first, second});
  checkAllSplits(makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, false, 12),
                 part1 + part2 + part3 + "[]",
                 Transcript{first, fmt::format("!Corrupted@{}=13/12", first.size()), "[]"});
}

TEST_CASE("JsonObjectDecoder: testSpecialJsonCharsInString (brackets inside strings)") {
  const std::string object = "{ \"key\" : \"[]{}}\\\"}}'}\"}";
  checkAllSplits(makeDecoder(), object, Transcript{object});
  checkAllSplits(makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, true),
                 R"([ "]", "[{", "\",", {"k":"]},"} ])",
                 Transcript{R"("]")", R"("[{")", R"("\",")", R"({"k":"]},"})"});
}

// ---------------------------------------------------------------- depth limit

TEST_CASE(
    "JsonObjectDecoder: maxDepth exactly is accepted, maxDepth + 1 fails and decoding resumes") {
  auto make = makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, false, 3);
  checkAllSplits(make, "[[[1]]] {\"a\":{\"b\":[]}}", Transcript{"[[[1]]]", "{\"a\":{\"b\":[]}}"});
  checkAllSplits(make, "[[[[1]]]] {}", Transcript{"!Corrupted@0=4/3", "{}"});
  checkAllSplits(make, " {\"a\":[{\"b\":[[\"]]]]]\"]]}]}[1]",
                 Transcript{"!Corrupted@1=4/3", "[1]"});
  // Brackets inside strings do not count.
  checkAllSplits(makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, false, 1),
                 R"({"a":"[[[[{{{{"}[])", Transcript{R"({"a":"[[[[{{{{"})", "[]"});
  DecoderRunner<JsonObjectDecoder> run(JsonObjectDecoder::kDefaultMaxObjectLength, false, 2);
  run.feed("[[[]]]");
  REQUIRE(run.errors().size() == 1);
  try {
    run.rethrowError(0);
  } catch (const CorruptedFrameError& e) {
    CHECK(e.offset() == 0);
    CHECK(e.value() == 3);
    CHECK(e.limit() == 2);
    CHECK(std::string(e.what()).find("maxDepth 2") != std::string::npos);
  }
  CHECK(run.decoder().actualReadableBytes() == 0);
}

// ---------------------------------------------------------------- array streaming

TEST_CASE("JsonObjectDecoder: streamed elements are trimmed; empty elements emit nothing") {
  auto make = makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, true);
  checkAllSplits(make, "[ \n 1 \t , \r\n2 ]", Transcript{"1", "2"});
  checkAllSplits(make, "[][ ]  [1,] [,]", Transcript{"1"});
  checkAllSplits(make, "[\"a b\" , \" c \"]", Transcript{"\"a b\"", "\" c \""});
  // A top-level object is one frame in stream mode too, arrays inside it included.
  checkAllSplits(make, "{\"a\":[1,2]}[3,4]", Transcript{"{\"a\":[1,2]}", "3", "4"});
  // Junk after a streamed array is reported like any junk.
  checkAllSplits(make, "[1] x [2]", Transcript{"1", "!Corrupted@4=120/-", "2"});
}

TEST_CASE("JsonObjectDecoder: streamed elements have their own limits and recover per element") {
  // maxObjectLength applies to each element, from its first significant byte.
  auto make5 = makeDecoder(5, true);
  checkAllSplits(make5, "[1, \"abcdefgh\", [2], 33]",
                 Transcript{"1", "!TooLong@4=6/5", "[2]", "33"});
  checkAllSplits(make5, "[12345,123456,{\"a\":[1,2,3]},7]",
                 Transcript{"12345", "!TooLong@7=6/5", "!TooLong@14=6/5", "7"});
  // The last element too long: the array's ']' ends the discarding.
  checkAllSplits(make5, "[1,[1,2,3,4]] [5]", Transcript{"1", "!TooLong@3=6/5", "5"});
  // Trailing whitespace before the separator counts toward the element's length.
  checkAllSplits(makeDecoder(2, true), "[12,3][12 ,3]",
                 Transcript{"12", "3", "!TooLong@7=3/2", "3"});
  // Depth: the streamed array is level 1.
  auto deep = makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, true, 2);
  checkAllSplits(deep, "[1,[[2]],[3],{\"a\":[]}]",
                 Transcript{"1", "!Corrupted@3=3/2", "[3]", "!Corrupted@13=3/2"});
  checkAllSplits(makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, true, 1), "[1,[2],3]",
                 Transcript{"1", "!Corrupted@3=2/1", "3"});
}

// ---------------------------------------------------------------- framing only

TEST_CASE(
    "JsonObjectDecoder: framing only: JSON validity is not checked, '{' and '[' count alike") {
  checkAllSplits(makeDecoder(), "{]{1 2 3 :::}[\"x\"}", Transcript{"{]", "{1 2 3 :::}", "[\"x\"}"});
}

TEST_CASE("JsonObjectDecoder: an incomplete value at end of stream is dropped without error") {
  checkAllSplits(makeDecoder(), "{} {\"a\":[1,", Transcript{"{}"});
  checkAllSplits(makeDecoder(JsonObjectDecoder::kDefaultMaxObjectLength, true), "[1, 2, {\"a\"",
                 Transcript{"1", "2"});
  DecoderRunner<JsonObjectDecoder> run;
  run.feed("{} {\"a\":").finish();
  CHECK(run.decoder().bytesDropped() == 5);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("JsonObjectDecoder: frames are retained slices of the input (zero copy)") {
  DecoderRunner<JsonObjectDecoder> run;
  ByteBuf in = Unpooled::copiedBuffer(std::string_view(" {\"a\":1} [2]"));
  const std::byte* base = in.data();
  run.feed(std::move(in));
  REQUIRE(run.messages().size() == 2);
  CHECK(std::get<ByteBuf>(run.messages()[0]).data() == base + 1);
  CHECK(std::get<ByteBuf>(run.messages()[1]).data() == base + 9);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

// ---------------------------------------------------------------- memory and work bounds

TEST_CASE("JsonObjectDecoder: a 10 MB object streamed in 4 KiB reads is discarded as it streams") {
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    DecoderRunner<JsonObjectDecoder> run(4096, false, 512, c);
    std::string huge = "{\"a\":\"";
    huge.append(10 * 1024 * 1024, 'x');
    huge += "}]\"}";  // brackets inside the string must not end the discarding
    huge += " {\"ok\":1}";
    run.feedInChunks(huge, 4096);
    run.finish();
    CHECK(run.maxBuffered() <= 4096);
    CHECK(transcriptOf(run) == Transcript{"!TooLong@0=4097/4096", "{\"ok\":1}"});
  }
}

TEST_CASE("JsonObjectDecoder: one byte per read is scanned incrementally (linear work)") {
  // 64 KiB object one byte at a time: rescanning from the start on each read would visit about
  // 2e9 bytes per cumulator (many seconds, more under sanitizers); the incremental scanner visits
  // each byte once.
  std::string big = "{\"k\":[";
  while (big.size() < 64 * 1024) big += "{\"s\":\"a\\\"]}\"},";
  big += "0]}";
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    DecoderRunner<JsonObjectDecoder> run(JsonObjectDecoder::kDefaultMaxObjectLength, false, 512, c);
    run.feedInChunks(big, 1);
    REQUIRE(run.messages().size() == 1);
    CHECK(test::DescribeMessage{}(run.messages()[0]) == big);
  }
}

TEST_CASE("JsonObjectDecoder: parameters are validated") {
  CHECK_THROWS_AS(JsonObjectDecoder(0), IllegalArgumentError);
  CHECK_THROWS_AS(JsonObjectDecoder(16, false, 0), IllegalArgumentError);
  bool threw = false;
  try {
    JsonObjectDecoder bad(16, true, 0);
  } catch (const IllegalArgumentError& e) {
    threw = true;
    CHECK(std::string(e.what()).find("maxDepth: 0") != std::string::npos);
  }
  CHECK(threw);
  const JsonObjectDecoder d(100, true, 7, Cumulator::Composite);
  CHECK(d.maxObjectLength() == 100);
  CHECK(d.isStreamArrayElements());
  CHECK(d.maxDepth() == 7);
  CHECK(d.cumulator() == Cumulator::Composite);
  const JsonObjectDecoder defaults;
  CHECK(defaults.maxObjectLength() == 1024 * 1024);
  CHECK_FALSE(defaults.isStreamArrayElements());
  CHECK(defaults.maxDepth() == 512);
}
