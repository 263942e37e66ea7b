// LatencyHistogram (see latency_histogram.hpp for the bucket layout and the guarantees).
#include "latency_histogram.hpp"
// (first include: proves the header is self-contained)

#include <algorithm>
#include <cmath>

namespace netbuf::tools {

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::size_t k = 0; k < kBuckets; ++k) counts_[k] += other.counts_[k];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

void LatencyHistogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  max_ = 0;
  min_ = UINT64_MAX;
}

std::uint64_t LatencyHistogram::highestOf(std::size_t index) noexcept {
  if (index < kSubBuckets) return index;
  const std::size_t shift = index / kSubBuckets - 1;
  const std::uint64_t mantissa = kSubBuckets + index % kSubBuckets;
  const std::uint64_t low = mantissa << shift;
  return low + ((std::uint64_t{1} << shift) - 1);
}

std::uint64_t LatencyHistogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t k = 0; k < kBuckets; ++k) {
    seen += counts_[k];
    if (seen >= rank) return std::clamp(highestOf(k), min(), max_);
  }
  return max_;
}

}  // namespace netbuf::tools
