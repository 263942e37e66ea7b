#include <netbuf/buffer/byte_accessors.hpp>

#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <typeinfo>

namespace {

using netbuf::ByteOrder;

/// What the accessor layer asked the raw operations for.
struct Call {
  std::string op;  // "get", "read", "set" or "write"
  const std::type_info* type = nullptr;
  std::size_t width = 0;
  ByteOrder order = ByteOrder::big;
  std::size_t index = 0;
};

/// A minimal buffer: 16 bytes of memory and the four raw operations, recording each call.
class Recorder : public netbuf::ByteAccessors<Recorder> {
 public:
  std::array<std::byte, 16> mem{};
  std::size_t pos = 0;
  Call last;

  template <class T, std::size_t N, ByteOrder O>
  T getValue(std::size_t index) const {
    last_ = Call{"get", &typeid(T), N, O, index};
    return netbuf::detail::loadValue<T, N, O>(mem.data() + index);
  }
  template <class T, std::size_t N, ByteOrder O>
  T readValue() {
    last = Call{"read", &typeid(T), N, O, pos};
    T v = netbuf::detail::loadValue<T, N, O>(mem.data() + pos);
    pos += N;
    return v;
  }
  template <class T, std::size_t N, ByteOrder O>
  void setValue(std::size_t index, T value) {
    last = Call{"set", &typeid(T), N, O, index};
    netbuf::detail::storeValue<T, N, O>(mem.data() + index, value);
  }
  template <class T, std::size_t N, ByteOrder O>
  void writeValue(T value) {
    last = Call{"write", &typeid(T), N, O, pos};
    netbuf::detail::storeValue<T, N, O>(mem.data() + pos, value);
    pos += N;
  }
  const Call& lastGet() const { return last_; }

 private:
  mutable Call last_;
};

void checkCall(const Call& c, const char* op, const std::type_info& type, std::size_t width,
               ByteOrder order, std::size_t index) {
  CHECK(c.op == op);
  REQUIRE(c.type != nullptr);
  CHECK(*c.type == type);
  CHECK(c.width == width);
  CHECK(c.order == order);
  CHECK(c.index == index);
}

constexpr auto kBig = ByteOrder::big;
constexpr auto kLittle = ByteOrder::little;

}  // namespace

TEST_CASE("named getters map to the right type, width and byte order") {
  Recorder r;
#define NETBUF_CHECK_GET(name, type, width, order)                \
  do {                                                            \
    static_assert(std::is_same_v<decltype(r.name(3)), type>);     \
    (void)r.name(3);                                              \
    checkCall(r.lastGet(), "get", typeid(type), width, order, 3); \
  } while (false)
  NETBUF_CHECK_GET(getBoolean, bool, 1, kBig);
  NETBUF_CHECK_GET(getByte, std::int8_t, 1, kBig);
  NETBUF_CHECK_GET(getUnsignedByte, std::uint8_t, 1, kBig);
  NETBUF_CHECK_GET(getShort, std::int16_t, 2, kBig);
  NETBUF_CHECK_GET(getShortLE, std::int16_t, 2, kLittle);
  NETBUF_CHECK_GET(getUnsignedShort, std::uint16_t, 2, kBig);
  NETBUF_CHECK_GET(getUnsignedShortLE, std::uint16_t, 2, kLittle);
  NETBUF_CHECK_GET(getMedium, std::int32_t, 3, kBig);
  NETBUF_CHECK_GET(getMediumLE, std::int32_t, 3, kLittle);
  NETBUF_CHECK_GET(getUnsignedMedium, std::uint32_t, 3, kBig);
  NETBUF_CHECK_GET(getUnsignedMediumLE, std::uint32_t, 3, kLittle);
  NETBUF_CHECK_GET(getInt, std::int32_t, 4, kBig);
  NETBUF_CHECK_GET(getIntLE, std::int32_t, 4, kLittle);
  NETBUF_CHECK_GET(getUnsignedInt, std::uint32_t, 4, kBig);
  NETBUF_CHECK_GET(getUnsignedIntLE, std::uint32_t, 4, kLittle);
  NETBUF_CHECK_GET(getLong, std::int64_t, 8, kBig);
  NETBUF_CHECK_GET(getLongLE, std::int64_t, 8, kLittle);
  NETBUF_CHECK_GET(getUnsignedLong, std::uint64_t, 8, kBig);
  NETBUF_CHECK_GET(getUnsignedLongLE, std::uint64_t, 8, kLittle);
  NETBUF_CHECK_GET(getFloat, float, 4, kBig);
  NETBUF_CHECK_GET(getFloatLE, float, 4, kLittle);
  NETBUF_CHECK_GET(getDouble, double, 8, kBig);
  NETBUF_CHECK_GET(getDoubleLE, double, 8, kLittle);
#undef NETBUF_CHECK_GET
}

