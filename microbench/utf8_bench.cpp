// Google Benchmark for the text kernels of <netbuf/buffer/utf8.hpp>. The workloads, operations and
// baselines are defined once in tools/bench_strings.hpp (shared with `netbuf bench strings`).
// Names: <operation>/<workload>/<variant>; bytes/s count the operation's input bytes.
//   utf8_bench --benchmark_min_time=0.1 --benchmark_filter='ascii-1024'
#include "../tools/bench_strings.hpp"

#include <benchmark/benchmark.h>

#include <iostream>

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

}  // namespace

int main(int argc, char** argv) {
  try {
    registerAll();
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
