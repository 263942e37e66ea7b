#include <netbuf/codec/length_field_prepender.hpp>

#include <cstdint>
#include <initializer_list>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
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

/// Encodes text and returns the two buffers' bytes: header, payload.
std::vector<std::string> encodeText(LengthFieldPrepender& p, std::string_view text) {
  std::vector<AnyByteBuf> out;
  p.write(frame(text), out);
  std::vector<std::string> parts;
  for (const auto& b : out) parts.push_back(readableBytesToString(b));
  return parts;
}

std::string joined(const std::vector<AnyByteBuf>& out) {
  std::string s;
  for (const auto& b : out) s += readableBytesToString(b);
  return s;
}

}  // namespace

TEST_CASE("LengthFieldPrepender: every field size, both byte orders") {
  struct Case {
    std::size_t n;
    std::string big, little;
  };
  const std::vector<Case> cases = {
      {1, bin({3}), bin({3})},
      {2, bin({0, 3}), bin({3, 0})},
      {3, bin({0, 0, 3}), bin({3, 0, 0})},
      {4, bin({0, 0, 0, 3}), bin({3, 0, 0, 0})},
      {8, bin({0, 0, 0, 0, 0, 0, 0, 3}), bin({3, 0, 0, 0, 0, 0, 0, 0})},
  };
  for (const Case& c : cases) {
    CAPTURE(c.n);
    LengthFieldPrepender big(c.n);
    CHECK(encodeText(big, "abc") == std::vector<std::string>{c.big, "abc"});
    LengthFieldPrepender little(c.n, 0, false, ByteOrder::little);
    CHECK(encodeText(little, "abc") == std::vector<std::string>{c.little, "abc"});
  }
  // Multi-byte values: the field's bytes in order.
  LengthFieldPrepender three(3);
  CHECK(encodeText(three, std::string(0x010203, 'x'))[0] == bin({1, 2, 3}));
  LengthFieldPrepender threeLE(3, 0, false, ByteOrder::little);
  CHECK(encodeText(threeLE, std::string(0x010203, 'x'))[0] == bin({3, 2, 1}));
}

TEST_CASE("LengthFieldPrepender: Netty's tests") {
  // testPrependLength
  LengthFieldPrepender plain(4);
  CHECK(encodeText(plain, "A") == std::vector<std::string>{bin({0, 0, 0, 1}), "A"});
  // testPrependLengthIncludesLengthFieldLength: LengthFieldPrepender(4, true)
  LengthFieldPrepender includes(4, true);
  CHECK(includes.lengthIncludesLengthFieldLength());
  CHECK(includes.lengthAdjustment() == 0);
  CHECK(encodeText(includes, "A") == std::vector<std::string>{bin({0, 0, 0, 5}), "A"});
  // testPrependAdjustedLength: LengthFieldPrepender(4, -1)
  LengthFieldPrepender adjusted(4, -1);
  CHECK(encodeText(adjusted, "A") == std::vector<std::string>{bin({0, 0, 0, 0}), "A"});
  // testAdjustedLengthLessThanZero: LengthFieldPrepender(4, -2)
  LengthFieldPrepender negative(4, -2);
  std::vector<AnyByteBuf> out;
  CHECK_THROWS_AS(negative.write(frame("A"), out), EncoderError);
  CHECK(out.empty());
  // testPrependLengthInLittleEndian
  LengthFieldPrepender little(4, 0, false, ByteOrder::little);
  CHECK(encodeText(little, "A") == std::vector<std::string>{bin({1, 0, 0, 0}), "A"});
}

TEST_CASE("LengthFieldPrepender: includes-length flag and adjustments combine") {
  LengthFieldPrepender p(2, 3, true);
  CHECK(encodeText(p, "abcd") == std::vector<std::string>{bin({0, 4 + 3 + 2}), "abcd"});
  LengthFieldPrepender q(2, -2, true);  // the field counts the header: -2 + 2 cancel
  CHECK(encodeText(q, "") == std::vector<std::string>{bin({0, 0}), ""});
}

TEST_CASE("LengthFieldPrepender: lengths that do not fit are EncoderErrors, nothing appended") {
  struct Case {
    std::size_t n;
    std::uint64_t max;
  };
  for (const Case& c : {Case{1, 0xFF}, Case{2, 0xFFFF}, Case{3, 0xFFFFFF}, Case{4, 0xFFFFFFFF}}) {
    CAPTURE(c.n);
    LengthFieldPrepender p(c.n);
    CHECK(p.maxFieldValue() == c.max);
    // The largest length fits; one more does not.
    ByteBuf h = p.encodeHeader(static_cast<std::size_t>(c.max));
    CHECK(h.readableBytes() == c.n);
    CHECK(h.getUnsignedByte(0) == 0xFF);
    try {
      (void)p.encodeHeader(static_cast<std::size_t>(c.max) + 1);
      FAIL("no error");
    } catch (const EncoderError& e) {
      CHECK(e.value() == c.max + 1);
      CHECK(e.limit() == c.max);
      CHECK(e.offset() == CodecError::kNone);
    }
    // Through the adjustment, with a real payload.
    LengthFieldPrepender adj(c.n, static_cast<std::int64_t>(c.max));
    std::vector<AnyByteBuf> out;
    try {
      adj.write(frame("x"), out);
      FAIL("no error");
    } catch (const EncoderError& e) {
      CHECK(e.value() == c.max + 1);
      CHECK(e.limit() == c.max);
    }
    CHECK(out.empty());
  }
  LengthFieldPrepender one(1);
  CHECK_THROWS_WITH_AS(one.encodeHeader(256),
                       "EncoderError: length 256 (payload length 256 + lengthAdjustment 0) does "
                       "not fit a 1-byte length field (max 255)",
                       EncoderError);
  // Negative: value kNone, the message has the signed length.
  LengthFieldPrepender neg(2, -5);
  try {
    (void)neg.encodeHeader(2);
    FAIL("no error");
  } catch (const EncoderError& e) {
    CHECK(e.value() == CodecError::kNone);
    CHECK(e.limit() == 0xFFFF);
    CHECK(std::string(e.what()) ==
          "EncoderError: length -3 (payload length 2 + lengthAdjustment -5) is negative");
  }
  // 8-byte fields: an int64 overflow is an error too, not a wrap-around.
  LengthFieldPrepender eight(8, INT64_MAX);
  CHECK(eight.encodeHeader(0).getLong(0) == INT64_MAX);
  CHECK_THROWS_AS(eight.encodeHeader(1), EncoderError);
  LengthFieldPrepender eightIncl(8, INT64_MAX - 8, true);
  CHECK(eightIncl.encodeHeader(0).getLong(0) == INT64_MAX);
  CHECK_THROWS_AS(eightIncl.encodeHeader(1), EncoderError);
  CHECK_THROWS_AS(LengthFieldPrepender(8).encodeHeader(SIZE_MAX), EncoderError);
}

