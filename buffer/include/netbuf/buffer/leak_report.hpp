#pragma once
// LeakReport: one live tracked buffer, as a PooledByteBufAllocator's leak detection reports it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace netbuf {

/// One live tracked buffer, as reported by leak detection.
///
/// At `paranoid` every tracked allocation records its own backtrace. At `simple` a sampled
/// allocation records only its caller (one return address: free to take), and the backtrace is
/// taken once per caller, at the first sampled allocation from it, and shared by the later ones:
/// that keeps `simple` within about a nanosecond of `disabled` per allocation. So at `simple`,
/// `caller` is exact and `frames` is one call path through it (the innermost frames are the
/// allocator's, then the caller's; outer frames may differ from this buffer's own path).
struct LeakReport {
  std::size_t size = 0;        ///< The capacity requested.
  std::uint64_t sequence = 0;  ///< Allocation order among tracked buffers.
  /// The return address into the code that called buffer() (or the library function that did,
  /// such as a ByteBuf growing or Unpooled::copiedBuffer).
  void* caller = nullptr;
  /// Return addresses, innermost first: this allocation's (paranoid) or the first sampled one's
  /// from the same caller (simple; empty once kMaxLeakSites callers have traces).
  std::vector<void*> frames;
  bool sharedFrames = false;  ///< frames are another allocation's from the same caller (simple).
  std::string site;           ///< caller and frames symbolized, one per line.
};

/// At `simple`, backtraces are kept for at most this many distinct callers (beyond it a sampled
/// allocation records its caller only).
inline constexpr std::size_t kMaxLeakSites = 4096;

}  // namespace netbuf
