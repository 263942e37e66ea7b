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
  static std::vector<std::byte> dst(bench::destinationBytes(workloads()));
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
