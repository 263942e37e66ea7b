#include <netbuf/buffer/any_byte_buf.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

using namespace netbuf;

TEST_CASE("AnyByteBuf: readable bytes, kind and contents of either alternative") {
  ByteBuf flat = Unpooled::copiedBuffer(std::string_view("xhello"));
  flat.skipBytes(1);
  AnyByteBuf a(std::move(flat));
  CHECK(readableBytes(a) == 5);
  CHECK_FALSE(isComposite(a));
  CHECK(readableBytesToString(a) == "hello");

  ByteBuf parts[] = {Unpooled::copiedBuffer(std::string_view("ab")),
                     Unpooled::copiedBuffer(std::string_view("cde"))};
  AnyByteBuf c(compositeOf(parts));
  std::get<CompositeByteBuf>(c).skipBytes(1);
  CHECK(isComposite(c));
  CHECK(readableBytes(c) == 4);
  CHECK(readableBytesToString(c) == "bcde");
  CHECK(readableBytes(AnyByteBuf()) == 0);  // an empty ByteBuf handle
}

TEST_CASE("AnyByteBuf: toContiguous moves a ByteBuf and copies a composite once") {
  ByteBuf flat = Unpooled::copiedBuffer(std::string_view("abc"));
  const std::byte* mem = flat.data();
  ByteBuf same = toContiguous(AnyByteBuf(std::move(flat)));
  CHECK(same.data() == mem);

  ByteBuf parts[] = {Unpooled::copiedBuffer(std::string_view("ab")),
                     Unpooled::copiedBuffer(std::string_view("cd"))};
  ByteBuf joined = toContiguous(AnyByteBuf(compositeOf(parts)));
  CHECK(std::string(joined.readableStringView()) == "abcd");
  CHECK(joined.refCnt() == 1);
}

namespace {

/// The bytes "xhello" with readerIndex 1 (readable "hello"), as a ByteBuf and as a composite of two
/// components ("xhe" and "llo"), both from the default allocator (the leak check sees them).
AnyByteBuf flatHello() {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(16);
  b.writeBytes(std::string_view("xhello"));
  b.skipBytes(1);
  return AnyByteBuf(std::move(b));
}
AnyByteBuf compositeHello() {
  auto& alloc = ByteBufAllocator::defaultAllocator();
  ByteBuf parts[] = {alloc.buffer(3), alloc.buffer(3)};
  parts[0].writeBytes(std::string_view("xhe"));
  parts[1].writeBytes(std::string_view("llo"));
  CompositeByteBuf c = compositeOf(parts);
  c.skipBytes(1);
  return AnyByteBuf(std::move(c));
}

/// Runs check(buf, composite?) on a fresh flatHello() and a fresh compositeHello().
template <class Check>
void forBoth(Check&& check) {
  {
    INFO("ByteBuf");
    AnyByteBuf b = flatHello();
    check(b, false);
  }
  {
    INFO("CompositeByteBuf");
    AnyByteBuf b = compositeHello();
    check(b, true);
  }
}

AnyByteBuf payloadOf(std::string_view text) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(text.size());
  b.writeBytes(text);
  return AnyByteBuf(std::move(b));
}

std::string str(std::span<const std::byte> s) {
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

}  // namespace

TEST_CASE("AnyByteBuf: visitBuf calls f on the alternative held, with its constness and category") {
  forBoth([](AnyByteBuf& b, bool composite) {
    CHECK(visitBuf(b, [](auto& buf) {
            return std::is_same_v<std::remove_cvref_t<decltype(buf)>, CompositeByteBuf>;
          }) == composite);
    const AnyByteBuf& cb = b;
    CHECK(visitBuf(
        cb, [](auto& buf) { return std::is_const_v<std::remove_reference_t<decltype(buf)>>; }));
    CHECK(visitBuf(std::move(b),
                   [](auto&& buf) { return std::is_rvalue_reference_v<decltype(buf)>; }));
    // A reference result is passed through (decltype(auto)).
    int x = 0;
    int& r = visitBuf(b, [&x](auto&) -> int& { return x; });
    CHECK(&r == &x);
    // Reads through the helper move the held buffer's readerIndex.
    CHECK(visitBuf(b, [](auto& buf) { return buf.readUnsignedByte(); }) == 'h');
    CHECK(readerIndex(b) == 2);
  });
}

