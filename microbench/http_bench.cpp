// HTTP request parsing: netbuf's HttpRequestDecoder beside Node's http-parser 2.9.4, on the
// workloads of tools/bench_support/bench_http.hpp (shared with `netbuf bench http`), the rows of
// docs/benchmarks.md (HTTP parsing):
//
//   get/{netbuf,http_parser}       picohttpparser's 703-byte browser GET (11 fields)
//   chunked/{netbuf,http_parser}   a chunked JSON upload: 7 fields, 4 chunks with extensions, a
//                                  trailer (2203 bytes)
//
// netbuf produces the request head with field views into a retained slice, the body parts as
// slices and the LastHttpContent; http-parser records the same views through its callbacks.
// Without libhttp-parser-dev the http_parser rows are skipped (SkipWithError).
#include <benchmark/benchmark.h>

#include "bench_http.hpp"

namespace {

using netbuf::bench::HttpParseRunner;

const netbuf::bench::HttpWorkload& workload(int i) {
  static const auto kWorkloads = netbuf::bench::httpWorkloads();
  return kWorkloads.at(static_cast<std::size_t>(i));
}

void run(benchmark::State& state, std::unique_ptr<HttpParseRunner> r, std::size_t bytes) {
  if (r == nullptr) {
    state.SkipWithError("http-parser (libhttp-parser-dev) was not found at build time");
    return;
  }
  for (auto _ : state) r->parseOnce();
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void netbufParse(benchmark::State& state, int w) {
  run(state, netbuf::bench::netbufRunner(workload(w)), workload(w).bytes.size());
}
void httpParserParse(benchmark::State& state, int w) {
  run(state, netbuf::bench::httpParserRunner(workload(w)), workload(w).bytes.size());
}

}  // namespace

BENCHMARK_CAPTURE(netbufParse, get, 0)->Name("get/netbuf");
BENCHMARK_CAPTURE(httpParserParse, get, 0)->Name("get/http_parser");
BENCHMARK_CAPTURE(netbufParse, chunked, 1)->Name("chunked/netbuf");
BENCHMARK_CAPTURE(httpParserParse, chunked, 1)->Name("chunked/http_parser");

BENCHMARK_MAIN();
