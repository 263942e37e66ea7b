#pragma once
// A real redis-server (Debian's package) for client tests: started on a free loopback port with
// persistence off and a temp dir of its own as --dir, ready once it answers PING (waited for up
// to 5 s), stopped (its process group killed) at the end of the scope. A missing redis-server
// FAILS the test (REQUIRE), it never skips.
#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/peer_process.hpp"
#include "support/temp_dir.hpp"

namespace netbuf::test {

/// Whether a Redis server on 127.0.0.1:port answers PING within 500 ms: +PONG, or -NOAUTH from a
/// server started with --requirepass. A server still loading answers -LOADING: not ready.
inline bool answersPing(unsigned short port) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  asio::streambuf in;
  bool pong = false;
  s.async_connect({asio::ip::make_address("127.0.0.1"), port}, [&](boost::system::error_code ec) {
    if (ec) return;
    static constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";
    asio::async_write(s, asio::buffer(kPing), [&](boost::system::error_code wec, std::size_t) {
      if (wec) return;
      asio::async_read_until(s, in, "\r\n", [&](boost::system::error_code rec, std::size_t n) {
        if (rec) return;
        const std::string line(asio::buffers_begin(in.data()),
                               asio::buffers_begin(in.data()) + static_cast<std::ptrdiff_t>(n));
        pong = line == "+PONG\r\n" || line.starts_with("-NOAUTH");
      });
    });
  });
  io.run_for(std::chrono::milliseconds(500));
  return pong;
}

class RedisServerProcess {
 public:
  static constexpr const char* kRedisServer = "/usr/bin/redis-server";

  /// extraArgs are appended to the command line ("--maxclients", "10", ...).
  explicit RedisServerProcess(std::vector<std::string> extraArgs = {}) {
    REQUIRE_MESSAGE(std::filesystem::exists(kRedisServer),
                    kRedisServer << " is needed for this test (apt-get install redis-server)");
    const std::string dir = dir_.path.string();
    port_ = startListening(
        process_,
        [&](unsigned short port) {
          std::vector<std::string> argv = {kRedisServer,
                                           "--port",
                                           std::to_string(port),
                                           "--bind",
                                           "127.0.0.1",
                                           "--save",
                                           "",
                                           "--appendonly",
                                           "no",
                                           "--dir",
                                           dir,
                                           "--daemonize",
                                           "no"};
          argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
          return argv;
        },
        dir_.path / "redis.log", "redis-server", answersPing, std::chrono::seconds(5));
  }
  RedisServerProcess(const RedisServerProcess&) = delete;
  RedisServerProcess& operator=(const RedisServerProcess&) = delete;

  unsigned short port() const noexcept { return port_; }
  /// What the server wrote to stdout and stderr so far.
  std::string log() const { return process_->log(); }
  /// Stops it now (the destructor does too).
  void stop() { process_->stop(); }

 private:
  TempDir dir_{"netbuf-redis-server"};
  unsigned short port_ = 0;
  std::optional<PeerProcess> process_;  // stopped before dir_ goes
};

}  // namespace netbuf::test
