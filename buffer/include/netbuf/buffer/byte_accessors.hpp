#pragma once
// The accessor vocabulary shared by every netbuf buffer type (ByteBuf, ByteBufView and
// CompositeByteBuf): the primitives Netty users know (getInt, readUnsignedShortLE, writeMedium...),
// bytes in and out, search, comparison, hashing, hex dumps and text.
//
// One implementation serves every type: ByteAccessors<Derived> is a CRTP base written once over a
// small set of raw operations that each buffer type provides. Everything resolves at compile time
// (no virtual call per byte or primitive). A type provides only what it supports; templates are
// instantiated on use, so a read-only view that lacks the write operations simply cannot call the
// write names.
//
// Raw operations (Derived must provide, publicly or by befriending ByteAccessors):
//
//   Indices       std::size_t capacity() const, readerIndex() const, writerIndex() const;
//                 void advanceReaderUnchecked(std::size_t n), advanceWriterUnchecked(std::size_t n)
//   Checks        void checkIndexRange(std::size_t index, std::size_t length, const char* what)
//   const
//                   -- [index, index + length) inside [0, capacity); throws otherwise
//                 void checkReadableRange(std::size_t length, const char* what) const
//                   -- length <= readableBytes(); throws otherwise
//                 void checkWritableRange(std::size_t index, std::size_t length, const char* what)
//                   -- like checkIndexRange, and the buffer is writable
//   Primitives    template <class T, std::size_t N, ByteOrder O> T getValue(std::size_t) const;
//                 ... T readValue(); void setValue(std::size_t, T); void writeValue(T);
//   Memory        const std::byte* contiguous(std::size_t index, std::size_t length) const noexcept
//                   -- pointer to the range when it lies in one piece of memory, else nullptr
//                 std::byte* contiguousMutable(std::size_t index, std::size_t length) noexcept
//                 template <class Fn> bool forEachSegment(std::size_t index, std::size_t length,
//                                                         Fn&& fn) const
//                   -- calls fn(std::span<const std::byte>) over the range's pieces in order,
//                      stops early (returning false) when fn returns false
//                 template <class Fn> void forEachMutableSegment(std::size_t, std::size_t, Fn&&)
//                   -- calls fn(std::span<std::byte>) over the range's pieces in order
//                 void appendBytes(std::span<const std::byte> src)
//                   -- grows as needed and appends (aliasing-safe), advancing writerIndex
//                 void ensureWritable(std::size_t n); std::size_t maxWritableBytes() const
//
// The contiguous case is what ByteBuf always has; the segmented one is the composite's. Checks are
// done once per call, then the work runs on raw spans.

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <bit>
#include <boost/endian/conversion.hpp>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <netbuf/buffer/byte_buf_util.hpp>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/buffer/limits.hpp>
#include <netbuf/buffer/utf8.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace netbuf {

/// Byte order of multi-byte values. netbuf, like Netty, defaults to big-endian (network order).
using ByteOrder = boost::endian::order;

/// Text encodings accepted by writeCharSequence.
enum class Charset : std::uint8_t { Utf8, Ascii, Latin1, Utf16BE, Utf16LE };

namespace detail {

template <class T>
concept WireValue = std::is_arithmetic_v<T>;

template <std::size_t N>
using UnsignedOfSize = std::conditional_t<
    N == 1, std::uint8_t,
    std::conditional_t<N == 2, std::uint16_t,
                       std::conditional_t<N == 4, std::uint32_t, std::uint64_t>>>;

/// Loads an N-byte value in byte order O from p. The caller guarantees p[0..N) is readable.
template <class T, std::size_t N, ByteOrder O>
inline T loadValue(const std::byte* p) noexcept {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  if constexpr (std::is_same_v<T, bool>) {
    return *u != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    static_assert(N == sizeof(T));
    return std::bit_cast<T>(boost::endian::endian_load<UnsignedOfSize<N>, N, O>(u));
  } else {
    return boost::endian::endian_load<T, N, O>(u);
  }
}

/// Stores the low N bytes of value in byte order O at p. The caller guarantees p[0..N) is writable.
template <class T, std::size_t N, ByteOrder O>
inline void storeValue(std::byte* p, T value) noexcept {
  auto* u = reinterpret_cast<unsigned char*>(p);
  if constexpr (std::is_same_v<T, bool>) {
    *u = value ? 1 : 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    static_assert(N == sizeof(T));
    boost::endian::endian_store<UnsignedOfSize<N>, N, O>(u,
                                                         std::bit_cast<UnsignedOfSize<N>>(value));
  } else {
    boost::endian::endian_store<T, N, O>(u, value);
  }
}

/// The most bytes a text kernel writes for `units` input units, `factor` bytes each: what scratch
/// memory is sized by and what writeEncoded reserves when the buffer can hold it. It must not be
/// capped at a buffer limit (a kernel may write up to it), so it saturates at SIZE_MAX, an
/// allocation that fails, instead of wrapping; no buffer can hold that, so writeEncoded falls back
/// to the exact size, which ensureWritable checks.
constexpr std::size_t textBound(std::size_t units, std::size_t factor) noexcept {
  return units > SIZE_MAX / factor ? SIZE_MAX : units * factor;
}

/// Scratch memory for the segmented paths: on the stack when small, on the heap otherwise.
class Scratch {
 public:
  explicit Scratch(std::size_t n)
      : heap_(n > kInline ? std::make_unique_for_overwrite<std::byte[]>(n) : nullptr) {}
  std::byte* data() noexcept { return heap_ ? heap_.get() : inline_.data(); }

