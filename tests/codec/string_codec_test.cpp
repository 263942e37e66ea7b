#include <netbuf/codec/string_decoder.hpp>
#include <netbuf/codec/string_encoder.hpp>

#include <netbuf/codec/decoder_runner.hpp>

#include "support/transcript_printing.hpp"

#include <memory>
#include <netbuf/buffer/utf8.hpp>
#include <string>
#include <vector>

using namespace netbuf;
using netbuf::test::Transcript;
using netbuf::test::transcriptOf;
using namespace std::string_literals;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string repeat(const std::string& s, int n) {
  std::string r;
  for (int i = 0; i < n; ++i) r += s;
  return r;
}

AnyByteBuf frame(std::string_view bytes) {
  return AnyByteBuf(std::in_place_type<ByteBuf>, Unpooled::copiedBuffer(bytes));
}

/// A composite frame with one component per part (a character may straddle parts).
AnyByteBuf compositeFrame(const std::vector<std::string>& parts) {
  CompositeByteBuf c = ByteBufAllocator::defaultAllocator().compositeBuffer(64);
  for (const auto& p : parts) c.addComponent(true, Unpooled::copiedBuffer(std::string_view(p)));
  return c;
}

std::string str(const ByteBuf& b) { return std::string(b.readableStringView()); }

/// Counts allocations and frees, and gives exactly the capacity asked for (no slack), so a
/// buffer that had to grow would show a second allocation.
class CountingAllocator final : public ByteBufAllocator {
 public:
  int allocations = 0;
  int frees = 0;

  bool isPooled() const noexcept override { return false; }
  detail::Storage* allocateStorage(std::size_t minCapacity) override {
    auto* block = new Block();
    block->owner = this;
    block->memory = std::make_unique<std::byte[]>(minCapacity + 1);
    block->kind = StorageKind::Heap;
    block->data = block->memory.get();
    block->size = minCapacity;
    block->allocator = this;
    block->destroy = &destroyBlock;
    ++allocations;
    return block;
  }

 private:
  struct Block : detail::Storage {
    CountingAllocator* owner = nullptr;
    std::unique_ptr<std::byte[]> memory;
  };
  static void destroyBlock(detail::Storage* s) noexcept {
    auto* b = static_cast<Block*>(s);
    ++b->owner->frees;
    delete b;
  }
};

}  // namespace

// ---------------------------------------------------------------- StringDecoder

TEST_CASE("StringDecoder: well-formed UTF-8 of every sequence length decodes unchanged") {
  const StringDecoder d;
  for (const std::string s : {"", "hello", "h\xC3\xA9llo", "\xE2\x82\xAC 5", "\xF0\x9F\x98\x80!",
                              "mixed \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 end"}) {
    CAPTURE(s);
    CHECK(d.decode(frame(s)) == s);
    CHECK(StringDecoder(Utf8Policy::Strict).decode(frame(s)) == s);
  }
  CHECK(d.policy() == Utf8Policy::Replace);
  CHECK(StringDecoder(Utf8Policy::Strict).policy() == Utf8Policy::Strict);
}

TEST_CASE("StringDecoder: Replace substitutes one U+FFFD per maximal ill-formed subsequence") {
  const StringDecoder d(Utf8Policy::Replace);
  // F0 80: 80 cannot follow F0 (F0 needs 90..BF), so F0 alone is a maximal subpart, then each
  // lone continuation byte: three replacements (Unicode 3.9, table 3-8 practice).
  CHECK(d.decode(frame("\xF0\x80\x80")) == repeat(kFffd, 3));
  // A truncated but valid prefix is one maximal subpart: one replacement.
  CHECK(d.decode(frame("a\xE2\x82")) == "a"s + kFffd);
  CHECK(d.decode(frame("\xF0\x9F\x98")) == kFffd);
  CHECK(d.decode(frame("\xF0\x9F\x98z")) == kFffd + "z");
  // Overlong, surrogate and beyond-U+10FFFF forms: one per byte.
  CHECK(d.decode(frame("\xC0\xAF")) == repeat(kFffd, 2));
  CHECK(d.decode(frame("\xED\xA0\x80")) == repeat(kFffd, 3));
  CHECK(d.decode(frame("\xF4\x90\x80\x80")) == repeat(kFffd, 4));
  CHECK(d.decode(frame("x\xFFy\xFE")) == "x"s + kFffd + "y" + kFffd);
  // Unicode's own example: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  CHECK(d.decode(frame("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64")) ==
        "a"s + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d");
}

