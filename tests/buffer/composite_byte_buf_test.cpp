#include <netbuf/buffer/composite_byte_buf.hpp>

#include <doctest/doctest.h>

#include <fmt/format.h>
#include <bit>
#include <boost/asio/buffer.hpp>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using netbuf::ByteBuf;
using netbuf::CompositeByteBuf;
using netbuf::IndexOutOfBoundsError;
using netbuf::Unpooled;

namespace {

ByteBuf bytesBuf(std::string_view s) { return Unpooled::copiedBuffer(s); }

std::string pattern(std::size_t n, unsigned seed = 1) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 37 + seed * 11) & 0xff);
  return s;
}

/// A composite whose components have the given lengths and hold `text` end to end.
CompositeByteBuf split(const std::string& text, const std::vector<std::size_t>& lengths,
                       std::size_t maxComponents = 64) {
  CompositeByteBuf c(netbuf::ByteBufAllocator::defaultAllocator(), maxComponents);
  std::size_t at = 0;
  for (std::size_t len : lengths) {
    c.addComponent(true, bytesBuf(std::string_view(text).substr(at, len)));
    at += len;
  }
  REQUIRE(at == text.size());
  return c;
}

std::string readableOf(const CompositeByteBuf& c) {
  std::string out(c.readableBytes(), '\0');
  c.getBytes(c.readerIndex(), out.data(), out.size());
  return out;
}

