#pragma once
// Internal to the MessagePack codec (not installed): the wire format's header table and
// big-endian loads, shared by the whole-value parser (message_pack_reader.cpp) and the streaming
// scanner (message_pack_codec.cpp).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace netbuf::detail {

inline std::uint8_t u8(const std::byte* p) noexcept { return std::to_integer<std::uint8_t>(*p); }

template <class T>
inline T loadBE(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::endian::native == std::endian::little && sizeof(T) > 1) {
    if constexpr (sizeof(T) == 2) v = static_cast<T>(__builtin_bswap16(v));
    if constexpr (sizeof(T) == 4) v = static_cast<T>(__builtin_bswap32(v));
    if constexpr (sizeof(T) == 8) v = static_cast<T>(__builtin_bswap64(v));
  }
  return v;
}

enum class Kind : std::uint8_t {
  UInt,
  Int,
  Nil,
  Bool,
  F32,
  F64,
  Str,
  Bin,
  Ext,
  Array,
  Map,
  Reserved
};

/// What a header byte announces: the kind and the header size (the first byte, the length field
/// and, for ext, the type byte; for numbers the whole encoding). `fixed` is the payload length or
/// count encoded in the first byte itself (fix forms), or the fixext data length.
struct HeadInfo {
  Kind kind;
  std::uint8_t hdr;
  std::uint8_t fixed;
};

inline constexpr HeadInfo headInfo(std::uint8_t b) noexcept {
  if (b <= 0x7f) return {Kind::UInt, 1, 0};
  if (b <= 0x8f) return {Kind::Map, 1, static_cast<std::uint8_t>(b & 0x0f)};
  if (b <= 0x9f) return {Kind::Array, 1, static_cast<std::uint8_t>(b & 0x0f)};
  if (b <= 0xbf) return {Kind::Str, 1, static_cast<std::uint8_t>(b & 0x1f)};
  if (b >= 0xe0) return {Kind::Int, 1, 0};
  switch (b) {
    case 0xc0:
      return {Kind::Nil, 1, 0};
    case 0xc1:
      return {Kind::Reserved, 1, 0};
    case 0xc2:
    case 0xc3:
      return {Kind::Bool, 1, 0};
    case 0xc4:
      return {Kind::Bin, 2, 0};
    case 0xc5:
      return {Kind::Bin, 3, 0};
    case 0xc6:
      return {Kind::Bin, 5, 0};
    case 0xc7:
      return {Kind::Ext, 3, 0};
    case 0xc8:
      return {Kind::Ext, 4, 0};
    case 0xc9:
      return {Kind::Ext, 6, 0};
    case 0xca:
      return {Kind::F32, 5, 0};
    case 0xcb:
      return {Kind::F64, 9, 0};
    case 0xcc:
      return {Kind::UInt, 2, 0};
    case 0xcd:
      return {Kind::UInt, 3, 0};
    case 0xce:
      return {Kind::UInt, 5, 0};
    case 0xcf:
      return {Kind::UInt, 9, 0};
    case 0xd0:
      return {Kind::Int, 2, 0};
    case 0xd1:
      return {Kind::Int, 3, 0};
    case 0xd2:
      return {Kind::Int, 5, 0};
    case 0xd3:
      return {Kind::Int, 9, 0};
    case 0xd4:
      return {Kind::Ext, 2, 1};
    case 0xd5:
      return {Kind::Ext, 2, 2};
    case 0xd6:
      return {Kind::Ext, 2, 4};
    case 0xd7:
      return {Kind::Ext, 2, 8};
    case 0xd8:
      return {Kind::Ext, 2, 16};
    case 0xd9:
      return {Kind::Str, 2, 0};
    case 0xda:
      return {Kind::Str, 3, 0};
    case 0xdb:
      return {Kind::Str, 5, 0};
    case 0xdc:
      return {Kind::Array, 3, 0};
    case 0xdd:
      return {Kind::Array, 5, 0};
    case 0xde:
      return {Kind::Map, 3, 0};
    default:  // 0xdf
      return {Kind::Map, 5, 0};
  }
}

/// A complete header read: the length/count (str, bin, ext, array, map) or integer bits.
struct Head {
  Kind kind;
  std::uint8_t hdr;
  bool negative;     // Int kind: the value is negative
  std::int8_t type;  // Ext kind: the ext type
  std::uint64_t v;   // length, count, or integer bits (two's complement for negative)
};

/// Decodes the header at p; the caller has checked that info.hdr bytes are present.
inline Head readHead(const std::byte* p, HeadInfo info) noexcept {
  const std::uint8_t b = u8(p);
  Head h{info.kind, info.hdr, false, 0, info.fixed};
  switch (info.kind) {
    case Kind::UInt:
      switch (info.hdr) {
        case 1:
          h.v = b;
          break;
        case 2:
          h.v = u8(p + 1);
          break;
        case 3:
          h.v = loadBE<std::uint16_t>(p + 1);
          break;
        case 5:
          h.v = loadBE<std::uint32_t>(p + 1);
          break;
        default:
          h.v = loadBE<std::uint64_t>(p + 1);
      }
      break;
    case Kind::Int: {
      std::int64_t i;
      switch (info.hdr) {
        case 1:
          i = static_cast<std::int8_t>(b);
          break;
        case 2:
          i = static_cast<std::int8_t>(u8(p + 1));
          break;
        case 3:
          i = static_cast<std::int16_t>(loadBE<std::uint16_t>(p + 1));
          break;
        case 5:
          i = static_cast<std::int32_t>(loadBE<std::uint32_t>(p + 1));
          break;
        default:
          i = static_cast<std::int64_t>(loadBE<std::uint64_t>(p + 1));
      }
      h.negative = i < 0;
      h.kind = i < 0 ? Kind::Int : Kind::UInt;
      h.v = static_cast<std::uint64_t>(i);
      break;
    }
    case Kind::Str:
    case Kind::Bin:
    case Kind::Array:
    case Kind::Map:
      if (info.hdr == 2) h.v = u8(p + 1);
      if (info.hdr == 3) h.v = loadBE<std::uint16_t>(p + 1);
      if (info.hdr == 5) h.v = loadBE<std::uint32_t>(p + 1);
      break;
    case Kind::Ext:
      if (b == 0xc7) h.v = u8(p + 1);
      if (b == 0xc8) h.v = loadBE<std::uint16_t>(p + 1);
      if (b == 0xc9) h.v = loadBE<std::uint32_t>(p + 1);
      h.type = static_cast<std::int8_t>(u8(p + info.hdr - 1));
      break;
    default:
      break;
  }
  return h;
}

}  // namespace netbuf::detail
