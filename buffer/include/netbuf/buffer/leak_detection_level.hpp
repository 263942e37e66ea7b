#pragma once
// LeakDetectionLevel: how much of its allocations a PooledByteBufAllocator tracks.

#include <cstdint>
#include <string_view>

namespace netbuf {

/// Leak detection levels, as Netty's ResourceLeakDetector.
enum class LeakDetectionLevel : std::uint8_t {
  Disabled,  ///< Nothing is tracked (only the live counters in stats()).
  Simple,    ///< About one allocation in leakSamplingInterval (128) records its backtrace.
  Paranoid,  ///< Every allocation records its backtrace; misuse checks are on.
};

std::string_view toString(LeakDetectionLevel level) noexcept;
/// Parses "disabled", "simple" or "paranoid" (any case; Netty's "advanced" means simple). Throws
/// IllegalArgumentError for anything else.
LeakDetectionLevel parseLeakDetectionLevel(std::string_view text);

}  // namespace netbuf