 private:
  static constexpr std::size_t kInline = 512;
  std::array<std::byte, kInline> inline_;
  std::unique_ptr<std::byte[]> heap_;
};

[[noreturn]] void throwIllFormedUtf8(const char* what, std::size_t offset);

/// The fmt::formatter behind every buffer type: "{}" prints the buffer's toString() summary and
/// "{:x}" its prettyHexDump() table.
struct BufferFormatter {
  bool pretty = false;
  constexpr auto parse(fmt::format_parse_context& ctx) {
    auto it = ctx.begin();
    if (it != ctx.end() && *it == 'x') {
      pretty = true;
      ++it;
    }
    if (it != ctx.end() && *it != '}') {
      throw fmt::format_error("invalid buffer format: use {} or {:x}");
    }
    return it;
  }
  template <class Buffer, class FormatContext>
  auto format(const Buffer& buf, FormatContext& ctx) const {
    const std::string text = pretty ? buf.prettyHexDump() : buf.toString();
    return fmt::format_to(ctx.out(), "{}", text);
  }
};

/// Netty's AbstractByteBuf.adjustMarkers, for discardReadBytes: the marks move down with the
/// discarded bytes, each clamped at 0.
/// (Index: ByteBuf's 32-bit fields or CompositeByteBuf's std::size_t ones.)
template <class Index>
inline void adjustMarkers(Index& markedReader, Index& markedWriter,
                          std::size_t decrement) noexcept {
  // Both marks clamp independently: a writer mark may lie below the reader mark (mark the writer,
  // then read past it), where Netty's version would go negative.
  markedReader = markedReader <= decrement ? 0 : markedReader - decrement;
  markedWriter = markedWriter <= decrement ? 0 : markedWriter - decrement;
}

}  // namespace detail

/// A netbuf buffer type (ByteBuf, ByteBufView, CompositeByteBuf): what the cross-type operations
/// (getBytes into another buffer, equals, compare, ...) accept.
template <class T>
concept BufferLike = requires(const T& t, std::size_t i) {
  { t.readableBytes() } -> std::convertible_to<std::size_t>;
  { t.readerIndex() } -> std::convertible_to<std::size_t>;
  { t.contiguous(i, i) } -> std::convertible_to<const std::byte*>;
};

template <class Derived>
class ByteAccessors {
  static constexpr ByteOrder kBig = ByteOrder::big;
  static constexpr ByteOrder kLittle = ByteOrder::little;

  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  Derived& self() noexcept { return static_cast<Derived&>(*this); }

 public:
  static constexpr std::size_t npos = byte_buf_util::npos;

  // ================================================================ primitives
  // ---- Generic forms: any arithmetic T, sizeof(T) bytes on the wire. ----
  template <detail::WireValue T>
  T get(std::size_t index) const {
    return self().template getValue<T, sizeof(T), kBig>(index);
  }
  template <detail::WireValue T>
  T getLE(std::size_t index) const {
    return self().template getValue<T, sizeof(T), kLittle>(index);
  }
  template <detail::WireValue T>
  T read() {
    return self().template readValue<T, sizeof(T), kBig>();
  }
  template <detail::WireValue T>
  T readLE() {
    return self().template readValue<T, sizeof(T), kLittle>();
  }
  template <detail::WireValue T>
  Derived& set(std::size_t index, T value) {
    self().template setValue<T, sizeof(T), kBig>(index, value);
    return self();
  }
  template <detail::WireValue T>
  Derived& setLE(std::size_t index, T value) {
    self().template setValue<T, sizeof(T), kLittle>(index, value);
    return self();
  }
  template <detail::WireValue T>
  Derived& write(T value) {
    self().template writeValue<T, sizeof(T), kBig>(value);
    return self();
  }
  template <detail::WireValue T>
  Derived& writeLE(T value) {
    self().template writeValue<T, sizeof(T), kLittle>(value);
    return self();
  }

  // ---- Absolute gets (index checked against capacity; indices unchanged). ----
  bool getBoolean(std::size_t i) const { return get<bool>(i); }
  std::int8_t getByte(std::size_t i) const { return get<std::int8_t>(i); }
  std::uint8_t getUnsignedByte(std::size_t i) const { return get<std::uint8_t>(i); }
  std::int16_t getShort(std::size_t i) const { return get<std::int16_t>(i); }
  std::int16_t getShortLE(std::size_t i) const { return getLE<std::int16_t>(i); }
  std::uint16_t getUnsignedShort(std::size_t i) const { return get<std::uint16_t>(i); }
  std::uint16_t getUnsignedShortLE(std::size_t i) const { return getLE<std::uint16_t>(i); }
  /// 24-bit value, sign-extended.
  std::int32_t getMedium(std::size_t i) const {
    return self().template getValue<std::int32_t, 3, kBig>(i);
  }
  std::int32_t getMediumLE(std::size_t i) const {
    return self().template getValue<std::int32_t, 3, kLittle>(i);
  }
  std::uint32_t getUnsignedMedium(std::size_t i) const {
    return self().template getValue<std::uint32_t, 3, kBig>(i);
  }
  std::uint32_t getUnsignedMediumLE(std::size_t i) const {
    return self().template getValue<std::uint32_t, 3, kLittle>(i);
  }
  std::int32_t getInt(std::size_t i) const { return get<std::int32_t>(i); }
  std::int32_t getIntLE(std::size_t i) const { return getLE<std::int32_t>(i); }
  std::uint32_t getUnsignedInt(std::size_t i) const { return get<std::uint32_t>(i); }
  std::uint32_t getUnsignedIntLE(std::size_t i) const { return getLE<std::uint32_t>(i); }
  std::int64_t getLong(std::size_t i) const { return get<std::int64_t>(i); }
  std::int64_t getLongLE(std::size_t i) const { return getLE<std::int64_t>(i); }
  std::uint64_t getUnsignedLong(std::size_t i) const { return get<std::uint64_t>(i); }
  std::uint64_t getUnsignedLongLE(std::size_t i) const { return getLE<std::uint64_t>(i); }
  float getFloat(std::size_t i) const { return get<float>(i); }
  float getFloatLE(std::size_t i) const { return getLE<float>(i); }
  double getDouble(std::size_t i) const { return get<double>(i); }
  double getDoubleLE(std::size_t i) const { return getLE<double>(i); }

