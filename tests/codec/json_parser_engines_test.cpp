// The indexed JSON parser (JsonParser::Engine::Indexed: a structural index built 64 bytes at a
// time, then a walk over it) against the byte-at-a-time parser, on every instruction-set tier:
// same verdict, same document (values and hints), same error (code, offset, message), on the
// JSONTestSuite files, on seeded random documents with random edits, and on escapes, strings and
// whitespace placed across every 64-byte block boundary.
#include <netbuf/codec/json/json_parser.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/utf8.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

struct Outcome {
  bool ok = false;
  JsonErrorCode code{};
  std::uint64_t offset = 0;
  std::string what;
  Document doc;
};

Outcome parseWith(JsonParser::Engine engine, std::string_view text,
                  const JsonParseOptions& options) {
  Outcome o;
  JsonParser parser(options);
  parser.setEngine(engine);
  try {
    parser.parse(text, o.doc);
    o.ok = true;
  } catch (const JsonError& e) {
    o.code = e.code();
    o.offset = e.offset();
    o.what = e.what();
  }
  return o;
}

/// Same values, and the same isPlainAscii() hint on every string (the writer trusts it).
bool sameTree(const Value& a, const Value& b) {
  if (!(a == b)) return false;
  if (a.isStr()) return a.isPlainAscii() == b.isPlainAscii();
  if (a.isArray()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!sameTree(a.asArray()[i], b.asArray()[i])) return false;
    }
  }
  if (a.isMap()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!sameTree(a.asMap()[i].key, b.asMap()[i].key) ||
          !sameTree(a.asMap()[i].value, b.asMap()[i].value))
        return false;
    }
  }
  return true;
}

const utf8::Isa kTiers[] = {utf8::Isa::Scalar, utf8::Isa::Sse2, utf8::Isa::Avx2, utf8::Isa::Avx512};

