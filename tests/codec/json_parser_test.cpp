#include <netbuf/codec/json/json_parser.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

/// The JsonError parse(text) throws (fails the test when it succeeds or throws something else).
JsonError errorOf(std::string_view text, const JsonParseOptions& o = {}) {
  try {
    Document d = json::parse(text, o);
  } catch (const JsonError& e) {
    return e;
  }
  FAIL("expected a JsonError for: " << std::string(text.substr(0, 80)));
  return JsonError(JsonErrorCode::Syntax, "", 0, 0, 0);
}

JsonErrorCode codeOf(std::string_view text, const JsonParseOptions& o = {}) {
  return errorOf(text, o).code();
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::filesystem::path suiteDir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "data" / "JSONTestSuite" /
         "test_parsing";
}

}  // namespace

TEST_CASE("scalars map to the document model") {
  CHECK(json::parse("null").root().isNil());
  CHECK(json::parse(" true ").root().asBool() == true);
  CHECK(json::parse("\n\tfalse\r\n").root().asBool() == false);
  CHECK(json::parse("0").root().type() == ValueType::UInt);
  CHECK(json::parse("42").root().asUInt64() == 42);
  CHECK(json::parse("-1").root().type() == ValueType::Int);
  CHECK(json::parse("-1").root().asInt64() == -1);
  CHECK(json::parse("9223372036854775807").root().asUInt64() == INT64_MAX);
  CHECK(json::parse("18446744073709551615").root().asUInt64() == UINT64_MAX);
  CHECK(json::parse("-9223372036854775808").root().asInt64() == INT64_MIN);
  // Beyond the int64/uint64 range: the nearest double.
  const Value big = json::parse("18446744073709551616").root();
  CHECK(big.type() == ValueType::Float64);
  CHECK(big.asDouble() == 18446744073709551616.0);
  CHECK(json::parse("-9223372036854775809").root().type() == ValueType::Float64);
  CHECK(json::parse("123456789012345678901234567890").root().asDouble() == 1.2345678901234568e29);
  JsonParseOptions strictInts;
  strictInts.bigIntegersAsDouble = false;
  CHECK(codeOf("18446744073709551616", strictInts) == JsonErrorCode::NumberOutOfRange);
  CHECK(codeOf("[-9223372036854775809]", strictInts) == JsonErrorCode::NumberOutOfRange);
  CHECK(json::parse("18446744073709551615", strictInts).root().asUInt64() == UINT64_MAX);
  // -0 keeps its sign as a Float64.
  const Value negZero = json::parse("-0").root();
  CHECK(negZero.type() == ValueType::Float64);
  CHECK(std::signbit(negZero.asDouble()));
  CHECK(json::parse("1.5").root().asDouble() == 1.5);
  CHECK(json::parse("-2.5e-3").root().asDouble() == -0.0025);
  CHECK(json::parse("1E2").root().type() == ValueType::Float64);
  CHECK(json::parse("1e+2").root().asDouble() == 100.0);
  CHECK(json::parse("0.1").root().asDouble() == 0.1);
  CHECK(json::parse("2.2250738585072011e-308").root().asDouble() == 2.2250738585072011e-308);
  CHECK(json::parse("4.9e-324").root().asDouble() == 5e-324);
  CHECK(json::parse("1.7976931348623157e308").root().asDouble() ==
        std::numeric_limits<double>::max());
  // Overflow is an error, underflow gives a (signed) zero.
  CHECK(codeOf("1e309") == JsonErrorCode::NumberOutOfRange);
  CHECK(codeOf("[-123123e100000]") == JsonErrorCode::NumberOutOfRange);
  CHECK(codeOf("0.4e0066999999999999999999999999999999999999999999999") ==
        JsonErrorCode::NumberOutOfRange);
  CHECK(json::parse("1e-400").root().asDouble() == 0.0);
  CHECK(std::signbit(json::parse("-1e-400").root().asDouble()));
  CHECK(json::parse("0e99999").root().asDouble() == 0.0);
  CHECK(json::parse("0.00000000000000000000001e-400").root().asDouble() == 0.0);
  CHECK(json::parse("10000000000000000000000e-400").root().asDouble() == 0.0);
}

