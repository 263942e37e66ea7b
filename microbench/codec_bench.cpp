// Frame decoder benchmarks: the workload of docs/benchmarks.md (Frame decoders), beside a
// hand-written baseline.
//
// Workload: 100,000 frames with 64-byte payloads arriving in 16 KiB reads. Each read is simulated
// as a socket read would be: a 16 KiB buffer from a PooledByteBufAllocator, filled by memcpy from
// the prepared stream (so the figures include that copy, ~0.25 ns per byte), then handed to the
// decoder. Every decoded frame (a retained slice of the cumulation) is released after decoding,
// once per read, as a handler would.
//
//   length_field/{merge,composite}   LengthFieldBasedFrameDecoder: 4-byte big-endian length,
//                                    stripped (68-byte records)
//   line/{merge,composite}           LineBasedFrameDecoder: 64-character lines ending in CRLF
//   */hand_written                   the loop a user would write without a framework: parse the
//                                    same 16 KiB reads with raw pointers into string_views,
//                                    carrying a partial frame over in a std::string (no
//                                    reference counting, no frames that outlive the read)
//
// items_per_second is frames per second; ns per frame = 1e9 / items_per_second.
#include <benchmark/benchmark.h>

#include <cstring>
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <netbuf/codec/line_based_frame_decoder.hpp>
#include <string>
#include <string_view>
#include <vector>

using namespace netbuf;

namespace {

constexpr std::size_t kFrames = 100'000;
constexpr std::size_t kPayload = 64;
constexpr std::size_t kReadSize = 16 * 1024;
constexpr std::size_t kMaxFrame = 256;  // longer than any record of the workloads

std::string lengthFieldStream() {
  std::string s;
  s.reserve(kFrames * (kPayload + 4));
  for (std::size_t i = 0; i < kFrames; ++i) {
    s += std::string_view("\0\0\0\x40", 4);
    for (std::size_t j = 0; j < kPayload; ++j) s += static_cast<char>('a' + (i + j) % 26);
  }
  return s;
}

std::string lineStream() {
  std::string s;
  s.reserve(kFrames * (kPayload + 2));
  for (std::size_t i = 0; i < kFrames; ++i) {
    for (std::size_t j = 0; j < kPayload; ++j) s += static_cast<char>('a' + (i + j) % 26);
    s += "\r\n";
  }
  return s;
}

PooledByteBufAllocator& pool() {
  static PooledByteBufAllocator* p = new PooledByteBufAllocator();
  return *p;
}

/// What a socket read of the stream at `at` would give: up to kReadSize bytes in a pooled buffer.
ByteBuf simulatedRead(const std::string& stream, std::size_t at) {
  const std::size_t n = std::min(kReadSize, stream.size() - at);
  ByteBuf read = pool().buffer(kReadSize);
  std::memcpy(read.writePtrUnchecked(), stream.data() + at, n);
  read.advanceWriterUnchecked(n);
  return read;
}

/// Feeds the whole stream through decoder in kReadSize reads; releases the frames after each read.
template <class Decoder>
void runDecoder(benchmark::State& state, const std::string& stream, Decoder& decoder) {
  std::vector<AnyByteBuf> out;
  out.reserve(kReadSize / kPayload + 8);
  std::size_t frames = 0;
  for (auto _ : state) {
    for (std::size_t at = 0; at < stream.size(); at += kReadSize) {
      decoder.channelRead(simulatedRead(stream, at), out);
      decoder.channelReadComplete();
      frames += out.size();
      benchmark::DoNotOptimize(out.data());
      out.clear();  // releases every frame
    }
  }
  if (frames != kFrames * state.iterations()) state.SkipWithError("wrong frame count");
  state.SetItemsProcessed(static_cast<std::int64_t>(frames));
}

void lengthField(benchmark::State& state, Cumulator cumulator) {
  static const std::string stream = lengthFieldStream();
  LengthFieldBasedFrameDecoder decoder(ByteOrder::big, 1 << 20, 0, 4, 0, 4, true, cumulator,
                                       pool());
  runDecoder(state, stream, decoder);
}

void line(benchmark::State& state, Cumulator cumulator) {
  static const std::string stream = lineStream();
  LineBasedFrameDecoder decoder(1024, true, false, cumulator, pool());
  runDecoder(state, stream, decoder);
}

/// The baseline: the same reads parsed by hand. Frames are string_views valid during the read; a
/// frame split across reads is assembled in a carry-over string.
template <class NextFrame>
void handWritten(benchmark::State& state, const std::string& stream, NextFrame nextFrame) {
  std::vector<std::string_view> out;
  out.reserve(kReadSize / kPayload + 8);
  std::string carry;
  std::size_t frames = 0;
  for (auto _ : state) {
    for (std::size_t at = 0; at < stream.size(); at += kReadSize) {
      ByteBuf read = simulatedRead(stream, at);
      std::string_view data = read.readableStringView();
      if (!carry.empty()) {
        // Complete the frame split across reads: borrow at most one frame's worth of bytes.
        const std::size_t had = carry.size();
        const std::size_t take = std::min(data.size(), kMaxFrame);
        carry.append(data.substr(0, take));
        std::string_view c = carry;
        if (nextFrame(c, out)) {
          data.remove_prefix(carry.size() - c.size() - had);
          carry.clear();
        } else {
          data.remove_prefix(take);
        }
      }
      while (nextFrame(data, out)) {
      }
      carry.append(data);
      frames += out.size();
      benchmark::DoNotOptimize(out.data());
      out.clear();
    }
  }
  if (frames != kFrames * state.iterations()) state.SkipWithError("wrong frame count");
  state.SetItemsProcessed(static_cast<std::int64_t>(frames));
}

void lengthFieldHandWritten(benchmark::State& state) {
  static const std::string stream = lengthFieldStream();
  handWritten(state, stream, [](std::string_view& d, std::vector<std::string_view>& out) {
    if (d.size() < 4) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(d.data());
    const std::size_t len =
        (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) | (std::size_t{p[2]} << 8) | p[3];
    if (d.size() < 4 + len) return false;
    out.push_back(d.substr(4, len));
    d.remove_prefix(4 + len);
    return true;
  });
}

void lineHandWritten(benchmark::State& state) {
  static const std::string stream = lineStream();
  handWritten(state, stream, [](std::string_view& d, std::vector<std::string_view>& out) {
    const void* lf = std::memchr(d.data(), '\n', d.size());
    if (lf == nullptr) return false;
    std::size_t end = static_cast<std::size_t>(static_cast<const char*>(lf) - d.data());
    const std::size_t next = end + 1;
    if (end > 0 && d[end - 1] == '\r') --end;
    out.push_back(d.substr(0, end));
    d.remove_prefix(next);
    return true;
  });
}

}  // namespace

BENCHMARK_CAPTURE(lengthField, merge, Cumulator::Merge)->Name("length_field/merge");
BENCHMARK_CAPTURE(lengthField, composite, Cumulator::Composite)->Name("length_field/composite");
BENCHMARK(lengthFieldHandWritten)->Name("length_field/hand_written");
BENCHMARK_CAPTURE(line, merge, Cumulator::Merge)->Name("line/merge");
BENCHMARK_CAPTURE(line, composite, Cumulator::Composite)->Name("line/composite");
BENCHMARK(lineHandWritten)->Name("line/hand_written");

BENCHMARK_MAIN();
