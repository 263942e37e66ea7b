// libFuzzer target for LengthFieldBasedFrameDecoder and LengthFieldPrepender.
//
// Input: 5 parameter bytes, a split program, then the stream.
//   byte 0: bit 0 byte order, bit 1 failFast, bits 2..7 field length index (1, 2, 3, 4, 8)
//   byte 1: lengthFieldOffset 0..4        byte 2: lengthAdjustment -8..8
//   byte 3: initialBytesToStrip 0..8      byte 4: maxFrameLength 1..256
//   byte 5: number of cuts (0..7), then one byte per cut: the distance to the previous cut - 1
//   rest:   the stream
// The stream is decoded split at the cuts with both cumulators. Asserted:
//  - both transcripts (frames and errors, with kind, offset, value and limit) are identical, and
//    equal to a trivially correct whole-input model of Netty's algorithm written below;
//  - every frame is at most maxFrameLength - initialBytesToStrip bytes;
//  - between reads the decoder buffers less than maxFrameLength bytes;
//  - no exception other than a CodecError is raised (IllegalArgumentError only for parameters
//    that are invalid by the documented rule).
// Round trip: the stream cut at the same positions gives payloads; LengthFieldPrepender encodes
// them (same field length and byte order, fuzz-chosen adjustment and includes flag) and a decoder
// configured to undo the prepender gives back exactly the payloads that fit the field.
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <netbuf/codec/length_field_prepender.hpp>

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

__extension__ typedef __int128 Int128;

constexpr Int128 kInt64Max = INT64_MAX;

struct Params {
  ByteOrder order;
  bool failFast;
  std::size_t length, offset, strip, maxFrameLength;
  std::int64_t adjustment;
};

std::uint64_t readField(std::string_view s, std::size_t at, std::size_t n, ByteOrder order) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t b = static_cast<unsigned char>(s[at + i]);
    v |= b << (order == ByteOrder::big ? 8 * (n - 1 - i) : 8 * i);
  }
  return v;
}

/// Netty's algorithm over the whole stream at once, with netbuf's error fields.
test::Transcript model(const Params& p, std::string_view s) {
  test::Transcript t;
  const std::size_t end = p.offset + p.length;
  const std::size_t n = s.size();
  std::size_t pos = 0;
  while (n - pos >= end) {
    const std::uint64_t raw = readField(s, pos + p.offset, p.length, p.order);
    if (p.length == 8 && raw > static_cast<std::uint64_t>(INT64_MAX)) {
      t.push_back(test::errorLine("Corrupted", pos, raw, INT64_MAX));
      pos += end;
      continue;
    }
    const Int128 frameLength = Int128{raw} + p.adjustment + static_cast<Int128>(end);
    if (frameLength > kInt64Max) {
      const Int128 addend = Int128{p.adjustment} + static_cast<Int128>(end);
      const std::uint64_t limit =
          addend > kInt64Max ? 0 : static_cast<std::uint64_t>(kInt64Max - addend);
      t.push_back(test::errorLine("Corrupted", pos, raw, limit));
      pos += end;
      continue;
    }
    if (frameLength < static_cast<Int128>(end)) {
      t.push_back(test::errorLine("Corrupted", pos,
                                  frameLength < 0 ? kNone : static_cast<std::uint64_t>(frameLength),
                                  end));
      pos += end;
      continue;
    }
    const auto fl = static_cast<std::uint64_t>(frameLength);
    if (fl > p.maxFrameLength) {
      const bool complete = fl <= n - pos;
      if (p.failFast || complete)
        t.push_back(test::errorLine("TooLong", pos, fl, p.maxFrameLength));
      if (!complete) break;
      pos += static_cast<std::size_t>(fl);
      continue;
    }
    if (fl > n - pos) break;
    if (p.strip > fl) {
      t.push_back(test::errorLine("Corrupted", pos, p.strip, fl));
      pos += static_cast<std::size_t>(fl);
      continue;
    }
    t.emplace_back(s.substr(pos + p.strip, static_cast<std::size_t>(fl) - p.strip));
    pos += static_cast<std::size_t>(fl);
  }
  return t;
}