TEST_CASE("arrays and objects keep order and duplicates") {
  Document d = json::parse(R"( {"b": [1, "x", null, [], {}], "a": {"k": true}, "b": 2} )");
  const Value& r = d.root();
  REQUIRE(r.isMap());
  REQUIRE(r.size() == 3);
  CHECK(r.asMap()[0].key.asStr() == "b");
  CHECK(r.asMap()[1].key.asStr() == "a");
  CHECK(r.asMap()[2].value.asUInt64() == 2);
  CHECK(r["b"].size() == 5);
  CHECK(r["b"][1].asStr() == "x");
  CHECK(r["b"][3].isArray());
  CHECK(r["b"][4].isMap());
  CHECK(r["a"]["k"].asBool());
  CHECK(json::parse("[]").root().size() == 0);
  CHECK(json::parse("[[[]]]").root()[0][0].isArray());
}

TEST_CASE("strings: views into the input, unescaped copies in the arena") {
  const std::string text =
      R"(["plain", "esc\"aped", "caf\u00e9", "\ud83d\ude00", "\/\\\b\f\n\r\t"])";
  Document d = json::parse(text);
  const Value& r = d.root();
  const std::string_view plain = r[0].asStr();
  CHECK(plain == "plain");
  CHECK(plain.data() == text.data() + 2);  // a view
  const std::string_view esc = r[1].asStr();
  CHECK(esc == "esc\"aped");
  CHECK((esc.data() < text.data() || esc.data() >= text.data() + text.size()));  // a copy
  CHECK(r[2].asStr() == "caf\xC3\xA9");
  CHECK(r[3].asStr() == "\xF0\x9F\x98\x80");
  CHECK(r[4].asStr() == "/\\\b\f\n\r\t");
  CHECK(json::parse(R"("\u0000")").root().asStr() == std::string_view("\0", 1));
  CHECK(json::parse(R"("\uFFFF")").root().asStr() == "\xEF\xBF\xBF");
  CHECK(json::parse(R"("\uDBFF\uDFFF")").root().asStr() == "\xF4\x8F\xBF\xBF");
  CHECK(json::parse("\"\xE2\x82\xAC x\"").root().asStr() == "\xE2\x82\xAC x");
  // Long strings exercise the 16-byte scanner, including a stop in every lane.
  for (std::size_t at = 0; at < 40; ++at) {
    std::string s(40, 'a');
    s[at] = '"';
    std::string doc = "\"";  // (appends, not operator+: g++ 12 -Wrestrict false positive)
    doc.append(s, 0, at);
    doc += "\\\"";
    doc.append(s, at + 1);
    doc += '"';
    CHECK(json::parse(doc).root().asStr() == s);
  }
}

TEST_CASE("strings: the parser marks plain ASCII ones (Value::isPlainAscii)") {
  const std::string text = R"({"key": ["plain", "esc\"aped", "caf\u00e9", "\u0041\/", "tab\t", )"
                           "\"\xC3\xA9\", \"\"], "
                           R"("k\u00e9y": 1})";
  Document d = json::parse(text);
  const auto members = d.root().asMap();
  CHECK(members[0].key.isPlainAscii());
  CHECK_FALSE(members[1].key.isPlainAscii());  // "k\u00e9y" unescapes to non-ASCII
  const Value& a = members[0].value;
  CHECK(a[0].isPlainAscii());        // a view of the input
  CHECK_FALSE(a[1].isPlainAscii());  // unescapes to a quote
  CHECK_FALSE(a[2].isPlainAscii());  // non-ASCII
  CHECK(a[3].isPlainAscii());        // escapes that unescape to plain ASCII ("A/")
  CHECK(a[3].asStr() == "A/");
  CHECK_FALSE(a[4].isPlainAscii());  // a tab
  CHECK_FALSE(a[5].isPlainAscii());  // raw UTF-8
  CHECK(a[6].isPlainAscii());
  // Every position of a long string, through the 16-byte scanner: one non-ASCII character
  // anywhere takes the hint away.
  for (std::size_t at = 0; at < 40; ++at) {
    std::string s(40, 'a');
    s.replace(at, 1, "\xC3\xA9");
    INFO("at " << at);
    CHECK_FALSE(json::parse("\"" + s + "\"").root().isPlainAscii());
  }
  CHECK(json::parse("\"" + std::string(40, 'a') + "\"").root().isPlainAscii());
}

