#include <netbuf/buffer/leak_detection_level.hpp>

#include <netbuf/buffer/illegal_argument_error.hpp>

#include <fmt/format.h>

#include <cctype>
#include <string>

namespace netbuf {

std::string_view toString(LeakDetectionLevel level) noexcept {
  switch (level) {
    case LeakDetectionLevel::Disabled:
      return "disabled";
    case LeakDetectionLevel::Simple:
      return "simple";
    case LeakDetectionLevel::Paranoid:
      return "paranoid";
  }
  return "unknown";
}

LeakDetectionLevel parseLeakDetectionLevel(std::string_view text) {
  std::string lower(text);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "disabled") return LeakDetectionLevel::Disabled;
  if (lower == "simple" || lower == "advanced") return LeakDetectionLevel::Simple;
  if (lower == "paranoid") return LeakDetectionLevel::Paranoid;
  throw IllegalArgumentError(
      fmt::format("leak detection level: '{}' (expected: disabled, simple or paranoid)", text));
}

}  // namespace netbuf
