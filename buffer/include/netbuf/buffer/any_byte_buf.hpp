#pragma once
// AnyByteBuf: a message that is either a contiguous ByteBuf or a CompositeByteBuf.
//
// Frames decoded from a COMPOSITE cumulation are slices of a composite: a frame inside one
// component is a plain ByteBuf, a frame that straddles components is a CompositeByteBuf of slices
// (never a copy). Encoders may likewise pass composites on. AnyByteBuf is the one type that holds
// both; CompositeByteBuf::retainedSlice() already returns it. Both alternatives share the accessor
// vocabulary (ByteAccessors), so generic code reads either with std::visit:
//
//     std::visit([](auto& buf) { return buf.readInt(); }, frame);
//
// The free functions below cover the common questions without a visit. Ownership follows the
// alternative held: the variant owns its handle, and destroying it releases the reference.

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <string>
#include <variant>

namespace netbuf {

using AnyByteBuf = std::variant<ByteBuf, CompositeByteBuf>;

/// Readable bytes of whichever buffer b holds.
inline std::size_t readableBytes(const AnyByteBuf& b) noexcept {
  return std::visit([](const auto& buf) { return buf.readableBytes(); }, b);
}

/// True when b holds a CompositeByteBuf.
inline bool isComposite(const AnyByteBuf& b) noexcept {
  return std::holds_alternative<CompositeByteBuf>(b);
}

/// A copy of b's readable bytes as a std::string (no validation; indices unchanged). Meant for
/// tests, logging and protocols whose frames are small text; hot paths read the buffer directly.
std::string readableBytesToString(const AnyByteBuf& b);

/// A contiguous handle on b's readable bytes: a ByteBuf is moved out as is (no copy); a composite
/// is copied into one new buffer from its allocator (the only copy, and only when asked for).
ByteBuf toContiguous(AnyByteBuf&& b);

}  // namespace netbuf
