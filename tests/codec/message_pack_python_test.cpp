// Interoperability of netbuf's MessagePack codec with the reference Python implementation
// (python3-msgpack): what MessagePackWriter writes, msgpack.unpackb reads with the right types
// (str as str, bin as bytes, ext as ExtType, timestamps as msgpack.Timestamp in all three forms,
// float32 kept as float32 on the wire), and what Python's packer writes (use_bin_type=True),
// msgpack::decode reads (bytes as Bin, str as Str). tests/codec/msgpack_interop.py does the Python
// half; this file writes/reads the files it checks/emits. A missing python3 or msgpack module is a
// test FAILURE with a clear message, not a skip. NETBUF_PYTHON overrides the interpreter.
#include <netbuf/codec/msgpack/message_pack_writer.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <string>
#include <vector>

#include "support/python_runner.hpp"

using namespace netbuf;

namespace {

const std::filesystem::path kScript =
    std::filesystem::path(__FILE__).parent_path() / "msgpack_interop.py";

/// python3 with the msgpack module, or a failed REQUIRE with the install hint (never a skip).
std::string requirePython() {
  return test::requirePython("msgpack", "Debian: apt-get install python3-msgpack");
}

/// Runs `msgpack_interop.py <mode> <file>`.
test::Output runScript(const std::string& python, const char* mode,
                       const std::filesystem::path& file) {
  return test::run(test::pythonCommand(python, kScript, {mode, file.string()}));
}

std::filesystem::path tempFile(const char* tag) {
  return std::filesystem::temp_directory_path() /
         fmt::format("netbuf_msgpack_{}_{}.bin", static_cast<long>(::getpid()), tag);
}

std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7) & 0xff);
  return v;
}

std::span<const std::byte> asBytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