TEST_CASE("StringDecoder: Strict throws CorruptedFrameError at the first ill-formed byte") {
  const StringDecoder d(Utf8Policy::Strict);
  struct Case {
    std::string bytes;
    std::uint64_t offset;
    std::uint64_t byte;
  };
  for (const Case& c : {Case{"ab\xC3", 2, 0xC3},
                        Case{"abc\x80"
                             "def",
                             3, 0x80},
                        Case{"\xF0\x80\x80", 0, 0xF0}, Case{"\xE2\x82\xAC\xED\xA0\x80", 3, 0xED},
                        Case{"ok\xF0\x9F\x98\x80\xFF", 6, 0xFF}}) {
    CAPTURE(c.bytes);
    bool threw = false;
    try {
      (void)d.decode(frame(c.bytes));
    } catch (const CorruptedFrameError& e) {
      threw = true;
      CHECK(e.offset() == c.offset);
      CHECK(e.value() == c.byte);
      CHECK(e.limit() == CodecError::kNone);
      CHECK(std::string(e.what()).find(fmt::format("offset {}", c.offset)) != std::string::npos);
    }
    CHECK(threw);
  }
}

TEST_CASE("StringDecoder: the offset is relative to the frame's readerIndex; indices unchanged") {
  ByteBuf b = Unpooled::copiedBuffer(std::string_view("\xFFxy\xC3\xA9z\x80"));
  b.readerIndex(1);
  b.writerIndex(6);
  const AnyByteBuf f(std::in_place_type<ByteBuf>, std::move(b));
  CHECK(StringDecoder().decode(f) == "xy\xC3\xA9z");
  CHECK(StringDecoder(Utf8Policy::Strict).decode(f) == "xy\xC3\xA9z");
  CHECK(std::get<ByteBuf>(f).readerIndex() == 1);
  ByteBuf bad =
      Unpooled::copiedBuffer(std::string_view("\xFF"
                                              "ab\x80"));
  bad.readerIndex(1);
  try {
    (void)StringDecoder(Utf8Policy::Strict).decode(AnyByteBuf(std::move(bad)));
    FAIL("expected CorruptedFrameError");
  } catch (const CorruptedFrameError& e) {
    CHECK(e.offset() == 2);
  }
}

TEST_CASE("StringDecoder: composite frames with characters split across components") {
  const std::vector<std::string> parts = {"h\xC3", "\xA9llo \xF0\x9F", "\x98", "\x80!"};
  const AnyByteBuf f = compositeFrame(parts);
  REQUIRE(isComposite(f));
  CHECK(StringDecoder().decode(f) == "h\xC3\xA9llo \xF0\x9F\x98\x80!");
  CHECK(StringDecoder(Utf8Policy::Strict).decode(f) == "h\xC3\xA9llo \xF0\x9F\x98\x80!");
  CHECK(readableBytes(f) == 12);  // not consumed
  // Ill-formed across components: a 4-byte lead whose sequence is cut by a bad continuation.
  const AnyByteBuf bad = compositeFrame({"ab\xF0\x9F", "x", "\x80"});
  CHECK(StringDecoder().decode(bad) == "ab"s + kFffd + "x" + kFffd);
  try {
    (void)StringDecoder(Utf8Policy::Strict).decode(bad);
    FAIL("expected CorruptedFrameError");
  } catch (const CorruptedFrameError& e) {
    CHECK(e.offset() == 2);
    CHECK(e.value() == 0xF0);
  }
  // A composite whose readerIndex is inside its second component.
  CompositeByteBuf c = ByteBufAllocator::defaultAllocator().compositeBuffer(8);
  c.addComponent(true, Unpooled::copiedBuffer(std::string_view("..")));
  c.addComponent(true, Unpooled::copiedBuffer(std::string_view(".\xE2\x82")));
  c.addComponent(true, Unpooled::copiedBuffer(std::string_view("\xAC\x80")));
  c.skipBytes(3);
  const AnyByteBuf skipped(std::move(c));
  CHECK(StringDecoder().decode(skipped) == "\xE2\x82\xAC"s + kFffd);
  try {
    (void)StringDecoder(Utf8Policy::Strict).decode(skipped);
    FAIL("expected CorruptedFrameError");
  } catch (const CorruptedFrameError& e) {
    CHECK(e.offset() == 3);
  }
}

