#include <netbuf/codec/varint32_frame_decoder.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "support/split_checks.hpp"
#include "support/test_buffers.hpp"

using namespace netbuf;
using netbuf::test::bin;
using netbuf::test::checkAllSplits;
using netbuf::test::describeError;
using netbuf::test::Transcript;

namespace {

/// The protobuf varint of v (any 64-bit value, for over-long encodings too).
std::string varint(std::uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}

auto maker(std::size_t maxFrameLength = Varint32FrameDecoder::kDefaultMaxFrameLength) {
  return [=](Cumulator c) { return Varint32FrameDecoder(maxFrameLength, c); };
}

}  // namespace

TEST_CASE("Varint32FrameDecoder: Netty's testTinyDecode") {
  const std::string b = bin({4, 1, 1, 1, 1});
  DecoderRunner<Varint32FrameDecoder> run;
  run.feed(b.substr(0, 1));
  CHECK(run.messages().empty());
  run.feed(b.substr(1, 2));
  CHECK(run.messages().empty());
  run.feed(b.substr(3));
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == bin({1, 1, 1, 1}));
  CHECK(run.decoder().actualReadableBytes() == 0);
  checkAllSplits(maker(), b, Transcript{bin({1, 1, 1, 1})});
}

TEST_CASE("Varint32FrameDecoder: Netty's testRegularDecode") {
  std::string b(2048, '\1');
  b[0] = static_cast<char>(-2);  // 0xFE 0x0F: 126 + 15 * 128 = 2046
  b[1] = 15;
  DecoderRunner<Varint32FrameDecoder> run;
  run.feed(b.substr(0, 1));
  CHECK(run.messages().empty());
  run.feed(b.substr(1, 126));
  CHECK(run.messages().empty());
  run.feed(b.substr(127, 600));
  CHECK(run.messages().empty());
  run.feed(b.substr(727));
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == b.substr(2));
}

TEST_CASE("Varint32FrameDecoder: varints of 1 to 5 bytes") {
  // Small lengths: real frames, every split.
  for (std::uint64_t v : {0, 1, 127, 128, 300}) {
    CAPTURE(v);
    const std::string payload(v, 'p');
    checkAllSplits(maker(), varint(v) + payload + varint(1) + "z", Transcript{payload, "z"});
  }
  // 2^14 - 1, 2^14 and 2^21 - 1: real frames, fed in a few pieces.
  for (std::uint64_t v : {16383, 16384, (1 << 21) - 1}) {
    CAPTURE(v);
    const std::string wire = varint(v) + std::string(v, 'q');
    for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
      DecoderRunner<Varint32FrameDecoder> run(Varint32FrameDecoder::kDefaultMaxFrameLength, c);
      run.feedInChunks(wire, 4096 + 3);
      REQUIRE(run.messages().size() == 1);
      CHECK(readableBytes(run.messages()[0]) == v);
      CHECK(run.decoder().bytesConsumed() == wire.size());
    }
  }
  // Larger lengths: the value read is the one reported by a too-long error (limit 1000).
  struct Case {
    std::uint64_t value;
    std::size_t bytes;
  };
  for (const Case& c :
       {Case{(1 << 21), 4}, Case{(1 << 28) - 1, 4}, Case{(1 << 28), 5}, Case{0x7FFFFFFF, 5}}) {
    CAPTURE(c.value);
    const std::string v = varint(c.value);
    REQUIRE(v.size() == c.bytes);
    checkAllSplits(maker(1000), v + "abc" + varint(2) + "ok",
                   Transcript{"!TooLong@0=" + std::to_string(c.value) + "/1000"});
  }
  // The varint boundaries.
  CHECK(varint(127).size() == 1);
  CHECK(varint(128).size() == 2);
  CHECK(varint(16383).size() == 2);
  CHECK(varint(16384).size() == 3);
  CHECK(varint((1 << 21) - 1).size() == 3);
}

TEST_CASE("Varint32FrameDecoder: an empty payload is an empty frame") {
  checkAllSplits(maker(), varint(0) + varint(0) + varint(2) + "ab", Transcript{"", "", "ab"});
}

TEST_CASE("Varint32FrameDecoder: a varint longer than 5 bytes is corrupted; 5 bytes skipped") {
  // Six bytes: the 6th (0x01) becomes the next varint, with "x" as its payload.
  const std::string input = bin({0x80, 0x80, 0x80, 0x80, 0x80, 0x01}) + "x" + varint(2) + "ok";
  checkAllSplits(maker(), input, Transcript{"!Corrupted@0", "x", "ok"});
  DecoderRunner<Varint32FrameDecoder> run;
  run.feed(bin({0xFF, 0xFF, 0xFF, 0xFF}));
  CHECK(run.errors().empty());  // 4 bytes with the continuation bit: still incomplete
  run.feed(bin({0xFF}));
  REQUIRE(run.errors().size() == 1);
  CHECK(run.decoder().actualReadableBytes() == 0);
  CHECK_THROWS_WITH_AS(run.rethrowError(0),
                       "CorruptedFrameError: malformed varint32 (more than 5 bytes) at stream "
                       "offset 0",
                       CorruptedFrameError);
}

