#pragma once
// SlabHeader: the size classes of the control blocks of one slab, found from a block's address.

#include <netbuf/buffer/detail/pool_fast_path.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>

namespace netbuf::detail {

// Control blocks (other than direct ones) live in slabs of kSlabBlocks blocks, each slab aligned
// to its size. kSlabHeaderBlocks blocks' worth of a slab is its header: the size class of each
// block of the slab, a copy of PooledStorage::sizeClass that the release fast path reads instead
// of the block's own field. Its address follows from the block's address alone, and the headers
// of all slabs (256 bytes each) stay in the core's caches, whereas the block's line is a cache
// miss when blocks are released in random order: a class read from the block would make the
// release's push wait for that miss to learn its bin, and the next allocation, which pops the same
// bin, wait with it.
// The header's place in the slab depends on the slab's address (its "colour"): headers all at the
// same offset of 8 KiB-aligned slabs would fall into the same few sets of the L1 cache (which
// repeats every 4 KiB) and evict one another; 16 colours of 256 bytes cover all its sets. The
// colour mixes two groups of address bits, because glibc places 8 KiB-aligned 8 KiB blocks made
// one after another 16 KiB apart: the slab number's low bits alone would give every other colour.
// Invariant: slabClassOf(s) == s->sizeClass for every block in a slab (set together by
// allocateInArena, the only place a slab block's class changes). Locking: an entry is written
// under its arena's mutex, and only while its block is not live; it is read without a lock only
// by the thread releasing the block's last handle, which got the block through whatever
// synchronisation handed it over, so the write happens before the read. Entries of other blocks
// are other memory locations.
constexpr std::size_t kSlabBlocks = 128;
constexpr std::size_t kSlabBytes = kSlabBlocks * sizeof(PooledStorage);  // 8 KiB
struct SlabHeader {
  std::uint16_t sizeClass[kSlabBlocks];  // the header's own kSlabHeaderBlocks entries unused
};
constexpr std::size_t kSlabHeaderBlocks = sizeof(SlabHeader) / sizeof(PooledStorage);
constexpr std::size_t kSlabColours = kSlabBlocks / kSlabHeaderBlocks / 2;  // headers in 4 KiB
static_assert(sizeof(SlabHeader) % sizeof(PooledStorage) == 0 && kSlabColours == 16);
static_assert(std::has_single_bit(kSlabBytes), "slabs are found by masking a block's address");

/// The block index at which the header of the slab starting at `slab` begins.
inline std::size_t slabHeaderIndex(std::uintptr_t slab) noexcept {
  const std::uintptr_t n = slab / kSlabBytes;
  return ((n ^ (n / kSlabColours)) % kSlabColours) * kSlabHeaderBlocks;
}

/// The header entry of a slab block (not for direct blocks).
inline std::uint16_t& slabClassOf(PooledStorage* s) noexcept {
  const auto addr = reinterpret_cast<std::uintptr_t>(s);
  const std::uintptr_t slab = addr & ~(kSlabBytes - 1);
  auto* header =
      reinterpret_cast<SlabHeader*>(slab + slabHeaderIndex(slab) * sizeof(PooledStorage));
  return header->sizeClass[(addr - slab) / sizeof(PooledStorage)];
}

}  // namespace netbuf::detail
