#include <netbuf/codec/decoder_runner.hpp>

#include <netbuf/codec/fixed_length_frame_decoder.hpp>

#include "support/transcript_printing.hpp"

using namespace netbuf;
using netbuf::test::Transcript;
using netbuf::test::transcriptOf;

namespace {

/// Two-byte frames; a frame "!!" is consumed and reported as an error.
struct PairDecoder : ByteToMessageDecoder<PairDecoder, AnyByteBuf> {
  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    if (in.readableBytes() < 2) return;
    if (in.getUnsignedByte(in.readerIndex()) == '!') {
      const std::uint64_t at = streamOffset(in);
      in.skipBytes(2);
      throw CorruptedFrameError("pair", at);
    }
    out.push_back(readFrame(in, 2));
  }
};

}  // namespace

TEST_CASE("DecoderRunner: feed, feedInChunks and feedSplitAt give the same stream") {
  DecoderRunner<FixedLengthFrameDecoder> a(3), b(3), c(3), d(3);
  a.feed("abcdefg").finish();
  b.feedInChunks("abcdefg", 2).finish();
  c.feedSplitAt("abcdefg", {1, 1, 4, 9}).finish();  // out-of-order and past-the-end cuts ignored
  d.feedInChunks("abcdefg", 0).finish();            // chunk size 0 means one byte
  for (auto* r : {&a, &b, &c, &d}) CHECK(transcriptOf(*r) == Transcript{"abc", "def"});
  CHECK(b.decoder().bytesReceived() == 7);
  // The high-water mark of undecoded bytes after each read: 2 ("ab"), then 1 ("g") at most.
  CHECK(b.maxBuffered() == 2);
  CHECK(a.maxBuffered() == 1);
  CHECK(b.decoder().bytesDropped() == 1);
}

TEST_CASE("DecoderRunner: errors are recorded in order with the messages before them") {
  DecoderRunner<PairDecoder> run;
  run.feed("ab!!cd").feed(Unpooled::copiedBuffer(std::string_view("!!")));
  REQUIRE(run.errors().size() == 2);
  CHECK(run.errors()[0].messagesBefore == 1);
  CHECK(run.errors()[1].messagesBefore == 2);
  CHECK_THROWS_AS(run.rethrowError(1), CorruptedFrameError);
  CHECK_THROWS_AS(run.rethrowError(2), std::out_of_range);
  CHECK(transcriptOf(run) == Transcript{"ab", "!Corrupted@2", "cd", "!Corrupted@6"});
  run.messages().clear();  // messages are the caller's to take
  CHECK(run.messages().empty());
}
