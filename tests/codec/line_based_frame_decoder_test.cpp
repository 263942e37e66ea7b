#include <netbuf/codec/line_based_frame_decoder.hpp>

#include "support/split_checks.hpp"

#include <chrono>
#include <string>

using namespace netbuf;
using netbuf::test::checkAllSplits;
using netbuf::test::checkAllSplitsIgnoringErrorValues;
using netbuf::test::decodeSplit;
using netbuf::test::Transcript;
using netbuf::test::transcriptOf;

namespace {

auto lineDecoder(std::size_t maxLength, bool strip = true, bool failFast = false) {
  return [=](Cumulator c) { return LineBasedFrameDecoder(maxLength, strip, failFast, c); };
}

std::string errorAt(const DecoderRunner<LineBasedFrameDecoder>& run, std::size_t i) {
  return netbuf::test::describeError(run.errors().at(i).error);
}

}  // namespace

TEST_CASE("LineBasedFrameDecoder: decode with and without stripping the delimiter") {
  checkAllSplits(lineDecoder(8192, true), "first\r\nsecond\nthird", Transcript{"first", "second"});
  checkAllSplits(lineDecoder(8192, false), "first\r\nsecond\nthird",
                 Transcript{"first\r\n", "second\n"});
  checkAllSplits(lineDecoder(8192, true), "line\r\n.\r\n", Transcript{"line", "."});
}

TEST_CASE("LineBasedFrameDecoder: a lone CR is part of the line, CR and LF may arrive apart") {
  // Netty's testFragmentedDecode.
  DecoderRunner<LineBasedFrameDecoder> run(8192, false, false);
  run.feed("huu").feed("haa\r");
  CHECK(run.messages().empty());
  run.feed("hahahaha\n");
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "huuhaa\rhahahaha\n");
  checkAllSplits(lineDecoder(8192, true), "a\rb\r\nc\r\r\n\r", Transcript{"a\rb", "c\r"});
  checkAllSplits(lineDecoder(8192, false), "a\rb\r\nc\r\r\n\r", Transcript{"a\rb\r\n", "c\r\r\n"});
  // CR at the end of one read, LF at the start of the next: still one "\r\n".
  DecoderRunner<LineBasedFrameDecoder> split(16);
  split.feed("abc\r").feed("\ndef\r").feed("\n");
  REQUIRE(split.messages().size() == 2);
  CHECK(readableBytesToString(split.messages()[0]) == "abc");
  CHECK(readableBytesToString(split.messages()[1]) == "def");
}

TEST_CASE("LineBasedFrameDecoder: empty lines") {
  checkAllSplits(lineDecoder(8192), "\nabcna\r\n", Transcript{"", "abcna"});
  checkAllSplits(lineDecoder(8192), "\r\n\n\r\n", Transcript{"", "", ""});
  checkAllSplits(lineDecoder(8192, false), "\r\n\n", Transcript{"\r\n", "\n"});
}

TEST_CASE("LineBasedFrameDecoder: too-long line, failFast = false, reports at its delimiter") {
  // Netty's testTooLongLine1: the error, then the good line; "second" has no delimiter.
  checkAllSplits(lineDecoder(16), "12345678901234567890\r\nfirst\r\nsecond",
                 Transcript{"!TooLong@0=20/16", "first"});
  checkAllSplits(lineDecoder(16, false), "12345678901234567890\r\nfirst\r\n",
                 Transcript{"!TooLong@0=20/16", "first\r\n"});
  // testTooLongLine2: the line arrives in two reads; no error before the delimiter.
  DecoderRunner<LineBasedFrameDecoder> run(16);
  run.feed("12345678901234567");
  CHECK(run.errors().empty());
  CHECK(run.decoder().isDiscarding());
  run.feed("890\r\nfirst\r\n");
  REQUIRE(run.errors().size() == 1);
  CHECK(errorAt(run, 0) == "!TooLong@0=20/16");
  CHECK_THROWS_AS(run.rethrowError(0), TooLongFrameError);
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "first");
  CHECK_FALSE(run.decoder().isDiscarding());
  // The offset is the too-long line's position in the stream.
  checkAllSplits(lineDecoder(4), "ok\nabcdefgh\nyes\n", Transcript{"ok", "!TooLong@3=8/4", "yes"});
}