std::uint64_t seedFromEnv() {
  if (const char* s = std::getenv("NETBUF_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261129;
}

}  // namespace

TEST_CASE("components present one index space; only readable regions become components") {
  ByteBuf a = bytesBuf("xxHELLO");
  a.skipBytes(2);  // readable: HELLO
  ByteBuf b = Unpooled::buffer(16);
  b.writeBytes(std::string_view(", world"));  // capacity 16, readable 7
  CompositeByteBuf c;
  c.addComponent(true, std::move(a)).addComponent(true, std::move(b));
  CHECK(c.numComponents() == 2);
  CHECK(c.capacity() == 12);
  CHECK(c.writerIndex() == 12);
  CHECK(readableOf(c) == "HELLO, world");
  CHECK(c.toByteIndex(1) == 5);
  CHECK(c.toComponentIndex(4) == 0);
  CHECK(c.toComponentIndex(5) == 1);
  CHECK(c.toComponentIndex(11) == 1);
  CHECK_THROWS_AS(c.toComponentIndex(12), IndexOutOfBoundsError);
  CHECK_THROWS_AS(c.toByteIndex(2), IndexOutOfBoundsError);
}

TEST_CASE("addComponent without increaseWriterIndex keeps bytes unreadable (Netty's default)") {
  CompositeByteBuf c;
  c.addComponent(bytesBuf("abc"));
  CHECK(c.capacity() == 3);
  CHECK(c.writerIndex() == 0);
  CHECK_FALSE(c.isReadable());
  c.writerIndex(3);
  CHECK(readableOf(c) == "abc");
}

TEST_CASE("addComponent at an index inserts and shifts offsets") {
  CompositeByteBuf c = split("abcdef", {3, 3});
  c.addComponent(true, std::size_t{1}, bytesBuf("XY"));
  CHECK(c.numComponents() == 3);
  CHECK(readableOf(c) == "abcXYdef");
  CHECK(c.toByteIndex(2) == 5);
  CHECK_THROWS_AS(c.addComponent(std::size_t{9}, bytesBuf("z")), IndexOutOfBoundsError);
  CHECK_THROWS_AS(c.addComponent(true, ByteBuf()), netbuf::EmptyBufferError);
}

TEST_CASE("every primitive straddling every component boundary matches a flat buffer") {
  const std::string text = pattern(40);
  // Components of 1, 2, 3, 1, 5, 7, 1, 4, 8, 8 bytes: every width meets every boundary shape.
  CompositeByteBuf c = split(text, {1, 2, 3, 1, 5, 7, 1, 4, 8, 8});
  ByteBuf flat = Unpooled::copiedBuffer(text);
  for (std::size_t i = 0; i + 1 <= text.size(); ++i) {
    CAPTURE(i);
    CHECK(c.getByte(i) == flat.getByte(i));
    CHECK(c.getUnsignedByte(i) == flat.getUnsignedByte(i));
    if (i + 2 <= text.size()) {
      CHECK(c.getShort(i) == flat.getShort(i));
      CHECK(c.getUnsignedShortLE(i) == flat.getUnsignedShortLE(i));
    }
    if (i + 3 <= text.size()) {
      CHECK(c.getMedium(i) == flat.getMedium(i));
      CHECK(c.getUnsignedMediumLE(i) == flat.getUnsignedMediumLE(i));
    }
    if (i + 4 <= text.size()) {
      CHECK(c.getInt(i) == flat.getInt(i));
      CHECK(c.getIntLE(i) == flat.getIntLE(i));
      CHECK(std::bit_cast<std::uint32_t>(c.getFloat(i)) ==
            std::bit_cast<std::uint32_t>(flat.getFloat(i)));
    }
    if (i + 8 <= text.size()) {
      CHECK(c.getLong(i) == flat.getLong(i));
      CHECK(c.getUnsignedLongLE(i) == flat.getUnsignedLongLE(i));
      CHECK(std::bit_cast<std::uint64_t>(c.getDouble(i)) ==
            std::bit_cast<std::uint64_t>(flat.getDouble(i)));
    }
  }
  CHECK_THROWS_AS((void)c.getLong(33), IndexOutOfBoundsError);
  CHECK_THROWS_AS((void)c.getInt(static_cast<std::size_t>(-2)), IndexOutOfBoundsError);

  // Sets at every offset, checked against the flat model byte for byte.
  for (std::size_t i = 0; i + 8 <= text.size(); ++i) {
    CAPTURE(i);
    c.setLong(i, static_cast<std::int64_t>(0x0102030405060708LL + i));
    flat.setLong(i, static_cast<std::int64_t>(0x0102030405060708LL + i));
    c.setMediumLE(i + 1, static_cast<std::int32_t>(0xabcdef - i));
    flat.setMediumLE(i + 1, static_cast<std::int32_t>(0xabcdef - i));
    c.setShort(i + 3, static_cast<std::int16_t>(i * 7));
    flat.setShort(i + 3, static_cast<std::int16_t>(i * 7));
    REQUIRE(readableOf(c) == std::string(flat.readableStringView()));
  }

  // Sequential reads of every width starting at every offset, across every boundary.
  for (std::size_t start = 0; start < 8; ++start) {
    for (int width : {1, 2, 3, 4, 8}) {
      CAPTURE(start);
      CAPTURE(width);
      c.readerIndex(start);
      flat.readerIndex(start);
      while (c.readableBytes() >= static_cast<std::size_t>(width)) {
        switch (width) {
          case 1:
            REQUIRE(c.readUnsignedByte() == flat.readUnsignedByte());
            break;
          case 2:
            REQUIRE(c.readShortLE() == flat.readShortLE());
            break;
          case 3:
            REQUIRE(c.readMedium() == flat.readMedium());
            break;
          case 4:
            REQUIRE(c.readInt() == flat.readInt());
            break;
          default:
            REQUIRE(c.readLongLE() == flat.readLongLE());
            break;
        }
      }
      CHECK(c.readableBytes() == flat.readableBytes());
    }
  }
  // Writes of every width straddling boundaries, through writerIndex.
  for (std::size_t start = 0; start + 8 <= text.size(); start += 3) {
    c.setIndex(0, start);
    flat.setIndex(0, start);
    c.writeLong(static_cast<std::int64_t>(start) * 0x0101010101LL).writeMediumLE(-7).writeShort(9);
    flat.writeLong(static_cast<std::int64_t>(start) * 0x0101010101LL)
        .writeMediumLE(-7)
        .writeShort(9);
    REQUIRE(readableOf(c) == std::string(flat.readableStringView()));
  }
}

TEST_CASE("writes go into spare room, then into new components from the allocator") {
  CompositeByteBuf c = split("head", {4});
  c.writeInt(0x01020304);  // needs a new component (the first one is someone else's)
  CHECK(c.numComponents() == 2);
  const std::size_t cap = c.capacity();
  CHECK(cap > 8);
  c.writeInt(0x05060708);  // fits in the component just added: no new component
  CHECK(c.numComponents() == 2);
  CHECK(c.capacity() == cap);
  CHECK(c.readableBytes() == 12);
  CHECK(c.getInt(4) == 0x01020304);
  CHECK(c.readInt() == 0x68656164);  // "head"
  CHECK_THROWS_AS(c.ensureWritable(netbuf::kDefaultMaxCapacity), IndexOutOfBoundsError);
}

TEST_CASE("a read-only component refuses writes; reads still work") {
  CompositeByteBuf c;
  c.addComponent(true, Unpooled::wrappedUnownedBuffer(std::string_view("constant")));
  c.addComponent(true, bytesBuf("mutable"));
  CHECK(c.getByte(0) == 'c');
  CHECK_THROWS_AS(c.setByte(0, 'C'), netbuf::ReadOnlyBufferError);
  CHECK_THROWS_AS(c.setInt(6, 1), netbuf::ReadOnlyBufferError);  // straddles into it
  CHECK_THROWS_AS(c.setBytes(0, std::string_view("zz")), netbuf::ReadOnlyBufferError);
  c.setByte(8, 'M');
  CHECK(readableOf(c) == "constantMutable");
}

TEST_CASE("reference counts follow the components' lifetimes") {
  ByteBuf a = bytesBuf("aaaa");
  ByteBuf b = bytesBuf("bbbb");
  {
    CompositeByteBuf c;
    c.addComponent(true, a.retainedSlice());
    c.addComponent(true, b.retainedSlice());
    CHECK(a.refCnt() == 2);
    CHECK(b.refCnt() == 2);
    ByteBuf first = c.component(0);  // +1 on a's storage
    CHECK(a.refCnt() == 3);
    CHECK(first.readableStringView() == "aaaa");
    first.reset();
    c.skipBytes(4);
    c.discardReadComponents();  // a's component fully read: released, no copy
    CHECK(a.refCnt() == 1);
    CHECK(c.numComponents() == 1);
    CHECK(c.readerIndex() == 0);
    CHECK(readableOf(c) == "bbbb");
    c.consolidate();  // a single component: nothing to do
    CHECK(b.refCnt() == 2);
    c.addComponent(true, bytesBuf("cc"));
    c.consolidate();  // copies into new memory and releases b's reference
    CHECK(b.refCnt() == 1);
    CHECK(readableOf(c) == "bbbbcc");
    c.addComponent(true, b.retainedSlice());
    CHECK(b.refCnt() == 2);
  }  // the composite dies: its references go
  CHECK(a.refCnt() == 1);
  CHECK(b.refCnt() == 1);
}

TEST_CASE("discardReadBytes trims the first component without copying") {
  CompositeByteBuf c = split("0123456789", {4, 6});
  c.markReaderIndex();
  c.readerIndex(6).markWriterIndex();
  c.discardReadBytes();
  CHECK(c.readerIndex() == 0);
  CHECK(c.writerIndex() == 4);
  CHECK(c.capacity() == 4);
  CHECK(c.numComponents() == 1);
  CHECK(readableOf(c) == "6789");
  c.resetWriterIndex();
  CHECK(c.writerIndex() == 4);  // 10 - 6
  c.resetReaderIndex();
  CHECK(c.readerIndex() == 0);  // clamped at 0
  c.skipBytes(4);
  c.discardReadBytes();  // all read, at capacity: everything released
  CHECK(c.numComponents() == 0);
  CHECK(c.capacity() == 0);
}

TEST_CASE("consolidate preserves content and component ranges") {
  const std::string text = pattern(100, 3);
  CompositeByteBuf c = split(text, {10, 20, 30, 40});
  c.consolidate(1, 2);
  CHECK(c.numComponents() == 3);
  CHECK(c.toByteIndex(1) == 10);
  CHECK(c.toByteIndex(2) == 60);
  CHECK(readableOf(c) == text);
  c.consolidate();
  CHECK(c.numComponents() == 1);
  CHECK(readableOf(c) == text);
  CHECK_THROWS_AS(c.consolidate(0, 2), IndexOutOfBoundsError);
}

TEST_CASE("adding 10,000 components one at a time copies a linear number of bytes") {
  constexpr std::size_t kCount = 10000;
  CompositeByteBuf c(netbuf::ByteBufAllocator::defaultAllocator(), 16);
  std::string expected;
  for (std::size_t i = 0; i < kCount; ++i) {
    const std::string piece(1 + i % 7, static_cast<char>('a' + i % 26));
    expected += piece;
    c.addComponent(true, bytesBuf(piece));
    REQUIRE(c.numComponents() <= 16);
  }
  CHECK(readableOf(c) == expected);
  // Consolidating everything on every overflow (Netty) would copy O(n^2) bytes, about
  // expected.size() * kCount / 16 here. Appending into a doubling buffer copies each byte at most
  // about three times.
  CHECK(c.bytesCopiedByConsolidation() <= 4 * expected.size());
  CHECK(c.bytesCopiedByConsolidation() >= expected.size() / 2);
}

TEST_CASE("maxNumComponents is enforced and validated") {
  CHECK_THROWS_AS(CompositeByteBuf(netbuf::ByteBufAllocator::defaultAllocator(), 0),
                  netbuf::IllegalArgumentError);
  CompositeByteBuf one(netbuf::ByteBufAllocator::defaultAllocator(), 1);
  one.addComponent(true, bytesBuf("ab")).addComponent(true, bytesBuf("cd"));
  CHECK(one.numComponents() == 1);
  one.addComponent(true, bytesBuf("ef"));
  CHECK(one.numComponents() == 1);
  CHECK(readableOf(one) == "abcdef");
}

TEST_CASE("toComponentIndex agrees with a linear scan for 1..1024 components") {
  for (std::size_t n : {1u, 2u, 3u, 17u, 100u, 1024u}) {
    CompositeByteBuf c(netbuf::ByteBufAllocator::defaultAllocator(), n);
    std::vector<std::size_t> owner;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t len = i % 3;  // includes empty components, which own no byte
      c.addComponent(true, bytesBuf(std::string(len, 'x')));
      for (std::size_t k = 0; k < len; ++k) owner.push_back(i);
    }
    REQUIRE(c.numComponents() == n);
    // Random order defeats the sequential shortcut; then a forward walk uses it.
    std::mt19937 rng(static_cast<unsigned>(n));
    for (std::size_t k = 0; k < owner.size(); ++k) {
      const std::size_t off = rng() % owner.size();
      REQUIRE(c.toComponentIndex(off) == owner[off]);
    }
    for (std::size_t off = 0; off < owner.size(); ++off)
      REQUIRE(c.toComponentIndex(off) == owner[off]);
  }
}

