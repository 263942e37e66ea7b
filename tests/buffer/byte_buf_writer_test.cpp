#include <netbuf/buffer/byte_buf_writer.hpp>

#include <netbuf/buffer/byte_buf_reader.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>

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