TEST_CASE("StringDecoder: as a MessageToMessageDecoder, errors are reported and decoding goes on") {
  DecoderRunner<StringDecoder> strict(Utf8Policy::Strict);
  strict.feed("one").feed("t\xC3w\xC3\xB6").feed(compositeFrame({"thr", "ee"})).finish();
  CHECK(transcriptOf(strict) == Transcript{"one", "!Corrupted@1=195/-", "three"});
  DecoderRunner<StringDecoder> replace;
  replace.feed("one").feed("t\xC3w\xC3\xB6").feed(compositeFrame({"thr", "ee"})).finish();
  CHECK(transcriptOf(replace) == Transcript{"one", "t"s + kFffd + "w\xC3\xB6", "three"});
  // The two-argument channelRead rethrows.
  StringDecoder d(Utf8Policy::Strict);
  std::vector<std::string> out;
  CHECK_THROWS_AS(d.channelRead(frame("\x80"), out), CorruptedFrameError);
  CHECK(out.empty());
}

// ---------------------------------------------------------------- StringEncoder

TEST_CASE("StringEncoder: UTF-8 round trips through StringDecoder") {
  StringEncoder enc;
  CHECK(enc.charset() == Charset::Utf8);
  for (const std::string s : {"", "ascii only", "h\xC3\xA9llo", "\xE2\x82\xAC\xE2\x82\xAC",
                              "\xF0\x9F\x98\x80\xF0\x90\x8D\x88 4-byte"}) {
    CAPTURE(s);
    ByteBuf b = enc.encodeToBuffer(s);
    CHECK(str(b) == s);
    CHECK(StringDecoder(Utf8Policy::Strict).decode(AnyByteBuf(std::move(b))) == s);
  }
}

TEST_CASE("StringEncoder: ill-formed UTF-8 input is written with replacement (never an error)") {
  StringEncoder enc;
  CHECK(str(enc.encodeToBuffer(std::string("a\xF0\x80\x80z"))) ==
        "a"s + kFffd + kFffd + kFffd + "z");
  CHECK(str(enc.encodeToBuffer(std::string("\xC3"))) == kFffd);
}

TEST_CASE("StringEncoder: charsets") {
  const std::string text = "h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80!";  // h é € 😀 !
  CHECK(str(StringEncoder(Charset::Ascii).encodeToBuffer(text)) ==
        "h???"
        "!");
  CHECK(str(StringEncoder(Charset::Latin1).encodeToBuffer(text)) ==
        "h\xE9??"
        "!");
  CHECK(str(StringEncoder(Charset::Utf16BE).encodeToBuffer(text)) ==
        std::string("\x00h\x00\xE9\x20\xAC\xD8\x3D\xDE\x00\x00!", 12));
  CHECK(str(StringEncoder(Charset::Utf16LE).encodeToBuffer(text)) ==
        std::string("h\x00\xE9\x00\xAC\x20\x3D\xD8\x00\xDE!\x00", 12));
  // Ill-formed input: one '?' per maximal subpart in the 8-bit charsets, U+FFFD in UTF-16.
  CHECK(str(StringEncoder(Charset::Ascii).encodeToBuffer(std::string("a\xF0\x80z"))) == "a??z");
  CHECK(str(StringEncoder(Charset::Utf16BE).encodeToBuffer(std::string("a\xFF"))) ==
        std::string("\x00"
                    "a\xFF\xFD",
                    4));
}

