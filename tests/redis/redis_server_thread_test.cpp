// RedisServer over loopback TCP, driven by raw client sockets: pipelined commands answered in one
// batch, requests split over many writes, protocol errors (the exact -ERR line, then the close),
// QUIT, HELLO 3 switching the protocol in the middle of a pipeline, the expiry sweep, maxclients,
// the idle timeout, graceful shutdown; with one loop and with three (sharded keyspaces: split
// MGET/MSET/DEL/EXISTS/KEYS/DBSIZE/FLUSHALL, CROSSSLOT, replies in command order across shards,
// several connections at once). Every wait is bounded. Run under ThreadSanitizer too ("threaded").
#include <netbuf/redis/redis_server.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <initializer_list>
#include <netbuf/codec/redis/redis_reply_decoder.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/loopback_socket.hpp"
#include "support/thread_waits.hpp"

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;
using netbuf::test::eventually;
using Clock = std::chrono::steady_clock;

namespace {

/// The pieces appended into one string (no `literal + temporary`: GCC 12 warns about it).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}

/// A RESP multibulk request of args.
std::string cmd(std::initializer_list<std::string_view> args) {
  std::string s = cat("*", std::to_string(args.size()), "\r\n");
  for (std::string_view a : args) s += cat("$", std::to_string(a.size()), "\r\n", a, "\r\n");
  return s;
}

std::string bulk(std::string_view s) {
  return cat("$", std::to_string(s.size()), "\r\n", s, "\r\n");
}
std::string integer(long long v) { return cat(":", std::to_string(v), "\r\n"); }

/// A client that sends RESP and reads raw bytes or decoded replies, every wait bounded.
class RawClient {
 public:
  explicit RawClient(unsigned short port) : sock_(port) {}

  /// Sends every byte (fails the test if that takes over 10 s or the socket fails).
  void send(std::string_view bytes) {
    const auto ec = sock_.sendAll(bytes, Clock::now() + 10s);
    REQUIRE_MESSAGE(!ec, "send failed: " << ec.message());
  }

  /// Exactly n bytes (REQUIREd within 10 s).
  std::string readBytes(std::size_t n) {
    const auto deadline = Clock::now() + 10s;
    std::string& buf = sock_.buffer();
    while (buf.size() < n) {
      REQUIRE_MESSAGE((sock_.fill(deadline) && !(sock_.closed() && buf.size() < n)),
                      "wanted " << n << " bytes; got so far: " << buf);
    }
    std::string out = buf.substr(0, n);
    buf.erase(0, n);
    return out;
  }
  /// Reads as many bytes as expected holds and checks they are those.
  void expect(std::string_view expected) { CHECK(readBytes(expected.size()) == expected); }

  /// The next n replies, decoded (RESP2 or RESP3).
  std::vector<RedisReply> replies(std::size_t n) {
    const auto deadline = Clock::now() + 10s;
    std::string& buf = sock_.buffer();
    while (decoded_.size() < n) {
      if (!buf.empty()) {
        ByteBuf in = ByteBufAllocator::defaultAllocator().buffer(buf.size());
        in.writeBytes(std::string_view(buf));
        buf.clear();
        decoder_.channelRead(std::move(in), decoded_);
        continue;
      }
      REQUIRE_MESSAGE((sock_.fill(deadline) && !(sock_.closed() && buf.empty())),
                      "wanted " << n << " replies, got " << decoded_.size());
    }
    std::vector<RedisReply> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(std::move(decoded_[i]));
    decoded_.erase(decoded_.begin(), decoded_.begin() + static_cast<std::ptrdiff_t>(n));
    return out;
  }
  RedisReply reply() { return std::move(replies(1).front()); }

  /// Reads until the server closes (FIN or reset); false when timeout passed first.
  bool waitClosed(std::chrono::milliseconds timeout = 10s) {
    const auto deadline = Clock::now() + timeout;
    while (!sock_.closed()) {
      if (!sock_.fill(deadline) && !sock_.closed()) return false;
    }
    return true;
  }
  const std::string& unread() const noexcept { return sock_.buffer(); }