  // ---- Relative reads (checked against readableBytes; advance readerIndex). ----
  bool readBoolean() { return read<bool>(); }
  std::int8_t readByte() { return read<std::int8_t>(); }
  std::uint8_t readUnsignedByte() { return read<std::uint8_t>(); }
  std::int16_t readShort() { return read<std::int16_t>(); }
  std::int16_t readShortLE() { return readLE<std::int16_t>(); }
  std::uint16_t readUnsignedShort() { return read<std::uint16_t>(); }
  std::uint16_t readUnsignedShortLE() { return readLE<std::uint16_t>(); }
  std::int32_t readMedium() { return self().template readValue<std::int32_t, 3, kBig>(); }
  std::int32_t readMediumLE() { return self().template readValue<std::int32_t, 3, kLittle>(); }
  std::uint32_t readUnsignedMedium() { return self().template readValue<std::uint32_t, 3, kBig>(); }
  std::uint32_t readUnsignedMediumLE() {
    return self().template readValue<std::uint32_t, 3, kLittle>();
  }
  std::int32_t readInt() { return read<std::int32_t>(); }
  std::int32_t readIntLE() { return readLE<std::int32_t>(); }
  std::uint32_t readUnsignedInt() { return read<std::uint32_t>(); }
  std::uint32_t readUnsignedIntLE() { return readLE<std::uint32_t>(); }
  std::int64_t readLong() { return read<std::int64_t>(); }
  std::int64_t readLongLE() { return readLE<std::int64_t>(); }
  std::uint64_t readUnsignedLong() { return read<std::uint64_t>(); }
  std::uint64_t readUnsignedLongLE() { return readLE<std::uint64_t>(); }
  float readFloat() { return read<float>(); }
  float readFloatLE() { return readLE<float>(); }
  double readDouble() { return read<double>(); }
  double readDoubleLE() { return readLE<double>(); }

  // ---- Absolute sets (index checked against capacity; indices unchanged). As in Netty, the
  // integer setters take the signed type and store its low bits: setShort(i, 0xFFFF) is fine. ----
  Derived& setBoolean(std::size_t i, bool v) { return set<bool>(i, v); }
  Derived& setByte(std::size_t i, std::int8_t v) { return set<std::int8_t>(i, v); }
  Derived& setShort(std::size_t i, std::int16_t v) { return set<std::int16_t>(i, v); }
  Derived& setShortLE(std::size_t i, std::int16_t v) { return setLE<std::int16_t>(i, v); }
  /// Stores the low 24 bits of v.
  Derived& setMedium(std::size_t i, std::int32_t v) {
    self().template setValue<std::int32_t, 3, kBig>(i, v);
    return self();
  }
  Derived& setMediumLE(std::size_t i, std::int32_t v) {
    self().template setValue<std::int32_t, 3, kLittle>(i, v);
    return self();
  }
  Derived& setInt(std::size_t i, std::int32_t v) { return set<std::int32_t>(i, v); }
  Derived& setIntLE(std::size_t i, std::int32_t v) { return setLE<std::int32_t>(i, v); }
  Derived& setLong(std::size_t i, std::int64_t v) { return set<std::int64_t>(i, v); }
  Derived& setLongLE(std::size_t i, std::int64_t v) { return setLE<std::int64_t>(i, v); }
  Derived& setFloat(std::size_t i, float v) { return set<float>(i, v); }
  Derived& setFloatLE(std::size_t i, float v) { return setLE<float>(i, v); }
  Derived& setDouble(std::size_t i, double v) { return set<double>(i, v); }
  Derived& setDoubleLE(std::size_t i, double v) { return setLE<double>(i, v); }

  // ---- Relative writes (grow as needed up to maxCapacity; advance writerIndex). ----
  Derived& writeBoolean(bool v) { return write<bool>(v); }
  Derived& writeByte(std::int8_t v) { return write<std::int8_t>(v); }
  Derived& writeShort(std::int16_t v) { return write<std::int16_t>(v); }
  Derived& writeShortLE(std::int16_t v) { return writeLE<std::int16_t>(v); }
  /// Writes the low 24 bits of v.
  Derived& writeMedium(std::int32_t v) {
    self().template writeValue<std::int32_t, 3, kBig>(v);
    return self();
  }
  Derived& writeMediumLE(std::int32_t v) {
    self().template writeValue<std::int32_t, 3, kLittle>(v);
    return self();
  }
  Derived& writeInt(std::int32_t v) { return write<std::int32_t>(v); }
  Derived& writeIntLE(std::int32_t v) { return writeLE<std::int32_t>(v); }
  Derived& writeLong(std::int64_t v) { return write<std::int64_t>(v); }
  Derived& writeLongLE(std::int64_t v) { return writeLE<std::int64_t>(v); }
  Derived& writeFloat(float v) { return write<float>(v); }
  Derived& writeFloatLE(float v) { return writeLE<float>(v); }
  Derived& writeDouble(double v) { return write<double>(v); }
  Derived& writeDoubleLE(double v) { return writeLE<double>(v); }