TEST_CASE("Varint32FrameDecoder: lengths >= 2^31 are corrupted; the varint is skipped") {
  const std::string good = varint(2) + "ok";
  // 2^31 (negative as int32), 2^32 - 1, and 0x80 0x80 0x80 0x80 0x10 = 2^32 (Netty reads it as 0).
  checkAllSplits(maker(),
                 good + varint(1ULL << 31) + good + varint(0xFFFFFFFF) + good +
                     bin({0x80, 0x80, 0x80, 0x80, 0x10}) + good,
                 Transcript{"ok", "!Corrupted@3=2147483648/2147483647", "ok",
                            "!Corrupted@11=4294967295/2147483647", "ok",
                            "!Corrupted@19=4294967296/2147483647", "ok"});
  // Even when maxFrameLength is above INT32_MAX.
  checkAllSplits(maker(SIZE_MAX), varint(1ULL << 31) + good,
                 Transcript{"!Corrupted@0=2147483648/2147483647", "ok"});
  checkAllSplits(maker(SIZE_MAX), bin({0x80, 0x80, 0x80, 0x80, 0x80, 0x00}),
                 Transcript{"!Corrupted@0", ""});
}

TEST_CASE("Varint32FrameDecoder: oversize frames are skipped as they stream in, then recovery") {
  const std::string input = varint(3) + "abc" + varint(5) + "12345" + varint(4) + "wxyz";
  checkAllSplits(maker(4), input, Transcript{"abc", "!TooLong@4=5/4", "wxyz"});
  // The error comes at once, with the varint; the payload is skipped as it arrives.
  DecoderRunner<Varint32FrameDecoder> run(4);
  run.feed(varint(300) + "ab");
  REQUIRE(run.errors().size() == 1);
  CHECK(run.decoder().isDiscarding());
  CHECK(run.decoder().actualReadableBytes() == 0);
  run.feed(std::string(200, '.'));
  CHECK(run.decoder().actualReadableBytes() == 0);
  run.feed(std::string(98, '.') + varint(1) + "z");
  CHECK_FALSE(run.decoder().isDiscarding());
  CHECK(run.errors().size() == 1);
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "z");
  CHECK_THROWS_WITH_AS(run.rethrowError(0),
                       "TooLongFrameError: frame length 300 exceeds maxFrameLength 4 at stream "
                       "offset 0",
                       TooLongFrameError);
  // A huge declared length with junk streamed in 64 KiB reads: nothing is buffered.
  DecoderRunner<Varint32FrameDecoder> big(1 << 20, Cumulator::Composite);
  big.feed(varint(0x7FFFFFFF));
  ByteBuf junk = ByteBufAllocator::defaultAllocator().buffer(64 * 1024);
  junk.writeZero(64 * 1024);
  std::uint64_t fed = 0;
  while (0x7FFFFFFF - fed >= 64 * 1024) {
    big.feed(junk.retainedSlice());
    fed += 64 * 1024;
    if (big.decoder().actualReadableBytes() != 0) break;
  }
  CHECK(big.decoder().actualReadableBytes() == 0);
  big.feed(std::string(0x7FFFFFFF - fed, '.') + varint(2) + "ok");
  REQUIRE(big.messages().size() == 1);
  CHECK(readableBytesToString(big.messages()[0]) == "ok");
}

TEST_CASE("Varint32FrameDecoder: incomplete input waits; a partial frame is dropped at the end") {
  DecoderRunner<Varint32FrameDecoder> run;
  run.feed(bin({0xAC}));  // first byte of 300
  CHECK(run.decoder().actualReadableBytes() == 1);
  run.feed(bin({0x02}) + "abc");
  CHECK(run.messages().empty());
  CHECK(run.decoder().actualReadableBytes() == 5);
  run.finish();
  CHECK(run.messages().empty());
  CHECK(run.errors().empty());
  CHECK(run.decoder().bytesDropped() == 5);
}

TEST_CASE("Varint32FrameDecoder: frames are retained slices of the input") {
  DecoderRunner<Varint32FrameDecoder> run;
  ByteBuf in = Unpooled::copiedBuffer(std::string_view(varint(3) + "abc" + varint(2) + "de"));
  const std::byte* base = in.data();
  run.feed(std::move(in));
  REQUIRE(run.messages().size() == 2);
  CHECK(std::get<ByteBuf>(run.messages()[0]).data() == base + 1);
  CHECK(std::get<ByteBuf>(run.messages()[1]).data() == base + 5);
}

TEST_CASE("Varint32FrameDecoder: parameters") {
  CHECK_THROWS_WITH_AS(Varint32FrameDecoder(0), "maxFrameLength: 0 (expected: > 0)",
                       IllegalArgumentError);
  CHECK(Varint32FrameDecoder().maxFrameLength() == 64 * 1024 * 1024);
  CHECK(Varint32FrameDecoder(7).maxFrameLength() == 7);
  CHECK_FALSE(Varint32FrameDecoder().isDiscarding());
}