/// Writes the battery checked by `msgpack_interop.py check` and returns the number of items.
std::size_t writeBattery(MessagePackWriter& w, Document& doc) {
  std::size_t count = 0;
  auto item = [&](const std::string& name) -> MessagePackWriter& {
    ++count;
    return w.packStr(name);
  };
  item("nil").packNil();
  item("bool:true").packBool(true);
  item("bool:false").packBool(false);
  for (std::uint64_t u :
       {std::uint64_t{0}, std::uint64_t{127}, std::uint64_t{128}, std::uint64_t{255},
        std::uint64_t{256}, std::uint64_t{65535}, std::uint64_t{65536}, std::uint64_t{UINT32_MAX},
        std::uint64_t{1} << 32, std::uint64_t{UINT64_MAX}}) {
    item(fmt::format("int:{}", u)).packUInt(u);
    if (u <= INT64_MAX) item(fmt::format("int:{}", u)).packInt(static_cast<std::int64_t>(u));
  }
  for (std::int64_t i :
       {std::int64_t{-1}, std::int64_t{-32}, std::int64_t{-33}, std::int64_t{-128},
        std::int64_t{-129}, std::int64_t{-32768}, std::int64_t{-32769}, std::int64_t{INT32_MIN},
        std::int64_t{INT32_MIN} - 1, std::int64_t{INT64_MIN}})
    item(fmt::format("int:{}", i)).packInt(i);
  item("f32:1.5").packFloat(1.5f);
  item("f32:0.1").packFloat(0.1f);
  item("f32:-3e38").packFloat(-3e38f);
  item("f64:0.1").packDouble(0.1);
  item("f64:1.0").packDouble(1.0);  // float64 even though float32 could hold it
  item("f64:1e300").packDouble(1e300);
  item("f64:nan").packDouble(std::numeric_limits<double>::quiet_NaN());
  item("f64:inf").packDouble(std::numeric_limits<double>::infinity());
  for (std::string s :
       {std::string(), std::string("hello"),
        std::string("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"), std::string(31, 'x'),
        std::string(32, 'x'), std::string(255, 'y'), std::string(256, 'z')})
    item("str:" + s).packStr(s);
  item("str:a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80").packStr(u"a\u00e9\u20ac\U0001F600");
  item("str:a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80").packStr(U"a\u00e9\u20ac\U0001F600");
  {
    std::string rep;
    for (int i = 0; i < 70000; ++i) rep += "ab";
    item("strrep:70000:ab").packStr(rep);
  }
  for (std::size_t n : {0, 1, 255, 256, 65535, 65536}) {
    const std::vector<std::byte> p = pattern(n);
    item(fmt::format("bin:{}", n)).packBin(p);
  }
  for (std::size_t n : {std::size_t{4096}, std::size_t{1} << 20}) {  // as ByteBuf payloads
    ByteBuf payload = Unpooled::copiedBuffer(std::span<const std::byte>(pattern(n)));
    item(fmt::format("bin:{}", n)).packBin(std::move(payload));
  }
  for (int code : {0, 5, 127}) {  // python's ExtType takes 0..127 only
    for (std::size_t n : {1, 2, 3, 4, 8, 16, 17, 255, 256, 65536}) {
      const std::vector<std::byte> data(n, std::byte{0xab});
      item(fmt::format("ext:{}:{}", code, n)).packExt(static_cast<std::int8_t>(code), data);
    }
  }
  const Timestamp stamps[] = {
      {0, 0},
      {UINT32_MAX, 0},
      {std::int64_t{1} << 32, 0},
      {0, 1},
      {1, 999'999'999},
      {(std::int64_t{1} << 34) - 1, 999'999'999},
      {std::int64_t{1} << 34, 0},
      {-1, 0},
      {-1, 500'000'000},
      {-62135596800, 0},  // 0001-01-01
  };
  for (const Timestamp& ts : stamps)
    item(fmt::format("ts:{}:{}", ts.seconds, ts.nanoseconds)).packTimestamp(ts);
  // A map with keys of many types, insertion order kept (not canonical).
  const Value mixed = doc.map({
      {Value::uinteger(1), doc.str("one")},
      {Value::integer(-1), doc.str("minus one")},
      {doc.str("s"), doc.array({Value::uinteger(1), Value::integer(2)})},
      {doc.bin(asBytes(std::string_view("\0k", 2))), Value::nil()},
      {Value::float64(1.5), Value::boolean(true)},
      {doc.array({Value::uinteger(1), doc.str("x")}),
       doc.map({{doc.str("inner"), doc.bin(asBytes("\x01"))}})},
  });
  item("map:mixed").pack(mixed);
  // Canonical: inserted scrambled, read back in the order of the keys' encodings.
  const Value canonicalMap = doc.map({
      {doc.str("aa"), Value::uinteger(1)},
      {Value::integer(-1), Value::uinteger(2)},
      {doc.str("a"),
       doc.map({{doc.str("y"), Value::uinteger(2)}, {doc.str("x"), Value::uinteger(1)}})},
      {doc.str(""), Value::uinteger(3)},
      {doc.array({Value::uinteger(1), Value::uinteger(2)}), Value::uinteger(4)},
      {doc.str("b"), Value::uinteger(5)},
      {Value::uinteger(1), Value::uinteger(6)},
  });
  {
    ByteBuf canon = msgpack::encode(canonicalMap, MessagePackWriteOptions{.canonical = true});
    item("map:canonical").packRaw(canon.readableSpan());
  }
  const Value nested = doc.array({
      Value::nil(),
      Value::boolean(true),
      Value::uinteger(300),
      doc.str("s"),
      doc.bin(asBytes("\x07")),
      doc.array({}),
      doc.map({}),
      doc.array({doc.map({{doc.str("k"), doc.array({Value::uinteger(1), Value::integer(-1)})}})}),
  });
  item("array:nested").pack(nested);
  w.packStr("end").packUInt(count);
  return count;
}

bool writeFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

bool allBytes(std::span<const std::byte> data, std::byte b) {
  for (std::byte c : data)
    if (c != b) return false;
  return true;
}

