#include <netbuf/codec/msgpack/message_pack_frame_decoder.hpp>
// (first include: proves the header is self-contained)

#include <doctest/doctest.h>

#include <cstring>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/framed_pipeline.hpp"
#include "support/test_buffers.hpp"
#include "support/transcript_printing.hpp"

using namespace netbuf;
using netbuf::test::bin;

namespace {

using netbuf::test::compositeFrame;
using netbuf::test::frame;

using netbuf::test::Transcript;
using netbuf::test::transcriptOf;

/// Feeds each byte string as one frame; returns the transcript.
Transcript decodeFrames(const std::vector<std::string>& frames,
                        const MessagePackReadOptions& options = {}) {
  DecoderRunner<MessagePackFrameDecoder> run(options);
  for (const std::string& f : frames) run.feed(frame(f));
  run.finish();
  return transcriptOf(run);
}

std::string whatOf(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

}  // namespace

TEST_CASE("MessagePackFrameDecoder: one value per frame, never a value across frames") {
  // The stream decoder would decode these two frames as ONE value, [1, 3].
  DecoderRunner<MessagePackFrameDecoder> run;
  run.feed(frame(bin({0x92, 0x01}))).feed(frame(bin({0x03}))).finish();
  // The first frame holds only half of an array: corrupted (the array needs 2 elements, 1 byte is
  // left: msgpack's Truncated at the array's header). The second is the value 3 on its own.
  CHECK(transcriptOf(run) == Transcript{"!Corrupted@0=2/-", "3"});
  CHECK(run.messages().size() == 1);
  CHECK(run.messages()[0].root().asUInt64() == 3);
  CHECK(run.errors()[0].messagesBefore == 0);
  CHECK(whatOf(run.errors()[0].error).find("truncated") != std::string::npos);
  CHECK(run.decoder().bytesReceived() == 3);
  // The stream decoder, for contrast.
  DecoderRunner<MessagePackDecoder> stream;
  stream.feed(bin({0x92, 0x01})).feed(bin({0x03})).finish();
  REQUIRE(stream.messages().size() == 1);
  CHECK(stream.messages()[0].root().toDebugString() == "[1,3]");
}

TEST_CASE("MessagePackFrameDecoder: trailing bytes, truncated values and empty frames") {
  SUBCASE("trailing bytes: the offset of the first one, value = the frame's length") {
    DecoderRunner<MessagePackFrameDecoder> run;
    run.feed(frame(bin({0x01, 0x02, 0x03})));
    CHECK(transcriptOf(run) == Transcript{"!Corrupted@1=3/-"});
    const std::string what = whatOf(run.errors()[0].error);
    CHECK(what.find("2 trailing bytes") != std::string::npos);
    CHECK(what.find("stream offset 1") != std::string::npos);
  }
  SUBCASE("truncated: a str whose payload the frame cuts short, at the str's header") {
    DecoderRunner<MessagePackFrameDecoder> run;
    run.feed(
        frame("\xa3"
              "ab"));
    CHECK(transcriptOf(run) == Transcript{"!Corrupted@0=3/-"});
    CHECK(whatOf(run.errors()[0].error).find("ends inside") != std::string::npos);
  }
  SUBCASE("truncated: a header cut short (uint32 with 2 of its 4 bytes)") {
    CHECK(decodeFrames({bin({0xce, 0x00, 0x01})}) == Transcript{"!Corrupted@0=3/-"});
  }
  SUBCASE("truncated: a missing map value, at the end of the frame") {
    CHECK(decodeFrames({bin({0x81, 0x01})}) == Transcript{"!Corrupted@0=2/-"});
  }
  SUBCASE("empty frame: the offset where it starts, value 0") {
    DecoderRunner<MessagePackFrameDecoder> run;
    run.feed(frame(bin({0x01}))).feed(frame("")).feed(frame(bin({0x02})));
    CHECK(transcriptOf(run) == Transcript{"1", "!Corrupted@1=0/-", "2"});
    CHECK(whatOf(run.errors()[0].error).find("empty frame") != std::string::npos);
  }
}

TEST_CASE("MessagePackFrameDecoder: errors carry stream offsets across frames, decoding goes on") {
  // Frame starts: 0 (1 byte), 1 (3), 4 (2), 6 (2), 8 (1), 9 (0), 9 (4), 13 (1).
  const std::vector<std::string> frames = {
      bin({0x01}),                    // 1
      bin({0x92, 0x01, 0x02}),        // [1, 2]
      bin({0xa1, 0xff}),              // str of invalid UTF-8: InvalidUtf8 at its header, 4
      bin({0x05, 0x06}),              // trailing byte at 7
      bin({0xc1}),                    // reserved byte at 8 (this frame only: no stream to corrupt)
      "",                             // empty at 9
      bin({0x82, 0x01, 0x02, 0x01}),  // map {1: 2, 1: ...} missing a value: truncated at 9
      bin({0x07}),                    // 7
  };
  DecoderRunner<MessagePackFrameDecoder> run;
  for (const std::string& f : frames) run.feed(frame(f));
  run.finish();
  CHECK(transcriptOf(run) == Transcript{"1", "[1,2]", "!InvalidUtf8@4", "!Corrupted@7=2/-",
                                        "!ReservedByte@8=193/-", "!Corrupted@9=0/-",
                                        "!Corrupted@9=4/-", "7"});
  CHECK(run.decoder().bytesReceived() == 14);
  // The rebased offset is in what() too.
  CHECK(whatOf(run.errors()[0].error).find("at offset 4") != std::string::npos);
  // Every error is a CodecError (MessageToMessageDecoder routes only those to the handler).
  for (const auto& e : run.errors()) CHECK_THROWS_AS(std::rethrow_exception(e.error), CodecError);
  // Duplicate keys (allowDuplicateKeys off) and a bad timestamp keep their codes too.
  CHECK(decodeFrames({bin({0x01}), bin({0x82, 0x01, 0x02, 0x01, 0x03})}) ==
        Transcript{"1", "!DuplicateKey@4=1/-"});
  CHECK(decodeFrames({bin({0x01, 0x01}), bin({0xd4, 0xff, 0x00})}) ==
        Transcript{"!Corrupted@1=2/-", "!InvalidTimestamp@2"});
}

TEST_CASE("MessagePackFrameDecoder: limits of MessagePackReadOptions, at stream offsets") {
  MessagePackReadOptions o;
  o.limits.maxStrLength = 2;
  o.limits.maxBinLength = 1;
  o.limits.maxContainerLength = 2;
  o.limits.maxDepth = 2;
  o.limits.maxMessageSize = 8;
  CHECK(decodeFrames({bin({0x01}),
                      "\xa3"
                      "abc",
                      "\xa2"
                      "ab"},
                     o) == Transcript{"1", "!StrLengthLimit@1=3/2", "\"ab\""});
  CHECK(decodeFrames({bin({0xc4, 0x02, 0x00, 0x00})}, o) == Transcript{"!BinLengthLimit@0=2/1"});
  CHECK(decodeFrames({bin({0x01}), bin({0x93, 0x01, 0x02, 0x03})}, o) ==
        Transcript{"1", "!ContainerLengthLimit@1=3/2"});
  CHECK(decodeFrames({bin({0x91, 0x91, 0x91, 0x01})}, o) == Transcript{"!DepthLimit@2=3/2"});
  // A frame longer than maxMessageSize: its value is, so MessageSizeLimit (offset: its start,
  // value: the end it needs at least).
  MessagePackReadOptions small;
  small.limits.maxMessageSize = 8;
  CHECK(decodeFrames({bin({0x01}), bin({0x99, 1, 2, 3, 4, 5, 6, 7, 8, 9})}, small) ==
        Transcript{"1", "!MessageSizeLimit@1=10/8"});
  // ... or it is not, and the rest are trailing bytes.
  CHECK(decodeFrames({bin({0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0})}, small) ==
        Transcript{"!Corrupted@1=10/-"});
  // The options are the stream decoder's, defaults included.
  MessagePackFrameDecoder d(o);
  CHECK(d.options().limits.maxStrLength == 2);
  CHECK(MessagePackFrameDecoder().options().limits.maxMessageSize ==
        MessagePackDecoder().options().limits.maxMessageSize);
}

TEST_CASE("MessagePackFrameDecoder: composite frames are decoded whole") {
  DecoderRunner<MessagePackFrameDecoder> run;
  run.feed(compositeFrame(bin({0x92, 0xa2, 'h'}), bin({'i', 0x2a})));  // ["hi", 42]
  run.feed(compositeFrame(bin({0x92, 0x01}), bin({0x02, 0x03})));      // trailing at 5 + 3
  run.feed(compositeFrame(bin({0x93, 0x01}), bin({0x02})));            // truncated at 9
  run.finish();
  CHECK(transcriptOf(run) == Transcript{"[\"hi\",42]", "!Corrupted@8=4/-", "!Corrupted@9=3/-"});
  // The composite was made contiguous: the Document keeps that one buffer.
  REQUIRE(run.messages().size() == 1);
  CHECK(run.messages()[0].keptBuffers().size() == 1);
}

TEST_CASE(
    "MessagePackFrameDecoder: zero copy, str and bin view the frame, which the Document keeps") {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(16);
  b.writeBytes(
      std::string_view("\x92\xa3"
                       "abc\xc4\x02xy",
                       9));
  const std::byte* mem = b.readPtr();
  DecoderRunner<MessagePackFrameDecoder> run;
  run.feed(AnyByteBuf(std::move(b)));
  REQUIRE(run.messages().size() == 1);
  const Document& doc = run.messages()[0];
  const Value& root = doc.root();
  CHECK(reinterpret_cast<const std::byte*>(root[0].asStr().data()) == mem + 2);
  CHECK(root[0].asStr() == "abc");
  CHECK(root[1].asBin().data() == mem + 7);
  REQUIRE(doc.keptBuffers().size() == 1);
  CHECK(doc.keptBuffers()[0].readPtr() == mem);
  // A retained slice of a value is the frame's memory too.
  ByteBuf blob = doc.retainedSlice(root[1]);
  CHECK(blob.readPtr() == mem + 7);
}

namespace {

using LengthPrefixedMessagePack =
    test::FramedPipeline<LengthFieldBasedFrameDecoder, MessagePackFrameDecoder>;
using test::lengthPrefixed;

Transcript decodePipeline(Cumulator c, std::string_view input,
                          const std::vector<std::size_t>& cuts) {
  // 2-byte big-endian length, stripped; frames of at most 16 bytes with the prefix.
  DecoderRunner<LengthPrefixedMessagePack> run(
      LengthFieldBasedFrameDecoder(ByteOrder::big, 16, 0, 2, 0, 2, true, c));
  run.feedSplitAt(input, cuts);
  run.finish();
  return transcriptOf(run);
}

}  // namespace

TEST_CASE("MessagePackFrameDecoder: after LengthFieldBasedFrameDecoder, split at every byte") {
  // Offsets of the payloads for MessagePackFrameDecoder (it counts only the payloads it receives:
  // neither the prefixes nor the too-long frame): 0 (2 bytes), 2 (1), 3 (0), 3 (4), 7 (2), 9 (3),
  // 12 (4). The frame decoder's offsets are on the wire: the too-long frame starts at byte 15.
  const std::string input =
      lengthPrefixed({
          bin({0x92, 0x01}),  // half an array: corrupted, not joined with the next frame
          bin({0x03}),        // 3
          "",                 // empty
          "\xa3"
          "abc",  // "abc"
      }) +
      lengthPrefixed({std::string(20, '\x01')}) +  // 22 bytes > maxFrameLength 16: skipped
      lengthPrefixed({
          bin({0x01, 0x02}),  // trailing byte at 8
          "\xa2"
          "hi",                           // "hi"
          bin({0x93, 0x01, 0x02, 0x03}),  // [1, 2, 3]
      });
  const Transcript want = {
      "!Corrupted@0=2/-", "3",      "!Corrupted@3=0/-", "\"abc\"", "!TooLong@15=22/16",
      "!Corrupted@8=2/-", "\"hi\"", "[1,2,3]"};
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
