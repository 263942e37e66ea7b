#include <netbuf/codec/redis/resp_value.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string_view>

using namespace netbuf;

TEST_CASE("RespValue: scalars and their accessors") {
  CHECK(RespValue().isNull());
  CHECK(RespValue().nullForm() == '_');
  CHECK(RespValue::null('$').nullForm() == '$');
  CHECK(RespValue::integer(-5).asInteger() == -5);
  CHECK(RespValue::boolean(true).asBool());
  CHECK_FALSE(RespValue::boolean(false).asBool());
  CHECK(RespValue::doubleValue(2.5).asDouble() == 2.5);
  CHECK(RespValue::simpleString("OK").asString() == "OK");
  CHECK(RespValue::bulkString("b").asString() == "b");
  CHECK(RespValue::bigNumber("-1").asString() == "-1");
  CHECK(RespValue::simpleError("ERR x").isError());
  CHECK(RespValue::bulkError("ERR x").isError());
  CHECK_FALSE(RespValue::bulkString("ERR x").isError());
  CHECK(RespValue::bulkString("abc").size() == 3);
}

TEST_CASE("RespValue: a verbatim string's format and text") {
  const RespValue v = RespValue::verbatimString("txt:Some string");
  CHECK(v.verbatimFormat() == "txt");
  CHECK(v.asString() == "Some string");
  CHECK(v.payload() == "txt:Some string");
  const RespValue shortOne = RespValue::verbatimString("ab");
  CHECK(shortOne.verbatimFormat().empty());
  CHECK(shortOne.asString() == "ab");
}

TEST_CASE("RespValue: accessors of the wrong type throw RespTypeError naming both") {
  CHECK_THROWS_AS(RespValue::integer(1).asString(), RespTypeError);
  CHECK_THROWS_AS(RespValue::bulkString("1").asInteger(), RespTypeError);
  CHECK_THROWS_AS(RespValue::bulkString("1").asDouble(), RespTypeError);
  CHECK_THROWS_AS(RespValue::bulkString("1").asBool(), RespTypeError);
  CHECK_THROWS_AS(RespValue::bulkString("1").elements(), RespTypeError);
  CHECK_THROWS_AS(RespValue::bulkString("1").verbatimFormat(), RespTypeError);
  CHECK_THROWS_AS(RespValue::bulkString("1").find("k"), RespTypeError);
  CHECK_THROWS_AS(RespValue::null().payload(), RespTypeError);
  try {
    (void)RespValue::integer(1).asString();
  } catch (const RespTypeError& e) {
    CHECK(e.actual() == RespType::Integer);
    CHECK(std::string_view(e.what()) == "RespValue::asString on a integer");
  }
}

TEST_CASE("RespValue: aggregates, maps and find") {
  const RespValue items[] = {RespValue::integer(1), RespValue::bulkString("two")};
  const RespValue arr = RespValue::aggregate(RespType::Array, items);
  CHECK(arr.isAggregate());
  CHECK(arr.size() == 2);
  CHECK(arr[1].asString() == "two");
  CHECK_THROWS_AS(arr[2], std::out_of_range);
  const RespValue pairs[] = {RespValue::simpleString("a"), RespValue::integer(1),
                             RespValue::bulkString("b"),   RespValue::integer(2),
                             RespValue::integer(3),        RespValue::integer(4)};
  const RespValue m = RespValue::map(pairs);
  CHECK(m.size() == 3);
  CHECK(m.elements().size() == 6);
  REQUIRE(m.find("b") != nullptr);
  CHECK(m.find("b")->asInteger() == 2);
  CHECK(m.find("a")->asInteger() == 1);
  CHECK(m.find("3") == nullptr);
  CHECK_THROWS_AS(m[0], RespTypeError);
}

TEST_CASE("RespValue: equality compares structure, null forms, NaN and attributes") {
  CHECK(RespValue::null('$') != RespValue::null('*'));
  CHECK(RespValue::doubleValue(NAN) == RespValue::doubleValue(NAN));
  CHECK(RespValue::simpleString("a") != RespValue::bulkString("a"));
  CHECK(RespValue::bulkString("a") == RespValue::bulkString("a"));
  CHECK(RespValue::bulkString("") == RespValue::bulkString(""));
  const RespValue a[] = {RespValue::integer(1)};
  const RespValue b[] = {RespValue::integer(2)};
  CHECK(RespValue::aggregate(RespType::Set, a) != RespValue::aggregate(RespType::Set, b));
  CHECK(RespValue::aggregate(RespType::Set, a) != RespValue::aggregate(RespType::Array, a));
  const RespValue attrPairs[] = {RespValue::simpleString("k"), RespValue::integer(1)};
  const RespValue attrs = RespValue::map(attrPairs);
  RespValue x = RespValue::integer(1);
  x.setAttributes(&attrs);
  CHECK(x != RespValue::integer(1));
  CHECK(x.attributes() == &attrs);
}

TEST_CASE("RespValue: respTypeName names every type") {
  CHECK(respTypeName(RespType::VerbatimString) == "verbatim string");
  CHECK(respTypeName(RespType::Push) == "push");
  CHECK(respTypeName(RespType::BigNumber) == "big number");
}
