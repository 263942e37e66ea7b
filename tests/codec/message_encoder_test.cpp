#include <netbuf/codec/message_to_byte_encoder.hpp>
#include <netbuf/codec/message_to_message_encoder.hpp>

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <doctest/doctest.h>

using namespace netbuf;

namespace {

struct TextEncoder : MessageToByteEncoder<TextEncoder, std::string> {
  using MessageToByteEncoder::MessageToByteEncoder;
  void encode(const std::string& s, ByteBuf& out) { out.writeUtf8(std::string_view(s)); }
  std::size_t sizeHint(const std::string& s) const { return s.size(); }
};

struct NoHintEncoder : MessageToByteEncoder<NoHintEncoder, int> {
  void encode(const int& n, ByteBuf& out) { out.writeZero(static_cast<std::size_t>(n)); }
};

struct PassThrough : MessageToMessageEncoder<PassThrough, AnyByteBuf> {
  using MessageToMessageEncoder::MessageToMessageEncoder;
  void encode(AnyByteBuf payload, std::vector<AnyByteBuf>& out) {
    if (readableBytes(payload) > 4) throw EncoderError("too big", CodecError::kNone, 5, 4);
    out.push_back(std::move(payload));
  }
};

}  // namespace

TEST_CASE("MessageToByteEncoder: one buffer of the hinted size, written in place") {
  PooledByteBufAllocator pool;
  {
    TextEncoder enc(pool);
    CHECK(&enc.alloc() == &pool);
    std::vector<AnyByteBuf> out;
    enc.write("h\xC3\xA9llo", out);
    REQUIRE(out.size() == 1);
    const ByteBuf& b = std::get<ByteBuf>(out[0]);
    CHECK(std::string(b.readableStringView()) == "h\xC3\xA9llo");
    CHECK((b.storageKind() == StorageKind::Pooled));
    CHECK(pool.totalStats().liveBuffers == 1);
    // An empty result is not appended (and its buffer is released).
    enc.write("", out);
    CHECK(out.size() == 1);
    CHECK(pool.totalStats().liveBuffers == 1);
    ByteBuf direct = enc.encodeToBuffer("abc");
    CHECK(std::string(direct.readableStringView()) == "abc");
  }
  CHECK(pool.totalStats().liveBuffers == 0);
}

TEST_CASE("MessageToByteEncoder: the default size hint, and growth past it") {
  NoHintEncoder enc;
  ByteBuf small = enc.encodeToBuffer(10);
  CHECK(small.capacity() >= NoHintEncoder::kDefaultSizeHint);
  ByteBuf big = enc.encodeToBuffer(1000);  // grows past the hint
  CHECK(big.readableBytes() == 1000);
}

TEST_CASE("MessageToMessageEncoder: moves payloads through; an error appends nothing") {
  PassThrough enc;
  std::vector<AnyByteBuf> out;
  ByteBuf p = Unpooled::copiedBuffer(std::string_view("abcd"));
  const std::byte* mem = p.data();
  enc.write(AnyByteBuf(std::move(p)), out);
  REQUIRE(out.size() == 1);
  CHECK(std::get<ByteBuf>(out[0]).data() == mem);  // same memory: no copy
  try {
    enc.write(AnyByteBuf(Unpooled::copiedBuffer(std::string_view("abcde"))), out);
    FAIL("no error");
  } catch (const EncoderError& e) {
    CHECK(e.value() == 5);
    CHECK(e.limit() == 4);
    CHECK(e.offset() == CodecError::kNone);
  }
  CHECK(out.size() == 1);
}
