// ByteBuf's text members: indices, bounds, read-only and empty handles, replacing vs strict
// forms, setUtf8 leaving neighbouring bytes alone, writeFormat. The transcoding kernels themselves
// are tested in utf8_test.cpp; here small known strings pin the contract of the members.
#include <netbuf/buffer/byte_buf.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>

using netbuf::ByteBuf;
using netbuf::Charset;
using netbuf::EmptyBufferError;
using netbuf::IndexOutOfBoundsError;
using netbuf::ReadOnlyBufferError;
using netbuf::Utf8Error;

namespace {

ByteBuf heapBuffer(std::size_t initial, std::size_t max = netbuf::kDefaultMaxCapacity) {
  return netbuf::UnpooledByteBufAllocator::instance().buffer(initial, max);
}

std::string hex(const ByteBuf& b) { return b.hexDump(); }

/// A 16-byte buffer of 'x', fully written: lets a test see exactly which bytes a set touched.
ByteBuf xs() {
  ByteBuf b = heapBuffer(16, 16);
  b.writeBytes(std::string_view("xxxxxxxxxxxxxxxx"));
  return b;
}

std::size_t utf8ErrorOffset(const auto& f) {
  try {
    f();
  } catch (const Utf8Error& e) {
    return e.offset();
  }
  return static_cast<std::size_t>(-1);
}

}  // namespace

TEST_CASE("writeUtf8 from UTF-16, UTF-32, UTF-8 and char8_t text") {
  ByteBuf b = heapBuffer(0);
  CHECK(b.writeUtf8(u"h\u00e9") == 3);
  CHECK(hex(b) == "68c3a9");
  CHECK(b.writeUtf8(U"\U0001F600") == 4);
  CHECK(b.writeUtf8(u"\xD83D\xDE00") == 4);  // a surrogate pair
  CHECK(b.writeUtf8(std::string_view("\xE2\x82\xAC")) == 3);
  CHECK(b.writeUtf8(u8"\u00e9") == 2);
  CHECK(b.writeUtf8("ok") == 2);
  CHECK(hex(b) ==
        "68c3a9"
        "f09f9880"
        "f09f9880"
        "e282ac"
        "c3a9"
        "6f6b");
  CHECK(b.writerIndex() == 18);
  CHECK(b.readerIndex() == 0);
  CHECK(b.writeUtf8(u"") == 0);
  CHECK(b.writeUtf8(std::string_view()) == 0);
  CHECK(b.writerIndex() == 18);
}

TEST_CASE("writeUtf8 replaces; writeUtf8Strict throws with the offset and writes nothing") {
  ByteBuf b = heapBuffer(0);
  CHECK(b.writeUtf8(u"a\xD800"
                    u"b") == 3);  // lone surrogate -> '?'
  CHECK(b.readableStringView() == "a?b");
  b.clear();
  CHECK(b.writeUtf8(U"a\x110000"
                    U"b") == 3);  // beyond U+10FFFF -> '?'
  CHECK(b.readableStringView() == "a?b");
  b.clear();
  CHECK(b.writeUtf8(std::string_view("a\xFF"
                                     "b")) == 5);  // ill-formed byte -> U+FFFD
  CHECK(hex(b) == "61efbfbd62");
  b.clear();
  CHECK(b.writeUtf8(std::string_view("ab\xE2\x82")) == 5);  // truncated: one U+FFFD
  CHECK(hex(b) == "6162efbfbd");

  b.clear();
  b.writeByte('z');
  CHECK_THROWS_AS(b.writeUtf8Strict(std::string_view("a\xFF"
                                                     "b")),
                  Utf8Error);
  CHECK(utf8ErrorOffset([&] { b.writeUtf8Strict(std::string_view("ab\xE2\x82")); }) == 2);
  CHECK_THROWS_WITH_AS(b.writeUtf8Strict(std::string_view("abc\x80")),
                       doctest::Contains("offset 3"), Utf8Error);
  CHECK(b.writerIndex() == 1);  // nothing written by the failed strict writes
  CHECK(b.writeUtf8Strict(std::string_view("\xC3\xA9")) == 2);
  CHECK(b.writeUtf8Strict(u8"ok") == 2);
  CHECK(hex(b) == "7ac3a96f6b");
  // Utf8Error is a netbuf::Error.
  CHECK_THROWS_AS(b.writeUtf8Strict(std::string_view("\xC0\x80")), netbuf::Error);
}