/// Checks one value Python emitted against its name; returns a failure text or "".
std::string checkPythonItem(const std::string& name, const Value& v) {
  const std::size_t colon = name.find(':');
  const std::string kind = name.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : name.substr(colon + 1);
  auto fail = [&](std::string_view what) {
    return fmt::format("{}: {} (got {:.80})", name, what, v.toDebugString());
  };
  if (kind == "nil") return v.isNil() ? "" : fail("want Nil");
  if (kind == "bool") return v.isBool() && v.asBool() == (arg == "true") ? "" : fail("want Bool");
  if (kind == "int") {
    if (arg[0] == '-') {
      const long long want = std::stoll(arg);
      return v.type() == ValueType::Int && v.asInt64() == want ? "" : fail("want Int");
    }
    const unsigned long long want = std::stoull(arg);
    return v.type() == ValueType::UInt && v.asUInt64() == want ? "" : fail("want UInt");
  }
  if (kind == "f64") {
    const double want = std::strtod(arg.c_str(), nullptr);
    return v.type() == ValueType::Float64 && v.asDouble() == want ? "" : fail("want Float64");
  }
  if (kind == "str") {
    return v.isStr() && !v.hasInvalidUtf8() && v.asStr() == arg ? "" : fail("want this Str");
  }
  if (kind == "strrep") {
    const std::size_t c2 = arg.find(':');
    const std::size_t reps = std::stoul(arg.substr(0, c2));
    const std::string unit = arg.substr(c2 + 1);
    if (!v.isStr() || v.asStr().size() != reps * unit.size()) return fail("want a long Str");
    for (std::size_t i = 0; i < reps; ++i)
      if (v.asStr().substr(i * unit.size(), unit.size()) != unit) return fail("wrong text");
    return "";
  }
  if (kind == "bin") {
    if (!v.isBin()) return fail("want Bin (python bytes)");
    const std::vector<std::byte> want = pattern(std::stoul(arg));
    return std::equal(want.begin(), want.end(), v.asBin().begin(), v.asBin().end())
               ? ""
               : fail("wrong bytes");
  }
  if (kind == "ext") {
    const std::size_t c2 = arg.find(':');
    const int code = std::stoi(arg.substr(0, c2));
    const std::size_t n = std::stoul(arg.substr(c2 + 1));
    return v.isExt() && v.extType() == code && v.extData().size() == n &&
                   allBytes(v.extData(), std::byte{0xab})
               ? ""
               : fail("want this Ext");
  }
  if (kind == "ts" || kind == "dt") {
    const std::size_t c2 = arg.find(':');
    const Timestamp want{std::stoll(arg.substr(0, c2)),
                         static_cast<std::uint32_t>(std::stoul(arg.substr(c2 + 1)))};
    return v.isTimestamp() && v.asTimestamp() == want ? "" : fail("want this Timestamp");
  }
  if (name == "map:mixed") {
    // {1: "one", "s": [1, 2], b"k": None, -7: 2.5}, in this order.
    if (!v.isMap() || v.size() != 4) return fail("want a Map of 4");
    const auto m = v.asMap();
    const bool ok = m[0].key.type() == ValueType::UInt && m[0].key.asUInt64() == 1 &&
                    m[0].value.isStr() && m[0].value.asStr() == "one" && m[1].key.isStr() &&
                    m[1].key.asStr() == "s" && m[1].value.isArray() && m[1].value.size() == 2 &&
                    m[2].key.isBin() && m[2].key.size() == 1 && m[2].value.isNil() &&
                    m[3].key.type() == ValueType::Int && m[3].key.asInt64() == -7 &&
                    m[3].value.type() == ValueType::Float64 && m[3].value.asDouble() == 2.5;
    return ok ? "" : fail("wrong members");
  }
  if (name == "array:nested") {
    // [None, True, 300, "s", b"\x07", [], {}, [{"k": [1, -1]}]]
    if (!v.isArray() || v.size() != 8) return fail("want an Array of 8");
    const auto a = v.asArray();
    const bool ok = a[0].isNil() && a[1].isBool() && a[2].type() == ValueType::UInt &&
                    a[2].asUInt64() == 300 && a[3].isStr() && a[4].isBin() && a[4].size() == 1 &&
                    a[5].isArray() && a[5].size() == 0 && a[6].isMap() && a[6].size() == 0 &&
                    a[7].isArray() && a[7][0].isMap() && a[7][0]["k"][1].asInt64() == -1;
    return ok ? "" : fail("wrong elements");
  }
  return fail("unknown item name (the script and this test disagree)");
}

}  // namespace