TEST_CASE("ByteBuf input: kept alive by the document, strings view into it") {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(64);
  buf.writeBytes(std::string_view(R"(xx{"k":"value"})"));
  buf.skipBytes(2);
  const std::byte* base = buf.readPtr();
  Document d = json::parse(std::move(buf));
  CHECK(d.keptBuffers().size() == 1);
  const std::string_view v = d.root()["k"].asStr();
  CHECK(v == "value");
  CHECK(reinterpret_cast<const std::byte*>(v.data()) == base + 6);
  ByteBuf slice = d.retainedSlice(d.root()["k"]);
  CHECK(slice.readableStringView() == "value");
}

TEST_CASE("JsonParser is reusable and parse() into an existing document sets its root") {
  JsonParser parser;
  Document d;
  parser.parse("[1,2,3]", d);
  CHECK(d.root().size() == 3);
  CHECK_THROWS_AS(parser.parse("[1,2", d), JsonError);
  CHECK(d.root().size() == 3);  // unchanged by the failure
  d.clear();
  parser.parse(R"({"a":[{"b":[]}]})", d);
  CHECK(d.root()["a"][0]["b"].isArray());
  JsonParseOptions o;
  o.maxDepth = 1;
  parser.setOptions(o);
  CHECK_THROWS_AS(parser.parse("[[1]]", d), JsonError);
}

