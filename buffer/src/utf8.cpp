// Public entry points of <netbuf/buffer/utf8.hpp>: CPU detection and the one-indirect-call
// dispatch to the active tier's kernel table (utf8_scalar.cpp, utf8_sse2.cpp, utf8_avx2.cpp,
// utf8_avx512.cpp).

#include "netbuf/buffer/utf8.hpp"

#include <atomic>

#include "utf8_internal.hpp"

namespace netbuf::utf8 {
namespace {

using detail::Kernels;
using detail::u8;

Isa probeIsa() noexcept {
#if defined(__x86_64__)
  __builtin_cpu_init();
  // __builtin_cpu_supports also requires the OS to save the YMM / ZMM state (XCR0).
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
      __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi2") &&
      __builtin_cpu_supports("popcnt"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2")) return Isa::Avx2;
  return Isa::Sse2;  // part of the x86-64 baseline
#else
  return Isa::Scalar;
#endif
}

const Kernels* tableFor(Isa isa) noexcept {
#if defined(__x86_64__)
  switch (isa) {
    case Isa::Avx512:
      return &detail::kAvx512Kernels;
    case Isa::Avx2:
      return &detail::kAvx2Kernels;
    case Isa::Sse2:
      return &detail::kSse2Kernels;
    case Isa::Scalar:
      break;
  }
#else
  (void)isa;
#endif
  return &detail::kScalarKernels;
}

// The active table. Written only by forceIsa/resetIsa (tests, benchmarks); relaxed ordering is
// enough because every table is immutable static data.
std::atomic<const Kernels*>& activeTable() noexcept {
  static std::atomic<const Kernels*> table{tableFor(detectedIsa())};
  return table;
}
std::atomic<Isa>& activeIsaSlot() noexcept {
  static std::atomic<Isa> isa{detectedIsa()};
  return isa;
}

inline const Kernels& k() noexcept { return *activeTable().load(std::memory_order_relaxed); }

inline const u8* bytes(const std::byte* p) noexcept { return reinterpret_cast<const u8*>(p); }
inline u8* bytes(std::byte* p) noexcept { return reinterpret_cast<u8*>(p); }
inline const u8* bytes(std::string_view s) noexcept {
  return reinterpret_cast<const u8*>(s.data());
}

}  // namespace

Isa detectedIsa() noexcept {
  static const Isa isa = probeIsa();
  return isa;
}

Isa activeIsa() noexcept { return activeIsaSlot().load(std::memory_order_relaxed); }

void forceIsa(Isa isa) noexcept {
  if (static_cast<int>(isa) > static_cast<int>(detectedIsa())) isa = detectedIsa();
  activeIsaSlot().store(isa, std::memory_order_relaxed);
  activeTable().store(tableFor(isa), std::memory_order_relaxed);
}

void resetIsa() noexcept { forceIsa(detectedIsa()); }

const char* isaName(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar:
      return "Scalar";
    case Isa::Sse2:
      return "SSE2";
    case Isa::Avx2:
      return "AVX2";
    case Isa::Avx512:
      return "AVX-512";
  }
  return "?";
}

std::size_t utf8Bytes(std::u16string_view s) noexcept {
  return k().utf8BytesU16(s.data(), s.size());
}
std::size_t utf8Bytes(std::u32string_view s) noexcept {
  return k().utf8BytesU32(s.data(), s.size());
}
std::size_t utf8ReplacingBytes(std::string_view s) noexcept {
  return k().utf8ReplacingBytes(bytes(s), s.size());
}

std::size_t encodeUtf8(std::u16string_view src, std::byte* dst) noexcept {
  return k().encodeUtf8U16(src.data(), src.size(), bytes(dst));
}
std::size_t encodeUtf8(std::u32string_view src, std::byte* dst) noexcept {
  return k().encodeUtf8U32(src.data(), src.size(), bytes(dst));
}
std::size_t copyUtf8Replacing(std::string_view src, std::byte* dst) noexcept {
  return k().copyUtf8Replacing(bytes(src), src.size(), bytes(dst));
}

std::size_t firstInvalidUtf8(const std::byte* p, std::size_t n) noexcept {
  return k().firstInvalidUtf8(bytes(p), n);
}
bool isValidUtf8(const std::byte* p, std::size_t n) noexcept {
  return k().firstInvalidUtf8(bytes(p), n) == npos;
}
bool isAscii(const std::byte* p, std::size_t n) noexcept { return k().isAscii(bytes(p), n); }

std::size_t encodeAscii(std::u16string_view src, std::byte* dst) noexcept {
  k().encodeAsciiU16(src.data(), src.size(), bytes(dst));
  return src.size();
}
std::size_t encodeAscii(std::string_view src, std::byte* dst) noexcept {
  k().encodeAscii8(bytes(src), src.size(), bytes(dst));
  return src.size();
}
std::size_t encodeLatin1(std::u16string_view src, std::byte* dst) noexcept {
  k().encodeLatin1(src.data(), src.size(), bytes(dst));
  return src.size();
}
std::size_t encodeUtf16(std::u16string_view src, std::byte* dst, bool bigEndian) noexcept {
  k().encodeUtf16(src.data(), src.size(), bytes(dst), bigEndian);
  return 2 * src.size();
}

std::size_t utf8ToLatin1(std::string_view utf8, std::byte* dst) noexcept {
  return k().utf8ToLatin1(bytes(utf8), utf8.size(), bytes(dst));
}
std::size_t utf8ToUtf16(std::string_view utf8, char16_t* dst) noexcept {
  return k().utf8ToUtf16(bytes(utf8), utf8.size(), dst);
}
std::size_t utf8ToUtf16Bytes(std::string_view utf8, std::byte* dst, bool bigEndian) noexcept {
  return k().utf8ToUtf16Bytes(bytes(utf8), utf8.size(), bytes(dst), bigEndian);
}
std::size_t utf16Length(std::string_view utf8) noexcept {
  return k().utf16Length(bytes(utf8), utf8.size());
}
std::size_t decodeAscii(const std::byte* p, std::size_t n, char* dst) noexcept {
  k().encodeAscii8(bytes(p), n, reinterpret_cast<u8*>(dst));
  return n;
}

}  // namespace netbuf::utf8
