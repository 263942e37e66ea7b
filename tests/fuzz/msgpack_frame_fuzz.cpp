// libFuzzer target for MessagePackFrameDecoder (message_pack_frame_decoder.hpp).
//
// Input: byte 0 flags: bit 0 lenientUtf8, bit 1 allowDuplicateKeys, bit 2 small limits, bit 3 the
// Composite cumulator, bits 4..6 the number of frame cuts (0..7), bit 7 an empty frame after every
// frame; then one byte per cut (the distance to the previous cut - 1); the rest is the stream, cut
// into frames there.
// Asserted:
//  - the transcript (values and errors, test::Transcript) equals a whole-buffer model:
//    msgpack::decode of each frame with baseOffset = the frame's stream offset, where Truncated and
//    TrailingBytes become a CorruptedFrameError at the same offset (value: the frame's length), an
//    empty frame a CorruptedFrameError at its start, and every other MessagePackError keeps its
//    code, offset, value and limit;
//  - each frame as a two-component CompositeByteBuf gives the same transcript;
//  - the frames with 2-byte length prefixes, the wire split into reads at the same cut distances,
//    through LengthFieldBasedFrameDecoder (chosen cumulator, so frames straddling reads arrive as
//    composites) and then the decoder, give the same transcript;
//  - no exception other than a CodecError escapes; bytesReceived() is the stream's length.
#include <netbuf/codec/msgpack/message_pack_frame_decoder.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_input.hpp"
#include "per_frame_check.hpp"
#include "support/decoder_transcript.hpp"

namespace {

using namespace netbuf;
using namespace netbuf::fuzz;

using test::Transcript;

std::string corrupted(std::uint64_t offset, std::uint64_t length) {
  return test::errorLine("Corrupted", offset, length);
}

Transcript model(const std::vector<std::string>& frames, const MessagePackReadOptions& o) {
  Transcript t;
  std::uint64_t pos = 0;
  for (const std::string& f : frames) {
    if (f.empty()) {
      t.push_back(corrupted(pos, 0));
      continue;
    }
    try {
      Document d;
      msgpack::decode(std::span(reinterpret_cast<const std::byte*>(f.data()), f.size()), d, o, pos);
      t.push_back(d.root().toDebugString());
    } catch (const MessagePackError& e) {
      check(e.offset() >= pos && e.offset() <= pos + f.size(), "model: offset outside the frame");
      if (e.code() == MessagePackErrc::Truncated || e.code() == MessagePackErrc::TrailingBytes) {
        t.push_back(corrupted(e.offset(), f.size()));
      } else {
        t.push_back(test::describeError(e));
      }
    }
    pos += f.size();
  }
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  MessagePackReadOptions o;
  o.lenientUtf8 = (flags & 1) != 0;
  o.allowDuplicateKeys = (flags & 2) != 0;
  if ((flags & 4) != 0) {
    o.limits.maxDepth = 4;
    o.limits.maxContainerLength = 8;
    o.limits.maxStrLength = o.limits.maxBinLength = o.limits.maxExtLength = 16;
    o.limits.maxMessageSize = 64;
  }
  const Cumulator cumulator = (flags & 8) != 0 ? Cumulator::Composite : Cumulator::Merge;
  const FuzzReads reads = splitReads(data, size, 1, (flags >> 4) & 7);
  if (reads.stream.size() > 60000) return 0;  // every frame fits a 2-byte prefix
  const std::vector<std::string> frames = framesOf(reads, (flags & 0x80) != 0);
  checkPerFrame<MessagePackFrameDecoder>("msgpack_frame_fuzz", o, frames, reads, cumulator,
                                         model(frames, o));
  return 0;
}
