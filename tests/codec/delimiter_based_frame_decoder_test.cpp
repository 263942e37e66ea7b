#include <netbuf/codec/delimiter_based_frame_decoder.hpp>

#include "support/split_checks.hpp"

#include <chrono>
#include <string>

using namespace netbuf;
using netbuf::test::checkAllSplits;
using netbuf::test::checkAllSplitsIgnoringErrorValues;
using netbuf::test::decodeSplit;
using netbuf::test::describeError;
using netbuf::test::Transcript;

namespace {

using Delims = std::vector<std::string>;

auto delimDecoder(std::size_t maxFrameLength, bool strip, bool failFast, Delims delims) {
  return [=](Cumulator c) {
    return DelimiterBasedFrameDecoder(maxFrameLength, strip, failFast, delims, c);
  };
}

const std::string kNul(1, '\0');

}  // namespace

TEST_CASE("DelimiterBasedFrameDecoder: line delimiters, stripped and kept (Netty's tests)") {
  // testMultipleLinesStrippedDelimiters / testIncompleteLinesStrippedDelimiters
  checkAllSplits(delimDecoder(8192, true, true, Delimiters::lineDelimiter()), "TestLine\r\ng\r\n",
                 Transcript{"TestLine", "g"});
  // testMultipleLines / testIncompleteLines
  checkAllSplits(delimDecoder(8192, false, true, Delimiters::lineDelimiter()), "TestLine\r\ng\r\n",
                 Transcript{"TestLine\r\n", "g\r\n"});
  // testDecode: an unterminated last line is dropped.
  checkAllSplits(delimDecoder(8192, true, true, Delimiters::lineDelimiter()),
                 "first\r\nsecond\nthird", Transcript{"first", "second"});
  DecoderRunner<DelimiterBasedFrameDecoder> run(8192, true, true, Delimiters::lineDelimiter());
  run.feed("Test");
  CHECK(run.messages().empty());
  run.feed("Line\r\ng\r\n");
  REQUIRE(run.messages().size() == 2);
  CHECK(readableBytesToString(run.messages()[0]) == "TestLine");
  CHECK(readableBytesToString(run.messages()[1]) == "g");
}

TEST_CASE("DelimiterBasedFrameDecoder: NUL delimiter and the convenience constructors") {
  checkAllSplits([](Cumulator c) { return DelimiterBasedFrameDecoder(16, kNul, c); },
                 std::string("ABC\0DEF\0GH", 10), Transcript{"ABC", "DEF"});
  checkAllSplits(
      [](Cumulator c) { return DelimiterBasedFrameDecoder(16, Delimiters::nulDelimiter(), c); },
      std::string("\0\0x\0", 4), Transcript{"", "", "x"});
  DelimiterBasedFrameDecoder d(5, std::string("--"));
  CHECK(d.isStripDelimiter());
  CHECK(d.isFailFast());
  CHECK(d.maxFrameLength() == 5);
  CHECK(d.delimiters() == Delims{"--"});
  CHECK(Delimiters::nulDelimiter() == Delims{kNul});
  CHECK(Delimiters::lineDelimiter() == Delims{"\r\n", "\n"});
}

TEST_CASE("DelimiterBasedFrameDecoder: the delimiter giving the shortest frame wins") {
  // "\n" and "\r\n" in either order: "\r\n" starts first.
  checkAllSplits(delimDecoder(64, true, true, {"\n", "\r\n"}), "abc\r\nd\n",
                 Transcript{"abc", "d"});
  checkAllSplits(delimDecoder(64, false, true, {"\n", "\r\n"}), "abc\r\nd\n",
                 Transcript{"abc\r\n", "d\n"});
  // "ab" found at 1 gives "x"; "b" at 2 would give "xa".
  checkAllSplits(delimDecoder(64, true, true, {"ab", "b"}), "xab", Transcript{"x"});
  checkAllSplits(delimDecoder(64, true, true, {"b", "ab"}), "xabyb", Transcript{"x", "y"});
  checkAllSplits(delimDecoder(64, false, true, {"b", "ab"}), "xabyb", Transcript{"xab", "yb"});
  // Overlapping: a longer delimiter starting earlier beats a short one inside it, even when its
  // end arrives in a later read (the "b" match waits for it).
  checkAllSplits(delimDecoder(64, true, true, {"b", "abcd"}), "xabcdZb", Transcript{"x", "Z"});
  checkAllSplits(delimDecoder(64, true, true, {"b", "abcd"}), "xabcZb", Transcript{"xa", "cZ"});
  DecoderRunner<DelimiterBasedFrameDecoder> wait(64, true, true, Delims{"b", "abcd"});
  wait.feed("xab");
  CHECK(wait.messages().empty());  // "abcd" may still complete
  wait.feed("cdZb");
  REQUIRE(wait.messages().size() == 2);
  CHECK(readableBytesToString(wait.messages()[0]) == "x");
  // At end of stream the waiting match is taken.
  checkAllSplits(delimDecoder(64, true, true, {"b", "abcd"}), "xab", Transcript{"xa"});
  checkAllSplits(delimDecoder(64, true, true, {"b", "abcd"}), "xab", Transcript{}, false);
  checkAllSplits(delimDecoder(64, true, true, {"abcdef", "b", "d"}), "xabcd",
                 Transcript{"xa", "c"});
  // A delimiter overlapping itself: the first occurrence wins.
  checkAllSplits(delimDecoder(64, true, true, {"aa"}), "xaaayaa", Transcript{"x", "ay"});
}

