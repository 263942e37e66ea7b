#include <netbuf/codec/fixed_length_frame_decoder.hpp>

#include "support/split_checks.hpp"

using namespace netbuf;
using netbuf::test::checkAllSplits;
using netbuf::test::Transcript;

TEST_CASE(
    "FixedLengthFrameDecoder: frames of exactly frameLength bytes, however the input is split") {
  auto make = [](Cumulator c) { return FixedLengthFrameDecoder(3, c); };
  checkAllSplits(make, "ABCDEFGHI", Transcript{"ABC", "DEF", "GHI"});
  // A partial frame at end of stream is dropped.
  checkAllSplits(make, "ABCDEFGH", Transcript{"ABC", "DEF"});
  checkAllSplits(make, "", Transcript{});
}

TEST_CASE("FixedLengthFrameDecoder: frames are retained slices of the input (zero copy)") {
  DecoderRunner<FixedLengthFrameDecoder> run(4);
  ByteBuf in = Unpooled::copiedBuffer(std::string_view("abcdefgh"));
  const std::byte* base = in.data();
  run.feed(std::move(in));
  REQUIRE(run.messages().size() == 2);
  const ByteBuf& f0 = std::get<ByteBuf>(run.messages()[0]);
  const ByteBuf& f1 = std::get<ByteBuf>(run.messages()[1]);
  CHECK(f0.data() == base);
  CHECK(f1.data() == base + 4);
  CHECK(f0.refCnt() == 2);  // the two frames share the input's storage; the cumulation is released
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("FixedLengthFrameDecoder: leftover bytes report as dropped at end of stream") {
  DecoderRunner<FixedLengthFrameDecoder> run(5);
  run.feed("12345678");
  CHECK(run.decoder().actualReadableBytes() == 3);
  run.finish();
  CHECK(run.messages().size() == 1);
  CHECK(run.decoder().bytesDropped() == 3);
  CHECK(run.decoder().bytesConsumed() == 8);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("FixedLengthFrameDecoder: frameLength 0 is rejected") {
  CHECK_THROWS_AS(FixedLengthFrameDecoder(0), IllegalArgumentError);
  CHECK(FixedLengthFrameDecoder(7).frameLength() == 7);
}
