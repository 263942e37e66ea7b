#include <netbuf/buffer/byte_buf_reader.hpp>

#include <netbuf/buffer/byte_buf_writer.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using netbuf::ByteBuf;
using netbuf::ByteBufReader;
using netbuf::ByteBufWriter;
using netbuf::Unpooled;

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
