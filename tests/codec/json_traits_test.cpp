#include <netbuf/codec/json/json_traits.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

using namespace netbuf;

namespace testns {
struct Address {
  std::string city;
  std::uint32_t zip = 0;
  bool operator==(const Address&) const = default;
};
struct User {
  std::string name;
  std::int32_t age = 0;
  double score = 0;
  bool admin = false;
  std::vector<std::string> tags;
  std::map<std::string, std::int64_t> counters;
  std::optional<Address> home;
  std::vector<Address> past;
  std::optional<std::string> email;
  bool operator==(const User&) const = default;
};
struct Small {
  std::string a;
  std::vector<std::string> c;
  std::string z;
};
// Field names around the 16-byte key literal (13 characters fit with quotes and colon, 14 do
// not), listed out of order.
struct Names {
  int thirteenChars = 1;   // 13
  int fourteenChars_ = 2;  // 14
  int b = 3;
  std::string a_ = "x";
  bool operator==(const Names&) const = default;
};
}  // namespace testns

NETBUF_JSON_FIELDS(testns::Address, city, zip)
NETBUF_JSON_FIELDS(testns::User, name, age, score, admin, tags, counters, home, past, email)
NETBUF_JSON_FIELDS(testns::Small, a, c, z)
NETBUF_JSON_FIELDS(testns::Names, thirteenChars, fourteenChars_, b, a_)

// A recursive type (the traits chain writeValue -> vector -> struct -> writeValue must not be a
// cycle of forced-inline functions, which would not compile), and a type named like a template
// parameter of the field machinery (Names), written unqualified.
struct Tree {
  std::string name;
  std::vector<Tree> kids;
  std::optional<std::vector<Tree>> more;
  bool operator==(const Tree&) const = default;
};
NETBUF_JSON_FIELDS(Tree, name, kids, more)
struct Names {
  int z = 1;
  int y = 2;
};
NETBUF_JSON_FIELDS(Names, z, y)

// NETBUF_JSON_FIELDS's compile-time tables.
namespace {
using detail::canonicalOrder;
using detail::fieldKeys;
constexpr std::array<std::string_view, 4> kOrderNames{"b", "\xEE\x80\x80" /* U+E000 */,
                                                      "\xF0\x9F\x98\x80" /* U+1F600 */, "a"};
// UTF-16 order: "a" < "b" < U+1F600 (a surrogate pair, D83D) < U+E000.
static_assert(canonicalOrder(kOrderNames) == std::array<std::size_t, 4>{3, 0, 2, 1});
static_assert(canonicalOrder(std::array<std::string_view, 1>{"x"}) ==
              std::array<std::size_t, 1>{0});
constexpr auto kKeys = fieldKeys(std::array<std::string_view, 5>{
    "id", "thirteenChars", "fourteenChars_", "caf\xC3\xA9", "a\"b"});
static_assert(kKeys[0].size == 5 &&
              std::string_view(kKeys[0].quoted, 6) == std::string_view("\"id\":\0", 6));
static_assert(kKeys[1].size == 16);
static_assert(kKeys[2].size == 0);  // does not fit: written by key()
static_assert(kKeys[3].size == 0);  // non-ASCII: escaped in escapeNonAscii mode, so key()
static_assert(kKeys[4].size == 0);  // needs an escape
static_assert(detail::hasDuplicates(std::array<std::string_view, 3>{"a", "b", "a"}));
static_assert(!detail::hasDuplicates(std::array<std::string_view, 2>{"a", "b"}));
}  // namespace

namespace {

testns::User sampleUser() {
  testns::User u;
  u.name = "ada \"the\" first\n";
  u.age = -36;
  u.score = 2.5;
  u.admin = true;
  u.tags = {"x", "caf\xC3\xA9"};
  u.counters = {{"b", 2}, {"a", -1}};
  u.home = testns::Address{"Paris", 75001};
  u.past = {{"Lyon", 69000}, {"Nice", 6000}};
  return u;
}

template <class Fn>
JsonError jsonErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const JsonError& e) {
    return e;
  }
  FAIL("expected a JsonError");
  return JsonError(JsonErrorCode::Syntax, "", 0, 0, 0);
}

}  // namespace

