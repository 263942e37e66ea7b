#pragma once
// LatencyHistogram: the latency record of the load generators (echo_load.hpp, rpc_load.hpp).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace netbuf::tools {

/// A log-linear (HDR-like) histogram of non-negative integers (nanoseconds here): values below 128
/// are exact; above, each power of two is split into 128 buckets, so a reported value is within
/// 1/128 (< 0.8%) of the recorded one. Fixed size (about 58 KiB), no allocation after construction.
/// Not thread-safe: one per thread, merged afterwards.
class LatencyHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr std::size_t kSubBuckets = std::size_t{1} << kSubBucketBits;
  static constexpr std::size_t kBuckets = (64 - kSubBucketBits + 1) * kSubBuckets;

  LatencyHistogram();

  void record(std::uint64_t value) noexcept {
    ++counts_[indexOf(value)];
    ++count_;
    if (value > max_) max_ = value;
    if (value < min_) min_ = value;
  }
  void merge(const LatencyHistogram& other) noexcept;
  void reset() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  /// Exact extremes of the recorded values (0 when empty).
  std::uint64_t max() const noexcept { return max_; }
  std::uint64_t min() const noexcept { return count_ == 0 ? 0 : min_; }
  /// The value at quantile q in [0, 1] (nearest rank: the smallest recorded value v such that at
  /// least q of the values are <= v), reported as the highest value of its bucket, clamped to
  /// [min(), max()]. 0 when empty.
  std::uint64_t percentile(double q) const noexcept;

  static std::size_t indexOf(std::uint64_t value) noexcept {
    if (value < kSubBuckets) return static_cast<std::size_t>(value);
    const unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(value));  // >= kSubBucketBits
    const unsigned shift = e - kSubBucketBits;
    return (shift + 1) * kSubBuckets + static_cast<std::size_t>((value >> shift) - kSubBuckets);
  }
  /// The highest value that lands in bucket `index`.
  static std::uint64_t highestOf(std::size_t index) noexcept;

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = UINT64_MAX;
};

}  // namespace netbuf::tools