TEST_CASE("retainedSlice: a ByteBuf inside one component, a composite across components") {
  ByteBuf a = bytesBuf("abcd");
  ByteBuf b = bytesBuf("efgh");
  CompositeByteBuf c;
  c.addComponent(true, a.retainedSlice()).addComponent(true, b.retainedSlice());

  auto inside = c.retainedSlice(1, 2);
  REQUIRE(std::holds_alternative<ByteBuf>(inside));
  ByteBuf& s = std::get<ByteBuf>(inside);
  CHECK(s.readableStringView() == "bc");
  CHECK(a.refCnt() == 3);
  a.setByte(1, 'B');  // shared storage, no copy
  CHECK(s.getByte(0) == 'B');

  auto across = c.retainedSlice(2, 4);
  REQUIRE(std::holds_alternative<CompositeByteBuf>(across));
  CompositeByteBuf& x = std::get<CompositeByteBuf>(across);
  CHECK(readableOf(x) == "cdef");
  CHECK(x.numComponents() == 2);
  b.setByte(0, 'E');
  CHECK(readableOf(x) == "cdEf");

  auto read = c.readRetainedSlice(5);
  CHECK(c.readerIndex() == 5);
  CHECK(std::holds_alternative<CompositeByteBuf>(read));
  CHECK_THROWS_AS(c.readRetainedSlice(4), IndexOutOfBoundsError);
}

