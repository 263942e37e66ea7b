#pragma once
// LeakRecord and LeakTrace: what the pool's leak detection keeps for one tracked live buffer.
// PoolCore::track and untrack (leak_record.cpp) make and drop them.

#include <cstddef>
#include <cstdint>
#include <string>

namespace netbuf::detail {

inline constexpr int kMaxFrames = 32;

/// A backtrace, innermost frame first.
struct LeakTrace {
  int depth = 0;
  void* frames[kMaxFrames];
};

/// One tracked live buffer. At paranoid it owns its trace; at simple `trace` is its caller's
/// shared one (PoolCore::siteTraces, which outlives every record) or null. Records are recycled
/// through PoolCore::freeRecords, so a sample at simple allocates nothing once warm.
struct LeakRecord {
  LeakRecord* prev = nullptr;
  LeakRecord* next = nullptr;
  std::size_t size = 0;
  std::uint64_t sequence = 0;
  void* caller = nullptr;
  const LeakTrace* trace = nullptr;
  bool ownsTrace = false;
};

/// The frames symbolized, one per line ("    #i module(function+offset) [address]").
std::string symbolize(void* const* frames, int depth);

}  // namespace netbuf::detail