TEST_CASE("LineBasedFrameDecoder: too-long line, failFast = true, reports at once") {
  DecoderRunner<LineBasedFrameDecoder> run(16, true, true);
  run.feed("12345678901234567");  // 17 bytes, no delimiter yet
  REQUIRE(run.errors().size() == 1);
  CHECK(errorAt(run, 0) == "!TooLong@0=17/16");
  CHECK(run.decoder().actualReadableBytes() == 0);
  run.feed("890");
  run.feed("123\r\nfirst\r\n");
  CHECK(run.errors().size() == 1);  // no second error at the delimiter
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "first");

  // A complete too-long line in one read reports its full length.
  DecoderRunner<LineBasedFrameDecoder> whole(16, true, true);
  whole.feed("12345678901234567890\r\nfirst\r\n");
  REQUIRE(whole.errors().size() == 1);
  CHECK(errorAt(whole, 0) == "!TooLong@0=20/16");

  // Every split: same frames, same error positions and offsets (the value depends on the split).
  checkAllSplitsIgnoringErrorValues(lineDecoder(16, true, true),
                                    "12345678901234567890\r\nfirst\r\nsecond",
                                    Transcript{"!TooLong@0=20/16", "first"});
  checkAllSplitsIgnoringErrorValues(lineDecoder(3, false, true), "a\nbcdef\r\ng\r\n",
                                    Transcript{"a\n", "!TooLong@2=5/3", "g\r\n"});
}

TEST_CASE("LineBasedFrameDecoder: failFast = false with a line that grows read by read") {
  // Netty's testNotFailFast.
  DecoderRunner<LineBasedFrameDecoder> run(2, false, false);
  run.feed(std::string_view("\x00\x01\x02", 3));
  run.feed(std::string_view("\x03\x04", 2));
  run.feed(std::string_view("\x05", 1));
  CHECK(run.errors().empty());
  run.feed("\r\n");
  REQUIRE(run.errors().size() == 1);
  CHECK(errorAt(run, 0) == "!TooLong@0=6/2");
  CHECK(run.messages().empty());
  run.feed("ab\n");
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "ab\n");  // stripDelimiter = false
}

TEST_CASE("LineBasedFrameDecoder: too-long line whose CR and LF arrive in different reads") {
  for (bool failFast : {false, true}) {
    CAPTURE(failFast);
    DecoderRunner<LineBasedFrameDecoder> run(4, true, failFast);
    run.feed("abcdefg\r");
    run.feed("\nok\n");
    REQUIRE(run.errors().size() == 1);
    CHECK(errorAt(run, 0) == "!TooLong@0=7/4");
    REQUIRE(run.messages().size() == 1);
    CHECK(readableBytesToString(run.messages()[0]) == "ok");  // not "\nok" nor a stray empty line
    CHECK(run.decoder().actualReadableBytes() == 0);
  }
  // And while discarding, with the CR kept for the next read.
  DecoderRunner<LineBasedFrameDecoder> run(4, true, false);
  run.feed("abcdef").feed("gh\r").feed("\n").feed("x\n");
  REQUIRE(run.errors().size() == 1);
  CHECK(errorAt(run, 0) == "!TooLong@0=8/4");
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "x");
  checkAllSplits(lineDecoder(4), "abcdefgh\r\nx\n", Transcript{"!TooLong@0=8/4", "x"});
  checkAllSplits(lineDecoder(4, false), "abcdefgh\r\r\nx\n", Transcript{"!TooLong@0=9/4", "x\n"});
}

TEST_CASE("LineBasedFrameDecoder: maxLength boundary (the delimiter does not count)") {
  checkAllSplits(lineDecoder(4), "abcd\r\nabcd\nabcde\r\nabcde\nz\n",
                 Transcript{"abcd", "abcd", "!TooLong@11=5/4", "!TooLong@18=5/4", "z"});
  checkAllSplits(lineDecoder(4, false, true), "abcd\r\nabcd\n", Transcript{"abcd\r\n", "abcd\n"});
  // A line of exactly maxLength whose CR arrives before its LF is not too long.
  DecoderRunner<LineBasedFrameDecoder> run(4, true, true);
  run.feed("abcd\r").feed("\n");
  CHECK(run.errors().empty());
  REQUIRE(run.messages().size() == 1);
  CHECK(readableBytesToString(run.messages()[0]) == "abcd");
  checkAllSplits(lineDecoder(1), "a\n\nab\nb\r\n", Transcript{"a", "", "!TooLong@3=2/1", "b"});
}