/// Indexed and Auto agree exactly with ByteAtATime; IndexedOnly agrees on the verdict and the
/// document.
void checkAgree(std::string_view text, const JsonParseOptions& options = {}) {
  const Outcome ref = parseWith(JsonParser::Engine::ByteAtATime, text, options);
  for (const utf8::Isa isa : kTiers) {
    utf8::forceIsa(isa);
    const Outcome idx = parseWith(JsonParser::Engine::Indexed, text, options);
    const Outcome autoPick = parseWith(JsonParser::Engine::Auto, text, options);
    CHECK(autoPick.ok == ref.ok);
    if (ref.ok && autoPick.ok) CHECK(sameTree(autoPick.doc.root(), ref.doc.root()));
    if (!ref.ok) {
      CHECK(autoPick.code == ref.code);
      CHECK(autoPick.offset == ref.offset);
      CHECK(autoPick.what == ref.what);
    }
    const Outcome only = parseWith(JsonParser::Engine::IndexedOnly, text, options);
    utf8::resetIsa();
    CAPTURE(utf8::isaName(isa));
    CHECK(idx.ok == ref.ok);
    CHECK(only.ok == ref.ok);
    if (ref.ok) {
      if (idx.ok) CHECK(sameTree(idx.doc.root(), ref.doc.root()));
      if (only.ok) CHECK(sameTree(only.doc.root(), ref.doc.root()));
    } else {
      CHECK(idx.code == ref.code);
      CHECK(idx.offset == ref.offset);
      CHECK(idx.what == ref.what);
    }
  }
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Random JSON text, mostly valid, with every kind of whitespace, escape and number, and runs long
/// enough to cross block boundaries.
struct TextGen {
  std::mt19937_64 rng;
  std::string out;

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng() % n); }

  void ws() {
    switch (pick(6)) {
      case 0:
        out.append(pick(70), ' ');
        break;
      case 1:
        out += "\n\t\r ";
        break;
      case 2:
        out += ' ';
        break;
      default:
        break;
    }
  }
  void string() {
    static const char* const pieces[] = {"a",
                                         "xyz",
                                         "\\\"",
                                         "\\\\",
                                         "\\/",
                                         "\\b\\f\\n\\r\\t",
                                         "\\u00e9",
                                         "\\ud83d\\ude00",
                                         "\\\\\\\"",
                                         "\\\\\\\\",
                                         "\xc3\xa9",
                                         "\xe6\x9d\xb1",
                                         "\xf0\x9f\x98\x80",
                                         "{}[]:,",
                                         " ",
                                         "\\u0000",
                                         "0123456789abcdefghijklmnopqrstuvwxyz"};
    out += '"';
    const std::size_t n = pick(4) == 0 ? pick(60) : pick(6);
    for (std::size_t i = 0; i < n; ++i) out += pieces[pick(std::size(pieces))];
    out += '"';
  }
  void number() {
    static const char* const forms[] = {"0",
                                        "-0",
                                        "7",
                                        "-12",
                                        "1.5",
                                        "-2.5e-3",
                                        "1E+2",
                                        "6.02e23",
                                        "1e400",
                                        "-1e-400",
                                        "18446744073709551615",
                                        "18446744073709551616",
                                        "-9223372036854775808",
                                        "-9223372036854775809",
                                        "0.1",
                                        "123456789012345678901234567890",
                                        "3.14159"};
    out += forms[pick(std::size(forms))];
  }
  void value(int depth) {
    ws();
    const std::size_t k = depth > 6 ? 2 + pick(4) : pick(6);
    switch (k) {
      case 0:
      case 1: {
        const bool object = k == 0;
        out += object ? '{' : '[';
        const std::size_t n = pick(5);
        for (std::size_t i = 0; i < n; ++i) {
          if (i) {
            ws();
            out += ',';
          }
          if (object) {
            ws();
            string();
            ws();
            out += ':';
          }
          value(depth + 1);
        }
        ws();
        out += object ? '}' : ']';
        break;
      }
      case 2:
        string();
        break;
      case 3:
        number();
        break;
      case 4:
        out += pick(3) == 0 ? "true" : pick(2) == 0 ? "false" : "null";
        break;
      default:
        string();
        break;
    }
    ws();
  }
  /// One to three random edits: replace, insert or delete a byte, or truncate.
  void mutate() {
    static const char interesting[] = {'"', '\\',   '{',    '}',    '[',    ']',   ':',
                                       ',', ' ',    '\n',   'a',    '1',    '-',   'e',
                                       't', '\x01', '\x7f', '\x80', '\xff', '\xc3'};
    const std::size_t edits = 1 + pick(3);
    for (std::size_t e = 0; e < edits && !out.empty(); ++e) {
      const std::size_t at = pick(out.size());
      const char c = interesting[pick(sizeof interesting)];
      switch (pick(4)) {
        case 0:
          out[at] = c;
          break;
        case 1:
          out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 2:
          out.erase(at, 1);
          break;
        default:
          out.resize(at);
          break;
      }
    }
  }
};

}  // namespace

TEST_CASE("the tiers this CPU runs") {
  // forceIsa clamps to what the CPU has: say which tiers the tests below could run.
  std::string ran;
  for (const utf8::Isa isa : kTiers) {
    utf8::forceIsa(isa);
    if (utf8::activeIsa() == isa) ran += std::string(ran.empty() ? "" : ", ") + utf8::isaName(isa);
    utf8::resetIsa();
  }
  MESSAGE("stage 1 tiers tested here: " << ran);
  CHECK(!ran.empty());
}

TEST_CASE("engines agree on every JSONTestSuite file, on every tier") {
  const auto dir = std::filesystem::path(__FILE__).parent_path().parent_path() / "data" /
                   "JSONTestSuite" / "test_parsing";
  REQUIRE(std::filesystem::is_directory(dir));
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    checkAgree(readFile(entry.path()));
    ++files;
  }
  CHECK(files == 318);
}

