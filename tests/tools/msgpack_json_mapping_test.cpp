// The MessagePack <-> JSON mapping behind `netbuf msgpack decode | netbuf msgpack encode`
// (tools/data_commands.cpp): MessagePack decoded to a Document, written as JSON with
// extendedTypes, parsed back with extendedTypes and encoded again gives the input byte for byte,
// for every MessagePack type in every width, each in its shortest encoding. float32 goes through
// the {"$float32": x} form.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <random>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

using Bytes = std::vector<std::uint8_t>;

/// Builds one MessagePack value from pieces.
struct Wire {
  Bytes b;
  Wire& operator()(std::initializer_list<int> bytes) {
    for (int x : bytes) b.push_back(static_cast<std::uint8_t>(x));
    return *this;
  }
  Wire& repeat(std::uint8_t byte, std::size_t n) {
    b.insert(b.end(), n, byte);
    return *this;
  }
  Wire& be(std::uint64_t v, int width) {  // big endian, `width` bytes
    for (int k = width - 1; k >= 0; --k) b.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
    return *this;
  }
};

std::string hex(const Bytes& b) {
  std::string s;
  const char* digits = "0123456789abcdef";
  for (std::size_t k = 0; k < b.size() && k < 48; ++k) {
    s += digits[b[k] >> 4];
    s += digits[b[k] & 15];
  }
  if (b.size() > 48) s += "...";
  return s;
}

/// decode -> JSON (extendedTypes) -> parse (extendedTypes) -> encode; returns the bytes, and the
/// JSON text through `json`.
Bytes roundTrip(const Bytes& in, std::string* json = nullptr, bool canonicalJson = false) {
  Document doc;
  const auto bytes = std::as_bytes(std::span(in));
  const std::size_t used = msgpack::decodeOne(bytes, doc, {}, 0);
  REQUIRE(used == in.size());
  ByteBuf text = Unpooled::buffer(in.size() * 2 + 64);
  json::write(doc.root(), text, {.canonical = canonicalJson, .extendedTypes = true});
  const std::string s(text.readableStringView());
  if (json != nullptr) *json = s;
  Document back;
  json::parse(s, back, {.extendedTypes = true});
  ByteBuf out = Unpooled::buffer(in.size() + 16);
  msgpack::encode(back.root(), out);
  const auto v = out.readableStringView();
  return Bytes(v.begin(), v.end());
}

Bytes float32Wire(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return Wire{}({0xca}).be(u, 4).b;
}

