// RedisServer against Redis's own tools, in-process on 127.0.0.1:0: redis-cli (RESP2 and -3, its
// formatted and raw output compared line for line with what it prints for a real redis-server
// 7.0 given the same commands), redis-cli --pipe mass insertion, and redis-benchmark's default
// test set, with one loop and with three (sharded). A missing redis-cli, redis-benchmark or
// redis-server FAILS the test (REQUIRE), it never skips. Every peer runs under `timeout`. Run
// under ThreadSanitizer too ("threaded").
#include <netbuf/redis/redis_server.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "support/python_runner.hpp"
#include "support/redis_server_process.hpp"
#include "support/temp_dir.hpp"

using namespace netbuf;
using namespace std::chrono_literals;
using netbuf::test::Output;
using netbuf::test::shellQuote;
using netbuf::test::TempDir;
using netbuf::test::writeFile;

namespace {

/// A tool's path, REQUIREd (apt-get install redis-tools).
std::string requireTool(const std::string& name) {
  const Output o = netbuf::test::run(std::string("command -v ") + name);
  std::string path = o.text.substr(0, o.text.find('\n'));
  const bool found = o.status == 0 && !path.empty();
  REQUIRE_MESSAGE(found,
                  name << " is needed for this test (apt-get install redis-tools): " << o.text);
  return path;
}

/// An in-process server on 127.0.0.1:0.
struct Netbuf {
  explicit Netbuf(std::size_t threads) : server(options(threads)) { server.start(); }
  ~Netbuf() { server.shutdownGracefully(5s); }
  static RedisServer::Options options(std::size_t threads) {
    RedisServer::Options o;
    o.port = 0;
    o.threads = threads;
    return o;
  }
  RedisServer server;
};

/// redis-cli with args against port, stdin from a file (or nothing), bounded by timeout(1).
Output cli(const std::string& redisCli, unsigned short port, const std::string& args,
           const std::string& stdinFile = "/dev/null") {
  return netbuf::test::run(std::string("timeout 20 ") + shellQuote(redisCli) + " -h 127.0.0.1 -p " +
                           std::to_string(port) + " " + args + " < " + shellQuote(stdinFile));
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// Commands whose output is the same on any Redis 7.0 (no ids, versions, times or orders that
/// depend on hashing), one per line as redis-cli reads them from stdin.
constexpr std::string_view kSession =
    "FLUSHALL\n"
    "PING\n"
    "SET k v\n"
    "GET k\n"
    "GET nope\n"
    "SET n 10\n"
    "INCR n\n"
    "INCRBY n 5\n"
    "DECR n\n"
    "APPEND k tail\n"
    "STRLEN k\n"
    "MSET a 1 b 2\n"
    "MGET a nope b\n"
    "HSET h f1 v1\n"
    "HGETALL h\n"
    "HGET h f1\n"
    "HINCRBY h cnt 5\n"
    "SADD s member\n"
    "SMEMBERS s\n"
    "SISMEMBER s member\n"
    "ZADD z 1.5 m 2 n\n"
    "ZSCORE z m\n"
    "ZRANGE z 0 -1 WITHSCORES\n"
    "ZINCRBY z 0.25 m\n"
    "RPUSH l a b c\n"
    "LRANGE l 0 -1\n"
    "LPOP l\n"
    "LLEN l\n"
    "TYPE h\n"
    "EXPIRE k 100\n"
    "TTL k\n"
    "PERSIST k\n"
    "TTL k\n"
    "EXISTS k nope a\n"
    "DEL a b nope\n"
    "DBSIZE\n"
    "INCR k\n"
    "LPUSH k x\n"
    "HGET k f\n"
    "GETSET k new\n"
    "SETNX k other\n"
    "NOSUCHCOMMAND\n"
    "GET\n"
    "ECHO \"with space\"\n";

}  // namespace

TEST_CASE("redis-cli: RESP2 and RESP3 output as for redis-server 7.0") {
  const std::string redisCli = requireTool("redis-cli");
  netbuf::test::RedisServerProcess real;
  Netbuf ours(1);
  TempDir tmp("netbuf-redis-cli");
  const auto session = tmp.path / "session.txt";
  writeFile(session, std::string(kSession));
  for (const std::string mode : {"", "--no-raw", "-3", "-3 --no-raw"}) {
    CAPTURE(mode);
    const Output want = cli(redisCli, real.port(), mode, session.string());
    const Output got = cli(redisCli, ours.server.port(), mode, session.string());
    REQUIRE(want.status == 0);
    CHECK(got.status == 0);
    const auto w = lines(want.text);
    const auto g = lines(got.text);
    CHECK(g.size() == w.size());
    for (std::size_t i = 0; i < w.size() && i < g.size(); ++i) {
      CAPTURE(i);
      CHECK(g[i] == w[i]);
    }
  }
  // A few outputs spelled out (what the differential check above compares, made explicit).
  const auto port = ours.server.port();
  CHECK(cli(redisCli, port, "--no-raw SET x y").text == "OK\n");
  CHECK(cli(redisCli, port, "GET x").text == "y\n");
  CHECK(cli(redisCli, port, "HSET hh f v").text == "1\n");
  CHECK(cli(redisCli, port, "--no-raw HGETALL hh").text == "1) \"f\"\n2) \"v\"\n");
  CHECK(cli(redisCli, port, "-3 --no-raw HGETALL hh").text == "1# \"f\" => \"v\"\n");
  CHECK(cli(redisCli, port, "SADD ss a").text == "1\n");
  CHECK(cli(redisCli, port, "-3 --no-raw SMEMBERS ss").text == "1~ \"a\"\n");
  CHECK(cli(redisCli, port, "ZADD zz 2.5 m").text == "1\n");
  CHECK(cli(redisCli, port, "-3 --no-raw ZSCORE zz m").text == "(double) 2.5\n");
  CHECK(cli(redisCli, port, "--no-raw ZSCORE zz m").text == "\"2.5\"\n");
  CHECK(cli(redisCli, port, "--no-raw GET nope").text == "(nil)\n");
  CHECK(cli(redisCli, port, "--no-raw HGET x f").text ==
        "(error) WRONGTYPE Operation against a key holding the wrong kind of value\n");
}

TEST_CASE("redis-cli --pipe: 10000 SETs, errors: 0, replies: 10000") {
  const std::string redisCli = requireTool("redis-cli");
  TempDir tmp("netbuf-redis-pipe");
  std::string input;
  for (int i = 0; i < 10000; ++i) {
    const std::string key = std::string("key:") + std::to_string(i);
    const std::string value = std::string("value-") + std::to_string(i * 7);
    input += std::string("*3\r\n$3\r\nSET\r\n$") + std::to_string(key.size()) + "\r\n" + key +
             "\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  }
  writeFile(tmp.path / "mass.resp", input);
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    Netbuf ours(threads);
    const auto port = ours.server.port();
    const Output o = cli(redisCli, port, "--pipe", (tmp.path / "mass.resp").string());
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(o.text.find("errors: 0, replies: 10000") != std::string::npos);
    CHECK(cli(redisCli, port, "DBSIZE").text == "10000\n");
    CHECK(cli(redisCli, port, "GET key:9999").text == "value-69993\n");
    CHECK(cli(redisCli, port, "MGET key:0 key:1 key:2").text == "value-0\nvalue-7\nvalue-14\n");
  }
}

TEST_CASE("redis-benchmark: the default tests run to completion without errors") {
  const std::string bench = requireTool("redis-benchmark");
  struct Run {
    std::size_t threads;
    const char* extra;
  };
  // Sharded: pipelined only (16 commands in flight per client keep every shard busy at once).
  for (const Run& run : {Run{1, ""}, Run{1, "-P 16"}, Run{3, "-P 16"}}) {
    CAPTURE(run.threads);
    CAPTURE(run.extra);
    Netbuf ours(run.threads);
    const Output o = netbuf::test::run(
        std::string("timeout 60 ") + shellQuote(bench) + std::string(" -h 127.0.0.1 -p ") +
        std::to_string(ours.server.port()) + " -n 2000 -c 10 -q " + run.extra);
    INFO(o.text);
    CHECK(o.status == 0);
    // -q prints each test's progress after '\r' and its result on a line of its own.
    std::size_t results = 0;
    std::string text = o.text;
    for (char& ch : text) {
      if (ch == '\r') ch = '\n';
    }
    for (const std::string& line : lines(text)) {
      if (line.find("requests per second") != std::string::npos) ++results;
    }
    CHECK(results == 20);  // PING_INLINE ... MSET (10 keys), redis-benchmark 7.0's default set
    CHECK(o.text.find("ERR") == std::string::npos);
    CHECK(o.text.find("rror") == std::string::npos);
    CHECK(o.text.find("WARN") == std::string::npos);  // e.g. "Could not fetch server CONFIG"
    CHECK(ours.server.stats().protocolErrors == 0);
  }
}