test::Transcript decode(const Params& p, Cumulator c, std::string_view s,
                        const std::vector<std::size_t>& cuts) {
  DecoderRunner<LengthFieldBasedFrameDecoder> run(p.order, p.maxFrameLength, p.offset, p.length,
                                                  p.adjustment, p.strip, p.failFast, c);
  std::size_t from = 0;
  auto feed = [&](std::size_t to) {
    run.feed(s.substr(from, to - from));
    from = to;
    check(run.decoder().actualReadableBytes() < p.maxFrameLength, "cumulation not bounded");
  };
  for (std::size_t cut : cuts) feed(cut);
  feed(s.size());
  run.finish();
  for (const auto& m : run.messages())
    check(readableBytes(m) + p.strip <= p.maxFrameLength, "frame longer than the limit");
  return test::transcriptOf(run);
}

void roundTrip(const Params& p, std::string_view s, const std::vector<std::size_t>& cuts,
               bool includes) {
  // The prepender's adjustment is kept >= 0 so that only the field size limits what is encoded.
  const std::int64_t prependAdjustment = p.adjustment < 0 ? -p.adjustment : p.adjustment;
  LengthFieldPrepender prepender(p.length, prependAdjustment, includes, p.order);
  std::vector<AnyByteBuf> wire;
  std::vector<std::string> expected;
  std::size_t from = 0;
  std::vector<std::size_t> ends = cuts;
  ends.push_back(s.size());
  for (std::size_t to : ends) {
    const std::string_view payload = s.substr(from, to - from);
    from = to;
    ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(payload.size());
    b.writeBytes(payload);
    const std::uint64_t length =
        payload.size() + static_cast<std::uint64_t>(prependAdjustment) + (includes ? p.length : 0);
    const bool fits = length <= prepender.maxFieldValue();
    try {
      prepender.write(AnyByteBuf(std::in_place_type<ByteBuf>, std::move(b)), wire);
      check(fits, "prepender accepted a length that does not fit");
      expected.emplace_back(payload);
    } catch (const EncoderError& e) {
      check(!fits, "prepender rejected a length that fits");
      check(e.value() == length && e.limit() == prepender.maxFieldValue(), "EncoderError fields");
    }
  }
  std::string bytes;
  for (const auto& b : wire) bytes += readableBytesToString(b);
  const std::int64_t decoderAdjustment =
      -prependAdjustment - (includes ? static_cast<std::int64_t>(p.length) : 0);
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    DecoderRunner<LengthFieldBasedFrameDecoder> run(p.order, 1 << 20, 0, p.length,
                                                    decoderAdjustment, p.length, true, c);
    std::size_t at = 0;
    for (std::size_t cut : cuts) {  // the same cut positions, now over the encoded bytes
      if (cut > bytes.size() || cut < at) continue;
      run.feed(std::string_view(bytes).substr(at, cut - at));
      at = cut;
    }
    run.feed(std::string_view(bytes).substr(at));
    run.finish();
    check(run.errors().empty(), "round trip: decoding error");
    check(test::transcriptOf(run) == expected, "round trip: frames differ");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  static constexpr std::size_t kLengths[] = {1, 2, 3, 4, 8};
  Params p{};
  p.order = (data[0] & 1) != 0 ? ByteOrder::little : ByteOrder::big;
  p.failFast = (data[0] & 2) != 0;
  p.length = kLengths[(data[0] >> 2) % 5];
  p.offset = data[1] % 5;
  p.adjustment = static_cast<std::int64_t>(data[2] % 17) - 8;
  p.strip = data[3] % 9;
  p.maxFrameLength = static_cast<std::size_t>(data[4]) + 1;
  const bool includes = (data[0] & 0x80) != 0;
  const FuzzReads reads = splitReads(data, size, 6, data[5] % 8);
  const std::string_view stream = reads.stream;
  const std::vector<std::size_t>& cuts = reads.cuts;

  const bool valid = p.offset + p.length <= p.maxFrameLength;
  try {
    const auto merge = decode(p, Cumulator::Merge, stream, cuts);
    const auto composite = decode(p, Cumulator::Composite, stream, cuts);
    check(valid, "invalid parameters accepted");
    check(merge == composite, "cumulators disagree");
    check(merge == model(p, stream), "decoder disagrees with the model");
    roundTrip(p, stream, cuts, includes);
  } catch (const IllegalArgumentError&) {
    check(!valid, "valid parameters rejected");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "length_field_fuzz: unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
