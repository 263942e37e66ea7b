#include <netbuf/codec/length_field_based_frame_decoder.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
#include <string>

#include "support/split_checks.hpp"
#include "support/test_buffers.hpp"

using namespace netbuf;
using netbuf::test::bin;
using netbuf::test::checkAllSplits;
using netbuf::test::describeError;
using netbuf::test::Transcript;
using netbuf::test::transcriptOf;

namespace {

constexpr std::uint64_t kInt64Max = static_cast<std::uint64_t>(INT64_MAX);

/// value as an n-byte field in the given order.
std::string field(std::size_t n, std::uint64_t value, ByteOrder order = ByteOrder::big) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t shift = order == ByteOrder::big ? 8 * (n - 1 - i) : 8 * i;
    s[i] = static_cast<char>((value >> shift) & 0xFF);
  }
  return s;
}

/// A make(Cumulator) function for checkAllSplits.
auto maker(ByteOrder order, std::size_t maxFrameLength, std::size_t offset, std::size_t length,
           std::int64_t adjustment, std::size_t strip, bool failFast = true) {
  return [=](Cumulator c) {
    return LengthFieldBasedFrameDecoder(order, maxFrameLength, offset, length, adjustment, strip,
                                        failFast, c);
  };
}

auto bigEndian(std::size_t maxFrameLength, std::size_t offset, std::size_t length,
               std::int64_t adjustment = 0, std::size_t strip = 0, bool failFast = true) {
  return maker(ByteOrder::big, maxFrameLength, offset, length, adjustment, strip, failFast);
}

const std::string kHello = "HELLO, WORLD";

}  // namespace

// ---------------------------------------------------------------- Netty's javadoc examples

TEST_CASE("LengthFieldBasedFrameDecoder: 2 bytes length field at offset 0, do not strip header") {
  const std::string frame = bin({0x00, 0x0C}) + kHello;
  checkAllSplits(bigEndian(1024, 0, 2), frame, Transcript{frame});
  checkAllSplits(bigEndian(1024, 0, 2), frame + frame, Transcript{frame, frame});
}

TEST_CASE("LengthFieldBasedFrameDecoder: 2 bytes length field at offset 0, strip header") {
  const std::string frame = bin({0x00, 0x0C}) + kHello;
  checkAllSplits(bigEndian(1024, 0, 2, 0, 2), frame + frame, Transcript{kHello, kHello});
}

TEST_CASE("LengthFieldBasedFrameDecoder: length field that counts the whole frame (adjust -2)") {
  const std::string frame = bin({0x00, 0x0E}) + kHello;
  checkAllSplits(bigEndian(1024, 0, 2, -2, 0), frame + frame, Transcript{frame, frame});
}

TEST_CASE("LengthFieldBasedFrameDecoder: 3 bytes length field at the end of a 5 bytes header") {
  const std::string frame = bin({0xCA, 0xFE, 0x00, 0x00, 0x0C}) + kHello;
  checkAllSplits(bigEndian(1024, 2, 3), frame + frame, Transcript{frame, frame});
}

TEST_CASE("LengthFieldBasedFrameDecoder: 3 bytes length field at the start of a 5 bytes header") {
  const std::string frame = bin({0x00, 0x00, 0x0C, 0xCA, 0xFE}) + kHello;
  checkAllSplits(bigEndian(1024, 0, 3, 2, 0), frame + frame, Transcript{frame, frame});
}

TEST_CASE("LengthFieldBasedFrameDecoder: HDR1 + length + HDR2, strip HDR1 and the length") {
  const std::string frame = bin({0xCA, 0x00, 0x0C, 0xFE}) + kHello;
  const std::string expected = bin({0xFE}) + kHello;
  checkAllSplits(bigEndian(1024, 1, 2, 1, 3), frame + frame, Transcript{expected, expected});
}

TEST_CASE("LengthFieldBasedFrameDecoder: HDR1 + length of the whole message + HDR2, strip 3") {
  const std::string frame = bin({0xCA, 0x00, 0x10, 0xFE}) + kHello;
  const std::string expected = bin({0xFE}) + kHello;
  checkAllSplits(bigEndian(1024, 1, 2, -3, 3), frame + frame, Transcript{expected, expected});
}

// ---------------------------------------------------------------- field sizes and byte orders

