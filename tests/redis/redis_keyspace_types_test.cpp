// RedisKeyspace: lists, sets, hashes and sorted sets. Every expected reply is the bytes
// redis-server 7.0.15 sends for the same command, in RESP2 and (after HELLO 3) RESP3, including
// the orders its small encodings give (intset: ascending; hash listpack: insertion order).
#include <netbuf/redis/redis_keyspace.hpp>

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "keyspace_fixture.hpp"

using namespace netbuf;
using netbuf::test::arity;
using netbuf::test::cat;
using netbuf::test::KeyspaceFixture;
using netbuf::test::kMustBePositive;
using netbuf::test::kNotInteger;
using netbuf::test::kNull2;
using netbuf::test::kNull3;
using netbuf::test::kOk;
using netbuf::test::kSyntaxError;
using netbuf::test::kWrongType;

TEST_CASE("LPUSH, RPUSH, LRANGE, LLEN, LINDEX") {
  KeyspaceFixture db;
  CHECK(db({"LPUSH", "l", "a", "b", "c"}) == ":3\r\n");
  CHECK(db({"RPUSH", "l", "d", "e"}) == ":5\r\n");
  CHECK(db({"LPUSH", "l"}) == arity("lpush"));
  CHECK(db({"LRANGE", "l", "0", "-1"}) ==
        "*5\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\ne\r\n");
  CHECK(db({"LRANGE", "l", "1", "2"}) == "*2\r\n$1\r\nb\r\n$1\r\na\r\n");
  CHECK(db({"LRANGE", "l", "-2", "-1"}) == "*2\r\n$1\r\nd\r\n$1\r\ne\r\n");
  CHECK(db({"LRANGE", "l", "-100", "100"}).substr(0, 4) == "*5\r\n");
  CHECK(db({"LRANGE", "l", "3", "1"}) == "*0\r\n");
  CHECK(db({"LRANGE", "l", "10", "20"}) == "*0\r\n");
  CHECK(db({"LRANGE", "l", "a", "1"}) == kNotInteger);
  CHECK(db({"LRANGE", "l", "0", "b"}) == kNotInteger);
  CHECK(db({"LRANGE", "nokey", "0", "-1"}) == "*0\r\n");
  CHECK(db({"LRANGE", "l", "0"}) == arity("lrange"));
  CHECK(db({"LLEN", "l"}) == ":5\r\n");
  CHECK(db({"LLEN", "nokey"}) == ":0\r\n");
  CHECK(db({"LINDEX", "l", "0"}) == "$1\r\nc\r\n");
  CHECK(db({"LINDEX", "l", "-1"}) == "$1\r\ne\r\n");
  CHECK(db({"LINDEX", "l", "10"}) == kNull2);
  CHECK(db({"LINDEX", "l", "-10"}) == kNull2);
  CHECK(db({"LINDEX", "l", "x"}) == kNotInteger);
  CHECK(db({"LINDEX", "nokey", "0"}) == kNull2);
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"LPUSH", "str", "a"}) == kWrongType);
  CHECK(db({"RPUSH", "str", "a"}) == kWrongType);
  CHECK(db({"LRANGE", "str", "0", "1"}) == kWrongType);
  CHECK(db({"LINDEX", "str", "0"}) == kWrongType);
  CHECK(db({"LLEN", "str"}) == kWrongType);
  // LINDEX looks the key up before it parses the index; LRANGE parses its indexes first.
  CHECK(db({"LINDEX", "nokey", "x"}) == kNull2);
  CHECK(db({"LINDEX", "str", "x"}) == kWrongType);
  CHECK(db({"LRANGE", "str", "x", "1"}) == kNotInteger);
  CHECK(db({"LRANGE", "nokey", "0", "x"}) == kNotInteger);
  db.resp3();
  CHECK(db({"LINDEX", "l", "10"}) == kNull3);
  CHECK(db({"LINDEX", "nokey", "-0"}) == kNull3);
  CHECK(db({"LRANGE", "l", "0", "0"}) == "*1\r\n$1\r\nc\r\n");
}