TEST_CASE("LineBasedFrameDecoder: recovery after several errors in a row") {
  checkAllSplits(lineDecoder(2), "aaa\nbbbb\r\ncc\ndddd\n\nee\n",
                 Transcript{"!TooLong@0=3/2", "!TooLong@4=4/2", "cc", "!TooLong@13=4/2", "", "ee"});
}

TEST_CASE("LineBasedFrameDecoder: an unterminated last line is dropped at end of stream") {
  DecoderRunner<LineBasedFrameDecoder> run(16);
  run.feed("one\ntwo");
  run.finish();
  REQUIRE(run.messages().size() == 1);
  CHECK(run.decoder().bytesDropped() == 3);
  checkAllSplits(lineDecoder(16), "one\ntwo\r", Transcript{"one"});
}

TEST_CASE("LineBasedFrameDecoder: a 10 MB line in 4 KiB reads stays bounded, one error") {
  for (bool failFast : {false, true}) {
    for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
      CAPTURE(failFast);
      CAPTURE(static_cast<int>(c));
      DecoderRunner<LineBasedFrameDecoder> run(1024, true, failFast, c);
      run.feed("hello\n");
      const std::string chunk(4096, 'x');
      const std::size_t chunks = 10 * 1024 * 1024 / 4096;
      for (std::size_t i = 0; i < chunks; ++i) run.feed(chunk);
      run.feed("\r");
      run.feed("\nbye\n");
      CHECK(run.maxBuffered() <= 1025);
      REQUIRE(run.errors().size() == 1);
      const auto& e = run.errors()[0];
      CHECK(e.messagesBefore == 1);
      if (failFast) {
        CHECK(netbuf::test::describeError(e.error) == "!TooLong@6=4096/1024");
      } else {
        CHECK(netbuf::test::describeError(e.error) ==
              fmt::format("!TooLong@6={}/1024", chunks * 4096));
      }
      REQUIRE(run.messages().size() == 2);
      CHECK(readableBytesToString(run.messages()[1]) == "bye");
    }
  }
}

TEST_CASE("LineBasedFrameDecoder: a long line in small reads is not rescanned (linear time)") {
  // 4 MiB in 64-byte reads under a large maxLength: a decoder that rescanned the line from its
  // start on every read would scan ~2^37 bytes (minutes); the remembered offset keeps it linear.
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    DecoderRunner<LineBasedFrameDecoder> run(8 * 1024 * 1024, true, false, c);
    const std::string chunk(64, 'y');
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < 4 * 1024 * 1024 / 64; ++i) run.feed(chunk);
    run.feed("\n");
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    CHECK(elapsed < std::chrono::seconds(10));
    REQUIRE(run.messages().size() == 1);
    CHECK(readableBytes(run.messages()[0]) == 4 * 1024 * 1024);
  }
}

TEST_CASE("LineBasedFrameDecoder: frames are retained slices (zero copy)") {
  DecoderRunner<LineBasedFrameDecoder> run(64);
  ByteBuf in = Unpooled::copiedBuffer(std::string_view("ab\ncd\n"));
  const std::byte* base = in.data();
  run.feed(std::move(in));
  REQUIRE(run.messages().size() == 2);
  CHECK(std::get<ByteBuf>(run.messages()[0]).data() == base);
  CHECK(std::get<ByteBuf>(run.messages()[1]).data() == base + 3);
}

TEST_CASE("LineBasedFrameDecoder: parameters") {
  CHECK_THROWS_AS(LineBasedFrameDecoder(0), IllegalArgumentError);
  LineBasedFrameDecoder d(10, false, true);
  CHECK(d.maxLength() == 10);
  CHECK_FALSE(d.isStripDelimiter());
  CHECK(d.isFailFast());
  CHECK_FALSE(d.isDiscarding());
}