 private:
  netbuf::test::LoopbackSocket sock_;
  RedisReplyDecoder decoder_;
  std::vector<RedisReply> decoded_;
};

/// A server on 127.0.0.1:0 with its own loops, shut down at the end of the scope.
struct Running {
  explicit Running(std::size_t threads, RedisServer::Options o = {}) : server(setup(o, threads)) {
    server.start();
  }
  ~Running() { server.shutdownGracefully(5s); }
  static RedisServer::Options setup(RedisServer::Options o, std::size_t threads) {
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = threads;
    return o;
  }
  unsigned short port() const { return server.port(); }
  RedisServer server;
};

/// A key named prefix + a number that lives on shard `shard` of `shards`.
std::string keyOnShard(std::string_view prefix, std::size_t shard, std::size_t shards) {
  for (int i = 0;; ++i) {
    std::string k = cat(prefix, std::to_string(i));
    if (RedisServer::keyHashSlot(k) % shards == shard) return k;
  }
}

/// The strings, sorted and joined with spaces (doctest prints a std::string).
std::string sortedStrings(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  std::string out;
  for (const std::string& s : v) out += cat(s, " ");
  return out;
}
std::string sortedStrings(const RespValue& array) {
  std::vector<std::string> v;
  for (const RespValue& e : array.elements()) v.emplace_back(e.asString());
  return sortedStrings(std::move(v));
}

}  // namespace

TEST_CASE("RedisServer: keyHashSlot is Redis Cluster's slot, hash tags included") {
  // The Redis Cluster specification's examples (CLUSTER KEYSLOT), and CRC16("123456789") = 0x31C3.
  CHECK(RedisServer::keyHashSlot("somekey") == 11058);
  CHECK(RedisServer::keyHashSlot("foo{hash_tag}") == 2515);
  CHECK(RedisServer::keyHashSlot("123456789") == (0x31C3 & 16383));
  CHECK(RedisServer::keyHashSlot("foo") == 12182);
  CHECK(RedisServer::keyHashSlot("bar") == 5061);
  CHECK(RedisServer::keyHashSlot("") == 0);
  CHECK(RedisServer::keyHashSlot("{user1000}.following") == RedisServer::keyHashSlot("user1000"));
  CHECK(RedisServer::keyHashSlot("foo{}{bar}") == RedisServer::keyHashSlot("foo{}{bar}"));
  CHECK(RedisServer::keyHashSlot("foo{}{bar}") != RedisServer::keyHashSlot("bar"));
  CHECK(RedisServer::keyHashSlot("foo{{bar}}zap") == RedisServer::keyHashSlot("{bar"));
}

TEST_CASE("RedisServer: pipelined commands, split writes, QUIT") {
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    Running r(threads);
    {
      RawClient c(r.port());
      // One write: an inline PING, then multibulk commands; every reply, in order.
      c.send(std::string("PING\r\n") + cmd({"SET", "a", "1"}) + cmd({"INCR", "a"}) +
             cmd({"GET", "a"}) + cmd({"GET", "missing"}) + cmd({"ECHO", "hello"}) +
             cmd({"DEL", "a", "missing"}));
      c.expect(std::string("+PONG\r\n+OK\r\n:2\r\n") + bulk("2") + "$-1\r\n" + bulk("hello") +
               integer(1));

      // A request split over many writes (one byte each), then two in one write.
      const std::string set = cmd({"SET", "split", "value with spaces"});
      for (char ch : set) {
        c.send(std::string_view(&ch, 1));
        std::this_thread::sleep_for(200us);
      }
      c.expect("+OK\r\n");
      const std::string two = cmd({"GET", "split"}) + cmd({"STRLEN", "split"});
      c.send(two.substr(0, 7));
      std::this_thread::sleep_for(5ms);
      c.send(two.substr(7));
      c.expect(bulk("value with spaces") + integer(17));
    }
    {
      // QUIT: +OK, the connection closes, and what followed it in the same write never ran.
      RawClient c(r.port());
      c.send(cmd({"SET", "q", "1"}) + cmd({"QUIT"}) + cmd({"SET", "after-quit", "1"}));
      c.expect("+OK\r\n+OK\r\n");
      CHECK(c.waitClosed());
      CHECK(c.unread().empty());
      RawClient d(r.port());
      d.send(cmd({"EXISTS", "q", "after-quit"}));
      d.expect(integer(1));
    }
    CHECK(r.server.stats().connections == 3);
    CHECK(r.server.stats().commands == 13);  // SET after QUIT never ran
  }
}