TEST_CASE("LPOP, RPOP with and without count") {
  KeyspaceFixture db;
  CHECK(db({"RPUSH", "l", "1", "2", "3", "4", "5", "6"}) == ":6\r\n");
  CHECK(db({"LPOP", "l"}) == "$1\r\n1\r\n");
  CHECK(db({"RPOP", "l"}) == "$1\r\n6\r\n");
  CHECK(db({"LPOP", "l", "2"}) == "*2\r\n$1\r\n2\r\n$1\r\n3\r\n");
  CHECK(db({"RPOP", "l", "1"}) == "*1\r\n$1\r\n5\r\n");
  CHECK(db({"LPOP", "l", "0"}) == "*0\r\n");
  CHECK(db({"LPOP", "l", "-1"}) == kMustBePositive);
  CHECK(db({"LPOP", "l", "x"}) == kMustBePositive);
  CHECK(db({"LPOP", "l", "1", "2"}) == arity("lpop"));
  CHECK(db({"RPOP", "l", "1", "2"}) == arity("rpop"));
  CHECK(db({"RPOP", "l", "5"}) == "*1\r\n$1\r\n4\r\n");
  CHECK(db({"EXISTS", "l"}) == ":0\r\n");  // the last pop deletes the key
  CHECK(db({"RPUSH", "l", "a", "b", "c"}) == ":3\r\n");
  CHECK(db({"RPOP", "l", "2"}) == "*2\r\n$1\r\nc\r\n$1\r\nb\r\n");  // from the tail
  CHECK(db({"LPOP", "nokey"}) == kNull2);
  CHECK(db({"LPOP", "nokey", "1"}) == "*-1\r\n");
  CHECK(db({"RPOP", "nokey", "0"}) == "*-1\r\n");
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"LPOP", "str"}) == kWrongType);
  CHECK(db({"LPOP", "str", "2"}) == kWrongType);
  db.resp3();
  CHECK(db({"LPOP", "nokey"}) == kNull3);
  CHECK(db({"LPOP", "nokey", "2"}) == kNull3);
  CHECK(db({"LPOP", "l", "1"}) == "*1\r\n$1\r\na\r\n");
}

TEST_CASE("SADD, SREM, SISMEMBER, SCARD, SMEMBERS") {
  KeyspaceFixture db;
  // All integers: an intset, listed in ascending order.
  CHECK(db({"SADD", "s", "3", "1", "2"}) == ":3\r\n");
  CHECK(db({"SADD", "s", "2", "5", "-1"}) == ":2\r\n");
  CHECK(db({"SMEMBERS", "s"}) == "*5\r\n$2\r\n-1\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n5\r\n");
  CHECK(db({"SCARD", "s"}) == ":5\r\n");
  CHECK(db({"SISMEMBER", "s", "2"}) == ":1\r\n");
  CHECK(db({"SISMEMBER", "s", "02"}) == ":0\r\n");
  CHECK(db({"SISMEMBER", "s", "x"}) == ":0\r\n");
  CHECK(db({"SISMEMBER", "nokey", "x"}) == ":0\r\n");
  CHECK(db({"SREM", "s", "1", "9"}) == ":1\r\n");
  CHECK(db({"SMEMBERS", "s"}) == "*4\r\n$2\r\n-1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n5\r\n");
  CHECK(db({"SMEMBERS", "nokey"}) == "*0\r\n");
  CHECK(db({"SCARD", "nokey"}) == ":0\r\n");
  CHECK(db({"SREM", "nokey", "a"}) == ":0\r\n");
  CHECK(db({"SREM", "s", "-1", "2", "3", "5"}) == ":4\r\n");
  CHECK(db({"EXISTS", "s"}) == ":0\r\n");
  CHECK(db({"SADD", "s"}) == arity("sadd"));
  // A non-integer member makes a hash table: the order is unspecified.
  CHECK(db({"SADD", "t", "1", "x", "y"}) == ":3\r\n");
  CHECK(db({"SISMEMBER", "t", "1"}) == ":1\r\n");
  CHECK(db({"SISMEMBER", "t", "x"}) == ":1\r\n");
  const std::string members = db({"SMEMBERS", "t"});
  CHECK(members.substr(0, 4) == "*3\r\n");
  CHECK(members.size() == 4 + 3 * 7);
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"SADD", "str", "a"}) == kWrongType);
  CHECK(db({"SMEMBERS", "str"}) == kWrongType);
  CHECK(db({"SCARD", "str"}) == kWrongType);
  CHECK(db({"SISMEMBER", "str", "a"}) == kWrongType);
  CHECK(db({"SREM", "str", "a"}) == kWrongType);
  db.resp3();
  CHECK(db({"SMEMBERS", "nokey"}) == "~0\r\n");
  CHECK(db({"SADD", "r3", "20", "10"}) == ":2\r\n");
  CHECK(db({"SMEMBERS", "r3"}) == "~2\r\n$2\r\n10\r\n$2\r\n20\r\n");
}