TEST_CASE("error codes, offsets, line and column") {
  JsonError e = errorOf("{\n  \"a\": 1,\n  x\n}");
  CHECK(e.code() == JsonErrorCode::Syntax);
  CHECK(e.offset() == 14);
  CHECK(e.line() == 3);
  CHECK(e.column() == 3);
  CHECK(std::string(e.what()) ==
        "JsonError: unexpected character 'x' (expected '\"' starting an object key) at offset 14 "
        "(line 3, column 3)");
  CHECK(codeOf("") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("   ") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("[1,]") == JsonErrorCode::Syntax);
  CHECK(codeOf("[1 2]") == JsonErrorCode::Syntax);
  CHECK(codeOf("{\"a\" 1}") == JsonErrorCode::Syntax);
  CHECK(codeOf("{\"a\":1,}") == JsonErrorCode::Syntax);
  CHECK(codeOf("[01]") == JsonErrorCode::Syntax);
  CHECK(codeOf("01") == JsonErrorCode::TrailingContent);
  CHECK(errorOf("[1] x").offset() == 4);
  CHECK(codeOf("[1] [2]") == JsonErrorCode::TrailingContent);
  CHECK(codeOf("-") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("-a") == JsonErrorCode::Syntax);
  CHECK(codeOf("1.") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("1.e3") == JsonErrorCode::Syntax);
  CHECK(codeOf("1e") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("+1") == JsonErrorCode::Syntax);
  CHECK(codeOf("tru") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("trux") == JsonErrorCode::Syntax);
  CHECK(errorOf("[nul]").offset() == 4);
  CHECK(codeOf("\"abc") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("\"a\tb\"") == JsonErrorCode::Syntax);
  CHECK(errorOf("\"a\\tb\nc\"").offset() == 5);
  CHECK(codeOf(R"("\x")") == JsonErrorCode::InvalidEscape);
  CHECK(errorOf(R"(["ab\x"])").offset() == 4);
  CHECK(codeOf(R"("\u12G4")") == JsonErrorCode::InvalidEscape);
  CHECK(codeOf(R"("\u12)") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf("\xEF\xBB\xBF{}") == JsonErrorCode::Syntax);
  CHECK(std::string(errorOf("\xEF\xBB\xBF{}").what()).find("byte order mark") != std::string::npos);
  CHECK(jsonErrorCodeName(JsonErrorCode::NumberOutOfRange) == "NumberOutOfRange");
  JsonError r = errorOf("[x]").rebased(100);
  CHECK(r.offset() == 101);
  CHECK(r.line() == 1);
  CHECK(r.column() == 2);
}

TEST_CASE("surrogates: pairs, lone ones (error or U+FFFD)") {
  CHECK(codeOf(R"("\uD800")") == JsonErrorCode::LoneSurrogate);
  CHECK(codeOf(R"("\uDC00")") == JsonErrorCode::LoneSurrogate);
  CHECK(codeOf(R"("\uD800x")") == JsonErrorCode::LoneSurrogate);
  CHECK(codeOf(R"("\uD800\n")") == JsonErrorCode::LoneSurrogate);
  CHECK(codeOf(R"("\uD800\u0041")") == JsonErrorCode::LoneSurrogate);
  CHECK(codeOf(R"("\uDd1e\uD834")") == JsonErrorCode::LoneSurrogate);
  CHECK(errorOf(R"(["ab\uD800"])").offset() == 4);
  CHECK(codeOf(R"("\uD800)") == JsonErrorCode::UnexpectedEnd);
  CHECK(codeOf(R"("\uD800\)") == JsonErrorCode::UnexpectedEnd);
  JsonParseOptions lenient;
  lenient.allowLoneSurrogates = true;
  CHECK(json::parse(R"("\uD800")", lenient).root().asStr() == "\xEF\xBF\xBD");
  CHECK(json::parse(R"("a\uD800\u0041")", lenient).root().asStr() ==
        "a\xEF\xBF\xBD"
        "A");
  CHECK(json::parse(R"("\uDC00\uD83D\uDE00")", lenient).root().asStr() ==
        "\xEF\xBF\xBD\xF0\x9F\x98\x80");
}

TEST_CASE("invalid UTF-8 in strings and keys: offset of the first bad byte") {
  CHECK(codeOf("\"\xFF\"") == JsonErrorCode::InvalidUtf8);
  CHECK(errorOf("[\"ab\xC3\"]").offset() == 4);          // truncated sequence
  CHECK(errorOf("[\"ab\xC0\xAF\"]").offset() == 4);      // overlong
  CHECK(errorOf("[\"ab\xED\xA0\x80\"]").offset() == 4);  // encoded surrogate
  CHECK(errorOf("{\"k\xF5\x80\x80\x80\":1}").offset() == 3);
  CHECK(errorOf("[\"x\\n\xFE\"]").offset() == 5);  // after an escape
  CHECK(errorOf("[\"0123456789abcdefghij\x80\"]").offset() == 22);
  CHECK(errorOf("{\"ok\":\"\xE2\x82\"}").code() == JsonErrorCode::InvalidUtf8);
}

TEST_CASE("limits: depth, document size, string and number length") {
  JsonError e = errorOf(std::string(513, '[') + std::string(513, ']'));
  CHECK(e.code() == JsonErrorCode::DepthLimit);
  CHECK(e.offset() == 512);
  CHECK(e.value() == 513);
  CHECK(e.limit() == 512);
  CHECK(json::parse(std::string(512, '[') + std::string(512, ']')).root().isArray());
  // 100,000 nested arrays (and objects): a DepthLimit error, never a stack overflow.
  CHECK(codeOf(std::string(100000, '[')) == JsonErrorCode::DepthLimit);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  CHECK(codeOf(objects) == JsonErrorCode::DepthLimit);
  JsonParseOptions deep;
  deep.maxDepth = 200000;
  CHECK(json::parse(std::string(100000, '[') + std::string(100000, ']'), deep).root().isArray());

  JsonParseOptions o;
  o.maxDocumentSize = 10;
  e = errorOf("[1,2,3,4,5,6]", o);
  CHECK(e.code() == JsonErrorCode::DocumentSizeLimit);
  CHECK(e.value() == 13);
  CHECK(e.limit() == 10);
  o = {};
  o.maxStringLength = 3;
  CHECK(json::parse(R"(["abc","a\nc"])", o).root().size() == 2);
  e = errorOf(R"(["abc","abcd"])", o);
  CHECK(e.code() == JsonErrorCode::StringLengthLimit);
  CHECK(e.offset() == 7);
  CHECK(e.value() == 4);
  CHECK(e.limit() == 3);
  CHECK(codeOf(R"({"a\nbc":1})", o) == JsonErrorCode::StringLengthLimit);
  o = {};
  o.maxNumberLength = 4;
  CHECK(json::parse("[-1.5,1e10]", o).root().size() == 2);
  e = errorOf("[12345]", o);
  CHECK(e.code() == JsonErrorCode::NumberLengthLimit);
  CHECK(e.offset() == 1);
  CHECK(e.value() == 5);
  CHECK(e.limit() == 4);
}

TEST_CASE("every prefix of a document is UnexpectedEnd or Syntax, never a crash") {
  const std::vector<std::string> docs = {
      R"({"a":[1,-2.5e+3,true,false,null,"x\"y\u00e9\ud83d\ude00"],"b":{"c":{}}})",
      R"([ {"k" : "v"} , [ ] , -0.0 , 1E-2 , "caf)"
      "\xC3\xA9"
      R"(" ])",
  };
  for (const std::string& doc : docs) {
    CHECK(json::parse(doc).root().size() > 0);
    for (std::size_t n = 0; n < doc.size(); ++n) {
      CAPTURE(n);
      const JsonErrorCode c = codeOf(std::string_view(doc).substr(0, n));
      CHECK((c == JsonErrorCode::UnexpectedEnd || c == JsonErrorCode::Syntax));
    }
  }
}

