// libFuzzer target for JsonFrameDecoder (json_frame_decoder.hpp).
//
// Input: byte 0 flags: bit 0 small limits, bit 1 bigIntegersAsDouble off, bit 2 allowLoneSurrogates
// and extendedTypes, bit 3 the Composite cumulator, bits 4..6 the number of frame cuts (0..7), bit
// 7 an empty frame after every frame; then one byte per cut (the distance to the previous cut - 1);
// the rest is the stream, cut into frames there.
// Asserted:
//  - the transcript (values and errors, test::Transcript) equals a whole-buffer model: a
//    JsonParser over each frame, where UnexpectedEnd and TrailingContent become a
//    CorruptedFrameError at the frame's stream offset plus the parser's offset (value: the frame's
//    length), an empty (or, by UnexpectedEnd, whitespace-only) frame a CorruptedFrameError at its
//    start, and every other JsonError keeps its code, its offset rebased by the frame's stream
//    offset, its line and column, and its value and limit;
//  - each frame as a two-component CompositeByteBuf gives the same transcript;
//  - the frames with 2-byte length prefixes, the wire split into reads at the same cut distances,
//    through LengthFieldBasedFrameDecoder (chosen cumulator, so frames straddling reads arrive as
//    composites) and then the decoder, give the same transcript;
//  - no exception other than a CodecError escapes; bytesReceived() is the stream's length.
#include <netbuf/codec/json/json_frame_decoder.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
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

bool onlyWhitespace(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

Transcript model(const std::vector<std::string>& frames, const JsonParseOptions& o) {
  Transcript t;
  JsonParser parser(o);
  std::uint64_t pos = 0;
  for (const std::string& f : frames) {
    if (f.empty()) {
      t.push_back(corrupted(pos, 0));
      continue;
    }
    try {
      Document d;
      parser.parse(f, d);
      t.push_back(d.root().toDebugString());
    } catch (const JsonError& e) {
      check(e.offset() <= f.size(), "model: offset outside the frame");
      if (e.code() == JsonErrorCode::UnexpectedEnd && onlyWhitespace(f)) {
        t.push_back(corrupted(pos, f.size()));
      } else if (e.code() == JsonErrorCode::UnexpectedEnd ||
                 e.code() == JsonErrorCode::TrailingContent) {
        t.push_back(corrupted(pos + e.offset(), f.size()));
      } else {
        t.push_back(test::describeError(e.rebased(pos)));
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
  JsonParseOptions o;
  if ((flags & 1) != 0) {
    o.maxDepth = 4;
    o.maxDocumentSize = 64;
    o.maxStringLength = 8;
    o.maxNumberLength = 8;
  }
  o.bigIntegersAsDouble = (flags & 2) == 0;
  o.allowLoneSurrogates = o.extendedTypes = (flags & 4) != 0;
  const Cumulator cumulator = (flags & 8) != 0 ? Cumulator::Composite : Cumulator::Merge;
  const FuzzReads reads = splitReads(data, size, 1, (flags >> 4) & 7);
  if (reads.stream.size() > 60000) return 0;  // every frame fits a 2-byte prefix
  const std::vector<std::string> frames = framesOf(reads, (flags & 0x80) != 0);
  checkPerFrame<JsonFrameDecoder>("json_frame_fuzz", o, frames, reads, cumulator, model(frames, o));
  return 0;
}