TEST_CASE("StringEncoder: UTF-16 and UTF-32 input") {
  const std::u16string u16 = u"h\u00E9\u20AC\U0001F600";
  CHECK(str(StringEncoder().encode(std::u16string_view(u16))) ==
        "h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  CHECK(str(StringEncoder(Charset::Ascii).encode(std::u16string_view(u16))) == "h????");
  CHECK(str(StringEncoder(Charset::Latin1).encode(std::u16string_view(u16))) == "h\xE9???");
  CHECK(str(StringEncoder(Charset::Utf16LE).encode(std::u16string_view(u16))) ==
        std::string("h\x00\xE9\x00\xAC\x20\x3D\xD8\x00\xDE", 10));
  // A lone surrogate becomes '?' in UTF-8.
  const char16_t lone[] = {u'a', 0xD800, u'b'};
  CHECK(str(StringEncoder().encode(std::u16string_view(lone, 3))) == "a?b");

  const std::u32string u32 = U"h\u00E9\u20AC\U0001F600";
  CHECK(str(StringEncoder().encode(std::u32string_view(u32))) ==
        "h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  CHECK(str(StringEncoder(Charset::Ascii).encode(std::u32string_view(u32))) == "h???");
  CHECK(str(StringEncoder(Charset::Latin1).encode(std::u32string_view(u32))) == "h\xE9??");
  CHECK(str(StringEncoder(Charset::Utf16BE).encode(std::u32string_view(u32))) ==
        std::string("\x00h\x00\xE9\x20\xAC\xD8\x3D\xDE\x00", 10));
  CHECK(str(StringEncoder(Charset::Utf16LE).encode(std::u32string_view(u32))) ==
        std::string("h\x00\xE9\x00\xAC\x20\x3D\xD8\x00\xDE", 10));
  // Invalid code points (a surrogate, a value above U+10FFFF) become '?' in every charset.
  const char32_t bad[] = {U'a', 0xD800, 0x110000, U'b'};
  const std::u32string_view badView(bad, 4);
  CHECK(str(StringEncoder().encode(badView)) == "a??b");
  CHECK(str(StringEncoder(Charset::Utf16BE).encode(badView)) == std::string("\x00"
                                                                            "a\x00?\x00?\x00"
                                                                            "b",
                                                                            8));
  CHECK(str(StringEncoder(Charset::Latin1).encode(badView)) == "a??b");
}

TEST_CASE("StringEncoder: one allocation per message, sized so that it never grows") {
  CountingAllocator counting;
  const std::vector<std::string> texts = {
      "", "plain ascii text", "h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "bad \xF0\x80\x80 utf8",
      std::string(3000, 'x') + "\xC3\xA9"};
  for (Charset cs :
       {Charset::Utf8, Charset::Ascii, Charset::Latin1, Charset::Utf16BE, Charset::Utf16LE}) {
    StringEncoder enc(cs, counting);
    for (const auto& t : texts) {
      CAPTURE(static_cast<int>(cs));
      CAPTURE(t.size());
      const int before = counting.allocations;
      ByteBuf b = enc.encodeToBuffer(t);
      CHECK(counting.allocations == before + 1);
      CHECK(b.capacity() == enc.sizeHint(t));  // no regrowth
      CHECK(b.capacity() >= b.readableBytes());
      if (cs == Charset::Utf8 &&
          utf8::isValidUtf8(reinterpret_cast<const std::byte*>(t.data()), t.size())) {
        CHECK(b.capacity() == t.size());  // well-formed UTF-8: exact
      }
      // u16 / u32 overloads: one allocation too.
      const std::u16string u16(t.begin(), t.end());
      ByteBuf b16 = enc.encode(std::u16string_view(u16));
      const std::u32string u32(t.begin(), t.end());
      ByteBuf b32 = enc.encode(std::u32string_view(u32));
      CHECK(counting.allocations == before + 3);
      CHECK(b16.capacity() >= b16.readableBytes());
      CHECK(b32.capacity() >= b32.readableBytes());
    }
  }
  CHECK(counting.frees == counting.allocations);
}

TEST_CASE("StringEncoder: write() appends the buffer, and nothing for an empty string") {
  StringEncoder enc;
  std::vector<AnyByteBuf> out;
  enc.write("abc", out);
  enc.write("", out);
  enc.write("\xC3\xA9", out);
  REQUIRE(out.size() == 2);
  CHECK(readableBytesToString(out[0]) == "abc");
  CHECK(readableBytesToString(out[1]) == "\xC3\xA9");
}
