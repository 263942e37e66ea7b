#include <netbuf/codec/json/json_writer.hpp>

#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/json_stream.hpp"

using namespace netbuf;

namespace {

std::string compact(const Value& v) { return json::toString(v); }
std::string canonical(const Value& v) { return json::toString(v, {.canonical = true}); }
std::string canonicalText(std::string_view text) {
  Document d = json::parse(text);
  return canonical(d.root());
}

std::string ecma(double d) {
  char buf[40];
  return std::string(buf, json::formatEcmaScript(d, buf));
}

template <class Fn>
EncoderError encoderErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const EncoderError& e) {
    return e;
  }
  FAIL("expected an EncoderError");
  return EncoderError("", 0);
}

}  // namespace

TEST_CASE("compact output of every JSON type") {
  Document d;
  d.setRoot(d.map(
      {{d.str("n"), Value::nil()},
       {d.str("b"), d.array({Value::boolean(true), Value::boolean(false)})},
       {d.str("i"),
        d.array({Value::integer(-5), Value::uinteger(UINT64_MAX), Value::integer(INT64_MIN)})},
       {d.str("f"), d.array({Value::float64(1.5), Value::float64(1.0), Value::float64(-0.0),
                             Value::float64(1e21), Value::float64(1e-7), Value::float32(0.1F)})},
       {d.str("s"), d.str("a\"b\\c/\b\f\n\r\t\x01\x1f\x7f\xC3\xA9")},
       {d.str("e"), d.array(std::span<const Value>{})},
       {d.str("o"), d.map(std::span<const Member>{})}}));
  CHECK(compact(d.root()) ==
        R"({"n":null,"b":[true,false],"i":[-5,18446744073709551615,-9223372036854775808],)"
        R"("f":[1.5,1.0,-0.0,1e+21,1e-07,0.1],"s":"a\"b\\c/\b\f\n\r\t\u0001\u001f)"
        "\x7f\xC3\xA9"
        R"(","e":[],"o":{}})");
  // Floats read back as floats with the same value.
  const std::string text = compact(d.root());  // (the parsed strings view it)
  Document back = json::parse(text);
  CHECK(back.root()["f"][1].type() == ValueType::Float64);
  CHECK(std::signbit(back.root()["f"][2].asDouble()));
  CHECK(back.root()["f"][3].asDouble() == 1e21);
}

TEST_CASE("pretty output") {
  Document d = json::parse(R"({"a":[1,{"b":null}],"c":{},"d":[]})");
  CHECK(json::toString(d.root(), {.pretty = true}) ==
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {},\n  \"d\": "
        "[]\n}");
  CHECK(json::toString(d.root(), {.pretty = true, .indent = 0}) ==
        "{\n\"a\": [\n1,\n{\n\"b\": null\n}\n],\n\"c\": {},\n\"d\": []\n}");
  CHECK(json::toString(Value::uinteger(1), {.pretty = true}) == "1");
}

TEST_CASE("escapeNonAscii writes ASCII only, with surrogate pairs above the BMP") {
  Document d;
  const Value s = d.str("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80x\n");
  CHECK(json::toString(s, {.escapeNonAscii = true}) == R"("\u00e9\u20ac\ud83d\ude00x\n")");
  // Long strings (the 16-byte path) and every position of a non-ASCII character.
  for (std::size_t at = 0; at < 40; ++at) {
    std::string text(40, 'a');
    text.replace(at, 1, "\xE2\x82\xAC");
    const Value v = d.str(text);
    const std::string out = json::toString(v, {.escapeNonAscii = true});
    CHECK(utf8::isAscii(reinterpret_cast<const std::byte*>(out.data()), out.size()));
    CHECK(json::parse(out).root().asStr() == text);
    CHECK(json::parse(compact(v)).root().asStr() == text);
  }
}

TEST_CASE("long strings round trip across reservation chunks") {
  std::mt19937 rng(7);
  std::string text;
  const char* pieces[] = {"a",
                          "\"",
                          "\\",
                          "\n",
                          "\x01",
                          "\xC3\xA9",
                          "\xE2\x82\xAC",
                          "\xF0\x9F\x98\x80",
                          "0123456789abcdef"};
  while (text.size() < 300000) text += pieces[rng() % 9];
  Document d;
  const Value v = d.str(text);
  for (const JsonWriteOptions& o : {JsonWriteOptions{}, JsonWriteOptions{.escapeNonAscii = true},
                                    JsonWriteOptions{.canonical = true}}) {
    CHECK(json::parse(json::toString(v, o)).root().asStr() == text);
  }
}