TEST_CASE("extendedTypes: $bin, $ext, $timestamp") {
  JsonParseOptions o;
  o.extendedTypes = true;
  Document d;
  d = json::parse(
      R"([{"$bin":"AAEC/w=="},{"$bin":""},{"$ext":[5,"aGk="]},{"$ext":[-128,"YWI="]},)"
      R"({"$timestamp":[-1,999999999]},{"$bin":"x","y":1},{"$other":1},{"$timestamp":[0,0]}])",
      o);
  const Value& r = d.root();
  REQUIRE(r[0].isBin());
  CHECK(r[0].asBin().size() == 4);
  CHECK(r[0].asBin()[3] == std::byte{0xFF});
  CHECK(r[1].isBin());
  CHECK(r[1].size() == 0);
  CHECK(r[2].extType() == 5);
  CHECK(r[2].size() == 2);
  CHECK(r[3].extType() == -128);
  CHECK(r[4].asTimestamp() == Timestamp{-1, 999999999});
  CHECK(r[5].isMap());  // two members: a plain object
  CHECK(r[6].isMap());  // unknown tag
  CHECK(r[7].asTimestamp() == Timestamp{0, 0});
  // Without the option they stay objects.
  CHECK(json::parse(R"({"$bin":"AA=="})").root().isMap());
  // Malformed tagged objects.
  for (const char* bad :
       {R"({"$bin":1})", R"({"$bin":"A"})", R"({"$bin":"AB=="})", R"({"$bin":"A==="})",
        R"({"$bin":"AA=A"})", R"({"$bin":"AA*="})", R"({"$ext":[-1,""]})", R"({"$ext":[128,""]})",
        R"({"$ext":[1]})", R"({"$ext":["1",""]})", R"({"$ext":[1.5,""]})",
        R"({"$timestamp":[1,1000000000]})", R"({"$timestamp":[1,-1]})",
        R"({"$timestamp":[18446744073709551615,0]})", R"({"$timestamp":{"s":1}})"}) {
    CAPTURE(bad);
    const JsonError e = errorOf(bad, o);
    CHECK(e.code() == JsonErrorCode::ExtendedType);
    CHECK(e.offset() == 0);
  }
  CHECK(errorOf(R"([1, {"$bin":"?"}])", o).offset() == 4);
  CHECK(codeOf(R"({"$ext":[1,"YQ"]})", o) == JsonErrorCode::ExtendedType);
}