TEST_CASE("named readers map to the right type, width and byte order") {
  Recorder r;
#define NETBUF_CHECK_READ(name, type, width, order)           \
  do {                                                        \
    r.pos = 1;                                                \
    static_assert(std::is_same_v<decltype(r.name()), type>);  \
    (void)r.name();                                           \
    checkCall(r.last, "read", typeid(type), width, order, 1); \
    CHECK(r.pos == 1 + (width));                              \
  } while (false)
  NETBUF_CHECK_READ(readBoolean, bool, 1, kBig);
  NETBUF_CHECK_READ(readByte, std::int8_t, 1, kBig);
  NETBUF_CHECK_READ(readUnsignedByte, std::uint8_t, 1, kBig);
  NETBUF_CHECK_READ(readShort, std::int16_t, 2, kBig);
  NETBUF_CHECK_READ(readShortLE, std::int16_t, 2, kLittle);
  NETBUF_CHECK_READ(readUnsignedShort, std::uint16_t, 2, kBig);
  NETBUF_CHECK_READ(readUnsignedShortLE, std::uint16_t, 2, kLittle);
  NETBUF_CHECK_READ(readMedium, std::int32_t, 3, kBig);
  NETBUF_CHECK_READ(readMediumLE, std::int32_t, 3, kLittle);
  NETBUF_CHECK_READ(readUnsignedMedium, std::uint32_t, 3, kBig);
  NETBUF_CHECK_READ(readUnsignedMediumLE, std::uint32_t, 3, kLittle);
  NETBUF_CHECK_READ(readInt, std::int32_t, 4, kBig);
  NETBUF_CHECK_READ(readIntLE, std::int32_t, 4, kLittle);
  NETBUF_CHECK_READ(readUnsignedInt, std::uint32_t, 4, kBig);
  NETBUF_CHECK_READ(readUnsignedIntLE, std::uint32_t, 4, kLittle);
  NETBUF_CHECK_READ(readLong, std::int64_t, 8, kBig);
  NETBUF_CHECK_READ(readLongLE, std::int64_t, 8, kLittle);
  NETBUF_CHECK_READ(readUnsignedLong, std::uint64_t, 8, kBig);
  NETBUF_CHECK_READ(readUnsignedLongLE, std::uint64_t, 8, kLittle);
  NETBUF_CHECK_READ(readFloat, float, 4, kBig);
  NETBUF_CHECK_READ(readFloatLE, float, 4, kLittle);
  NETBUF_CHECK_READ(readDouble, double, 8, kBig);
  NETBUF_CHECK_READ(readDoubleLE, double, 8, kLittle);
#undef NETBUF_CHECK_READ
}

TEST_CASE("named setters and writers map to the right type, width and byte order") {
  Recorder r;
#define NETBUF_CHECK_SET(name, type, width, order)           \
  do {                                                       \
    Recorder& ret = r.name(2, type{});                       \
    CHECK(&ret == &r);                                       \
    checkCall(r.last, "set", typeid(type), width, order, 2); \
  } while (false)
  NETBUF_CHECK_SET(setBoolean, bool, 1, kBig);
  NETBUF_CHECK_SET(setByte, std::int8_t, 1, kBig);
  NETBUF_CHECK_SET(setShort, std::int16_t, 2, kBig);
  NETBUF_CHECK_SET(setShortLE, std::int16_t, 2, kLittle);
  NETBUF_CHECK_SET(setMedium, std::int32_t, 3, kBig);
  NETBUF_CHECK_SET(setMediumLE, std::int32_t, 3, kLittle);
  NETBUF_CHECK_SET(setInt, std::int32_t, 4, kBig);
  NETBUF_CHECK_SET(setIntLE, std::int32_t, 4, kLittle);
  NETBUF_CHECK_SET(setLong, std::int64_t, 8, kBig);
  NETBUF_CHECK_SET(setLongLE, std::int64_t, 8, kLittle);
  NETBUF_CHECK_SET(setFloat, float, 4, kBig);
  NETBUF_CHECK_SET(setFloatLE, float, 4, kLittle);
  NETBUF_CHECK_SET(setDouble, double, 8, kBig);
  NETBUF_CHECK_SET(setDoubleLE, double, 8, kLittle);
#undef NETBUF_CHECK_SET
#define NETBUF_CHECK_WRITE(name, type, width, order)           \
  do {                                                         \
    r.pos = 0;                                                 \
    Recorder& ret = r.name(type{});                            \
    CHECK(&ret == &r);                                         \
    checkCall(r.last, "write", typeid(type), width, order, 0); \
    CHECK(r.pos == (width));                                   \
  } while (false)
  NETBUF_CHECK_WRITE(writeBoolean, bool, 1, kBig);
  NETBUF_CHECK_WRITE(writeByte, std::int8_t, 1, kBig);
  NETBUF_CHECK_WRITE(writeShort, std::int16_t, 2, kBig);
  NETBUF_CHECK_WRITE(writeShortLE, std::int16_t, 2, kLittle);
  NETBUF_CHECK_WRITE(writeMedium, std::int32_t, 3, kBig);
  NETBUF_CHECK_WRITE(writeMediumLE, std::int32_t, 3, kLittle);
  NETBUF_CHECK_WRITE(writeInt, std::int32_t, 4, kBig);
  NETBUF_CHECK_WRITE(writeIntLE, std::int32_t, 4, kLittle);
  NETBUF_CHECK_WRITE(writeLong, std::int64_t, 8, kBig);
  NETBUF_CHECK_WRITE(writeLongLE, std::int64_t, 8, kLittle);
  NETBUF_CHECK_WRITE(writeFloat, float, 4, kBig);
  NETBUF_CHECK_WRITE(writeFloatLE, float, 4, kLittle);
  NETBUF_CHECK_WRITE(writeDouble, double, 8, kBig);
  NETBUF_CHECK_WRITE(writeDoubleLE, double, 8, kLittle);
#undef NETBUF_CHECK_WRITE
}