TEST_CASE("errors: what JSON cannot express") {
  Document d;
  auto fails = [](const Value& v, const JsonWriteOptions& o = {}) {
    return std::string(encoderErrorOf([&] { (void)json::toString(v, o); }).what());
  };
  CHECK(fails(Value::float64(std::nan(""))).find("NaN or Infinity") != std::string::npos);
  CHECK(fails(Value::float64(INFINITY)).find("Float64") != std::string::npos);
  CHECK(fails(Value::float32(-INFINITY)).find("Float32") != std::string::npos);
  CHECK(fails(d.strUnchecked("abc", true)).find("invalid UTF-8") != std::string::npos);
  CHECK(fails(Value::strView("ab\xFF")).find("ill-formed UTF-8 at byte 2") != std::string::npos);
  CHECK(fails(Value::strView("ab\xFF"), {.escapeNonAscii = true}).find("ill-formed") !=
        std::string::npos);
  CHECK(fails(d.map({{Value::uinteger(1), Value::nil()}})).find("map key of type UInt") !=
        std::string::npos);
  CHECK(fails(d.map({{Value::uinteger(1), Value::nil()}}), {.canonical = true})
            .find("map key of type UInt") != std::string::npos);
  const std::byte bytes[] = {std::byte{1}};
  CHECK(fails(d.bin(bytes)).find("Bin has no JSON form") != std::string::npos);
  CHECK(fails(d.ext(3, bytes)).find("Ext") != std::string::npos);
  CHECK(fails(Value::timestamp({1, 2})).find("Timestamp") != std::string::npos);
  CHECK(fails(d.map({{d.str("a"), Value::nil()}, {d.str("a"), Value::nil()}}), {.canonical = true})
            .find("duplicate key \"a\"") != std::string::npos);
  {  // a long duplicate is quoted up to 64 bytes, not cutting a character in two
    const std::string key = std::string(63, 'x') + "\xc3\xa9";
    CHECK(
        fails(d.map({{d.str(key), Value::nil()}, {d.str(key), Value::nil()}}), {.canonical = true})
            .find("duplicate key \"" + std::string(63, 'x') + "\" cannot") != std::string::npos);
  }
  // Duplicates sharing a long prefix, among the small maps' sort and among a large map's.
  for (const std::size_t n : {3, 40}) {
    std::vector<Member> members;
    for (std::size_t i = 0; i < n; ++i)
      members.push_back({d.str("common_prefix_" + std::to_string(i)), Value::nil()});
    members.push_back({d.str("common_prefix_1"), Value::nil()});
    CHECK(fails(d.map(members), {.canonical = true}).find("duplicate key \"common_prefix_1\"") !=
          std::string::npos);
  }
  // A large map with a key that is not a Str.
  {
    std::vector<Member> members;
    for (int i = 0; i < 40; ++i) members.push_back({d.str(std::to_string(i)), Value::nil()});
    members.push_back({Value::boolean(true), Value::nil()});
    CHECK(fails(d.map(members), {.canonical = true}).find("map key of type Bool") !=
          std::string::npos);
  }
  // Non-canonical output keeps duplicates.
  CHECK(compact(d.map({{d.str("a"), Value::nil()}, {d.str("a"), Value::nil()}})) ==
        R"({"a":null,"a":null})");
  // Depth.
  Value v = d.array(std::span<const Value>{});
  for (int i = 0; i < 10; ++i) v = d.array({v});
  const EncoderError e = encoderErrorOf([&] { (void)json::toString(v, {.maxDepth = 10}); });
  CHECK(e.value() == 11);
  CHECK(e.limit() == 10);
  CHECK(json::toString(v, {.maxDepth = 11}).size() == 22);
  // On error, out is left as it was.
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(16);
  out.writeBytes(std::string_view("keep"));
  CHECK_THROWS_AS(json::write(d.array({d.str(std::string(1000, 'x')), Value::float64(NAN)}), out),
                  EncoderError);
  CHECK(out.readableStringView() == "keep");
  json::write(Value::uinteger(7), out);
  CHECK(out.readableStringView() == "keep7");
}

TEST_CASE("extendedTypes: tagged objects that the parser reads back") {
  Document d;
  const std::byte bytes[] = {std::byte{0}, std::byte{1}, std::byte{2}, std::byte{0xFF}};
  d.setRoot(d.array({d.bin(bytes), d.bin(std::span<const std::byte>{}),
                     d.ext(5, std::span(bytes, 2)), d.ext(-128, std::span(bytes, 1)),
                     Value::timestamp({-1, 999999999}), Value::timestamp({INT64_MAX, 0})}));
  const std::string out = json::toString(d.root(), {.extendedTypes = true});
  CHECK(out == R"([{"$bin":"AAEC/w=="},{"$bin":""},{"$ext":[5,"AAE="]},{"$ext":[-128,"AA=="]},)"
               R"({"$timestamp":[-1,999999999]},{"$timestamp":[9223372036854775807,0]}])");
  CHECK(json::toString(d.root(), {.canonical = true, .extendedTypes = true}) == out);
  Document back = json::parse(out, {.extendedTypes = true});
  CHECK(back.root() == d.root());
  CHECK(json::toString(d.root()[0], {.pretty = true, .extendedTypes = true}) ==
        R"({"$bin": "AAEC/w=="})");
}