TEST_CASE("nested composites are flattened, not nested") {
  CompositeByteBuf inner = split("0123456789", {5, 5});
  inner.readerIndex(2).writerIndex(8);
  CompositeByteBuf outer = split("ab", {2});
  outer.addComponent(true, std::move(inner));
  CHECK(outer.numComponents() == 3);
  CHECK(readableOf(outer) == "ab234567");
  CHECK(inner.numComponents() == 0);  // NOLINT: moved-from composite is empty and usable
  CHECK(inner.capacity() == 0);
}

TEST_CASE("removeComponent releases and trims indices to the new capacity") {
  CompositeByteBuf c = split("aaabbbccc", {3, 3, 3});
  c.removeComponent(1);
  CHECK(c.capacity() == 6);
  CHECK(c.writerIndex() == 6);
  CHECK(readableOf(c) == "aaaccc");
  CHECK(c.toByteIndex(1) == 3);
  CHECK_THROWS_AS(c.removeComponents(1, 5), IndexOutOfBoundsError);
}

TEST_CASE("capacity(n) grows with a component and shrinks by dropping and trimming") {
  CompositeByteBuf c = split("abcdef", {3, 3});
  c.capacity(10);
  CHECK(c.capacity() == 10);
  CHECK(c.numComponents() == 3);
  c.setInt(6, 0x41424344);
  c.writerIndex(10);
  CHECK(readableOf(c) == "abcdefABCD");
  c.capacity(4);
  CHECK(c.capacity() == 4);
  CHECK(c.numComponents() == 2);
  CHECK(c.writerIndex() == 4);
  CHECK(readableOf(c) == "abcd");
  CHECK_THROWS_AS(c.capacity(netbuf::kDefaultMaxCapacity + 1), IndexOutOfBoundsError);
}

