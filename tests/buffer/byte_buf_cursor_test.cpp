#include <netbuf/buffer/byte_buf_cursor.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using netbuf::ByteBuf;
using netbuf::ByteBufReader;
using netbuf::ByteBufWriter;
using netbuf::Unpooled;

TEST_CASE("writer: every write name, both orders, committed on destruction") {
  ByteBuf buf = Unpooled::buffer(4);  // forces growth through the cursor's slow path
  {
    ByteBufWriter out(buf);
    out.writeByte(-1).writeShort(0x0102).writeShortLE(0x0102).writeMedium(0x030405);
    out.writeInt(0x06070809).writeIntLE(0x06070809).writeLong(0x0a0b0c0d0e0f1011LL);
    out.writeFloat(1.5f).writeDoubleLE(-2.25).writeBoolean(true);
    out.writeBytes(std::as_bytes(std::span<const char>("xyz", 3)));
    // Growth publishes what was written before it; the rest is pending until destruction.
    CHECK(buf.writerIndex() + out.pending() == 1 + 2 + 2 + 3 + 4 + 4 + 8 + 4 + 8 + 1 + 3);
    CHECK(out.pending() > 0);
  }
  CHECK(buf.readableBytes() == 40);
  CHECK(buf.hexDump(0, 24) ==
        "ff"
        "0102"
        "0201"
        "030405"
        "06070809"
        "09080706"
        "0a0b0c0d0e0f1011");
  CHECK(buf.readByte() == -1);
  CHECK(buf.readShort() == 0x0102);
  CHECK(buf.readShortLE() == 0x0102);
  CHECK(buf.readMedium() == 0x030405);
  CHECK(buf.readInt() == 0x06070809);
  CHECK(buf.readIntLE() == 0x06070809);
  CHECK(buf.readLong() == 0x0a0b0c0d0e0f1011LL);
  CHECK(buf.readFloat() == 1.5f);
  CHECK(buf.readDoubleLE() == -2.25);
  CHECK(buf.readBoolean());
  CHECK(buf.readAscii(3) == "xyz");
}

TEST_CASE("writer: explicit commit publishes progress; limits and read-only are enforced") {
  ByteBuf buf = Unpooled::buffer(8, 8);
  ByteBufWriter out(buf);
  out.writeInt(1);
  out.commit();
  CHECK(buf.writerIndex() == 4);
  out.writeInt(2);
  CHECK_THROWS_AS(out.writeByte(3), netbuf::IndexOutOfBoundsError);  // past maxCapacity 8
  out.commit();
  CHECK(buf.writerIndex() == 8);
  CHECK(buf.getInt(4) == 2);

  ByteBuf ro = buf.asReadOnly();
  CHECK_THROWS_AS(ByteBufWriter{ro}, netbuf::ReadOnlyBufferError);
  ByteBuf empty;
  CHECK_THROWS_AS(ByteBufWriter{empty}, netbuf::EmptyBufferError);
}

TEST_CASE("reader: every read name, bounds checked, committed on destruction and on error") {
  ByteBuf buf = Unpooled::buffer();
  buf.writeShort(-2).writeIntLE(7).writeMediumLE(-3).writeLong(-4).writeDouble(0.5);
  {
    ByteBufReader in(buf);
    CHECK(in.readableBytes() == 25);
    CHECK(in.readShort() == -2);
    CHECK(in.readIntLE() == 7);
    CHECK(in.readMediumLE() == -3);
    CHECK(in.readUnsignedLong() == static_cast<std::uint64_t>(-4));
    CHECK(in.isReadable(8));
    CHECK(in.readDouble() == 0.5);
    CHECK_FALSE(in.isReadable());
    CHECK_THROWS_AS(in.readByte(), netbuf::IndexOutOfBoundsError);
    CHECK(buf.readerIndex() == 25);  // the failing read committed what was consumed before it
  }
  CHECK(buf.readerIndex() == 25);
  buf.readerIndex(0);
  {
    ByteBufReader in(buf);
    std::vector<std::byte> two(2);
    in.readBytes(two);
    CHECK(two[0] == std::byte{0xff});
    in.skipBytes(4);
    CHECK_THROWS_AS(in.skipBytes(100), netbuf::IndexOutOfBoundsError);
    CHECK(buf.readerIndex() == 6);
  }
}

TEST_CASE("cursors: a value that only partly fits is refused; what fits after it goes on") {
  ByteBuf buf = Unpooled::buffer(6, 6);
  {
    ByteBufWriter out(buf);
    out.writeInt(0x01020304);
    CHECK_THROWS_AS(out.writeInt(5), netbuf::IndexOutOfBoundsError);  // 2 of its 4 bytes fit
    CHECK(buf.writerIndex() == 4);
    out.writeShort(0x0506);  // exactly to the end
  }
  CHECK(buf.writerIndex() == 6);
  {
    ByteBufReader in(buf);
    CHECK(in.readInt() == 0x01020304);
    CHECK_THROWS_AS(in.readInt(), netbuf::IndexOutOfBoundsError);
    CHECK(buf.readerIndex() == 4);
    CHECK(in.readShort() == 0x0506);
    CHECK_FALSE(in.isReadable());
  }
  CHECK(buf.readerIndex() == 6);
}

TEST_CASE("cursors produce exactly what the per-call API produces") {
  ByteBuf a = Unpooled::buffer(0);
  ByteBuf b = Unpooled::buffer(0);
  {
    ByteBufWriter out(a);
    for (std::int32_t i = 0; i < 5000; ++i) {
      out.writeInt(i * 7919);
      out.writeLongLE(static_cast<std::int64_t>(i) << 33);
      b.writeInt(i * 7919);
      b.writeLongLE(static_cast<std::int64_t>(i) << 33);
    }
  }
  CHECK(a.equals(b));
  ByteBufReader in(a);
  for (std::int32_t i = 0; i < 5000; ++i) {
    REQUIRE(in.readInt() == i * 7919);
    REQUIRE(in.readLongLE() == static_cast<std::int64_t>(i) << 33);
  }
}
