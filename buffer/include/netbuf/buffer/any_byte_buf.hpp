#pragma once
// AnyByteBuf: a message that is either a contiguous ByteBuf or a CompositeByteBuf.
//
// Frames decoded from a COMPOSITE cumulation are slices of a composite: a frame inside one
// component is a plain ByteBuf, a frame that straddles components is a CompositeByteBuf of slices
// (never a copy). Encoders may likewise pass composites on. AnyByteBuf is the one type that holds
// both; CompositeByteBuf::retainedSlice() already returns it.
//
// Both alternatives share the accessor vocabulary (ByteAccessors). Generic code reaches it through
// one helper, visitBuf, which calls a function on the buffer held:
//
//     std::int32_t n = visitBuf(frame, [](auto& buf) { return buf.readInt(); });
//
// and the free functions below answer the common questions without a lambda, each a one-line call
// of visitBuf (so they are exactly the members of the alternative held):
//
//     indices     readableBytes, writableBytes, readerIndex, writerIndex, isReadable,
//                 readerIndex(b, index), skipBytes
//     slices      retainedSlice(b), retainedSlice(b, index, length), readRetainedSlice(b, length):
//                 AnyByteBuf, as CompositeByteBuf's members return (a ByteBuf's slice is always a
//                 ByteBuf; a composite's is a ByteBuf when it lies inside one component)
//     bytes       getByte, getUnsignedByte, getBytes(b, index, span), readBytes(b, span),
//                 forEachSegment(b, fn) / forEachSegment(b, index, length, fn) (the pieces of
//                 memory, in order), contentEquals (same readable bytes)
//     whole       isComposite, readableBytesToString, toContiguous
// They throw what the members throw (IndexOutOfBoundsError, EmptyBufferError). Only what both
// alternatives offer is here: there is no retainedDuplicate or refCnt (a composite has neither:
// its components are counted one by one) and no readableBuffers (the two sequence types differ;
// visit and use the member for a gather write).
//
// Cost: visitBuf is one branch on the variant's index and a direct call (no function table, no
// virtual call), and everything here but readableBytesToString and toContiguous is inline, so a
// call costs what the member costs plus that branch. A valueless variant (only after a throwing
// emplace) makes visitBuf throw std::bad_variant_access, like std::visit; the noexcept queries
// then terminate.
//
// Name lookup: AnyByteBuf is a std::variant, but its alternatives live in netbuf, so argument-
// dependent lookup finds these functions for unqualified calls from any namespace. That is why the
// helper is not called `visit`: an unqualified visit(frame, f) would meet std::visit in the same
// overload set. Inside a class with members of the same names (readableBytes, skipBytes...),
// qualify the call (netbuf::readableBytes(frame)): the member hides the free function.
//
// Ownership follows the alternative held: the variant owns its handle, and destroying it releases
// the reference. Not thread-safe, as its alternatives.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace netbuf {

using AnyByteBuf = std::variant<ByteBuf, CompositeByteBuf>;

/// Calls f with the buffer b holds: ByteBuf or CompositeByteBuf, with b's constness and value
/// category (visitBuf(std::move(b), f) passes an rvalue), and returns what f returns, which must be
/// the same type for both alternatives.
template <class Any, class F>
requires std::same_as<std::remove_cvref_t<Any>, AnyByteBuf>
constexpr decltype(auto) visitBuf(Any&& b, F&& f) {
  using Flat = decltype(std::get<0>(std::forward<Any>(b)));
  using Composite = decltype(std::get<1>(std::forward<Any>(b)));
  static_assert(std::is_same_v<std::invoke_result_t<F, Flat>, std::invoke_result_t<F, Composite>>,
                "visitBuf: f must return the same type for ByteBuf and CompositeByteBuf");
  if (b.index() == 1) return std::invoke(std::forward<F>(f), std::get<1>(std::forward<Any>(b)));
  return std::invoke(std::forward<F>(f), std::get<0>(std::forward<Any>(b)));
}

// ---------------------------------------------------------------- indices

