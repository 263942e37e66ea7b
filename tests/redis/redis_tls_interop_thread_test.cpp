// RedisServer with Options::tls against redis-cli --tls (PING, SET/GET, RESP3 with -3, a pipeline
// of commands on stdin), with one loop and with three (sharded), and against mutual TLS (redis-cli
// --cert/--key, and refused without them); certificates made by support/test_certificates.hpp.
// A missing redis-cli FAILS the test (REQUIRE), it never skips. Every peer runs under `timeout`.
// Run under ThreadSanitizer too ("threaded").
#include <netbuf/redis/redis_server.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <netbuf/tls/ssl_context.hpp>
#include <string>
#include <string_view>

#include "support/python_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_test_pki.hpp"

using namespace netbuf;
using namespace std::chrono_literals;
using netbuf::test::Output;
using netbuf::test::shellQuote;
using netbuf::test::TempDir;

namespace {

/// redis-cli's path, REQUIREd, and REQUIREd to speak TLS (Debian's redis-tools 6.0 and later).
std::string requireRedisCli() {
  const Output o = test::run("command -v redis-cli");
  std::string path = o.text.substr(0, o.text.find('\n'));
  REQUIRE_MESSAGE((o.status == 0 && !path.empty()),
                  "redis-cli is needed for this test (apt-get install redis-tools): " << o.text);
  const Output help = test::run(shellQuote(path) + " --help");
  REQUIRE_MESSAGE(help.text.find("--tls") != std::string::npos,
                  "this redis-cli was built without TLS (--tls): " << help.text);
  return path;
}

/// The test certificates as files (ca.pem, server.pem/.key, client.pem/.key).
struct Certificates : test::TlsTestFiles {
  Certificates() : TlsTestFiles("netbuf-redis-tls") {}
};

/// An in-process server with TLS on 127.0.0.1:0 (start(): loops of its own).
struct TlsRedis {
  TlsRedis(const Certificates& certs, std::size_t threads, bool mutual = false)
      : server(options(certs, threads, mutual)) {
    server.start();
  }
  ~TlsRedis() { server.shutdownGracefully(5s); }
  static RedisServer::Options options(const Certificates& certs, std::size_t threads, bool mutual) {
    SslContext::Options tls;
    tls.certificateChainFile = certs.serverCert;
    tls.privateKeyFile = certs.serverKey;
    if (mutual) {
      tls.trustedCaFile = certs.caFile;
      tls.clientAuth = ClientAuth::require;
    }
    RedisServer::Options o;
    o.port = 0;
    o.threads = threads;
    o.tls = SslContext::forServer(tls);
    return o;
  }
  RedisServer server;
};

/// redis-cli --tls with args against port, stdin from a file (or nothing), bounded by timeout(1).
Output cli(const std::string& redisCli, unsigned short port, const std::string& args,
           const std::string& stdinFile = "/dev/null") {
  return test::run("timeout 20 " + shellQuote(redisCli) + " --tls -h 127.0.0.1 -p " +
                   std::to_string(port) + " " + args + " < " + shellQuote(stdinFile));
}

}  // namespace

TEST_CASE("RedisServer with TLS: redis-cli --tls, one loop and three") {
  const std::string redisCli = requireRedisCli();
  Certificates certs;
  const std::string ca = "--cacert " + shellQuote(certs.caFile) + " ";
  for (const std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(threads);
    TlsRedis redis(certs, threads);
    const unsigned short port = redis.server.port();

    Output o = cli(redisCli, port, ca + "PING");
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(o.text == "PONG\n");
    o = cli(redisCli, port, ca + "SET greeting 'hello over tls'");
    CHECK(o.text == "OK\n");
    o = cli(redisCli, port, ca + "GET greeting");
    CHECK(o.text == "hello over tls\n");
    // RESP3 (redis-cli's raw output: its stdout is no terminal).
    o = cli(redisCli, port, ca + "-3 HSET h a 1 b 2");
    CHECK(o.text == "2\n");
    o = cli(redisCli, port, ca + "-3 HGETALL h");
    INFO(o.text);
    CHECK(o.text == "a 1\nb 2\n");

    // Many commands over one connection (keys on every shard with three loops).
    std::string commands = "FLUSHALL\n";
    for (int i = 0; i < 200; ++i) {
      commands += "SET key:" + std::to_string(i) + " " + std::to_string(i) + "\n";
    }
    commands += "DBSIZE\nMGET key:0 key:1 key:199\n";
    const std::string input = test::writeFile(certs.dir.path, "commands.txt", commands);
    o = cli(redisCli, port, ca, input);
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(o.text.ends_with("OK\n200\n0\n1\n199\n"));
  }
}

TEST_CASE("RedisServer with TLS: redis-cli without the CA, and mutual TLS") {
  const std::string redisCli = requireRedisCli();
  Certificates certs;
  {
    TlsRedis redis(certs, 1);
    // redis-cli verifies the chain: a server it cannot verify is refused.
    const Output o = cli(redisCli, redis.server.port(), "PING");
    INFO(o.text);
    CHECK(o.text.find("PONG") == std::string::npos);
  }
  {
    TlsRedis redis(certs, 1, true);
    const std::string ca = "--cacert " + shellQuote(certs.caFile) + " ";
    Output o = cli(redisCli, redis.server.port(),
                   ca + "--cert " + shellQuote(certs.clientCert) + " --key " +
                       shellQuote(certs.clientKey) + " PING");
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(o.text == "PONG\n");
    // Without a client certificate the server ends the connection (in TLS 1.3 after the
    // client's side of the handshake: redis-cli learns it when it reads its reply).
    o = cli(redisCli, redis.server.port(), ca + "PING");
    INFO(o.text);
    CHECK(o.text.find("PONG") == std::string::npos);
  }
}