TEST_CASE("sets: past 512 integers the intset becomes a table") {
  KeyspaceFixture db;
  std::vector<std::string> args{"SADD", "s"};
  for (int i = 0; i < 600; ++i) args.push_back(std::to_string(i));
  std::vector<std::string_view> views(args.begin(), args.end());
  CHECK(db(views) == ":600\r\n");
  CHECK(db({"SCARD", "s"}) == ":600\r\n");
  CHECK(db({"SISMEMBER", "s", "599"}) == ":1\r\n");
  CHECK(db({"SREM", "s", "599"}) == ":1\r\n");
  CHECK(db({"SISMEMBER", "s", "599"}) == ":0\r\n");
}

TEST_CASE("SPOP with and without count") {
  KeyspaceFixture db;
  CHECK(db({"SPOP", "nokey"}) == kNull2);
  CHECK(db({"SPOP", "nokey", "3"}) == "*0\r\n");
  CHECK(db({"SADD", "s", "1", "2", "3", "4"}) == ":4\r\n");
  CHECK(db({"SPOP", "s", "0"}) == "*0\r\n");
  CHECK(db({"SPOP", "s", "-2"}) == kMustBePositive);
  CHECK(db({"SPOP", "s", "x"}) == kMustBePositive);
  CHECK(db({"SPOP", "s", "1", "2"}) == kSyntaxError);
  const std::string one = db({"SPOP", "s"});
  CHECK(one.substr(0, 4) == "$1\r\n");
  const std::string two = db({"SPOP", "s", "2"});
  CHECK(two.substr(0, 4) == "*2\r\n");
  CHECK(db({"SCARD", "s"}) == ":1\r\n");
  CHECK(db({"SPOP", "s", "100"}).substr(0, 4) == "*1\r\n");
  CHECK(db({"EXISTS", "s"}) == ":0\r\n");
  // Count >= size: the whole set in its order (an intset: ascending), then the key is gone.
  CHECK(db({"SADD", "t", "20", "10"}) == ":2\r\n");
  CHECK(db({"SPOP", "t", "2"}) == "*2\r\n$2\r\n10\r\n$2\r\n20\r\n");
  CHECK(db({"EXISTS", "t"}) == ":0\r\n");
  CHECK(db({"SADD", "one", "x"}) == ":1\r\n");
  CHECK(db({"SPOP", "one"}) == "$1\r\nx\r\n");
  CHECK(db({"EXISTS", "one"}) == ":0\r\n");
  // Every member comes out once, from a large table too.
  std::vector<std::string> args{"SADD", "big"};
  for (int i = 0; i < 1000; ++i) args.push_back(cat({"m", std::to_string(i)}));
  CHECK(db(std::vector<std::string_view>(args.begin(), args.end())) == ":1000\r\n");
  std::set<std::string> popped;
  for (int i = 0; i < 1000; ++i) {
    const std::string r = db({"SPOP", "big"});
    REQUIRE(r[0] == '$');
    popped.insert(r);
  }
  CHECK(popped.size() == 1000);
  CHECK(db({"EXISTS", "big"}) == ":0\r\n");
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"SPOP", "str"}) == kWrongType);
  db.resp3();
  CHECK(db({"SPOP", "nokey"}) == kNull3);
  CHECK(db({"SPOP", "nokey", "2"}) == "~0\r\n");
  CHECK(db({"SADD", "u", "5", "6"}) == ":2\r\n");
  CHECK(db({"SPOP", "u", "5"}) == "~2\r\n$1\r\n5\r\n$1\r\n6\r\n");
}