TEST_CASE("LengthFieldBasedFrameDecoder: every length field size, both byte orders") {
  for (ByteOrder order : {ByteOrder::big, ByteOrder::little}) {
    for (std::size_t n : {1, 2, 3, 4, 8}) {
      CAPTURE(n);
      CAPTURE(order == ByteOrder::big);
      const std::string input =
          field(n, 3, order) + "abc" + field(n, 0, order) + field(n, 5, order) + "hello";
      checkAllSplits(maker(order, 64, 0, n, 0, n), input, Transcript{"abc", "", "hello"});
      // Without stripping, the header is part of the frame.
      checkAllSplits(maker(order, 64, 0, n, 0, 0), field(n, 2, order) + "xy",
                     Transcript{field(n, 2, order) + "xy"});
    }
  }
}

TEST_CASE("LengthFieldBasedFrameDecoder: little-endian fields are read least significant first") {
  // 0x0102 little-endian is 258 bytes; big-endian it would be 513.
  const std::string payload(258, 'p');
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::little, 1024, 0, 2, 0, 2);
  run.feed(bin({0x02, 0x01}) + payload);
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == payload);
  CHECK(run.decoder().byteOrder() == ByteOrder::little);
  // 3-byte and 8-byte little-endian fields with high bytes set.
  DecoderRunner<LengthFieldBasedFrameDecoder> three(ByteOrder::little, 1 << 20, 0, 3, 0, 3, true);
  three.feed(field(3, 0x010203, ByteOrder::little) + std::string(0x010203, 'q'));
  REQUIRE(three.messages().size() == 1);
  CHECK(readableBytes(three.messages()[0]) == 0x010203);
}

TEST_CASE("LengthFieldBasedFrameDecoder: unsigned 1..4-byte fields use their full range") {
  // 0xFF and 0xFFFF are lengths, not -1.
  checkAllSplits(bigEndian(1024, 0, 1, 0, 1), bin({0xFF}) + std::string(255, 'z'),
                 Transcript{std::string(255, 'z')});
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 1 << 20, 0, 4, 0, 4, true);
  run.feed(field(4, 0x8000, ByteOrder::big) + std::string(0x8000, 'w'));
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytes(run.messages()[0]) == 0x8000);
  // A 4-byte field with its top bit set is a (too long) positive length, not a negative one.
  DecoderRunner<LengthFieldBasedFrameDecoder> top(ByteOrder::big, 1024, 0, 4, 0, 4, true);
  top.feed(field(4, 0x80000000));
  REQUIRE(top.errors().size() == 1);
  CHECK(describeError(top.errors()[0].error) == "!TooLong@0=2147483652/1024");
}

// ---------------------------------------------------------------- corrupted frames

TEST_CASE("LengthFieldBasedFrameDecoder: a negative 8-byte length field skips the header") {
  const std::string good = field(8, 2) + "ok";
  const std::string input = field(8, UINT64_MAX) + good + field(8, 1ULL << 63) + good;
  checkAllSplits(bigEndian(1024, 0, 8, 0, 8), input,
                 // The field's bits, 2^64 - 1, read as kNone ("-").
                 Transcript{"!Corrupted@0=-/9223372036854775807", "ok",
                            "!Corrupted@18=9223372036854775808/9223372036854775807", "ok"});
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 1024, 0, 8, 0, 8, true);
  run.feed(field(8, UINT64_MAX));
  REQUIRE(run.errors().size() == 1);
  CHECK_THROWS_WITH_AS(run.rethrowError(0),
                       "CorruptedFrameError: negative pre-adjustment length field -1 at stream "
                       "offset 0",
                       CorruptedFrameError);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("LengthFieldBasedFrameDecoder: adjusted length shorter than the header") {
  // 2-byte field, adjustment -3: a field of 1 gives frame length 0 < lengthFieldEndOffset 2.
  const std::string good = field(2, 6) + "abc";  // 6 - 3 + 2 = 5 bytes, header included
  checkAllSplits(bigEndian(1024, 0, 2, -3, 0), field(2, 1) + good + field(2, 2) + good,
                 Transcript{"!Corrupted@0=0/2", good, "!Corrupted@7=1/2", good});
  // A negative adjusted length reports value kNone; the message has the signed value.
  checkAllSplits(bigEndian(1024, 0, 2, -3, 0), field(2, 0) + good,
                 Transcript{"!Corrupted@0=-/2", good});
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 1024, 0, 2, -3, 0, true);
  run.feed(field(2, 0));
  REQUIRE(run.errors().size() == 1);
  CHECK_THROWS_WITH_AS(run.rethrowError(0),
                       "CorruptedFrameError: adjusted frame length -1 is less than "
                       "lengthFieldEndOffset 2 at stream offset 0",
                       CorruptedFrameError);
}

