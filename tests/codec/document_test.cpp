#include <netbuf/codec/document.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace netbuf;

namespace {
std::span<const std::byte> bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
}  // namespace

TEST_CASE("Document: builders copy into the arena") {
  Document doc;
  std::string text = "netbuf";
  const Value s = doc.str(text);
  text[0] = 'X';  // the Value holds its own copy
  CHECK(s.asStr() == "netbuf");
  CHECK(doc.bin(bytes(std::string_view("\x00\x01", 2))).asBin().size() == 2);
  const Value e = doc.ext(9, bytes("xyz"));
  CHECK(e.extType() == 9);
  CHECK(std::string_view(reinterpret_cast<const char*>(e.extData().data()), 3) == "xyz");
  CHECK(doc.str("").asStr().empty());

  const Value arr = doc.array({Value::uinteger(1), s});
  const Value map = doc.map({{doc.str("name"), s}, {doc.str("list"), arr}});
  doc.setRoot(map);
  CHECK(doc.root()["name"].asStr() == "netbuf");
  CHECK(doc.root()["list"][0].asUInt64() == 1);
  CHECK(doc.arenaUsed() > 0);
  CHECK(doc.arenaReserved() >= doc.arenaUsed());
}

TEST_CASE("Document: str validates UTF-8, strUnchecked does not") {
  Document doc;
  CHECK(doc.str("h\xc3\xa9").asStr() == "h\xc3\xa9");
  try {
    (void)doc.str("ab\xc3(");
    FAIL("no throw");
  } catch (const Utf8Error& e) {
    CHECK(e.offset() == 2);
  }
  const Value raw = doc.strUnchecked("\xff", true);
  CHECK(raw.hasInvalidUtf8());
  CHECK(raw.asStr() == "\xff");
}

TEST_CASE("Document: allocations are aligned and survive block changes and moves") {
  Document doc(64);  // tiny first block: forces several blocks
  std::vector<Value> made;
  for (int i = 0; i < 200; ++i) {
    auto span = doc.allocateArray(3);
    CHECK(reinterpret_cast<std::uintptr_t>(span.data()) % alignof(Value) == 0);
    for (const Value& v : span) CHECK(v.isNil());  // default-initialised
    span[0] = doc.str(std::to_string(i));
    made.push_back(Value::arrayView(span));
  }
  auto* odd = doc.allocateBytes(3);
  CHECK(reinterpret_cast<std::uintptr_t>(odd) % 8 == 0);
  const std::size_t usedBefore = doc.arenaUsed();
  CHECK(doc.allocateBytes(0) != nullptr);
  CHECK(doc.allocateArray(0).data() != nullptr);
  CHECK(doc.arenaUsed() == usedBefore);  // empty containers take no arena space
  CHECK_THROWS_AS(doc.ext(-1, bytes("abcd")), IllegalArgumentError);
  // A first-block size past kMaxBlock is clamped (no overflow in the block header arithmetic).
  Document clamped(SIZE_MAX);
  CHECK(clamped.str("x").asStr() == "x");
  CHECK(clamped.arenaReserved() == Document::kMaxBlock);
  // A request larger than any block gets its own block.
  auto big = doc.allocateMap(100000);
  CHECK(big.size() == 100000);
  CHECK(doc.arenaReserved() >= 100000 * sizeof(Member));

  Document moved = std::move(doc);
  for (int i = 0; i < 200; ++i) CHECK(made[i][0].asStr() == std::to_string(i));
  Document assigned;
  (void)assigned.str("old contents");
  assigned = std::move(moved);
  CHECK(made[199][0].asStr() == "199");
  CHECK(moved.arenaReserved() == 0);  // NOLINT: moved-from is empty by contract
}

TEST_CASE("Document: clear keeps one block for reuse and forgets the rest") {
  Document doc(256);
  for (int i = 0; i < 100; ++i) (void)doc.str(std::string(100, 'x'));
  const std::size_t reservedBefore = doc.arenaReserved();
  doc.setRoot(Value::uinteger(1));
  doc.keepAlive(Unpooled::copiedBuffer(std::string_view("abc")));
  doc.clear();
  CHECK(doc.root().isNil());
  CHECK(doc.keptBuffers().empty());
  CHECK(doc.arenaUsed() == 0);
  CHECK(doc.arenaReserved() > 0);
  CHECK(doc.arenaReserved() < reservedBefore);
  // Reuse: allocating what fits in the kept block reserves nothing more.
  const std::size_t kept = doc.arenaReserved();
  (void)doc.str(std::string(100, 'y'));
  CHECK(doc.arenaReserved() == kept);

  // A huge dedicated block is not kept.
  Document big;
  (void)big.allocateBytes(8u << 20);
  big.clear();
  CHECK(big.arenaReserved() == 0);
}

