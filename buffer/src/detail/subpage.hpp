#pragma once
// Subpage: a run of a chunk split into equal slots of one small size class.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace netbuf::detail {

struct PoolChunk;

/// A small run: equal slots, a bitmap (1 = in use), on its arena's per-class list while it has a
/// free slot. Guarded by the arena mutex.
struct Subpage {
  PoolChunk* chunk = nullptr;
  std::uint32_t firstPage = 0;
  std::uint32_t slotSize = 0;
  std::uint32_t numSlots = 0;
  std::uint32_t numFree = 0;
  std::uint32_t searchWord = 0;
  std::uint16_t sizeClass = 0;
  Subpage* prev = nullptr;
  Subpage* next = nullptr;
  bool listed = false;
  std::vector<std::uint64_t> bitmap;

  std::uint32_t take() noexcept {
    const std::size_t words = bitmap.size();
    for (std::size_t k = 0; k < words; ++k) {
      const std::size_t w = (searchWord + k) % words;
      const std::uint64_t free = ~bitmap[w];
      if (free == 0) continue;
      const unsigned bit = static_cast<unsigned>(std::countr_zero(free));
      const std::uint32_t slot = static_cast<std::uint32_t>(w * 64 + bit);
      if (slot >= numSlots) continue;  // padding bits of the last word are never free
      bitmap[w] |= std::uint64_t{1} << bit;
      searchWord = static_cast<std::uint32_t>(w);
      --numFree;
      return slot;
    }
    return UINT32_MAX;  // unreachable while numFree > 0
  }
  void give(std::uint32_t slot) noexcept {
    bitmap[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
    ++numFree;
  }
};

}  // namespace netbuf::detail
