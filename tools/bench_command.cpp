// `netbuf bench strings`: runs the shared string workloads (bench_support/bench_strings.hpp) with a
// steady_clock timing loop and prints a JMH-like table (or one JSON object): one row per operation
// and workload, netbuf's throughput and its ratio to each baseline.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_writer.hpp>

#include "bench_strings.hpp"
#include "commands.hpp"

namespace netbuf::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  double seconds = 3.0;
  bool json = false;
  std::string dataDir;
};

/// v rounded to `digits` decimals: JSON output keeps the precision the measurement has.
double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

// Keeps results observable so the compiler cannot drop the measured calls.
volatile std::size_t gSink = 0;

/// Nanoseconds per call of `variant`, measured for about `budget` seconds.
double measure(const bench::Operation& op, bench::Variant variant, const bench::Workload& w,
               std::byte* dst, double budget) {
  if (variant == bench::Variant::NetbufScalar) utf8::forceIsa(utf8::Isa::Scalar);
  std::size_t sink = 0;
  // Warm up and calibrate: double the batch until it takes ~1/20 of the budget.
  std::size_t batch = 1;
  double perCall = 0;
  for (;;) {
    const auto t0 = Clock::now();
    for (std::size_t k = 0; k < batch; ++k) sink += bench::runOnce(op, variant, w, dst);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    perCall = dt / static_cast<double>(batch);
    if (dt >= budget / 20 || batch >= (std::size_t{1} << 30)) break;
    batch *= 2;
  }
  // Best of several rounds: the least disturbed estimate on a shared machine.
  const auto rounds = static_cast<std::size_t>(
      std::max(1.0, budget / std::max(perCall, 1e-9) / static_cast<double>(batch)));
  double best = perCall;
  for (std::size_t r = 0; r < std::min<std::size_t>(rounds, 19); ++r) {
    const auto t0 = Clock::now();
    for (std::size_t k = 0; k < batch; ++k) sink += bench::runOnce(op, variant, w, dst);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() /
                              static_cast<double>(batch));
  }
  utf8::resetIsa();
  gSink = gSink + sink;
  return best * 1e9;
}

struct Row {
  std::string op, workload;
  std::size_t inputBytes;
  double ns[5] = {0, 0, 0, 0, 0};  // indexed by Variant; 0 = not measured
  bool has[5] = {false, false, false, false, false};
};

int benchStrings(const Options& opt) {
  const std::vector<bench::Workload> workloads = bench::loadWorkloads(opt.dataDir);
  bench::Destination dst(bench::destinationBytes(workloads));
  const auto& ops = bench::operations();
  std::size_t total = 0;
  for (const auto& op : ops) total += workloads.size() * bench::variantsOf(op).size();
  const double budget = opt.seconds / static_cast<double>(total);

  std::vector<Row> rows;
  std::size_t done = 0;
  // The progress line rewrites itself with \r: only worth printing on a terminal.
  const bool progress = isatty(fileno(stderr)) != 0;
  for (const auto& op : ops) {
    for (const auto& w : workloads) {
      Row row{op.name, w.name, op.inputBytes(w)};
      for (bench::Variant v : bench::variantsOf(op)) {
        ++done;
        if (progress) {
          std::fprintf(stderr, "\r[%3zu/%zu] %-20s %-11s %-14s", done, total, op.name,
                       w.name.c_str(), bench::variantName(v));
          std::fflush(stderr);
        }
        row.ns[static_cast<int>(v)] = measure(op, v, w, dst.data(), budget);
        row.has[static_cast<int>(v)] = true;
      }
      rows.push_back(row);
    }
  }
  if (progress) std::fprintf(stderr, "\r%-70s\r", "");

  const char* isa = utf8::isaName(utf8::detectedIsa());
  using V = bench::Variant;
  auto ratio = [](const Row& r, V base) {
    return r.has[static_cast<int>(base)] ? r.ns[static_cast<int>(base)] / r.ns[0] : 0.0;
  };
  if (opt.json) {
    ByteBuf out = Unpooled::buffer(4096);
    {
      JsonStreamWriter w(out);
      w.beginObject();
      w.key("isa");
      w.value(isa);
      w.key("seconds");
      w.value(opt.seconds);
      w.key("results");
      w.beginArray();
      for (const Row& r : rows) {
        w.beginObject();
        w.key("benchmark");
        w.value(r.op);
        w.key("workload");
        w.value(r.workload);
        w.key("input_bytes");
        w.value(r.inputBytes);
        for (V v : {V::Netbuf, V::NetbufScalar, V::Loop, V::Codecvt, V::Memcpy}) {
          if (!r.has[static_cast<int>(v)]) continue;
          const double ns = r.ns[static_cast<int>(v)];
          w.key(bench::variantName(v));
          w.beginObject();
          w.key("ns_per_op");
          w.value(rounded(ns, 3));
          w.key("ops_per_s");
          w.value(static_cast<std::uint64_t>(std::llround(1e9 / ns)));
          w.key("mb_per_s");
          w.value(rounded(static_cast<double>(r.inputBytes) / ns * 1e3, 1));
          w.endObject();
        }
        w.key("ratio");
        w.beginObject();
        w.key("scalar_loop");
        w.value(rounded(ratio(r, V::Loop), 3));
        w.key("codecvt");
        w.value(rounded(ratio(r, V::Codecvt), 3));
        w.key("memcpy");
        w.value(rounded(ratio(r, V::Memcpy), 3));
        w.endObject();
        w.endObject();
      }
      w.endArray();
      w.endObject();
    }
    out.writeByte('\n');
    std::fwrite(out.readableStringView().data(), 1, out.readableBytes(), stdout);
    return kExitOk;
  }
  std::printf("netbuf bench strings (ISA %s, %.1f s)\n", isa, opt.seconds);
  std::printf(
      "ratios are baseline time / netbuf time (x: netbuf is that many times faster; for\n"
      "memcpy, the fraction of memcpy speed reached)\n\n");
  std::printf("%-32s %14s %10s %9s %9s %9s %9s\n", "Benchmark", "ops/s", "MB/s", "vs-tier0",
              "vs-loop", "vs-cvt", "vs-memcpy");
  for (const Row& r : rows) {
    const std::string name = r.op + "/" + r.workload;
    const double ns = r.ns[0];
    char cvt[16] = "      n/a";
    if (r.has[static_cast<int>(V::Codecvt)])
      std::snprintf(cvt, sizeof cvt, "%8.2fx", ratio(r, V::Codecvt));
    std::printf("%-32s %14.0f %10.1f %8.2fx %8.2fx %9s %8.2fx\n", name.c_str(), 1e9 / ns,
                static_cast<double>(r.inputBytes) / ns * 1e3, ratio(r, V::NetbufScalar),
                ratio(r, V::Loop), cvt, ratio(r, V::Memcpy));
  }
  std::printf("\nvs-tier0: netbuf's own scalar tier (forced); MB/s counts input bytes.\n");
  return kExitOk;
}

}  // namespace

int runBenchStrings(const ParsedOptions& options) {
  Options opt;
  opt.seconds = options.seconds("--seconds", 3600, true);
  opt.json = options.flag("--json");
  opt.dataDir = options.text("--data");
  return benchStrings(opt);
}

}  // namespace netbuf::tools
