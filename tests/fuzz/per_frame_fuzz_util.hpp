#pragma once
// Helpers shared by the fuzz targets of the per-frame decoders (MessagePackFrameDecoder,
// JsonFrameDecoder): frames as a ByteBuf or a two-component CompositeByteBuf, and frames cut out
// of a length-prefixed stream by LengthFieldBasedFrameDecoder, as a pipeline would hand them over.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_util.hpp"

namespace netbuf::fuzz {

inline AnyByteBuf byteBufFrame(std::string_view f) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(f.size());
  b.writeBytes(f);
  return AnyByteBuf(std::in_place_type<ByteBuf>, std::move(b));
}

/// f as a composite of its two halves.
inline AnyByteBuf compositeFrame(std::string_view f) {
  auto& alloc = ByteBufAllocator::defaultAllocator();
  CompositeByteBuf c = alloc.compositeBuffer();
  const std::size_t half = f.size() / 2;
  for (std::string_view part : {f.substr(0, half), f.substr(half)}) {
    ByteBuf b = alloc.buffer(part.size());
    b.writeBytes(part);
    c.addComponent(true, std::move(b));
  }
  return AnyByteBuf(std::move(c));
}

/// Frames through LengthFieldBasedFrameDecoder (2-byte prefixes) fed in reads cut at `cuts`.
inline std::vector<AnyByteBuf> reframe(const std::vector<std::string>& frames,
                                       const std::vector<std::size_t>& cuts, Cumulator c) {
  std::string wire;
  for (const std::string& f : frames) {
    wire.push_back(static_cast<char>(f.size() >> 8));
    wire.push_back(static_cast<char>(f.size() & 0xff));
    wire += f;
  }
  DecoderRunner<LengthFieldBasedFrameDecoder> run(ByteOrder::big, 65537, 0, 2, 0, 2, true, c);
  run.feedSplitAt(wire, cuts);
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
/// byte. transcript(runner) renders what a DecoderRunner<Decoder> produced. Aborts on a mismatch
/// or an unexpected exception (libFuzzer then keeps the input).
template <class Decoder, class Options, class Transcript>
void checkPerFrame(const char* name, const Options& o, const std::vector<std::string>& frames,
                   const FuzzReads& reads, Cumulator cumulator,
                   const std::vector<std::string>& want, Transcript transcript) {
  try {
    DecoderRunner<Decoder> flat(o);
    DecoderRunner<Decoder> composite(o);
    for (const std::string& f : frames) {
      flat.feed(byteBufFrame(f));
      composite.feed(compositeFrame(f));
    }
    flat.finish();
    composite.finish();
    check(transcript(flat) == want, "decoder disagrees with the model");
    check(transcript(composite) == want, "composite frames disagree with the model");
    check(flat.decoder().bytesReceived() == reads.stream.size(), "bytesReceived");

    DecoderRunner<Decoder> piped(o);
    for (AnyByteBuf& f : reframe(frames, reads.cuts, cumulator)) piped.feed(std::move(f));
    piped.finish();
    check(transcript(piped) == want, "after LengthFieldBasedFrameDecoder: disagrees");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: unexpected exception: %s\n", name, e.what());
    std::abort();
  }
}

}  // namespace netbuf::fuzz