TEST_CASE("RedisServer: a protocol error answers -ERR after the replies before it, then closes") {
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    Running r(threads);
    // Three keys on three different shards (two of them not the connection's when sharded).
    const std::string k0 = keyOnShard("p", 0, 3), k1 = keyOnShard("p", 1, 3),
                      k2 = keyOnShard("p", 2, 3);
    {
      RawClient c(r.port());
      c.send(cmd({"SET", k0, "x"}) + cmd({"SET", k1, "y"}) + cmd({"SET", k2, "z"}) +
             "*1\r\n$x\r\n" + cmd({"SET", "never", "1"}));
      c.expect("+OK\r\n+OK\r\n+OK\r\n-ERR Protocol error: invalid bulk length\r\n");
      CHECK(c.waitClosed());
      CHECK(c.unread().empty());
    }
    {
      RawClient c(r.port());
      c.send(cmd({"GET", k1}) + "*2\r\n$3\r\nGET\r\n:1\r\n");
      c.expect(bulk("y") + "-ERR Protocol error: expected '$', got ':'\r\n");
      CHECK(c.waitClosed());
    }
    {
      RawClient c(r.port());
      c.send("*1\r\n$4\r\nPING\r\n*3000000000\r\n");
      c.expect("+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n");
      CHECK(c.waitClosed());
    }
    RawClient d(r.port());
    d.send(cmd({"EXISTS", "never"}));
    d.expect(integer(0));
    CHECK(r.server.stats().protocolErrors == 3);
  }
}

TEST_CASE("RedisServer: HELLO 3 switches the protocol of the replies that follow it") {
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    Running r(threads);
    RawClient c(r.port());
    const std::string k0 = keyOnShard("h", 0, 3), k1 = keyOnShard("h", 1, 3),
                      k2 = keyOnShard("h", 2, 3);
    // Before HELLO: RESP2 (null bulk, a score as a bulk string); after: RESP3 (null, double), in
    // one pipeline, with keys on every shard.
    c.send(cmd({"ZADD", k0, "1.5", "m"}) + cmd({"GET", k1}) + cmd({"ZSCORE", k0, "m"}) +
           cmd({"HELLO", "3"}) + cmd({"GET", k1}) + cmd({"ZSCORE", k0, "m"}) +
           cmd({"MGET", k0 + "x", k1, k2}) + cmd({"HELLO", "2"}) + cmd({"GET", k2}));
    auto rs = c.replies(9);
    CHECK(rs[0].root().asInteger() == 1);
    CHECK(rs[1].root().isNull());
    CHECK(rs[1].root().nullForm() == '$');
    CHECK(rs[2].type() == RespType::BulkString);
    CHECK(rs[2].root().asString() == "1.5");
    CHECK(rs[3].type() == RespType::Map);
    REQUIRE(rs[3].root().find("proto") != nullptr);
    CHECK(rs[3].root().find("proto")->asInteger() == 3);
    CHECK(rs[4].root().isNull());
    CHECK(rs[4].root().nullForm() == '_');
    CHECK(rs[5].type() == RespType::Double);
    CHECK(rs[5].root().asDouble() == 1.5);
    REQUIRE(rs[6].type() == RespType::Array);
    REQUIRE(rs[6].root().size() == 3);
    for (const RespValue& v : rs[6].root().elements()) CHECK(v.nullForm() == '_');
    CHECK(rs[7].type() == RespType::Array);  // HELLO's map, in RESP2: a flat array
    CHECK(rs[8].root().nullForm() == '$');
  }
}

TEST_CASE("RedisServer: the expiry sweep removes keys nobody touches") {
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    Running r(threads);
    RawClient c(r.port());
    std::string batch;
    for (int i = 0; i < 30; ++i)
      batch += cmd({"SET", cat("exp", std::to_string(i)), "v", "PX", "50"});
    batch += cmd({"SET", "stays", "v"});
    c.send(batch);
    std::string oks;
    for (int i = 0; i < 31; ++i) oks += "+OK\r\n";
    c.expect(oks);
    // DBSIZE counts expired keys not yet swept (as in Redis): only the sweep brings it to 1.
    CHECK(eventually([&] {
      c.send(cmd({"DBSIZE"}));
      return c.reply().root().asInteger() == 1;
    }));
  }
}