TEST_CASE("AnyByteBuf: index queries and moves of either alternative") {
  forBoth([](AnyByteBuf& b, bool composite) {
    CHECK(isComposite(b) == composite);
    CHECK(readableBytes(b) == 5);
    CHECK(readerIndex(b) == 1);
    CHECK(writerIndex(b) == 6);
    CHECK(writableBytes(b) == visitBuf(b, [](const auto& buf) { return buf.capacity() - 6; }));
    CHECK(isReadable(b));
    CHECK(isReadable(b, 5));
    CHECK_FALSE(isReadable(b, 6));

    CHECK(&skipBytes(b, 2) == &b);
    CHECK(readerIndex(b) == 3);
    CHECK(readableBytesToString(b) == "llo");
    CHECK_THROWS_AS(skipBytes(b, 4), IndexOutOfBoundsError);
    CHECK(readerIndex(b) == 3);

    CHECK(&readerIndex(b, 0) == &b);
    CHECK(readableBytesToString(b) == "xhello");
    readerIndex(b, 6);
    CHECK_FALSE(isReadable(b));
    CHECK_THROWS_AS(readerIndex(b, 7), IndexOutOfBoundsError);
  });
  AnyByteBuf empty;  // an empty ByteBuf handle: index queries are 0
  CHECK(readableBytes(empty) == 0);
  CHECK(readerIndex(empty) == 0);
  CHECK(writerIndex(empty) == 0);
  CHECK(writableBytes(empty) == 0);
  CHECK_FALSE(isReadable(empty));
}

TEST_CASE("AnyByteBuf: retained slices share the memory and return AnyByteBuf") {
  forBoth([](AnyByteBuf& b, bool composite) {
    AnyByteBuf all = retainedSlice(b);
    CHECK(readableBytesToString(all) == "hello");
    CHECK(readerIndex(all) == 0);
    CHECK(readerIndex(b) == 1);  // unchanged
    // A slice straddling the components of a composite is a composite; inside one, a ByteBuf.
    CHECK(isComposite(all) == composite);
    AnyByteBuf inside = retainedSlice(b, 4, 2);
    CHECK(readableBytesToString(inside) == "lo");
    CHECK_FALSE(isComposite(inside));
    CHECK_THROWS_AS(retainedSlice(b, 4, 100), IndexOutOfBoundsError);  // checked: capacity

    // Zero copy: the slice's first byte is the source's memory.
    const std::byte* src = nullptr;
    forEachSegment(b, [&](std::span<const std::byte> s) {
      src = s.data();
      return false;
    });
    const std::byte* got = nullptr;
    forEachSegment(all, [&](std::span<const std::byte> s) {
      got = s.data();
      return false;
    });
    CHECK(got == src);

    AnyByteBuf head = readRetainedSlice(b, 2);
    CHECK(readableBytesToString(head) == "he");
    CHECK(readerIndex(b) == 3);
    CHECK_THROWS_AS(readRetainedSlice(b, 4), IndexOutOfBoundsError);
    b = AnyByteBuf();  // the slices keep the memory alive
    CHECK(readableBytesToString(all) == "hello");
  });
}

TEST_CASE("AnyByteBuf: byte access, reads into a span and segments") {
  forBoth([](AnyByteBuf& b, bool composite) {
    CHECK(getUnsignedByte(b, 1) == 'h');
    CHECK(getByte(b, 5) == 'o');
    CHECK_THROWS_AS(getUnsignedByte(b, 100), IndexOutOfBoundsError);  // checked: capacity
    std::array<std::byte, 4> four{};
    getBytes(b, 2, four);  // "ello" straddles the composite's components
    CHECK(str(four) == "ello");
    CHECK(readerIndex(b) == 1);
    CHECK_THROWS_AS(getBytes(b, 14, four), IndexOutOfBoundsError);

    std::array<std::byte, 3> three{};
    CHECK(&readBytes(b, three) == &b);
    CHECK(str(three) == "hel");
    CHECK(readerIndex(b) == 4);
    CHECK_THROWS_AS(readBytes(b, three), IndexOutOfBoundsError);
    CHECK(readerIndex(b) == 4);

    readerIndex(b, 1);
    std::vector<std::string> pieces;
    CHECK(forEachSegment(b, [&](std::span<const std::byte> s) {
      pieces.push_back(str(s));
      return true;
    }));
    CHECK(pieces ==
          (composite ? std::vector<std::string>{"he", "llo"} : std::vector<std::string>{"hello"}));
    pieces.clear();
    CHECK_FALSE(forEachSegment(b, 0, 6, [&](std::span<const std::byte> s) {
      pieces.push_back(str(s));
      return false;  // stops at the first piece
    }));
    CHECK(pieces == std::vector<std::string>{composite ? "xhe" : "xhello"});
    CHECK(forEachSegment(b, 6, 0, [](std::span<const std::byte>) { return false; }));
    CHECK_THROWS_AS(forEachSegment(b, 0, 100, [](std::span<const std::byte>) { return true; }),
                    IndexOutOfBoundsError);
  });
}

TEST_CASE("AnyByteBuf: contentEquals compares readable bytes across alternatives") {
  AnyByteBuf flat = flatHello();
  AnyByteBuf comp = compositeHello();
  CHECK(contentEquals(flat, comp));
  CHECK(contentEquals(comp, flat));
  CHECK(contentEquals(comp, comp));
  skipBytes(comp, 1);
  CHECK_FALSE(contentEquals(flat, comp));
  skipBytes(flat, 1);
  CHECK(contentEquals(flat, comp));
  AnyByteBuf other = payloadOf("ellO");
  CHECK_FALSE(contentEquals(flat, other));
  CHECK(contentEquals(AnyByteBuf(), AnyByteBuf()));
}