TEST_CASE("HSET, HGET, HDEL, HLEN, HGETALL, HEXISTS, HMGET, HKEYS, HVALS, HSETNX, HMSET") {
  KeyspaceFixture db;
  CHECK(db({"HSET", "h", "f1", "v1", "f2", "v2"}) == ":2\r\n");
  CHECK(db({"HSET", "h", "f1", "x", "f3", "v3"}) == ":1\r\n");
  CHECK(db({"HSET", "h", "f1"}) == arity("hset"));
  CHECK(db({"HSET", "h", "f1", "v1", "f2"}) == arity("hset"));
  CHECK(db({"HGET", "h", "f1"}) == "$1\r\nx\r\n");
  CHECK(db({"HGET", "h", "nof"}) == kNull2);
  CHECK(db({"HGET", "nokey", "f"}) == kNull2);
  // A small hash keeps insertion order; a changed value keeps its place.
  CHECK(db({"HGETALL", "h"}) ==
        "*6\r\n$2\r\nf1\r\n$1\r\nx\r\n$2\r\nf2\r\n$2\r\nv2\r\n$2\r\nf3\r\n$2\r\nv3\r\n");
  CHECK(db({"HGETALL", "nokey"}) == "*0\r\n");
  CHECK(db({"HLEN", "h"}) == ":3\r\n");
  CHECK(db({"HLEN", "nokey"}) == ":0\r\n");
  CHECK(db({"HEXISTS", "h", "f1"}) == ":1\r\n");
  CHECK(db({"HEXISTS", "h", "zz"}) == ":0\r\n");
  CHECK(db({"HEXISTS", "nokey", "f"}) == ":0\r\n");
  CHECK(db({"HDEL", "h", "f2", "nof"}) == ":1\r\n");
  CHECK(db({"HGETALL", "h"}) == "*4\r\n$2\r\nf1\r\n$1\r\nx\r\n$2\r\nf3\r\n$2\r\nv3\r\n");
  CHECK(db({"HMGET", "h", "f1", "nof"}) == "*2\r\n$1\r\nx\r\n$-1\r\n");
  CHECK(db({"HMGET", "nokey", "a"}) == "*1\r\n$-1\r\n");
  CHECK(db({"HKEYS", "h"}) == "*2\r\n$2\r\nf1\r\n$2\r\nf3\r\n");
  CHECK(db({"HVALS", "h"}) == "*2\r\n$1\r\nx\r\n$2\r\nv3\r\n");
  CHECK(db({"HKEYS", "nokey"}) == "*0\r\n");
  CHECK(db({"HSETNX", "h", "f1", "q"}) == ":0\r\n");
  CHECK(db({"HSETNX", "h", "f9", "q"}) == ":1\r\n");
  CHECK(db({"HMSET", "h", "a", "1", "b", "2"}) == kOk);
  CHECK(db({"HMSET", "h", "a"}) == arity("hmset"));
  CHECK(db({"HLEN", "h"}) == ":5\r\n");
  CHECK(db({"HDEL", "h", "f1", "f3", "f9", "a", "b", "zz"}) == ":5\r\n");
  CHECK(db({"EXISTS", "h"}) == ":0\r\n");
  CHECK(db({"SET", "str", "v"}) == kOk);
  for (auto cmd : std::vector<std::vector<std::string_view>>{{"HGET", "str", "f"},
                                                             {"HSET", "str", "f", "v"},
                                                             {"HGETALL", "str"},
                                                             {"HLEN", "str"},
                                                             {"HDEL", "str", "f"},
                                                             {"HINCRBY", "str", "f", "1"},
                                                             {"HEXISTS", "str", "f"},
                                                             {"HMGET", "str", "a"},
                                                             {"HKEYS", "str"}}) {
    CAPTURE(cmd[0]);
    CHECK(db(cmd) == kWrongType);
  }
  db.resp3();
  CHECK(db({"HSET", "h3", "b", "1", "a", "2"}) == ":2\r\n");
  CHECK(db({"HGETALL", "h3"}) == "%2\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n2\r\n");
  CHECK(db({"HGETALL", "nokey"}) == "%0\r\n");
  CHECK(db({"HGET", "h3", "zz"}) == kNull3);
  CHECK(db({"HMGET", "h3", "zz"}) == "*1\r\n_\r\n");
}