  // ================================================================ bytes
  /// Copies [index, index + dst.size()) into dst.
  const Derived& getBytes(std::size_t index, std::span<std::byte> dst) const {
    self().checkIndexRange(index, dst.size(), "getBytes");
    copyOut(index, dst);
    return self();
  }
  const Derived& getBytes(std::size_t index, void* dst, std::size_t length) const {
    return getBytes(index, std::span<std::byte>(static_cast<std::byte*>(dst), length));
  }
  /// Copies length bytes at index into dst at dstIndex (dst's indices unchanged).
  template <BufferLike Dst>
  const Derived& getBytes(std::size_t index, Dst& dst, std::size_t dstIndex,
                          std::size_t length) const {
    self().checkIndexRange(index, length, "getBytes");
    dst.checkWritableRange(dstIndex, length, "getBytes(destination)");
    self().forEachSegment(index, length, [&](std::span<const std::byte> seg) {
      dst.copyIn(dstIndex, seg);
      dstIndex += seg.size();
      return true;
    });
    return self();
  }
  /// Appends length bytes at index to dst (dst's writerIndex advances; dst grows if needed).
  template <BufferLike Dst>
  const Derived& getBytes(std::size_t index, Dst& dst, std::size_t length) const {
    self().checkIndexRange(index, length, "getBytes");
    appendRangeTo(index, length, dst);
    return self();
  }

  Derived& setBytes(std::size_t index, std::span<const std::byte> src) {
    self().checkWritableRange(index, src.size(), "setBytes");
    copyIn(index, src);
    return self();
  }
  Derived& setBytes(std::size_t index, const void* src, std::size_t length) {
    return setBytes(index, std::span<const std::byte>(static_cast<const std::byte*>(src), length));
  }
  Derived& setBytes(std::size_t index, std::string_view src) {
    return setBytes(index, src.data(), src.size());
  }
  /// Copies length bytes of src starting at srcIndex (checked against src's capacity).
  template <BufferLike Src>
  Derived& setBytes(std::size_t index, const Src& src, std::size_t srcIndex, std::size_t length) {
    src.getBytes(srcIndex, self(), index, length);
    return self();
  }
  Derived& setZero(std::size_t index, std::size_t length) {
    self().checkWritableRange(index, length, "setZero");
    self().forEachMutableSegment(
        index, length, [](std::span<std::byte> seg) { std::memset(seg.data(), 0, seg.size()); });
    return self();
  }

  /// Reads dst.size() bytes into dst.
  Derived& readBytes(std::span<std::byte> dst) {
    self().checkReadableRange(dst.size(), "readBytes");
    copyOut(self().readerIndex(), dst);
    self().advanceReaderUnchecked(dst.size());
    return self();
  }
  Derived& readBytes(void* dst, std::size_t length) {
    return readBytes(std::span<std::byte>(static_cast<std::byte*>(dst), length));
  }
  /// Reads length bytes and appends them to dst (dst grows as needed; dst may be *this).
  template <BufferLike Dst>
  Derived& readBytes(Dst& dst, std::size_t length) {
    self().checkReadableRange(length, "readBytes");
    const std::size_t from = self().readerIndex();
    appendRangeTo(from, length, dst);
    self().advanceReaderUnchecked(length);
    return self();
  }
  /// Reads dst.writableBytes() bytes into dst (Netty's readBytes(ByteBuf)).
  template <BufferLike Dst>
  Derived& readBytes(Dst& dst) {
    return readBytes(dst, dst.writableBytes());
  }

  /// Appends src. src may point into this buffer's own memory, even when the write must grow it.
  Derived& writeBytes(std::span<const std::byte> src) {
    self().appendBytes(src);
    return self();
  }
  Derived& writeBytes(const void* src, std::size_t length) {
    return writeBytes(std::span<const std::byte>(static_cast<const std::byte*>(src), length));
  }
  Derived& writeBytes(std::string_view src) { return writeBytes(src.data(), src.size()); }
  /// Writes all of src's readable bytes and advances src's readerIndex past them (Netty's
  /// writeBytes(ByteBuf)).
  template <BufferLike Src>
  Derived& writeBytes(Src& src) {
    return writeBytes(src, src.readableBytes());
  }
  /// Writes all of a const buffer's readable bytes (it cannot advance: use the non-const form to
  /// consume them).
  template <BufferLike Src>
  Derived& writeBytes(const Src& src) {
    return writeBytes(src, src.readerIndex(), src.readableBytes());
  }
  /// Writes length of src's readable bytes, advancing src's readerIndex.
  template <BufferLike Src>
  Derived& writeBytes(Src& src, std::size_t length) {
    src.readBytes(self(), length);
    return self();
  }
  /// Writes length bytes of src at srcIndex (checked against src's capacity); src unchanged.
  template <BufferLike Src>
  Derived& writeBytes(const Src& src, std::size_t srcIndex, std::size_t length) {
    src.getBytes(srcIndex, self(), length);
    return self();
  }
  Derived& writeZero(std::size_t length) {
    self().ensureWritable(length);
    const std::size_t at = self().writerIndex();
    self().forEachMutableSegment(
        at, length, [](std::span<std::byte> seg) { std::memset(seg.data(), 0, seg.size()); });
    self().advanceWriterUnchecked(length);
    return self();
  }

  // ================================================================ search and compare
  /// First index of value in [from, to) when from <= to, else the last index of value in
  /// [to, from) searching backwards (Netty's indexOf). Indices are clamped to capacity; npos when
  /// not found.
  std::size_t indexOf(std::size_t from, std::size_t to, std::byte value) const {
    const std::size_t cap = self().capacity();
    if (cap == 0) return npos;
    if (from <= to) {
      to = std::min(to, cap);
      if (from >= to) return npos;
      return firstIn(from, to - from, value);
    }
    from = std::min(from, cap);
    if (to >= from) return npos;
    return forEachByteDesc(to, from - to, [value](std::byte b) { return b != value; });
  }
  std::size_t indexOf(std::size_t from, std::size_t to, std::uint8_t value) const {
    return indexOf(from, to, std::byte{value});
  }
  /// Bytes between readerIndex and the first value among the readable bytes, or npos.
  std::size_t bytesBefore(std::byte value) const {
    const std::size_t r = self().readerIndex();
    const std::size_t hit = firstIn(r, self().writerIndex() - r, value);
    return hit == npos ? npos : hit - r;
  }
  /// Like bytesBefore(value) over the first length readable bytes (checked).
  std::size_t bytesBefore(std::size_t length, std::byte value) const {
    self().checkReadableRange(length, "bytesBefore");
    const std::size_t r = self().readerIndex();
    const std::size_t hit = firstIn(r, length, value);
    return hit == npos ? npos : hit - r;
  }
  /// Bytes between index and the first value in [index, index + length) (checked), or npos.
  std::size_t bytesBefore(std::size_t index, std::size_t length, std::byte value) const {
    self().checkIndexRange(index, length, "bytesBefore");
    const std::size_t hit = firstIn(index, length, value);
    return hit == npos ? npos : hit - index;
  }

