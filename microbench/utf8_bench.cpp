// Google Benchmark for the text kernels of <netbuf/buffer/utf8.hpp>. The workloads, operations and
// baselines are defined once in bench_strings.hpp (tools/bench_support/, shared with the tool).
// Names: <operation>/<workload>/<variant>; bytes/s count the operation's input bytes.
//   utf8_bench --benchmark_min_time=0.1 --benchmark_filter='ascii-1024'
#include "bench_strings.hpp"

#include <benchmark/benchmark.h>

#include <iostream>
#include <netbuf/buffer/byte_buf.hpp>
#include <span>

namespace {

using namespace netbuf;

std::vector<bench::Workload>& workloads() {
  static std::vector<bench::Workload> ws = bench::loadWorkloads(NETBUF_BENCH_DATA_DIR);
  return ws;
}

void registerAll() {
  static bench::Destination dst(bench::destinationBytes(workloads()));
  for (const bench::Operation& op : bench::operations()) {
    for (const bench::Workload& w : workloads()) {
      for (bench::Variant v : bench::variantsOf(op)) {
        const std::string name = std::string(op.name) + "/" + w.name + "/" + bench::variantName(v);
        benchmark::RegisterBenchmark(name.c_str(), [&op, &w, v](benchmark::State& state) {
          if (v == bench::Variant::NetbufScalar) utf8::forceIsa(utf8::Isa::Scalar);
          for (auto _ : state) {
            benchmark::DoNotOptimize(bench::runOnce(op, v, w, dst.data()));
            benchmark::ClobberMemory();
          }
          utf8::resetIsa();
          state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                                  static_cast<std::int64_t>(op.inputBytes(w)));
          state.SetLabel(v == bench::Variant::Netbuf ? utf8::isaName(utf8::activeIsa()) : "");
        });
        if (v != bench::Variant::Netbuf) continue;
        // The lower vector tiers, forced, beside the detected one (CPUs without AVX-512 or AVX2
        // run them): netbuf-avx2, netbuf-sse2.
        for (utf8::Isa tier : {utf8::Isa::Avx2, utf8::Isa::Sse2}) {
          if (static_cast<int>(tier) >= static_cast<int>(utf8::detectedIsa())) continue;
          const std::string tierName = std::string(op.name) + "/" + w.name + "/netbuf-" +
                                       (tier == utf8::Isa::Avx2 ? "avx2" : "sse2");
          benchmark::RegisterBenchmark(tierName.c_str(), [&op, &w, tier](benchmark::State& state) {
            utf8::forceIsa(tier);
            for (auto _ : state) {
              benchmark::DoNotOptimize(bench::runOnce(op, bench::Variant::Netbuf, w, dst.data()));
              benchmark::ClobberMemory();
            }
            utf8::resetIsa();
            state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                                    static_cast<std::int64_t>(op.inputBytes(w)));
          });
        }
      }
    }
  }
}

// The same workloads through the ByteBuf API, as a server writes them: into a reused buffer,
// clear() every iteration (Netty's ByteBufUtilBenchmark shape). The buffer wraps page-aligned
// memory, like the destination of the kernel rows and like Netty's pooled buffers.
void registerByteBufRows() {
  static bench::Destination mem(bench::destinationBytes(workloads()));
  const std::size_t bytes = bench::destinationBytes(workloads());
  for (const bench::Workload& w : workloads()) {
    const auto add = [&w, bytes](const char* op, auto body, std::size_t inputBytes) {
      const std::string name = std::string("bytebuf/") + op + "/" + w.name;
      benchmark::RegisterBenchmark(
          name.c_str(), [body, bytes, inputBytes](benchmark::State& state) {
            ByteBuf buf = Unpooled::wrappedUnownedBuffer(std::span<std::byte>(mem.data(), bytes));
            for (auto _ : state) {
              buf.clear();
              benchmark::DoNotOptimize(body(buf));
              benchmark::ClobberMemory();
            }
            state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                                    static_cast<std::int64_t>(inputBytes));
            state.SetLabel(utf8::isaName(utf8::activeIsa()));
          });
    };
    const std::u16string_view u16(w.u16);
    const std::u32string_view u32(w.u32);
    const std::string_view text(w.utf8);
    add(
        "writeAscii", [u16](ByteBuf& b) { return b.writeAscii(u16); }, 2 * u16.size());
    add(
        "writeUtf8/u16", [u16](ByteBuf& b) { return b.writeUtf8(u16); }, 2 * u16.size());
    add(
        "writeUtf8/u32", [u32](ByteBuf& b) { return b.writeUtf8(u32); }, 4 * u32.size());
    add(
        "writeUtf8/validated", [text](ByteBuf& b) { return b.writeUtf8(text); }, text.size());
    add(
        "isValidUtf8",
        [text](ByteBuf& b) {
          b.writeBytes(text);
          return b.isValidUtf8();
        },
        text.size());
    add(
        "readUtf8AsUtf16",  // includes allocating the std::u16string it returns
        [text](ByteBuf& b) {
          b.writeBytes(text);
          return b.readUtf8AsUtf16(text.size()).size();
        },
        text.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    registerAll();
    registerByteBufRows();
  } catch (const std::exception& e) {
    std::cerr << "utf8_bench: " << e.what() << '\n';
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