TEST_CASE("LengthFieldBasedFrameDecoder: initialBytesToStrip beyond the frame skips the frame") {
  // strip 5, 2-byte field: a field of 1 makes a 3-byte frame, shorter than the strip. The error
  // comes once the whole frame is buffered, and the whole frame is skipped.
  const std::string good = field(2, 4) + "wxyz";  // 6 bytes, "z" after stripping 5
  const std::string input = good + field(2, 1) + "a" + good;
  checkAllSplits(bigEndian(1024, 0, 2, 0, 5), input, Transcript{"z", "!Corrupted@6=5/3", "z"});
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 1024, 0, 2, 0, 5, true);
  run.feed(field(2, 1));
  CHECK(run.errors().empty());  // waits for the frame
  run.feed("a");
  REQUIRE(run.errors().size() == 1);
  CHECK(run.decoder().actualReadableBytes() == 0);
  CHECK_THROWS_WITH_AS(run.rethrowError(0),
                       "CorruptedFrameError: initialBytesToStrip 5 exceeds frame length 3 at "
                       "stream offset 0",
                       CorruptedFrameError);
}

TEST_CASE("LengthFieldBasedFrameDecoder: a huge 8-byte length plus the adjustment overflows") {
  const std::string good = field(8, 2) + "ok";
  // INT64_MAX - 1 + 10 + 8 overflows; the largest field that does not is INT64_MAX - 18.
  checkAllSplits(bigEndian(1024, 0, 8, 10, 8), field(8, kInt64Max - 1) + field(8, 0) + "0123456789",
                 Transcript{"!Corrupted@0=9223372036854775806/9223372036854775789", "0123456789"});
  checkAllSplits(bigEndian(1024, 0, 8, 0, 8), field(8, kInt64Max) + good,
                 Transcript{"!Corrupted@0=9223372036854775807/9223372036854775799", "ok"});
  // Just below the overflow: a too-long frame, not a corrupted one.
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 1024, 0, 8, 0, 8, true);
  run.feed(field(8, kInt64Max - 8));
  REQUIRE(run.errors().size() == 1);
  CHECK(describeError(run.errors()[0].error) == "!TooLong@0=9223372036854775807/1024");
  CHECK(run.decoder().isDiscarding());
  // Extreme adjustments: nothing is valid, and nothing crashes.
  checkAllSplits(bigEndian(1024, 0, 8, INT64_MIN, 8), field(8, 5) + "abcde",
                 Transcript{"!Corrupted@0=-/8"});
  checkAllSplits(bigEndian(1024, 0, 8, INT64_MAX, 8), field(8, 0), Transcript{"!Corrupted@0=0/0"});
}

// ---------------------------------------------------------------- too-long frames

TEST_CASE("LengthFieldBasedFrameDecoder: too-long frames are reported and skipped, either mode") {
  // maxFrameLength 10 counts the header: a 2-byte field of 10 makes a 12-byte frame.
  const std::string input = field(2, 2) + "ab" + field(2, 10) + "0123456789" + field(2, 2) + "xy";
  for (bool failFast : {true, false}) {
    CAPTURE(failFast);
    checkAllSplits(bigEndian(10, 0, 2, 0, 2, failFast), input,
                   Transcript{"ab", "!TooLong@4=12/10", "xy"});
  }
  // The limit is inclusive: a 10-byte frame is fine.
  checkAllSplits(bigEndian(10, 0, 2, 0, 2), field(2, 8) + "01234567", Transcript{"01234567"});
}

TEST_CASE("LengthFieldBasedFrameDecoder: failFast reports at the header, otherwise at the end") {
  for (bool failFast : {true, false}) {
    CAPTURE(failFast);
    DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 10, 0, 2, 0, 2, failFast);
    run.feed(field(2, 2) + "ab" + field(2, 10) + "012");  // the bad frame's header and 3 bytes
    CHECK(run.messages().size() == 1);
    CHECK(run.errors().size() == (failFast ? 1 : 0));
    CHECK(run.decoder().isDiscarding());
    CHECK(run.decoder().actualReadableBytes() == 0);  // skipped, not buffered
    run.feed("3456");
    CHECK(run.errors().size() == (failFast ? 1 : 0));
    CHECK(run.decoder().actualReadableBytes() == 0);
    run.feed("789" + field(2, 2) + "xy");  // the bad frame ends here, then a good one
    REQUIRE(run.errors().size() == 1);
    CHECK(run.errors()[0].messagesBefore == 1);
    CHECK_FALSE(run.decoder().isDiscarding());
    REQUIRE(run.messages().size() == 2);
    CHECK(readableBytesToString(run.messages()[1]) == "xy");
    const auto& e = run.errors()[0];
    CHECK(describeError(e.error) == "!TooLong@4=12/10");
    CHECK_THROWS_WITH_AS(run.rethrowError(0),
                         "TooLongFrameError: frame length 12 exceeds maxFrameLength 10 at stream "
                         "offset 4",
                         TooLongFrameError);
  }
}

