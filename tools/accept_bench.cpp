// `netbuf bench accept`: how fast a netbuf server accepts connections with its two acceptor
// designs: one acceptor handing sockets to the loops round robin (the default), or one
// SO_REUSEPORT acceptor per loop. Client threads open and close blocking connections as fast as
// they can for a fixed time; the server's pipeline is empty (a connection is accepted, its channel
// built and started, then closed when the client closes).

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdio>
#include <netbuf/transport/bootstrap.hpp>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"

namespace netbuf::tools {

namespace {

struct AcceptResult {
  double connectionsPerSecond = 0;
  std::uint64_t errors = 0;
};

AcceptResult measure(bool perLoop, std::size_t loops, std::size_t clients, double seconds) {
  EventLoopGroup group(loops);
  auto server = ServerBootstrap().group(group).acceptorPerLoop(perLoop).bind("127.0.0.1", 0);
  const unsigned short port = server->port();
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> done{0}, errors{0};
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      boost::asio::io_context io;
      const boost::asio::ip::tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"), port);
      while (!stop.load(std::memory_order_relaxed)) {
        boost::asio::ip::tcp::socket s(io);
        boost::system::error_code ec;
        s.connect(ep, ec);
        if (ec) {
          errors.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        // SO_LINGER 0: close with a reset, so the client does not pile up TIME_WAIT sockets.
        s.set_option(boost::asio::socket_base::linger(true, 0), ec);
        s.close(ec);
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  server->close();
  server->closeChildren();
  group.shutdownGracefully(std::chrono::milliseconds(20), std::chrono::seconds(5));
  server.reset();
  return {static_cast<double>(done.load()) / elapsed, errors.load()};
}

}  // namespace

int runBenchAccept(const std::vector<std::string_view>& args) {
  double seconds = 1.0;
  std::size_t loops = 2, clients = 2;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string_view a = args[k];
    const bool hasValue = k + 1 < args.size();
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: netbuf bench accept [--seconds S] [--loops L] [--clients C]\n\n"
          "Connections accepted per second by a netbuf server with L loops (default 2), C client\n"
          "threads (default 2) opening and closing connections for S seconds (default 1) per\n"
          "design: one acceptor handing sockets out round robin, then one SO_REUSEPORT acceptor\n"
          "per loop.\n");
      return kExitOk;
    } else if (a == "--seconds" && hasValue) {
      seconds = std::strtod(std::string(args[++k]).c_str(), nullptr);
      if (!(seconds > 0) || seconds > 600) return kExitUsage;
    } else if (a == "--loops" && hasValue) {
      loops = std::strtoul(std::string(args[++k]).c_str(), nullptr, 10);
      if (loops < 1 || loops > 256) return kExitUsage;
    } else if (a == "--clients" && hasValue) {
      clients = std::strtoul(std::string(args[++k]).c_str(), nullptr, 10);
      if (clients < 1 || clients > 256) return kExitUsage;
    } else {
      std::fprintf(stderr, "netbuf bench accept: unknown option '%.*s'\n",
                   static_cast<int>(a.size()), a.data());
      return kExitUsage;
    }
  }
  std::printf("netbuf bench accept: %zu loop(s), %zu client thread(s), %.1f s per design\n\n",
              loops, clients, seconds);
  std::printf("%-28s %14s %8s\n", "design", "connections/s", "errors");
  std::uint64_t totalErrors = 0;
  for (bool perLoop : {false, true}) {
    const AcceptResult r = measure(perLoop, loops, clients, seconds);
    totalErrors += r.errors;
    std::printf("%-28s %14.0f %8llu\n",
                perLoop ? "one acceptor per loop" : "one acceptor, round robin",
                r.connectionsPerSecond, static_cast<unsigned long long>(r.errors));
    std::fflush(stdout);
  }
  return totalErrors == 0 ? kExitOk : kExitFailure;
}

}  // namespace netbuf::tools