TEST_CASE("JSONTestSuite: y_ accepted, n_ rejected, i_ as documented") {
  // i_ outcomes (docs/json.md): true = accepted, false = rejected with the code named.
  const std::map<std::string, std::pair<bool, JsonErrorCode>> implementationDefined = {
      {"i_number_double_huge_neg_exp.json", {true, {}}},  // underflow -> 0
      {"i_number_huge_exp.json", {false, JsonErrorCode::NumberOutOfRange}},
      {"i_number_neg_int_huge_exp.json", {false, JsonErrorCode::NumberOutOfRange}},
      {"i_number_pos_double_huge_exp.json", {false, JsonErrorCode::NumberOutOfRange}},
      {"i_number_real_neg_overflow.json", {false, JsonErrorCode::NumberOutOfRange}},
      {"i_number_real_pos_overflow.json", {false, JsonErrorCode::NumberOutOfRange}},
      {"i_number_real_underflow.json", {true, {}}},
      {"i_number_too_big_neg_int.json", {true, {}}},  // -> Float64
      {"i_number_too_big_pos_int.json", {true, {}}},
      {"i_number_very_big_negative_int.json", {true, {}}},
      {"i_object_key_lone_2nd_surrogate.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_1st_surrogate_but_2nd_missing.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_1st_valid_surrogate_2nd_invalid.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_UTF-16LE_with_BOM.json", {false, JsonErrorCode::Syntax}},
      {"i_string_UTF-8_invalid_sequence.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_UTF8_surrogate_U+D800.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_incomplete_surrogate_and_escape_valid.json",
       {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_incomplete_surrogate_pair.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_incomplete_surrogates_escape_valid.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_invalid_lonely_surrogate.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_invalid_surrogate.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_invalid_utf-8.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_inverted_surrogates_U+1D11E.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_iso_latin_1.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_lone_second_surrogate.json", {false, JsonErrorCode::LoneSurrogate}},
      {"i_string_lone_utf8_continuation_byte.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_not_in_unicode_range.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_overlong_sequence_2_bytes.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_overlong_sequence_6_bytes.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_overlong_sequence_6_bytes_null.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_truncated-utf-8.json", {false, JsonErrorCode::InvalidUtf8}},
      {"i_string_utf16BE_no_BOM.json", {false, JsonErrorCode::Syntax}},
      {"i_string_utf16LE_no_BOM.json", {false, JsonErrorCode::Syntax}},
      {"i_structure_500_nested_arrays.json", {true, {}}},
      {"i_structure_UTF-8_BOM_empty_object.json", {false, JsonErrorCode::Syntax}},
  };
  const auto dir = suiteDir();
  REQUIRE(std::filesystem::is_directory(dir));
  std::size_t y = 0, n = 0, i = 0;
  std::set<std::string> seenI;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    CAPTURE(name);
    const std::string text = readFile(entry.path());
    bool ok = true;
    JsonErrorCode code{};
    try {
      Document d = json::parse(text);
    } catch (const JsonError& e) {
      ok = false;
      code = e.code();
    }
    if (name[0] == 'y') {
      ++y;
      CHECK(ok);
    } else if (name[0] == 'n') {
      ++n;
      CHECK(!ok);
    } else {
      ++i;
      seenI.insert(name);
      const auto it = implementationDefined.find(name);
      REQUIRE(it != implementationDefined.end());
      CHECK(ok == it->second.first);
      if (!ok) CHECK(code == it->second.second);
    }
  }
  CHECK(y == 95);
  CHECK(n == 188);
  CHECK(i == 35);
  CHECK(seenI.size() == implementationDefined.size());
}
