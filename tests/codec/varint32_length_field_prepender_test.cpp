#include <netbuf/codec/varint32_length_field_prepender.hpp>

#include <cstdint>
#include <initializer_list>
#include <netbuf/codec/varint32_frame_decoder.hpp>
#include <string>
#include <vector>

#include "support/split_checks.hpp"
#include "support/test_buffers.hpp"

using namespace netbuf;
using netbuf::test::bin;
using netbuf::test::checkAllSplits;
using netbuf::test::frame;
using netbuf::test::Transcript;

namespace {

std::string joined(const std::vector<AnyByteBuf>& out) {
  std::string s;
  for (const auto& b : out) s += readableBytesToString(b);
  return s;
}

std::string headerOf(std::uint32_t v) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(8);
  Varint32LengthFieldPrepender::writeRawVarint32(b, v);
  return std::string(b.readableStringView());
}

/// Netty's ProtobufVarint32LengthFieldPrependerTest pattern: num bytes of 1 after the header.
void checkEncode(std::size_t num, const std::string& expectedHeader) {
  CAPTURE(num);
  CHECK(Varint32LengthFieldPrepender::computeRawVarint32Size(static_cast<std::uint32_t>(num)) ==
        expectedHeader.size());
  Varint32LengthFieldPrepender p;
  std::vector<AnyByteBuf> out;
  p.write(frame(std::string(num, '\1')), out);
  REQUIRE(out.size() == 2);
  CHECK(readableBytesToString(out[0]) == expectedHeader);
  CHECK(readableBytes(out[1]) == num);
}

}  // namespace

TEST_CASE("Varint32LengthFieldPrepender: Netty's tests") {
  checkEncode(4, bin({4}));                              // testTinyEncode
  checkEncode(10, bin({0x0A}));                          // testSize1Varint
  checkEncode(266, bin({0x8A, 0x02}));                   // testSize2Varint
  checkEncode(0x4000, bin({0x80, 0x80, 0x01}));          // testSize3Varint
  checkEncode(0xBBFFFF, bin({0xFF, 0xFF, 0xEF, 0x05}));  // testSize4Varint
  checkEncode(2046, bin({0xFE, 0x0F}));                  // testRegularDecode's frame
  // testSize5Varint (0xBBFFFFFF): too large for a payload here; the varint itself.
  CHECK(Varint32LengthFieldPrepender::computeRawVarint32Size(0xBBFFFFFF) == 5);
  CHECK(headerOf(0xBBFFFFFF) == bin({0xFF, 0xFF, 0xFF, 0xDF, 0x0B}));
}

TEST_CASE("Varint32LengthFieldPrepender: computeRawVarint32Size at every boundary") {
  struct Case {
    std::uint32_t value;
    std::size_t size;
  };
  for (const Case& c : {Case{0, 1}, Case{127, 1}, Case{128, 2}, Case{16383, 2}, Case{16384, 3},
                        Case{(1U << 21) - 1, 3}, Case{1U << 21, 4}, Case{(1U << 28) - 1, 4},
                        Case{1U << 28, 5}, Case{0x7FFFFFFF, 5}, Case{0xFFFFFFFF, 5}}) {
    CAPTURE(c.value);
    CHECK(Varint32LengthFieldPrepender::computeRawVarint32Size(c.value) == c.size);
    const std::string h = headerOf(c.value);
    CHECK(h.size() == c.size);
    // Decode it back by hand: 7 bits per byte, least significant first, the last without 0x80.
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
      const auto b = static_cast<unsigned char>(h[i]);
      CHECK(((b & 0x80) != 0) == (i + 1 < h.size()));
      v |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
    }
    CHECK(v == c.value);
  }
  static_assert(Varint32LengthFieldPrepender::computeRawVarint32Size(300) == 2);
}

TEST_CASE("Varint32LengthFieldPrepender: payloads above INT32_MAX are EncoderErrors") {
  Varint32LengthFieldPrepender p;
  CHECK(p.encodeHeader(0x7FFFFFFF).readableBytes() == 5);
  try {
    (void)p.encodeHeader(std::size_t{0x80000000});
    FAIL("no error");
  } catch (const EncoderError& e) {
    CHECK(e.value() == 0x80000000);
    CHECK(e.limit() == 0x7FFFFFFF);
    CHECK(e.offset() == CodecError::kNone);
    CHECK(std::string(e.what()) ==
          "EncoderError: payload length 2147483648 exceeds the varint32 limit 2147483647");
  }
}

TEST_CASE("Varint32LengthFieldPrepender: the payload is moved through, not copied") {
  Varint32LengthFieldPrepender p;
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(16);
  b.writeBytes(std::string_view("payload"));
  const std::byte* data = b.data();
  std::vector<AnyByteBuf> out;
  p.write(AnyByteBuf(std::in_place_type<ByteBuf>, std::move(b)), out);
  REQUIRE(out.size() == 2);
  CHECK(std::get<ByteBuf>(out[1]).data() == data);
  // A composite stays a composite.
  CompositeByteBuf c;
  for (std::string_view part : {"ab", "cd"}) {
    ByteBuf piece = ByteBufAllocator::defaultAllocator().buffer(2);
    piece.writeBytes(part);
    c.addComponent(true, std::move(piece));
  }
  p.write(AnyByteBuf(std::move(c)), out);
  REQUIRE(out.size() == 4);
  CHECK(isComposite(out[3]));
  CHECK(joined(out) == bin({7}) + "payload" + bin({4}) + "abcd");
}

TEST_CASE("Varint32LengthFieldPrepender: round trip through Varint32FrameDecoder") {
  const std::vector<std::string> frames = {
      "", "a", std::string(127, 'b'), std::string(128, 'c'), std::string(300, 'd'), "end"};
  Varint32LengthFieldPrepender p;
  std::vector<AnyByteBuf> out;
  for (const auto& f : frames) p.write(frame(f), out);
  const std::string wire = joined(out);
  CHECK(wire.size() == 1 + 0 + 1 + 1 + 1 + 127 + 2 + 128 + 2 + 300 + 1 + 3);
  checkAllSplits([](Cumulator c) { return Varint32FrameDecoder(1024, c); }, wire,
                 Transcript(frames.begin(), frames.end()));
  // A larger frame, through a few reads.
  std::vector<AnyByteBuf> big;
  p.write(frame(std::string(100000, 'x')), big);
  DecoderRunner<Varint32FrameDecoder> run;
  for (auto& b : big) run.feed(std::move(b));
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytes(run.messages()[0]) == 100000);
}