TEST_CASE("Document: retainedSlice shares kept buffers and copies the rest") {
  Document doc;
  ByteBuf input = Unpooled::copiedBuffer(std::string_view("headerPAYLOADtail"));
  const auto* base = input.data();
  doc.keepAlive(std::move(input));
  doc.keepAlive(ByteBuf());  // ignored
  CHECK(doc.keptBuffers().size() == 1);
  const Value payload = Value::binView({base + 6, 7});
  ByteBuf slice = doc.retainedSlice(payload);
  CHECK(slice.readableStringView() == "PAYLOAD");
  CHECK(slice.data() == base + 6);  // zero copy
  CHECK(doc.keptBuffers()[0].refCnt() == 2);

  const Value str = Value::strView(std::string_view(reinterpret_cast<const char*>(base), 6));
  CHECK(doc.retainedSlice(str).readableStringView() == "header");

  const Value own = doc.bin(bytes("copied"));
  ByteBuf copy = doc.retainedSlice(own);
  CHECK(copy.readableStringView() == "copied");
  CHECK(copy.data() != own.asBin().data());

  CHECK(doc.retainedSlice(doc.ext(3, bytes("e"))).readableStringView() == "e");
  CHECK_THROWS_AS(doc.retainedSlice(Value::uinteger(1)), ValueTypeError);
}

TEST_CASE("Document: str and strUnchecked record whether text is plain ASCII") {
  Document doc;
  CHECK(doc.str("").isPlainAscii());
  CHECK(doc.str("netbuf").isPlainAscii());
  CHECK(doc.str(" ~\x7f").isPlainAscii());  // 0x20, 0x7E and DEL are written as they are
  CHECK(doc.strUnchecked("plain").isPlainAscii());
  CHECK_FALSE(doc.strUnchecked("plain", true).isPlainAscii());  // flagged invalid: no hint
  // Each byte JSON must escape or that is not ASCII, at every position of texts that take the
  // eight-byte loop and its tail: 0x1F (and NUL), '"', '\\', 0x80.., a UTF-8 character.
  const std::string specials[] = {std::string(1, '\0'), "\x1f", "\"", "\\", "\xc3\xa9"};
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9},
                        std::size_t{16}, std::size_t{23}}) {
    for (std::size_t at = 0; at < n; ++at) {
      for (const std::string& special : specials) {
        std::string s(n, 'a');
        s.replace(at, 1, special);
        INFO("n = " << n << ", at = " << at << ", byte " << int(special[0]));
        CHECK_FALSE(doc.str(s).isPlainAscii());
        CHECK_FALSE(doc.strUnchecked(s).isPlainAscii());
      }
    }
    CHECK(doc.str(std::string(n, ' ')).isPlainAscii());
  }
  // The hint is not part of the value.
  CHECK(doc.str("abc") == Value::strView("abc"));
  CHECK_FALSE(Value::strView("abc").isPlainAscii());
}

TEST_CASE("Document: map notes when its members are already in canonical order") {
  Document doc;
  const Value a = doc.str("a"), b = doc.str("b"), one = Value::uinteger(1);
  CHECK(doc.map({}).hasCanonicalOrder());
  CHECK(doc.map({{a, one}}).hasCanonicalOrder());
  CHECK(doc.map({{a, one}, {b, one}}).hasCanonicalOrder());
  const Value unordered = doc.map({{b, one}, {a, one}});
  CHECK_FALSE(unordered.hasCanonicalOrder());
  CHECK(unordered.asMap()[0].key.asStr() == "b");                  // map keeps the order given
  CHECK_FALSE(doc.map({{a, one}, {a, one}}).hasCanonicalOrder());  // duplicate
  CHECK_FALSE(doc.map({{one, one}}).hasCanonicalOrder());          // key not Str
  CHECK_FALSE(doc.map({{Value::strView("a", true), one}}).hasCanonicalOrder());  // flagged
  CHECK_FALSE(doc.map({{Value::strView("\xff"), one}}).hasCanonicalOrder());     // invalid UTF-8
  CHECK(doc.map({{Value::strView("\xc3\xa9"), one}}).hasCanonicalOrder());       // view, valid
  // In order by the comparison, but the middle key is not UTF-8: the validation decides.
  CHECK_FALSE(doc.map({{a, one}, {Value::strView("a\xff"), one}, {b, one}}).hasCanonicalOrder());
  CHECK(doc.map({{a, one}, {Value::strView("a\xc3\xa9"), one}, {b, one}}).hasCanonicalOrder());
  // UTF-16 order, not byte order: U+1F600 (D83D DE00) sorts before U+FB33.
  const Value emoji = doc.str("\xF0\x9F\x98\x80"), dalet = doc.str("\xEF\xAC\xB3");
  CHECK(doc.map({{emoji, one}, {dalet, one}}).hasCanonicalOrder());
  CHECK_FALSE(doc.map({{dalet, one}, {emoji, one}}).hasCanonicalOrder());
  // Views and arrays never carry it.
  const Member members[] = {{a, one}};
  CHECK_FALSE(Value::mapView(members).hasCanonicalOrder());
  CHECK_FALSE(doc.array({a}).hasCanonicalOrder());
  CHECK(doc.map({{a, one}}) == Value::mapView(members));
}