  /// Calls processor(byte) on each readable byte in order until it returns false; returns that
  /// byte's absolute index, or npos if the processor accepted every byte.
  template <class Processor>
  std::size_t forEachByte(Processor&& processor) const {
    const std::size_t r = self().readerIndex();
    return scanForward(r, self().writerIndex() - r, processor);
  }
  /// Same over [index, index + length), checked against capacity.
  template <class Processor>
  std::size_t forEachByte(std::size_t index, std::size_t length, Processor&& processor) const {
    self().checkIndexRange(index, length, "forEachByte");
    return scanForward(index, length, processor);
  }
  /// Like forEachByte, from the last readable byte backwards.
  template <class Processor>
  std::size_t forEachByteDesc(Processor&& processor) const {
    const std::size_t r = self().readerIndex();
    return forEachByteDesc(r, self().writerIndex() - r, std::forward<Processor>(processor));
  }
  template <class Processor>
  std::size_t forEachByteDesc(std::size_t index, std::size_t length, Processor&& processor) const {
    self().checkIndexRange(index, length, "forEachByteDesc");
    if (const std::byte* p = self().contiguous(index, length)) {
      for (std::size_t i = length; i-- > 0;) {
        if (!processor(p[i])) return index + i;
      }
      return npos;
    }
    // Segmented: walk byte by byte from the end (the getter finds the piece in O(log n)).
    for (std::size_t i = index + length; i-- > index;) {
      if (!processor(std::byte{self().template getValue<std::uint8_t, 1, kBig>(i)})) return i;
    }
    return npos;
  }

  /// True when both readable regions hold the same bytes (indices and capacity do not matter).
  template <BufferLike Other>
  bool equals(const Other& other) const {
    return self().readableBytes() == other.readableBytes() && compare(other) == 0;
  }
  /// Unsigned lexicographic comparison of the readable bytes: <0, 0 or >0.
  template <BufferLike Other>
  int compare(const Other& other) const {
    const std::size_t ra = self().readerIndex(), na = self().readableBytes();
    const std::size_t rb = other.readerIndex(), nb = other.readableBytes();
    const std::byte* pa = self().contiguous(ra, na);
    const std::byte* pb = other.contiguous(rb, nb);
    if (pa != nullptr && pb != nullptr) {
      return byte_buf_util::compare({pa, na}, {pb, nb});
    }
    // Segmented: walk this buffer's pieces, and for each the matching pieces of the other.
    const std::size_t common = std::min(na, nb);
    std::size_t pos = 0;
    int result = 0;
    self().forEachSegment(ra, common, [&](std::span<const std::byte> seg) {
      std::size_t off = 0;
      other.forEachSegment(rb + pos, seg.size(), [&](std::span<const std::byte> o) {
        result = byte_buf_util::compare(seg.subspan(off, o.size()), o);
        off += o.size();
        return result == 0;
      });
      pos += seg.size();
      return result == 0;
    });
    if (result != 0) return result;
    return na == nb ? 0 : (na < nb ? -1 : 1);
  }
  /// Hash of the readable bytes, consistent with equals() across buffer types.
  std::size_t hashCode() const {
    byte_buf_util::Hasher h(self().readableBytes());
    self().forEachSegment(self().readerIndex(), self().readableBytes(),
                          [&](std::span<const std::byte> seg) {
                            h.update(seg);
                            return true;
                          });
    return h.finish();
  }

  // ================================================================ debug text
  /// Hex of the readable bytes ("0aff..."), or of [index, index + length).
  std::string hexDump() const {
    return withBytes(self().readerIndex(), self().readableBytes(), &byte_buf_util::hexDump);
  }
  std::string hexDump(std::size_t index, std::size_t length) const {
    self().checkIndexRange(index, length, "hexDump");
    return withBytes(index, length, &byte_buf_util::hexDump);
  }
  /// Netty's 16-bytes-a-row table of the readable bytes, or of [index, index + length).
  std::string prettyHexDump() const {
    return withBytes(self().readerIndex(), self().readableBytes(), &byte_buf_util::prettyHexDump);
  }
  std::string prettyHexDump(std::size_t index, std::size_t length) const {
    self().checkIndexRange(index, length, "prettyHexDump");
    return withBytes(index, length, &byte_buf_util::prettyHexDump);
  }

