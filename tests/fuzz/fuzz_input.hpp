#pragma once
// Reading a fuzz input: as a program of choices (FuzzInput), or as a stream and the positions at
// which to cut it into reads (splitReads).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

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

/// The stream part of a fuzz input and where to cut it into reads.
struct FuzzReads {
  std::string_view stream;
  std::vector<std::size_t> cuts;  ///< ascending, each inside the stream
};

/// cutCount read lengths (1..256) are taken from data[at...], the rest of the input is the stream.
inline FuzzReads splitReads(const std::uint8_t* data, std::size_t size, std::size_t at,
                            std::size_t cutCount) {
  std::vector<std::size_t> steps;
  for (; cutCount > 0 && at < size; --cutCount) steps.push_back(data[at++] + 1U);
  FuzzReads r{std::string_view(reinterpret_cast<const char*>(data) + at, size - at), {}};
  std::size_t pos = 0;
  for (std::size_t step : steps) {
    pos += step;
    if (pos >= r.stream.size()) break;
    r.cuts.push_back(pos);
  }
  return r;
}

}  // namespace netbuf::fuzz