TEST_CASE("text writes grow the buffer but never past maxCapacity; the exact size is what counts") {
  ByteBuf fixed = heapBuffer(4, 4);
  // The worst-case bound (3 bytes a unit) exceeds maxCapacity, but the exact size fits.
  CHECK(fixed.writeUtf8(u"abcd") == 4);
  CHECK(fixed.readableStringView() == "abcd");
  CHECK(fixed.capacity() == 4);
  ByteBuf fixed2 = heapBuffer(4, 4);
  fixed2.writeByte('x');
  CHECK_THROWS_AS(fixed2.writeUtf8(u"abcd"), IndexOutOfBoundsError);
  CHECK_THROWS_AS(fixed2.writeUtf8(U"\U0001F600"), IndexOutOfBoundsError);
  CHECK_THROWS_AS(fixed2.writeUtf8(std::string_view("abcd")), IndexOutOfBoundsError);
  CHECK_THROWS_AS(fixed2.writeAscii(std::string_view("abcd")), IndexOutOfBoundsError);
  CHECK(fixed2.writerIndex() == 1);
  CHECK(fixed2.writeUtf8(u"\u00e9") == 2);
  CHECK(fixed2.writerIndex() == 3);

  ByteBuf g = heapBuffer(2);
  g.writeUtf8(std::string(100, 'a'));
  CHECK(g.readableBytes() == 100);
  CHECK(g.capacity() == 128);
}