TEST_CASE("hashes: long values or many fields make a table") {
  KeyspaceFixture db;
  const std::string longValue(65, 'v');
  CHECK(db({"HSET", "h", "a", "1", "b", longValue}) == ":2\r\n");
  CHECK(db({"HGET", "h", "b"}) == cat({"$65\r\n", longValue, "\r\n"}));
  CHECK(db({"HLEN", "h"}) == ":2\r\n");
  std::vector<std::string> args{"HSET", "many"};
  for (int i = 0; i < 600; ++i) {
    args.push_back(cat({"f", std::to_string(i)}));
    args.push_back(std::to_string(i));
  }
  CHECK(db(std::vector<std::string_view>(args.begin(), args.end())) == ":600\r\n");
  CHECK(db({"HLEN", "many"}) == ":600\r\n");
  CHECK(db({"HGET", "many", "f599"}) == "$3\r\n599\r\n");
  CHECK(db({"HDEL", "many", "f0"}) == ":1\r\n");
  CHECK(db({"HEXISTS", "many", "f0"}) == ":0\r\n");
}

TEST_CASE("HINCRBY") {
  KeyspaceFixture db;
  CHECK(db({"HINCRBY", "h", "n", "5"}) == ":5\r\n");
  CHECK(db({"HINCRBY", "h", "n", "-2"}) == ":3\r\n");
  CHECK(db({"HGET", "h", "n"}) == "$1\r\n3\r\n");
  CHECK(db({"HSET", "h", "s", "abc"}) == ":1\r\n");
  CHECK(db({"HINCRBY", "h", "s", "1"}) == "-ERR hash value is not an integer\r\n");
  CHECK(db({"HINCRBY", "h", "n", "x"}) == kNotInteger);
  CHECK(db({"HINCRBY", "h", "n", "9223372036854775807"}) ==
        "-ERR increment or decrement would overflow\r\n");
  CHECK(db({"HINCRBY", "h", "n"}) == arity("hincrby"));
}

TEST_CASE("ZADD and its options") {
  KeyspaceFixture db;
  CHECK(db({"ZADD", "z", "1", "a", "2", "b", "3", "c"}) == ":3\r\n");
  CHECK(db({"ZADD", "z", "1", "a"}) == ":0\r\n");
  CHECK(db({"ZADD", "z", "CH", "5", "a", "2", "b"}) == ":1\r\n");
  CHECK(db({"ZADD", "z", "NX", "10", "a", "4", "d"}) == ":1\r\n");
  CHECK(db({"ZADD", "z", "XX", "10", "a", "4", "e"}) == ":0\r\n");
  CHECK(db({"ZADD", "z", "XX", "CH", "11", "a"}) == ":1\r\n");
  CHECK(db({"ZADD", "z", "NX", "XX", "1", "a"}) ==
        "-ERR XX and NX options at the same time are not compatible\r\n");
  CHECK(db({"ZADD", "z", "GT", "NX", "1", "a"}) ==
        "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n");
  CHECK(db({"ZADD", "z", "GT", "LT", "1", "a"}) ==
        "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n");
  CHECK(db({"ZADD", "z", "INCR", "1", "a", "2", "b"}) ==
        "-ERR INCR option supports a single increment-element pair\r\n");
  CHECK(db({"ZADD", "z", "INCR", "1", "a"}) == "$2\r\n12\r\n");
  CHECK(db({"ZADD", "z", "INCR", "NX", "1", "a"}) == kNull2);
  CHECK(db({"ZADD", "z", "INCR", "XX", "1", "nonmember"}) == kNull2);
  CHECK(db({"ZADD", "z", "GT", "1", "a"}) == ":0\r\n");
  CHECK(db({"ZADD", "z", "GT", "CH", "100", "a"}) == ":1\r\n");
  CHECK(db({"ZADD", "z", "LT", "CH", "0.5", "a"}) == ":1\r\n");
  CHECK(db({"ZADD", "z", "1", "a", "2"}) == kSyntaxError);
  CHECK(db({"ZADD", "z", "XX"}) == arity("zadd"));
  CHECK(db({"ZADD", "z", "XX", "1"}) == kSyntaxError);
  CHECK(db({"ZADD", "z", "x", "a"}) == "-ERR value is not a valid float\r\n");
  CHECK(db({"ZADD", "z", "nan", "a"}) == "-ERR value is not a valid float\r\n");
  CHECK(db({"ZADD", "z", "inf", "a"}) == ":0\r\n");
  CHECK(db({"ZADD", "z", "INCR", "-inf", "a"}) == "-ERR resulting score is not a number (NaN)\r\n");
  CHECK(db({"ZADD", "nz", "XX", "1", "a"}) == ":0\r\n");
  CHECK(db({"EXISTS", "nz"}) == ":0\r\n");
  CHECK(db({"ZADD", "nz", "XX", "INCR", "1", "a"}) == kNull2);
  CHECK(db({"ZINCRBY", "zi", "2", "m"}) == "$1\r\n2\r\n");
  CHECK(db({"ZINCRBY", "zi", "2.5", "m"}) == "$3\r\n4.5\r\n");
  CHECK(db({"ZINCRBY", "zi", "x", "m"}) == "-ERR value is not a valid float\r\n");
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"ZADD", "str", "1", "a"}) == kWrongType);
  db.resp3();
  CHECK(db({"ZADD", "z", "INCR", "1", "b"}) == ",3\r\n");
  CHECK(db({"ZADD", "z", "INCR", "NX", "1", "b"}) == kNull3);
}