TEST_CASE("a struct with nested structs, vectors, maps and optionals: exact bytes, round trip") {
  const testns::User u = sampleUser();
  const std::string text = json::serializeToString(u);
  CHECK(text ==
        R"({"name":"ada \"the\" first\n","age":-36,"score":2.5,"admin":true,"tags":["x","caf)"
        "\xC3\xA9"
        R"("],"counters":{"a":-1,"b":2},"home":{"city":"Paris","zip":75001},)"
        R"("past":[{"city":"Lyon","zip":69000},{"city":"Nice","zip":6000}],"email":null})");
  CHECK(json::deserialize<testns::User>(text) == u);
  // The typed output equals json::write of the equivalent tree (compact and pretty).
  Document d = json::parse(text);
  CHECK(json::toString(d.root()) == text);
  CHECK(json::serializeToString(u, {.pretty = true}) == json::toString(d.root(), {.pretty = true}));
  // Keys in another order, whitespace, unknown keys (of every shape) skipped, missing keys kept.
  const auto v = json::deserialize<testns::User>(
      R"( { "extra" : {"deep":[1,{"x":null},"s\u00e9"]}, "age" : 7 , "zz":[], "name":"n",)"
      R"("home":null, "more": -1.5e3 } )");
  CHECK(v.age == 7);
  CHECK(v.name == "n");
  CHECK(!v.home);
  CHECK(v.tags.empty());
  // A repeated key: the last wins.
  CHECK(json::deserialize<testns::User>(R"({"age":1,"age":2})").age == 2);
}

TEST_CASE("small hash as a struct: sorted fields give the canonical bytes") {
  const testns::Small s{"a", {"2", "1"}, "z"};
  CHECK(json::serializeToString(s, {.canonical = true}) == R"({"a":"a","c":["2","1"],"z":"z"})");
  Document d = json::parse(R"({"z":"z","a":"a","c":["2","1"]})");
  CHECK(json::toString(d.root(), {.canonical = true}) == json::serializeToString(s));
}

TEST_CASE("canonical mode: maps and out-of-order fields come out in RFC 8785 order") {
  // The User struct lists its fields unsorted; canonical output must equal the canonical tree.
  const testns::User u = sampleUser();
  const std::string plain = json::serializeToString(u);
  const std::string canon = json::serializeToString(u, {.canonical = true});
  Document d = json::parse(plain);
  CHECK(canon == json::toString(d.root(), {.canonical = true}));
  CHECK(canon.rfind(R"({"admin":true,"age":-36,"counters":{"a":-1,"b":2},"email":null,)", 0) == 0);
  CHECK(json::deserialize<testns::User>(canon) == u);

  // std::map's byte order is not RFC 8785's: U+1F600 (UTF-16 D83D DE00) sorts before U+E000,
  // though its UTF-8 lead byte F0 is above EE.
  const std::string pua = "\xEE\x80\x80";        // U+E000
  const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600
  const std::map<std::string, int> m = {{pua, 1}, {emoji, 2}, {"a", 3}};
  CHECK(json::serializeToString(m) == "{\"a\":3,\"" + pua + "\":1,\"" + emoji + "\":2}");
  CHECK(json::serializeToString(m, {.canonical = true}) ==
        "{\"a\":3,\"" + emoji + "\":2,\"" + pua + "\":1}");
  CHECK(json::compareUtf16(emoji, pua) < 0);
  CHECK(json::compareUtf16(pua, emoji) > 0);
  CHECK(json::compareUtf16("a", "a") == 0);
  CHECK(json::compareUtf16("a", "ab") < 0);

  // unordered_map: whatever its iteration order, canonical output is sorted.
  std::unordered_map<std::string, int> um;
  for (int i = 0; i < 50; ++i) {
    std::string key = "k";
    key += std::to_string(i);  // (operator+ here trips g++ 12's -Wrestrict false positive)
    um[key] = i;
  }
  const std::string out = json::serializeToString(um, {.canonical = true});
  Document ud = json::parse(out);
  CHECK(json::toString(ud.root(), {.canonical = true}) == out);  // already canonical
  CHECK(out.rfind(R"({"k0":0,"k1":1,"k10":10,)", 0) == 0);
  // One member or none: nothing to sort.
  CHECK(json::serializeToString(std::map<std::string, int>{}, {.canonical = true}) == "{}");
  CHECK(json::serializeToString(std::map<std::string, int>{{"x", 1}}, {.canonical = true}) ==
        R"({"x":1})");
}

