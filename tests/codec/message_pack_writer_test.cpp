#include <netbuf/codec/msgpack/message_pack_writer.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/document.hpp>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

std::string toHex(std::span<const std::byte> bytes) {
  std::string s;
  s.reserve(bytes.size() * 2);
  for (std::byte c : bytes) s += fmt::format("{:02x}", static_cast<unsigned>(c));
  return s;
}

/// Runs f on a writer over a fresh buffer and returns the bytes as lowercase hex.
std::string hexOf(const std::function<void(MessagePackWriter&)>& f,
                  const MessagePackWriteOptions& options = {}) {
  ByteBuf out = Unpooled::buffer();
  {
    MessagePackWriter w(out, options);
    f(w);
    CHECK(w.bytesWritten() == out.readableBytes());
  }
  return toHex(out.readableSpan());
}

std::string hexOfValue(const Value& v, const MessagePackWriteOptions& options = {}) {
  return hexOf([&](MessagePackWriter& w) { w.pack(v); }, options);
}

/// Bytes of v encoded through msgpack::encode (for large outputs compared as bytes).
std::string bytesOf(const std::function<void(MessagePackWriter&)>& f) {
  ByteBuf out = Unpooled::buffer();
  {
    MessagePackWriter w(out);
    f(w);
  }
  return std::string(out.readableStringView());
}

std::span<const std::byte> asBytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

MessagePackWriteOptions canonical() {
  MessagePackWriteOptions o;
  o.canonical = true;
  return o;
}

}  // namespace

TEST_CASE("MessagePackWriter: unsigned integers at every format boundary") {
  struct Case {
    std::uint64_t v;
    const char* hex;
  };
  const Case cases[] = {
      {0, "00"},
      {127, "7f"},
      {128, "cc80"},
      {255, "ccff"},
      {256, "cd0100"},
      {65535, "cdffff"},
      {65536, "ce00010000"},
      {UINT32_MAX, "ceffffffff"},
      {std::uint64_t{1} << 32, "cf0000000100000000"},
      {UINT64_MAX, "cfffffffffffffffff"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.v);
    CHECK(hexOf([&](MessagePackWriter& w) { w.packUInt(c.v); }) == c.hex);
    CHECK(hexOfValue(Value::uinteger(c.v)) == c.hex);
    if (c.v <= INT64_MAX) {  // packInt(x) == packUInt(x) for x >= 0
      CHECK(hexOf([&](MessagePackWriter& w) { w.packInt(static_cast<std::int64_t>(c.v)); }) ==
            c.hex);
      CHECK(hexOfValue(Value::integer(static_cast<std::int64_t>(c.v))) == c.hex);
    }
  }
  CHECK(hexOf([](MessagePackWriter& w) { w.packInt(INT64_MAX); }) == "cf7fffffffffffffff");
}

TEST_CASE("MessagePackWriter: negative integers at every format boundary") {
  struct Case {
    std::int64_t v;
    const char* hex;
  };
  const Case cases[] = {
      {-1, "ff"},
      {-32, "e0"},
      {-33, "d0df"},
      {-128, "d080"},
      {-129, "d1ff7f"},
      {-32768, "d18000"},
      {-32769, "d2ffff7fff"},
      {INT32_MIN, "d280000000"},
      {std::int64_t{INT32_MIN} - 1, "d3ffffffff7fffffff"},
      {INT64_MIN, "d38000000000000000"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.v);
    CHECK(hexOf([&](MessagePackWriter& w) { w.packInt(c.v); }) == c.hex);
    CHECK(hexOfValue(Value::integer(c.v)) == c.hex);
  }
}

TEST_CASE("MessagePackWriter: nil, bool, float32 vs float64 (never narrowed or widened)") {
  CHECK(hexOf([](MessagePackWriter& w) { w.packNil().packBool(false).packBool(true); }) ==
        "c0c2c3");
  CHECK(hexOf([](MessagePackWriter& w) { w.packFloat(1.5f); }) == "ca3fc00000");
  CHECK(hexOf([](MessagePackWriter& w) { w.packDouble(1.5); }) == "cb3ff8000000000000");
  // 1.0 fits a float32 exactly, but a double stays a double (and an integer-valued one too).
  CHECK(hexOf([](MessagePackWriter& w) { w.packDouble(1.0); }) == "cb3ff0000000000000");
  CHECK(hexOf([](MessagePackWriter& w) { w.packFloat(-0.0f); }) == "ca80000000");
  CHECK(hexOf([](MessagePackWriter& w) { w.packDouble(-0.0); }) == "cb8000000000000000");
  CHECK(hexOf([](MessagePackWriter& w) {
          w.packDouble(std::numeric_limits<double>::infinity());
        }) == "cb7ff0000000000000");
  CHECK(hexOfValue(Value::float32(0.1f)) == "ca3dcccccd");
  CHECK(hexOfValue(Value::float64(0.1)) == "cb3fb999999999999a");
}

