#include <netbuf/buffer/byte_buf_view.hpp>

#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/byte_processor.hpp>
#include <netbuf/buffer/errors.hpp>
#include <string>
#include <string_view>

using netbuf::ByteBufView;
using netbuf::IndexOutOfBoundsError;

namespace {
const std::array<std::byte, 12> kBytes{std::byte{0x01}, std::byte{0x02}, std::byte{0x03},
                                       std::byte{0x04}, std::byte{0x05}, std::byte{0x06},
                                       std::byte{0x07}, std::byte{0x08}, std::byte{0xFF},
                                       std::byte{0xFE}, std::byte{0x80}, std::byte{0x00}};
}  // namespace

TEST_CASE("construction and basic queries") {
  constexpr ByteBufView empty;
  CHECK(empty.size() == 0);
  CHECK(empty.data() == nullptr);
  CHECK(empty.readerIndex() == 0);
  CHECK(empty.readableBytes() == 0);
  CHECK_FALSE(empty.isReadable());
  CHECK(empty.isReadable(0));

  ByteBufView v(kBytes.data(), kBytes.size());
  CHECK(v.data() == kBytes.data());
  CHECK(v.size() == 12);
  CHECK(v.readableBytes() == 12);
  CHECK(v.isReadable(12));
  CHECK_FALSE(v.isReadable(13));

  ByteBufView fromSpan{std::span<const std::byte>(kBytes)};
  CHECK(fromSpan.size() == 12);
  CHECK(fromSpan.data() == kBytes.data());

  const std::string text = "hello";
  ByteBufView fromText{std::string_view(text)};
  CHECK(fromText.size() == 5);
  CHECK(fromText.readableStringView() == "hello");
  CHECK(static_cast<const void*>(fromText.data()) == static_cast<const void*>(text.data()));
}

TEST_CASE("getters read big- and little-endian values at absolute indices, index unchanged") {
  ByteBufView v(kBytes.data(), kBytes.size());
  CHECK(v.getByte(0) == 1);
  CHECK(v.getUnsignedByte(8) == 0xFF);
  CHECK(v.getByte(8) == -1);
  CHECK(v.getShort(0) == 0x0102);
  CHECK(v.getShortLE(0) == 0x0201);
  CHECK(v.getUnsignedShort(8) == 0xFFFE);
  CHECK(v.getShort(8) == -2);
  CHECK(v.getMedium(0) == 0x010203);
  CHECK(v.getMediumLE(0) == 0x030201);
  CHECK(v.getMedium(9) == static_cast<std::int32_t>(0xFFFE8000u));  // FE 80 00 -> sign extended
  CHECK(v.getUnsignedMedium(9) == 0xFE8000u);
  CHECK(v.getInt(0) == 0x01020304);
  CHECK(v.getIntLE(0) == 0x04030201);
  CHECK(v.getLong(0) == 0x0102030405060708LL);
  CHECK(v.getLongLE(0) == 0x0807060504030201LL);
  CHECK(v.getUnsignedInt(8) == 0xFFFE8000u);
  CHECK(v.getBoolean(0));
  CHECK_FALSE(v.getBoolean(11));
  CHECK(v.readerIndex() == 0);
}

TEST_CASE("readers advance the reader index; bounds are checked without moving it") {
  ByteBufView v(kBytes.data(), kBytes.size());
  CHECK(v.readInt() == 0x01020304);
  CHECK(v.readerIndex() == 4);
  CHECK(v.readShortLE() == 0x0605);
  CHECK(v.readUnsignedByte() == 7);
  CHECK(v.readerIndex() == 7);
  CHECK(v.readableBytes() == 5);
  CHECK_THROWS_AS(v.readLong(), IndexOutOfBoundsError);
  CHECK(v.readerIndex() == 7);
  CHECK_THROWS_WITH_AS(v.readLong(), doctest::Contains("index 7, length 8"), IndexOutOfBoundsError);
  CHECK(v.readUnsignedInt() == 0x08FFFE80u);
  CHECK(v.readByte() == 0);
  CHECK_FALSE(v.isReadable());
  CHECK_THROWS_AS(v.readByte(), IndexOutOfBoundsError);
}