TEST_CASE("decompose returns retained slices covering the range") {
  CompositeByteBuf c = split("abcdefghij", {3, 3, 4});
  std::vector<ByteBuf> parts = c.decompose(2, 6);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].readableStringView() == "c");
  CHECK(parts[1].readableStringView() == "def");
  CHECK(parts[2].readableStringView() == "gh");
  CHECK(c.decompose(0, 0).empty());
  CHECK_THROWS_AS(c.decompose(5, 6), IndexOutOfBoundsError);
}

TEST_CASE("the gather sequence is exactly the readable bytes, without allocation") {
  const std::string text = pattern(64, 9);
  CompositeByteBuf c = split(text, {10, 0, 20, 14, 20});
  c.readerIndex(5).writerIndex(50);
  const auto buffers = c.readableBuffers();
  CHECK(buffers.size() == 5);  // one per component in range; the empty one yields zero bytes
  std::string gathered(boost::asio::buffer_size(buffers), '\0');
  CHECK(gathered.size() == 45);
  boost::asio::buffer_copy(boost::asio::buffer(gathered), buffers);
  CHECK(gathered == text.substr(5, 45));
  CompositeByteBuf empty;
  CHECK(boost::asio::buffer_size(empty.readableBuffers()) == 0);
  // ByteBuf offers the same shape, so gather code can be generic over both.
  ByteBuf flat = Unpooled::copiedBuffer(text);
  CHECK(boost::asio::buffer_size(flat.readableBuffers()) == 64);
}

TEST_CASE("shared vocabulary over a composite: bytes, search, compare, hash, dumps, text") {
  CompositeByteBuf c = split("Hello, wörld\r\nbye", {3, 4, 2, 5, 4});
  ByteBuf flat = Unpooled::copiedBuffer(std::string_view("Hello, wörld\r\nbye"));
  CHECK(c.equals(flat));
  CHECK(flat.equals(c));
  CHECK(c.compare(flat) == 0);
  CHECK(c.hashCode() == flat.hashCode());
  CHECK(c.hexDump() == flat.hexDump());
  CHECK(c.prettyHexDump() == flat.prettyHexDump());
  CHECK(c.indexOf(0, 18, std::byte{'\r'}) == 13);
  CHECK(c.indexOf(18, 0, std::byte{'l'}) == 11);
  CHECK(c.bytesBefore(std::byte{','}) == 5);
  CHECK(c.forEachByte(netbuf::processors::findCrlf) == 13);
  CHECK(c.forEachByteDesc(netbuf::processors::findCrlf) == 14);
  CHECK(c.getUtf8(7, 6) == "wörld");
  CHECK(c.getUtf8AsUtf16(7, 6) == u"wörld");
  CHECK(c.isValidUtf8());
  CHECK_FALSE(c.isAscii());
  std::string out(5, '\0');
  c.readBytes(out.data(), 5);
  CHECK(out == "Hello");
  CHECK(c.compare(flat) < 0);  // ", wörld..." < "Hello, ..." (',' < 'H')
  CHECK(fmt::format("{}", c).find("components: 5") != std::string::npos);

  CompositeByteBuf w = split("ab", {2});
  w.writeUtf8(u"∑x");  // through a new component
  w.writeFormat("{}-{}", 1, "two");
  CHECK(w.readUtf8(w.readableBytes()) == "ab∑x1-two");
}