TEST_CASE("LengthFieldBasedFrameDecoder: a too-long frame already buffered is reported at once") {
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 10, 0, 2, 0, 2, false);
  run.feed(field(2, 10) + "0123456789" + field(2, 1) + "z");
  REQUIRE(run.errors().size() == 1);
  CHECK(run.errors()[0].messagesBefore == 0);
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "z");
  CHECK_FALSE(run.decoder().isDiscarding());
  // Exactly the frame buffered, failFast false: reported at once too.
  DecoderRunner<LengthFieldBasedFrameDecoder> exact(ByteOrder::big, 10, 0, 2, 0, 2, false);
  exact.feed(field(2, 10) + "0123456789");
  CHECK(exact.errors().size() == 1);
  CHECK_FALSE(exact.decoder().isDiscarding());
}

TEST_CASE("LengthFieldBasedFrameDecoder: errors in a row, and frames between them") {
  // lengthAdjustment -4 with a 2-byte field: frame length = field - 2, header included.
  const std::string input = field(2, 7) + "abc" +                       // good @0
                            field(2, 2) +                               // length 0 < 2 @5
                            field(2, 50) + std::string(46, '.') +       // 48 > 20 @7
                            field(2, 7) + "def" + field(2, 7) + "ghi";  // good @55, @60
  checkAllSplits(bigEndian(20, 0, 2, -4, 2), input,
                 Transcript{"abc", "!Corrupted@5=0/2", "!TooLong@7=48/20", "def", "ghi"});
  checkAllSplits(bigEndian(20, 0, 2, -4, 2, false), input,
                 Transcript{"abc", "!Corrupted@5=0/2", "!TooLong@7=48/20", "def", "ghi"});
}

TEST_CASE("LengthFieldBasedFrameDecoder: a 4 GiB length prefix streams through without buffering") {
  // 0xFFFFFFFF with a 4-byte field: a 0xFFFFFFFF + 4 byte frame, skipped as it streams in 64 KiB
  // reads; the good frame right after it is decoded. The junk is one buffer fed as slices, so the
  // 4 GiB cost no copying.
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    for (bool failFast : {true, false}) {
      CAPTURE(static_cast<int>(c));
      CAPTURE(failFast);
      DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 1 << 20, 0, 4, 0, 4, failFast,
                                                      c);
      constexpr std::size_t kChunk = 64 * 1024;
      constexpr std::uint64_t kFrame = 0xFFFFFFFFULL + 4;
      ByteBuf junk = ByteBufAllocator::defaultAllocator().buffer(kChunk);
      junk.writeZero(kChunk);
      ByteBuf first = ByteBufAllocator::defaultAllocator().buffer(kChunk);
      first.writeInt(-1);
      first.writeZero(kChunk - 4);
      run.feed(std::move(first));
      CHECK(run.errors().size() == (failFast ? 1 : 0));
      std::uint64_t fed = kChunk;
      while (kFrame - fed >= kChunk) {
        run.feed(junk.retainedSlice());
        fed += kChunk;
      }
      CHECK(run.maxBuffered() == 0);
      CHECK(run.decoder().isDiscarding());
      CHECK(run.errors().size() == (failFast ? 1 : 0));
      CHECK(run.messages().empty());
      const std::size_t tail = static_cast<std::size_t>(kFrame - fed);
      CHECK(tail == 3);
      run.feed(std::string(tail, '\0') + field(4, 4) + "good");
      REQUIRE(run.errors().size() == 1);
      CHECK(describeError(run.errors()[0].error) == "!TooLong@0=4294967299/1048576");
      REQUIRE(run.messages().size() == 1);
      CHECK(readableBytesToString(run.messages()[0]) == "good");
      CHECK(run.decoder().bytesConsumed() == kFrame + 8);
    }
  }
}

