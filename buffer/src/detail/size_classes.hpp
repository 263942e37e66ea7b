#pragma once
// SizeClasses: the pool's table of size classes, and the lookup from a request to its class.

#include <netbuf/buffer/detail/pool_fast_path.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace netbuf::detail {

/// Size classes: quantum 16 up to 64, then 4 classes per doubling (jemalloc / Netty SizeClasses).
/// Classes below 4 x pageSize are "small": slots carved from a run whose length is the least
/// common multiple of the slot and the page (so 10 KiB slots come 4 to a 5-page run, with no
/// waste). From 4 x pageSize up, every class is a whole number of pages and is "normal": a run.
/// chunkSize is the last class.
struct SizeClasses {
  std::size_t pageSize = 0;
  unsigned pageShift = 0;
  std::size_t chunkSize = 0;
  std::size_t numPages = 0;
  std::vector<std::uint32_t> sizes;
  std::vector<std::uint32_t> runPages;      // pages per run
  std::vector<std::uint32_t> slotsPerRun;   // small: slots; normal: 1
  std::size_t smallLimit = 0;               // min(4 x pageSize, chunkSize)
  std::vector<std::uint16_t> smallLookup;   // (n + 15) >> 4 -> class, n in [0, smallLimit]
  std::vector<std::uint16_t> normalLookup;  // pages -> class, n in (smallLimit, chunkSize]
  unsigned numSmall = 0;

  /// Builds the table for pages of `page` bytes and chunks of `chunk` bytes (both powers of two,
  /// page <= chunk; validated by the allocator's constructor).
  void init(std::size_t page, std::size_t chunk);

  std::uint16_t firstAtLeast(std::size_t n) const {
    auto it = std::lower_bound(sizes.begin(), sizes.end(), n);
    return static_cast<std::uint16_t>(it - sizes.begin());
  }
  /// n <= chunkSize.
  unsigned classOf(std::size_t n) const noexcept {
    return n <= smallLimit ? smallLookup[smallClassIndex(n)]
                           : normalLookup[(n + pageSize - 1) >> pageShift];
  }
};

}  // namespace netbuf::detail
