#include <netbuf/codec/value.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <string>

using namespace netbuf;

namespace {
std::span<const std::byte> bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
}  // namespace

TEST_CASE("Value: scalars keep their type and payload; accessors check the type") {
  CHECK(Value().isNil());
  CHECK(Value::nil().type() == ValueType::Nil);
  CHECK(Value::boolean(true).asBool());
  CHECK_FALSE(Value::boolean(false).asBool());
  CHECK(Value::integer(-5).asInt64() == -5);
  CHECK(Value::integer(-5).type() == ValueType::Int);
  CHECK(Value::uinteger(UINT64_MAX).asUInt64() == UINT64_MAX);
  CHECK(Value::float32(1.5f).asFloat32() == 1.5f);
  CHECK(Value::float32(1.5f).type() == ValueType::Float32);
  CHECK(Value::float64(2.25).asDouble() == 2.25);
  CHECK(Value::float32(0.5f).asDouble() == 0.5);
  CHECK(Value::integer(-3).asDouble() == -3.0);
  CHECK(Value::uinteger(7).asDouble() == 7.0);
  CHECK(Value::uinteger(3).isInteger());
  CHECK(Value::uinteger(3).isNumber());
  CHECK(Value::float64(3).isFloat());
  CHECK_FALSE(Value::float64(3).isInteger());

  CHECK_THROWS_AS(Value().asBool(), ValueTypeError);
  CHECK_THROWS_WITH_AS(Value::uinteger(1).asStr(), "expected Str, got UInt", ValueTypeError);
  CHECK_THROWS_AS(Value::float64(1).asFloat32(), ValueTypeError);
  CHECK_THROWS_AS(Value::boolean(true).asDouble(), ValueTypeError);
  CHECK_THROWS_AS(Value().asArray(), ValueTypeError);
  CHECK_THROWS_AS(Value().asMap(), ValueTypeError);
  CHECK_THROWS_AS(Value().asBin(), ValueTypeError);
  CHECK_THROWS_AS(Value().extType(), ValueTypeError);
  CHECK_THROWS_AS(Value().extData(), ValueTypeError);
  CHECK_THROWS_AS(Value().asTimestamp(), ValueTypeError);
  try {
    (void)Value::boolean(true).asInt64();
    FAIL("no throw");
  } catch (const ValueTypeError& e) {
    CHECK(e.actual() == ValueType::Bool);
  }
}

TEST_CASE("Value: Int/UInt conversions are range checked") {
  CHECK(Value::uinteger(INT64_MAX).asInt64() == INT64_MAX);
  CHECK_THROWS_WITH_AS(Value::uinteger(uint64_t{INT64_MAX} + 1).asInt64(),
                       "UInt 9223372036854775808 does not fit int64", ValueTypeError);
  CHECK(Value::integer(0).asUInt64() == 0);
  CHECK(Value::integer(INT64_MAX).asUInt64() == uint64_t{INT64_MAX});
  CHECK_THROWS_WITH_AS(Value::integer(-1).asUInt64(), "Int -1 does not fit uint64", ValueTypeError);
  CHECK(Value::integer(INT64_MIN).asInt64() == INT64_MIN);
}

TEST_CASE("Value: views point at the caller's memory") {
  const std::string text = "hello";
  const Value s = Value::strView(text);
  CHECK(s.asStr() == "hello");
  CHECK(s.asStr().data() == text.data());
  CHECK(s.size() == 5);
  CHECK_FALSE(s.hasInvalidUtf8());
  CHECK(Value::strView("\xff", true).hasInvalidUtf8());
  CHECK_FALSE(Value::binView(bytes("\xff")).hasInvalidUtf8());

  const Value b = Value::binView(bytes(text));
  CHECK(b.isBin());
  CHECK(b.asBin().data() == reinterpret_cast<const std::byte*>(text.data()));
  CHECK(b.size() == 5);

  const Value e = Value::extView(-5, bytes("ab"));
  CHECK(e.extType() == -5);
  CHECK(e.extData().size() == 2);
  CHECK(Value::extView(127, {}).extType() == 127);
  CHECK(Value::extView(-128, {}).extType() == -128);
  // -1 is the timestamp type: an Ext of that type would not round trip.
  CHECK_THROWS_AS(Value::extView(-1, bytes("abcd")), IllegalArgumentError);

  CHECK(Value::uinteger(5).size() == 0);
}