TEST_CASE("ZSCORE, ZCARD, ZRANK, ZREVRANK, ZREM") {
  KeyspaceFixture db;
  CHECK(db({"ZADD", "z", "1.5", "f", "0.1", "g", "1e3", "h", "-0.25", "i", "inf", "j"}) ==
        ":5\r\n");
  CHECK(db({"ZSCORE", "z", "g"}) == "$19\r\n0.10000000000000001\r\n");
  CHECK(db({"ZSCORE", "z", "h"}) == "$4\r\n1000\r\n");
  CHECK(db({"ZSCORE", "z", "i"}) == "$5\r\n-0.25\r\n");
  CHECK(db({"ZSCORE", "z", "j"}) == "$3\r\ninf\r\n");
  CHECK(db({"ZSCORE", "z", "nom"}) == kNull2);
  CHECK(db({"ZSCORE", "nokey", "a"}) == kNull2);
  CHECK(db({"ZCARD", "z"}) == ":5\r\n");
  CHECK(db({"ZCARD", "nokey"}) == ":0\r\n");
  CHECK(db({"ZRANK", "z", "i"}) == ":0\r\n");
  CHECK(db({"ZRANK", "z", "h"}) == ":3\r\n");
  CHECK(db({"ZREVRANK", "z", "h"}) == ":1\r\n");
  CHECK(db({"ZRANK", "z", "nom"}) == kNull2);
  CHECK(db({"ZRANK", "nokey", "a"}) == kNull2);
  CHECK(db({"ZREM", "z", "f", "nom"}) == ":1\r\n");
  CHECK(db({"ZREM", "z", "g", "h", "i", "j"}) == ":4\r\n");
  CHECK(db({"EXISTS", "z"}) == ":0\r\n");
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"ZSCORE", "str", "a"}) == kWrongType);
  CHECK(db({"ZCARD", "str"}) == kWrongType);
  CHECK(db({"ZRANK", "str", "a"}) == kWrongType);
  db.resp3();
  CHECK(db({"ZADD", "r", "0.1", "a", "1e300", "b", "1.5e300", "c"}) == ":3\r\n");
  CHECK(db({"ZSCORE", "r", "a"}) == ",0.10000000000000001\r\n");
  CHECK(db({"ZSCORE", "r", "c"}) == ",1.5000000000000001e+300\r\n");
  CHECK(db({"ZSCORE", "r", "nom"}) == kNull3);
  CHECK(db({"ZRANK", "r", "nom"}) == kNull3);
}