TEST_CASE("randomised differential test against a flat ByteBuf") {
  const std::uint64_t seed = seedFromEnv();
  for (std::uint64_t round = 0; round < 20; ++round) {
    std::mt19937_64 rng(seed + round);
    CAPTURE(seed + round);
    const std::string text = pattern(64 + rng() % 64, static_cast<unsigned>(round));
    std::vector<std::size_t> lengths;
    for (std::size_t left = text.size(); left != 0;) {
      const std::size_t n = std::min<std::size_t>(left, rng() % 9);
      lengths.push_back(n);
      left -= n;
    }
    CompositeByteBuf c = split(text, lengths, 8);
    ByteBuf m = Unpooled::copiedBuffer(text);
    for (int step = 0; step < 400; ++step) {
      CAPTURE(step);
      // Absolute accesses stay below writerIndex: bytes past it are unspecified in both buffers.
      const std::size_t cap = c.writerIndex();
      const std::size_t i = cap == 0 ? 0 : rng() % cap;
      switch (rng() % 28) {
        case 0:
          if (i + 8 <= cap) REQUIRE(c.getLong(i) == m.getLong(i));
          break;
        case 1:
          if (i + 3 <= cap) {
            const auto v = static_cast<std::int32_t>(rng());
            c.setMedium(i, v);
            m.setMedium(i, v);
          }
          break;
        case 2: {
          const auto v = static_cast<std::int64_t>(rng());
          c.writeLongLE(v);
          m.writeLongLE(v);
          break;
        }
        case 3:
          if (c.readableBytes() >= 4) REQUIRE(c.readIntLE() == m.readIntLE());
          break;
        case 4: {
          const std::string s = pattern(rng() % 40, static_cast<unsigned>(step));
          c.writeBytes(std::string_view(s));
          m.writeBytes(std::string_view(s));
          break;
        }
        case 5: {
          const std::size_t n = std::min<std::size_t>(c.readableBytes(), rng() % 20);
          std::string a(n, '\0'), b(n, '\0');
          c.readBytes(a.data(), n);
          m.readBytes(b.data(), n);
          REQUIRE(a == b);
          break;
        }
        case 6:
          c.discardReadBytes();
          m.discardReadBytes();
          break;
        case 7: {
          const auto v = static_cast<std::uint8_t>(rng());
          REQUIRE(c.bytesBefore(std::byte{v}) == m.bytesBefore(std::byte{v}));
          break;
        }
        case 8:
          REQUIRE(c.hashCode() == m.hashCode());
          REQUIRE(c.equals(m));
          break;
        case 9:
          if (i + 2 <= cap) {
            const auto v = static_cast<std::int16_t>(rng());
            c.setShortLE(i, v);
            m.setShortLE(i, v);
          }
          break;
        case 10: {
          const std::size_t n = std::min<std::size_t>(c.readableBytes(), rng() % 30);
          auto slice = c.retainedSlice(c.readerIndex(), n);
          const std::string got = std::visit(
              [](auto& s) { return s.getUtf8(s.readerIndex(), s.readableBytes()); }, slice);
          REQUIRE(got == m.getUtf8(m.readerIndex(), n));
          break;
        }
        case 11:
          if (c.readableBytes() >= 1) REQUIRE(c.readByte() == m.readByte());
          break;
        case 12: {
          const auto v = static_cast<std::uint8_t>(rng() % 8);
          const std::size_t to = cap == 0 ? 0 : rng() % cap;
          REQUIRE(c.indexOf(i, to, v) == m.indexOf(i, to, v));
          break;
        }
        case 13: {
          const auto stop = std::byte{static_cast<std::uint8_t>(rng())};
          auto p = [stop](std::byte b) { return b != stop; };
          REQUIRE(c.forEachByte(p) == m.forEachByte(p));
          REQUIRE(c.forEachByteDesc(p) == m.forEachByteDesc(p));
          break;
        }
        case 14:
          REQUIRE(c.hexDump() == m.hexDump());
          REQUIRE(c.compare(m) == 0);
          break;
        case 15: {
          const std::u16string t = u"é∑x" + std::u16string(rng() % 5, u'a');
          REQUIRE(c.writeUtf8(t) == m.writeUtf8(t));
          break;
        }
        case 16:
          if (i + 6 <= cap) REQUIRE(c.getUtf8AsUtf16(i, 6) == m.getUtf8AsUtf16(i, 6));
          break;
        case 17: {
          const std::size_t n = rng() % 12;
          c.writeZero(n);
          m.writeZero(n);
          if (i + n <= cap) {
            c.setZero(i, n);
            m.setZero(i, n);
          }
          break;
        }
        case 18: {
          const std::size_t n = std::min<std::size_t>(cap - i, rng() % 16);
          ByteBuf a = Unpooled::buffer(0), b = Unpooled::buffer(0);
          c.getBytes(i, a, n);
          m.getBytes(i, b, n);
          REQUIRE(a.equals(b));
          break;
        }
        case 19:
          if (c.readableBytes() >= 2) {
            const std::size_t n = rng() % (c.readableBytes() / 2 + 1);
            c.skipBytes(n);
            m.skipBytes(n);
          }
          break;
        case 20:
          if (i + 4 <= cap) {
            const auto v = static_cast<float>(rng() % 1000) / 8.0f;
            c.setFloatLE(i, v);
            m.setFloatLE(i, v);
            REQUIRE(c.getUnsignedIntLE(i) == m.getUnsignedIntLE(i));
          }
          break;
        case 22: {
          const std::string t = pattern(rng() % 20, static_cast<unsigned>(step));
          REQUIRE(c.writeAscii(std::string_view(t)) == m.writeAscii(std::string_view(t)));
          break;
        }
        case 23: {
          const auto cs = static_cast<netbuf::Charset>(rng() % 5);
          REQUIRE(c.writeCharSequence(u"Grüße ∑", cs) == m.writeCharSequence(u"Grüße ∑", cs));
          break;
        }
        case 24: {
          const auto v = static_cast<int>(rng() % 100000);
          REQUIRE(c.writeFormat("<{}:{:x}>", v, v) == m.writeFormat("<{}:{:x}>", v, v));
          break;
        }
        case 25:
          REQUIRE(c.isValidUtf8() == m.isValidUtf8());
          REQUIRE(c.isAscii() == m.isAscii());
          REQUIRE(c.prettyHexDump() == m.prettyHexDump());
          break;
        case 26: {
          const std::size_t n = std::min<std::size_t>(c.readableBytes(), rng() % 10);
          REQUIRE(c.readAscii(n) == m.readAscii(n));
          break;
        }
        case 27: {
          const std::size_t n = std::min<std::size_t>(c.readableBytes(), rng() % 10);
          bool threwC = false, threwM = false;
          std::string a, b;
          try {
            a = c.getUtf8Strict(c.readerIndex(), n);
          } catch (const netbuf::Utf8Error&) {
            threwC = true;
          }
          try {
            b = m.getUtf8Strict(m.readerIndex(), n);
          } catch (const netbuf::Utf8Error&) {
            threwM = true;
          }
          REQUIRE(threwC == threwM);
          REQUIRE(a == b);
          break;
        }
        case 21:
          if (c.readableBytes() >= 8) {
            c.markReaderIndex();
            m.markReaderIndex();
            REQUIRE(c.readUnsignedMedium() == m.readUnsignedMedium());
            REQUIRE(c.readShortLE() == m.readShortLE());
            c.resetReaderIndex();
            m.resetReaderIndex();
          }
          break;
      }
      REQUIRE(c.readerIndex() == m.readerIndex());
      REQUIRE(c.writerIndex() == m.writerIndex());
      REQUIRE(readableOf(c) == std::string(m.readableStringView()));
      REQUIRE(c.numComponents() <= 8);
    }
  }
}

