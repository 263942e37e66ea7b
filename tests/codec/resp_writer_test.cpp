#include <netbuf/codec/redis/resp_writer.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace netbuf;

namespace {

// The bytes a writer call makes in one protocol.
template <class F>
std::string written(RespProtocol p, F&& f,
                    RespWriter::DoubleFormat format = RespWriter::DoubleFormat::Redis70) {
  ByteBuf out = Unpooled::buffer(8);
  RespWriter w(out, p, format);
  f(w);
  return std::string(out.readableStringView());
}

std::string both(RespProtocol p, void (*f)(RespWriter&)) { return written(p, f); }

std::string dbl(double d, RespWriter::DoubleFormat f = RespWriter::DoubleFormat::Redis70) {
  char buf[RespWriter::kMaxDoubleChars];
  return std::string(buf, RespWriter::formatDouble(d, buf, f));
}

constexpr auto R2 = RespProtocol::Resp2;
constexpr auto R3 = RespProtocol::Resp3;

}  // namespace

TEST_CASE("RespWriter: the RESP2 types") {
  CHECK(written(R2, [](RespWriter& w) { w.simpleString("OK"); }) == "+OK\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.simpleError("ERR bad"); }) == "-ERR bad\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.integer(0); }) == ":0\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.integer(-42); }) == ":-42\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.integer(std::numeric_limits<std::int64_t>::min()); }) ==
        ":-9223372036854775808\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.integer(std::numeric_limits<std::int64_t>::max()); }) ==
        ":9223372036854775807\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.bulkString("foobar"); }) == "$6\r\nfoobar\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.bulkString(""); }) == "$0\r\n\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.bulkString(std::string_view("a\r\n\0b", 5)); }) ==
        std::string("$5\r\na\r\n\0b\r\n", 11));
  CHECK(written(R2, [](RespWriter& w) { w.arrayHeader(0); }) == "*0\r\n");
  CHECK(written(R2, [](RespWriter& w) { w.arrayHeader(12345); }) == "*12345\r\n");
  ByteBuf payload = Unpooled::copiedBuffer(std::string_view("xyz"));
  CHECK(written(R2, [&](RespWriter& w) { w.bulkString(payload); }) == "$3\r\nxyz\r\n");
}

TEST_CASE("RespWriter: RESP3 calls map to what redis-server 7.0 sends a RESP2 client") {
  struct Case {
    void (*call)(RespWriter&);
    std::string_view resp3;
    std::string_view resp2;
  };
  const Case cases[] = {
      {[](RespWriter& w) { w.null(); }, "_\r\n", "$-1\r\n"},
      {[](RespWriter& w) { w.nullArray(); }, "_\r\n", "*-1\r\n"},
      {[](RespWriter& w) { w.boolean(true); }, "#t\r\n", ":1\r\n"},
      {[](RespWriter& w) { w.boolean(false); }, "#f\r\n", ":0\r\n"},
      {[](RespWriter& w) { w.doubleValue(1.5); }, ",1.5\r\n", "$3\r\n1.5\r\n"},
      {[](RespWriter& w) { w.doubleValue(0.1); }, ",0.10000000000000001\r\n",
       "$19\r\n0.10000000000000001\r\n"},
      {[](RespWriter& w) { w.doubleValue(INFINITY); }, ",inf\r\n", "$3\r\ninf\r\n"},
      {[](RespWriter& w) { w.doubleValue(-INFINITY); }, ",-inf\r\n", "$4\r\n-inf\r\n"},
      {[](RespWriter& w) { w.bigNumber("-12345678901234567890"); }, "(-12345678901234567890\r\n",
       "$21\r\n-12345678901234567890\r\n"},
      {[](RespWriter& w) { w.mapHeader(3); }, "%3\r\n", "*6\r\n"},
      {[](RespWriter& w) { w.setHeader(2); }, "~2\r\n", "*2\r\n"},
      {[](RespWriter& w) { w.pushHeader(3); }, ">3\r\n", "*3\r\n"},
      {[](RespWriter& w) { w.attributeHeader(1); }, "|1\r\n", ""},
      {[](RespWriter& w) { w.verbatimString("txt", "Some string"); }, "=15\r\ntxt:Some string\r\n",
       "$11\r\nSome string\r\n"},
      {[](RespWriter& w) { w.bulkError("SYNTAX invalid syntax"); },
       "!21\r\nSYNTAX invalid syntax\r\n", "-SYNTAX invalid syntax\r\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.resp3);
    CHECK(both(R3, c.call) == c.resp3);
    CHECK(both(R2, c.call) == c.resp2);
  }
}

TEST_CASE("RespWriter: setProtocol switches the encoding of the following calls") {
  ByteBuf out = Unpooled::buffer(16);
  RespWriter w(out);
  CHECK_FALSE(w.isResp3());
  w.null();
  w.setProtocol(R3);
  CHECK(w.protocol() == R3);
  w.null();
  CHECK(out.readableStringView() == "$-1\r\n_\r\n");
  CHECK(&w.buffer() == &out);
}

TEST_CASE("RespWriter: command writes a multibulk request in both protocols") {
  const std::string_view args[] = {"SET", "key", "", "v a l"};
  const std::string expected = "*4\r\n$3\r\nSET\r\n$3\r\nkey\r\n$0\r\n\r\n$5\r\nv a l\r\n";
  CHECK(written(R2, [&](RespWriter& w) { w.command(args); }) == expected);
  CHECK(written(R3, [&](RespWriter& w) { w.command(args); }) == expected);
  CHECK(written(R2, [&](RespWriter& w) { w.command({}); }) == "*0\r\n");
}

TEST_CASE("RespWriter: formatDouble's Redis70 form is printf's %.17g, infinities spelled out") {
  CHECK(dbl(0.1) == "0.10000000000000001");
  CHECK(dbl(1000) == "1000");
  CHECK(dbl(3) == "3");
  CHECK(dbl(-2.5) == "-2.5");
  CHECK(dbl(1.5e300) == "1.5000000000000001e+300");
  CHECK(dbl(INFINITY) == "inf");
  CHECK(dbl(-INFINITY) == "-inf");
  CHECK(dbl(NAN) == "nan");
  const unsigned seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    char expect[64];
    std::snprintf(expect, sizeof expect, "%.17g", d);
    CHECK(dbl(d) == expect);
  }
}

