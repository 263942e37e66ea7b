#pragma once
// PoolChunk: one mapping of numPages pages from which an arena carves runs.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace netbuf::detail {

struct PoolArena;
struct Subpage;

/// A chunk of numPages pages from mmap. Guarded by its arena's mutex.
struct PoolChunk {
  PoolArena* arena = nullptr;
  std::byte* memory = nullptr;
  std::uint32_t numPages = 0;
  std::uint32_t freePages = 0;
  std::uint64_t emptySince = 0;     // PoolArena::runAllocations when the chunk last became empty
  std::vector<std::uint64_t> used;  // bit per page
  std::vector<std::uint32_t> runLength;  // at a run's first page: its length in pages
  std::vector<Subpage*> subpageOf;       // every page of a small run: its subpage

  bool isUsed(std::size_t p) const noexcept { return (used[p / 64] >> (p % 64)) & 1; }
  void mark(std::size_t first, std::size_t n, bool on) noexcept {
    // A word at a time (a 1 MiB run is 128 pages: 2 words, not 128 bit operations).
    for (std::size_t p = first, end = first + n; p < end;) {
      const std::size_t bit = p % 64, k = std::min<std::size_t>(64 - bit, end - p);
      const std::uint64_t m = (k == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1) << bit;
      if (on)
        used[p / 64] |= m;
      else
        used[p / 64] &= ~m;
      p += k;
    }
  }
  /// Best fit: the first page of the shortest maximal free span of at least n pages (the lowest
  /// such span on ties), its length in `spanLength`; SIZE_MAX if no span is long enough. Filling
  /// the tightest hole keeps long spans, and the tails of chunks, whole for long runs; first fit
  /// (lowest address) breaks them up, and leaves a long-lived mixed workload holding about 13 % of
  /// its chunk bytes as page holes too short for the runs it asks for.
  std::size_t bestRun(std::size_t n, std::size_t& spanLength) const noexcept {
    std::size_t best = SIZE_MAX, bestLength = SIZE_MAX;
    std::size_t p = 0;
    while (p < numPages) {
      // Skip used pages a word at a time.
      const std::uint64_t w = used[p / 64] >> (p % 64);
      if (w & 1) {
        const std::uint64_t freeBits = ~w;
        p += freeBits == 0 ? 64 - p % 64 : static_cast<std::size_t>(std::countr_zero(freeBits));
        continue;
      }
      std::size_t q = p;
      while (q < numPages && !isUsed(q)) {
        const std::uint64_t u = used[q / 64] >> (q % 64);
        q += u == 0 ? 64 - q % 64 : static_cast<std::size_t>(std::countr_zero(u));
      }
      q = std::min(q, std::size_t{numPages});
      const std::size_t length = q - p;
      if (length >= n && length < bestLength) {
        best = p;
        bestLength = length;
        if (length == n) break;
      }
      p = q;
    }
    spanLength = bestLength;
    return best;
  }
};

}  // namespace netbuf::detail
