#include <netbuf/codec/msgpack/message_pack_reader.hpp>
// (first include: proves the header is self-contained)

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <optional>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

using Bytes = std::vector<std::byte>;

Bytes B(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(static_cast<std::byte>(x));
  return b;
}
Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Bytes filled(Bytes head, std::size_t n, int byte) {
  head.insert(head.end(), n, static_cast<std::byte>(byte));
  return head;
}

Value decodeRoot(const Bytes& in, Document& doc, const MessagePackReadOptions& o = {}) {
  msgpack::decode(std::span<const std::byte>(in), doc, o);
  return doc.root();
}

template <class F>
MessagePackError errorOf(F&& f) {
  try {
    f();
  } catch (const MessagePackError& e) {
    return e;
  }
  FAIL("no MessagePackError thrown");
  throw std::logic_error("unreachable");
}

MessagePackError decodeError(const Bytes& in, const MessagePackReadOptions& o = {}) {
  return errorOf([&] {
    Document doc;
    msgpack::decode(std::span<const std::byte>(in), doc, o);
  });
}

#define CHECK_ERR(e, expectedCode, expectedOffset) \
  do {                                             \
    const MessagePackError err_ = (e);             \
    CHECK(err_.code() == (expectedCode));          \
    CHECK(err_.offset() == (expectedOffset));      \
  } while (0)

}  // namespace

