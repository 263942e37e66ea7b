// The portable tier: used on non-x86 targets, forced by tests as the reference the SIMD tiers are
// compared against, and the model for what every other tier must compute. Only word-at-a-time
// (SWAR) ASCII skipping, no intrinsics.

#include "utf8_internal.hpp"

namespace netbuf::utf8::detail {
namespace {

std::size_t utf8BytesU16(const char16_t* s, std::size_t n) noexcept {
  std::size_t i = 0;
  return countU16Step(s, i, n, n);
}

std::size_t utf8BytesU32(const char32_t* s, std::size_t n) noexcept {
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += countU32One(s[i]);
  return total;
}

std::size_t replacingBytes(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  return countReplacingStep(s, i, n, n);
}

std::size_t encodeUtf8U16(const char16_t* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  encodeU16Step(s, i, n, n, d);
  return static_cast<std::size_t>(d - dst);
}

std::size_t encodeUtf8U32(const char32_t* s, std::size_t n, u8* dst) noexcept {
  u8* d = dst;
  for (std::size_t i = 0; i < n; ++i) d = encodeU32One(s[i], d);
  return static_cast<std::size_t>(d - dst);
}

std::size_t copyReplacing(const u8* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  copyReplacingStep(s, i, n, n, d);
  return static_cast<std::size_t>(d - dst);
}

std::size_t firstInvalid(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  return firstInvalidStep(s, i, n, n);
}

bool isAsciiScalar(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::uint64_t acc = 0;
  for (; i + 8 <= n; i += 8) acc |= load64(s + i);
  for (; i < n; ++i) acc |= s[i];
  return (acc & kHighBits) == 0;
}

void encodeAsciiU16(const char16_t* s, std::size_t n, u8* d) noexcept {
  for (std::size_t i = 0; i < n; ++i) d[i] = s[i] < 0x80 ? static_cast<u8>(s[i]) : u8{'?'};
}

void encodeAscii8(const u8* s, std::size_t n, u8* d) noexcept {
  for (std::size_t i = 0; i < n; ++i) d[i] = s[i] < 0x80 ? s[i] : u8{'?'};
}

void encodeLatin1(const char16_t* s, std::size_t n, u8* d) noexcept {
  for (std::size_t i = 0; i < n; ++i) d[i] = s[i] < 0x100 ? static_cast<u8>(s[i]) : u8{'?'};
}

void encodeUtf16(const char16_t* s, std::size_t n, u8* d, bool bigEndian) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const u8 hi = static_cast<u8>(s[i] >> 8);
    const u8 lo = static_cast<u8>(s[i] & 0xFF);
    d[2 * i] = bigEndian ? hi : lo;
    d[2 * i + 1] = bigEndian ? lo : hi;
  }
}

std::size_t utf8ToLatin1(const u8* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  decodeStep(s, i, n, n, [&d](char32_t c) { *d++ = c <= 0xFF ? static_cast<u8>(c) : u8{'?'}; });
  return static_cast<std::size_t>(d - dst);
}

std::size_t utf8ToUtf16(const u8* s, std::size_t n, char16_t* dst) noexcept {
  std::size_t i = 0;
  char16_t* d = dst;
  decodeStep(s, i, n, n, [&d](char32_t c) { d = putUtf16(c, d); });
  return static_cast<std::size_t>(d - dst);
}

std::size_t utf8ToUtf16Bytes(const u8* s, std::size_t n, u8* dst, bool bigEndian) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  decodeStep(s, i, n, n, [&d, bigEndian](char32_t c) { d = putUtf16Bytes(c, d, bigEndian); });
  return static_cast<std::size_t>(d - dst);
}

std::size_t utf16Length(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  return countUtf16Step(s, i, n, n);
}

}  // namespace

const Kernels kScalarKernels = {
    utf8BytesU16, utf8BytesU32,  replacingBytes,   encodeUtf8U16, encodeUtf8U32, copyReplacing,
    firstInvalid, isAsciiScalar, encodeAsciiU16,   encodeAscii8,  encodeLatin1,  encodeUtf16,
    utf8ToLatin1, utf8ToUtf16,   utf8ToUtf16Bytes, utf16Length,
};

}  // namespace netbuf::utf8::detail