TEST_CASE("JsonWriter holds options") {
  JsonWriter w({.canonical = true});
  Document d = json::parse(R"({"b":1,"a":2})");
  CHECK(w.toString(d.root()) == R"({"a":2,"b":1})");
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(4);
  w.write(d.root(), out);
  CHECK(out.readableStringView() == R"({"a":2,"b":1})");
}

// ---------------------------------------------------------------- RFC 8785
TEST_CASE("RFC 8785 appendix B: number serialisation") {
  struct Row {
    std::uint64_t bits;
    const char* text;
  };
  const Row rows[] = {
      {0x0000000000000000, "0"},
      {0x8000000000000000, "0"},
      {0x0000000000000001, "5e-324"},
      {0x8000000000000001, "-5e-324"},
      {0x7fefffffffffffff, "1.7976931348623157e+308"},
      {0xffefffffffffffff, "-1.7976931348623157e+308"},
      {0x4340000000000000, "9007199254740992"},
      {0xc340000000000000, "-9007199254740992"},
      {0x4430000000000000, "295147905179352830000"},
      {0x44b52d02c7e14af5, "9.999999999999997e+22"},
      {0x44b52d02c7e14af6, "1e+23"},
      {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
      {0x444b1ae4d6e2ef4e, "999999999999999700000"},
      {0x444b1ae4d6e2ef4f, "999999999999999900000"},
      {0x444b1ae4d6e2ef50, "1e+21"},
      {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
      {0x3eb0c6f7a0b5ed8d, "0.000001"},
      {0x41b3de4355555553, "333333333.3333332"},
      {0x41b3de4355555554, "333333333.33333325"},
      {0x41b3de4355555555, "333333333.3333333"},
      {0x41b3de4355555556, "333333333.3333334"},
      {0x41b3de4355555557, "333333333.33333343"},
      {0xbecbf647612f3696, "-0.0000033333333333333333"},
      {0x43143ff3c1cb0959, "1424953923781206.2"},
      {0x4415af1d78b58c40, "100000000000000000000"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    const double d = std::bit_cast<double>(r.bits);
    CHECK(ecma(d) == r.text);
    CHECK(canonical(Value::float64(d)) == r.text);
  }
  CHECK(ecma(4.5) == "4.5");
  CHECK(ecma(0.002) == "0.002");
  CHECK(ecma(1e30) == "1e+30");
  CHECK(ecma(1e-7) == "1e-7");
  CHECK(ecma(123e-20) == "1.23e-18");
  CHECK(ecma(1.5e300) == "1.5e+300");
  CHECK(ecma(-12.0) == "-12");
  // NaN and infinities are errors (RFC 8785 3.2.2.3).
  CHECK_THROWS_AS((void)canonical(Value::float64(NAN)), EncoderError);
  CHECK_THROWS_AS((void)canonical(Value::float64(-INFINITY)), EncoderError);
}

TEST_CASE("canonical integers: exact up to 2^53, the double they round to beyond") {
  CHECK(canonical(Value::uinteger(9007199254740992ULL)) == "9007199254740992");
  CHECK(canonical(Value::uinteger(9007199254740993ULL)) == "9007199254740992");
  CHECK(canonical(Value::integer(-9007199254740993LL)) == "-9007199254740992");
  CHECK(canonical(Value::uinteger(UINT64_MAX)) == "18446744073709552000");
  CHECK(canonical(Value::integer(INT64_MIN)) == "-9223372036854776000");
  CHECK(canonical(Value::uinteger(1000000000000000000ULL)) == "1000000000000000000");
  CHECK(canonical(Value::float32(0.1F)) == "0.10000000149011612");
  CHECK(canonical(Value::float64(-0.0)) == "0");
}

TEST_CASE("RFC 8785 3.2.3: member sorting by UTF-16 code units") {
  const std::string in =
      R"({"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",)"
      R"("1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control",)"
      R"("\u00f6":"Latin Small Letter O With Diaeresis"})";
  CHECK(canonicalText(in) ==
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xC2\x80\":\"Control\",\"\xC3\xB6\":\"Latin "
        "Small Letter O With Diaeresis\",\"\xE2\x82\xAC\":\"Euro Sign\",\"\xF0\x9F\x98\x80\":"
        "\"Emoji: Grinning Face\",\"\xEF\xAC\xB3\":\"Hebrew Letter Dalet With Dagesh\"}");
}

TEST_CASE("RFC 8785 3.2.2 / 3.2.4: the main example") {
  const std::string in = R"({
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
})";
  CHECK(canonicalText(in) ==
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
        "\"string\":\"\xE2\x82\xAC$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
}

TEST_CASE("canonical: same bytes whatever the insertion order; matches UTF-16 order") {
  std::mt19937 rng(12345);
  // Short tokens so that keys often share their first 8 bytes or differ only past them (the
  // writer compares 8-byte prefixes first), NUL (a key "a" against "a\0"), and characters on both
  // sides of the UTF-16 / code point order difference.
  const std::string_view alphabet[] = {"a",
                                       "b",
                                       std::string_view("\0", 1),
                                       "\x7F",
                                       "\xC2\x80",
                                       "\xE2\x82\xAC",
                                       "\xEF\xAC\xB3",
                                       "\xEE\x80\x80",
                                       "\xF0\x9F\x98\x80",
                                       "\xF0\x90\x80\x80",
                                       "\xF4\x8F\xBF\xBF",
                                       "Z"};
  constexpr std::size_t kTokens = std::size(alphabet);
  for (int round = 0; round < 400; ++round) {
    std::vector<std::string> keys;
    const std::size_t n = 1 + rng() % 50;  // both the insertion sort and std::sort paths
    // Half the rounds: ASCII-heavy keys of up to 12 bytes with a common start.
    const bool longKeys = round % 2 == 1;
    while (keys.size() < n) {
      std::string k;
      const std::size_t len = longKeys ? rng() % 13 : rng() % 4;
      for (std::size_t i = 0; i < len; ++i) {
        if (longKeys && i < 6 && rng() % 4 != 0) {
          k += 'k';
        } else {
          k += alphabet[rng() % (longKeys ? 4 : kTokens)];
        }
      }
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    Document d;
    std::vector<Member> members;
    for (std::size_t i = 0; i < keys.size(); ++i)
      members.push_back({d.str(keys[i]), Value::uinteger(i)});
    const std::string first = canonical(d.map(members));
    std::shuffle(members.begin(), members.end(), rng);
    CHECK(canonical(d.map(members)) == first);
    const Value sorted = d.sortedMap(members);  // the same members kept in key order
    CHECK(sorted.hasCanonicalOrder());
    CHECK(canonical(sorted) == first);
    // Reference order: the keys as UTF-16.
    auto u16 = [](const std::string& s) {
      std::u16string u(s.size(), u'\0');
      u.resize(utf8::utf8ToUtf16(s, u.data()));
      return u;
    };
    std::sort(members.begin(), members.end(), [&](const Member& a, const Member& b) {
      return u16(std::string(a.key.asStr())) < u16(std::string(b.key.asStr()));
    });
    std::string expected = "{";
    for (const Member& m : members) {
      if (expected.size() > 1) expected += ',';
      expected += compact(m.key) + ":" + compact(m.value);
    }
    expected += "}";
    CHECK(first == expected);
    // Members in the reference order: Document::map notes it (its check against the reference,
    // not against compareUtf16) and the writer takes them as they are.
    const Value inOrder = d.map(members);
    CHECK(inOrder.hasCanonicalOrder());
    CHECK(canonical(inOrder) == expected);
    if (members.size() > 1) {
      std::swap(members.front(), members.back());
      CHECK_FALSE(d.map(members).hasCanonicalOrder());
    }
  }
}

TEST_CASE("number formatting: seeded random doubles read back identically") {
  const unsigned seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200000; ++i) {
    const double d = std::bit_cast<double>(rng());
    if (!std::isfinite(d)) continue;
    const Value v = Value::float64(d);
    for (bool canon : {false, true}) {
      const std::string text = json::toString(v, {.canonical = canon});
      Document back = json::parse(text);
      const double r = back.root().asDouble();
      if (r != d || (d == 0 && std::signbit(r) != (std::signbit(d) && !canon))) {
        CAPTURE(text);
        CAPTURE(d);
        FAIL("round trip changed the double");
      }
    }
  }
  // Integers near and beyond 2^53 in canonical form read back as the double they round to.
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t u = rng() >> (rng() % 64);
    const std::string text = canonical(Value::uinteger(u));
    CHECK(json::parse(text).root().asDouble() == static_cast<double>(u));
  }
}

TEST_CASE("strings inside containers are written as a top-level string is, in every mode") {
  // Array elements and map keys/values take the containers' fused paths (separator, quotes and a
  // short plain string written together); the top-level string goes through the general one.
  // Both must give the same text for every length around the short-string limits and for every
  // kind of byte that needs more than a copy.
  const std::vector<std::size_t> lengths = {0, 1, 2, 3, 4, 5, 7, 8, 9, 14, 15, 16, 17, 31, 40};
  const std::vector<std::string> specials = {
      "", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x88\x8f", "\xf0\x9f\x98\x80"};
  const std::vector<JsonWriteOptions> modes = {
      {}, {.escapeNonAscii = true}, {.canonical = true}, {.pretty = true}};
  int checked = 0;
  for (std::size_t n : lengths) {
    for (const std::string& special : specials) {
      for (std::size_t at : {std::size_t{0}, n / 2, n}) {
        std::string s(n, 'k');
        if (!special.empty()) s.insert(std::min(at, s.size()), special);
        for (const JsonWriteOptions& o : modes) {
          const Value str = Value::strView(s);
          const std::string one = json::toString(str, o);
          Document d;
          const Value other = Value::strView("zz");
          const std::string sep = o.pretty ? "\n" : "";
          // [s, s]
          std::string arr = json::toString(d.array({str, str}), o);
          if (o.pretty) {
            CHECK(arr == "[\n  " + one + ",\n  " + one + "\n]");
          } else {
            CHECK(arr == "[" + one + "," + one + "]");
          }
          // {s: s, "zz": s}: canonical order puts "zz" wherever it sorts
          const std::string map = json::toString(d.map({{str, str}, {other, str}}), o);
          const std::string kv = one + (o.pretty ? ": " : ":") + one;
          const std::string zz = std::string("\"zz\"") + (o.pretty ? ": " : ":") + one;
          const bool zzFirst = o.canonical && s > "zz";  // ASCII-or-UTF-8 order = UTF-16 here
          if (o.pretty) {
            CHECK(map == "{\n  " + kv + ",\n  " + zz + "\n}");
          } else if (zzFirst) {
            CHECK(map == "{" + zz + "," + kv + "}");
          } else {
            CHECK(map == "{" + kv + "," + zz + "}");
          }
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 15 * 10 * 3 * 4);

  // A string flagged as invalid UTF-8 is refused wherever it sits.
  const Value bad = Value::strView("ab", true);
  Document d;
  for (const JsonWriteOptions& o : modes) {
    CHECK_THROWS_AS(json::toString(d.array({bad}), o), EncoderError);
    CHECK_THROWS_AS(json::toString(d.array({Value::integer(1), bad}), o), EncoderError);
    CHECK_THROWS_AS(json::toString(d.map({{bad, Value::nil()}}), o), EncoderError);
    CHECK_THROWS_AS(json::toString(d.map({{Value::strView("k"), bad}}), o), EncoderError);
  }
}

namespace {

/// Random trees: strings of every short length with and without bytes to escape or non-ASCII,
/// integers around 2^53 and the 64-bit edges, nesting beyond 15 levels; map keys unique and in
/// RFC 8785 order (so that canonical stream output, which keeps call order, can be compared).
struct TreeGen {
  std::mt19937_64 rng;
  Document& doc;
  std::string text() {
    static const char* const pieces[] = {
        "a",  "Z",    "7",    " ",        "\"",           "\\",
        "\n", "\x01", "\x7f", "\xc3\xa9", "\xe2\x88\x8f", "\xf0\x9f\x98\x80"};
    const std::size_t n = rng() % 20;
    std::string s;
    const bool plain = rng() % 3 != 0;
    for (std::size_t i = 0; i < n; ++i) s += plain ? pieces[rng() % 3] : pieces[rng() % 12];
    return s;
  }
  Value scalar() {
    switch (rng() % 8) {
      case 0:
        return Value::nil();
      case 1:
        return Value::boolean(rng() % 2 == 0);
      case 2:
        return Value::integer(static_cast<std::int64_t>(rng() % 2000) - 1000);
      case 3: {
        const std::int64_t edges[] = {INT64_MIN, INT64_MAX, (std::int64_t{1} << 53),
                                      (std::int64_t{1} << 53) + 1, -(std::int64_t{1} << 53) - 1};
        return Value::integer(edges[rng() % 5]);
      }
      case 4:
        return Value::uinteger(rng() % 2 == 0 ? UINT64_MAX : (std::uint64_t{1} << 53) + 2);
      case 5:
        return Value::float64(static_cast<double>(rng() % 100000) / 64.0);
      default:
        return doc.str(text());
    }
  }
  Value tree(int depth) {
    if (depth > 20 || rng() % 4 == 0) return scalar();
    const std::size_t n = rng() % 5;
    if (rng() % 2 == 0) {
      std::vector<Value> elems;
      for (std::size_t i = 0; i < n; ++i) elems.push_back(tree(depth + 1));
      return doc.array(elems);
    }
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < n; ++i) keys.push_back(text() + std::to_string(i));
    std::sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
      return json::compareUtf16(a, b) < 0;
    });
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::vector<Member> members;
    for (const std::string& k : keys) members.push_back({doc.str(k), tree(depth + 1)});
    return doc.map(members);
  }
};

}  // namespace

TEST_CASE("short strings that end a readable page: written right, no read past the page") {
  // The writer copies a short string with one 16-byte load when the 16 bytes lie in the string's
  // page. Here every short string ends exactly where the next page is unmapped (PROT_NONE), so a
  // load past the page would crash this test.
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* mem = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  char* const end = static_cast<char*>(mem) + page;
  REQUIRE(mprotect(end, page, PROT_NONE) == 0);
  const std::string text = "abcdefghijklmno\"";  // the last byte needs escaping
  for (std::size_t n = 0; n < 16; ++n) {
    for (const bool plain : {true, false}) {
      std::string s = text.substr(0, n);
      if (!plain && n > 0) s.back() = '"';
      std::memcpy(end - n, s.data(), n);
      const Value unhinted = Value::strView(std::string_view(end - n, n));
      // The plain-ASCII hint takes a copy without the check: the same 16-byte load.
      const Value v = plain ? detail::ValueHints::plainAscii(unhinted) : unhinted;
      std::string quoted = "\"";
      for (const char c : s) {
        if (c == '"') quoted += '\\';
        quoted += c;
      }
      quoted += '"';
      INFO("n = " << n << ", plain = " << plain);
      Document d;
      CHECK(compact(v) == quoted);
      CHECK(compact(d.array({v, v})) == "[" + quoted + "," + quoted + "]");
      CHECK(canonical(d.map({{v, v}})) == "{" + quoted + ":" + quoted + "}");
    }
  }
  munmap(mem, 2 * page);
}

namespace {

/// v rebuilt from the public views only, so without the hints Document and the parser set
/// (Value::isPlainAscii, hasCanonicalOrder); the stripper owns the new arrays and maps.
struct HintStripper {
  std::vector<std::unique_ptr<Value[]>> arrays;
  std::vector<std::unique_ptr<Member[]>> maps;
  Value strip(const Value& v) {
    switch (v.type()) {
      case ValueType::Str:
        return Value::strView(v.asStr(), v.hasInvalidUtf8());
      case ValueType::Array: {
        const auto elems = v.asArray();
        arrays.push_back(std::make_unique<Value[]>(elems.size()));
        Value* out = arrays.back().get();  // (strip pushes more arrays)
        for (std::size_t i = 0; i < elems.size(); ++i) out[i] = strip(elems[i]);
        return Value::arrayView({out, elems.size()});
      }
      case ValueType::Map: {
        const auto ms = v.asMap();
        maps.push_back(std::make_unique<Member[]>(ms.size()));
        Member* out = maps.back().get();
        for (std::size_t i = 0; i < ms.size(); ++i) out[i] = {strip(ms[i].key), strip(ms[i].value)};
        return Value::mapView({out, ms.size()});
      }
      default:
        return v;
    }
  }
};

/// The number of hints in v: {plain-ASCII strings, maps in canonical order}.
std::pair<int, int> hints(const Value& v) {
  std::pair<int, int> n{v.isPlainAscii() ? 1 : 0, v.hasCanonicalOrder() ? 1 : 0};
  auto add = [&](const Value& c) {
    const auto [s, m] = hints(c);
    n.first += s;
    n.second += m;
  };
  if (v.isArray()) {
    for (const Value& e : v.asArray()) add(e);
  }
  if (v.isMap()) {
    for (const Member& m : v.asMap()) {
      add(m.key);
      add(m.value);
    }
  }
  return n;
}

}  // namespace

TEST_CASE("hints change no output: a tree and its copy without hints write the same, every mode") {
  const std::uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  Document doc;
  TreeGen gen{std::mt19937_64(seed), doc};
  std::mt19937_64 rng(seed);
  const std::vector<JsonWriteOptions> modes = {
      {}, {.pretty = true}, {.escapeNonAscii = true}, {.canonical = true}};
  std::pair<int, int> seen{0, 0};
  for (int round = 0; round < 400; ++round) {
    Value v = gen.tree(0);
    if (round % 4 == 0) {
      // Also maps whose members are not in key order, sorted by sortedMap or left as they are
      // (those are sorted by the writer in canonical mode).
      std::vector<Member> members;
      for (int i = 0; i < 6; ++i)
        members.push_back({doc.str(gen.text() + std::to_string(i)), gen.tree(1)});
      std::shuffle(members.begin(), members.end(), rng);
      v = doc.array({doc.map(members), doc.sortedMap(members), v});
    }
    HintStripper stripper;
    const Value bare = stripper.strip(v);
    CHECK(hints(bare) == std::pair<int, int>{0, 0});
    const auto [strs, maps] = hints(v);
    seen.first += strs;
    seen.second += maps;
    CHECK(bare == v);
    for (const JsonWriteOptions& o : modes) {
      std::string withHints, without;
      try {
        withHints = json::toString(v, o);
      } catch (const EncoderError& e) {
        withHints = std::string("error: ") + e.what();
      }
      try {
        without = json::toString(bare, o);
      } catch (const EncoderError& e) {
        without = std::string("error: ") + e.what();
      }
      CHECK(withHints == without);
    }
  }
  // The hints were there to be tested (each kind in most rounds).
  CHECK(seen.first > 400);
  CHECK(seen.second > 400);
}

TEST_CASE("JsonStreamWriter writes what json::write writes, randomised, in every mode") {
  const std::uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  Document doc;
  TreeGen gen{std::mt19937_64(seed), doc};
  const std::vector<JsonWriteOptions> modes = {
      {}, {.pretty = true}, {.escapeNonAscii = true}, {.canonical = true}, {.maxDepth = 8}};
  for (int round = 0; round < 400; ++round) {
    const Value v = gen.tree(0);
    for (const JsonWriteOptions& o : modes) {
      std::string expected;
      bool expectError = false;
      try {
        expected = json::toString(v, o);
      } catch (const EncoderError&) {
        expectError = true;  // maxDepth exceeded
      }
      ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(8);  // small: growth on the way
      JsonStreamWriter w(buf, o);
      if (expectError) {
        CHECK_THROWS_AS((void)test::streamJson(w, v), EncoderError);
        continue;
      }
      CHECK(test::streamJson(w, v));
      CHECK(w.done());
      CHECK(w.depth() == 0);
      CHECK(buf.readableStringView() == expected);
    }
  }
}

TEST_CASE("JsonStreamWriter: misuse is caught on the inline paths too") {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(64);
  JsonStreamWriter w(buf);
  w.value("top");  // a top-level string (inline path)
  CHECK(w.done());
  CHECK_THROWS_AS(w.value("again"), EncoderError);  // a second top-level value
  CHECK_THROWS_AS(w.valueInt(1), EncoderError);
  CHECK_THROWS_AS(w.beginArray(), EncoderError);
  CHECK(buf.readableStringView() == "\"top\"");

  ByteBuf b2 = ByteBufAllocator::defaultAllocator().buffer(64);
  JsonStreamWriter o(b2);
  o.beginObject();
  CHECK_THROWS_AS(o.value("no key"), EncoderError);
  CHECK_THROWS_AS(o.endArray(), EncoderError);
  o.key("k");
  CHECK_THROWS_AS(o.key("k2"), EncoderError);
  CHECK_THROWS_AS(o.endObject(), EncoderError);  // a key without its value
  o.value("v");
  CHECK_THROWS_AS(o.value("v2"), EncoderError);  // a second value for one key
  o.endObject();
  CHECK(b2.readableStringView() == R"({"k":"v"})");

  ByteBuf b3 = ByteBufAllocator::defaultAllocator().buffer(64);
  JsonStreamWriter a(b3);
  a.beginArray();
  CHECK_THROWS_AS(a.key("k"), EncoderError);  // a key in an array
  CHECK_THROWS_AS(a.endObject(), EncoderError);
  a.valueInt(-5);
  a.valueUInt(7);
  a.endArray();
  CHECK(b3.readableStringView() == "[-5,7]");
}

TEST_CASE(
    "JsonStreamWriter: text is published when the value is complete, at commit() and at "
    "destruction") {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(256);
  buf.writeByte(static_cast<std::int8_t>('x'));
  {
    JsonStreamWriter w(buf);
    w.beginObject();
    w.key("k");
    w.value("v");
    CHECK(buf.readableStringView() == "x");  // written into the room, not yet published
    w.commit();
    CHECK(buf.readableStringView() == R"(x{"k":"v")");
    w.key("n");
    w.beginArray();
    w.value(true);
    w.null();
    w.value(false);
    w.endArray();
    CHECK(buf.readableStringView() == R"(x{"k":"v")");
    w.endObject();  // the top-level value is complete: published without commit()
    CHECK(buf.readableStringView() == R"(x{"k":"v","n":[true,null,false]})");
  }
  // A top-level scalar is published at once; an unfinished value at the writer's destruction.
  ByteBuf b2 = ByteBufAllocator::defaultAllocator().buffer(64);
  {
    JsonStreamWriter w(b2);
    w.valueInt(-12);
    CHECK(b2.readableStringView() == "-12");
  }
  ByteBuf b3 = ByteBufAllocator::defaultAllocator().buffer(64);
  {
    JsonStreamWriter w(b3);
    w.beginArray();
    w.valueUInt(1);
    CHECK(b3.readableBytes() == 0);
  }
  CHECK(b3.readableStringView() == "[1");
}

TEST_CASE("JsonStreamWriter: containers deeper than the inline state, every mode") {
  // 100 levels (the writer keeps 32 inline, the rest on the heap), alternating objects and arrays,
  // each holding a value before the next level and one after it.
  Document d;
  Value v = d.str("leaf");
  for (int level = 99; level >= 0; --level) {
    if (level % 2 == 0) {
      v = d.map({{d.str("a"), Value::integer(level)},
                 {d.str("b"), v},
                 {d.str("c"), Value::boolean(true)}});
    } else {
      v = d.array({Value::nil(), v, d.str("after")});
    }
  }
  for (const JsonWriteOptions& o :
       {JsonWriteOptions{}, JsonWriteOptions{.pretty = true},
        JsonWriteOptions{.escapeNonAscii = true}, JsonWriteOptions{.canonical = true}}) {
    ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(8);
    JsonStreamWriter w(buf, o);
    std::size_t deepest = 0;
    CHECK(test::streamJson(w, v, [&] { deepest = std::max(deepest, w.depth()); }));
    CHECK(deepest == 100);
    CHECK(w.depth() == 0);
    CHECK(w.done());
    CHECK(buf.readableStringView() == json::toString(v, o));
  }
  // maxDepth beyond the inline levels: the 51st container is refused, compact and pretty.
  for (const bool pretty : {false, true}) {
    ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(8);
    JsonStreamWriter w(buf, {.pretty = pretty, .maxDepth = 50});
    for (int i = 0; i < 50; ++i) w.beginArray();
    CHECK(w.depth() == 50);
    const EncoderError e = encoderErrorOf([&] { w.beginArray(); });
    CHECK(e.value() == 51);
    CHECK(e.limit() == 50);
    CHECK(w.depth() == 50);
  }
}

TEST_CASE("JsonStreamWriter: a misuse after the buffer grew leaves the writer usable") {
  // value() without a key in a nearly full buffer: the general code grows (moves) the buffer's
  // memory before it finds the misuse. The writer must not keep writing to the old memory.
  // The old memory has room left for the next calls, so a stale cursor would write there.
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(32);
  JsonStreamWriter w(buf);
  w.beginObject();
  const std::string longValue(40, 'v');
  CHECK_THROWS_AS(w.value(longValue), EncoderError);
  CHECK(buf.readableStringView() == "{");
  CHECK(buf.capacity() > 32);
  w.key("k");
  w.value("v");
  w.key("long");
  w.value(longValue);
  w.endObject();
  CHECK(buf.readableStringView() == "{\"k\":\"v\",\"long\":\"" + longValue + "\"}");

  // A NaN (the general code throws after writing the separator): the container state is kept.
  ByteBuf b2 = ByteBufAllocator::defaultAllocator().buffer(4);
  JsonStreamWriter a(b2);
  a.beginArray();
  a.valueInt(1);
  CHECK_THROWS_AS(a.value(std::nan("")), EncoderError);
  CHECK(b2.readableStringView() == "[1");
  a.valueInt(2);
  a.endArray();
  CHECK(b2.readableStringView() == "[1,2]");
}

TEST_CASE("JsonStreamWriter: a buffer that cannot be written fails on the first call") {
  ByteBuf base = ByteBufAllocator::defaultAllocator().buffer(64);
  ByteBuf ro = base.asReadOnly();
  JsonStreamWriter w(ro);  // constructing does not throw
  CHECK_THROWS_AS(w.beginObject(), ReadOnlyBufferError);
  CHECK_THROWS_AS(w.value("x"), ReadOnlyBufferError);
  CHECK(ro.readableBytes() == 0);

  // A buffer that cannot grow: IndexOutOfBoundsError; what the inline paths wrote before is
  // published.
  ByteBuf full = ByteBufAllocator::defaultAllocator().buffer(16, 16);
  JsonStreamWriter f(full);
  f.beginArray();
  CHECK_THROWS_AS(f.value(std::string(40, 'x')), IndexOutOfBoundsError);
  CHECK(full.readableStringView() == "[");
}