  // ================================================================ text (kernels in utf8.hpp)
  /// UTF-16 to UTF-8; an unpaired surrogate becomes '?' (Java's getBytes(UTF_8)). Returns the
  /// number of bytes written.
  std::size_t writeUtf8(std::u16string_view text) {
    return writeEncoded(
        detail::textBound(text.size(), 3), [&](std::byte* d) { return utf8::encodeUtf8(text, d); },
        [&] { return utf8::utf8Bytes(text); });
  }
  /// Code points to UTF-8; surrogates and values above U+10FFFF become '?'.
  std::size_t writeUtf8(std::u32string_view text) {
    return writeEncoded(
        detail::textBound(text.size(), 4), [&](std::byte* d) { return utf8::encodeUtf8(text, d); },
        [&] { return utf8::utf8Bytes(text); });
  }
  /// Copies text that should be UTF-8, replacing each maximal ill-formed subsequence by U+FFFD.
  std::size_t writeUtf8(std::string_view text) {
    // Well-formed input (the common case) is validated, then copied: exact size, no
    // over-reservation. Only ill-formed input pays for the replacing transcoder.
    if (utf8::isValidUtf8(asBytes(text), text.size())) {
      self().appendBytes({asBytes(text), text.size()});
      return text.size();
    }
    return writeEncoded(
        detail::textBound(text.size(), 3),
        [&](std::byte* d) { return utf8::copyUtf8Replacing(text, d); },
        [&] { return utf8::utf8ReplacingBytes(text); });
  }
  std::size_t writeUtf8(std::u8string_view text) { return writeUtf8(asChars(text)); }
  std::size_t writeUtf8(const char* text) { return writeUtf8(std::string_view(text)); }
  /// Like writeUtf8(string_view) but throws Utf8Error (with the offset of the first ill-formed
  /// byte) and writes nothing when the text is not well-formed UTF-8.
  std::size_t writeUtf8Strict(std::string_view text) {
    const std::size_t bad = utf8::firstInvalidUtf8(asBytes(text), text.size());
    if (bad != utf8::npos) detail::throwIllFormedUtf8("writeUtf8Strict", bad);
    self().appendBytes({asBytes(text), text.size()});
    return text.size();
  }
  std::size_t writeUtf8Strict(std::u8string_view text) { return writeUtf8Strict(asChars(text)); }

  /// The setUtf8 forms write at index (checked against capacity) and move no index. Bytes after
  /// the text are live, so the kernel (which may scribble up to its bound) writes to scratch.
  std::size_t setUtf8(std::size_t index, std::u16string_view text) {
    self().checkWritableRange(index, utf8::utf8Bytes(text), "setUtf8");
    return setEncoded(index, detail::textBound(text.size(), 3),
                      [&](std::byte* d) { return utf8::encodeUtf8(text, d); });
  }
  std::size_t setUtf8(std::size_t index, std::u32string_view text) {
    self().checkWritableRange(index, utf8::utf8Bytes(text), "setUtf8");
    return setEncoded(index, detail::textBound(text.size(), 4),
                      [&](std::byte* d) { return utf8::encodeUtf8(text, d); });
  }
  std::size_t setUtf8(std::size_t index, std::string_view text) {
    if (utf8::isValidUtf8(asBytes(text), text.size())) {
      setBytes(index, text);
      return text.size();
    }
    self().checkWritableRange(index, utf8::utf8ReplacingBytes(text), "setUtf8");
    return setEncoded(index, detail::textBound(text.size(), 3),
                      [&](std::byte* d) { return utf8::copyUtf8Replacing(text, d); });
  }

  /// One byte per code unit; anything above 0x7F becomes '?'.
  std::size_t writeAscii(std::u16string_view text) {
    return writeEncoded(
        text.size(), [&](std::byte* d) { return utf8::encodeAscii(text, d); },
        [&] { return text.size(); });
  }
  std::size_t writeAscii(std::string_view text) {
    return writeEncoded(
        text.size(), [&](std::byte* d) { return utf8::encodeAscii(text, d); },
        [&] { return text.size(); });
  }
  /// Encodes text (UTF-16, like Java's CharSequence) in the given charset.
  std::size_t writeCharSequence(std::u16string_view text, Charset charset) {
    switch (charset) {
      case Charset::Utf8:
        return writeUtf8(text);
      case Charset::Ascii:
        return writeAscii(text);
      case Charset::Latin1:
        return writeEncoded(
            text.size(), [&](std::byte* d) { return utf8::encodeLatin1(text, d); },
            [&] { return text.size(); });
      case Charset::Utf16BE:
      case Charset::Utf16LE: {
        const bool big = charset == Charset::Utf16BE;
        const std::size_t n = detail::textBound(text.size(), 2);
        return writeEncoded(
            n, [&](std::byte* d) { return utf8::encodeUtf16(text, d, big); }, [&] { return n; });
      }
    }
    throw IllegalArgumentError("writeCharSequence: unknown charset");
  }
  /// Encodes UTF-8 text in the given charset (ill-formed input replaced, as in writeUtf8; for
  /// Ascii and Latin1 one '?' per unmappable character, not per byte).
  std::size_t writeCharSequence(std::string_view text, Charset charset) {
    switch (charset) {
      case Charset::Utf8:
        return writeUtf8(text);
      case Charset::Ascii:
      case Charset::Latin1: {
        const bool ascii = charset == Charset::Ascii;
        return writeEncoded(
            text.size(),
            [&](std::byte* d) {
              const std::size_t n = utf8::utf8ToLatin1(text, d);
              if (ascii) {
                for (std::size_t i = 0; i < n; ++i) {
                  if (d[i] > std::byte{0x7f}) d[i] = std::byte{'?'};
                }
              }
              return n;
            },
            [&] { return text.size(); });
      }
      case Charset::Utf16BE:
      case Charset::Utf16LE: {
        const bool big = charset == Charset::Utf16BE;
        return writeEncoded(
            detail::textBound(text.size(), 2),
            [&](std::byte* d) { return utf8::utf8ToUtf16Bytes(text, d, big); },
            [&] { return 2 * utf8::utf16Length(text); });
      }
    }
    throw IllegalArgumentError("writeCharSequence: unknown charset");
  }