TEST_CASE("Value: timestamps validate nanoseconds") {
  const Value t = Value::timestamp({-1, 999'999'999});
  CHECK(t.asTimestamp() == Timestamp{-1, 999'999'999});
  CHECK(t.isTimestamp());
  CHECK_THROWS_AS(Value::timestamp({0, 1'000'000'000}), IllegalArgumentError);
  CHECK(Value::timestamp({INT64_MIN, 0}).asTimestamp().seconds == INT64_MIN);
  CHECK(Timestamp{1, 2} < Timestamp{1, 3});
  CHECK(Timestamp{0, 999} < Timestamp{1, 0});
}

TEST_CASE("Value: arrays, maps, lookup and indexing") {
  const std::array<Value, 3> elems{Value::uinteger(1), Value::strView("x"), Value()};
  const Value arr = Value::arrayView(elems);
  CHECK(arr.size() == 3);
  CHECK(arr[1].asStr() == "x");
  CHECK(arr.asArray().data() == elems.data());
  CHECK_THROWS_AS(arr[3], IndexOutOfBoundsError);
  CHECK_THROWS_AS(Value()[0], ValueTypeError);

  const std::array<Member, 3> members{Member{Value::strView("a"), Value::uinteger(1)},
                                      Member{Value::uinteger(2), Value::strView("int key")},
                                      Member{Value::strView("a"), Value::uinteger(3)}};
  const Value map = Value::mapView(members);
  CHECK(map.size() == 3);
  REQUIRE(map.find("a") != nullptr);
  CHECK(map.find("a")->asUInt64() == 1);  // first match
  CHECK(map.find("b") == nullptr);
  CHECK(map.find("") == nullptr);
  CHECK(map["a"].asUInt64() == 1);
  CHECK_THROWS_WITH_AS(map["zz"], "Value[\"zz\"]: no such key", IllegalArgumentError);
  CHECK_THROWS_AS(arr.find("a"), ValueTypeError);
  // Insertion order is kept.
  CHECK(map.asMap()[1].key.asUInt64() == 2);
}

TEST_CASE("Value: equality is deep; Int equals UInt by number; floats stay apart") {
  CHECK(Value::integer(5) == Value::uinteger(5));
  CHECK(Value::uinteger(5) == Value::integer(5));
  CHECK_FALSE(Value::integer(-1) == Value::uinteger(UINT64_MAX));
  CHECK_FALSE(Value::integer(5) == Value::uinteger(6));
  CHECK_FALSE(Value::float32(1.0f) == Value::float64(1.0));
  CHECK_FALSE(Value::uinteger(1) == Value::float64(1.0));
  CHECK(Value::float64(0.0) == Value::float64(-0.0));
  CHECK_FALSE(Value::float64(std::nan("")) == Value::float64(std::nan("")));
  CHECK_FALSE(Value::strView("a") == Value::binView(bytes("a")));  // str and bin never mix
  CHECK(Value::strView("abc") == Value::strView(std::string("abc")));
  CHECK_FALSE(Value::strView("abc") == Value::strView("abd"));
  CHECK_FALSE(Value::strView("a") == Value::strView("a", true));
  CHECK(Value::strView("") == Value::strView(""));
  CHECK_FALSE(Value::extView(1, bytes("a")) == Value::extView(2, bytes("a")));
  CHECK(Value::timestamp({1, 2}) == Value::timestamp({1, 2}));
  CHECK_FALSE(Value::timestamp({1, 2}) == Value::timestamp({1, 3}));
  CHECK(Value() == Value::nil());
  CHECK_FALSE(Value::boolean(true) == Value::boolean(false));

  const std::array<Value, 2> a1{Value::uinteger(1), Value::strView("x")};
  const std::array<Value, 2> a2{Value::integer(1), Value::strView("x")};
  const std::array<Value, 2> a3{Value::uinteger(1), Value::strView("y")};
  CHECK(Value::arrayView(a1) == Value::arrayView(a2));
  CHECK_FALSE(Value::arrayView(a1) == Value::arrayView(a3));
  CHECK_FALSE(Value::arrayView(a1) == Value::arrayView(std::span(a1).first(1)));

  const std::array<Member, 2> m1{Member{Value::strView("a"), Value::arrayView(a1)},
                                 Member{Value::strView("b"), Value()}};
  const std::array<Member, 2> m2{Member{Value::strView("a"), Value::arrayView(a2)},
                                 Member{Value::strView("b"), Value()}};
  const std::array<Member, 2> swapped{m1[1], m1[0]};
  CHECK(Value::mapView(m1) == Value::mapView(m2));
  CHECK_FALSE(Value::mapView(m1) == Value::mapView(swapped));  // order is part of the value
}

TEST_CASE("Value: debug text") {
  const std::array<Value, 4> elems{Value::integer(-2), Value::float32(0.5f),
                                   Value::binView(bytes("\x01\xff")), Value::timestamp({3, 4})};
  const std::array<Member, 2> members{Member{Value::strView("k\"\n"), Value::arrayView(elems)},
                                      Member{Value::uinteger(1), Value::extView(7, bytes("A"))}};
  CHECK(Value::mapView(members).toDebugString() ==
        "{\"k\\\"\\u000a\":[-2,0.5f,bin(01ff),timestamp(3,4)],1:ext(7,41)}");
  CHECK(Value::strView("\xff", true).toDebugString() == "\"\xff\"!invalid-utf8");
  CHECK(valueTypeName(ValueType::Timestamp) == "Timestamp");
}

TEST_CASE("Value: hints are set only where they apply and are not part of the value") {
  const Value plain = detail::ValueHints::plainAscii(Value::strView("abc"));
  CHECK(plain.isPlainAscii());
  CHECK_FALSE(plain.hasInvalidUtf8());
  CHECK(plain == Value::strView("abc"));
  CHECK_FALSE(plain == Value::strView("abd"));
  CHECK(plain.asStr() == "abc");
  // Not on a Str flagged invalid, nor on other types (whose aux byte means something else).
  CHECK_FALSE(detail::ValueHints::plainAscii(Value::strView("abc", true)).isPlainAscii());
  CHECK(detail::ValueHints::plainAscii(Value::strView("abc", true)).hasInvalidUtf8());
  const Value ext = detail::ValueHints::plainAscii(Value::extView(5, bytes("x")));
  CHECK(ext.extType() == 5);
  CHECK_FALSE(ext.isPlainAscii());
  CHECK_FALSE(detail::ValueHints::plainAscii(Value::binView(bytes("x"))).isPlainAscii());
  // Invalid-UTF-8 flags still compare.
  CHECK_FALSE(plain == Value::strView("abc", true));

  const Member members[] = {{Value::strView("a"), Value::uinteger(1)}};
  const Value map = detail::ValueHints::canonicalOrder(Value::mapView(members));
  CHECK(map.hasCanonicalOrder());
  CHECK(map == Value::mapView(members));
  CHECK_FALSE(Value::mapView(members).hasCanonicalOrder());
  CHECK_FALSE(detail::ValueHints::canonicalOrder(Value::strView("a")).hasCanonicalOrder());
  CHECK_FALSE(detail::ValueHints::canonicalOrder(Value::strView("a")).hasInvalidUtf8());
  CHECK(detail::ValueHints::canonicalOrder(Value::extView(1, bytes("x"))).extType() == 1);
}