TEST_CASE("NETBUF_JSON_FIELDS: literal and general keys, listed and canonical order, every mode") {
  const testns::Names n;
  Document d;
  const Value listed = d.map({{d.str("thirteenChars"), Value::integer(1)},
                              {d.str("fourteenChars_"), Value::integer(2)},
                              {d.str("b"), Value::integer(3)},
                              {d.str("a_"), d.str("x")}});
  CHECK(json::serializeToString(n) == R"({"thirteenChars":1,"fourteenChars_":2,"b":3,"a_":"x"})");
  CHECK(json::serializeToString(n, {.canonical = true}) ==
        R"({"a_":"x","b":3,"fourteenChars_":2,"thirteenChars":1})");
  for (const JsonWriteOptions& o :
       {JsonWriteOptions{}, JsonWriteOptions{.pretty = true},
        JsonWriteOptions{.escapeNonAscii = true}, JsonWriteOptions{.canonical = true}}) {
    CHECK(json::serializeToString(n, o) == json::toString(listed, o));
  }
  // Inside containers (the separator before a literal key) and round trip.
  const std::vector<testns::Names> many(3);
  const std::string text = json::serializeToString(many, {.canonical = true});
  CHECK(json::deserialize<std::vector<testns::Names>>(text) == many);
  CHECK(text.find(R"(},{"a_":"x","b":3,)") != std::string::npos);
}

TEST_CASE("NETBUF_JSON_FIELDS: recursive types; growth under literal keys") {
  const Tree t{
      "root", {Tree{"a", {}, {}}, Tree{"b", {Tree{"c", {}, {}}}, std::vector<Tree>{}}}, {}};
  const std::string text = json::serializeToString(t);
  CHECK(text ==
        R"({"name":"root","kids":[{"name":"a","kids":[],"more":null},)"
        R"({"name":"b","kids":[{"name":"c","kids":[],"more":null}],"more":[]}],"more":null})");
  CHECK(json::deserialize<Tree>(text) == t);
  CHECK(json::serializeToString(t, {.canonical = true}).starts_with(R"({"kids":[{"kids":[],)"));
  CHECK(json::serializeToString(Names{}, {.canonical = true}) == R"({"y":2,"z":1})");

  // Into a buffer of one byte: every literal key finds less room than its 17-byte copy needs at
  // first, and the buffer grows on the way; the bytes are those of a roomy buffer.
  for (const JsonWriteOptions& o : {JsonWriteOptions{}, JsonWriteOptions{.canonical = true}}) {
    ByteBuf small = ByteBufAllocator::defaultAllocator().buffer(1);
    const std::vector<testns::Names> many(5);
    json::serialize(many, small, o);
    CHECK(small.readableStringView() == json::serializeToString(many, o));
  }
}

TEST_CASE("built-in types") {
  CHECK(json::serializeToString(std::vector<int>{1, -2}) == "[1,-2]");
  CHECK(json::serializeToString(std::array<std::uint8_t, 2>{255, 0}) == "[255,0]");
  CHECK(json::serializeToString(std::pair<int, std::string>{1, "x"}) == R"([1,"x"])");
  CHECK(json::serializeToString(std::tuple<bool, double, float>{true, 1.0, 0.1F}) ==
        "[true,1.0,0.1]");
  CHECK(json::serializeToString(std::optional<int>{}) == "null");
  CHECK(json::serializeToString(std::unordered_map<std::string, int>{{"k", 1}}) == R"({"k":1})");
  CHECK(json::serializeToString(std::numeric_limits<std::int64_t>::min()) ==
        "-9223372036854775808");
  CHECK(json::serializeToString(std::numeric_limits<std::uint64_t>::max()) ==
        "18446744073709551615");

  CHECK(json::deserialize<std::uint64_t>("18446744073709551615") == UINT64_MAX);
  CHECK(json::deserialize<std::int64_t>("-9223372036854775808") == INT64_MIN);
  CHECK(json::deserialize<std::int8_t>("-128") == -128);
  CHECK(json::deserialize<unsigned>("-0") == 0);
  CHECK(json::deserialize<double>("12") == 12.0);
  CHECK(json::deserialize<float>("0.5") == 0.5F);
  CHECK(json::deserialize<std::string>(R"("a\u00e9\n")") == "a\xC3\xA9\n");
  const std::string text = R"(["view"])";
  const auto views = json::deserialize<std::vector<std::string_view>>(text);
  CHECK(views[0] == "view");
  CHECK(views[0].data() == text.data() + 2);  // a view into the input
  CHECK(json::deserialize<std::array<int, 3>>("[1,2,3]") == std::array<int, 3>{1, 2, 3});
  CHECK(json::deserialize<std::pair<int, std::string>>(R"([1,"x"])") ==
        std::pair<int, std::string>{1, "x"});
  CHECK(json::deserialize<std::tuple<bool, std::optional<int>>>("[false,null]") ==
        std::tuple<bool, std::optional<int>>{false, std::nullopt});
  const auto m = json::deserialize<std::unordered_map<std::string, std::vector<int>>>(
      R"({"a":[1],"b\"":[],"a":[2]})");
  CHECK(m.size() == 2);
  CHECK(m.at("a") == std::vector<int>{2});
  CHECK(m.at("b\"").empty());
}

