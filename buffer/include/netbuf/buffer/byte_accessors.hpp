#pragma once
// The primitive accessor vocabulary shared by every netbuf buffer type (ByteBuf, ByteBufView and
// CompositeByteBuf). Netty users know these names: getInt, readUnsignedShortLE, writeMedium, ...
//
// One implementation serves every type: ByteAccessors<Derived> is a CRTP base that turns each
// named method into a call of one of four raw operations the buffer type provides:
//
//   template <class T, std::size_t N, ByteOrder O> T    getValue(std::size_t index) const;
//   template <class T, std::size_t N, ByteOrder O> T    readValue();
//   template <class T, std::size_t N, ByteOrder O> void setValue(std::size_t index, T value);
//   template <class T, std::size_t N, ByteOrder O> void writeValue(T value);
//
// T is the C++ type returned or taken, N the number of bytes on the wire (N < sizeof(T) only for
// the 24-bit "medium" values) and O the byte order. A type that provides only the first two (a
// read-only view) simply cannot instantiate the set/write names: templates are instantiated on use.
// Everything here is inline and resolves at compile time: no virtual call per primitive.

#include <bit>
#include <boost/endian/conversion.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace netbuf {

/// Byte order of multi-byte values. netbuf, like Netty, defaults to big-endian (network order).
using ByteOrder = boost::endian::order;

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

}  // namespace detail

template <class Derived>
class ByteAccessors {
  static constexpr ByteOrder kBig = ByteOrder::big;
  static constexpr ByteOrder kLittle = ByteOrder::little;

  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  Derived& self() noexcept { return static_cast<Derived&>(*this); }

 public:
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

 protected:
  ByteAccessors() = default;
  ~ByteAccessors() = default;
  ByteAccessors(const ByteAccessors&) = default;
  ByteAccessors(ByteAccessors&&) = default;
  ByteAccessors& operator=(const ByteAccessors&) = default;
  ByteAccessors& operator=(ByteAccessors&&) = default;
};

}  // namespace netbuf