TEST_CASE("integers at every format boundary") {
  Document d;
  CHECK(decodeRoot(B({0x00}), d).type() == ValueType::UInt);
  CHECK(decodeRoot(B({0x7f}), d) == Value::uinteger(127));
  CHECK(decodeRoot(B({0xcc, 0x80}), d) == Value::uinteger(128));
  CHECK(decodeRoot(B({0xcc, 0xff}), d) == Value::uinteger(255));
  CHECK(decodeRoot(B({0xcd, 0x01, 0x00}), d) == Value::uinteger(256));
  CHECK(decodeRoot(B({0xcd, 0xff, 0xff}), d) == Value::uinteger(65535));
  CHECK(decodeRoot(B({0xce, 0xff, 0xff, 0xff, 0xff}), d) == Value::uinteger(UINT32_MAX));
  CHECK(decodeRoot(B({0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), d) ==
        Value::uinteger(UINT64_MAX));
  // Non-minimal encodings decode to the same value.
  CHECK(decodeRoot(B({0xcf, 0, 0, 0, 0, 0, 0, 0, 1}), d) == Value::uinteger(1));
  CHECK(decodeRoot(B({0xcf, 0, 0, 0, 0, 0, 0, 0, 1}), d).type() == ValueType::UInt);
  // Negative fixint and signed forms: Int for negative numbers, UInt for the others.
  CHECK(decodeRoot(B({0xe0}), d) == Value::integer(-32));
  CHECK(decodeRoot(B({0xe0}), d).type() == ValueType::Int);
  CHECK(decodeRoot(B({0xff}), d) == Value::integer(-1));
  CHECK(decodeRoot(B({0xd0, 0xdf}), d) == Value::integer(-33));
  CHECK(decodeRoot(B({0xd0, 0x80}), d) == Value::integer(-128));
  CHECK(decodeRoot(B({0xd0, 0x05}), d).type() == ValueType::UInt);
  CHECK(decodeRoot(B({0xd0, 0x05}), d).asUInt64() == 5);
  CHECK(decodeRoot(B({0xd1, 0x80, 0x00}), d) == Value::integer(-32768));
  CHECK(decodeRoot(B({0xd1, 0x7f, 0xff}), d).type() == ValueType::UInt);
  CHECK(decodeRoot(B({0xd2, 0x80, 0, 0, 0}), d) == Value::integer(INT32_MIN));
  CHECK(decodeRoot(B({0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}), d) == Value::integer(INT64_MIN));
  CHECK(decodeRoot(B({0xd3, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), d) ==
        Value::uinteger(INT64_MAX));
}

TEST_CASE("nil, bool, floats") {
  Document d;
  CHECK(decodeRoot(B({0xc0}), d).isNil());
  CHECK(decodeRoot(B({0xc2}), d) == Value::boolean(false));
  CHECK(decodeRoot(B({0xc3}), d) == Value::boolean(true));
  const Value f = decodeRoot(B({0xca, 0x3f, 0xc0, 0, 0}), d);
  CHECK(f.type() == ValueType::Float32);
  CHECK(f.asFloat32() == 1.5f);
  const Value g = decodeRoot(B({0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}), d);
  CHECK(g.type() == ValueType::Float64);
  CHECK(g.asDouble() == 1.5);
  CHECK(!(f == g));  // Float32 and Float64 never compare equal
}

TEST_CASE("str at every length boundary, zero copy") {
  for (std::size_t n : {0u, 1u, 31u, 32u, 255u, 256u, 65535u, 65536u, 70000u}) {
    CAPTURE(n);
    Bytes head;
    if (n <= 31) {
      head = B({0xa0 | static_cast<int>(n)});
    } else if (n <= 255) {
      head = B({0xd9, static_cast<int>(n)});
    } else if (n <= 65535) {
      head = B({0xda, static_cast<int>(n >> 8), static_cast<int>(n & 0xff)});
    } else {
      head = B({0xdb, 0, static_cast<int>(n >> 16), static_cast<int>((n >> 8) & 0xff),
                static_cast<int>(n & 0xff)});
    }
    const Bytes in = filled(head, n, 'x');
    Document d;
    const Value v = decodeRoot(in, d);
    REQUIRE(v.isStr());
    CHECK(v.asStr().size() == n);
    CHECK(v.asStr() == std::string(n, 'x'));
    CHECK(reinterpret_cast<const std::byte*>(v.asStr().data()) == in.data() + head.size());
    // Any shorter input is truncated at the str's header.
    CHECK_ERR(decodeError(Bytes(in.begin(), in.end() - 1)), MessagePackErrc::Truncated, 0u);
  }
  // Non-minimal forms decode too.
  Document d;
  CHECK(decodeRoot(B({0xdb, 0, 0, 0, 1, 'a'}), d).asStr() == "a");
  CHECK(decodeRoot(B({0xd9, 0}), d).asStr().empty());
}

TEST_CASE("bin and ext are zero copy; retainedSlice shares the input buffer") {
  ByteBuf buf =
      Unpooled::copiedBuffer(std::string_view("\x82\xa1"
                                              "b\xc4\x03xyz\xa1"
                                              "e\xd5\x07pq",
                                              14));
  const std::byte* base = buf.readPtr();
  Document d = msgpack::decode(std::move(buf));
  const Value& bin = d.root()["b"];
  REQUIRE(bin.isBin());
  CHECK(bin.asBin().data() == base + 5);
  ByteBuf slice = d.retainedSlice(bin);
  CHECK(slice.readPtr() == base + 5);
  CHECK(slice.readableStringView() == "xyz");
  const Value& ext = d.root()["e"];
  CHECK(ext.extType() == 7);
  CHECK(ext.extData().data() == base + 12);
  CHECK(ext.extData().size() == 2);
}

TEST_CASE("bin8/16/32, ext forms and fixext sizes") {
  Document d;
  CHECK(decodeRoot(B({0xc4, 0}), d).asBin().empty());
  CHECK(decodeRoot(filled(B({0xc5, 0x01, 0x00}), 256, 1), d).asBin().size() == 256);
  CHECK(decodeRoot(filled(B({0xc6, 0, 0, 0x01, 0x00}), 256, 1), d).asBin().size() == 256);
  const int fix[] = {0xd4, 0xd5, 0xd6, 0xd7, 0xd8};
  const std::size_t len[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 5; ++i) {
    const Value v = decodeRoot(filled(B({fix[i], 5}), len[i], 9), d);
    CHECK(v.extType() == 5);
    CHECK(v.extData().size() == len[i]);
  }
  CHECK(decodeRoot(filled(B({0xc7, 3, 0x80}), 3, 0), d).extType() == -128);
  CHECK(decodeRoot(filled(B({0xc8, 0, 3, 1}), 3, 0), d).extData().size() == 3);
  CHECK(decodeRoot(filled(B({0xc9, 0, 0, 0, 3, 1}), 3, 0), d).extData().size() == 3);
}

TEST_CASE("timestamps: all three forms, invalid nanoseconds and lengths") {
  Document d;
  CHECK(decodeRoot(B({0xd6, 0xff, 0, 0, 0, 5}), d).asTimestamp() == Timestamp{5, 0});
  // 64-bit: nsec in the upper 30 bits, sec in the lower 34 bits.
  const std::uint64_t x = (std::uint64_t{999999999} << 34) | ((std::uint64_t{1} << 34) - 1);
  Bytes t64 = B({0xd7, 0xff});
  for (int i = 7; i >= 0; --i) t64.push_back(static_cast<std::byte>(x >> (8 * i)));
  CHECK(decodeRoot(t64, d).asTimestamp() ==
        Timestamp{static_cast<std::int64_t>((std::uint64_t{1} << 34) - 1), 999999999});
  // 96-bit: nsec then signed seconds.
  CHECK(
      decodeRoot(B({0xc7, 12, 0xff, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}), d)
          .asTimestamp() == Timestamp{-2, 1});
  // ext8 carrying a 4-byte timestamp is accepted too.
  CHECK(decodeRoot(B({0xc7, 4, 0xff, 0, 0, 1, 0}), d).asTimestamp() == Timestamp{256, 0});
  // Invalid nanoseconds (1e9) in both forms that carry them.
  const std::uint64_t bad = std::uint64_t{1000000000} << 34;
  Bytes b64 = B({0xd7, 0xff});
  for (int i = 7; i >= 0; --i) b64.push_back(static_cast<std::byte>(bad >> (8 * i)));
  CHECK_ERR(decodeError(b64), MessagePackErrc::InvalidTimestamp, 0u);
  CHECK_ERR(decodeError(B({0x91, 0xc7, 12, 0xff, 0x3b, 0x9a, 0xca, 0x00, 0, 0, 0, 0, 0, 0, 0, 0})),
            MessagePackErrc::InvalidTimestamp, 1u);
  // Invalid lengths.
  CHECK_ERR(decodeError(B({0xd4, 0xff, 0})), MessagePackErrc::InvalidTimestamp, 0u);
  CHECK_ERR(decodeError(B({0xd8, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})),
            MessagePackErrc::InvalidTimestamp, 0u);
  CHECK_ERR(decodeError(B({0xc7, 0, 0xff})), MessagePackErrc::InvalidTimestamp, 0u);
}

TEST_CASE("arrays and maps at the fix/16/32 boundaries") {
  Document d;
  CHECK(decodeRoot(filled(B({0x9f}), 15, 1), d).asArray().size() == 15);
  CHECK(decodeRoot(filled(B({0xdc, 0, 16}), 16, 1), d).asArray().size() == 16);
  CHECK(decodeRoot(filled(B({0xdd, 0, 0, 0, 16}), 16, 1), d).asArray().size() == 16);
  Bytes m15 = B({0x8f});
  for (int i = 0; i < 15; ++i) m15 = cat(m15, B({i, 0xc0}));
  CHECK(decodeRoot(m15, d).asMap().size() == 15);
  Bytes m16 = B({0xde, 0, 16});
  for (int i = 0; i < 16; ++i) m16 = cat(m16, B({i, 0xc0}));
  const Value m = decodeRoot(m16, d);
  CHECK(m.asMap().size() == 16);
  CHECK(m.asMap()[15].key == Value::uinteger(15));
  CHECK(decodeRoot(B({0xdf, 0, 0, 0, 1, 0xa1, 'k', 0x90}), d)["k"].asArray().empty());
  CHECK(decodeRoot(B({0x80}), d).asMap().empty());
}

TEST_CASE("nested document and msgpack-c style example") {
  Document d;
  const Bytes in =
      B({0x83, 0xa1, 'z', 0xa1, 'z', 0xa1, 'a', 0xa1, 'a', 0xa1, 'c', 0x92, 0xa1, '2', 0xa1, '1'});
  const Value v = decodeRoot(in, d);
  CHECK(v["z"].asStr() == "z");
  CHECK(v["c"][1].asStr() == "1");
  CHECK(msgpack::decodeOne(std::span<const std::byte>(cat(in, B({0x01}))), d) == in.size());
}

TEST_CASE("truncation at every prefix reports Truncated, never crashes") {
  const Bytes msgs[] = {
      B({0x83, 0xa1, 'z',  0xa1, 'z', 0xa1, 'a', 0xcd, 1, 2,    0xa1, 'c', 0x92,
         0xcb, 0x3f, 0xf8, 0,    0,   0,    0,   0,    0, 0xc4, 2,    'x', 'y'}),
      B({0x92, 0x91, 0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0xd9, 3, 'a', 'b', 'c'}),
      B({0xdd, 0, 0, 0, 2, 0xc7, 1, 3, 0, 0xcf, 0, 0, 0, 0, 0, 0, 0, 7}),
  };
  for (const Bytes& m : msgs) {
    Document full;
    decodeRoot(m, full);  // the whole message is valid
    for (std::size_t n = 0; n < m.size(); ++n) {
      CAPTURE(n);
      const MessagePackError e = decodeError(Bytes(m.begin(), m.begin() + static_cast<long>(n)));
      CHECK(e.code() == MessagePackErrc::Truncated);
      CHECK(e.offset() <= n);
    }
  }
  // The offset is the header of the item that does not fit, or the end for a missing element.
  CHECK_ERR(decodeError(B({0x92, 0x92, 0x01, 0x02})), MessagePackErrc::Truncated, 4u);
  CHECK_ERR(decodeError(B({0x91, 0xcd, 0x01})), MessagePackErrc::Truncated, 1u);
  CHECK_ERR(decodeError(B({})), MessagePackErrc::Truncated, 0u);
  // baseOffset shifts every offset.
  const MessagePackError e = errorOf([] {
    Document d;
    const Bytes in = B({0x91, 0xcd, 0x01});
    msgpack::decode(std::span<const std::byte>(in), d, {}, 1000);
  });
  CHECK(e.offset() == 1001u);
}

TEST_CASE("0xc1 anywhere is ReservedByte at its offset") {
  CHECK_ERR(decodeError(B({0xc1})), MessagePackErrc::ReservedByte, 0u);
  CHECK_ERR(decodeError(B({0x93, 1, 2, 0xc1})), MessagePackErrc::ReservedByte, 3u);
  CHECK_ERR(decodeError(B({0x81, 0xc1, 1})), MessagePackErrc::ReservedByte, 1u);
  // Inside a payload it is just a byte.
  Document d;
  CHECK(decodeRoot(B({0xc4, 1, 0xc1}), d).asBin().size() == 1);
}

TEST_CASE("declared lengths past the end or above limits allocate nothing") {
  const Bytes huge[] = {
      B({0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}), B({0xc6, 0xff, 0xff, 0xff, 0xff, 1}),
      B({0xc9, 0xff, 0xff, 0xff, 0xff, 1, 1}), B({0xdd, 0xff, 0xff, 0xff, 0xff, 1, 2}),
      B({0xdf, 0xff, 0xff, 0xff, 0xff, 1, 2})};
  MessagePackReadOptions big;
  big.limits.maxStrLength = big.limits.maxBinLength = big.limits.maxExtLength = SIZE_MAX;
  big.limits.maxContainerLength = SIZE_MAX;
  big.limits.maxMessageSize = SIZE_MAX;
  for (const Bytes& in : huge) {
    Document d;
    const MessagePackError def =
        errorOf([&] { msgpack::decode(std::span<const std::byte>(in), d); });
    CHECK(def.offset() == 0u);
    CHECK(def.value() == 0xffffffffu);  // the limit error names the declared length
    CHECK(d.arenaReserved() == 0u);
    const MessagePackError e =
        errorOf([&] { msgpack::decode(std::span<const std::byte>(in), d, big); });
    CHECK(e.code() == MessagePackErrc::Truncated);
    CHECK(d.arenaReserved() == 0u);
  }
  CHECK(decodeError(huge[0]).code() == MessagePackErrc::StrLengthLimit);
  CHECK(decodeError(huge[1]).code() == MessagePackErrc::BinLengthLimit);
  CHECK(decodeError(huge[2]).code() == MessagePackErrc::ExtLengthLimit);
  CHECK(decodeError(huge[3]).code() == MessagePackErrc::ContainerLengthLimit);
  const MessagePackError e = decodeError(huge[4]);
  CHECK(e.code() == MessagePackErrc::ContainerLengthLimit);
  CHECK(e.limit() == std::size_t{1} << 24);
  // Limits are exact: a length equal to the limit passes.
  MessagePackReadOptions o;
  o.limits.maxStrLength = 3;
  Document d;
  CHECK(decodeRoot(B({0xa3, 'a', 'b', 'c'}), d, o).asStr() == "abc");
  const MessagePackError s = decodeError(B({0x91, 0xa4, 'a', 'b', 'c', 'd'}), o);
  CHECK(s.code() == MessagePackErrc::StrLengthLimit);
  CHECK(s.offset() == 1u);
  CHECK(s.value() == 4u);
  CHECK(s.limit() == 3u);
}

TEST_CASE("maxMessageSize") {
  MessagePackReadOptions o;
  o.limits.maxMessageSize = 4;
  Document d;
  CHECK(decodeRoot(B({0x93, 1, 2, 3}), d, o).asArray().size() == 3);
  const MessagePackError e = decodeError(B({0x94, 1, 2, 3, 4}), o);
  CHECK(e.code() == MessagePackErrc::MessageSizeLimit);
  CHECK(e.offset() == 0u);
  CHECK(e.limit() == 4u);
  CHECK(decodeError(B({0xa4, 'a', 'b', 'c', 'd'}), o).code() == MessagePackErrc::MessageSizeLimit);
  // A small value followed by more bytes is TrailingBytes, not a size error.
  CHECK(decodeError(B({0x01, 2, 3, 4, 5, 6}), o).code() == MessagePackErrc::TrailingBytes);
}

TEST_CASE("depth limit: nesting bombs fail cleanly") {
  const Bytes bomb = filled({}, 100000, 0x91);
  const MessagePackError e = decodeError(bomb);
  CHECK(e.code() == MessagePackErrc::DepthLimit);
  CHECK(e.offset() == 512u);
  CHECK(e.value() == 513u);
  CHECK(e.limit() == 512u);
  // Exactly maxDepth levels are fine; with a huge maxDepth the explicit stack grows on the heap.
  MessagePackReadOptions o;
  o.limits.maxDepth = 3;
  Document d;
  CHECK(decodeRoot(B({0x91, 0x91, 0x91, 0x01}), d, o)[0][0][0] == Value::uinteger(1));
  CHECK(decodeError(B({0x91, 0x91, 0x91, 0x90}), o).code() == MessagePackErrc::DepthLimit);
  o.limits.maxDepth = 200000;
  const Bytes deep = cat(filled({}, 100000, 0x91), B({0xc0}));
  Document big;
  CHECK(decodeRoot(deep, big, o).isArray());
  MessagePackReader r{std::span<const std::byte>(deep), o};
  r.skip();
  CHECK(r.atEnd());
  // maps as well
  CHECK(decodeError(filled({}, 100000, 0x81)).code() == MessagePackErrc::DepthLimit);
}

TEST_CASE("duplicate keys") {
  // Int 1 and UInt 1 in different encodings are the same key.
  const MessagePackError e = decodeError(B({0x82, 0x01, 0xc0, 0xd3, 0, 0, 0, 0, 0, 0, 0, 1, 0xc0}));
  CHECK(e.code() == MessagePackErrc::DuplicateKey);
  CHECK(e.offset() == 3u);
  CHECK_ERR(decodeError(B({0x83, 0xa1, 'a', 1, 0xa1, 'b', 2, 0xa1, 'a', 3})),
            MessagePackErrc::DuplicateKey, 7u);
  // The earliest second occurrence is reported.
  CHECK_ERR(decodeError(B({0x84, 0x01, 0, 0x02, 0, 0x02, 0, 0x01, 0})),
            MessagePackErrc::DuplicateKey, 5u);
  // Different types are different keys; allowDuplicateKeys keeps every pair.
  Document d;
  CHECK(decodeRoot(B({0x83, 0x01, 0, 0xa1, '1', 0, 0xc3, 0}), d).asMap().size() == 3);
  MessagePackReadOptions o;
  o.allowDuplicateKeys = true;
  const Bytes twice = B({0x82, 0xa1, 'a', 1, 0xa1, 'a', 2});
  const Value m = decodeRoot(twice, d, o);
  CHECK(m.asMap().size() == 2);
  CHECK(m["a"] == Value::uinteger(1));  // find() returns the first
  // Nested duplicate: offset of the inner key.
  CHECK_ERR(decodeError(B({0x91, 0x82, 0x90, 0, 0x90, 0})), MessagePackErrc::DuplicateKey, 4u);
  // Large maps (sorted path) agree with small ones.
  Bytes big = B({0xde, 0, 40});
  for (int i = 0; i < 40; ++i) big = cat(big, B({0xa2, 'k', 'A' + (i == 33 ? 7 : i), 0xc0}));
  CHECK_ERR(decodeError(big), MessagePackErrc::DuplicateKey, 3u + 33u * 4u);
  // Keys are the same when the canonical encoder would write them alike: every NaN is one key
  // (whatever its payload), on the pairwise, hashed and sorted paths ...
  for (int n : {2, 20, 80}) {
    Bytes nans = B({0xde, 0, static_cast<std::uint8_t>(n)});
    for (int i = 0; i < n; ++i) {
      nans = cat(nans, B({0xca, 0x7f, static_cast<std::uint8_t>(0xc0 + (i & 1)), 0, 0, 0xc0}));
    }
    CHECK_ERR(decodeError(nans), MessagePackErrc::DuplicateKey, 3u + 6u);
  }
  // ... NaN inside array keys too, ...
  CHECK(
      decodeError(B({0x82, 0x91, 0xca, 0x7f, 0xc0, 0, 0, 0xc0, 0x91, 0xca, 0x7f, 0xc0, 0, 1, 0xc0}))
          .code() == MessagePackErrc::DuplicateKey);
  // ... while 0.0 and -0.0 are two keys (the encoder writes them differently), and so every map
  // this decoder accepts can be re-encoded canonically.
  const Value& zeros = decodeRoot(B({0x82, 0xca, 0, 0, 0, 0, 0, 0xca, 0x80, 0, 0, 0, 0}), d);
  CHECK(zeros.asMap().size() == 2);
  ByteBuf canonical = msgpack::encode(zeros, {.canonical = true});
  CHECK(canonical.readableBytes() == 13);
  // Float32 1.0 and Float64 1.0 are different keys (types are kept).
  CHECK(decodeRoot(B({0x82, 0xca, 0x3f, 0x80, 0, 0, 0, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0}), d)
            .asMap()
            .size() == 2);
}

TEST_CASE("a map of a million distinct keys decodes quickly; a huge map of nils is rejected") {
  const std::size_t n = 1000000;
  Bytes in = B({0xdf, 0, 0x0f, 0x42, 0x40});
  in.reserve(n * 6 + 5);
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::uint32_t>(i * 2654435761u);
    in.push_back(std::byte{0xce});
    for (int s = 24; s >= 0; s -= 8) in.push_back(static_cast<std::byte>(k >> s));
    in.push_back(std::byte{0xc0});
  }
  const auto t0 = std::chrono::steady_clock::now();
  Document d;
  CHECK(decodeRoot(in, d).asMap().size() == n);
  CHECK(std::chrono::steady_clock::now() - t0 <
        std::chrono::seconds(60));  // quadratic would take hours
  const Bytes nils = filled(B({0xdf, 0, 0x0f, 0x42, 0x40}), 2 * n, 0xc0);
  CHECK_ERR(decodeError(nils), MessagePackErrc::DuplicateKey, 7u);
}

TEST_CASE("UTF-8: strict by default, lenient keeps and flags") {
  const Bytes bad = B({0x92, 0xa1, 'a', 0xa3, 'x', 0xff, 'y'});
  const MessagePackError e = decodeError(bad);
  CHECK(e.code() == MessagePackErrc::InvalidUtf8);
  CHECK(e.offset() == 3u);
  CHECK(std::string(e.what()).find("offset 5") != std::string::npos);
  MessagePackReadOptions o;
  o.lenientUtf8 = true;
  Document d;
  const Value v = decodeRoot(bad, d, o);
  CHECK(v[1].hasInvalidUtf8());
  CHECK(v[1].asStr() == "x\xffy");
  CHECK(!v[0].hasInvalidUtf8());
  // Valid multi-byte text, short and long (vectorised path), and overlong / surrogate forms.
  CHECK(decodeRoot(B({0xa2, 0xc3, 0xa9}), d).asStr() == "\xc3\xa9");
  Bytes longText = B({0xd9, 40});
  for (int i = 0; i < 20; ++i) longText = cat(longText, B({0xc3, 0xa9}));
  CHECK(decodeRoot(longText, d).asStr().size() == 40);
  CHECK(decodeError(B({0xa2, 0xc0, 0x80})).code() == MessagePackErrc::InvalidUtf8);
  CHECK(decodeError(B({0xa3, 0xed, 0xa0, 0x80})).code() == MessagePackErrc::InvalidUtf8);
  longText[41] = std::byte{0x41};
  CHECK(decodeError(longText).code() == MessagePackErrc::InvalidUtf8);
}

TEST_CASE("TrailingBytes and decodeOne") {
  const MessagePackError e = decodeError(B({0x01, 0x02, 0x03}));
  CHECK(e.code() == MessagePackErrc::TrailingBytes);
  CHECK(e.offset() == 1u);
  CHECK(e.value() == 2u);
  Document d;
  const Bytes two = B({0x91, 0x01, 0xa1, 'x'});
  CHECK(msgpack::decodeOne(std::span<const std::byte>(two), d) == 2u);
  CHECK(d.root()[0] == Value::uinteger(1));
}

TEST_CASE("pull reader: typed reads") {
  const Bytes in = B({0x94, 0xc0, 0xc3, 0xd0, 0x85, 0xa2, 'h',  'i', 0x82, 0xa1, 'k', 0xcb, 0x40, 0,
                      0,    0,    0,    0,    0,    0,    0xa1, 'f', 0xca, 0x40, 0,   0,    0});
  MessagePackReader r{std::span<const std::byte>(in)};
  CHECK(r.nextType() == ValueType::Array);
  CHECK(r.readArrayHeader() == 4u);
  CHECK(r.tryReadNil());
  CHECK(!r.tryReadNil());
  CHECK(r.readBool());
  CHECK(r.nextType() == ValueType::Int);
  CHECK(r.readInt64() == -123);
  CHECK(r.readStr() == "hi");
  CHECK(r.readMapHeader() == 2u);
  CHECK(r.readStr() == "k");
  CHECK(r.readDouble() == 2.0);
  CHECK(r.readStr() == "f");
  CHECK(r.readDouble() == 2.0);  // float32 widened
  CHECK(r.atEnd());
  CHECK_THROWS_AS(r.readNil(), MessagePackError);
}

TEST_CASE("pull reader: mismatches and overflows leave the position unchanged") {
  const Bytes in = B({0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xd0, 0xff, 0xa1,
                      'x',  0xc4, 1,    2,    0xd6, 0xff, 0,    0,    0,    1,    0xd4, 3,
                      9,    0xcb, 0,    0,    0,    0,    0,    0,    0,    0});
  MessagePackReader r{std::span<const std::byte>(in)};
  CHECK(r.nextType() == ValueType::UInt);
  auto code = [&](auto f) { return errorOf(f).code(); };
  CHECK(code([&] { r.readInt64(); }) == MessagePackErrc::IntegerOverflow);
  CHECK(code([&] { r.readStr(); }) == MessagePackErrc::TypeMismatch);
  CHECK(code([&] { r.readBool(); }) == MessagePackErrc::TypeMismatch);
  CHECK(code([&] { r.readInteger<std::uint32_t>(); }) == MessagePackErrc::IntegerOverflow);
  CHECK(code([&] { r.readArrayHeader(); }) == MessagePackErrc::TypeMismatch);
  CHECK(code([&] { r.readFloat32(); }) == MessagePackErrc::TypeMismatch);
  CHECK(r.position() == 0u);
  CHECK(r.readUInt64() == UINT64_MAX);
  // -1
  CHECK(code([&] { r.readUInt64(); }) == MessagePackErrc::IntegerOverflow);
  CHECK(code([&] { r.readInteger<unsigned char>(); }) == MessagePackErrc::IntegerOverflow);
  CHECK(r.position() == 9u);
  CHECK(r.readInteger<std::int8_t>() == -1);
  CHECK(code([&] { r.readBin(); }) == MessagePackErrc::TypeMismatch);
  CHECK(r.readStr() == "x");
  CHECK(r.readBin().size() == 1u);
  CHECK(code([&] { r.readExt(); }) == MessagePackErrc::TypeMismatch);  // a timestamp
  CHECK(r.nextType() == ValueType::Timestamp);
  CHECK(r.readTimestamp() == Timestamp{1, 0});
  CHECK(code([&] { r.readTimestamp(); }) == MessagePackErrc::TypeMismatch);
  const MessagePackReader::ExtRef x = r.readExt();
  CHECK(x.type == 3);
  CHECK(x.data.size() == 1u);
  CHECK(code([&] { r.readFloat32(); }) == MessagePackErrc::TypeMismatch);
  CHECK(r.readDouble() == 0.0);
  CHECK(code([&] { r.nextType(); }) == MessagePackErrc::Truncated);
}

TEST_CASE("pull reader: errors name the wire type, limits and truncation; skip and readValue") {
  MessagePackReadOptions o;
  o.limits.maxContainerLength = 2;
  const Bytes in = B({0x93, 1, 2, 3});
  MessagePackReader r{std::span<const std::byte>(in), o, 100};
  const MessagePackError e = errorOf([&] { r.readArrayHeader(); });
  CHECK(e.code() == MessagePackErrc::ContainerLengthLimit);
  CHECK(e.offset() == 100u);
  const MessagePackError t = errorOf([&] { r.readStr(); });
  CHECK(std::string(t.what()).find("expected Str, got Array") != std::string::npos);
  const Bytes shortArr = B({0x92, 1});
  MessagePackReader s{std::span<const std::byte>(shortArr)};
  CHECK(errorOf([&] { s.readArrayHeader(); }).code() == MessagePackErrc::Truncated);
  CHECK(errorOf([&] {
          MessagePackReader(std::span<const std::byte>(B({0xc1}))).readStr();
        }).code() == MessagePackErrc::ReservedByte);
  // skip and readValue consume whole values.
  const Bytes two = B({0x82, 0xa1, 'a', 0x91, 0x01, 0xa1, 'b', 0xc4, 1, 7, 0x05});
  MessagePackReader v{std::span<const std::byte>(two)};
  v.skip();
  CHECK(v.position() == 10u);
  CHECK(v.readUInt64() == 5u);
  MessagePackReader w{std::span<const std::byte>(two)};
  Document d;
  const Value x = w.readValue(d);
  CHECK(x["a"][0] == Value::uinteger(1));
  CHECK(w.position() == 10u);
  CHECK(d.root().isNil());
}

TEST_CASE("round trips through the writer") {
  Document src;
  const std::byte blob[] = {std::byte{1}, std::byte{2}};
  src.setRoot(src.map({{src.str("i"), Value::integer(-70000)},
                       {src.str("u"), Value::uinteger(1ull << 40)},
                       {src.str("f"), Value::float32(0.25f)},
                       {src.str("d"), Value::float64(-1e300)},
                       {src.str("s"), src.str("h\xc3\xa9llo")},
                       {src.str("b"), src.bin(blob)},
                       {src.str("e"), src.ext(9, blob)},
                       {src.str("t"), Value::timestamp({-5, 7})},
                       {src.str("a"), src.array({Value::nil(), Value::boolean(false)})}}));
  for (bool canonical : {false, true}) {
    CAPTURE(canonical);
    ByteBuf out = msgpack::encode(src.root(), MessagePackWriteOptions{canonical, 4096});
    const std::string bytes(out.readableStringView());
    Document back = msgpack::decode(std::move(out));
    if (!canonical) CHECK(back.root() == src.root());
    for (const Member& m : src.root().asMap()) CHECK(back.root()[m.key.asStr()] == m.value);
    // Canonical output of the decoded value is byte-identical.
    if (canonical) {
      ByteBuf again = msgpack::encode(back.root(), MessagePackWriteOptions{true, 4096});
      CHECK(again.readableStringView() == bytes);
    }
  }
}