TEST_CASE("generic get<T>/set<T>/read<T>/write<T> use sizeof(T) bytes, big-endian unless LE") {
  Recorder r;
  r.set<std::uint32_t>(0, 0x01020304u);
  checkCall(r.last, "set", typeid(std::uint32_t), 4, kBig, 0);
  CHECK(r.mem[0] == std::byte{1});
  CHECK(r.mem[3] == std::byte{4});
  CHECK(r.get<std::uint32_t>(0) == 0x01020304u);
  CHECK(r.getLE<std::uint32_t>(0) == 0x04030201u);
  checkCall(r.lastGet(), "get", typeid(std::uint32_t), 4, kLittle, 0);

  r.setLE<std::uint16_t>(4, 0xA1B2);
  checkCall(r.last, "set", typeid(std::uint16_t), 2, kLittle, 4);
  CHECK(r.mem[4] == std::byte{0xB2});
  CHECK(r.mem[5] == std::byte{0xA1});
  CHECK(r.get<std::uint16_t>(4) == 0xB2A1);

  r.pos = 8;
  r.write<std::int64_t>(-2);
  checkCall(r.last, "write", typeid(std::int64_t), 8, kBig, 8);
  CHECK(r.mem[8] == std::byte{0xFF});
  CHECK(r.mem[15] == std::byte{0xFE});
  r.pos = 8;
  CHECK(r.read<std::int64_t>() == -2);
  r.pos = 8;
  CHECK(r.readLE<std::int64_t>() == static_cast<std::int64_t>(0xFEFFFFFFFFFFFFFFull));
  checkCall(r.last, "read", typeid(std::int64_t), 8, kLittle, 8);
  r.pos = 0;
  r.writeLE<double>(1.0);
  checkCall(r.last, "write", typeid(double), 8, kLittle, 0);
  CHECK(r.mem[7] == std::byte{0x3F});
  CHECK(r.mem[6] == std::byte{0xF0});
  CHECK(r.getLE<double>(0) == 1.0);
}

TEST_CASE("loadValue/storeValue: medium sign extension and float bit patterns") {
  std::array<std::byte, 8> m{};
  netbuf::detail::storeValue<std::int32_t, 3, kBig>(m.data(), 0x12800000);  // low 24 bits only
  CHECK(m[0] == std::byte{0x80});
  CHECK(m[1] == std::byte{0x00});
  CHECK(m[2] == std::byte{0x00});
  CHECK(m[3] == std::byte{0x00});  // untouched
  CHECK(netbuf::detail::loadValue<std::int32_t, 3, kBig>(m.data()) == -8388608);
  CHECK(netbuf::detail::loadValue<std::uint32_t, 3, kBig>(m.data()) == 8388608u);
  CHECK(netbuf::detail::loadValue<std::int32_t, 3, kLittle>(m.data()) == 0x80);

  netbuf::detail::storeValue<float, 4, kBig>(m.data(), -0.0f);
  CHECK(m[0] == std::byte{0x80});
  CHECK(m[1] == std::byte{0});
  const float nf = netbuf::detail::loadValue<float, 4, kBig>(m.data());
  CHECK(std::bit_cast<std::uint32_t>(nf) == 0x80000000u);

  netbuf::detail::storeValue<bool, 1, kBig>(m.data(), true);
  CHECK(m[0] == std::byte{1});
  m[0] = std::byte{0x7E};
  CHECK(netbuf::detail::loadValue<bool, 1, kBig>(m.data()));
  m[0] = std::byte{0};
  CHECK_FALSE(netbuf::detail::loadValue<bool, 1, kBig>(m.data()));
}
