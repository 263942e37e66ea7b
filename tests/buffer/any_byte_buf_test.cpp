#include <netbuf/buffer/any_byte_buf.hpp>

#include <doctest/doctest.h>

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
