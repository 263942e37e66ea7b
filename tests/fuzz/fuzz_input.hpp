#pragma once
// The fuzz targets that read their input as a program of choices share this reader.

#include <cstddef>
#include <cstdint>

namespace netbuf::fuzz {

/// Reads a fuzzer input one choice at a time. Past the end every read is 0, so any input, even an
/// empty one, is a complete program.
struct FuzzInput {
  const std::uint8_t* p;
  std::size_t n;

  bool empty() const noexcept { return n == 0; }
  std::uint8_t byte() noexcept {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  std::uint16_t u16() noexcept {
    const std::uint8_t lo = byte();
    return static_cast<std::uint16_t>(lo | byte() << 8);
  }
};

}  // namespace netbuf::fuzz
