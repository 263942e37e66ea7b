#pragma once
// SharedCounter: a statistics counter any thread may update (relaxed atomic read-modify-writes).
// Its single-writer sibling, OwnedCounter, is in netbuf/buffer/detail/pool_fast_path.hpp.

#include <atomic>
#include <cstdint>

namespace netbuf::detail {

/// A counter any thread may update.
struct SharedCounter {
  std::atomic<std::uint64_t> v{0};
  void add(std::uint64_t n) noexcept { v.fetch_add(n, std::memory_order_relaxed); }
  void sub(std::uint64_t n) noexcept { v.fetch_sub(n, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return v.load(std::memory_order_relaxed); }
};

}  // namespace netbuf::detail
