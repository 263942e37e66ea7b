// Tests of tools/bench_support/latency_histogram.hpp: bucket accuracy, percentiles, merge.
#include "latency_histogram.hpp"
// (first include: proves the header is self-contained)

#include <doctest/doctest.h>

#include <cstdint>
#include <random>

using netbuf::tools::LatencyHistogram;

TEST_CASE("LatencyHistogram: exact below 128, within 1% above, percentiles by nearest rank") {
  LatencyHistogram h;
  CHECK(h.count() == 0);
  CHECK(h.percentile(0.5) == 0);
  CHECK(h.max() == 0);
  CHECK(h.min() == 0);

  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  CHECK(h.count() == 100);
  CHECK(h.percentile(0.50) == 50);
  CHECK(h.percentile(0.99) == 99);
  CHECK(h.percentile(0.999) == 100);
  CHECK(h.percentile(1.0) == 100);
  CHECK(h.percentile(0.0) == 1);
  CHECK(h.min() == 1);
  CHECK(h.max() == 100);

  h.reset();
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v * 1000);  // 1 us .. 100 ms
  auto near = [](std::uint64_t got, double want) {
    return static_cast<double>(got) >= want * 0.99 && static_cast<double>(got) <= want * 1.01;
  };
  CHECK(near(h.percentile(0.50), 50'000'000.0));
  CHECK(near(h.percentile(0.99), 99'000'000.0));
  CHECK(near(h.percentile(0.999), 99'900'000.0));
  CHECK(h.max() == 100'000'000);
  CHECK(h.percentile(1.0) == 100'000'000);

  // Every value maps to a bucket whose highest value is >= it and within 1/128 of it.
  std::mt19937_64 rng(12345);
  for (int k = 0; k < 100000; ++k) {
    const std::uint64_t v = rng() >> (rng() % 64);
    const std::size_t i = LatencyHistogram::indexOf(v);
    REQUIRE(i < LatencyHistogram::kBuckets);
    const std::uint64_t hi = LatencyHistogram::highestOf(i);
    REQUIRE(hi >= v);
    REQUIRE(static_cast<double>(hi - v) <= static_cast<double>(v) / 128.0);
  }
  CHECK(LatencyHistogram::indexOf(UINT64_MAX) == LatencyHistogram::kBuckets - 1);

  // Skewed: 990 fast, 9 slow, 1 very slow.
  LatencyHistogram a, b;
  for (int k = 0; k < 990; ++k) a.record(10);
  for (int k = 0; k < 9; ++k) b.record(5000);
  b.record(1'000'000);
  a.merge(b);
  CHECK(a.count() == 1000);
  CHECK(a.percentile(0.50) == 10);
  CHECK(a.percentile(0.99) == 10);
  CHECK(near(a.percentile(0.999), 5000.0));
  CHECK(a.max() == 1'000'000);
  CHECK(a.min() == 10);
}
