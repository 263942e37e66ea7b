#include "detail/size_classes.hpp"

#include <bit>
#include <numeric>

namespace netbuf::detail {

void SizeClasses::init(std::size_t page, std::size_t chunk) {
  pageSize = page;
  pageShift = static_cast<unsigned>(std::countr_zero(page));
  chunkSize = chunk;
  numPages = chunk >> pageShift;
  smallLimit = std::min(4 * page, chunk);
  std::vector<std::size_t> raw{16, 32, 48, 64};
  for (std::size_t base = 64; base < chunk; base *= 2)
    for (std::size_t i = 1; i <= 4; ++i) raw.push_back(base + base / 4 * i);
  for (std::size_t s : raw) {
    if (s > chunk) break;
    const std::size_t c = s < smallLimit ? s : (s + page - 1) / page * page;
    if (!sizes.empty() && sizes.back() >= c) continue;
    sizes.push_back(static_cast<std::uint32_t>(c));
    if (c < smallLimit) ++numSmall;
  }
  for (std::uint32_t c : sizes) {
    if (c < smallLimit) {
      // The smallest run that holds a whole number of slots: no tail waste.
      // (A tiny chunk may not hold that run: then the run is the chunk, with some tail waste.)
      const std::size_t run = std::min(std::lcm(std::size_t{c}, page), chunk);
      runPages.push_back(static_cast<std::uint32_t>(run / page));
      slotsPerRun.push_back(static_cast<std::uint32_t>(run / c));
    } else {
      runPages.push_back(static_cast<std::uint32_t>(c / page));
      slotsPerRun.push_back(1);
    }
  }
  smallLookup.resize(smallClassIndex(smallLimit) + 1);
  for (std::size_t i = 0; i < smallLookup.size(); ++i) smallLookup[i] = firstAtLeast(i * 16);
  normalLookup.resize(numPages + 1);
  for (std::size_t p = 0; p <= numPages; ++p) normalLookup[p] = firstAtLeast(p * page);
}

}  // namespace netbuf::detail