TEST_CASE("sorted sets: a -0 score reads back as 0 in a listpack, as -0 in a skiplist") {
  KeyspaceFixture db;
  const std::string longMember(65, 'm');  // over zset-max-listpack-value: a skiplist
  CHECK(db({"ZADD", "z", "-0.0", "a", "1", "b"}) == ":2\r\n");
  CHECK(db({"ZSCORE", "z", "a"}) == "$1\r\n0\r\n");
  CHECK(db({"ZADD", "z", "-0", "b"}) == ":0\r\n");
  CHECK(db({"ZSCORE", "z", "b"}) == "$1\r\n0\r\n");
  // ZINCRBY and ZADD INCR reply the score they computed, before it is stored.
  CHECK(db({"ZINCRBY", "z", "-0.0", "c"}) == "$2\r\n-0\r\n");
  CHECK(db({"ZSCORE", "z", "c"}) == "$1\r\n0\r\n");
  CHECK(db({"ZADD", "s", "-0.0", longMember}) == ":1\r\n");
  CHECK(db({"ZSCORE", "s", longMember}) == "$2\r\n-0\r\n");
  CHECK(db({"ZADD", "s", "-0.0", "short"}) == ":1\r\n");
  CHECK(db({"ZSCORE", "s", "short"}) == "$2\r\n-0\r\n");
  // 128 members stay a listpack; the 129th converts it, keeping the scores stored before.
  std::vector<std::string> args = {"ZADD", "big", "-0.0", "first"};
  for (int i = 1; i < 128; ++i) {
    const std::string number = std::to_string(i);
    args.push_back(number);
    args.push_back(cat({"m", number}));
  }
  std::vector<std::string_view> views(args.begin(), args.end());
  CHECK(db(views) == ":128\r\n");
  CHECK(db({"ZADD", "big", "-0.0", "m1"}) == ":0\r\n");
  CHECK(db({"ZSCORE", "big", "m1"}) == "$1\r\n0\r\n");
  CHECK(db({"ZADD", "big", "-0.0", "neg"}) == ":1\r\n");
  CHECK(db({"ZSCORE", "big", "neg"}) == "$2\r\n-0\r\n");
  CHECK(db({"ZSCORE", "big", "first"}) == "$1\r\n0\r\n");
  db.resp3();
  CHECK(db({"ZSCORE", "z", "a"}) == ",0\r\n");
  CHECK(db({"ZSCORE", "s", "short"}) == ",-0\r\n");
}

