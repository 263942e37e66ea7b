#include <netbuf/codec/json/json_decoder.hpp>
#include <netbuf/codec/json/json_encoder.hpp>

#include <doctest/doctest.h>

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <string>
#include <vector>

#include "support/split_checks.hpp"

using namespace netbuf;

namespace {

/// Documents as compact JSON in transcripts.
struct JsonText {
  std::string operator()(const Document& d) const { return json::toString(d.root()); }
};

/// test::checkAllSplits for a JsonDecoder with options o, documents as compact JSON.
void checkAllSplits(const JsonDecoderOptions& o, std::string_view input,
                    const test::Transcript& expected) {
  test::checkAllSplits([&](Cumulator c) { return JsonDecoder(o, c); }, input, expected, true,
                       JsonText{});
}

}  // namespace

TEST_CASE("JsonDecoder: one Document per top-level value, errors at stream offsets") {
  const std::string input = R"({"a":1} [2,"x"]  {"b":tru} junk{"c":{"d":"\u00e9"}})"
                            "\n[1,\n 2,,]{\"e\":[]}";
  // 0: {"a":1}  8: [2,"x"]  17: {"b":tru} (error at 25)  27: junk  31: {"c":...}  52: [1,\n 2,,]
  checkAllSplits({}, input,
                 {R"({"a":1})", R"([2,"x"])", "!JsonSyntax@25:1:9", "!Corrupted@27=106/-",
                  "{\"c\":{\"d\":\"\xC3\xA9\"}}", "!JsonSyntax@59:2:4", R"({"e":[]})"});
}

TEST_CASE("JsonDecoder: streamed array elements") {
  JsonDecoderOptions o;
  o.streamArrayElements = true;
  const std::string input = R"([ 1 , "two", {"x":[1]} , [3,4], tru , {"y":2}] {"z":[5]} [[6]])";
  checkAllSplits(o, input,
                 {"1", R"("two")", R"({"x":[1]})", "[3,4]", "!JsonUnexpectedEnd@35:1:4",
                  R"({"y":2})", R"({"z":[5]})", "[6]"});
}

TEST_CASE("JsonDecoder: limits of the framer and of the parser") {
  JsonDecoderOptions o;
  o.maxObjectLength = 16;
  o.parse.maxStringLength = 3;
  checkAllSplits(o, R"({"a":"abcd"} [1,2,3,4,5,6,7,8,9] {"b":"ok"})",
                 {"!JsonStringLengthLimit@5:1:6=4/3", "!TooLong@13=17/16", R"({"b":"ok"})"});
}

TEST_CASE("JsonDecoder: documents view the received buffers; parse options apply") {
  JsonDecoderOptions o;
  o.parse.extendedTypes = true;
  DecoderRunner<JsonDecoder> run(o);
  run.feed(R"({"$bin":"AQI="} {"s":"text"})");
  REQUIRE(run.messages().size() == 2);
  CHECK(run.messages()[0].root().isBin());
  const Document& d = run.messages()[1];
  CHECK(d.keptBuffers().size() == 1);
  ByteBuf s = d.retainedSlice(d.root()["s"]);
  CHECK(s.readableStringView() == "text");
  CHECK(run.decoder().parseOptions().extendedTypes);
  CHECK(run.decoder().framer().maxObjectLength() == JsonObjectDecoder::kDefaultMaxObjectLength);
}

TEST_CASE("JsonEncoder: Document to bytes") {
  JsonEncoder enc({.canonical = true});
  Document d = json::parse(R"({"b":[1,2],"a":"x"})");
  std::vector<AnyByteBuf> out;
  enc.write(d, out);
  enc.write(d, out);
  REQUIRE(out.size() == 2);
  CHECK(readableBytesToString(out[0]) == R"({"a":"x","b":[1,2]})");
  CHECK(enc.sizeHint(d) == 64);
  Document bad;
  bad.setRoot(Value::float64(NAN));
  CHECK_THROWS_AS(enc.write(bad, out), EncoderError);
  CHECK(out.size() == 2);
  // Round trip through the decoder.
  DecoderRunner<JsonDecoder> run;
  for (auto& b : out) run.feed(std::move(std::get<ByteBuf>(b)));
  REQUIRE(run.messages().size() == 2);
  CHECK(json::toString(run.messages()[1].root(), {.canonical = true}) == R"({"a":"x","b":[1,2]})");
}
