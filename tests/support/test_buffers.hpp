#pragma once
// Test input as buffers: binary strings from byte values, frames as a ByteBuf or as a
// two-component CompositeByteBuf (as a frame decoder hands them over when a frame straddles two
// reads), and payloads behind 2-byte length prefixes. Every buffer comes from the default
// allocator, so the end-of-test leak check (leak_check.hpp) sees what a test forgets.

#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf::test {

/// Bytes from a list of values: bin({0x92, 0x01}).
inline std::string bin(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

/// bytes in one new ByteBuf, as a frame for a per-frame decoder or a message for an encoder.
inline AnyByteBuf frame(std::string_view bytes) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(bytes.size());
  b.writeBytes(bytes);
  return AnyByteBuf(std::in_place_type<ByteBuf>, std::move(b));
}

/// a + b as one CompositeByteBuf of two components, one per piece.
inline AnyByteBuf compositeFrame(std::string_view a, std::string_view b) {
  auto& alloc = ByteBufAllocator::defaultAllocator();
  CompositeByteBuf c = alloc.compositeBuffer();
  for (std::string_view part : {a, b}) {
    ByteBuf piece = alloc.buffer(part.size());
    piece.writeBytes(part);
    c.addComponent(true, std::move(piece));
  }
  return AnyByteBuf(std::move(c));
}

/// bytes as a CompositeByteBuf of its two halves.
inline AnyByteBuf compositeFrame(std::string_view bytes) {
  const std::size_t half = bytes.size() / 2;
  return compositeFrame(bytes.substr(0, half), bytes.substr(half));
}

/// Each payload behind a 2-byte big-endian length prefix, as
/// LengthFieldBasedFrameDecoder(ByteOrder::big, max, 0, 2, 0, 2) reads them. Payloads must be
/// shorter than 65536 bytes.
inline std::string lengthPrefixed(const std::vector<std::string>& payloads) {
  std::string s;
  for (const std::string& p : payloads) {
    s.push_back(static_cast<char>(p.size() >> 8));
    s.push_back(static_cast<char>(p.size() & 0xff));
    s += p;
  }
  return s;
}

}  // namespace netbuf::test
