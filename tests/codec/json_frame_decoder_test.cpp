#include <netbuf/codec/json/json_frame_decoder.hpp>
// (first include: proves the header is self-contained)

#include <doctest/doctest.h>

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/json/json_decoder.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/framed_pipeline.hpp"
#include "support/test_buffers.hpp"
#include "support/transcript_printing.hpp"

using namespace netbuf;

namespace {

using netbuf::test::compositeFrame;
using netbuf::test::frame;

using netbuf::test::Transcript;

/// Documents as compact JSON in transcripts.
struct JsonText {
  std::string operator()(const Document& d) const { return json::toString(d.root()); }
};

/// Documents (as compact JSON) and errors in order.
template <class Decoder>
Transcript transcript(DecoderRunner<Decoder>& run) {
  return test::transcriptOf(run, JsonText{});
}

/// Feeds each string as one frame; returns the transcript.
Transcript decodeFrames(const std::vector<std::string>& frames, const JsonParseOptions& o = {}) {
  DecoderRunner<JsonFrameDecoder> run(o);
  for (const std::string& f : frames) run.feed(frame(f));
  run.finish();
  return transcript(run);
}

std::string whatOf(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

}  // namespace

TEST_CASE("JsonFrameDecoder: one value per frame, never a value across frames") {
  // The stream decoder would decode these two frames as ONE value, [1,2].
  DecoderRunner<JsonFrameDecoder> run;
  run.feed(frame("[1,")).feed(frame("2]")).finish();
  // The first frame ends inside the array (offset 3, just past it); the second holds the value 2
  // and then a ']' (trailing content at stream offset 3 + 1).
  CHECK(transcript(run) == Transcript{"!Corrupted@3=3/-", "!Corrupted@4=2/-"});
  CHECK(whatOf(run.errors()[0].error).find("truncated") != std::string::npos);
  CHECK(whatOf(run.errors()[1].error).find("trailing content") != std::string::npos);
  CHECK(run.messages().empty());
  CHECK(run.decoder().bytesReceived() == 5);
  // The stream decoder, for contrast.
  DecoderRunner<JsonDecoder> stream;
  stream.feed("[1,").feed("2]").finish();
  REQUIRE(stream.messages().size() == 1);
  CHECK(json::toString(stream.messages()[0].root()) == "[1,2]");
  // And frames that each hold a value decode one by one; any value may be the top level.
  CHECK(decodeFrames({"[1,", "2", "{\"a\":[]}", " \"ok\"\r\n", "null", "-0.5", "true"}) ==
        Transcript{"!Corrupted@3=3/-", "2", "{\"a\":[]}", "\"ok\"", "null", "-0.5", "true"});
}

TEST_CASE("JsonFrameDecoder: trailing content, truncated values and empty frames") {
  SUBCASE("trailing content: the offset of the first byte after the value that is not space") {
    DecoderRunner<JsonFrameDecoder> run;
    run.feed(frame("{\"a\":1} \n {\"b\":2}"));
    CHECK(transcript(run) == Transcript{"!Corrupted@10=17/-"});
    const std::string what = whatOf(run.errors()[0].error);
    CHECK(what.find("trailing content") != std::string::npos);
    CHECK(what.find("line 2, column 2") != std::string::npos);
    CHECK(decodeFrames({"1 2", "[] x"}) == Transcript{"!Corrupted@2=3/-", "!Corrupted@6=4/-"});
  }
  SUBCASE("truncated: the offset just past the frame") {
    CHECK(decodeFrames({"{\"a\":", "\"abc", "[1, 2", "tru"}) ==
          Transcript{"!Corrupted@5=5/-", "!Corrupted@9=4/-", "!Corrupted@14=5/-",
                     "!Corrupted@17=3/-"});
  }
  SUBCASE("empty frames, or whitespace only: the offset where the frame starts") {
    DecoderRunner<JsonFrameDecoder> run;
    run.feed(frame("1")).feed(frame("")).feed(frame(" \r\n\t")).feed(frame("2"));
    CHECK(transcript(run) == Transcript{"1", "!Corrupted@1=0/-", "!Corrupted@1=4/-", "2"});
    CHECK(whatOf(run.errors()[0].error).find("empty frame") != std::string::npos);
    CHECK(whatOf(run.errors()[1].error).find("4 bytes of whitespace") != std::string::npos);
  }
}

TEST_CASE("JsonFrameDecoder: errors carry stream offsets across frames, decoding goes on") {
  // Frame starts: 0 (1 byte), 1 (6), 7 (5), 12 (5), 17 (11), 28 (3).
  DecoderRunner<JsonFrameDecoder> run;
  run.feed(frame("1"))
      .feed(frame("[true]"))
      .feed(frame("[tru]"))           // Syntax at the ']' (11)
      .feed(frame("[\"\xff\"]"))      // InvalidUtf8 at the bad byte (14)
      .feed(frame("{\n  \"a\": x}"))  // Syntax at 'x' (26): line 2, column 8 of the frame
      .feed(frame("[3]"))
      .finish();
  CHECK(transcript(run) == Transcript{"1", "[true]", "!JsonSyntax@11:1:5",
                                      "!JsonInvalidUtf8@14:1:3", "!JsonSyntax@26:2:8", "[3]"});
  CHECK(run.decoder().bytesReceived() == 31);
  // what() names the stream offset and the frame-relative position.
  CHECK(whatOf(run.errors()[0].error).find("at stream offset 11") != std::string::npos);
  // Every error is a CodecError (MessageToMessageDecoder routes only those to the handler).
  for (const auto& e : run.errors()) CHECK_THROWS_AS(std::rethrow_exception(e.error), CodecError);
  // Other parse errors keep their codes, rebased likewise.
  CHECK(decodeFrames({"[]", "[\"\\uD800\"]", "[\"\\q\"]"}) ==
        Transcript{"[]", "!JsonLoneSurrogate@4:1:3", "!JsonInvalidEscape@14:1:3"});
}

TEST_CASE("JsonFrameDecoder: limits of JsonParseOptions, at stream offsets") {
  JsonParseOptions o;
  o.maxDepth = 2;
  o.maxStringLength = 3;
  o.maxNumberLength = 4;
  o.maxDocumentSize = 12;
  CHECK(decodeFrames({"[[1]]", "[[[1]]]"}, o) == Transcript{"[[1]]", "!JsonDepthLimit@7:1:3=3/2"});
  CHECK(decodeFrames({"1", "\"abcd\"", "\"abc\""}, o) ==
        Transcript{"1", "!JsonStringLengthLimit@1:1:1=4/3", "\"abc\""});
  CHECK(decodeFrames({"1", "12345"}, o) == Transcript{"1", "!JsonNumberLengthLimit@1:1:1=5/4"});
  // A frame longer than maxDocumentSize is rejected whole, at its first byte.
  CHECK(decodeFrames({"1", "[1,2,3,4,5,6]"}, o) ==
        Transcript{"1", "!JsonDocumentSizeLimit@1:1:1=13/12"});
  DecoderRunner<JsonFrameDecoder> run(o);
  run.feed(frame("[1,2,3,4,5,6]"));
  REQUIRE(run.errors().size() == 1);
  try {
    run.rethrowError(0);
  } catch (const JsonError& e) {
    CHECK(e.value() == 13);
    CHECK(e.limit() == 12);
  }
  // The options are the stream decoder's parser options, defaults included.
  CHECK(run.decoder().options().maxDocumentSize == 12);
  CHECK(JsonFrameDecoder().options().maxDocumentSize ==
        JsonDecoder().parseOptions().maxDocumentSize);
  // Parse options apply: bigIntegersAsDouble off.
  JsonParseOptions strictInts;
  strictInts.bigIntegersAsDouble = false;
  CHECK(decodeFrames({"[18446744073709551616]"}, strictInts) ==
        Transcript{"!JsonNumberOutOfRange@1:1:2"});
}

TEST_CASE("JsonFrameDecoder: composite frames are parsed whole") {
  DecoderRunner<JsonFrameDecoder> run;
  run.feed(compositeFrame("{\"a\":[1,", "2],\"b\":\"xy\"}"));  // 20 bytes
  run.feed(compositeFrame("[1]", " [2]"));                     // trailing at 20 + 4
  run.feed(compositeFrame("[\"a", "b"));                       // truncated at 27 + 4
  run.finish();
  CHECK(transcript(run) ==
        Transcript{"{\"a\":[1,2],\"b\":\"xy\"}", "!Corrupted@24=7/-", "!Corrupted@31=4/-"});
  // The composite was made contiguous: the Document keeps that one buffer.
  REQUIRE(run.messages().size() == 1);
  CHECK(run.messages()[0].keptBuffers().size() == 1);
  CHECK(run.messages()[0].root()["b"].asStr() == "xy");
}

TEST_CASE("JsonFrameDecoder: zero copy, strings view the frame, which the Document keeps") {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(32);
  const std::string_view text = "[\"hello\",\"a\\nb\"]";
  b.writeBytes(text);
  const std::byte* mem = b.readPtr();
  DecoderRunner<JsonFrameDecoder> run;
  run.feed(AnyByteBuf(std::move(b)));
  REQUIRE(run.messages().size() == 1);
  const Document& doc = run.messages()[0];
  const std::string_view hello = doc.root()[0].asStr();
  CHECK(hello == "hello");
  CHECK(reinterpret_cast<const std::byte*>(hello.data()) == mem + 2);
  // A string with escapes is unescaped into the arena: not a view of the frame.
  const std::string_view escaped = doc.root()[1].asStr();
  CHECK(escaped == "a\nb");
  const auto* e = reinterpret_cast<const std::byte*>(escaped.data());
  CHECK((e < mem || e >= mem + text.size()));
  REQUIRE(doc.keptBuffers().size() == 1);
  CHECK(doc.keptBuffers()[0].readPtr() == mem);
}

namespace {

using LengthPrefixedJson = test::FramedPipeline<LengthFieldBasedFrameDecoder, JsonFrameDecoder>;
using test::lengthPrefixed;

Transcript decodePipeline(Cumulator c, std::string_view input,
                          const std::vector<std::size_t>& cuts) {
  // 2-byte big-endian length, stripped; frames of at most 32 bytes with the prefix.
  DecoderRunner<LengthPrefixedJson> run(
      LengthFieldBasedFrameDecoder(ByteOrder::big, 32, 0, 2, 0, 2, true, c));
  run.feedSplitAt(input, cuts);
  run.finish();
  return transcript(run);
}

}  // namespace

TEST_CASE("JsonFrameDecoder: after LengthFieldBasedFrameDecoder, split at every byte") {
  // Offsets of the payloads for JsonFrameDecoder (it counts only the payloads it receives: neither
  // the prefixes nor the too-long frame): 0 (3 bytes), 3 (2), 5 (0), 5 (15), 20 (3), 23 (7),
  // 30 (5). The frame decoder's offsets are on the wire: the too-long frame starts at byte 28.
  const std::string input =
      lengthPrefixed({
          "[1,",                   // truncated (at 3), not joined with the next frame
          "2]",                    // trailing ']' at 4
          "",                      // empty at 5
          "{\"k\":\"v\\u00e9\"}",  // {"k":"vé"}
      }) +
      lengthPrefixed({std::string(40, ' ')}) +  // 42 bytes > maxFrameLength 32: skipped
      lengthPrefixed({
          "[1]",              // [1]
          "\"caf\xc3\xa9\"",  // "café"
          "[tru]",            // Syntax at 30 + 4
      });
  const Transcript want = {"!Corrupted@3=3/-",      "!Corrupted@4=2/-",  "!Corrupted@5=0/-",
                           "{\"k\":\"v\xc3\xa9\"}", "!TooLong@28=42/32", "[1]",
                           "\"caf\xc3\xa9\"",       "!JsonSyntax@34:1:5"};
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    CHECK(decodePipeline(c, input, {}) == want);
    std::vector<std::size_t> every;
    for (std::size_t cut = 1; cut < input.size(); ++cut) {
      CAPTURE(cut);
      CHECK(decodePipeline(c, input, {cut}) == want);
      every.push_back(cut);
    }
    CHECK(decodePipeline(c, input, every) == want);
  }
}