TEST_CASE("errors: type mismatch, range, truncation, depth, trailing content") {
  auto e = jsonErrorOf([] { json::deserialize<testns::User>(R"({"name":"n","age":"7"})"); });
  CHECK(e.code() == JsonErrorCode::TypeMismatch);
  CHECK(e.offset() == 18);
  CHECK(e.detail() == "expected an integer, found a string");

  e = jsonErrorOf([] { json::deserialize<std::int32_t>("1.5"); });
  CHECK(e.code() == JsonErrorCode::TypeMismatch);
  e = jsonErrorOf([] { json::deserialize<std::vector<std::uint8_t>>("[1, 256]"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  CHECK(e.offset() == 4);
  e = jsonErrorOf([] { json::deserialize<std::uint64_t>("-1"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  e = jsonErrorOf([] { json::deserialize<std::uint64_t>("18446744073709551616"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  e = jsonErrorOf([] { json::deserialize<std::int64_t>("9223372036854775808"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  e = jsonErrorOf([] { json::deserialize<std::int16_t>("-32769"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  CHECK(e.offset() == 0);
  e = jsonErrorOf([] { json::deserialize<double>("1e400"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  e = jsonErrorOf([] { json::deserialize<bool>("null"); });
  CHECK(e.code() == JsonErrorCode::TypeMismatch);
  e = jsonErrorOf([] { json::deserialize<std::string_view>(R"("a\nb")"); });
  CHECK(e.code() == JsonErrorCode::TypeMismatch);
  e = jsonErrorOf([] { json::deserialize<std::array<int, 3>>("[1,2]"); });
  CHECK(e.code() == JsonErrorCode::TypeMismatch);
  CHECK(e.offset() == 4);
  e = jsonErrorOf([] { json::deserialize<std::array<int, 1>>("[1,2]"); });
  CHECK(e.code() == JsonErrorCode::TypeMismatch);
  CHECK(e.offset() == 3);
  e = jsonErrorOf([] { json::deserialize<std::pair<int, int>>("[1"); });
  CHECK(e.code() == JsonErrorCode::UnexpectedEnd);

  // Every proper prefix of a document is UnexpectedEnd (or Syntax inside a literal).
  const std::string text = json::serializeToString(sampleUser());
  for (std::size_t n = 0; n < text.size(); ++n) {
    e = jsonErrorOf([&] { json::deserialize<testns::User>(std::string_view(text).substr(0, n)); });
    CHECK_MESSAGE(e.code() == JsonErrorCode::UnexpectedEnd, n);
  }
  e = jsonErrorOf([] { json::deserialize<int>("1 2"); });
  CHECK(e.code() == JsonErrorCode::TrailingContent);
  CHECK(e.offset() == 2);
  e = jsonErrorOf([] { json::deserialize<std::vector<int>>("[1,]"); });
  CHECK(e.code() == JsonErrorCode::Syntax);
  e = jsonErrorOf([] { json::deserialize<std::vector<int>>("[1 2]"); });
  CHECK(e.code() == JsonErrorCode::Syntax);
  e = jsonErrorOf([] { json::deserialize<testns::Address>(R"({"city" "x"})"); });
  CHECK(e.code() == JsonErrorCode::Syntax);
  e = jsonErrorOf([] { json::deserialize<testns::Address>("{\"city\":\"\xC3\"}"); });
  CHECK(e.code() == JsonErrorCode::InvalidUtf8);

  // Depth: nested vectors, and unknown keys skipped under the same limit.
  e = jsonErrorOf([] {
    json::deserialize<std::vector<std::vector<std::vector<int>>>>("[[[1]]]", {.maxDepth = 2});
  });
  CHECK(e.code() == JsonErrorCode::DepthLimit);
  CHECK(e.value() == 3);
  CHECK(e.limit() == 2);
  const std::string deep = R"({"x":)" + std::string(100000, '[') + "}";
  e = jsonErrorOf([&] { json::deserialize<testns::Address>(deep); });
  CHECK(e.code() == JsonErrorCode::DepthLimit);
}

TEST_CASE("writer errors restore the buffer; stream writer misuse") {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(16);
  buf.writeByte(static_cast<std::int8_t>(120));
  CHECK_THROWS_AS(json::serialize(std::vector<double>{1.0, std::nan("")}, buf), EncoderError);
  CHECK(buf.readableStringView() == "x");
  CHECK_THROWS_AS(json::serialize(std::string("\xC3"), buf), EncoderError);
  CHECK(buf.readableStringView() == "x");

  JsonStreamWriter w(buf);
  w.beginObject();
  CHECK_THROWS_AS(w.value(1), EncoderError);  // no key
  CHECK_THROWS_AS(w.endArray(), EncoderError);
  w.key("k");
  CHECK_THROWS_AS(w.key("k2"), EncoderError);
  w.value(1);
  w.endObject();
  CHECK(w.done());
  CHECK_THROWS_AS(w.value(2), EncoderError);  // a second top-level value
  CHECK(buf.readableStringView() == R"(x{"k":1})");

  JsonStreamWriter d(buf, {.maxDepth = 1});
  d.beginArray();
  CHECK_THROWS_AS(d.beginArray(), EncoderError);
}

TEST_CASE("JsonReader: peek, skip and misuse") {
  JsonReader r(R"( {"a": [1, "x", true, null, {"b": []}], "c": 2.5} )");
  CHECK(r.peek() == JsonToken::BeginObject);
  r.readBeginObject();
  CHECK(r.peek() == JsonToken::String);
  CHECK_THROWS_AS(r.readEndArray(), IllegalArgumentError);
  CHECK(*r.nextKey() == "a");
  CHECK_THROWS_AS(r.nextKey(), IllegalArgumentError);
  CHECK(r.peek() == JsonToken::BeginArray);
  r.skipValue();
  CHECK(*r.nextKey() == "c");
  CHECK(r.peek() == JsonToken::Number);
  CHECK(r.readDouble() == 2.5);
  CHECK(!r.nextKey());
  r.readEndObject();
  CHECK(r.peek() == JsonToken::End);
  r.readEnd();
}

TEST_CASE("JsonReader: skipValue checks numbers as the parser does") {
  // Found by json_reader_fuzz: skipValue accepted 1e324, which json::parse rejects.
  auto skipError = [](std::string_view text, JsonParseOptions options = {}) {
    return jsonErrorOf([&] {
      JsonReader r(text, options);
      r.skipValue();
      r.readEnd();
    });
  };
  auto e = skipError("[1, 1e324]");
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  CHECK(e.offset() == 4);
  CHECK(skipError("-1e400").code() == JsonErrorCode::NumberOutOfRange);
  JsonParseOptions noBig;
  noBig.bigIntegersAsDouble = false;
  CHECK(skipError("[18446744073709551616]", noBig).code() == JsonErrorCode::NumberOutOfRange);
  // What the parser accepts, skipValue accepts: big integers as doubles, underflow to zero.
  for (std::string_view ok : {"[18446744073709551616]", "1e-400", "-0", "[1.5e308]"}) {
    JsonReader r(ok);
    r.skipValue();
    r.readEnd();
    Document doc;
    json::parse(ok, doc);
  }
}

TEST_CASE("JsonReader/traits: range errors name the number's own offset; float range") {
  // After whitespace, a ':' or a ',' the error points at the number, not at the separator.
  auto e = jsonErrorOf([] { json::deserialize<std::uint8_t>(" 300"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  CHECK(e.offset() == 1);
  e = jsonErrorOf([] { json::deserialize<std::pair<std::uint8_t, std::uint8_t>>("[1,300]"); });
  CHECK(e.offset() == 3);
  e = jsonErrorOf([] { json::deserialize<std::map<std::string, std::uint8_t>>(R"({"a": 300})"); });
  CHECK(e.offset() == 6);
  // float: beyond FLT_MAX is NumberOutOfRange (the conversion would be undefined), not inf.
  e = jsonErrorOf([] { json::deserialize<float>("1e39"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  e = jsonErrorOf([] { json::deserialize<std::vector<float>>("[1, -3.5e38]"); });
  CHECK(e.code() == JsonErrorCode::NumberOutOfRange);
  CHECK(e.offset() == 4);
  CHECK(json::deserialize<float>("3.4e38") == 3.4e38f);
  CHECK(json::deserialize<double>("1e39") == 1e39);
  // Readers of temporaries would dangle: refused at compile time.
  static_assert(!std::is_constructible_v<JsonReader, ByteBuf&&>);
  static_assert(std::is_constructible_v<JsonReader, const ByteBuf&>);
}