TEST_CASE("MessagePackWriter: str headers at every length boundary") {
  struct Case {
    std::size_t n;
    const char* header;
  };
  const Case cases[] = {
      {0, "a0"},
      {1, "a1"},
      {31, "bf"},
      {32, "d920"},
      {255, "d9ff"},
      {256, "da0100"},
      {65535, "daffff"},
      {65536, "db00010000"},
      {70000, "db00011170"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.n);
    const std::string text(c.n, 'x');
    const std::string hdr = fmt::format("{}", c.header);
    for (int variant = 0; variant < 4; ++variant) {
      const std::string got = bytesOf([&](MessagePackWriter& w) {
        switch (variant) {
          case 0:
            w.packStr(text);
            break;
          case 1:
            w.packStrUnchecked(text);
            break;
          case 2:
            w.packStr(std::u16string(c.n, u'x'));
            break;
          default:
            w.packStr(std::u32string(c.n, U'x'));
            break;
        }
      });
      CAPTURE(variant);
      REQUIRE(got.size() == hdr.size() / 2 + c.n);
      CHECK(toHex(asBytes(got).first(hdr.size() / 2)) == hdr);
      CHECK(got.substr(hdr.size() / 2) == text);
    }
    // packStrHeader writes the same header alone.
    CHECK(hexOf([&](MessagePackWriter& w) { w.packStrHeader(static_cast<std::uint32_t>(c.n)); }) ==
          hdr);
  }
  CHECK(hexOf([](MessagePackWriter& w) { w.packStr("id"); }) == "a26964");
}

TEST_CASE("MessagePackWriter: bin headers at every length boundary") {
  struct Case {
    std::size_t n;
    const char* header;
  };
  const Case cases[] = {{0, "c400"},     {1, "c401"},       {255, "c4ff"},
                        {256, "c50100"}, {65535, "c5ffff"}, {65536, "c600010000"}};
  for (const Case& c : cases) {
    CAPTURE(c.n);
    std::vector<std::byte> payload(c.n);
    for (std::size_t i = 0; i < c.n; ++i) payload[i] = static_cast<std::byte>(i * 7);
    const std::string hdr = c.header;
    const std::string got = bytesOf([&](MessagePackWriter& w) { w.packBin(payload); });
    REQUIRE(got.size() == hdr.size() / 2 + c.n);
    CHECK(toHex(asBytes(got).first(hdr.size() / 2)) == hdr);
    if (c.n != 0) CHECK(std::memcmp(got.data() + hdr.size() / 2, payload.data(), c.n) == 0);
    // The ByteBuf overload over a plain ByteBuf copies, with the same bytes.
    ByteBuf pb = Unpooled::copiedBuffer(std::span<const std::byte>(payload));
    CHECK(bytesOf([&](MessagePackWriter& w) { w.packBin(std::move(pb)); }) == got);
    CHECK(hexOf([&](MessagePackWriter& w) { w.packBinHeader(static_cast<std::uint32_t>(c.n)); }) ==
          hdr);
  }
}

TEST_CASE("MessagePackWriter: array and map headers at every boundary") {
  CHECK(hexOf([](MessagePackWriter& w) { w.packArrayHeader(0); }) == "90");
  CHECK(hexOf([](MessagePackWriter& w) { w.packArrayHeader(15); }) == "9f");
  CHECK(hexOf([](MessagePackWriter& w) { w.packArrayHeader(16); }) == "dc0010");
  CHECK(hexOf([](MessagePackWriter& w) { w.packArrayHeader(65535); }) == "dcffff");
  CHECK(hexOf([](MessagePackWriter& w) { w.packArrayHeader(65536); }) == "dd00010000");
  CHECK(hexOf([](MessagePackWriter& w) { w.packArrayHeader(UINT32_MAX); }) == "ddffffffff");
  CHECK(hexOf([](MessagePackWriter& w) { w.packMapHeader(0); }) == "80");
  CHECK(hexOf([](MessagePackWriter& w) { w.packMapHeader(15); }) == "8f");
  CHECK(hexOf([](MessagePackWriter& w) { w.packMapHeader(16); }) == "de0010");
  CHECK(hexOf([](MessagePackWriter& w) { w.packMapHeader(65535); }) == "deffff");
  CHECK(hexOf([](MessagePackWriter& w) { w.packMapHeader(65536); }) == "df00010000");
  CHECK(hexOf([](MessagePackWriter& w) { w.packMapHeader(UINT32_MAX); }) == "dfffffffff");
}