TEST_CASE("engines agree across every 64-byte block boundary") {
  // Each snippet is placed at every offset from 0 to 130, so that its escapes, quotes, backslash
  // runs, multi-byte characters and token ends fall on, before and after a block boundary.
  const char* const snippets[] = {
      R"(["a\"b", "c\\", "d\\\"e", "\\\\"])",
      R"({"k\\\\\\\"": [1, -2.5e3, true, false, null]})",
      "[\"\xf0\x9f\x98\x80\xc3\xa9\", \"\\ud83d\\ude00\"]",
      R"("unterminated \")",
      "[\"control\x01byte\"]",
      "[\"tab\tinside\"]",
      R"([1 2])",
      R"([truex, 12a, "s"x])",
      R"([nul])",
      R"({"a" "b"})",
      "[\"\\\\\" \\ ]",
      R"([1,]  )",
      "[\"\xc3\"]",
      // Ill-formed UTF-8 of each kind (stage 1 validates it on the AVX-512 tier), after valid
      // 3- and 4-byte sequences.
      "[\"\xe6\x9d\xb1\xf0\x9f\x98\x80\", \"\xed\xa0\x80\"]",
      "[\"\xc0\xaf\"]",
      "[\"\xf4\x90\x80\x80\"]",
      "[\"\xe6\x9d\"]",
      "[\"a\x80\", 1]",
      "[1, \xc3\xa9]",
      R"({"a":1}  {"b":2})",
      R"(["\u12"])",
      R"([-])",
      R"(  123  )",
  };
  for (const char* snippet : snippets) {
    for (std::size_t pad = 0; pad <= 130; ++pad) {
      const std::string text = std::string(pad, ' ') + snippet;
      CAPTURE(text);
      checkAgree(text);
      // The same, and then padded so that the snippet ends on a boundary.
      checkAgree(std::string(snippet) + std::string(pad, '\n'));
    }
  }
}

TEST_CASE("engines agree on seeded random documents, valid and edited, under varied limits") {
  const std::uint64_t seed = std::random_device{}();
  CAPTURE(seed);
  TextGen gen{std::mt19937_64(seed), {}};
  for (int i = 0; i < 1500; ++i) {
    gen.out.clear();
    gen.value(0);
    if (i % 2 == 1) gen.mutate();
    JsonParseOptions o;
    switch (i % 5) {
      case 1:
        o.maxDepth = 3;
        break;
      case 2:
        o.maxStringLength = 5;
        o.maxNumberLength = 6;
        break;
      case 3:
        o.bigIntegersAsDouble = false;
        o.allowLoneSurrogates = true;
        break;
      case 4:
        o.extendedTypes = true;
        o.maxDocumentSize = 200;
        break;
      default:
        break;
    }
    CAPTURE(gen.out);
    checkAgree(gen.out, o);
  }
}

TEST_CASE("Auto is the default and switches engines at kAutoIndexedMinBytes") {
  CHECK(JsonParser().engine() == JsonParser::Engine::Auto);
  // The same document padded to just below, at and above the threshold, valid and then broken
  // inside a string and at the end: every outcome equals the byte-at-a-time parser's.
  const std::string body = R"({"k":["a\"b",1.5e3,true,null,"caf)"
                           "\xc3\xa9"
                           R"("]})";
  for (const std::size_t size :
       {JsonParser::kAutoIndexedMinBytes - 1, JsonParser::kAutoIndexedMinBytes,
        JsonParser::kAutoIndexedMinBytes + 1}) {
    const std::string text = body + std::string(size - body.size(), ' ');
    REQUIRE(text.size() == size);
    checkAgree(text);
    std::string broken = text;
    broken[7] = '\x01';  // a control byte inside the first string, before its escape
    checkAgree(broken);
    broken = text;
    broken[10] = '\x01';  // after the escape
    checkAgree(broken);
    broken = text;
    broken[9] = 'q';  // an invalid escape, "\q", in a string that is closed
    checkAgree(broken);
    // Which engine ran shows in the arena after an error at the end: an indexed run that fails
    // leaves what it built there, and the byte-at-a-time rerun builds it again.
    const std::string open =
        text.substr(0, body.size() - 1) + std::string(size - body.size() + 1, ' ');
    checkAgree(open);
    const Outcome byte = parseWith(JsonParser::Engine::ByteAtATime, open, {});
    const Outcome autoPick = parseWith(JsonParser::Engine::Auto, open, {});
    REQUIRE_FALSE(byte.ok);
    if (size < JsonParser::kAutoIndexedMinBytes) {
      CHECK(autoPick.doc.arenaUsed() == byte.doc.arenaUsed());
    } else {
      CHECK(autoPick.doc.arenaUsed() > byte.doc.arenaUsed());
    }
  }
}