TEST_CASE("DelimiterBasedFrameDecoder: ties at the same byte go to the delimiter listed first") {
  checkAllSplits(delimDecoder(64, true, true, {"ab", "abc"}), "xabcYab", Transcript{"x", "cY"});
  checkAllSplits(delimDecoder(64, true, true, {"abc", "ab"}), "xabcYab", Transcript{"x", "Y"});
  checkAllSplits(delimDecoder(64, false, true, {"abc", "ab"}), "xabcYab",
                 Transcript{"xabc", "Yab"});
  // "ab" listed second waits while "abc" may still complete.
  DecoderRunner<DelimiterBasedFrameDecoder> run(64, true, true, Delims{"abc", "ab"});
  run.feed("xab");
  CHECK(run.messages().empty());
  run.feed("Y");
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "x");
}

TEST_CASE("DelimiterBasedFrameDecoder: failSlowTooLongFrameRecovery (Netty)") {
  const std::string once("\x01\x02\0A\0", 5);
  DecoderRunner<DelimiterBasedFrameDecoder> run(1, true, false, Delimiters::nulDelimiter());
  for (int i = 0; i < 2; ++i) {
    CAPTURE(i);
    run.feed(std::string_view("\x01\x02", 2));
    CHECK(run.errors().size() == static_cast<std::size_t>(i));
    run.feed(std::string_view("\0", 1));
    REQUIRE(run.errors().size() == static_cast<std::size_t>(i) + 1);
    CHECK(describeError(run.errors()[i].error) == fmt::format("!TooLong@{}=2/1", 5 * i));
    run.feed(std::string_view("A\0", 2));
    REQUIRE(run.messages().size() == static_cast<std::size_t>(i) + 1);
    CHECK(readableBytesToString(run.messages()[i]) == "A");
  }
  checkAllSplits(delimDecoder(1, true, false, Delimiters::nulDelimiter()), once + once,
                 Transcript{"!TooLong@0=2/1", "A", "!TooLong@5=2/1", "A"});
}

TEST_CASE("DelimiterBasedFrameDecoder: failFastTooLongFrameRecovery (Netty)") {
  const std::string once("\x01\x02\0A\0", 5);
  DecoderRunner<DelimiterBasedFrameDecoder> run(1, Delimiters::nulDelimiter());
  for (int i = 0; i < 2; ++i) {
    CAPTURE(i);
    run.feed(std::string_view("\x01\x02", 2));
    REQUIRE(run.errors().size() == static_cast<std::size_t>(i) + 1);  // at once
    CHECK(describeError(run.errors()[i].error) == fmt::format("!TooLong@{}=2/1", 5 * i));
    run.feed(std::string_view("\0A\0", 3));
    CHECK(run.errors().size() == static_cast<std::size_t>(i) + 1);  // not again
    REQUIRE(run.messages().size() == static_cast<std::size_t>(i) + 1);
    CHECK(readableBytesToString(run.messages()[i]) == "A");
  }
  checkAllSplits(delimDecoder(1, true, true, Delimiters::nulDelimiter()), once + once,
                 Transcript{"!TooLong@0=2/1", "A", "!TooLong@5=2/1", "A"});
}

TEST_CASE("DelimiterBasedFrameDecoder: too-long frames, both modes, with recovery") {
  const std::string input("ok\0abcdef\0gh\0\0ijklm\0", 20);
  checkAllSplits(delimDecoder(3, true, false, Delimiters::nulDelimiter()), input,
                 Transcript{"ok", "!TooLong@3=6/3", "gh", "", "!TooLong@14=5/3"});
  checkAllSplitsIgnoringErrorValues(
      delimDecoder(3, true, true, Delimiters::nulDelimiter()), input,
      Transcript{"ok", "!TooLong@3=6/3", "gh", "", "!TooLong@14=5/3"});
  // A multi-byte delimiter split across reads is found while discarding.
  checkAllSplits(delimDecoder(2, true, false, {"XY"}), "abcdeXYfgXY",
                 Transcript{"!TooLong@0=5/2", "fg"});
  checkAllSplits(delimDecoder(2, false, false, {"XY"}), "abcdeXXYfgXY",
                 Transcript{"!TooLong@0=6/2", "fgXY"});
  DecoderRunner<DelimiterBasedFrameDecoder> run(2, true, false, Delims{"XY"});
  run.feed("abcdeX").feed("Yfg").feed("XY");
  REQUIRE(run.errors().size() == 1);
  CHECK(describeError(run.errors()[0].error) == "!TooLong@0=5/2");
  CHECK_THROWS_AS(run.rethrowError(0), TooLongFrameError);
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "fg");
}