TEST_CASE("allocators make composites whose new components come from them") {
  netbuf::UnpooledByteBufAllocator& heap = netbuf::UnpooledByteBufAllocator::instance();
  CompositeByteBuf c = heap.compositeBuffer(4);
  CHECK(c.maxNumComponents() == 4);
  CHECK(&c.alloc() == &heap);
  c.writeLong(42);  // a new component from `heap`
  CHECK((c.component(0).storageKind() == netbuf::StorageKind::Heap));
  std::vector<ByteBuf> parts;
  parts.push_back(bytesBuf("ab"));
  parts.push_back(bytesBuf("cd"));
  CompositeByteBuf all = netbuf::compositeOf(parts);
  CHECK(readableOf(all) == "abcd");
  CHECK_FALSE(parts[0].isValid());  // moved in
}

TEST_CASE("Unpooled::compositeBuffer: empty, on the default allocator, 16 components by default") {
  CompositeByteBuf c = Unpooled::compositeBuffer();
  CHECK(c.maxNumComponents() == CompositeByteBuf::kDefaultMaxComponents);
  CHECK(c.maxNumComponents() == 16);
  CHECK(&c.alloc() == &netbuf::ByteBufAllocator::defaultAllocator());
  CHECK(c.numComponents() == 0);
  CHECK(c.readableBytes() == 0);
  CHECK(c.capacity() == 0);
  std::string expected;
  for (int i = 0; i < 20; ++i) {
    const std::string part(1, static_cast<char>('a' + i));
    c.addComponent(true, bytesBuf(part));
    expected += part;
  }
  CHECK(c.numComponents() <= 16);  // the trailing components were consolidated at 17
  CHECK(readableOf(c) == expected);

  CompositeByteBuf small = Unpooled::compositeBuffer(2);
  CHECK(small.maxNumComponents() == 2);
  small.addComponent(true, bytesBuf("ab")).addComponent(true, bytesBuf("cd"));
  CHECK(small.numComponents() == 2);
  small.addComponent(true, bytesBuf("ef"));
  CHECK(small.numComponents() <= 2);
  CHECK(readableOf(small) == "abcdef");
  small.writeInt(0x01020304);  // a new component from the default allocator
  CHECK(small.readableBytes() == 10);
  CHECK(small.getInt(6) == 0x01020304);
}