TEST_CASE("RedisServer: sharded multi-key commands are split and combined") {
  Running r(3);
  REQUIRE(r.server.shards() == 3);
  const std::string k0 = keyOnShard("k", 0, 3), k1 = keyOnShard("k", 1, 3),
                    k2 = keyOnShard("k", 2, 3);
  // Three connections: round robin puts one on each loop, so each key is local to one of them.
  RawClient a(r.port()), b(r.port()), c(r.port());
  for (RawClient* cl : {&a, &b, &c}) {
    cl->send(cmd({"FLUSHALL"}) + cmd({"MSET", k0, "v0", k1, "v1", k2, "v2"}) +
             cmd({"MGET", k2, k0, "nope", k1, k2}) + cmd({"EXISTS", k0, k1, k2, k0, "nope"}) +
             cmd({"DBSIZE"}));
    cl->expect(cat("+OK\r\n+OK\r\n*5\r\n", bulk("v2"), bulk("v0"), "$-1\r\n", bulk("v1"),
                   bulk("v2"), integer(4), integer(3)));
    // KEYS: every shard's matches, in shard order (compared sorted).
    cl->send(cmd({"KEYS", "k*"}));
    auto keys = cl->reply();
    REQUIRE(keys.type() == RespType::Array);
    CHECK(sortedStrings(keys.root()) == sortedStrings({k0, k1, k2}));
    cl->send(cmd({"DEL", k0, k1, "nope"}) + cmd({"DBSIZE"}) + cmd({"EXISTS", k0, k1, k2}));
    cl->expect(cat(integer(2), integer(1), integer(1)));
  }
  // Commands other than the split ones refuse keys of several shards; a hash tag keeps keys on
  // one shard.
  a.send(cmd({"MSETNX", k2, "x", k0, "y"}) + cmd({"MSETNX", "{t}a", "1", "{t}b", "2"}) +
         cmd({"MGET", "{t}b", "{t}a"}) + cmd({"FLUSHDB"}) + cmd({"DBSIZE"}) + cmd({"KEYS", "*"}));
  a.expect(cat("-CROSSSLOT Keys in request don't hash to the same slot\r\n", integer(1), "*2\r\n",
               bulk("2"), bulk("1"), "+OK\r\n", integer(0), "*0\r\n"));
  CHECK(r.server.stats().crossShardCommands > 0);
  // A key-value list cut short is refused whole, as Redis does: no shard applies its part.
  a.send(cmd({"MSET", k0, "1", k1}) + cmd({"EXISTS", k0, k1}) + cmd({"MSETNX", k1, "1", k2}));
  a.expect(cat("-ERR wrong number of arguments for 'mset' command\r\n", integer(0),
               "-ERR wrong number of arguments for 'msetnx' command\r\n"));
}

TEST_CASE("RedisServer: replies far larger than their requests pause the commands after them") {
  Running r(1);
  RawClient c(r.port());
  const std::string big(512 * 1024, 'x');
  c.send(cmd({"SET", "big", big}));
  c.expect("+OK\r\n");
  // 48 GETs in one write ask for 24 MB of replies, more than loopback's socket buffers hold: the
  // server runs them only as fast as this client reads, so while it reads nothing some wait.
  std::string gets;
  for (int i = 0; i < 48; ++i) gets += cmd({"GET", "big"});
  gets += cmd({"PING"});
  c.send(gets);
  std::this_thread::sleep_for(300ms);
  const std::uint64_t ranWhileBlocked = r.server.stats().commands;
  CHECK(ranWhileBlocked < 1 + 49);
  const std::string one = bulk(big);
  for (int i = 0; i < 48; ++i) REQUIRE(c.readBytes(one.size()) == one);
  c.expect("+PONG\r\n");
  CHECK(r.server.stats().commands == 1 + 49);
}

