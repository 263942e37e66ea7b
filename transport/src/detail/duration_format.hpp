#pragma once
// The text form of a timeout in error messages: the largest unit that divides it exactly
// ("10 s", "250 ms", "3 us", "17 ns"), so a message shows the value as it was configured.

#include <fmt/format.h>

#include <chrono>
#include <string>

namespace netbuf::detail {

inline std::string formatDuration(std::chrono::nanoseconds d) {
  using namespace std::chrono_literals;
  if (d % 1s == 0ns) return fmt::format("{} s", d / 1s);
  if (d % 1ms == 0ns) return fmt::format("{} ms", d / 1ms);
  if (d % 1us == 0ns) return fmt::format("{} us", d / 1us);
  return fmt::format("{} ns", d.count());
}

}  // namespace netbuf::detail