std::vector<Bytes> corpus() {
  std::vector<Bytes> c;
  auto add = [&](const Wire& w) { c.push_back(w.b); };
  // nil, bool
  add(Wire{}({0xc0}));
  add(Wire{}({0xc2}));
  add(Wire{}({0xc3}));
  // fixints, uint8..uint64 at both ends of their range
  add(Wire{}({0x00}));
  add(Wire{}({0x7f}));
  add(Wire{}({0xe0}));  // -32
  add(Wire{}({0xff}));  // -1
  add(Wire{}({0xcc, 0x80}));
  add(Wire{}({0xcc, 0xff}));
  add(Wire{}({0xcd}).be(0x100, 2));
  add(Wire{}({0xcd}).be(0xffff, 2));
  add(Wire{}({0xce}).be(0x10000, 4));
  add(Wire{}({0xce}).be(0xffffffff, 4));
  add(Wire{}({0xcf}).be(0x100000000, 8));
  add(Wire{}({0xcf}).be(UINT64_MAX, 8));
  // int8..int64
  add(Wire{}({0xd0, 0xdf}));  // -33
  add(Wire{}({0xd0, 0x80}));  // -128
  add(Wire{}({0xd1}).be(0xff7f, 2));
  add(Wire{}({0xd1}).be(0x8000, 2));
  add(Wire{}({0xd2}).be(0xffff7fff, 4));
  add(Wire{}({0xd2}).be(0x80000000, 4));
  add(Wire{}({0xd3}).be(0xffffffff7fffffff, 8));
  add(Wire{}({0xd3}).be(0x8000000000000000, 8));
  // float32 (the issue's example first), float64
  add(Wire{}({0xca, 0x3f, 0xc0, 0x00, 0x00}));  // 1.5
  for (float f : {0.0F, -0.0F, 1.0F, 0.1F, -3.25F, 1e-45F, 1.17549435e-38F, 16777216.0F,
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), 3.4028235e38F})
    c.push_back(float32Wire(f));
  add(Wire{}({0xcb}).be(0x3ff8000000000000, 8));  // 1.5
  add(Wire{}({0xcb}).be(0x3ff0000000000000, 8));  // 1.0
  add(Wire{}({0xcb}).be(0x8000000000000000, 8));  // -0.0
  add(Wire{}({0xcb}).be(0x0000000000000001, 8));  // smallest subnormal
  add(Wire{}({0xcb}).be(0x7fefffffffffffff, 8));  // DBL_MAX
  add(Wire{}({0xcb}).be(0x3fb999999999999a, 8));  // 0.1
  // str: fixstr, str8, str16, str32
  add(Wire{}({0xa0}));
  add(Wire{}({0xa1, 'a'}));
  add(Wire{}({0xbf}).repeat('s', 31));
  add(Wire{}({0xd9, 32}).repeat('s', 32));
  add(Wire{}({0xd9, 0xff}).repeat('s', 255));
  add(Wire{}({0xda}).be(256, 2).repeat('s', 256));
  add(Wire{}({0xda}).be(0xffff, 2).repeat('s', 0xffff));
  add(Wire{}({0xdb}).be(0x10000, 4).repeat('s', 0x10000));
  add(Wire{}({0xa4, 0xc3, 0xa9, 0x22, 0x0a}));  // "é\"\n": escapes
  // bin8, bin16, bin32
  add(Wire{}({0xc4, 0x00}));
  add(Wire{}({0xc4, 0x03, 0x00, 0xff, 0x80}));
  add(Wire{}({0xc4, 0xff}).repeat(0xfe, 255));
  add(Wire{}({0xc5}).be(256, 2).repeat(0x01, 256));
  add(Wire{}({0xc6}).be(0x10000, 4).repeat(0x02, 0x10000));
  // arrays: fixarray, array16, array32
  add(Wire{}({0x90}));
  add(Wire{}({0x9f}).repeat(0xc0, 15));
  add(Wire{}({0xdc}).be(16, 2).repeat(0x01, 16));
  add(Wire{}({0xdd}).be(0x10000, 4).repeat(0xc3, 0x10000));
  // maps (string keys): fixmap, map16, map32
  add(Wire{}({0x80}));
  {
    Wire w;
    w({0x8f});
    for (int k = 0; k < 15; ++k) w({0xa2, 'k', 'a' + k, k});
    add(w);
  }
  {
    Wire w;
    w({0xde}).be(16, 2);
    for (int k = 0; k < 16; ++k) w({0xa2, 'k', 'a' + k, 0xc2});
    add(w);
  }
  {
    Wire w;
    w({0xdf}).be(0x10000, 4);
    for (std::uint64_t k = 0; k < 0x10000; ++k)  // distinct printable keys "aaaa".."pppp"
      w({0xa4, 'a' + static_cast<int>(k >> 12), 'a' + static_cast<int>((k >> 8) & 15),
         'a' + static_cast<int>((k >> 4) & 15), 'a' + static_cast<int>(k & 15), 0x00});
    add(w);
  }
  // ext: fixext 1/2/4/8/16, ext8 (0 and 3 bytes, 255), ext16, ext32; negative types
  add(Wire{}({0xd4, 0x05, 0x78}));
  add(Wire{}({0xd5, 0x80}).repeat(1, 2));  // type -128
  add(Wire{}({0xd6, 0x7f}).repeat(2, 4));
  add(Wire{}({0xd7, 0x01}).repeat(3, 8));
  add(Wire{}({0xd8, 0xfe}).repeat(4, 16));  // type -2
  add(Wire{}({0xc7, 0x00, 0x05}));
  add(Wire{}({0xc7, 0x03, 0x05, 0x01, 0x02, 0x03}));
  add(Wire{}({0xc7, 0xff, 0x06}).repeat(5, 255));
  add(Wire{}({0xc8}).be(256, 2)({0x07}).repeat(6, 256));
  add(Wire{}({0xc9}).be(0x10000, 4)({0x08}).repeat(7, 0x10000));
  // timestamps: 32-bit, 64-bit, 96-bit forms
  add(Wire{}({0xd6, 0xff}).be(1700000000, 4));
  add(Wire{}({0xd7, 0xff}).be((std::uint64_t{5} << 34) | (std::uint64_t{1} << 33), 8));
  add(Wire{}({0xd7, 0xff}).be((std::uint64_t{999999999} << 34) | 0, 8));
  add(Wire{}({0xc7, 0x0c, 0xff}).be(7, 4).be(static_cast<std::uint64_t>(-1700000000LL), 8));
  add(Wire{}({0xc7, 0x0c, 0xff}).be(0, 4).be(std::uint64_t{1} << 34, 8));
  // nested: a map holding every kind
  add(Wire{}({0x84, 0xa1, 'f',  0xca, 0x3f, 0xc0, 0x00, 0x00, 0xa1, 'a',  0x93, 0xca,
              0x80, 0x00, 0x00, 0x00, 0xc4, 0x01, 0x00, 0xd4, 0x01, 0x02, 0xa1, 't',
              0xd6, 0xff, 0,    0,    0,    1,    0xa1, 'm',  0x81, 0xa0, 0x90}));
  return c;
}

}  // namespace