TEST_CASE("DelimiterBasedFrameDecoder: maxFrameLength boundary (the delimiter does not count)") {
  checkAllSplits(delimDecoder(3, true, true, {"XY"}), "abcXYabcdXYdXY",
                 Transcript{"abc", "!TooLong@5=4/3", "d"});
  checkAllSplits(delimDecoder(3, false, false, {"XY"}), "abcXYabcdXYdXY",
                 Transcript{"abcXY", "!TooLong@5=4/3", "dXY"});
  // Exactly maxFrameLength with the delimiter's first byte already buffered is not too long.
  DecoderRunner<DelimiterBasedFrameDecoder> run(3, true, true, Delims{"XYZ"});
  run.feed("abcXY");
  CHECK(run.errors().empty());
  run.feed("Z");
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "abc");
}

TEST_CASE("DelimiterBasedFrameDecoder: a huge frame streams through in bounded memory") {
  for (bool failFast : {false, true}) {
    for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
      CAPTURE(failFast);
      CAPTURE(static_cast<int>(c));
      DecoderRunner<DelimiterBasedFrameDecoder> run(1024, true, failFast,
                                                    Delimiters::lineDelimiter(), c);
      run.feed("hi\r\n");
      const std::string chunk(4096, 'x');
      const std::size_t chunks = 10 * 1024 * 1024 / 4096;
      for (std::size_t i = 0; i < chunks; ++i) run.feed(chunk);
      run.feed("\r");
      run.feed("\nbye\n");
      CHECK(run.maxBuffered() <= 1025);
      REQUIRE(run.errors().size() == 1);
      CHECK(run.errors()[0].messagesBefore == 1);
      CHECK(describeError(run.errors()[0].error) ==
            fmt::format("!TooLong@4={}/1024", failFast ? 4096 : chunks * 4096));
      REQUIRE(run.messages().size() == 2);
      CHECK(readableBytesToString(run.messages()[1]) == "bye");
    }
  }
}

TEST_CASE(
    "DelimiterBasedFrameDecoder: a long frame in small reads is not rescanned (linear time)") {
  // 4 MiB in 64-byte reads under a large maxFrameLength: rescanning the frame from its start on
  // every read would scan ~2^37 bytes (minutes); resuming where the last search stopped is linear.
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    DecoderRunner<DelimiterBasedFrameDecoder> run(8 * 1024 * 1024, true, false,
                                                  Delims{"\r\n", "END"}, c);
    const std::string chunk(63, 'y');
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < 65536; ++i) run.feed(i % 2 == 0 ? chunk + "E" : chunk + "\r");
    run.feed("\n");
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    CHECK(elapsed < std::chrono::seconds(10));
    REQUIRE(run.messages().size() == 1);
    CHECK(readableBytes(run.messages()[0]) == 65536 * 64 - 1);
  }
}

TEST_CASE("DelimiterBasedFrameDecoder: frames are retained slices (zero copy)") {
  DecoderRunner<DelimiterBasedFrameDecoder> run(64, std::string("||"));
  ByteBuf in = Unpooled::copiedBuffer(std::string_view("ab||cd||"));
  const std::byte* base = in.data();
  run.feed(std::move(in));
  REQUIRE(run.messages().size() == 2);
  CHECK(std::get<ByteBuf>(run.messages()[0]).data() == base);
  CHECK(std::get<ByteBuf>(run.messages()[1]).data() == base + 4);
}

TEST_CASE("DelimiterBasedFrameDecoder: parameter validation") {
  CHECK_THROWS_AS(DelimiterBasedFrameDecoder(0, true, true, Delims{"x"}), IllegalArgumentError);
  CHECK_THROWS_AS(DelimiterBasedFrameDecoder(8, true, true, Delims{}), IllegalArgumentError);
  CHECK_THROWS_AS(DelimiterBasedFrameDecoder(8, true, true, Delims{"a", ""}), IllegalArgumentError);
  CHECK_THROWS_AS(DelimiterBasedFrameDecoder(8, std::string()), IllegalArgumentError);
  CHECK_NOTHROW(DelimiterBasedFrameDecoder(1, false, false, Delims{kNul}));
}