TEST_CASE("LengthFieldBasedFrameDecoder: a 0xFFFFFFFF prefix allocates nothing large") {
  PooledByteBufAllocator pool;
  {
    DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 1 << 20, 0, 4, 0, 4, true,
                                                    Cumulator::Merge, pool);
    const PoolStats before = pool.totalStats();
    for (int i = 0; i < 64; ++i) {  // the header, then 4 MiB of the frame in 64 KiB reads
      ByteBuf in = pool.buffer(64 * 1024);
      if (i == 0) {
        in.writeInt(-1);
        in.writeZero(64 * 1024 - 4);
      } else {
        in.writeZero(64 * 1024);
      }
      run.feed(std::move(in));
      const PoolStats s = pool.totalStats();
      CHECK(run.decoder().actualReadableBytes() == 0);
      CHECK(s.liveBuffers == 0);
      CHECK(s.hugeAllocations == before.hugeAllocations);
    }
    CHECK(pool.totalStats().allocations - before.allocations == 64);  // the inputs, nothing else
    REQUIRE(run.errors().size() == 1);
    CHECK(describeError(run.errors()[0].error) == "!TooLong@0=4294967299/1048576");
  }
}

// ---------------------------------------------------------------- zero copy, state, parameters

TEST_CASE("LengthFieldBasedFrameDecoder: frames are retained slices of the input") {
  DecoderRunner<LengthFieldBasedFrameDecoder> run(1024, 0, 2, 0, 2);
  ByteBuf in = Unpooled::copiedBuffer(std::string_view(field(2, 3) + "abc" + field(2, 2) + "de"));
  const std::byte* base = in.data();
  run.feed(std::move(in));
  REQUIRE(run.messages().size() == 2);
  CHECK(std::get<ByteBuf>(run.messages()[0]).data() == base + 2);
  CHECK(std::get<ByteBuf>(run.messages()[1]).data() == base + 7);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("LengthFieldBasedFrameDecoder: a partial frame waits and is dropped at end of stream") {
  DecoderRunner<LengthFieldBasedFrameDecoder> run(1024, 0, 2, 0, 2);
  run.feed(field(2, 5) + "ab");
  CHECK(run.messages().empty());
  CHECK(run.decoder().actualReadableBytes() == 4);
  run.feed("c");
  CHECK(run.messages().empty());
  run.finish();
  CHECK(run.messages().empty());
  CHECK(run.errors().empty());
  CHECK(run.decoder().bytesDropped() == 5);
}

TEST_CASE("LengthFieldBasedFrameDecoder: parameters are validated and exposed") {
  CHECK_THROWS_AS(LengthFieldBasedFrameDecoder(0, 0, 1), IllegalArgumentError);
  for (std::size_t bad : {0, 5, 6, 7, 9, 16}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(LengthFieldBasedFrameDecoder(1024, 0, bad), IllegalArgumentError);
  }
  CHECK_THROWS_WITH_AS(LengthFieldBasedFrameDecoder(1024, 0, 5),
                       "lengthFieldLength: 5 (expected: 1, 2, 3, 4, or 8)", IllegalArgumentError);
  // lengthFieldOffset <= maxFrameLength - lengthFieldLength.
  CHECK_NOTHROW(LengthFieldBasedFrameDecoder(10, 8, 2));
  CHECK_THROWS_AS(LengthFieldBasedFrameDecoder(10, 9, 2), IllegalArgumentError);
  CHECK_THROWS_AS(LengthFieldBasedFrameDecoder(3, 0, 4), IllegalArgumentError);
  CHECK_NOTHROW(LengthFieldBasedFrameDecoder(4, 0, 4));

  LengthFieldBasedFrameDecoder d(ByteOrder::little, 100, 3, 4, -7, 2, false);
  CHECK(d.byteOrder() == ByteOrder::little);
  CHECK(d.maxFrameLength() == 100);
  CHECK(d.lengthFieldOffset() == 3);
  CHECK(d.lengthFieldLength() == 4);
  CHECK(d.lengthFieldEndOffset() == 7);
  CHECK(d.lengthAdjustment() == -7);
  CHECK(d.initialBytesToStrip() == 2);
  CHECK_FALSE(d.isFailFast());
  CHECK_FALSE(d.isDiscarding());
  LengthFieldBasedFrameDecoder e(100, 0, 2);
  CHECK(e.byteOrder() == ByteOrder::big);
  CHECK(e.isFailFast());
  CHECK(e.cumulator() == Cumulator::Merge);
}
