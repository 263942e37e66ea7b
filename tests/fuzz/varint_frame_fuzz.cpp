// libFuzzer target for Varint32FrameDecoder and Varint32LengthFieldPrepender.
//
// Input: 1 parameter byte, a split program, then the stream.
//   byte 0: maxFrameLength 1..256
//   byte 1: number of cuts (0..7), then one byte per cut: the distance to the previous cut - 1
//   rest:   the stream
// The stream is decoded split at the cuts with both cumulators. Asserted:
//  - both transcripts (frames and errors with kind, offset, value and limit) are identical and
//    equal to a trivially correct whole-input model written below;
//  - every frame is at most maxFrameLength bytes;
//  - between reads the decoder buffers at most maxFrameLength + 4 bytes (a varint and a partial
//    payload);
//  - no exception other than a CodecError is raised.
// Round trip: the stream cut at the same positions gives payloads; Varint32LengthFieldPrepender
// encodes them and Varint32FrameDecoder gives them back exactly.
#include <netbuf/codec/varint32_frame_decoder.hpp>
#include <netbuf/codec/varint32_length_field_prepender.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <netbuf/codec/decoder_runner.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_input.hpp"
#include "support/decoder_transcript.hpp"

namespace {

using namespace netbuf;
using namespace netbuf::fuzz;

constexpr std::uint64_t kNone = CodecError::kNone;

/// The documented algorithm over the whole stream at once.
test::Transcript model(std::size_t maxFrameLength, std::string_view s) {
  test::Transcript t;
  const std::size_t n = s.size();
  std::size_t pos = 0;
  while (pos < n) {
    std::uint64_t v = 0;
    std::size_t len = 0;
    bool done = false;
    for (std::size_t i = 0; i < 5 && pos + i < n; ++i) {
      const auto b = static_cast<unsigned char>(s[pos + i]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
      if (b < 0x80) {
        len = i + 1;
        done = true;
        break;
      }
    }
    if (!done) {
      if (n - pos < 5) break;  // incomplete varint
      t.push_back(test::errorLine("Corrupted", pos, kNone, kNone));
      pos += 5;
      continue;
    }
    if (v > 0x7FFFFFFF) {
      t.push_back(test::errorLine("Corrupted", pos, v, 0x7FFFFFFF));
      pos += len;
      continue;
    }
    if (v > maxFrameLength) {
      t.push_back(test::errorLine("TooLong", pos, v, maxFrameLength));
      if (v > n - pos - len) break;
      pos += len + static_cast<std::size_t>(v);
      continue;
    }
    if (v > n - pos - len) break;
    t.emplace_back(s.substr(pos + len, static_cast<std::size_t>(v)));
    pos += len + static_cast<std::size_t>(v);
  }
  return t;
}

template <class Feed>
void feedSplit(std::string_view s, const std::vector<std::size_t>& cuts, Feed&& feed) {
  std::size_t from = 0;
  for (std::size_t cut : cuts) {
    if (cut < from || cut > s.size()) continue;
    feed(s.substr(from, cut - from));
    from = cut;
  }
  feed(s.substr(from));
}

test::Transcript decode(std::size_t maxFrameLength, Cumulator c, std::string_view s,
                        const std::vector<std::size_t>& cuts) {
  DecoderRunner<Varint32FrameDecoder> run(maxFrameLength, c);
  feedSplit(s, cuts, [&](std::string_view piece) {
    run.feed(piece);
    check(run.decoder().actualReadableBytes() <= maxFrameLength + 4, "cumulation not bounded");
  });
  run.finish();
  for (const auto& m : run.messages())
    check(readableBytes(m) <= maxFrameLength, "frame longer than the limit");
  return test::transcriptOf(run);
}

void roundTrip(std::string_view s, const std::vector<std::size_t>& cuts) {
  Varint32LengthFieldPrepender prepender;
  std::vector<AnyByteBuf> wire;
  std::vector<std::string> expected;
  feedSplit(s, cuts, [&](std::string_view payload) {
    ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(payload.size());
    b.writeBytes(payload);
    prepender.write(AnyByteBuf(std::in_place_type<ByteBuf>, std::move(b)), wire);
    expected.emplace_back(payload);
  });
  std::string bytes;
  for (std::size_t i = 0; i < wire.size(); i += 2) {
    const std::string header = readableBytesToString(wire[i]);
    check(header.size() == Varint32LengthFieldPrepender::computeRawVarint32Size(
                               static_cast<std::uint32_t>(readableBytes(wire[i + 1]))),
          "header size");
    bytes += header + readableBytesToString(wire[i + 1]);
  }
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    DecoderRunner<Varint32FrameDecoder> run(std::size_t{1} << 20, c);
    feedSplit(bytes, cuts, [&](std::string_view piece) { run.feed(piece); });
    run.finish();
    check(run.errors().empty(), "round trip: decoding error");
    check(test::transcriptOf(run) == expected, "round trip: frames differ");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t maxFrameLength = static_cast<std::size_t>(data[0]) + 1;
  const FuzzReads reads = splitReads(data, size, 2, data[1] % 8);
  const std::string_view stream = reads.stream;
  const std::vector<std::size_t>& cuts = reads.cuts;
  try {
    const auto merge = decode(maxFrameLength, Cumulator::Merge, stream, cuts);
    const auto composite = decode(maxFrameLength, Cumulator::Composite, stream, cuts);
    check(merge == composite, "cumulators disagree");
    check(merge == model(maxFrameLength, stream), "decoder disagrees with the model");
    roundTrip(stream, cuts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "varint_frame_fuzz: unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