TEST_CASE("LengthFieldPrepender: the payload is moved through, not copied") {
  LengthFieldPrepender p(2);
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(16);
  b.writeBytes(std::string_view("payload"));
  const std::byte* data = b.data();
  std::vector<AnyByteBuf> out;
  p.write(AnyByteBuf(std::in_place_type<ByteBuf>, std::move(b)), out);
  REQUIRE(out.size() == 2);
  const ByteBuf& moved = std::get<ByteBuf>(out[1]);
  CHECK(moved.data() == data);
  CHECK(moved.refCnt() == 1);
  CHECK(readableBytesToString(out[0]) == bin({0, 7}));
  // Appends after what out already holds.
  p.write(frame("z"), out);
  CHECK(out.size() == 4);
  CHECK(joined(out) == bin({0, 7}) + "payload" + bin({0, 1}) + "z");
}

TEST_CASE("LengthFieldPrepender: a composite payload passes through as a composite") {
  CompositeByteBuf c;
  for (std::string_view part : {"hello, ", "world"}) {
    ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(part.size());
    b.writeBytes(part);
    c.addComponent(true, std::move(b));
  }
  LengthFieldPrepender p(4);
  std::vector<AnyByteBuf> out;
  p.write(AnyByteBuf(std::move(c)), out);
  REQUIRE(out.size() == 2);
  REQUIRE(isComposite(out[1]));
  CHECK(std::get<CompositeByteBuf>(out[1]).numComponents() == 2);
  CHECK(joined(out) == bin({0, 0, 0, 12}) + "hello, world");
}

TEST_CASE("LengthFieldPrepender: round trip through LengthFieldBasedFrameDecoder") {
  const std::vector<std::string> frames = {"", "a", "hello", std::string(300, 'x'), "end"};
  for (ByteOrder order : {ByteOrder::big, ByteOrder::little}) {
    for (std::size_t n : {1, 2, 3, 4, 8}) {
      for (bool includes : {false, true}) {
        CAPTURE(n);
        CAPTURE(includes);
        LengthFieldPrepender p(n, 0, includes, order);
        std::vector<AnyByteBuf> out;
        Transcript expected;
        for (const auto& f : frames) {
          if (n == 1 && f.size() > 200) continue;  // does not fit one byte
          p.write(frame(f), out);
          expected.push_back(f);
        }
        const std::string wire = joined(out);
        // The decoder's lengthAdjustment undoes the prepender's choice of what the length counts.
        const std::int64_t decoderAdjustment = includes ? -static_cast<std::int64_t>(n) : 0;
        checkAllSplits(
            [&](Cumulator c) {
              return LengthFieldBasedFrameDecoder(order, 1024, 0, n, decoderAdjustment, n, true, c);
            },
            wire, expected);
      }
    }
  }
  // With an adjustment on both sides.
  LengthFieldPrepender p(2, 3);
  std::vector<AnyByteBuf> out;
  p.write(frame("abc"), out);
  p.write(frame("de"), out);
  checkAllSplits(
      [](Cumulator c) {
        return LengthFieldBasedFrameDecoder(ByteOrder::big, 64, 0, 2, -3, 2, true, c);
      },
      joined(out), Transcript{"abc", "de"});
}

TEST_CASE("LengthFieldPrepender: parameters are validated and exposed") {
  for (std::size_t bad : {0, 5, 6, 7, 9}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(LengthFieldPrepender{bad}, IllegalArgumentError);
  }
  CHECK_THROWS_WITH_AS(LengthFieldPrepender(5), "lengthFieldLength: 5 (expected: 1, 2, 3, 4, or 8)",
                       IllegalArgumentError);
  LengthFieldPrepender p(3, -4, true, ByteOrder::little);
  CHECK(p.lengthFieldLength() == 3);
  CHECK(p.lengthAdjustment() == -4);
  CHECK(p.lengthIncludesLengthFieldLength());
  CHECK(p.byteOrder() == ByteOrder::little);
  CHECK(p.maxFieldValue() == 0xFFFFFF);
  CHECK(LengthFieldPrepender(8).maxFieldValue() == static_cast<std::uint64_t>(INT64_MAX));
  CHECK(LengthFieldPrepender(2).byteOrder() == ByteOrder::big);
}