TEST_CASE("setUtf8 writes at an index, moves no index and leaves neighbouring bytes alone") {
  ByteBuf b = xs();
  b.readerIndex(1);
  CHECK(b.setUtf8(4, u"\u00e9") == 2);
  CHECK(b.readableStringView() == std::string_view("xxx\xC3\xA9xxxxxxxxxx"));
  CHECK(b.readerIndex() == 1);
  CHECK(b.writerIndex() == 16);

  ByteBuf c = xs();
  CHECK(c.setUtf8(0, U"\U0001F600") == 4);
  CHECK(c.hexDump(0, 5) == "f09f988078");
  CHECK(c.setUtf8(12, std::string_view("abcd")) == 4);  // ends exactly at capacity
  CHECK(c.hexDump(11, 5) == "7861626364");
  CHECK(c.setUtf8(6, std::string_view("a\xFF")) == 4);  // replacing: a EF BF BD
  CHECK(c.hexDump(5, 6) == "7861efbfbd78");
  CHECK(c.setUtf8(9, u"a\xDC00") == 2);  // lone low surrogate -> '?'
  CHECK(c.hexDump(8, 4) == "bf613f78");

  // Bounds are checked against capacity with the exact encoded size; nothing is written on error.
  ByteBuf d = xs();
  CHECK_THROWS_AS(d.setUtf8(15, u"\u00e9"), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(d.setUtf8(14, U"\U0001F600"),
                       doctest::Contains("setUtf8: index 14, length 4"), IndexOutOfBoundsError);
  CHECK_THROWS_AS(d.setUtf8(13, std::string_view("a\xFF")), IndexOutOfBoundsError);
  CHECK_THROWS_AS(d.setUtf8(14, std::string_view("abc")), IndexOutOfBoundsError);
  CHECK_THROWS_AS(d.setUtf8(17, std::string_view()), IndexOutOfBoundsError);
  CHECK(d.setUtf8(16, std::string_view()) == 0);
  CHECK(d.readableStringView() == "xxxxxxxxxxxxxxxx");
  // Even in spare capacity beyond writerIndex.
  ByteBuf e = heapBuffer(8, 8);
  CHECK(e.setUtf8(0, u"hi") == 2);
  CHECK(e.writerIndex() == 0);
  CHECK(e.getAscii(0, 2) == "hi");
}

TEST_CASE("writeAscii and writeCharSequence in every charset") {
  ByteBuf b = heapBuffer(0);
  CHECK(b.writeAscii(u"h\u00e9!") == 3);
  CHECK(b.readableStringView() == "h?!");
  b.clear();
  CHECK(b.writeAscii(std::string_view("h\xC3\xA9")) == 3);  // one '?' per byte above 0x7F
  CHECK(b.readableStringView() == "h??");
  b.clear();
  CHECK(b.writeCharSequence(u"h\u00e9\u20ac", Charset::Utf8) == 6);
  CHECK(hex(b) == "68c3a9e282ac");
  b.clear();
  CHECK(b.writeCharSequence(u"h\u00e9\u20ac", Charset::Ascii) == 3);
  CHECK(b.readableStringView() == "h??");
  b.clear();
  CHECK(b.writeCharSequence(u"h\u00e9\u20ac", Charset::Latin1) == 3);
  CHECK(hex(b) == "68e93f");
  b.clear();
  CHECK(b.writeCharSequence(u"h\u00e9", Charset::Utf16BE) == 4);
  CHECK(hex(b) == "006800e9");
  b.clear();
  CHECK(b.writeCharSequence(u"h\u00e9", Charset::Utf16LE) == 4);
  CHECK(hex(b) == "6800e900");
  b.clear();
  const std::string_view utf8("h\xC3\xA9\xE2\x82\xAC");
  CHECK(b.writeCharSequence(utf8, Charset::Utf8) == 6);
  CHECK(hex(b) == "68c3a9e282ac");
  b.clear();
  CHECK(b.writeCharSequence(utf8, Charset::Latin1) == 3);  // per code point
  CHECK(hex(b) == "68e93f");
  b.clear();
  CHECK(b.writeCharSequence(utf8, Charset::Ascii) == 3);
  CHECK(b.readableStringView() == "h??");
  b.clear();
  CHECK(b.writeCharSequence(utf8, Charset::Utf16BE) == 6);
  CHECK(hex(b) == "006800e920ac");
  b.clear();
  CHECK(b.writeCharSequence(std::string_view("\xF0\x9F\x98\x80"), Charset::Utf16LE) == 4);
  CHECK(hex(b) == "3dd800de");
}

TEST_CASE("readUtf8 / getUtf8 and the strict forms: indices, bounds, replacement, offsets") {
  ByteBuf b = heapBuffer(32);
  b.writeBytes(
      std::string_view("ab\xC3\xA9"
                       "c\xFF"
                       "d"));
  CHECK(b.getUtf8(0, 4) == "ab\xC3\xA9");
  CHECK(b.readerIndex() == 0);
  CHECK(b.getUtf8(4, 3) ==
        "c\xEF\xBF\xBD"
        "d");
  CHECK(b.getUtf8(2, 1) == "\xEF\xBF\xBD");  // a truncated sequence is replaced
  CHECK(b.getUtf8(32, 0).empty());
  CHECK_THROWS_WITH_AS((void)b.getUtf8(30, 3), doctest::Contains("getUtf8: index 30, length 3"),
                       IndexOutOfBoundsError);

  CHECK(b.readUtf8(2) == "ab");
  CHECK(b.readerIndex() == 2);
  CHECK_THROWS_AS((void)b.readUtf8(6), IndexOutOfBoundsError);  // only 5 readable
  CHECK(b.readerIndex() == 2);
  CHECK(b.readUtf8Strict(3) ==
        "\xC3\xA9"
        "c");
  CHECK(b.readerIndex() == 5);
  CHECK(utf8ErrorOffset([&] { (void)b.readUtf8Strict(2); }) == 0);  // offset relative to the read
  CHECK(b.readerIndex() == 5);  // a failed strict read consumes nothing
  CHECK_THROWS_WITH_AS((void)b.readUtf8Strict(2), doctest::Contains("readUtf8Strict"), Utf8Error);
  CHECK(utf8ErrorOffset([&] { (void)b.getUtf8Strict(1, 6); }) == 4);
  CHECK(b.getUtf8Strict(0, 5) ==
        "ab\xC3\xA9"
        "c");
  CHECK_THROWS_AS((void)b.getUtf8Strict(30, 3), IndexOutOfBoundsError);
  CHECK_THROWS_AS((void)b.readUtf8Strict(3), IndexOutOfBoundsError);
  CHECK(b.readUtf8(2) ==
        "\xEF\xBF\xBD"
        "d");
  CHECK_FALSE(b.isReadable());
}

TEST_CASE("readUtf8AsUtf16 / getUtf8AsUtf16") {
  ByteBuf b = heapBuffer(16);
  b.writeBytes(std::string_view("h\xC3\xA9\xF0\x9F\x98\x80\xFF"));
  CHECK(b.getUtf8AsUtf16(0, 3) == u"h\u00e9");
  CHECK(b.getUtf8AsUtf16(3, 4) == u"\xD83D\xDE00");
  CHECK(b.getUtf8AsUtf16(7, 1) == u"\uFFFD");
  CHECK(b.readerIndex() == 0);
  CHECK_THROWS_AS((void)b.getUtf8AsUtf16(10, 7), IndexOutOfBoundsError);
  CHECK(b.readUtf8AsUtf16(7) == u"h\u00e9\xD83D\xDE00");
  CHECK(b.readerIndex() == 7);
  CHECK_THROWS_WITH_AS((void)b.readUtf8AsUtf16(2),
                       doctest::Contains("readUtf8AsUtf16: index 7, length 2"),
                       IndexOutOfBoundsError);
  CHECK(b.readerIndex() == 7);
  CHECK(b.readUtf8AsUtf16(1) == u"\uFFFD");
  CHECK(b.readUtf8AsUtf16(0).empty());
}

TEST_CASE("readAscii / getAscii, isValidUtf8 / isAscii over the readable bytes") {
  ByteBuf b = heapBuffer(16);
  b.writeBytes(
      std::string_view("\xFF"
                       "ab\xC3\xA9"));
  CHECK(b.getAscii(0, 5) == "?ab??");
  CHECK_THROWS_AS((void)b.getAscii(14, 3), IndexOutOfBoundsError);
  CHECK_FALSE(b.isValidUtf8());
  CHECK_FALSE(b.isAscii());
  CHECK(b.readAscii(1) == "?");
  CHECK(b.isValidUtf8());  // "ab\xC3\xA9"
  CHECK_FALSE(b.isAscii());
  CHECK(b.readAscii(2) == "ab");
  CHECK_THROWS_AS((void)b.readAscii(3), IndexOutOfBoundsError);
  CHECK(b.readerIndex() == 3);
  b.writerIndex(4);  // the readable byte is a lone lead byte
  CHECK_FALSE(b.isValidUtf8());
  b.readerIndex(4);
  CHECK(b.isValidUtf8());  // nothing readable
  CHECK(b.isAscii());
}

TEST_CASE("writeFormat: into spare room, growing once, never past maxCapacity") {
  ByteBuf b = heapBuffer(16);
  CHECK(b.writeFormat("{}-{:04x}", 42, 255) == 7);
  CHECK(b.readableStringView() == "42-00ff");
  CHECK(b.capacity() == 16);
  const std::string longText(40, 'q');
  CHECK(b.writeFormat("[{}]", longText) == 42);  // does not fit: grows
  CHECK(b.readableBytes() == 49);
  CHECK(b.readableStringView().substr(7) == "[" + longText + "]");
  CHECK(b.capacity() == 64);
  CHECK(b.writeFormat("") == 0);
  CHECK(b.readableBytes() == 49);

  ByteBuf fixed = heapBuffer(4, 4);
  fixed.writeByte('>');
  CHECK(fixed.writeFormat("{}", 123) == 3);  // exactly fills
  CHECK(fixed.readableStringView() == ">123");
  CHECK_THROWS_AS(fixed.writeFormat("{}", 4), IndexOutOfBoundsError);
  ByteBuf fixed2 = heapBuffer(4, 4);
  CHECK_THROWS_AS(fixed2.writeFormat("{}", 12345), IndexOutOfBoundsError);
  CHECK(fixed2.writerIndex() == 0);
}

TEST_CASE("text writes on read-only and empty handles throw before writing") {
  ByteBuf b = heapBuffer(16);
  b.writeBytes(std::string_view("abcd"));
  ByteBuf ro = b.asReadOnly();
  CHECK_THROWS_AS(ro.writeUtf8(u"x"), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeUtf8(u""), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeUtf8(U"x"), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeUtf8(std::string_view("x")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeUtf8(std::string_view("\xFF")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeUtf8Strict(std::string_view("x")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setUtf8(0, u"x"), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setUtf8(0, U"x"), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setUtf8(0, std::string_view("x")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setUtf8(0, std::string_view("\xFF")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeAscii(u"x"), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeAscii(std::string_view("x")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeCharSequence(u"x", Charset::Latin1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeCharSequence(std::string_view("x"), Charset::Utf16LE),
                  ReadOnlyBufferError);
  CHECK_THROWS_WITH_AS(ro.writeFormat("{}", 1), doctest::Contains("read-only"),
                       ReadOnlyBufferError);
  CHECK(b.readableStringView() == "abcd");
  CHECK(b.getUnsignedByte(4) != 'x');
  // Reads through a read-only handle work.
  CHECK(ro.readUtf8(2) == "ab");
  CHECK(ro.getAscii(2, 2) == "cd");

  ByteBuf empty;
  CHECK_THROWS_AS(empty.writeUtf8(u"x"), EmptyBufferError);
  CHECK_THROWS_AS(empty.writeUtf8(std::string_view("x")), EmptyBufferError);
  CHECK_THROWS_AS(empty.writeUtf8(std::string_view()), EmptyBufferError);
  CHECK_THROWS_AS(empty.writeFormat("{}", 1), EmptyBufferError);
  CHECK_THROWS_AS(empty.setUtf8(0, u"x"), EmptyBufferError);
  CHECK_THROWS_AS((void)empty.readUtf8(1), EmptyBufferError);
  CHECK_THROWS_AS((void)empty.getAscii(0, 1), EmptyBufferError);
  CHECK(empty.readUtf8(0).empty());
  CHECK(empty.isValidUtf8());
  CHECK(empty.isAscii());
}