TEST_CASE("MessagePack interop: Python's msgpack reads what MessagePackWriter writes") {
  const std::string python = requirePython();
  Document doc;
  // Through a composite writer: payloads of >= 1 KiB passed as ByteBuf are zero-copy components,
  // so the composite path is what Python checks.
  CompositeByteBuf composite;
  std::size_t count = 0;
  {
    MessagePackWriter w(composite, MessagePackWriteOptions{.zeroCopyThreshold = 1024});
    count = writeBattery(w, doc);
  }
  CHECK(composite.numComponents() > 2);
  // The same battery through a plain ByteBuf gives the same bytes.
  ByteBuf plain = Unpooled::buffer();
  {
    Document doc2;
    MessagePackWriter w(plain);
    CHECK(writeBattery(w, doc2) == count);
  }
  const ByteBuf flat = composite.copy();
  REQUIRE(flat.readableStringView() == plain.readableStringView());

  const std::filesystem::path file = tempFile("check");
  REQUIRE(writeFile(file, flat.readableStringView()));
  const test::Output r = runScript(python, "check", file);
  std::filesystem::remove(file);
  INFO("python said:\n" << r.text);
  CHECK(r.status == 0);
  CHECK(r.text.find(fmt::format("ok: {} items", count)) != std::string::npos);
}

TEST_CASE("MessagePack interop: the check script rejects wrong input (the test can fail)") {
  const std::string python = requirePython();
  // "bin:3" carried as a str, a float32 named f64, and a missing end marker.
  ByteBuf out = Unpooled::buffer();
  {
    MessagePackWriter w(out);
    w.packStr("bin:3").packStrUnchecked(std::string_view("\x00\x07\x0e", 3));
    w.packStr("f64:1.5").packFloat(1.5f);
    w.packStr("int:5").packUInt(6);
  }
  const std::filesystem::path file = tempFile("bad");
  REQUIRE(writeFile(file, out.readableStringView()));
  const test::Output r = runScript(python, "check", file);
  std::filesystem::remove(file);
  INFO("python said:\n" << r.text);
  CHECK(r.status != 0);
  CHECK(r.text.find("bin:3: got str") != std::string::npos);
  CHECK(r.text.find("want 0xcb") != std::string::npos);
  CHECK(r.text.find("no end marker") != std::string::npos);
}

TEST_CASE("MessagePack interop: msgpack::decode reads what Python's msgpack writes") {
  const std::string python = requirePython();
  const std::filesystem::path file = tempFile("emit");
  const test::Output r = runScript(python, "emit", file);
  INFO("python said:\n" << r.text);
  REQUIRE(r.status == 0);
  const std::string bytes = readFile(file);
  std::filesystem::remove(file);
  REQUIRE(!bytes.empty());

  std::span<const std::byte> rest = asBytes(bytes);
  std::size_t count = 0;
  bool sawEnd = false;
  while (!rest.empty()) {
    Document nameDoc;
    rest = rest.subspan(msgpack::decodeOne(rest, nameDoc));
    REQUIRE(nameDoc.root().isStr());
    const std::string name(nameDoc.root().asStr());
    REQUIRE(!rest.empty());
    Document valueDoc;
    rest = rest.subspan(msgpack::decodeOne(rest, valueDoc));
    if (name == "end") {
      sawEnd = true;
      CHECK(valueDoc.root().asUInt64() == count);
      continue;
    }
    ++count;
    const std::string failure = checkPythonItem(name, valueDoc.root());
    CHECK_MESSAGE(failure.empty(), failure);
  }
  CHECK(sawEnd);
  CHECK(count >= 40);
}