TEST_CASE("Document: sortedMap keeps members in RFC 8785 key order, or throws naming the key") {
  Document doc;
  const Value one = Value::uinteger(1), two = Value::uinteger(2), three = Value::uinteger(3);
  const Value emoji = doc.str("\xF0\x9F\x98\x80"), dalet = doc.str("\xEF\xAC\xB3");
  const Value m = doc.sortedMap({{doc.str("z"), one},
                                 {dalet, two},
                                 {doc.str("a"), three},
                                 {emoji, one},
                                 {Value::strView("m"), two}});
  CHECK(m.hasCanonicalOrder());
  const auto members = m.asMap();
  REQUIRE(members.size() == 5);
  CHECK(members[0].key.asStr() == "a");
  CHECK(members[0].value.asUInt64() == 3);  // values travel with their keys
  CHECK(members[1].key.asStr() == "m");
  CHECK(members[2].key.asStr() == "z");
  CHECK(members[3].key == emoji);
  CHECK(members[4].key == dalet);
  CHECK(doc.sortedMap({}).hasCanonicalOrder());
  CHECK(doc.sortedMap({}).size() == 0);

  auto message = [&](std::initializer_list<Member> ms) {
    try {
      (void)doc.sortedMap(ms);
    } catch (const IllegalArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  CHECK(message({{doc.str("k"), one}, {doc.str("x"), one}, {doc.str("k"), two}}) ==
        "Document::sortedMap: duplicate key \"k\"");
  // A long key is quoted up to 64 bytes, cut before a character that would not fit whole.
  const std::string longKey = std::string(63, 'x') + "\xc3\xa9" + "tail";
  CHECK(message({{doc.str(longKey), one}, {doc.str(longKey), two}}) ==
        "Document::sortedMap: duplicate key \"" + std::string(63, 'x') + "\"");
  CHECK(message({{doc.str(longKey), one}, {doc.str("k"), one}}) == "no throw");
  CHECK(message({{doc.str("k"), one}, {one, one}}) ==
        "Document::sortedMap: key 1 is UInt, not Str");
  CHECK(message({{Value::strView("a\xff"), one}}) ==
        "Document::sortedMap: key 0 is not valid UTF-8");
  CHECK(message({{Value::strView("a", true), one}}) ==
        "Document::sortedMap: key 0 is not valid UTF-8");
}

TEST_CASE("Document: kept buffers in order, the first held inline, through moves and clear") {
  ByteBuf a = Unpooled::copiedBuffer(std::string_view("aaaa"));
  ByteBuf b = Unpooled::copiedBuffer(std::string_view("bbbb"));
  ByteBuf c = Unpooled::copiedBuffer(std::string_view("cccc"));
  const auto* pa = a.data();
  const auto* pb = b.data();
  const auto* pc = c.data();
  Document doc;
  CHECK(doc.keptBuffers().empty());
  doc.keepAlive(std::move(a));
  REQUIRE(doc.keptBuffers().size() == 1);
  CHECK(doc.keptBuffers()[0].data() == pa);

  // Moves carry the kept buffers (one, then several) and leave the source with none.
  Document moved(std::move(doc));
  CHECK(doc.keptBuffers().empty());  // NOLINT: moved-from is empty by contract
  REQUIRE(moved.keptBuffers().size() == 1);
  moved.keepAlive(std::move(b));
  moved.keepAlive(std::move(c));
  REQUIRE(moved.keptBuffers().size() == 3);
  CHECK(moved.keptBuffers()[0].data() == pa);
  CHECK(moved.keptBuffers()[1].data() == pb);
  CHECK(moved.keptBuffers()[2].data() == pc);
  // retainedSlice finds a view into any of them.
  CHECK(moved.retainedSlice(Value::binView({pb + 1, 2})).data() == pb + 1);
  CHECK(moved.retainedSlice(Value::binView({pa, 4})).data() == pa);
  Document assigned;
  assigned.keepAlive(Unpooled::copiedBuffer(std::string_view("x")));
  assigned = std::move(moved);
  CHECK(assigned.keptBuffers().size() == 3);
  CHECK(moved.keptBuffers().empty());  // NOLINT: moved-from is empty by contract

  // clear() releases them all; the Document keeps buffers again afterwards.
  const ByteBuf watch = assigned.keptBuffers()[2].retainedDuplicate();
  CHECK(watch.refCnt() == 2);
  assigned.clear();
  CHECK(assigned.keptBuffers().empty());
  CHECK(watch.refCnt() == 1);
  assigned.keepAlive(Unpooled::copiedBuffer(std::string_view("again")));
  CHECK(assigned.keptBuffers().size() == 1);
}
