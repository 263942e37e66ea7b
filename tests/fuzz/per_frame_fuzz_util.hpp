#pragma once
// Helpers shared by the fuzz targets of the per-frame decoders (MessagePackFrameDecoder,
// JsonFrameDecoder): frames as a ByteBuf or a two-component CompositeByteBuf, and frames cut out
// of a length-prefixed stream by LengthFieldBasedFrameDecoder, as a pipeline would hand them over.

#include <cstddef>
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

}  // namespace netbuf::fuzz