  /// Reads n bytes as UTF-8 (ill-formed subsequences replaced by U+FFFD).
  std::string readUtf8(std::size_t n) {
    return advancing(n, "readUtf8", [&](std::size_t i) { return getUtf8(i, n); });
  }
  std::string getUtf8(std::size_t index, std::size_t n) const {
    self().checkIndexRange(index, n, "getUtf8");
    return withText(index, n, [&](std::string_view raw) {
      if (utf8::isValidUtf8(asBytes(raw), raw.size())) return std::string(raw);
      detail::Scratch scratch(detail::textBound(raw.size(), 3));
      const std::size_t written = utf8::copyUtf8Replacing(raw, scratch.data());
      return std::string(reinterpret_cast<const char*>(scratch.data()), written);
    });
  }
  /// Strict forms: throw Utf8Error naming the offset (relative to the start of the n bytes).
  std::string readUtf8Strict(std::size_t n) {
    return advancing(n, "readUtf8Strict",
                     [&](std::size_t i) { return strictUtf8At(i, n, "readUtf8Strict"); });
  }
  std::string getUtf8Strict(std::size_t index, std::size_t n) const {
    self().checkIndexRange(index, n, "getUtf8Strict");
    return strictUtf8At(index, n, "getUtf8Strict");
  }
  /// Reads n bytes of UTF-8 as UTF-16 (replacing).
  std::u16string readUtf8AsUtf16(std::size_t n) {
    return advancing(n, "readUtf8AsUtf16", [&](std::size_t i) { return getUtf8AsUtf16(i, n); });
  }
  std::u16string getUtf8AsUtf16(std::size_t index, std::size_t n) const {
    self().checkIndexRange(index, n, "getUtf8AsUtf16");
    return withText(index, n, [&](std::string_view raw) {
      // n UTF-8 bytes never decode to more than n UTF-16 units: size once, decode, trim.
      std::u16string out(raw.size(), u'\0');
      out.resize(utf8::utf8ToUtf16(raw, out.data()));
      return out;
    });
  }
  /// Reads n bytes as ASCII: bytes above 0x7F become '?'.
  std::string readAscii(std::size_t n) {
    return advancing(n, "readAscii", [&](std::size_t i) { return getAscii(i, n); });
  }
  std::string getAscii(std::size_t index, std::size_t n) const {
    self().checkIndexRange(index, n, "getAscii");
    return withText(index, n, [&](std::string_view raw) {
      std::string out(raw.size(), '\0');
      utf8::decodeAscii(asBytes(raw), raw.size(), out.data());
      return out;
    });
  }
  /// Whether the readable bytes are well-formed UTF-8.
  bool isValidUtf8() const {
    return withText(self().readerIndex(), self().readableBytes(), [](std::string_view raw) {
      return utf8::isValidUtf8(asBytes(raw), raw.size());
    });
  }
  /// Whether the readable bytes are pure ASCII.
  bool isAscii() const {
    return self().forEachSegment(
        self().readerIndex(), self().readableBytes(),
        [](std::span<const std::byte> seg) { return utf8::isAscii(seg.data(), seg.size()); });
  }

  /// fmt formatting straight into the buffer's memory: formats into the writable space when the
  /// result fits, otherwise grows once to the exact size and formats again. Returns bytes written.
  template <class... Args>
  std::size_t writeFormat(fmt::format_string<Args...> format, Args&&... args) {
    return writeFormatV(format, fmt::make_format_args(args...));
  }
  std::size_t writeFormatV(fmt::string_view format, fmt::format_args args) {
    Derived& d = self();
    d.ensureWritable(0);  // read-only and empty handles throw here
    const std::size_t w = d.writerIndex();
    const std::size_t room = d.capacity() - w;
    if (std::byte* p = d.contiguousMutable(w, room)) {
      const auto first = fmt::vformat_to_n(reinterpret_cast<char*>(p), room, format, args);
      if (first.size <= room) {
        d.advanceWriterUnchecked(first.size);
        return first.size;
      }
      d.ensureWritable(first.size);
      if (std::byte* q = d.contiguousMutable(d.writerIndex(), first.size)) {
        fmt::vformat_to_n(reinterpret_cast<char*>(q), first.size, format, args);
        d.advanceWriterUnchecked(first.size);
        return first.size;
      }
    }
    fmt::memory_buffer text;
    fmt::vformat_to(fmt::appender(text), format, args);
    d.appendBytes({reinterpret_cast<const std::byte*>(text.data()), text.size()});
    return text.size();
  }

 protected:
  ByteAccessors() = default;
  ~ByteAccessors() = default;
  ByteAccessors(const ByteAccessors&) = default;
  ByteAccessors(ByteAccessors&&) = default;
  ByteAccessors& operator=(const ByteAccessors&) = default;
  ByteAccessors& operator=(ByteAccessors&&) = default;

 public:
  // ---- Unchecked building blocks (also used across buffer types; callers check first). ----
  /// Copies [index, index + dst.size()) into dst. Unchecked.
  void copyOut(std::size_t index, std::span<std::byte> dst) const {
    if (dst.empty()) return;
    if constexpr (contiguousType()) {
      std::memcpy(dst.data(), self().contiguous(index, dst.size()), dst.size());
      return;
    } else if (const std::byte* p = self().contiguous(index, dst.size())) {
      std::memcpy(dst.data(), p, dst.size());
      return;
    }
    std::size_t at = 0;
    self().forEachSegment(index, dst.size(), [&](std::span<const std::byte> seg) {
      std::memcpy(dst.data() + at, seg.data(), seg.size());
      at += seg.size();
      return true;
    });
  }
  /// Copies src to [index, index + src.size()). Unchecked; src may overlap this buffer.
  void copyIn(std::size_t index, std::span<const std::byte> src) {
    if (src.empty()) return;
    if constexpr (contiguousType()) {
      std::memmove(self().contiguousMutable(index, src.size()), src.data(), src.size());
      return;
    } else if (std::byte* p = self().contiguousMutable(index, src.size())) {
      std::memmove(p, src.data(), src.size());
      return;
    }
    std::size_t at = 0;
    self().forEachMutableSegment(index, src.size(), [&](std::span<std::byte> seg) {
      std::memmove(seg.data(), src.data() + at, seg.size());
      at += seg.size();
    });
  }

