// RedisKeyspace: strings, keys and expiry, connection and server commands, the command table.
// Every expected reply is the bytes redis-server 7.0.15 sends for the same command (RESP2, and
// RESP3 after HELLO 3). Lists, sets, hashes and sorted sets: redis_keyspace_types_test.cpp.
#include <netbuf/redis/redis_keyspace.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "keyspace_fixture.hpp"

using namespace netbuf;
using namespace std::string_literals;
using netbuf::test::arity;
using netbuf::test::cat;
using netbuf::test::KeyspaceFixture;
using netbuf::test::kNotInteger;
using netbuf::test::kNull2;
using netbuf::test::kNull3;
using netbuf::test::kOk;
using netbuf::test::kSyntaxError;
using netbuf::test::kWrongType;

TEST_CASE("PING, ECHO, unknown commands and arity") {
  KeyspaceFixture db;
  CHECK(db({"PING"}) == "+PONG\r\n");
  CHECK(db({"ping", "hello"}) == "$5\r\nhello\r\n");
  CHECK(db({"PING", "a", "b"}) == arity("ping"));
  CHECK(db({"ECHO", "hi"}) == "$2\r\nhi\r\n");
  CHECK(db({"ECHO"}) == arity("echo"));
  CHECK(db({"GET"}) == arity("get"));
  CHECK(db({"gEt", "a", "b"}) == arity("get"));
  CHECK(db({"foo"}) == "-ERR unknown command 'foo', with args beginning with: \r\n");
  CHECK(db({"foo", "a", "b"}) ==
        "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
  // Client bytes in an error stay on one line.
  CHECK(db({"foo", "a\r\nb", "c d"}) ==
        "-ERR unknown command 'foo', with args beginning with: 'a  b' 'c d' \r\n");
  // The name is cut at 128 bytes; arguments are listed while the list is under 128 bytes.
  const std::string a(130, 'a');
  CHECK(db({"foo", a, "b"}) == cat({"-ERR unknown command 'foo', with args beginning with: '",
                                    std::string(128, 'a'), "' \r\n"}));
  const std::string a125(125, 'a');  // "'a...a' " is 128 bytes: the list stops
  CHECK(db({"foo", a125, "b", "c"}) ==
        cat({"-ERR unknown command 'foo', with args beginning with: '", a125, "' \r\n"}));
  const std::string a124(124, 'a');  // 127 bytes: one more argument, cut to 1 byte
  CHECK(db({"foo", a124, "xyz", "c"}) ==
        cat({"-ERR unknown command 'foo', with args beginning with: '", a124, "' 'x' \r\n"}));
  const std::string f(200, 'F');
  CHECK(db({f, "b"}) == cat({"-ERR unknown command '", std::string(128, 'F'),
                             "', with args beginning with: 'b' \r\n"}));
  db.resp3();
  CHECK(db({"PING"}) == "+PONG\r\n");
  CHECK(db({"foo", "x"}) == "-ERR unknown command 'foo', with args beginning with: 'x' \r\n");
}

TEST_CASE("SET and its options, GET") {
  KeyspaceFixture db;
  CHECK(db({"SET", "k", "v"}) == kOk);
  CHECK(db({"GET", "k"}) == "$1\r\nv\r\n");
  CHECK(db({"GET", "nokey"}) == kNull2);
  CHECK(db({"SET", "k", "v", "NX"}) == kNull2);
  CHECK(db({"SET", "k", "v2", "XX"}) == kOk);
  CHECK(db({"SET", "new", "v", "XX"}) == kNull2);
  CHECK(db({"GET", "k"}) == "$2\r\nv2\r\n");
  CHECK(db({"SET", "k", "v3", "GET"}) == "$2\r\nv2\r\n");
  CHECK(db({"SET", "nokey", "v", "GET"}) == kNull2);
  CHECK(db({"SET", "k", "v", "NX", "GET"}) == "$2\r\nv3\r\n");
  CHECK(db({"SET", "n1", "v", "NX", "GET"}) == kNull2);
  CHECK(db({"GET", "n1"}) == "$1\r\nv\r\n");
  CHECK(db({"SET", "k", "v", "EX", "0"}) == "-ERR invalid expire time in 'set' command\r\n");
  CHECK(db({"SET", "k", "v", "EX", "-5"}) == "-ERR invalid expire time in 'set' command\r\n");
  CHECK(db({"SET", "k", "v", "PX", "0"}) == "-ERR invalid expire time in 'set' command\r\n");
  CHECK(db({"SET", "k", "v", "EX", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'set' command\r\n");
  CHECK(db({"SET", "k", "v", "EX", "abc"}) == kNotInteger);
  CHECK(db({"SET", "k", "v", "EX"}) == kSyntaxError);
  CHECK(db({"SET", "k", "v", "NX", "XX"}) == kSyntaxError);
  CHECK(db({"SET", "k", "v", "EX", "10", "PX", "100"}) == kSyntaxError);
  CHECK(db({"SET", "k", "v", "KEEPTTL", "EX", "10"}) == kSyntaxError);
  CHECK(db({"SET", "k", "v", "EX", "10", "KEEPTTL"}) == kSyntaxError);
  CHECK(db({"SET", "k", "v", "FOO"}) == kSyntaxError);
  CHECK(db({"SET", "k"}) == arity("set"));
  CHECK(db({"LPUSH", "l", "a"}) == ":1\r\n");
  CHECK(db({"GET", "l"}) == kWrongType);
  CHECK(db({"SET", "l", "x", "GET"}) == kWrongType);
  CHECK(db({"SET", "l", "x"}) == kOk);  // SET replaces any type
  CHECK(db({"GET", "l"}) == "$1\r\nx\r\n");
  // Binary-safe values.
  CHECK(db({"SET", "bin", "a\0\r\nb"s}) == kOk);
  CHECK(db({"GET", "bin"}) == "$5\r\na\0\r\nb\r\n"s);
  db.resp3();
  CHECK(db({"GET", "nokey9"}) == kNull3);
  CHECK(db({"SET", "k", "v", "NX"}) == kNull3);
  CHECK(db({"SET", "nokey2", "v", "GET"}) == kNull3);
}

TEST_CASE("SET EX/PX/KEEPTTL, SETEX, PSETEX and TTL with the fake clock") {
  KeyspaceFixture db;
  CHECK(db({"SET", "k", "v", "EX", "10"}) == kOk);
  CHECK(db({"TTL", "k"}) == ":10\r\n");
  CHECK(db({"PTTL", "k"}) == ":10000\r\n");
  db.now += 4'400;
  CHECK(db({"TTL", "k"}) == ":6\r\n");  // 5600 ms rounds to 6
  CHECK(db({"PTTL", "k"}) == ":5600\r\n");
  CHECK(db({"SET", "k", "v2", "KEEPTTL"}) == kOk);
  CHECK(db({"PTTL", "k"}) == ":5600\r\n");
  CHECK(db({"SET", "k", "v3"}) == kOk);  // a plain SET drops the deadline
  CHECK(db({"TTL", "k"}) == ":-1\r\n");
  CHECK(db({"SET", "k", "v", "PX", "1500"}) == kOk);
  db.now += 1'500;
  CHECK(db({"GET", "k"}) == "$1\r\nv\r\n");  // alive at the deadline itself
  CHECK(db({"PTTL", "k"}) == ":0\r\n");
  db.now += 1;
  CHECK(db({"GET", "k"}) == kNull2);
  CHECK(db({"TTL", "k"}) == ":-2\r\n");
  CHECK(db({"SETEX", "s", "100", "v"}) == kOk);
  CHECK(db({"TTL", "s"}) == ":100\r\n");
  CHECK(db({"SETEX", "s", "0", "v"}) == "-ERR invalid expire time in 'setex' command\r\n");
  CHECK(db({"PSETEX", "p", "2500", "v"}) == kOk);
  CHECK(db({"PTTL", "p"}) == ":2500\r\n");
  CHECK(db({"TTL", "p"}) == ":3\r\n");
  CHECK(db({"PSETEX", "p", "-1", "v"}) == "-ERR invalid expire time in 'psetex' command\r\n");
  CHECK(db({"SETEX", "s", "x", "v"}) == kNotInteger);
  // INCR and APPEND keep the deadline, as Redis's dbOverwrite does.
  CHECK(db({"SET", "n", "1", "EX", "50"}) == kOk);
  CHECK(db({"INCR", "n"}) == ":2\r\n");
  CHECK(db({"TTL", "n"}) == ":50\r\n");
  CHECK(db({"APPEND", "n", "0"}) == ":2\r\n");
  CHECK(db({"TTL", "n"}) == ":50\r\n");
}

TEST_CASE("GETDEL, GETSET, SETNX, APPEND, STRLEN") {
  KeyspaceFixture db;
  CHECK(db({"SET", "k", "v"}) == kOk);
  CHECK(db({"GETDEL", "k"}) == "$1\r\nv\r\n");
  CHECK(db({"GETDEL", "k"}) == kNull2);
  CHECK(db({"EXISTS", "k"}) == ":0\r\n");
  CHECK(db({"RPUSH", "l", "a"}) == ":1\r\n");
  CHECK(db({"GETDEL", "l"}) == kWrongType);
  CHECK(db({"GETSET", "g", "1"}) == kNull2);
  CHECK(db({"GETSET", "g", "2"}) == "$1\r\n1\r\n");
  CHECK(db({"GETSET", "l", "2"}) == kWrongType);
  CHECK(db({"SETNX", "sn", "1"}) == ":1\r\n");
  CHECK(db({"SETNX", "sn", "2"}) == ":0\r\n");
  CHECK(db({"SETNX", "l", "2"}) == ":0\r\n");
  CHECK(db({"GET", "sn"}) == "$1\r\n1\r\n");
  CHECK(db({"SETNX", "sn"}) == arity("setnx"));
  CHECK(db({"APPEND", "ap", "hello"}) == ":5\r\n");
  CHECK(db({"APPEND", "ap", " world"}) == ":11\r\n");
  CHECK(db({"GET", "ap"}) == "$11\r\nhello world\r\n");
  CHECK(db({"APPEND", "l", "x"}) == kWrongType);
  CHECK(db({"STRLEN", "ap"}) == ":11\r\n");
  CHECK(db({"STRLEN", "nothing"}) == ":0\r\n");
  CHECK(db({"STRLEN", "l"}) == kWrongType);
  db.resp3();
  CHECK(db({"GETDEL", "k"}) == kNull3);
  CHECK(db({"GETSET", "g2", "1"}) == kNull3);
}

TEST_CASE("INCR, INCRBY, DECR, DECRBY") {
  KeyspaceFixture db;
  CHECK(db({"INCR", "i"}) == ":1\r\n");
  CHECK(db({"INCR", "i"}) == ":2\r\n");
  CHECK(db({"INCRBY", "i", "10"}) == ":12\r\n");
  CHECK(db({"INCRBY", "i", "-3"}) == ":9\r\n");
  CHECK(db({"DECR", "i"}) == ":8\r\n");
  CHECK(db({"DECRBY", "i", "5"}) == ":3\r\n");
  CHECK(db({"GET", "i"}) == "$1\r\n3\r\n");
  // Only canonical integers: no '+', no leading zero or space, no fraction.
  for (std::string_view bad : {"abc", "1.5", " 1", "01", "+1", "-0", ""}) {
    CAPTURE(bad);
    CHECK(db({"INCRBY", "i", bad}) == kNotInteger);
    CHECK(db({"SET", "t", bad}) == kOk);
    CHECK(db({"INCR", "t"}) == kNotInteger);
  }
  CHECK(db({"RPUSH", "l", "a"}) == ":1\r\n");
  CHECK(db({"INCR", "l"}) == kWrongType);
  CHECK(db({"SET", "big", "9223372036854775807"}) == kOk);
  CHECK(db({"INCR", "big"}) == "-ERR increment or decrement would overflow\r\n");
  CHECK(db({"SET", "small", "-9223372036854775808"}) == kOk);
  CHECK(db({"DECR", "small"}) == "-ERR increment or decrement would overflow\r\n");
  CHECK(db({"DECRBY", "small", "-9223372036854775808"}) == "-ERR decrement would overflow\r\n");
  CHECK(db({"DECRBY", "x", "9223372036854775807"}) == ":-9223372036854775807\r\n");
  CHECK(db({"INCRBY", "x", "9223372036854775808"}) == kNotInteger);
  CHECK(db({"INCR"}) == arity("incr"));
  CHECK(db({"INCRBY", "i"}) == arity("incrby"));
}

TEST_CASE("MSET, MSETNX, MGET, DEL, UNLINK, EXISTS, TYPE") {
  KeyspaceFixture db;
  CHECK(db({"MSET", "a", "1", "b", "2", "c", "3"}) == kOk);
  CHECK(db({"MSET", "a", "1", "b"}) == arity("mset"));
  CHECK(db({"MSET", "a"}) == arity("mset"));
  CHECK(db({"RPUSH", "l", "x"}) == ":1\r\n");
  CHECK(db({"MGET", "a", "b", "c", "nokey", "l"}) ==
        "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$-1\r\n$-1\r\n");
  CHECK(db({"MGET"}) == arity("mget"));
  CHECK(db({"MSETNX", "a", "9", "z", "9"}) == ":0\r\n");
  CHECK(db({"EXISTS", "z"}) == ":0\r\n");
  CHECK(db({"MSETNX", "y", "9", "z", "9"}) == ":1\r\n");
  CHECK(db({"EXISTS", "a", "c", "c", "nokey"}) == ":3\r\n");
  CHECK(db({"DEL", "a", "b", "nokey"}) == ":2\r\n");
  CHECK(db({"UNLINK", "y", "z"}) == ":2\r\n");
  CHECK(db({"DEL"}) == arity("del"));
  CHECK(db({"TYPE", "c"}) == "+string\r\n");
  CHECK(db({"TYPE", "l"}) == "+list\r\n");
  CHECK(db({"TYPE", "nokey"}) == "+none\r\n");
  CHECK(db({"SADD", "s", "x"}) == ":1\r\n");
  CHECK(db({"TYPE", "s"}) == "+set\r\n");
  CHECK(db({"HSET", "h", "f", "v"}) == ":1\r\n");
  CHECK(db({"TYPE", "h"}) == "+hash\r\n");
  CHECK(db({"ZADD", "z", "1", "m"}) == ":1\r\n");
  CHECK(db({"TYPE", "z"}) == "+zset\r\n");
  db.resp3();
  CHECK(db({"MGET", "c", "nokey"}) == "*2\r\n$1\r\n3\r\n_\r\n");
}

TEST_CASE("EXPIRE, PEXPIRE, TTL, PTTL, PERSIST") {
  KeyspaceFixture db;
  CHECK(db({"SET", "c", "v"}) == kOk);
  CHECK(db({"EXPIRE", "c", "100"}) == ":1\r\n");
  CHECK(db({"TTL", "c"}) == ":100\r\n");
  CHECK(db({"PERSIST", "c"}) == ":1\r\n");
  CHECK(db({"PERSIST", "c"}) == ":0\r\n");
  CHECK(db({"TTL", "c"}) == ":-1\r\n");
  CHECK(db({"PTTL", "c"}) == ":-1\r\n");
  CHECK(db({"TTL", "nokey"}) == ":-2\r\n");
  CHECK(db({"PTTL", "nokey"}) == ":-2\r\n");
  CHECK(db({"PERSIST", "nokey"}) == ":0\r\n");
  CHECK(db({"EXPIRE", "nokey", "10"}) == ":0\r\n");
  CHECK(db({"EXPIRE", "c", "abc"}) == kNotInteger);
  CHECK(db({"EXPIRE", "c", "10", "NX"}) == ":1\r\n");
  CHECK(db({"EXPIRE", "c", "20", "NX"}) == ":0\r\n");
  CHECK(db({"EXPIRE", "c", "20", "XX"}) == ":1\r\n");
  CHECK(db({"EXPIRE", "c", "5", "GT"}) == ":0\r\n");
  CHECK(db({"EXPIRE", "c", "50", "GT"}) == ":1\r\n");
  CHECK(db({"TTL", "c"}) == ":50\r\n");
  CHECK(db({"EXPIRE", "c", "60", "LT"}) == ":0\r\n");
  CHECK(db({"EXPIRE", "c", "30", "LT"}) == ":1\r\n");
  CHECK(db({"TTL", "c"}) == ":30\r\n");
  CHECK(db({"EXPIRE", "c", "10", "NX", "XX"}) ==
        "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n");
  CHECK(db({"EXPIRE", "c", "10", "GT", "LT"}) ==
        "-ERR GT and LT options at the same time are not compatible\r\n");
  CHECK(db({"EXPIRE", "c", "10", "FOO"}) == "-ERR Unsupported option FOO\r\n");
  CHECK(db({"EXPIRE", "c", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'expire' command\r\n");
  CHECK(db({"PEXPIRE", "c", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'pexpire' command\r\n");
  CHECK(db({"EXPIRE"}) == arity("expire"));
  // A deadline not in the future deletes the key and answers 1.
  CHECK(db({"EXPIRE", "c", "0"}) == ":1\r\n");
  CHECK(db({"EXISTS", "c"}) == ":0\r\n");
  CHECK(db({"SET", "c", "v"}) == kOk);
  CHECK(db({"EXPIRE", "c", "-1"}) == ":1\r\n");
  CHECK(db({"EXISTS", "c"}) == ":0\r\n");
  // GT on a key without deadline fails (no deadline is infinite); LT succeeds.
  CHECK(db({"SET", "d", "v"}) == kOk);
  CHECK(db({"EXPIRE", "d", "10", "GT"}) == ":0\r\n");
  CHECK(db({"EXPIRE", "d", "10", "LT"}) == ":1\r\n");
  CHECK(db({"PEXPIRE", "d", "1500"}) == ":1\r\n");
  CHECK(db({"PTTL", "d"}) == ":1500\r\n");
  CHECK(db({"TTL", "d"}) == ":2\r\n");
  db.now += 1'501;
  CHECK(db({"PTTL", "d"}) == ":-2\r\n");
  CHECK(db.ks.size() == 0);  // the access removed it
}

TEST_CASE("expired keys are gone for every command, and sweepExpired removes them") {
  KeyspaceFixture db;
  for (int i = 0; i < 1000; ++i) {
    const std::string k = cat({"k", std::to_string(i)});
    CHECK(db({"SET", k, "v", "PX", i % 2 == 0 ? "100" : "100000"}) == kOk);
  }
  for (int i = 0; i < 100; ++i) CHECK(db({"SET", cat({"p", std::to_string(i)}), "v"}) == kOk);
  CHECK(db.ks.size() == 1100);
  CHECK(db.ks.sweepExpired(1000) == 0);  // nothing due yet
  db.now += 101;
  // Not swept yet: DBSIZE counts them (as Redis does), reads do not see them.
  CHECK(db({"DBSIZE"}) == ":1100\r\n");
  CHECK(db({"GET", "k0"}) == kNull2);
  CHECK(db({"EXISTS", "k2", "k1"}) == ":1\r\n");
  std::vector<std::string> keys;
  db.ks.keys("k*", keys);
  CHECK(keys.size() == 500);
  CHECK(db({"KEYS", "k1?"}).substr(0, 5) == "*5\r\n$");  // k11 k13 ... k19
  std::size_t removed = 0;
  for (int round = 0; round < 100 && db.ks.size() > 600; ++round) {
    const std::size_t n = db.ks.sweepExpired(50);
    CHECK(n <= 50);
    removed += n;
  }
  CHECK(removed == 498);  // k0 and k2 went on access
  CHECK(db.ks.size() == 600);
  CHECK(db.ks.sweepExpired() == 0);
  db.now += 100'000;
  CHECK(db.ks.sweepExpired(1000) == 500);
  CHECK(db.ks.size() == 100);
  // A deadline removed by PERSIST or replaced by SET is no longer swept.
  CHECK(db({"SET", "a", "v", "PX", "10"}) == kOk);
  CHECK(db({"SET", "b", "v", "PX", "10"}) == kOk);
  CHECK(db({"PERSIST", "a"}) == ":1\r\n");
  CHECK(db({"SET", "b", "w"}) == kOk);
  db.now += 11;
  CHECK(db.ks.sweepExpired() == 0);
  CHECK(db({"GET", "a"}) == "$1\r\nv\r\n");
  CHECK(db({"GET", "b"}) == "$1\r\nw\r\n");
  // Aggregates expire too.
  CHECK(db({"RPUSH", "l", "a", "b"}) == ":2\r\n");
  CHECK(db({"PEXPIRE", "l", "5"}) == ":1\r\n");
  db.now += 6;
  CHECK(db({"LLEN", "l"}) == ":0\r\n");
  CHECK(db({"RPUSH", "l", "c"}) == ":1\r\n");
  CHECK(db({"TTL", "l"}) == ":-1\r\n");
  // FLUSHALL forgets deadlines.
  CHECK(db({"SET", "x", "v", "PX", "10"}) == kOk);
  CHECK(db({"FLUSHALL"}) == kOk);
  db.now += 11;
  CHECK(db.ks.sweepExpired() == 0);
  CHECK(db.ks.size() == 0);
}

TEST_CASE("the default clock is the steady clock") {
  RedisKeyspace ks;
  const std::int64_t a = ks.nowMs();
  const std::int64_t b = ks.nowMs();
  CHECK(b >= a);
}

TEST_CASE("KEYS patterns (stringmatchlen)") {
  KeyspaceFixture db;
  for (std::string_view k : {"hello", "hallo", "hxllo", "h*llo", "hllo", "heeello", "a[b", "x"}) {
    CHECK(db({"SET", k, "v"}) == kOk);
  }
  auto keys = [&](std::string_view pattern) {
    std::vector<std::string> out;
    db.ks.keys(pattern, out);
    std::sort(out.begin(), out.end());
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(keys("*").size() == 8);
  CHECK(keys("h?llo") == V{"h*llo", "hallo", "hello", "hxllo"});
  CHECK(keys("h*llo") == V{"h*llo", "hallo", "heeello", "hello", "hllo", "hxllo"});
  CHECK(keys("h[ae]llo") == V{"hallo", "hello"});
  CHECK(keys("h[^e]llo") == V{"h*llo", "hallo", "hxllo"});
  CHECK(keys("h[a-b]llo") == V{"hallo"});
  CHECK(keys("h[b-a]llo") == V{"hallo"});  // a reversed range is swapped
  CHECK(keys("h\\*llo") == V{"h*llo"});
  CHECK(keys("a\\[b") == V{"a[b"});
  CHECK(keys("a[[]b") == V{"a[b"});
  CHECK(keys("**o") == V{"h*llo", "hallo", "heeello", "hello", "hllo", "hxllo"});
  CHECK(keys("nomatch*").empty());
  CHECK(keys("x*").size() == 1);
  CHECK(keys("HELLO").empty());  // case-sensitive
  CHECK(keys("h[a").empty());    // an unclosed class ends with the pattern
  CHECK(db({"KEYS", "h[ae]llo"}).substr(0, 4) == "*2\r\n");
  CHECK(db({"KEYS", "x"}) == "*1\r\n$1\r\nx\r\n");
  CHECK(db({"KEYS", "nomatch"}) == "*0\r\n");
  CHECK(db({"KEYS"}) == arity("keys"));
}

TEST_CASE("KEYS: a pattern nesting '*' past 1000 levels matches nothing instead of overflowing") {
  KeyspaceFixture db;
  // A key of a million 'a's against "*a*a...*ab": without the nesting bound each '*' is one more
  // frame of recursion, a million deep.
  const std::string key(1000000, 'a');
  CHECK(db({"SET", key, "v"}) == kOk);
  std::string deep;
  for (int i = 0; i < 1000000; ++i) deep += "*a";
  deep += "b";
  CHECK(db({"KEYS", deep}) == "*0\r\n");
  // Up to the bound the same shape still matches: 999 stars.
  std::string shallow;
  for (int i = 0; i < 999; ++i) shallow += "*a";
  CHECK(db({"KEYS", shallow}).substr(0, 4) == "*1\r\n");
}

TEST_CASE("DBSIZE, FLUSHALL, FLUSHDB, SELECT") {
  KeyspaceFixture db;
  CHECK(db({"MSET", "a", "1", "b", "2"}) == kOk);
  CHECK(db({"DBSIZE"}) == ":2\r\n");
  CHECK(db.ks.size() == 2);
  CHECK(db({"DBSIZE", "x"}) == arity("dbsize"));
  CHECK(db({"FLUSHDB", "x"}) == kSyntaxError);
  CHECK(db({"FLUSHALL", "a", "b"}) == kSyntaxError);
  CHECK(db({"FLUSHDB", "ASYNC"}) == kOk);
  CHECK(db({"DBSIZE"}) == ":0\r\n");
  CHECK(db({"SET", "a", "1"}) == kOk);
  CHECK(db({"FLUSHALL", "sync"}) == kOk);
  CHECK(db({"SET", "a", "1"}) == kOk);
  CHECK(db({"FLUSHALL"}) == kOk);
  CHECK(db({"DBSIZE"}) == ":0\r\n");
  CHECK(db({"SET", "a", "1"}) == kOk);
  db.ks.clear();
  CHECK(db.ks.size() == 0);
  CHECK(db({"SELECT", "0"}) == kOk);
  // One database, as redis-server with `databases 1`.
  CHECK(db({"SELECT", "1"}) == "-ERR DB index is out of range\r\n");
  CHECK(db({"SELECT", "-1"}) == "-ERR DB index is out of range\r\n");
  CHECK(db({"SELECT", "x"}) == kNotInteger);
  CHECK(db({"SELECT", "99999999999"}) ==
        "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
  CHECK(db({"SELECT"}) == arity("select"));
}

constexpr std::string_view kHello2 =
    "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:2\r\n"
    "$2\r\nid\r\n:7\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
    "$7\r\nmodules\r\n*0\r\n";
constexpr std::string_view kHello3 =
    "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n"
    "$2\r\nid\r\n:7\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
    "$7\r\nmodules\r\n*0\r\n";

TEST_CASE("HELLO switches the protocol and answers in the new one") {
  KeyspaceFixture db;
  CHECK(db({"HELLO"}) == kHello2);
  CHECK(db.session.protocol == RespProtocol::Resp2);
  CHECK(db({"HELLO", "3"}) == kHello3);
  CHECK(db.session.protocol == RespProtocol::Resp3);
  CHECK(db({"GET", "nokey"}) == kNull3);
  CHECK(db({"HELLO"}) == kHello3);  // no version: the protocol stays
  CHECK(db({"HELLO", "2"}) == kHello2);
  CHECK(db.session.protocol == RespProtocol::Resp2);
  CHECK(db({"GET", "nokey"}) == kNull2);

  // The writer the caller passed switches too, for a reply written after HELLO's.
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(256);
  RespWriter w(out, RespProtocol::Resp2);
  const std::string_view hello3[] = {"hello", "3"};
  db.ks.execute(RedisCommand::copyOf(hello3), w, db.session);
  CHECK(w.protocol() == RespProtocol::Resp3);
  db.resp2();

  CHECK(db({"HELLO", "4"}) == "-NOPROTO unsupported protocol version\r\n");
  CHECK(db({"HELLO", "1"}) == "-NOPROTO unsupported protocol version\r\n");
  CHECK(db({"HELLO", "x"}) == "-ERR Protocol version is not an integer or out of range\r\n");
  CHECK(db({"HELLO", "3", "FOO"}) == "-ERR Syntax error in HELLO option 'FOO'\r\n");
  CHECK(db({"HELLO", "3", "AUTH", "a"}) == "-ERR Syntax error in HELLO option 'AUTH'\r\n");
  CHECK(db({"HELLO", "3", "AUTH", "nouser", "pass"}) ==
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  CHECK(db({"HELLO", "3", "SETNAME", "bad name"}) ==
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  CHECK(db.session.protocol == RespProtocol::Resp2);  // a failed HELLO changes nothing
  CHECK(db({"HELLO", "3", "AUTH", "default", "anything", "SETNAME", "conn1"}) == kHello3);
  CHECK(db.session.name == "conn1");
  CHECK(db({"CLIENT", "GETNAME"}) == "$5\r\nconn1\r\n");
}

TEST_CASE("QUIT closes after its reply") {
  KeyspaceFixture db;
  CHECK(db({"QUIT"}) == kOk);
  CHECK(db.session.closeAfterReply);
}

TEST_CASE("CLIENT") {
  KeyspaceFixture db;
  db.session.peerAddress = "127.0.0.1:5000";
  db.session.localAddress = "127.0.0.1:6379";
  CHECK(db({"CLIENT", "GETNAME"}) == kNull2);
  CHECK(db({"CLIENT", "SETNAME", "a b"}) ==
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  CHECK(db({"CLIENT", "SETNAME"}) == arity("client|setname"));
  CHECK(db({"CLIENT", "SETNAME", "x", "y"}) == arity("client|setname"));
  CHECK(db({"client", "setname", "myname"}) == kOk);
  CHECK(db({"CLIENT", "GETNAME"}) == "$6\r\nmyname\r\n");
  CHECK(db({"CLIENT", "GETNAME", "x"}) == arity("client|getname"));
  CHECK(db({"CLIENT", "SETNAME", ""}) == kOk);
  CHECK(db({"CLIENT", "GETNAME"}) == kNull2);
  CHECK(db({"CLIENT", "ID"}) == ":7\r\n");
  CHECK(db({"CLIENT", "NO-EVICT", "on"}) == kOk);
  CHECK(db({"CLIENT", "NO-EVICT", "maybe"}) == kSyntaxError);
  CHECK(db({"CLIENT", "NO-EVICT"}) == arity("client|no-evict"));
  CHECK(db({"CLIENT", "NO-TOUCH", "off"}) == kOk);
  CHECK(db({"CLIENT", "SETINFO", "lib-name", "x"}) == kOk);
  CHECK(db({"CLIENT", "FOO"}) == "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n");
  CHECK(db({"client", "foo"}) == "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n");
  CHECK(db({"CLIENT"}) == arity("client"));
  const std::string info = db({"CLIENT", "INFO"});
  CHECK(info.substr(0, 1) == "$");
  CHECK(info.find("id=7 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 ") != std::string::npos);
  CHECK(info.find(" resp=2\n\r\n") != std::string::npos);
  db.resp3();
  const std::string info3 = db({"CLIENT", "LIST"});
  CHECK(info3.find("txt:id=7 ") != std::string::npos);
  CHECK(info3.substr(0, 1) == "=");
  CHECK(info3.find("cmd=client|list user=default redir=-1 resp=3\n\r\n") != std::string::npos);
  CHECK(db({"CLIENT", "GETNAME"}) == kNull3);
}

TEST_CASE("CONFIG GET answers what redis-benchmark asks") {
  KeyspaceFixture db;
  CHECK(db({"CONFIG", "GET", "save"}) == "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
  CHECK(db({"CONFIG", "GET", "appendonly"}) == "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
  CHECK(db({"CONFIG", "GET", "SAVE"}) == "*2\r\n$4\r\nSAVE\r\n$0\r\n\r\n");
  CHECK(db({"CONFIG", "GET", "save", "appendonly"}) ==
        "*4\r\n$4\r\nsave\r\n$0\r\n\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
  CHECK(db({"CONFIG", "GET", "save", "sa*"}) == "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
  CHECK(db({"CONFIG", "GET", "maxmemory-p*"}) ==
        "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n");
  CHECK(db({"CONFIG", "GET", "nosuch"}) == "*0\r\n");
  CHECK(db({"CONFIG", "GET"}) == arity("config|get"));
  CHECK(db({"CONFIG"}) == arity("config"));
  CHECK(db({"CONFIG", "FOO", "bar"}) == "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n");
  db.resp3();
  CHECK(db({"CONFIG", "GET", "save"}) == "%1\r\n$4\r\nsave\r\n$0\r\n\r\n");
  CHECK(db({"CONFIG", "GET", "nosuch"}) == "%0\r\n");
}

TEST_CASE("COMMAND, COMMAND COUNT, INFO, DOCS, LIST") {
  KeyspaceFixture db;
  const std::string count = cat({":", std::to_string(RedisKeyspace::commands().size()), "\r\n"});
  CHECK(db({"COMMAND", "COUNT"}) == count);
  CHECK(db({"COMMAND", "COUNT", "x"}) == arity("command|count"));
  CHECK(db({"COMMAND", "FOO"}) == "-ERR unknown subcommand 'FOO'. Try COMMAND HELP.\r\n");
  CHECK(db({"COMMAND", "INFO", "get", "nosuch"}) ==
        "*2\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
        "*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*0\r\n*0\r\n$-1\r\n");
  CHECK(db({"COMMAND", "DOCS"}) == "*0\r\n");
  CHECK(db({"COMMAND", "DOCS", "get"}) == "*0\r\n");
  const std::string all = db({"COMMAND"});
  CHECK(all.rfind(cat({"*", std::to_string(RedisKeyspace::commands().size()), "\r\n*10\r\n"}), 0) ==
        0);
  CHECK(all.find("$4\r\nmset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:-1\r\n:2\r\n") !=
        std::string::npos);
  const std::string list = db({"COMMAND", "LIST"});
  CHECK(list.find("$7\r\nzpopmin\r\n") != std::string::npos);
  db.resp3();
  CHECK(db({"COMMAND", "DOCS"}) == "%0\r\n");
  CHECK(db({"COMMAND", "INFO", "nosuch"}) == "*1\r\n_\r\n");
  CHECK(db({"COMMAND", "INFO", "ping"}) ==
        "*1\r\n*10\r\n$4\r\nping\r\n:-1\r\n~1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n"
        "~2\r\n+@fast\r\n+@connection\r\n~0\r\n*0\r\n*0\r\n");
}

TEST_CASE("findCommand: any case, Redis's key positions and write flags") {
  const RedisCommandSpec* get = RedisKeyspace::findCommand("gEt");
  REQUIRE(get != nullptr);
  CHECK(get->name == "get");
  CHECK(get->arity == 2);
  CHECK(get->firstKey == 1);
  CHECK(get->lastKey == 1);
  CHECK(get->step == 1);
  CHECK_FALSE(get->write);
  const RedisCommandSpec* mset = RedisKeyspace::findCommand("MSET");
  REQUIRE(mset != nullptr);
  CHECK(mset->arity == -3);
  CHECK(mset->lastKey == -1);
  CHECK(mset->step == 2);
  CHECK(mset->write);
  const RedisCommandSpec* ping = RedisKeyspace::findCommand("PING");
  REQUIRE(ping != nullptr);
  CHECK(ping->firstKey == 0);
  CHECK(RedisKeyspace::findCommand("nosuch") == nullptr);
  CHECK(RedisKeyspace::findCommand("") == nullptr);
  CHECK(RedisKeyspace::findCommand("gets") == nullptr);
  CHECK(RedisKeyspace::findCommand("ge") == nullptr);
  CHECK(RedisKeyspace::findCommand(std::string(1000, 'a')) == nullptr);
  // Every command of the table is found under its own name, in upper case too.
  for (const RedisCommandSpec& spec : RedisKeyspace::commands()) {
    CAPTURE(spec.name);
    CHECK(RedisKeyspace::findCommand(spec.name) == &spec);
    std::string upper(spec.name);
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    CHECK(RedisKeyspace::findCommand(upper) == &spec);
    CHECK(!spec.categories.empty());
  }
  for (std::string_view name :
       {"ping",    "echo",     "set",      "get",     "getdel", "setnx",   "append", "strlen",
        "incr",    "incrby",   "decr",     "decrby",  "mset",   "mget",    "del",    "exists",
        "type",    "expire",   "pexpire",  "ttl",     "pttl",   "persist", "lpush",  "rpush",
        "lpop",    "rpop",     "llen",     "lrange",  "lindex", "sadd",    "srem",   "sismember",
        "scard",   "smembers", "spop",     "hset",    "hget",   "hdel",    "hlen",   "hgetall",
        "hexists", "hincrby",  "zadd",     "zscore",  "zcard",  "zrank",   "zrange", "zpopmin",
        "dbsize",  "keys",     "flushall", "flushdb", "hello",  "quit",    "select", "command",
        "config",  "client"}) {
    CAPTURE(name);
    CHECK(RedisKeyspace::findCommand(name) != nullptr);
  }
}

TEST_CASE("an empty command writes nothing") {
  KeyspaceFixture db;
  CHECK(db(std::vector<std::string_view>{}) == "");
}