TEST_CASE("RedisServer: replies keep command order across shards, on many connections at once") {
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    Running r(threads);
    constexpr int kClients = 6;
    constexpr int kKeys = 150;
    std::vector<std::thread> clients;
    std::vector<std::string> failures(kClients);
    for (int t = 0; t < kClients; ++t) {
      clients.emplace_back([&, t] {
        RawClient c(r.port());
        std::string req;
        std::string want;
        const std::string prefix = cat("c", std::to_string(t), ":");
        for (int i = 0; i < kKeys; ++i) {
          const std::string k = prefix + std::to_string(i);
          req += cmd({"SET", k, std::to_string(i)}) + cmd({"INCR", k}) + cmd({"PING"}) +
                 cmd({"GET", k}) + cmd({"APPEND", k, "x"}) + cmd({"MGET", k, prefix + "0"});
          want += std::string("+OK\r\n") + integer(i + 1) + "+PONG\r\n" +
                  bulk(std::to_string(i + 1)) +
                  integer(static_cast<long long>(std::to_string(i + 1).size() + 1)) + "*2\r\n" +
                  bulk(std::to_string(i + 1) + "x") + bulk("1x");  // c<t>:0 is "1x" from i = 0 on
        }
        // In two writes of uneven size: reads split requests anywhere.
        const std::size_t cut = req.size() / 3 + 7;
        c.send(req.substr(0, cut));
        c.send(req.substr(cut));
        const std::string got = c.readBytes(want.size());
        if (got != want) failures[static_cast<std::size_t>(t)] = cat("client ", std::to_string(t));
      });
    }
    for (auto& th : clients) th.join();
    for (const std::string& f : failures) CHECK_MESSAGE(f.empty(), f << ": replies out of order");
    RawClient c(r.port());
    c.send(cmd({"DBSIZE"}));
    c.expect(integer(kClients * kKeys));
  }
}

TEST_CASE("RedisServer: maxclients refuses the connection over the limit with Redis's error") {
  RedisServer::Options o;
  o.maxClients = 1;
  Running r(1, o);
  RawClient a(r.port());
  a.send(cmd({"PING"}));
  a.expect("+PONG\r\n");
  RawClient b(r.port());
  b.expect("-ERR max number of clients reached\r\n");
  CHECK(b.waitClosed());
  a.send(cmd({"PING"}));
  a.expect("+PONG\r\n");
  CHECK(r.server.stats().rejectedClients == 1);
}

TEST_CASE("RedisServer: the idle timeout closes a silent connection") {
  RedisServer::Options o;
  o.idleTimeout = 150ms;
  Running r(2, o);
  RawClient c(r.port());
  c.send(cmd({"PING"}));
  c.expect("+PONG\r\n");
  const auto start = Clock::now();
  CHECK(c.waitClosed(5s));
  CHECK(Clock::now() - start >= 100ms);
  CHECK(r.server.stats().idleClosed == 1);
}

TEST_CASE("RedisServer: shutdownGracefully answers what was read, closes, refuses new clients") {
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    auto r = std::make_unique<Running>(threads);
    const unsigned short port = r->port();
    RawClient a(port), b(port);
    std::string req;
    std::string want;
    for (int i = 0; i < 200; ++i) {
      req += cmd({"SET", cat("g", std::to_string(i)), "v"});
      want += "+OK\r\n";
    }
    a.send(req);
    a.expect(want);
    b.send(cmd({"PING"}));
    b.expect("+PONG\r\n");
    CHECK(r->server.shutdownGracefully(5s));
    CHECK(a.waitClosed(5s));
    CHECK(b.waitClosed(5s));
    CHECK(r->server.shutdownGracefully(1s));  // idempotent
    boost::system::error_code ec;
    asio::io_context io;
    tcp::socket s(io);
    s.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    CHECK(ec);  // nobody listens any more
    r.reset();
  }
}

TEST_CASE("RedisServer: bind on a caller's group, one shard per loop") {
  EventLoopGroup group(2);
  {
    RedisServer server;
    auto ch = server.bind(group, "127.0.0.1", 0);
    CHECK(server.shards() == 2);
    CHECK(server.port() == ch->port());
    RawClient c(ch->port());
    c.send(cmd({"MSET", keyOnShard("b", 0, 2), "1", keyOnShard("b", 1, 2), "2"}) + cmd({"DBSIZE"}));
    c.expect(std::string("+OK\r\n") + integer(2));
    EventLoopGroup other(1);
    CHECK_THROWS_AS((void)server.bind(other, "127.0.0.1", 0), IllegalStateError);
    // start() on a bound server refuses and leaves the bound shards serving.
    CHECK_THROWS_AS(server.start(), IllegalStateError);
    CHECK(server.shards() == 2);
    c.send(cmd({"GET", keyOnShard("b", 0, 2)}));
    c.expect(bulk("1"));
    CHECK(server.shutdownGracefully(5s));
    CHECK(c.waitClosed());
  }
  group.shutdownGracefully(0ms, 5s);
}
