#include <netbuf/codec/byte_to_message_decoder.hpp>

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
#include <netbuf/codec/fixed_length_frame_decoder.hpp>
#include <stdexcept>

#include "support/split_checks.hpp"

using namespace netbuf;
using netbuf::test::checkAllSplits;
using netbuf::test::describeError;
using netbuf::test::Transcript;
using netbuf::test::transcriptOf;

namespace {

/// A decoder driven by its input, one command byte per decode() call, to exercise each rule of the
/// decode loop:
///   'a'..'z'  emit a one-byte frame
///   '<'       needs the next byte: waits (consumes nothing) until it is there, then emits it
///   '.'       consume without emitting
///   '!'       consume, then throw CorruptedFrameError at its offset
///   '?'       throw CorruptedFrameError without consuming
///   '#'       emit a frame without consuming (a broken decoder)
///   'X'       consume, then throw std::runtime_error (not a codec error)
///   'L'       (only in decodeLast) emit the remaining bytes as one frame
struct ScriptDecoder : ByteToMessageDecoder<ScriptDecoder, AnyByteBuf> {
  explicit ScriptDecoder(Cumulator c = Cumulator::Merge,
                         ByteBufAllocator& a = ByteBufAllocator::defaultAllocator())
      : ByteToMessageDecoder(c, a) {}

  int calls = 0;
  int lastCalls = 0;
  bool useDecodeLast = false;
  bool lastThrows = false;

  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    ++calls;
    const std::size_t r = in.readerIndex();
    switch (in.getUnsignedByte(r)) {
      case '<':
        if (in.readableBytes() < 2) return;
        in.skipBytes(1);
        out.push_back(readFrame(in, 1));
        return;
      case '.':
        in.skipBytes(1);
        return;
      case '!':
        in.skipBytes(1);
        throw CorruptedFrameError("bang", streamOffset(r), 33, 0);
      case '?':
        throw CorruptedFrameError("query", streamOffset(in), 63, 0);
      case '#':
        out.push_back(AnyByteBuf(in.retainedSlice(r, 1)));
        return;
      case 'X':
        in.skipBytes(1);
        throw std::runtime_error("not a codec error");
      default:
        out.push_back(readFrame(in, 1));
    }
  }

  template <class Buf>
  void decodeLast(Buf& in, std::vector<AnyByteBuf>& out) {
    ++lastCalls;
    if (lastThrows) {
      in.skipBytes(1);
      throw TooLongFrameError("last", streamOffset(in.readerIndex() - 1), 1, 0);
    }
    if (!useDecodeLast) return decode(in, out);
    out.push_back(readFrame(in, in.readableBytes()));
  }
};

ByteBuf bufferOf(std::string_view s, std::size_t capacity = 0) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(std::max(capacity, s.size()));
  b.writeBytes(s);
  return b;
}

}  // namespace

TEST_CASE("ByteToMessageDecoder: the same frames and errors however the stream is split") {
  auto make = [](Cumulator c) { return ScriptDecoder(c); };
  checkAllSplits(make, "ab<c.d!ef", Transcript{"a", "b", "c", "d", "!Corrupted@6=33/0", "e", "f"});
}