TEST_CASE("ZRANGE by index, score and lex; WITHSCORES in both protocols") {
  KeyspaceFixture db;
  CHECK(db({"ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d"}) == ":4\r\n");
  CHECK(db({"ZRANGE", "z", "0", "-1"}) == "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n");
  CHECK(db({"ZRANGE", "z", "1", "2", "withscores"}) ==
        "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n2\r\n");
  CHECK(db({"ZRANGE", "z", "-2", "-1"}) == "*2\r\n$1\r\nc\r\n$1\r\nd\r\n");
  CHECK(db({"ZRANGE", "z", "5", "1"}) == "*0\r\n");
  CHECK(db({"ZRANGE", "z", "0", "100"}).substr(0, 4) == "*4\r\n");
  CHECK(db({"ZRANGE", "z", "a", "1"}) == kNotInteger);
  CHECK(db({"ZRANGE", "z", "0", "-1", "REV"}) ==
        "*4\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n");
  CHECK(db({"ZRANGE", "z", "0", "1", "REV", "WITHSCORES"}) ==
        "*4\r\n$1\r\nd\r\n$1\r\n3\r\n$1\r\nc\r\n$1\r\n2\r\n");
  CHECK(db({"ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"}) ==
        "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
        "BYLEX\r\n");
  CHECK(db({"ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1"}).substr(0, 4) == "*4\r\n");
  CHECK(db({"ZRANGE", "z", "0", "-1", "FOO"}) == kSyntaxError);
  CHECK(db({"ZRANGE", "z", "0"}) == arity("zrange"));
  CHECK(db({"ZRANGE", "nokey", "0", "-1"}) == "*0\r\n");
  // BYSCORE: "(" opens a bound; REV takes max then min; LIMIT offset count.
  CHECK(db({"ZRANGE", "z", "2", "3", "BYSCORE"}) == "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n");
  CHECK(db({"ZRANGE", "z", "(1", "(3", "BYSCORE", "WITHSCORES"}) ==
        "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n2\r\n");
  CHECK(db({"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"}) ==
        "*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
  CHECK(db({"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"}) == "*0\r\n");
  CHECK(db({"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "-1"}) ==
        "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n");
  CHECK(db({"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "100", "1"}) == "*0\r\n");
  CHECK(db({"ZRANGE", "z", "(3", "2", "BYSCORE", "REV", "WITHSCORES"}) ==
        "*4\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n2\r\n");
  CHECK(db({"ZRANGE", "z", "x", "2", "BYSCORE"}) == "-ERR min or max is not a float\r\n");
  CHECK(db({"ZRANGE", "z", "", "2", "BYSCORE"}).substr(0, 4) == "*3\r\n");  // "" reads as 0
  CHECK(db({"ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX"}) == kSyntaxError);
  // BYLEX over equal scores.
  CHECK(db({"ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"}) == ":4\r\n");
  CHECK(db({"ZRANGE", "lex", "[b", "(d", "BYLEX"}) == "*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
  CHECK(db({"ZRANGE", "lex", "-", "+", "BYLEX", "LIMIT", "1", "2"}) ==
        "*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
  CHECK(db({"ZRANGE", "lex", "+", "-", "BYLEX", "REV"}) ==
        "*4\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n");
  CHECK(db({"ZRANGE", "lex", "(c", "-", "BYLEX", "REV"}) == "*2\r\n$1\r\nb\r\n$1\r\na\r\n");
  CHECK(db({"ZRANGE", "lex", "[z", "+", "BYLEX"}) == "*0\r\n");
  CHECK(db({"ZRANGE", "lex", "0", "-1", "BYLEX"}) ==
        "-ERR min or max not valid string range item\r\n");
  CHECK(db({"ZRANGE", "lex", "-", "+", "BYLEX", "WITHSCORES"}) ==
        "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n");
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"ZRANGE", "str", "0", "1"}) == kWrongType);
  db.resp3();
  // RESP3: WITHSCORES gives [member, score] pairs with double scores.
  CHECK(db({"ZRANGE", "z", "0", "1", "WITHSCORES"}) ==
        "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n");
  CHECK(db({"ZRANGE", "z", "0", "0"}) == "*1\r\n$1\r\na\r\n");
  CHECK(db({"ZRANGE", "nokey", "0", "-1", "WITHSCORES"}) == "*0\r\n");
}

TEST_CASE("ZPOPMIN, ZPOPMAX") {
  KeyspaceFixture db;
  CHECK(db({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}) == ":4\r\n");
  CHECK(db({"ZPOPMIN", "z"}) == "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
  CHECK(db({"ZPOPMIN", "z", "2"}) == "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n");
  CHECK(db({"ZPOPMIN", "z", "0"}) == "*0\r\n");
  CHECK(db({"ZPOPMIN", "z", "-1"}) == kMustBePositive);
  CHECK(db({"ZPOPMIN", "z", "x"}) == kMustBePositive);
  CHECK(db({"ZPOPMIN", "z", "1", "2"}) == kSyntaxError);
  CHECK(db({"ZPOPMIN", "nokey"}) == "*0\r\n");
  CHECK(db({"ZPOPMIN", "nokey", "2"}) == "*0\r\n");
  CHECK(db({"ZPOPMAX", "z", "100"}) == "*2\r\n$1\r\nd\r\n$1\r\n4\r\n");
  CHECK(db({"EXISTS", "z"}) == ":0\r\n");
  CHECK(db({"SET", "str", "v"}) == kOk);
  CHECK(db({"ZPOPMIN", "str"}) == kWrongType);
  db.resp3();
  CHECK(db({"ZADD", "z", "1", "a", "2", "b", "3", "c"}) == ":3\r\n");
  CHECK(db({"ZPOPMIN", "z"}) == "*2\r\n$1\r\na\r\n,1\r\n");  // no count: flat
  CHECK(db({"ZPOPMAX", "z", "1"}) == "*1\r\n*2\r\n$1\r\nc\r\n,3\r\n");
  CHECK(db({"ZPOPMIN", "nokey"}) == "*0\r\n");
}
