// libFuzzer target for JsonObjectDecoder.
//
// Input layout: byte 0-1 maxObjectLength (1..512), byte 2 bit 0 streamArrayElements and bits 1-7
// maxDepth (1..16), bytes 3-6 read sizes (cycled, 1..64 bytes each); the rest is the stream.
//
// The stream is decoded three ways: split into those reads with the Merge and with the Composite
// cumulator, and whole in one read. Invariants:
//  - the three transcripts (frames and errors with kind, offset, value and limit) are identical;
//  - no exception other than a CodecError comes out;
//  - every frame is non-empty and at most maxObjectLength bytes; without streaming it starts with
//    '{' or '[' and ends with '}' or ']'; a streamed element has no surrounding whitespace;
//  - errors carry the configured limits, and their offsets grow and lie inside the stream;
//  - after each read the decoder holds at most maxObjectLength bytes (stronger than the bound
//    maxObjectLength + largest read: the decoder consumes everything but the value in progress);
//  - for inputs that contain no error, the frames equal those of a simple reference framer below
//    (whole input at once, Netty's backward count of backslashes before a quote).
#include <netbuf/codec/json_object_decoder.hpp>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/decoder_runner.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/decoder_transcript.hpp"

namespace {

using namespace netbuf;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

struct Params {
  std::size_t maxObjectLength = 1;
  bool stream = false;
  std::size_t maxDepth = 1;
  std::uint8_t reads[4] = {1, 1, 1, 1};
};

bool isWs(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool isOpen(char c) { return c == '{' || c == '['; }
bool isClose(char c) { return c == '}' || c == ']'; }

struct Result {
  std::vector<std::string> frames;
  test::Transcript transcript;  // frames and errors in order
};

/// Decodes stream in reads (sizes cycled from p.reads; whole when whole is set).
Result run(const Params& p, std::string_view stream, Cumulator cumulator, bool whole) {
  DecoderRunner<JsonObjectDecoder> r(p.maxObjectLength, p.stream, p.maxDepth, cumulator);
  try {
    if (whole) {
      r.feed(stream);
      require(r.decoder().actualReadableBytes() <= p.maxObjectLength);
    } else {
      std::size_t at = 0;
      for (std::size_t k = 0; at < stream.size(); ++k) {
        const std::size_t n = 1 + p.reads[k % 4] % 64;
        r.feed(stream.substr(at, n));
        at += n;
        require(r.decoder().actualReadableBytes() <= p.maxObjectLength);
      }
    }
    r.finish();
  } catch (...) {
    require(false);  // no exception other than a (recorded) CodecError may escape
  }
  Result res;
  res.transcript = test::transcriptOf(r);
  for (const AnyByteBuf& m : r.messages()) res.frames.push_back(readableBytesToString(m));
  // Error fields: the configured limits, offsets in order and inside the stream.
  std::uint64_t last = 0;
  for (const auto& rec : r.errors()) {
    try {
      std::rethrow_exception(rec.error);
    } catch (const TooLongFrameError& x) {
      require(x.value() == p.maxObjectLength + 1 && x.limit() == p.maxObjectLength);
      require(x.offset() >= last && x.offset() < stream.size());
      last = x.offset();
    } catch (const CorruptedFrameError& x) {
      if (x.limit() == CodecError::kNone) {  // junk: the offending byte itself
        require(x.offset() < stream.size());
        require(static_cast<unsigned char>(stream[x.offset()]) == x.value());
      } else {
        require(x.value() == p.maxDepth + 1 && x.limit() == p.maxDepth);
      }
      require(x.offset() >= last && x.offset() < stream.size());
      last = x.offset();
    } catch (...) {
      require(false);
    }
  }
  return res;
}

/// Netty-style framer over the whole input. Returns nullopt when the decoder would report an
/// error (junk, too long, too deep); otherwise the frames (an incomplete last value yields none).
std::optional<std::vector<std::string>> reference(const Params& p, std::string_view s) {
  std::vector<std::string> frames;
  const std::size_t n = s.size();
  // Whether the quote at i closes a string: an even number of backslashes precede it.
  auto unescaped = [&](std::size_t i) {
    std::size_t k = 0;
    while (i > 0 && s[i - 1] == '\\') {
      ++k;
      --i;
    }
    return k % 2 == 0;
  };
  std::size_t i = 0;
  while (i < n) {
    const char c = s[i];
    if (isWs(c)) {
      ++i;
      continue;
    }
    if (!isOpen(c)) return std::nullopt;
    if (c == '[' && p.stream) {
      ++i;
      for (;;) {
        while (i < n && isWs(s[i])) ++i;
        const std::size_t start = i;
        std::size_t depth = 1;
        bool str = false;
        std::size_t j = start;
        for (; j < n; ++j) {
          const char b = s[j];
          if (!str && depth == 1 && (b == ',' || isClose(b))) break;
          if (j - start >= p.maxObjectLength) return std::nullopt;
          if (str) {
            if (b == '"' && unescaped(j)) str = false;
          } else if (b == '"') {
            str = true;
          } else if (isOpen(b)) {
            if (++depth > p.maxDepth) return std::nullopt;
          } else if (isClose(b)) {
            --depth;
          }
        }
        if (j == n) return frames;  // incomplete element
        std::size_t end = j;
        while (end > start && isWs(s[end - 1])) --end;
        if (end > start) frames.emplace_back(s.substr(start, end - start));
        i = j + 1;
        if (isClose(s[j])) break;
      }
      continue;
    }
    std::size_t depth = 0;
    bool str = false;
    std::size_t j = i;
    bool closed = false;
    for (; j < n; ++j) {
      const char b = s[j];
      if (j - i >= p.maxObjectLength) return std::nullopt;
      if (str) {
        if (b == '"' && unescaped(j)) str = false;
      } else if (b == '"') {
        str = true;
      } else if (isOpen(b)) {
        if (++depth > p.maxDepth) return std::nullopt;
      } else if (isClose(b) && --depth == 0) {
        closed = true;
        break;
      }
    }
    if (!closed) return frames;
    frames.emplace_back(s.substr(i, j + 1 - i));
    i = j + 1;
  }
  return frames;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 7) return 0;
  Params p;
  p.maxObjectLength = 1 + (static_cast<std::size_t>(data[0]) | (std::size_t{data[1]} << 8)) % 512;
  p.stream = (data[2] & 1) != 0;
  p.maxDepth = 1 + (data[2] >> 1) % 16;
  for (int k = 0; k < 4; ++k) p.reads[k] = data[3 + k];
  const std::string_view stream(reinterpret_cast<const char*>(data + 7), size - 7);

  const Result merge = run(p, stream, Cumulator::Merge, false);
  const Result composite = run(p, stream, Cumulator::Composite, false);
  const Result whole = run(p, stream, Cumulator::Merge, true);
  require(merge.transcript == composite.transcript);
  require(merge.transcript == whole.transcript);

  for (const std::string& f : merge.frames) {
    require(!f.empty() && f.size() <= p.maxObjectLength);
    require(!isWs(f.front()) && !isWs(f.back()));
    if (!p.stream) require(isOpen(f.front()) && isClose(f.back()));
  }

  if (const auto ref = reference(p, stream)) {
    require(merge.transcript.size() == merge.frames.size());  // no error reported
    require(*ref == merge.frames);
  }
  return 0;
}