TEST_CASE("MessagePackWriter: fixext and ext sizes") {
  struct Case {
    std::size_t n;
    const char* header;  // for type 5
  };
  const Case cases[] = {
      {1, "d405"},     {2, "d505"},       {4, "d605"},         {8, "d705"},
      {16, "d805"},    {0, "c70005"},     {3, "c70305"},       {17, "c71105"},
      {255, "c7ff05"}, {256, "c8010005"}, {65535, "c8ffff05"}, {65536, "c90001000005"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.n);
    std::vector<std::byte> data(c.n, std::byte{0xab});
    const std::string hdr = c.header;
    const std::string got = bytesOf([&](MessagePackWriter& w) { w.packExt(5, data); });
    REQUIRE(got.size() == hdr.size() / 2 + c.n);
    CHECK(toHex(asBytes(got).first(hdr.size() / 2)) == hdr);
    CHECK(got.substr(hdr.size() / 2) == std::string(c.n, '\xab'));
    CHECK(hexOf([&](MessagePackWriter& w) {
            w.packExtHeader(5, static_cast<std::uint32_t>(c.n));
          }) == hdr);
    CHECK(bytesOf([&](MessagePackWriter& w) { w.pack(Value::extView(5, data)); }) == got);
  }
  // Negative types are written as int8.
  CHECK(hexOf([](MessagePackWriter& w) {
          const std::byte one[1] = {std::byte{1}};
          w.packExt(-128, one);
        }) == "d48001");
}

