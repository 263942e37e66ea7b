#include <netbuf/buffer/byte_buf_util.hpp>

#include <fmt/format.h>
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace netbuf::byte_buf_util {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void appendHexByte(std::string& out, std::byte b) {
  const auto v = static_cast<unsigned>(b);
  out.push_back(kHexDigits[v >> 4]);
  out.push_back(kHexDigits[v & 0xF]);
}

std::uint64_t load64(const std::byte* p) noexcept {
  // Little-endian value regardless of the host, so the incremental Hasher (which assembles
  // partial words byte by byte) agrees with the whole-range path.
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

__extension__ typedef unsigned __int128 Uint128;

std::uint64_t mix(std::uint64_t a, std::uint64_t b) noexcept {
  // 64x64->128 multiply folded (the "mum" mixing step): cheap and well distributed.
  const Uint128 r = static_cast<Uint128>(a) * b;
  return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}

}  // namespace

std::string hexDump(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::byte b : bytes) appendHexByte(out, b);
  return out;
}

std::string prettyHexDump(std::span<const std::byte> bytes) {
  // Layout (one row per 16 bytes):
  //          +-------------------------------------------------+
  //          |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |
  // +--------+-------------------------------------------------+----------------+
  // |00000000| 48 65 6c 6c 6f                                  |Hello           |
  // +--------+-------------------------------------------------+----------------+
  std::string out;
  const std::size_t rows = (bytes.size() + 15) / 16;
  out.reserve(80 * (rows + 4));
  out +=
      "         +-------------------------------------------------+\n"
      "         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n"
      "+--------+-------------------------------------------------+----------------+";
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t start = row * 16;
    const std::size_t end = std::min(start + 16, bytes.size());
    out += fmt::format("\n|{:08x}|", start);
    for (std::size_t i = start; i < start + 16; ++i) {
      if (i < end) {
        out.push_back(' ');
        appendHexByte(out, bytes[i]);
      } else {
        out += "   ";
      }
    }
    out += " |";
    for (std::size_t i = start; i < start + 16; ++i) {
      if (i < end) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.');
      } else {
        out.push_back(' ');
      }
    }
    out.push_back('|');
  }
  out += "\n+--------+-------------------------------------------------+----------------+";
  return out;
}

std::size_t firstIndexOf(std::span<const std::byte> bytes, std::byte value) noexcept {
  if (bytes.empty()) return npos;
  const void* hit = std::memchr(bytes.data(), static_cast<int>(value), bytes.size());
  return hit ? static_cast<std::size_t>(static_cast<const std::byte*>(hit) - bytes.data()) : npos;
}

std::size_t lastIndexOf(std::span<const std::byte> bytes, std::byte value) noexcept {
  for (std::size_t i = bytes.size(); i-- > 0;) {
    if (bytes[i] == value) return i;
  }
  return npos;
}

int compare(std::span<const std::byte> a, std::span<const std::byte> b) noexcept {
  const std::size_t common = std::min(a.size(), b.size());
  if (common != 0) {
    // memcmp compares as unsigned char, which is exactly Netty's unsigned comparison.
    const int r = std::memcmp(a.data(), b.data(), common);
    if (r != 0) return r < 0 ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

namespace {
constexpr std::uint64_t kSeed = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t kMul = 0xbf58476d1ce4e5b9ULL;
}  // namespace

Hasher::Hasher(std::size_t totalLength) noexcept : h_(kSeed ^ (totalLength * kMul)) {}

void Hasher::update(std::span<const std::byte> bytes) noexcept {
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  // Complete a partial word left by the previous piece, byte by byte (little-endian assembly, the
  // same value memcpy gives on the whole-range path).
  while (pendingCount_ != 0 && n != 0) {
    pending_ |= static_cast<std::uint64_t>(*p++) << (8 * pendingCount_);
    --n;
    if (++pendingCount_ == 8) {
      h_ = mix(h_ ^ pending_, kMul);
      pending_ = 0;
      pendingCount_ = 0;
    }
  }
  while (n >= 8) {
    h_ = mix(h_ ^ load64(p), kMul);
    p += 8;
    n -= 8;
  }
  for (std::size_t i = 0; i < n; ++i) {
    pending_ |= static_cast<std::uint64_t>(p[i]) << (8 * pendingCount_++);
  }
}

std::size_t Hasher::finish() noexcept {
  if (pendingCount_ != 0) {
    h_ = mix(h_ ^ pending_ ^ (static_cast<std::uint64_t>(pendingCount_) << 56), kMul);
  }
  return static_cast<std::size_t>(mix(h_, kSeed));
}

std::size_t hash(std::span<const std::byte> bytes) noexcept {
  Hasher h(bytes.size());
  h.update(bytes);
  return h.finish();
}

}  // namespace netbuf::byte_buf_util