TEST_CASE("ByteToMessageDecoder: a decoder that needs more input ends the loop until it arrives") {
  DecoderRunner<ScriptDecoder> run;
  run.feed("a<");
  CHECK(run.messages().size() == 1);
  CHECK(run.decoder().calls == 2);  // 'a', then '<' waits: no spin
  CHECK(run.decoder().actualReadableBytes() == 1);
  run.feed("b");
  CHECK(transcriptOf(run) == Transcript{"a", "b"});
  CHECK(run.decoder().calls == 3);
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("ByteToMessageDecoder: consuming without emitting calls decode again") {
  DecoderRunner<ScriptDecoder> run;
  run.feed("...a");
  CHECK(transcriptOf(run) == Transcript{"a"});
  CHECK(run.decoder().calls == 4);
}

TEST_CASE(
    "ByteToMessageDecoder: emitting without consuming is a DecoderError, and the loop stops") {
  DecoderRunner<ScriptDecoder> run;
  run.feed("ab#c");
  REQUIRE(run.errors().size() == 1);
  CHECK_THROWS_AS(run.rethrowError(0), DecoderError);
  CHECK(describeError(run.errors()[0].error) == "!DecoderError@2=2/-");
  // The message it emitted is delivered; the loop did not spin on it.
  CHECK(run.messages().size() == 3);
  CHECK(run.decoder().calls == 3);
  CHECK(run.decoder().actualReadableBytes() == 2);
}

TEST_CASE("ByteToMessageDecoder: a codec error after progress is reported and decoding goes on") {
  DecoderRunner<ScriptDecoder> run;
  run.feed("a!b!!c");
  CHECK(transcriptOf(run) ==
        Transcript{"a", "!Corrupted@1=33/0", "b", "!Corrupted@3=33/0", "!Corrupted@4=33/0", "c"});
}

TEST_CASE("ByteToMessageDecoder: a codec error without progress waits for the next read") {
  DecoderRunner<ScriptDecoder> run;
  run.feed("a?b");
  CHECK(transcriptOf(run) == Transcript{"a", "!Corrupted@1=63/0"});
  CHECK(run.decoder().actualReadableBytes() == 2);
  CHECK(run.decoder().bytesConsumed() == 1);
}

TEST_CASE("ByteToMessageDecoder: the two-argument channelRead rethrows; decodeAgain resumes") {
  ScriptDecoder d;
  std::vector<AnyByteBuf> out;
  CHECK_THROWS_AS(d.channelRead(bufferOf("a!bc"), out), CorruptedFrameError);
  CHECK(out.size() == 1);  // messages decoded before the error are kept
  CHECK(d.actualReadableBytes() == 2);
  d.decodeAgain(out);
  CHECK(out.size() == 3);
  CHECK(readableBytesToString(out[2]) == "c");
  CHECK(d.actualReadableBytes() == 0);
}

TEST_CASE("ByteToMessageDecoder: other exceptions propagate and leave the rest for the next read") {
  ScriptDecoder d;
  std::vector<AnyByteBuf> out;
  CHECK_THROWS_AS(d.channelRead(bufferOf("aXb"), out, [](std::exception_ptr) { FAIL("called"); }),
                  std::runtime_error);
  CHECK(out.size() == 1);
  CHECK(d.actualReadableBytes() == 1);
  CHECK(d.bytesConsumed() == 2);
  d.channelRead(bufferOf("c"), out);
  REQUIRE(out.size() == 3);
  CHECK(readableBytesToString(out[1]) == "b");
  CHECK(readableBytesToString(out[2]) == "c");
}

TEST_CASE("ByteToMessageDecoder: an exception from the error handler ends channelRead") {
  ScriptDecoder d;
  std::vector<AnyByteBuf> out;
  int calls = 0;
  auto handler = [&](std::exception_ptr) {
    ++calls;
    throw std::logic_error("handler");
  };
  CHECK_THROWS_AS(d.channelRead(bufferOf("!ab"), out, handler), std::logic_error);
  CHECK(calls == 1);
  CHECK(d.actualReadableBytes() == 2);
  d.decodeAgain(out);
  CHECK(out.size() == 2);
}

TEST_CASE("ByteToMessageDecoder: singleDecode stops after the first message") {
  ScriptDecoder d;
  d.setSingleDecode(true);
  CHECK(d.isSingleDecode());
  std::vector<AnyByteBuf> out;
  d.channelRead(bufferOf("abc"), out);
  CHECK(out.size() == 1);
  CHECK(d.actualReadableBytes() == 2);
  d.setSingleDecode(false);
  d.decodeAgain(out);
  CHECK(out.size() == 3);
}

TEST_CASE("ByteToMessageDecoder: decodeLast runs once at end of stream, only if bytes remain") {
  SUBCASE("bytes remain") {
    DecoderRunner<ScriptDecoder> run;
    run.decoder().useDecodeLast = true;
    run.feed("ab<").finish();
    CHECK(transcriptOf(run) == Transcript{"a", "b", "<"});
    CHECK(run.decoder().lastCalls == 1);
    CHECK(run.decoder().bytesDropped() == 0);
  }
  SUBCASE("an error thrown by decodeLast is reported; the rest is dropped") {
    DecoderRunner<ScriptDecoder> run;
    run.decoder().lastThrows = true;
    run.feed("a.<").finish();
    CHECK(transcriptOf(run) == Transcript{"a", "!TooLong@2=1/0"});
    CHECK(run.decoder().bytesDropped() == 0);
    CHECK(run.decoder().bytesConsumed() == 3);
  }
  SUBCASE("nothing remains") {
    DecoderRunner<ScriptDecoder> run;
    run.feed("ab").finish();
    CHECK(run.decoder().lastCalls == 0);
  }
  SUBCASE("the default decodeLast is decode; what it leaves is dropped and counted") {
    DecoderRunner<FixedLengthFrameDecoder> run(4);
    run.feed("abcdef").finish();
    CHECK(run.messages().size() == 1);
    CHECK(run.decoder().bytesDropped() == 2);
    CHECK(run.decoder().actualReadableBytes() == 0);
  }
  SUBCASE("an error at end of stream is reported once and the cumulation released") {
    DecoderRunner<ScriptDecoder> run;
    run.feed("a<").finish();  // decode waits on '<'; decodeLast (= decode) waits again
    CHECK(run.decoder().lastCalls == 1);
    CHECK(run.decoder().bytesDropped() == 1);
    ScriptDecoder d;
    std::vector<AnyByteBuf> out;
    d.channelRead(bufferOf("?"), out, [](std::exception_ptr) {});
    std::vector<std::string> errors;
    d.channelInactive(out, [&](std::exception_ptr e) { errors.push_back(describeError(e)); });
    CHECK(errors == std::vector<std::string>{"!Corrupted@0=63/0"});
    CHECK(d.lastCalls == 0);
    CHECK(d.actualReadableBytes() == 0);
    CHECK(d.bytesDropped() == 1);
  }
}

TEST_CASE("ByteToMessageDecoder: Merge takes the first read as is and appends into its room") {
  ScriptDecoder d(Cumulator::Merge);
  std::vector<AnyByteBuf> out;
  ByteBuf first = bufferOf("<", 64);
  const std::byte* mem = first.data();
  d.channelRead(std::move(first), out);
  d.channelRead(bufferOf("x"), out);
  REQUIRE(out.size() == 1);
  // "x" was copied into the first read's spare room: the frame is a slice of that memory.
  CHECK(std::get<ByteBuf>(out[0]).data() == mem + 1);
}

TEST_CASE("ByteToMessageDecoder: Merge compacts in place when nothing shares the memory") {
  ScriptDecoder d(Cumulator::Merge);
  std::vector<AnyByteBuf> out;
  ByteBuf first = bufferOf("........<", 10);  // 9 bytes in 10: 8 skipped, '<' waits
  const std::byte* mem = first.data();
  d.channelRead(std::move(first), out);
  CHECK(d.actualReadableBytes() == 1);
  d.channelRead(bufferOf("xyz"), out);  // no room after writerIndex: read bytes are discarded
  REQUIRE(out.size() == 3);
  CHECK(std::get<ByteBuf>(out[0]).data() == mem + 1);
}

TEST_CASE("ByteToMessageDecoder: Merge moves to fresh memory when frames share the old one") {
  ScriptDecoder d(Cumulator::Merge);
  std::vector<AnyByteBuf> out;
  d.channelRead(bufferOf("ab<", 3), out);  // frames "a" and "b" keep the memory shared
  REQUIRE(out.size() == 2);
  d.channelRead(bufferOf("cd"), out);
  REQUIRE(out.size() == 4);
  CHECK(readableBytesToString(out[0]) == "a");  // untouched by the move
  CHECK(readableBytesToString(out[1]) == "b");
  CHECK(readableBytesToString(out[2]) == "c");
  CHECK(readableBytesToString(out[3]) == "d");
  CHECK(std::get<ByteBuf>(out[2]).data() != std::get<ByteBuf>(out[0]).data() + 3);
}

TEST_CASE("ByteToMessageDecoder: channelReadComplete compacts by the discardSomeReadBytes policy") {
  ScriptDecoder d(Cumulator::Merge);
  std::vector<AnyByteBuf> out;
  ByteBuf first = bufferOf("........<", 16);
  const std::byte* mem = first.data();
  d.channelRead(std::move(first), out);  // readerIndex 8 >= capacity / 2: compacted already
  d.channelReadComplete();
  d.channelRead(bufferOf("q"), out);
  REQUIRE(out.size() == 1);
  CHECK(std::get<ByteBuf>(out[0]).data() == mem + 1);
}

TEST_CASE("ByteToMessageDecoder: Composite appends reads as components, frames are slices") {
  ScriptDecoder d(Cumulator::Composite);
  std::vector<AnyByteBuf> out;
  ByteBuf r1 = bufferOf("a<");
  ByteBuf r2 = bufferOf("bc");
  const std::byte* m1 = r1.data();
  const std::byte* m2 = r2.data();
  d.channelRead(std::move(r1), out);
  d.channelRead(std::move(r2), out);
  REQUIRE(out.size() == 3);
  CHECK(std::get<ByteBuf>(out[0]).data() == m1);
  CHECK(std::get<ByteBuf>(out[1]).data() == m2);  // no copy of either read
  CHECK(std::get<ByteBuf>(out[2]).data() == m2 + 1);
}

TEST_CASE("ByteToMessageDecoder: a Composite frame across reads is a composite, not a copy") {
  DecoderRunner<FixedLengthFrameDecoder> run(4, Cumulator::Composite);
  run.feed("ab").feed("cdef").feed("gh");
  REQUIRE(run.messages().size() == 2);
  CHECK(isComposite(run.messages()[0]));
  CHECK(std::get<CompositeByteBuf>(run.messages()[0]).numComponents() == 2);
  CHECK(readableBytesToString(run.messages()[0]) == "abcd");
  CHECK(readableBytesToString(run.messages()[1]) == "efgh");
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("ByteToMessageDecoder: composite and AnyByteBuf inputs, with either cumulator") {
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    DecoderRunner<FixedLengthFrameDecoder> run(3, c);
    ByteBuf parts[] = {bufferOf("ab"), bufferOf("cd")};
    run.feed(compositeOf(parts));
    run.feed(AnyByteBuf(std::in_place_type<ByteBuf>, bufferOf("ef")));
    ByteBuf more[] = {bufferOf("g"), bufferOf("hi")};
    run.feed(AnyByteBuf(compositeOf(more)));
    run.feed(CompositeByteBuf());  // empty input: nothing happens
    CHECK(transcriptOf(run) == Transcript{"abc", "def", "ghi"});
    CHECK(run.decoder().bytesReceived() == 9);
    CHECK(run.decoder().bytesConsumed() == 9);
  }
}

TEST_CASE("ByteToMessageDecoder: switching cumulator mid-stream keeps every byte") {
  DecoderRunner<FixedLengthFrameDecoder> run(5, Cumulator::Composite);
  run.feed("ab").feed("c");  // composite cumulation of two reads
  run.decoder().setCumulator(Cumulator::Merge);
  CHECK(run.decoder().cumulator() == Cumulator::Merge);
  run.feed("de").feed("f");
  run.decoder().setCumulator(Cumulator::Composite);
  run.feed("ghij");
  CHECK(transcriptOf(run) == Transcript{"abcde", "fghij"});
}

TEST_CASE("ByteToMessageDecoder: stream offsets count from the first byte ever received") {
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    DecoderRunner<ScriptDecoder> run(c);
    ByteBuf in = bufferOf("xxa<");
    in.skipBytes(2);  // bytes already read before the decoder saw the buffer do not count
    run.feed(std::move(in));
    run.feed("b....");
    run.feed("..!");
    run.feed("c!");
    CHECK(transcriptOf(run) ==
          Transcript{"a", "b", "!Corrupted@9=33/0", "c", "!Corrupted@11=33/0"});
    CHECK(run.decoder().bytesReceived() == 12);
  }
}