TEST_CASE("engines agree on a string whose non-ASCII bytes and backslashes share bit positions") {
  // A string over two blocks: 'é' (or two stray continuation bytes) at offsets o, o + 1 and an
  // escaped backslash 64 bytes later, at the same bits of the next block. Only the escape and
  // those bytes are special, so a check that mixes the blocks' masks sees no byte above 0x7F: the
  // plain-ASCII hint (valid text) or the UTF-8 check (ill-formed text) would go wrong.
  for (const char* high : {"\xc3\xa9", "\x82\x82"}) {
    const std::string body = std::string("[\"") + high + std::string(62, 'a') + "\\\\\"]";
    for (std::size_t pad = 0; pad < 64; ++pad) {
      CAPTURE(pad);
      checkAgree(std::string(pad, ' ') + body);
    }
  }
}

TEST_CASE("engines agree on wide and deep containers") {
  // Wide: more pending values than the indexed engine's first stack (256 Values) and containers
  // of more than 32 elements (copied by memcpy rather than 16-byte moves). Deep: more open
  // containers than its first frame storage (32), objects and arrays alternating.
  std::string wide = "[";
  for (int i = 0; i < 700; ++i) {
    if (i != 0) wide += ',';
    wide += std::to_string(i * 7919 - 1000);
  }
  wide += "]";
  checkAgree(wide);
  std::string members = "{";
  for (int i = 0; i < 400; ++i) {
    // (Appended piece by piece: g++ 12 misreports a chain of + on std::string as -Wrestrict.)
    if (i != 0) members += ',';
    members += "\"k";
    members += std::to_string(i);
    members += "\":[\"v\\n";
    members += std::to_string(i);
    members += "\"]";
  }
  members += "}";
  checkAgree(members);
  std::string both = "[";
  both += members;
  both += ',';
  both += wide;
  both += ',';
  both += members;
  both += ']';
  checkAgree(both);
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += i % 2 != 0 ? "{\"a\":" : "[1,";
  deep += "null";
  for (int i = 199; i >= 0; --i) deep += i % 2 ? "}" : "]";
  checkAgree(deep);
  JsonParseOptions shallow;
  shallow.maxDepth = 150;
  checkAgree(deep, shallow);
  // Still open when the input ends, at every depth of the stack's growth.
  checkAgree(deep.substr(0, deep.size() - 50));
  checkAgree(wide.substr(0, wide.size() - 1));
}

TEST_CASE("the indexed engine keeps views into the input and reuses its scratch") {
  JsonParser parser;
  parser.setEngine(JsonParser::Engine::Indexed);
  CHECK(parser.engine() == JsonParser::Engine::Indexed);
  const std::string text = R"({"plain":"abc","utf8":"caf)"
                           "\xc3\xa9"
                           R"(","esc":"a\nb"})";
  for (int round = 0; round < 3; ++round) {
    Document doc;
    parser.parse(text, doc);
    const Value& root = doc.root();
    const std::string_view plain = root["plain"].asStr();
    CHECK(plain == "abc");
    CHECK(plain.data() >= text.data());
    CHECK(plain.data() < text.data() + text.size());  // a view, not a copy
    CHECK(root["plain"].isPlainAscii());
    CHECK(!root["utf8"].isPlainAscii());
    CHECK(root["utf8"].asStr() == "caf\xc3\xa9");
    CHECK(root["esc"].asStr() == "a\nb");
    CHECK(!(root["esc"].asStr().data() >= text.data() &&
            root["esc"].asStr().data() < text.data() + text.size()));  // unescaped: a copy
  }
  // A ByteBuf input is kept alive by the document.
  Document doc;
  parser.parse(Unpooled::copiedBuffer(std::string_view(R"([1,"two",{"3":[]}])")), doc);
  CHECK(doc.root()[1].asStr() == "two");
  CHECK(doc.keptBuffers().size() == 1);
}
