#include <netbuf/transport/chunked_generator.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>

using namespace netbuf;

TEST_CASE("ChunkedGenerator: chunks until std::nullopt; nothing-now buffers pass through") {
  int calls = 0;
  ChunkedGenerator g([&](ByteBufAllocator& alloc) -> std::optional<ByteBuf> {
    ++calls;
    if (calls == 4) return std::nullopt;
    if (calls == 2) return ByteBuf();  // nothing available now
    ByteBuf b = alloc.buffer(8);
    b.writeBytes(std::string_view("ab"));
    return b;
  });
  auto& alloc = ByteBufAllocator::defaultAllocator();
  CHECK(g.length() == -1);
  CHECK_FALSE(g.isEndOfInput());
  CHECK(g.readChunk(alloc).readableStringView() == "ab");
  CHECK(g.progress() == 2);
  CHECK_FALSE(g.readChunk(alloc).isValid());
  CHECK_FALSE(g.isEndOfInput());
  CHECK(g.readChunk(alloc).readableStringView() == "ab");
  CHECK_FALSE(g.isEndOfInput());
  CHECK_FALSE(g.readChunk(alloc).isValid());  // the function said: the end
  CHECK(g.isEndOfInput());
  CHECK_FALSE(g.readChunk(alloc).isValid());  // not called again
  CHECK(calls == 4);
  CHECK(g.progress() == 4);
}

TEST_CASE("ChunkedGenerator: a known length ends it; close() releases the function") {
  auto token = std::make_shared<int>(1);
  std::weak_ptr<int> watch = token;
  ChunkedGenerator g(
      [t = std::move(token)](ByteBufAllocator&) -> std::optional<ByteBuf> {
        return Unpooled::copiedBuffer("12345");
      },
      10);
  auto& alloc = ByteBufAllocator::defaultAllocator();
  CHECK(g.length() == 10);
  g.readChunk(alloc);
  CHECK_FALSE(g.isEndOfInput());
  g.readChunk(alloc);
  CHECK(g.isEndOfInput());  // 10 bytes produced: no further call
  CHECK(watch.expired());   // ended: the function (and its captures) are gone
  CHECK(g.progress() == 10);

  ChunkedGenerator h([](ByteBufAllocator&) -> std::optional<ByteBuf> { return ByteBuf(); });
  h.close();
  CHECK(h.isEndOfInput());
  CHECK_FALSE(h.readChunk(alloc).isValid());
  CHECK(ChunkedGenerator(nullptr).isEndOfInput());
  CHECK(ChunkedGenerator([](ByteBufAllocator&) -> std::optional<ByteBuf> { return ByteBuf(); }, 0)
            .isEndOfInput());
}

TEST_CASE("ChunkedGenerator: what the function throws propagates") {
  ChunkedGenerator g([](ByteBufAllocator&) -> std::optional<ByteBuf> {
    throw std::system_error(std::make_error_code(std::errc::io_error), "source");
  });
  CHECK_THROWS_AS(g.readChunk(ByteBufAllocator::defaultAllocator()), std::system_error);
  CHECK_FALSE(g.isEndOfInput());
}