TEST_CASE("ByteToMessageDecoder: takeCumulation hands over the undecoded bytes") {
  ScriptDecoder d;
  std::vector<AnyByteBuf> out;
  d.channelRead(bufferOf("a<"), out);
  AnyByteBuf rest = d.takeCumulation();
  CHECK(readableBytesToString(rest) == "<");
  CHECK(d.actualReadableBytes() == 0);
  CHECK(d.bytesConsumed() == 2);
  AnyByteBuf none = d.takeCumulation();
  CHECK(readableBytes(none) == 0);
}

TEST_CASE("ByteToMessageDecoder: uses the allocator it was given for merged cumulations") {
  PooledByteBufAllocator pool;
  {
    ScriptDecoder d(Cumulator::Merge, pool);
    CHECK(&d.alloc() == &pool);
    std::vector<AnyByteBuf> out;
    d.channelRead(bufferOf("ab<", 3), out);
    d.channelRead(bufferOf("c"), out);  // frames share the first read: a fresh buffer from pool
    REQUIRE(out.size() == 3);
    CHECK(pool.totalStats().liveBuffers == 1);  // kept alive by frame "c" only
    out.pop_back();
    CHECK(pool.totalStats().liveBuffers == 0);
    d.channelRead(bufferOf("<"), out);  // empty cumulation: taken as is, nothing from pool
    CHECK(pool.totalStats().liveBuffers == 0);
    d.channelRead(bufferOf("d"), out);
    CHECK(out.size() == 3);
  }
  CHECK(pool.totalStats().liveBuffers == 0);
}