 private:
  /// Whether Derived is always one piece of memory (declares `static constexpr bool kContiguous`):
  /// then the segmented fallbacks are compiled out, which also keeps g++'s -Warray-bounds from
  /// analysing paths that cannot run.
  static constexpr bool contiguousType() noexcept {
    if constexpr (requires { Derived::kContiguous; }) {
      return Derived::kContiguous;
    } else {
      return false;
    }
  }

  static const std::byte* asBytes(std::string_view s) noexcept {
    return reinterpret_cast<const std::byte*>(s.data());
  }
  static std::string_view asChars(std::u8string_view s) noexcept {
    return {reinterpret_cast<const char*>(s.data()), s.size()};
  }

  /// Appends [index, index + length) of this buffer to dst; safe when dst is this buffer.
  template <BufferLike Dst>
  void appendRangeTo(std::size_t index, std::size_t length, Dst& dst) const {
    if constexpr (contiguousType()) {
      dst.appendBytes({self().contiguous(index, length), length});
      return;
    } else if (const std::byte* p = self().contiguous(index, length)) {
      dst.appendBytes({p, length});
      return;
    }
    if constexpr (std::is_same_v<Dst, Derived>) {
      if (&dst == &self()) {  // segmented self-append: the destination may move pieces around
        detail::Scratch scratch(length);
        copyOut(index, {scratch.data(), length});
        dst.appendBytes({scratch.data(), length});
        return;
      }
    }
    dst.ensureWritable(length);
    self().forEachSegment(index, length, [&](std::span<const std::byte> seg) {
      dst.appendBytes(seg);
      return true;
    });
  }

  std::size_t firstIn(std::size_t index, std::size_t length, std::byte value) const {
    std::size_t base = index;
    std::size_t found = npos;
    self().forEachSegment(index, length, [&](std::span<const std::byte> seg) {
      const std::size_t hit = byte_buf_util::firstIndexOf(seg, value);
      if (hit != npos) {
        found = base + hit;
        return false;
      }
      base += seg.size();
      return true;
    });
    return found;
  }

  template <class Processor>
  std::size_t scanForward(std::size_t index, std::size_t length, Processor& processor) const {
    std::size_t base = index;
    std::size_t found = npos;
    self().forEachSegment(index, length, [&](std::span<const std::byte> seg) {
      for (std::size_t i = 0; i < seg.size(); ++i) {
        if (!processor(seg[i])) {
          found = base + i;
          return false;
        }
      }
      base += seg.size();
      return true;
    });
    return found;
  }

  /// Runs fn over [index, index + length) as one span (copied into scratch when segmented).
  template <class Fn>
  auto withBytes(std::size_t index, std::size_t length, Fn&& fn) const {
    if constexpr (contiguousType()) {
      return fn(std::span<const std::byte>(self().contiguous(index, length), length));
    }
    if (const std::byte* p = self().contiguous(index, length)) return fn({p, length});
    detail::Scratch scratch(length);
    copyOut(index, {scratch.data(), length});
    return fn(std::span<const std::byte>(scratch.data(), length));
  }
  template <class Fn>
  auto withText(std::size_t index, std::size_t length, Fn&& fn) const {
    return withBytes(index, length, [&](std::span<const std::byte> bytes) {
      return fn(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    });
  }

  std::string strictUtf8At(std::size_t index, std::size_t n, const char* what) const {
    return withText(index, n, [&](std::string_view raw) {
      const std::size_t bad = utf8::firstInvalidUtf8(asBytes(raw), raw.size());
      if (bad != utf8::npos) detail::throwIllFormedUtf8(what, bad);
      return std::string(raw);
    });
  }

  template <class Fn>
  auto advancing(std::size_t n, const char* what, Fn&& fn) {
    self().checkReadableRange(n, what);
    auto result = fn(self().readerIndex());
    self().advanceReaderUnchecked(n);
    return result;
  }

  /// "Size once, then write unchecked": reserve the kernel's bound with one ensureWritable, let the
  /// kernel write through a raw pointer, advance writerIndex by the exact count. Kernels may
  /// scribble anywhere inside their bound (vector stores); past writerIndex that is harmless.
  /// Falls back to scratch memory when the bound would pass maxCapacity but the exact size fits,
  /// or when the writable region is not contiguous (a composite's boundary).
  template <class Encode, class Exact>
  std::size_t writeEncoded(std::size_t bound, Encode&& encode, Exact&& exact) {
    Derived& d = self();
    d.ensureWritable(0);  // read-only and empty handles throw here
    if (bound > d.maxWritableBytes()) {
      const std::size_t n = exact();
      d.ensureWritable(n);  // throws when even the exact size does not fit
      return encodeViaScratch(bound, encode);
    }
    d.ensureWritable(bound);
    if (std::byte* p = d.contiguousMutable(d.writerIndex(), bound)) {
      const std::size_t written = encode(p);
      d.advanceWriterUnchecked(written);
      return written;
    }
    return encodeViaScratch(bound, encode);
  }
  template <class Encode>
  std::size_t encodeViaScratch(std::size_t bound, Encode& encode) {
    detail::Scratch scratch(bound);
    const std::size_t written = encode(scratch.data());
    self().appendBytes({scratch.data(), written});
    return written;
  }
  template <class Encode>
  std::size_t setEncoded(std::size_t index, std::size_t bound, Encode&& encode) {
    detail::Scratch scratch(bound == 0 ? 1 : bound);
    const std::size_t written = encode(scratch.data());
    copyIn(index, {scratch.data(), written});
    return written;
  }
};

}  // namespace netbuf