TEST_CASE("write, then add: the new component follows the written bytes directly") {
  CompositeByteBuf c = split("head", {4});
  c.writeByte('!');  // allocates a component with spare room past writerIndex
  CHECK(c.capacity() > c.writerIndex());
  c.addComponent(true, bytesBuf("tail"));
  CHECK(readableOf(c) == "head!tail");
  CHECK(c.capacity() == c.writerIndex());
  c.writeByte('?');
  CHECK(readableOf(c) == "head!tail?");
  // Room the user added without increasing writerIndex is not given back.
  CompositeByteBuf d = split("ab", {2});
  d.addComponent(bytesBuf("xy"));  // capacity 4, writerIndex 2
  d.addComponent(true, bytesBuf("cd"));
  CHECK(d.capacity() == 6);
  CHECK(d.writerIndex() == 4);
  // The same when the appended thing is a whole composite (flattened in).
  CompositeByteBuf e = split("head", {4});
  e.writeByte('!');
  e.addComponent(true, split("tail", {2, 2}));
  CHECK(readableOf(e) == "head!tail");
}

TEST_CASE("copy, index setters, marks and their errors") {
  CompositeByteBuf c = split("abcdefgh", {3, 5});
  ByteBuf whole = c.copy();
  CHECK(whole.readableStringView() == "abcdefgh");
  ByteBuf part = c.copy(2, 4);
  CHECK(part.readableStringView() == "cdef");
  part.setByte(0, 'X');
  CHECK(c.getByte(2) == 'c');  // a deep copy
  CHECK_THROWS_AS(c.copy(6, 3), IndexOutOfBoundsError);

  c.setIndex(1, 7);
  CHECK(c.readableBytes() == 6);
  CHECK(c.writableBytes() == 1);
  CHECK(c.maxWritableBytes() == netbuf::kDefaultMaxCapacity - 7);
  CHECK_THROWS_WITH_AS(c.setIndex(5, 4), doctest::Contains("setIndex"), IndexOutOfBoundsError);
  CHECK_THROWS_AS(c.readerIndex(8), IndexOutOfBoundsError);
  CHECK_THROWS_AS(c.writerIndex(0), IndexOutOfBoundsError);  // below readerIndex
  CHECK_THROWS_AS(c.writerIndex(9), IndexOutOfBoundsError);  // past capacity
  CHECK_THROWS_AS(c.skipBytes(7), IndexOutOfBoundsError);
  c.markReaderIndex().markWriterIndex();
  c.skipBytes(2).writerIndex(8);
  c.resetReaderIndex().resetWriterIndex();
  CHECK(c.readerIndex() == 1);
  CHECK(c.writerIndex() == 7);
  CHECK(c.readUtf8(6) == "bcdefg");
  c.clear();
  CHECK(c.readerIndex() == 0);
  CHECK(c.writerIndex() == 0);
  CHECK(c.capacity() == 8);
  CHECK_THROWS_WITH_AS((void)c.readByte(), doctest::Contains("index 0, length 1"),
                       IndexOutOfBoundsError);
}

TEST_CASE("readRetainedSliceBatched: in-component slices in place, straddling ones as composites") {
  CompositeByteBuf c = split("abcdefghij", {4, 6});
  std::vector<std::variant<ByteBuf, CompositeByteBuf>> out;
  c.readRetainedSliceBatched(3, out);  // inside component 0
  c.readRetainedSliceBatched(3, out);  // straddles components 0 and 1
  c.readRetainedSliceBatched(0, out);  // empty
  c.readRetainedSliceBatched(4, out);  // the rest of component 1
  REQUIRE(out.size() == 4);
  CHECK(c.readerIndex() == 10);
  REQUIRE(std::holds_alternative<ByteBuf>(out[0]));
  CHECK(std::string(std::get<ByteBuf>(out[0]).readableStringView()) == "abc");
  REQUIRE(std::holds_alternative<CompositeByteBuf>(out[1]));
  CHECK(readableOf(std::get<CompositeByteBuf>(out[1])) == "def");
  CHECK(std::visit([](const auto& b) { return b.readableBytes(); }, out[2]) == 0);
  REQUIRE(std::holds_alternative<ByteBuf>(out[3]));
  CHECK(std::string(std::get<ByteBuf>(out[3]).readableStringView()) == "ghij");
  // The slice shares the component's memory (no copy).
  CHECK(std::get<ByteBuf>(out[3]).data() == c.component(1).data() + 2);
  CHECK_THROWS_AS(c.readRetainedSliceBatched(1, out), IndexOutOfBoundsError);
  CHECK(out.size() == 4);
}
