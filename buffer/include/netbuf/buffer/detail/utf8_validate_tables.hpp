#pragma once
// The lookup tables of the Keiser-Lemire UTF-8 validation, shared by the text kernels' AVX2 and
// AVX-512 tiers (buffer/src/utf8_avx2.cpp, utf8_validate_avx512.hpp): three 16-entry tables,
// indexed by the first byte's high nibble, its low nibble and the second byte's high nibble, whose
// AND has a bit set for every ill-formed pair of bytes. Internal.
#include <array>

namespace netbuf::utf8::detail {

using u8 = unsigned char;

inline constexpr u8 kTooShort = 1 << 0;      // lead byte followed by a lead or ASCII
inline constexpr u8 kTooLong = 1 << 1;       // ASCII followed by a continuation
inline constexpr u8 kOverlong3 = 1 << 2;     // E0 80..9F
inline constexpr u8 kTooLarge = 1 << 3;      // F4 90..BF, F5..FF 90..BF
inline constexpr u8 kSurrogate = 1 << 4;     // ED A0..BF
inline constexpr u8 kOverlong2 = 1 << 5;     // C0/C1 continuation
inline constexpr u8 kTooLarge1000 = 1 << 6;  // F5..FF 80..8F
inline constexpr u8 kOverlong4 = 1 << 6;     // F0 80..8F
inline constexpr u8 kTwoConts = 1 << 7;  // continuation after continuation (legal only as 3rd/4th)
inline constexpr u8 kCarry = kTooShort | kTooLong | kTwoConts;  // decided by the high nibbles alone

inline constexpr std::array<u8, 16> kByte1High = {
    kTooLong,
    kTooLong,
    kTooLong,
    kTooLong,
    kTooLong,
    kTooLong,
    kTooLong,
    kTooLong,  // 0_______
    kTwoConts,
    kTwoConts,
    kTwoConts,
    kTwoConts,                                           // 10______
    kTooShort | kOverlong2,                              // 1100____
    kTooShort,                                           // 1101____
    kTooShort | kOverlong3 | kSurrogate,                 // 1110____
    kTooShort | kTooLarge | kTooLarge1000 | kOverlong4,  // 1111____
};
inline constexpr std::array<u8, 16> kByte1Low = {
    kCarry | kOverlong3 | kOverlong2 | kOverlong4,    // ____0000
    kCarry | kOverlong2,                              // ____0001
    kCarry,                                           // ____0010
    kCarry,                                           // ____0011
    kCarry | kTooLarge,                               // ____0100
    kCarry | kTooLarge | kTooLarge1000,               // ____0101
    kCarry | kTooLarge | kTooLarge1000,               // ____0110
    kCarry | kTooLarge | kTooLarge1000,               // ____0111
    kCarry | kTooLarge | kTooLarge1000,               // ____1000
    kCarry | kTooLarge | kTooLarge1000,               // ____1001
    kCarry | kTooLarge | kTooLarge1000,               // ____1010
    kCarry | kTooLarge | kTooLarge1000,               // ____1011
    kCarry | kTooLarge | kTooLarge1000,               // ____1100
    kCarry | kTooLarge | kTooLarge1000 | kSurrogate,  // ____1101
    kCarry | kTooLarge | kTooLarge1000,               // ____1110
    kCarry | kTooLarge | kTooLarge1000,               // ____1111
};
inline constexpr std::array<u8, 16> kByte2High = {
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge1000 | kOverlong4,  // 1000____
    kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge,                   // 1001____
    kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,                   // 1010____
    kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,                   // 1011____
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
};

}  // namespace netbuf::utf8::detail