TEST_CASE("MessagePackWriter: timestamps in each form at its edges") {
  struct Case {
    std::int64_t s;
    std::uint32_t ns;
    const char* hex;
  };
  const Case cases[] = {
      {0, 0, "d6ff00000000"},
      {UINT32_MAX, 0, "d6ffffffffff"},
      {std::int64_t{1} << 32, 0, "d7ff0000000100000000"},
      {0, 1, "d7ff0000000400000000"},
      {(std::int64_t{1} << 32) - 1, 1, "d7ff00000004ffffffff"},
      {(std::int64_t{1} << 34) - 1, 999'999'999, "d7ffee6b27ffffffffff"},
      {std::int64_t{1} << 34, 0,
       "c70cff00000000"
       "0000000400000000"},
      {-1, 0,
       "c70cff00000000"
       "ffffffffffffffff"},
      {-1, 500'000'000,
       "c70cff1dcd6500"
       "ffffffffffffffff"},
      {INT64_MIN, 0,
       "c70cff00000000"
       "8000000000000000"},
      {INT64_MAX, 999'999'999,
       "c70cff3b9ac9ff"
       "7fffffffffffffff"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.s);
    CAPTURE(c.ns);
    CHECK(hexOf([&](MessagePackWriter& w) { w.packTimestamp({c.s, c.ns}); }) == c.hex);
    CHECK(hexOfValue(Value::timestamp({c.s, c.ns})) == c.hex);
  }
  ByteBuf out = Unpooled::buffer();
  MessagePackWriter w(out);
  try {
    w.packTimestamp({0, 1'000'000'000});
    FAIL("expected EncoderError");
  } catch (const EncoderError& e) {
    CHECK(e.value() == 1'000'000'000);
    CHECK(e.limit() == 999'999'999);
  }
  CHECK(w.bytesWritten() == 0);
}

TEST_CASE("MessagePackWriter: UTF-16 and UTF-32 strings") {
  // "é" (2 bytes), "€" (3 bytes), U+1F600 (4 bytes, a surrogate pair in UTF-16).
  CHECK(hexOf([](MessagePackWriter& w) { w.packStr(u"a\u00e9\u20ac\U0001F600"); }) ==
        "aa61c3a9e282acf09f9880");
  CHECK(hexOf([](MessagePackWriter& w) { w.packStr(U"a\u00e9\u20ac\U0001F600"); }) ==
        "aa61c3a9e282acf09f9880");
  // A lone surrogate becomes '?' (ByteBuf::writeUtf8's policy), so the length stays exact.
  const char16_t lone[] = {u'a', static_cast<char16_t>(0xd800), u'b'};
  CHECK(hexOf([&](MessagePackWriter& w) { w.packStr(std::u16string_view(lone, 3)); }) ==
        "a3613f62");
  const char16_t loneLow[] = {static_cast<char16_t>(0xdc00)};
  CHECK(hexOf([&](MessagePackWriter& w) { w.packStr(std::u16string_view(loneLow, 1)); }) == "a13f");
  const char32_t bad32[] = {U'x', static_cast<char32_t>(0xd800), static_cast<char32_t>(0x110000)};
  CHECK(hexOf([&](MessagePackWriter& w) { w.packStr(std::u32string_view(bad32, 3)); }) ==
        "a3783f3f");
  // The header is chosen from the exact UTF-8 length: 11 units of 3 bytes = 33 bytes -> str8.
  const std::u16string euros(11, u'\u20ac');
  const std::string got = bytesOf([&](MessagePackWriter& w) { w.packStr(euros); });
  CHECK(toHex(asBytes(got).first(2)) == "d921");
  CHECK(got.size() == 2 + 33);
  // Empty.
  CHECK(hexOf([](MessagePackWriter& w) { w.packStr(std::u16string_view()); }) == "a0");
  CHECK(hexOf([](MessagePackWriter& w) { w.packStr(std::u32string_view()); }) == "a0");
}

TEST_CASE("MessagePackWriter: invalid UTF-8 is an EncoderError at the bad byte, nothing written") {
  std::string longText(200, 'a');
  longText[150] = '\xc3';  // a lead byte followed by ASCII
  struct Case {
    std::string text;
    std::size_t at;
  };
  const Case cases[] = {
      {"ab\xff", 2},
      {"\x80", 0},
      {"abc\xc3", 3},                   // truncated at the end
      {"0123456789\xed\xa0\x80z", 10},  // an encoded surrogate
      {"\xc0\xaf", 0},                  // overlong
      {longText, 150},                  // through the vectorised validator
  };
  for (const Case& c : cases) {
    CAPTURE(c.at);
    ByteBuf out = Unpooled::buffer();
    MessagePackWriter w(out);
    w.packNil();
    try {
      w.packStr(c.text);
      FAIL("expected EncoderError");
    } catch (const EncoderError& e) {
      CHECK(e.offset() == c.at);
      CHECK(std::string(e.what()).find(fmt::format("at byte {}", c.at)) != std::string::npos);
    }
    CHECK(w.bytesWritten() == 1);  // validated before anything is written
    // An unflagged Str Value is validated the same way, in both modes.
    CHECK_THROWS_AS(w.pack(Value::strView(c.text)), EncoderError);
    MessagePackWriter cw(out, canonical());
    CHECK_THROWS_AS(cw.pack(Value::strView(c.text)), EncoderError);
  }
  // Valid multi-byte text passes (short and long).
  CHECK(hexOf([](MessagePackWriter& w) { w.packStr("\xc3\xa9"); }) == "a2c3a9");
  const std::string longValid = std::string(40, 'x') + "\xe2\x82\xac";
  CHECK(bytesOf([&](MessagePackWriter& w) { w.packStr(longValid); }).size() == 2 + 43);
}

TEST_CASE("MessagePackWriter: a Str flagged invalid is written raw, except in canonical mode") {
  const Value flagged = Value::strView("a\xff", true);
  CHECK(hexOfValue(flagged) == "a261ff");
  ByteBuf out = Unpooled::buffer();
  MessagePackWriter w(out, canonical());
  CHECK_THROWS_AS(w.pack(flagged), EncoderError);
  CHECK_THROWS_AS(w.pack(Value::mapView(std::vector<Member>{{flagged, Value::nil()},
                                                            {Value::strView("b"), Value::nil()}})),
                  EncoderError);
  // packStrUnchecked skips validation.
  CHECK(hexOf([](MessagePackWriter& w2) { w2.packStrUnchecked("\xff"); }) == "a1ff");
}

TEST_CASE("MessagePackWriter: lengths above UINT32_MAX are EncoderErrors before any byte is read") {
  // A fake span over one real byte: reading past it would crash under ASan, so the test proves
  // that the length is checked first.
  const std::byte one[1] = {};
  const std::size_t huge = std::size_t{1} << 33;
  const std::span<const std::byte> fake(one, huge);
  const std::string_view fakeText(reinterpret_cast<const char*>(one), huge);
  ByteBuf out = Unpooled::buffer();
  MessagePackWriter w(out);
  auto expectTooLong = [&](const std::function<void()>& f) {
    try {
      f();
      FAIL("expected EncoderError");
    } catch (const EncoderError& e) {
      CHECK(e.value() == huge);
      CHECK(e.limit() == UINT32_MAX);
    }
  };
  expectTooLong([&] { w.packBin(fake); });
  expectTooLong([&] { w.packExt(1, fake); });
  expectTooLong([&] { w.packStr(fakeText); });
  expectTooLong([&] { w.packStrUnchecked(fakeText); });
  const char16_t u16[1] = {u'a'};
  const char32_t u32[1] = {U'a'};
  expectTooLong([&] { w.packStr(std::u16string_view(u16, huge)); });
  expectTooLong([&] { w.packStr(std::u32string_view(u32, huge)); });
  CHECK(w.bytesWritten() == 0);
}

TEST_CASE("MessagePackWriter: Value trees keep member order unless canonical") {
  Document doc;
  const Value v = doc.map({
      {doc.str("z"), doc.str("z")},
      {doc.str("a"), Value::integer(-1)},
      {Value::uinteger(1), doc.array({Value::nil(), Value::boolean(true), Value::float32(1.5f)})},
      {doc.str("b"), doc.bin(asBytes("\x01\x02"))},
  });
  CHECK(hexOfValue(v) == "84a17aa17aa161ff0193c0c3ca3fc00000a162c4020102");
  // Canonical: 0x01 < 0xa1'a' < 0xa1'b' < 0xa1'z'.
  CHECK(hexOfValue(v, canonical()) == "840193c0c3ca3fc00000a161ffa162c4020102a17aa17a");
  CHECK(hexOfValue(Value::arrayView({})) == "90");
  CHECK(hexOfValue(Value::mapView({})) == "80");
  CHECK(hexOfValue(Value::mapView({}), canonical()) == "80");
}

TEST_CASE("MessagePackWriter: canonical bytes do not depend on insertion order") {
  Document doc;
  // Keys of every kind, with their encodings (the canonical order is the order of these bytes).
  const std::vector<Member> members = {
      {doc.str("b"), Value::uinteger(1)},                     // a162
      {doc.str("aa"), Value::uinteger(2)},                    // a26161
      {Value::integer(1), Value::uinteger(3)},                // 01
      {doc.str("a"), Value::uinteger(4)},                     // a161
      {Value::integer(-1), Value::uinteger(5)},               // ff
      {doc.array({Value::uinteger(1)}), Value::uinteger(6)},  // 9101
      {doc.str(""), doc.map({{doc.str("y"), Value::nil()},    // a0
                             {doc.str("x"), Value::nil()}})},
      {Value::uinteger(200), Value::uinteger(7)},  // cc c8
  };
  const std::string expected =
      "88"
      "0103"            // 1
      "910106"          // [1]
      "a0"              // ""
      "82a178c0a179c0"  // nested map sorted: x, y
      "a16104"          // "a"
      "a16201"          // "b"
      "a2616102"        // "aa"
      "ccc807"          // 200
      "ff05";           // -1
  std::vector<Member> perm = members;
  std::sort(perm.begin(), perm.end(), [](const Member& x, const Member& y) {
    return x.value.toDebugString() < y.value.toDebugString();
  });
  int orders = 0;
  do {
    if (++orders > 200) break;  // 200 permutations are plenty
    CHECK(hexOfValue(Value::mapView(perm), canonical()) == expected);
  } while (std::next_permutation(perm.begin(), perm.end(), [](const Member& x, const Member& y) {
    return x.value.toDebugString() < y.value.toDebugString();
  }));
  CHECK(orders > 100);
  // Reversed as well.
  std::vector<Member> rev(members.rbegin(), members.rend());
  CHECK(hexOfValue(Value::mapView(rev), canonical()) == expected);
  // Int and UInt of the same number encode alike: the same bytes either way.
  std::vector<Member> signedness = members;
  signedness[7].key = Value::integer(200);
  CHECK(hexOfValue(Value::mapView(signedness), canonical()) == expected);
}

TEST_CASE("MessagePackWriter: canonical Str key order is shorter first, then bytewise") {
  Document doc;
  const std::string k31(31, 'a'), k32(32, 'a'), k255(255, 'b'), k256(256, 'a');
  const std::vector<Member> members = {
      {doc.str(k256), Value::uinteger(6)}, {doc.str("b"), Value::uinteger(2)},
      {doc.str(k32), Value::uinteger(4)},  {doc.str("ab"), Value::uinteger(3)},
      {doc.str(k255), Value::uinteger(5)}, {doc.str("a"), Value::uinteger(1)},
      {doc.str(k31), Value::uinteger(35)}, {doc.str("\xc3\xa9"), Value::uinteger(34)},
  };
  MessagePackWriteOptions o = canonical();
  ByteBuf out = Unpooled::buffer();
  MessagePackWriter(out, o).pack(Value::mapView(members));
  // Expected: a, b, ab, "é" (0xc3 > 'a'), k31, k32, k255, k256.
  ByteBuf expected = Unpooled::buffer();
  {
    MessagePackWriter w(expected);
    w.packMapHeader(8);
    w.packStr("a").packUInt(1).packStr("b").packUInt(2).packStr("ab").packUInt(3);
    w.packStr("\xc3\xa9").packUInt(34).packStr(k31).packUInt(35).packStr(k32).packUInt(4);
    w.packStr(k255).packUInt(5).packStr(k256).packUInt(6);
  }
  CHECK(out.readableStringView() == expected.readableStringView());
}

TEST_CASE("MessagePackWriter: canonical maps larger than the stack sort (heap path)") {
  Document doc;
  std::vector<Member> members;
  for (int i = 99; i >= 0; --i)
    members.push_back({doc.str(fmt::format("k{}", i)), Value::integer(i)});
  ByteBuf out = Unpooled::buffer();
  MessagePackWriter(out, canonical()).pack(Value::mapView(members));
  ByteBuf expected = Unpooled::buffer();
  {
    MessagePackWriter w(expected);
    w.packMapHeader(100);
    for (int i = 0; i < 10; ++i) w.packStr(fmt::format("k{}", i)).packInt(i);  // 2 bytes
    for (int i = 10; i < 100; ++i) w.packStr(fmt::format("k{}", i)).packInt(i);
  }
  CHECK(out.readableStringView() == expected.readableStringView());
  // A duplicate among many is found too.
  members.push_back({doc.str("k42"), Value::nil()});
  ByteBuf out2 = Unpooled::buffer();
  CHECK_THROWS_AS(MessagePackWriter(out2, canonical()).pack(Value::mapView(members)), EncoderError);
}

TEST_CASE("MessagePackWriter: duplicate keys are EncoderErrors in canonical mode only") {
  Document doc;
  const Value dupStr = doc.map({{doc.str("a"), Value::uinteger(1)},
                                {doc.str("b"), Value::uinteger(2)},
                                {doc.str("a"), Value::uinteger(3)}});
  CHECK(hexOfValue(dupStr) == "83a16101a16202a16103");
  ByteBuf out = Unpooled::buffer();
  MessagePackWriter w(out, canonical());
  try {
    w.pack(dupStr);
    FAIL("expected EncoderError");
  } catch (const EncoderError& e) {
    CHECK(std::string(e.what()).find("duplicate map key") != std::string::npos);
    CHECK(std::string(e.what()).find("\"a\"") != std::string::npos);
  }
  // Int 1 and UInt 1 have one encoding: a duplicate.
  const Value dupInt =
      doc.map({{Value::integer(1), Value::nil()}, {Value::uinteger(1), Value::nil()}});
  CHECK(hexOfValue(dupInt) == "8201c001c0");
  CHECK_THROWS_AS(w.pack(dupInt), EncoderError);
  // Equal nested keys.
  const Value dupArr = doc.map({{doc.array({Value::uinteger(1)}), Value::nil()},
                                {doc.array({Value::integer(1)}), Value::nil()}});
  CHECK_THROWS_AS(w.pack(dupArr), EncoderError);
  // Duplicates inside a nested map are found as well.
  const Value nested = doc.map({{doc.str("x"), dupStr}});
  CHECK_THROWS_AS(w.pack(nested), EncoderError);
  // 0.0 and -0.0 are distinct keys on the wire.
  const Value zeros =
      doc.map({{Value::float64(0.0), Value::nil()}, {Value::float64(-0.0), Value::nil()}});
  CHECK(hexOfValue(zeros, canonical()) == "82cb0000000000000000c0cb8000000000000000c0");
}

TEST_CASE("MessagePackWriter: NaN canonicalisation") {
  const float snan32 = std::bit_cast<float>(0x7fa00001U);
  const float negNan32 = std::bit_cast<float>(0xffc00000U);
  const double snan64 = std::bit_cast<double>(0x7ff0000000000001ULL);
  const double negNan64 = std::bit_cast<double>(0xfff8000000000123ULL);
  // Normal mode keeps the bits.
  CHECK(hexOf([&](MessagePackWriter& w) { w.packFloat(snan32); }) == "ca7fa00001");
  CHECK(hexOf([&](MessagePackWriter& w) { w.packDouble(negNan64); }) == "cbfff8000000000123");
  // Canonical: the quiet NaN of the width, for packFloat/packDouble and Values alike.
  for (float f : {snan32, negNan32, std::numeric_limits<float>::quiet_NaN()}) {
    CHECK(hexOf([&](MessagePackWriter& w) { w.packFloat(f); }, canonical()) == "ca7fc00000");
    CHECK(hexOfValue(Value::float32(f), canonical()) == "ca7fc00000");
  }
  for (double d : {snan64, negNan64, -std::numeric_limits<double>::quiet_NaN()}) {
    CHECK(hexOf([&](MessagePackWriter& w) { w.packDouble(d); }, canonical()) ==
          "cb7ff8000000000000");
    CHECK(hexOfValue(Value::float64(d), canonical()) == "cb7ff8000000000000");
  }
  // Not NaN: unchanged.
  CHECK(hexOf([](MessagePackWriter& w) { w.packDouble(-0.0); }, canonical()) ==
        "cb8000000000000000");
  // NaN keys with different payloads become duplicates in canonical mode.
  const std::vector<Member> m = {{Value::float64(snan64), Value::nil()},
                                 {Value::float64(negNan64), Value::nil()}};
  ByteBuf out = Unpooled::buffer();
  CHECK_THROWS_AS(MessagePackWriter(out, canonical()).pack(Value::mapView(m)), EncoderError);
}

TEST_CASE("MessagePackWriter: appends to a buffer that already holds bytes; bytesWritten") {
  ByteBuf out = Unpooled::buffer(4);
  out.writeBytes(asBytes("xyz"));
  out.skipBytes(1);
  MessagePackWriter w(out);
  CHECK(w.bytesWritten() == 0);
  w.packUInt(300);
  CHECK(w.bytesWritten() == 3);
  w.packStr(std::string(100, 'q'));
  CHECK(w.bytesWritten() == 3 + 2 + 100);
  CHECK(out.readerIndex() == 1);
  CHECK(out.readableBytes() == 2 + 105);
  const std::string bytes(out.readableStringView());
  CHECK(bytes.substr(0, 2) == "yz");
  CHECK(toHex(asBytes(bytes).subspan(2, 5)) == "cd012cd964");
  CHECK(w.options().canonical == false);
  CHECK(w.options().zeroCopyThreshold == 4096);
}

TEST_CASE("MessagePackWriter: short strings at every length, non-ASCII at every position") {
  // Strings under 32 bytes are copied and checked for ASCII in one pass; anything else (a valid
  // multi-byte character or an invalid byte, wherever it sits) must still take the validator.
  for (std::size_t n = 0; n <= 40; ++n) {
    CAPTURE(n);
    const std::string ascii(n, 'q');
    const std::string plain = bytesOf([&](MessagePackWriter& w) { w.packStr(ascii); });
    const std::size_t head = n < 32 ? 1 : 2;
    REQUIRE(plain.size() == head + n);
    CHECK(std::memcmp(plain.data() + head, ascii.data(), n) == 0);
    for (std::size_t at = 0; at + 2 <= n; ++at) {
      CAPTURE(at);
      std::string twoByte = ascii;
      twoByte.replace(at, 2, "\xc3\xa9");  // still n bytes, valid UTF-8
      const std::string out = bytesOf([&](MessagePackWriter& w) { w.packStr(twoByte); });
      REQUIRE(out.size() == head + n);
      CHECK(std::memcmp(out.data() + head, twoByte.data(), n) == 0);
    }
    for (std::size_t at = 0; at < n; ++at) {
      CAPTURE(at);
      std::string bad = ascii;
      bad[at] = '\xff';
      ByteBuf buf = Unpooled::buffer();
      MessagePackWriter w(buf);
      try {
        w.packStr(bad);
        FAIL("expected EncoderError");
      } catch (const EncoderError& e) {
        CHECK(e.offset() == at);
      }
      CHECK(buf.readableBytes() == 0);  // the copy made while checking is not committed
    }
  }
}

TEST_CASE("MessagePackWriter: a full buffer fails with the buffer's IndexOutOfBoundsError") {
  ByteBuf out = Unpooled::buffer(4, 8);
  MessagePackWriter w(out);
  w.packUInt(1000);  // 3 bytes
  CHECK_THROWS_AS(w.packStr("0123456789"), IndexOutOfBoundsError);
  CHECK(w.bytesWritten() == 3);  // nothing of the failed item was written
  // Invalid text is reported as such even where it would not fit either.
  CHECK_THROWS_AS(w.packStr("0123456\xff"), EncoderError);
  CHECK_THROWS_AS(w.packUInt(UINT64_MAX), IndexOutOfBoundsError);
  w.packUInt(UINT32_MAX);  // exactly 5 bytes fit
  CHECK(out.readableBytes() == 8);
  CHECK_THROWS_AS(w.packNil(), IndexOutOfBoundsError);
  // A read-only output fails with its own error.
  ByteBuf ro = Unpooled::buffer().asReadOnly();
  MessagePackWriter rw(ro);
  CHECK_THROWS_AS(rw.packNil(), ReadOnlyBufferError);
}

TEST_CASE("MessagePackWriter: composite output shares a large payload and copies small ones") {
  constexpr std::size_t kBig = std::size_t{1} << 20;
  ByteBuf payload = ByteBufAllocator::defaultAllocator().buffer(kBig);
  for (std::size_t i = 0; i < kBig; ++i) payload.writeByte(static_cast<std::uint8_t>(i * 31 + 7));
  ByteBuf keep = payload.retainedDuplicate();  // to watch the payload's storage
  const std::byte* payloadBytes = payload.readPtr();
  CHECK(keep.refCnt() == 2);

  CompositeByteBuf composite;
  {
    MessagePackWriter w(composite);
    w.packArrayHeader(3).packStr("blob");
    w.packBin(std::move(payload));
    CHECK(w.bytesWritten() == 1 + 5 + 5 + kBig);
    w.packUInt(7);
    CHECK(w.bytesWritten() == 1 + 5 + 5 + kBig + 1);
  }                           // the destructor flushes the trailing byte
  CHECK(keep.refCnt() == 2);  // the composite holds the payload's storage, nothing copied it
  REQUIRE(composite.numComponents() == 3);
  ByteBuf part = composite.component(1);
  CHECK(part.readPtr() == payloadBytes);
  CHECK(part.readableBytes() == kBig);
  CHECK(composite.readableBytes() == 1 + 5 + 5 + kBig + 1);

  // The bytes equal what a plain ByteBuf writer produces.
  ByteBuf plain = Unpooled::buffer();
  {
    MessagePackWriter w(plain);
    w.packArrayHeader(3).packStr("blob").packBin(keep.readableSpan()).packUInt(7);
  }
  CHECK(composite.copy().readableStringView() == plain.readableStringView());

  // Below the threshold the payload is copied (its storage is released with the handle).
  ByteBuf small = Unpooled::copiedBuffer(std::string_view("small payload"));
  ByteBuf smallKeep = small.retainedDuplicate();
  CompositeByteBuf c2;
  {
    MessagePackWriter w(c2);
    w.packBin(std::move(small));
    w.flush();
    CHECK(w.bytesWritten() == 2 + 13);
  }
  CHECK(smallKeep.refCnt() == 1);
  CHECK(c2.numComponents() == 1);
  CHECK(toHex(c2.copy().readableSpan()) == "c40d" + toHex(asBytes("small payload")));
}

TEST_CASE("MessagePackWriter: composite output with several payloads and a custom threshold") {
  MessagePackWriteOptions o;
  o.zeroCopyThreshold = 8;
  CompositeByteBuf composite;
  std::string expected;
  std::vector<ByteBuf> keeps;
  {
    MessagePackWriter w(composite, o);
    for (int i = 0; i < 5; ++i) {
      const std::string body(static_cast<std::size_t>(8 + i), static_cast<char>('a' + i));
      ByteBuf p = Unpooled::copiedBuffer(std::string_view(body));
      keeps.push_back(p.retainedDuplicate());
      w.packUInt(static_cast<std::uint64_t>(i)).packBin(std::move(p));
      expected += bytesOf([&](MessagePackWriter& e) {
        e.packUInt(static_cast<std::uint64_t>(i)).packBin(asBytes(body));
      });
    }
    // Many small writes after the flushes, enough to outgrow the first scratch buffer.
    for (int i = 0; i < 300; ++i) w.packStr("tail");
    for (int i = 0; i < 300; ++i) expected += "\xa4tail";
    // An empty payload is never a component.
    w.packBin(ByteBuf());
    expected += std::string("\xc4\x00", 2);
    w.flush();
    CHECK(w.bytesWritten() == expected.size());
    w.flush();  // idempotent
    CHECK(w.bytesWritten() == expected.size());
  }
  for (const ByteBuf& k : keeps) CHECK(k.refCnt() == 2);  // every payload is a component
  CHECK(composite.copy().readableStringView() == expected);
}

TEST_CASE("MessagePackWriter: nesting deeper than maxDepth; cyclic trees fail cleanly") {
  Document doc;
  Value v = Value::nil();
  for (int i = 0; i < 5; ++i) v = doc.array({v});  // depth 5 (plus the nil inside)
  MessagePackWriteOptions o;
  o.maxDepth = 5;
  CHECK(hexOfValue(v, o) == "9191919191c0");
  o.maxDepth = 4;
  ByteBuf out = Unpooled::buffer();
  try {
    MessagePackWriter(out, o).pack(v);
    FAIL("expected EncoderError");
  } catch (const EncoderError& e) {
    CHECK(e.value() == 5);
    CHECK(e.limit() == 4);
  }
  // Maps count too.
  const Value m = doc.map({{doc.str("a"), doc.map({{doc.str("b"), Value::nil()}})}});
  o.maxDepth = 1;
  CHECK_THROWS_AS(MessagePackWriter(out, o).pack(m), EncoderError);
  o.canonical = true;
  CHECK_THROWS_AS(MessagePackWriter(out, o).pack(m), EncoderError);
  // A tree filled in place can be cyclic: the default limit stops the recursion.
  std::span<Value> slot = doc.allocateArray(1);
  const Value cyclic = Value::arrayView(slot);
  slot[0] = cyclic;
  ByteBuf out2 = Unpooled::buffer();
  CHECK_THROWS_AS(MessagePackWriter(out2).pack(cyclic), EncoderError);
}

TEST_CASE("msgpack::encode: both overloads") {
  Document doc;
  const Value v = doc.map({{doc.str("n"), Value::uinteger(3)}, {doc.str("a"), Value::nil()}});
  ByteBuf out = Unpooled::buffer();
  out.writeByte(0x55);
  msgpack::encode(v, out);
  CHECK(toHex(out.readableSpan()) == "5582a16e03a161c0");
  ByteBuf fresh = msgpack::encode(v, canonical());
  CHECK(toHex(fresh.readableSpan()) == "82a161c0a16e03");
  ByteBuf fromAlloc = msgpack::encode(v, {}, ByteBufAllocator::defaultAllocator());
  CHECK(toHex(fromAlloc.readableSpan()) == "82a16e03a161c0");
}

TEST_CASE("MessagePackWriter: packRaw and the small canonical benchmark document") {
  CHECK(hexOf([](MessagePackWriter& w) {
          w.packArrayHeader(2).packRaw(asBytes("\xa1x")).packRaw({});
          w.packNil();
        }) == "92a178c0");
  Document doc;
  const Value v = doc.map({{doc.str("z"), doc.str("z")},
                           {doc.str("a"), doc.str("a")},
                           {doc.str("c"), doc.array({doc.str("2"), doc.str("1")})}});
  CHECK(hexOfValue(v, canonical()) == "83a161a161a16392a132a131a17aa17a");
}