TEST_CASE("msgpack -> JSON -> msgpack: byte for byte for every type and width") {
  const std::vector<Bytes> values = corpus();
  CHECK(values.size() == 80);
  for (const Bytes& in : values) {
    CAPTURE(hex(in));
    CHECK(hex(roundTrip(in)) == hex(in));
    CHECK(roundTrip(in) == in);
  }
}

TEST_CASE("float32 is written as {\"$float32\": x} with extendedTypes, a bare number without") {
  std::string json;
  roundTrip(Wire{}({0xca, 0x3f, 0xc0, 0x00, 0x00}).b, &json);
  CHECK(json == R"({"$float32":1.5})");
  roundTrip(float32Wire(0.1F), &json);
  CHECK(json == R"({"$float32":0.1})");
  roundTrip(float32Wire(-0.0F), &json);
  CHECK(json == R"({"$float32":-0.0})");
  roundTrip(float32Wire(1.0F), &json);
  CHECK(json == R"({"$float32":1.0})");
  roundTrip(float32Wire(0.1F), &json, true);
  CHECK(json == R"({"$float32":0.10000000149011612})");
  CHECK(json::toString(Value::float32(2.5F), {.pretty = true, .extendedTypes = true}) ==
        R"({"$float32": 2.5})");
  CHECK(json::toString(Value::float32(2.5F)) == "2.5");
  CHECK_THROWS_AS(json::toString(Value::float32(NAN), {.extendedTypes = true}), EncoderError);

  // The parser: any number that rounds to a finite float; integers too.
  Document d;
  json::parse(R"([{"$float32":1.1},{"$float32":3},{"$float32":-2},{"$float32":3.4028235e38}])", d,
              {.extendedTypes = true});
  REQUIRE(d.root().size() == 4);
  CHECK(d.root()[0].asFloat32() == 1.1F);
  CHECK(d.root()[1].asFloat32() == 3.0F);
  CHECK(d.root()[2].asFloat32() == -2.0F);
  CHECK(d.root()[3].asFloat32() == std::numeric_limits<float>::max());
  for (const char* bad :
       {R"({"$float32":"1"})", R"({"$float32":null})", R"({"$float32":[1]})",
        R"({"$float32":3.5e38})", R"({"$float32":-1e39})", R"({"$float32":1e400})"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(json::parse(bad, d, {.extendedTypes = true}), JsonError);
  }
  // Without extendedTypes it is an ordinary object.
  json::parse(R"({"$float32":1.5})", d);
  CHECK(d.root().isMap());
}

TEST_CASE("float32: the shortest text reads back as the same float, over random bit patterns") {
  std::mt19937 rng(20261203);
  std::size_t checked = 0;
  for (int k = 0; k < 300000; ++k) {
    std::uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, 4);
    if (!std::isfinite(f)) continue;
    const std::string text = json::toString(Value::float32(f), {.extendedTypes = true});
    Document d;
    json::parse(text, d, {.extendedTypes = true});
    const float back = d.root().asFloat32();
    std::uint32_t v;
    std::memcpy(&v, &back, 4);
    CAPTURE(text);
    REQUIRE(v == u);
    ++checked;
  }
  CHECK(checked > 250000);
}