/// Readable bytes of whichever buffer b holds.
inline std::size_t readableBytes(const AnyByteBuf& b) noexcept {
  return visitBuf(b, [](const auto& buf) { return buf.readableBytes(); });
}
/// capacity - writerIndex.
inline std::size_t writableBytes(const AnyByteBuf& b) noexcept {
  return visitBuf(b, [](const auto& buf) { return buf.writableBytes(); });
}
inline std::size_t readerIndex(const AnyByteBuf& b) noexcept {
  return visitBuf(b, [](const auto& buf) { return buf.readerIndex(); });
}
inline std::size_t writerIndex(const AnyByteBuf& b) noexcept {
  return visitBuf(b, [](const auto& buf) { return buf.writerIndex(); });
}
/// At least n readable bytes.
inline bool isReadable(const AnyByteBuf& b, std::size_t n = 1) noexcept {
  return visitBuf(b, [n](const auto& buf) { return buf.isReadable(n); });
}
/// Sets readerIndex (IndexOutOfBoundsError past writerIndex).
inline AnyByteBuf& readerIndex(AnyByteBuf& b, std::size_t index) {
  visitBuf(b, [index](auto& buf) { buf.readerIndex(index); });
  return b;
}
/// Advances readerIndex by n (IndexOutOfBoundsError past writerIndex).
inline AnyByteBuf& skipBytes(AnyByteBuf& b, std::size_t n) {
  visitBuf(b, [n](auto& buf) { buf.skipBytes(n); });
  return b;
}

/// True when b holds a CompositeByteBuf.
inline bool isComposite(const AnyByteBuf& b) noexcept {
  return std::holds_alternative<CompositeByteBuf>(b);
}

// ---------------------------------------------------------------- slices (zero copy)

/// A new handle (+1 reference on each storage involved) on [index, index + length), checked
/// against capacity, fully readable.
inline AnyByteBuf retainedSlice(const AnyByteBuf& b, std::size_t index, std::size_t length) {
  return visitBuf(b,
                  [=](const auto& buf) -> AnyByteBuf { return buf.retainedSlice(index, length); });
}
/// retainedSlice over the readable bytes; b's indices unchanged.
inline AnyByteBuf retainedSlice(const AnyByteBuf& b) {
  return visitBuf(b, [](const auto& buf) -> AnyByteBuf { return buf.retainedSlice(); });
}
/// retainedSlice(b, readerIndex, length), then advances b's readerIndex by length.
inline AnyByteBuf readRetainedSlice(AnyByteBuf& b, std::size_t length) {
  return visitBuf(b, [length](auto& buf) -> AnyByteBuf { return buf.readRetainedSlice(length); });
}

// ---------------------------------------------------------------- bytes

inline std::int8_t getByte(const AnyByteBuf& b, std::size_t index) {
  return visitBuf(b, [index](const auto& buf) { return buf.getByte(index); });
}
inline std::uint8_t getUnsignedByte(const AnyByteBuf& b, std::size_t index) {
  return visitBuf(b, [index](const auto& buf) { return buf.getUnsignedByte(index); });
}
/// Copies [index, index + dst.size()) into dst; indices unchanged.
inline void getBytes(const AnyByteBuf& b, std::size_t index, std::span<std::byte> dst) {
  visitBuf(b, [&](const auto& buf) { buf.getBytes(index, dst); });
}
/// Reads dst.size() bytes into dst (readerIndex advances).
inline AnyByteBuf& readBytes(AnyByteBuf& b, std::span<std::byte> dst) {
  visitBuf(b, [dst](auto& buf) { buf.readBytes(dst); });
  return b;
}
/// Calls fn(std::span<const std::byte>) on the pieces of [index, index + length) in order (one
/// for a ByteBuf, one per component touched for a composite) until fn returns false; returns
/// false when fn stopped early. The range is checked against capacity (IndexOutOfBoundsError).
template <class Fn>
bool forEachSegment(const AnyByteBuf& b, std::size_t index, std::size_t length, Fn&& fn) {
  return visitBuf(b, [&](const auto& buf) {
    buf.checkIndexRange(index, length, "forEachSegment");
    return buf.forEachSegment(index, length, fn);
  });
}
/// forEachSegment over the readable bytes.
template <class Fn>
bool forEachSegment(const AnyByteBuf& b, Fn&& fn) {
  return visitBuf(b, [&](const auto& buf) {
    return buf.forEachSegment(buf.readerIndex(), buf.readableBytes(), fn);
  });
}
/// True when the readable bytes of a and b are the same bytes (indices, capacity and the
/// alternatives held do not matter: a ByteBuf equals a composite of the same bytes).
inline bool contentEquals(const AnyByteBuf& a, const AnyByteBuf& b) {
  return visitBuf(
      a, [&b](const auto& x) { return visitBuf(b, [&x](const auto& y) { return x.equals(y); }); });
}

/// A copy of b's readable bytes as a std::string (no validation; indices unchanged). Meant for
/// tests, logging and protocols whose frames are small text; hot paths read the buffer directly.
std::string readableBytesToString(const AnyByteBuf& b);

/// A contiguous handle on b's readable bytes: a ByteBuf is moved out as is (no copy); a composite
/// is copied into one new buffer from its allocator (the only copy, and only when asked for).
ByteBuf toContiguous(AnyByteBuf&& b);

}  // namespace netbuf