TEST_CASE("RespWriter: formatDouble's Shortest form reads back to the same double") {
  using F = RespWriter::DoubleFormat;
  CHECK(dbl(0.1, F::Shortest) == "0.1");
  CHECK(dbl(1000, F::Shortest) == "1000");
  CHECK(dbl(1.5e300, F::Shortest) == "1.5e+300");
  CHECK(dbl(1e-5, F::Shortest) == "1e-05");
  CHECK(dbl(0.0001, F::Shortest) == "0.0001");
  CHECK(dbl(1e16, F::Shortest) == "10000000000000000");
  CHECK(dbl(1e17, F::Shortest) == "1e+17");
  CHECK(dbl(-123.456, F::Shortest) == "-123.456");
  CHECK(dbl(0, F::Shortest) == "0");
  CHECK(dbl(INFINITY, F::Shortest) == "inf");
  CHECK(written(
            R3, [](RespWriter& w) { w.doubleValue(0.1); }, F::Shortest) == ",0.1\r\n");
  const unsigned seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 5000; ++i) {
    std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    const std::string s = dbl(d, F::Shortest);
    CAPTURE(s);
    CHECK(s.size() < RespWriter::kMaxDoubleChars);
    CHECK(std::strtod(s.c_str(), nullptr) == d);
    CHECK(s.size() <= dbl(d).size());
  }
}

TEST_CASE("RespWriter: value writes a tree back in the writer's protocol") {
  const RespValue pairs[] = {RespValue::simpleString("k"), RespValue::doubleValue(2.5),
                             RespValue::bulkString("n"), RespValue::null()};
  const RespValue attrPairs[] = {RespValue::simpleString("ttl"), RespValue::integer(3)};
  const RespValue attrs = RespValue::map(attrPairs);
  RespValue withAttr = RespValue::integer(7);
  withAttr.setAttributes(&attrs);
  const RespValue items[] = {RespValue::map(pairs),
                             withAttr,
                             RespValue::boolean(true),
                             RespValue::null('$'),
                             RespValue::null('*'),
                             RespValue::bigNumber("123"),
                             RespValue::verbatimString("mkd:# hi"),
                             RespValue::bulkError("E x"),
                             RespValue::simpleError("ERR y")};
  const RespValue root = RespValue::aggregate(RespType::Array, items);
  CHECK(written(R3, [&](RespWriter& w) { w.value(root); }) ==
        "*9\r\n%2\r\n+k\r\n,2.5\r\n$1\r\nn\r\n_\r\n|1\r\n+ttl\r\n:3\r\n:7\r\n#t\r\n_\r\n_\r\n"
        "(123\r\n=8\r\nmkd:# hi\r\n!3\r\nE x\r\n-ERR y\r\n");
  CHECK(written(R2, [&](RespWriter& w) { w.value(root); }) ==
        "*9\r\n*4\r\n+k\r\n$3\r\n2.5\r\n$1\r\nn\r\n$-1\r\n:7\r\n:1\r\n$-1\r\n*-1\r\n"
        "$3\r\n123\r\n$4\r\n# hi\r\n-E x\r\n-ERR y\r\n");
  const RespValue setItems[] = {RespValue::integer(1)};
  CHECK(written(R3, [&](RespWriter& w) {
          w.value(RespValue::aggregate(RespType::Set, setItems));
          w.value(RespValue::aggregate(RespType::Push, setItems));
        }) == "~1\r\n:1\r\n>1\r\n:1\r\n");
}

TEST_CASE("RespWriter: large payloads grow the buffer once") {
  const std::string big(100000, 'x');
  ByteBuf out = Unpooled::buffer(4);
  RespWriter w(out);
  w.bulkString(big);
  CHECK(out.readableBytes() == big.size() + 11);
  CHECK(out.readableStringView().substr(0, 10) == "$100000\r\nx");
}
