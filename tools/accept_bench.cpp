// `netbuf bench accept`: how fast a netbuf server accepts connections with its two acceptor
// designs: one acceptor handing sockets to the loops round robin (the default), or one
// SO_REUSEPORT acceptor per loop. Client threads open and close blocking connections for a fixed
// time.
//
// Closed loop (default): the server closes each connection as soon as its channel has started,
// and the client waits for that EOF before closing and connecting again, so every client has at
// most one connection in flight and the accept queue never overflows: the figure is the server's
// accept -> channel -> start -> close rate. Open loop (--open-loop): the client closes right after
// connect() returns (which the kernel completes without the server), so clients can queue
// connections faster than one thread accepts them; when the listen queue overflows, the kernel
// drops SYNs and the client's connect() waits for the 1 s SYN retransmission. The "listen
// overflows" column (TcpExt ListenOverflows from /proc/net/netstat, system-wide, -1 when
// unavailable) shows when that happened: a run with overflows measures retransmission timeouts,
// not the acceptor.

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"

namespace netbuf::tools {

namespace {

struct AcceptResult {
  double connectionsPerSecond = 0;
  std::uint64_t errors = 0;
  long long listenOverflows = -1;
};

/// TcpExt ListenOverflows (system-wide), or -1 when /proc/net/netstat cannot be read.
long long listenOverflows() {
  std::ifstream in("/proc/net/netstat");
  std::string names, values;
  while (std::getline(in, names) && std::getline(in, values)) {
    if (names.rfind("TcpExt:", 0) != 0) continue;
    std::istringstream n(names), v(values);
    std::string name, value;
    while (n >> name && v >> value) {
      if (name == "ListenOverflows") return std::stoll(value);
    }
  }
  return -1;
}

AcceptResult measure(bool perLoop, std::size_t loops, std::size_t clients, double seconds,
                     bool openLoop) {
  EventLoopGroup group(loops);
  ServerBootstrap boot;
  boot.group(group).acceptorPerLoop(perLoop);
  if (!openLoop) {
    // Close each connection once its channel has started: the client waits for this EOF.
    boot.childHandler([](SocketChannel& ch) {
      ch.executor().execute([self = ch.shared_from_this()] { self->close(); });
    });
  }
  auto server = boot.bind("127.0.0.1", 0);
  const long long overflowsBefore = listenOverflows();
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
        if (!openLoop) {
          char byte;
          s.read_some(boost::asio::buffer(&byte, 1), ec);  // until the server's EOF
          if (ec != boost::asio::error::eof) {
            errors.fetch_add(1, std::memory_order_relaxed);
            continue;
          }
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
  const long long overflowsAfter = listenOverflows();
  return {static_cast<double>(done.load()) / elapsed, errors.load(),
          overflowsBefore < 0 || overflowsAfter < 0 ? -1 : overflowsAfter - overflowsBefore};
}

}  // namespace

int runBenchAccept(const ParsedOptions& options) {
  const double seconds = options.seconds("--seconds", 600, true);
  const std::size_t loops = options.count("--loops", 1, 256);
  const std::size_t clients = options.count("--clients", 1, 256);
  const bool openLoop = options.flag("--open-loop");
  const bool json = options.flag("--json");
  ByteBuf out = Unpooled::buffer(1024);
  JsonStreamWriter w(out);
  if (json) {
    w.beginObject();
    w.key("suite");
    w.value("accept");
    w.key("seconds");
    w.value(seconds);
    w.key("loops");
    w.value(loops);
    w.key("clients");
    w.value(clients);
    w.key("open_loop");
    w.value(openLoop);
    w.key("results");
    w.beginArray();
  } else {
    std::printf("netbuf bench accept: %zu loop(s), %zu client thread(s), %.1f s per design, %s\n\n",
                loops, clients, seconds,
                openLoop ? "open loop (clients do not wait for the server)"
                         : "closed loop (each client waits for the server's close)");
    std::printf("%-28s %14s %8s %17s\n", "design", "connections/s", "errors", "listen overflows");
  }
  std::uint64_t totalErrors = 0;
  for (bool perLoop : {false, true}) {
    const AcceptResult r = measure(perLoop, loops, clients, seconds, openLoop);
    totalErrors += r.errors;
    if (json) {
      w.beginObject();
      w.key("design");
      w.value(perLoop ? "per_loop" : "round_robin");
      w.key("connections_per_s");
      w.value(static_cast<std::uint64_t>(std::llround(r.connectionsPerSecond)));
      w.key("errors");
      w.value(r.errors);
      w.key("listen_overflows");
      w.value(r.listenOverflows);
      w.endObject();
      continue;
    }
    std::printf("%-28s %14.0f %8llu %17lld\n",
                perLoop ? "one acceptor per loop" : "one acceptor, round robin",
                r.connectionsPerSecond, static_cast<unsigned long long>(r.errors),
                r.listenOverflows);
    std::fflush(stdout);
  }
  if (json) {
    w.endArray();
    w.key("ok");
    w.value(totalErrors == 0);
    w.endObject();
    std::fwrite(out.readableStringView().data(), 1, out.readableBytes(), stdout);
    std::printf("\n");
  }
  return totalErrors == 0 ? kExitOk : kExitFailure;
}

}  // namespace netbuf::tools