TEST_CASE("getter bounds: last valid index, one past, and huge indices never overflow") {
  ByteBufView v(kBytes.data(), kBytes.size());
  CHECK(v.getLong(4) == static_cast<std::int64_t>(0x05060708FFFE8000ull));
  CHECK_THROWS_AS(v.getLong(5), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(v.getLong(5),
                       "ByteBufView get: index 5, length 8 out of bounds (expected index + "
                       "length <= 12)",
                       IndexOutOfBoundsError);
  CHECK_THROWS_AS(v.getByte(12), IndexOutOfBoundsError);
  CHECK_THROWS_AS(v.getInt(static_cast<std::size_t>(-2)), IndexOutOfBoundsError);
  CHECK_THROWS_AS(v.getInt(static_cast<std::size_t>(-1)), IndexOutOfBoundsError);
  CHECK_THROWS_AS(ByteBufView().getByte(0), IndexOutOfBoundsError);
}

TEST_CASE("readerIndex, skipBytes, slice, readSlice") {
  ByteBufView v(kBytes.data(), kBytes.size());
  v.readerIndex(12);
  CHECK(v.readableBytes() == 0);
  CHECK_THROWS_WITH_AS(v.readerIndex(13), doctest::Contains("index 13"), IndexOutOfBoundsError);
  CHECK(v.readerIndex() == 12);
  v.readerIndex(0);
  v.skipBytes(3);
  CHECK(v.readerIndex() == 3);
  CHECK_THROWS_AS(v.skipBytes(10), IndexOutOfBoundsError);
  CHECK(v.readerIndex() == 3);

  ByteBufView s = v.slice();  // readable bytes
  CHECK(s.size() == 9);
  CHECK(s.readerIndex() == 0);
  CHECK(s.getByte(0) == 4);

  ByteBufView s2 = v.slice(8, 4);  // absolute, ignores readerIndex
  CHECK(s2.size() == 4);
  CHECK(s2.getUnsignedInt(0) == 0xFFFE8000u);
  CHECK(v.slice(12, 0).size() == 0);
  CHECK_THROWS_AS(v.slice(9, 4), IndexOutOfBoundsError);
  CHECK_THROWS_AS(v.slice(13, 0), IndexOutOfBoundsError);

  ByteBufView r = v.readSlice(2);
  CHECK(r.size() == 2);
  CHECK(r.data() == kBytes.data() + 3);
  CHECK(v.readerIndex() == 5);
  CHECK_THROWS_AS(v.readSlice(8), IndexOutOfBoundsError);
  CHECK(v.readerIndex() == 5);
  CHECK(v.readSlice(7).size() == 7);
  CHECK(v.readSlice(0).size() == 0);
}

TEST_CASE("getBytes / readBytes") {
  ByteBufView v(kBytes.data(), kBytes.size());
  std::array<std::byte, 4> out{};
  v.getBytes(8, out);
  CHECK(out[0] == std::byte{0xFF});
  CHECK(out[3] == std::byte{0x00});
  CHECK(v.readerIndex() == 0);
  CHECK_THROWS_AS(v.getBytes(9, out), IndexOutOfBoundsError);
  v.getBytes(12, std::span<std::byte>());  // zero length at the end is fine

  v.readBytes(out);
  CHECK(out[0] == std::byte{1});
  CHECK(out[3] == std::byte{4});
  CHECK(v.readerIndex() == 4);
  v.readerIndex(10);
  CHECK_THROWS_AS(v.readBytes(out), IndexOutOfBoundsError);
  CHECK(v.readerIndex() == 10);
}

TEST_CASE("search, forEachByte, compare, hash, dumps") {
  const std::string_view text = "GET / HTTP/1.1\r\nHost: x\r\n";
  ByteBufView v(text);
  CHECK(v.bytesBefore(std::byte{'\r'}) == 14);
  CHECK(v.bytesBefore(std::byte{'Z'}) == ByteBufView::npos);
  CHECK(v.forEachByte(netbuf::processors::findCrlf) == 14);
  CHECK(v.forEachByte(netbuf::processors::findAsciiSpace) == 3);
  v.skipBytes(4);
  CHECK(v.bytesBefore(std::byte{'/'}) == 0);                      // relative to readerIndex
  CHECK(v.forEachByte(netbuf::processors::findAsciiSpace) == 5);  // absolute index
  CHECK(v.forEachByte([](std::byte) { return true; }) == ByteBufView::npos);

  ByteBufView a{std::string_view("abc")};
  ByteBufView b{std::string_view("xabc")};
  CHECK_FALSE(a.equals(b));
  b.skipBytes(1);
  CHECK(a.equals(b));
  CHECK(a == b);
  CHECK(a.compare(b) == 0);
  CHECK(a.hashCode() == b.hashCode());
  b.skipBytes(1);  // "bc" > "abc"
  CHECK(a.compare(b) < 0);
  CHECK(b.compare(a) > 0);
  CHECK(a.hexDump() == "616263");
  CHECK(a.prettyHexDump().find("|00000000| 61 62 63 ") != std::string::npos);
  CHECK(a.prettyHexDump().find("|abc             |") != std::string::npos);
}
