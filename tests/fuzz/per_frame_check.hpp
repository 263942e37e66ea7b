#pragma once
// The differential check shared by the fuzz targets of the per-frame decoders
// (MessagePackFrameDecoder, JsonFrameDecoder): the same frames as ByteBufs, as two-component
// CompositeByteBufs, and cut out of a length-prefixed stream by LengthFieldBasedFrameDecoder (as a
// pipeline hands them over) must all give the model's transcript.

#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_input.hpp"
#include "support/decoder_transcript.hpp"
#include "support/test_buffers.hpp"

namespace netbuf::fuzz {

/// Frames through LengthFieldBasedFrameDecoder (2-byte prefixes) fed in reads cut at `cuts`.
inline std::vector<AnyByteBuf> reframe(const std::vector<std::string>& frames,
                                       const std::vector<std::size_t>& cuts, Cumulator c) {
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 65537, 0, 2, 0, 2, true, c);
  run.feedSplitAt(test::lengthPrefixed(frames), cuts);
  run.finish();
  check(run.errors().empty(), "length field framing failed");
  check(run.messages().size() == frames.size(), "length field framing lost frames");
  return std::move(run.messages());
}

/// The frames of a fuzz input: the stream cut at reads.cuts, each followed by an empty frame when
/// emptyAfterEach.
inline std::vector<std::string> framesOf(const FuzzReads& reads, bool emptyAfterEach) {
  std::vector<std::string> frames;
  std::size_t from = 0;
  std::vector<std::size_t> ends = reads.cuts;
  ends.push_back(reads.stream.size());
  for (std::size_t to : ends) {
    frames.emplace_back(reads.stream.substr(from, to - from));
    from = to;
    if (emptyAfterEach) frames.emplace_back();
  }
  return frames;
}

/// The differential check of a per-frame decoder against its model's transcript `want`: the
/// frames fed as ByteBufs, as composites, and cut out of a length-prefixed stream split at the
/// input's cuts (with the given cumulator) must all give `want`, and the decoder must count every
/// byte. Aborts on a mismatch or an unexpected exception (libFuzzer then keeps the input).
template <class Decoder, class Options>
void checkPerFrame(const char* name, const Options& o, const std::vector<std::string>& frames,
                   const FuzzReads& reads, Cumulator cumulator, const test::Transcript& want) {
  try {
    DecoderRunner<Decoder> flat(o);
    DecoderRunner<Decoder> composite(o);
    for (const std::string& f : frames) {
      flat.feed(test::frame(f));
      composite.feed(test::compositeFrame(f));
    }
    flat.finish();
    composite.finish();
    const test::Transcript got = test::transcriptOf(flat);
    if (got != want) {
      std::fprintf(stderr, "%s:\n  decoder %s\n  model   %s\n", name, test::toString(got).c_str(),
                   test::toString(want).c_str());
      fail("decoder disagrees with the model");
    }
    check(test::transcriptOf(composite) == want, "composite frames disagree with the model");
    check(flat.decoder().bytesReceived() == reads.stream.size(), "bytesReceived");

    DecoderRunner<Decoder> piped(o);
    for (AnyByteBuf& f : reframe(frames, reads.cuts, cumulator)) piped.feed(std::move(f));
    piped.finish();
    check(test::transcriptOf(piped) == want, "after LengthFieldBasedFrameDecoder: disagrees");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: unexpected exception: %s\n", name, e.what());
    std::abort();
  }
}

}  // namespace netbuf::fuzz
