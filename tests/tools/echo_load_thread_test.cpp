// Tests of tools/bench_support/echo_load.hpp (EchoLoad, its table and JSON output),
// asio_echo_server.hpp (AsioEchoServer), netbuf_echo_server.hpp (NetbufEchoServer) and
// cpu_time.hpp, with real sockets on 127.0.0.1. Threaded: runs under ThreadSanitizer too.
#include "echo_load.hpp"

#include "asio_echo_server.hpp"
#include "cpu_time.hpp"
#include "netbuf_echo_server.hpp"

#include <doctest/doctest.h>
#include <unistd.h>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/tls/ssl_context.hpp>

#include "support/test_certificates.hpp"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using netbuf::tools::AsioEchoServer;
using netbuf::tools::EchoLoad;
using netbuf::tools::EchoLoadOptions;
using netbuf::tools::EchoLoadResult;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// Load options for a server on 127.0.0.1:port (128-byte messages unless changed after).
EchoLoadOptions loadOptions(std::uint16_t port, std::size_t connections, std::size_t window,
                            double seconds, double warmup) {
  EchoLoadOptions opt;
  opt.port = port;
  opt.connections = connections;
  opt.window = window;
  opt.durationSeconds = seconds;
  opt.warmupSeconds = warmup;
  return opt;
}

/// Runs `load` on a thread of its own, calls `interrupt` after `after`, and returns the result
/// once the run has ended.
template <class Interrupt>
EchoLoadResult runInterrupted(EchoLoad& load, std::chrono::milliseconds after,
                              Interrupt interrupt) {
  EchoLoadResult r;
  std::thread client([&] { r = load.run(); });
  std::this_thread::sleep_for(after);
  interrupt();
  client.join();
  return r;
}

EchoLoadResult runLoad(std::uint16_t port, std::size_t connections, std::size_t size,
                       std::size_t window, double seconds, std::size_t threads = 1) {
  EchoLoadOptions opt = loadOptions(port, connections, window, seconds, 0.05);
  opt.messageSize = size;
  opt.threads = threads;
  EchoLoad load(opt);
  return load.run();
}

void checkSane(const EchoLoadResult& r) {
  INFO("first error: " << r.firstError);
  CHECK(r.messages > 0);
  CHECK(r.errors == 0);
  CHECK(r.mismatches == 0);
  CHECK(r.ok());
  CHECK(r.messagesPerSecond > 0);
  CHECK(r.p50Ns > 0);
  CHECK(r.p50Ns <= r.p99Ns);
  CHECK(r.p99Ns <= r.p999Ns);
  CHECK(r.p999Ns <= r.maxNs);
}

}  // namespace

TEST_CASE(
    "AsioEchoServer: port 0, echoes bytes exactly however they are split, stop is idempotent") {
  for (std::size_t threads : {1u, 3u}) {
    CAPTURE(threads);
    netbuf::tools::AsioEchoServerOptions opt;
    opt.threads = threads;
    AsioEchoServer server(opt);
    CHECK(server.port() == 0);
    server.start();
    REQUIRE(server.port() != 0);
    CHECK(server.running());

    asio::io_context ioc;
    std::vector<tcp::socket> sockets;
    for (int c = 0; c < 4; ++c) {
      sockets.emplace_back(ioc);
      sockets.back().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()));
    }
    std::mt19937 rng(static_cast<unsigned>(7 + threads));
    for (auto& s : sockets) {
      // 200 KiB of random bytes, sent in pieces of 1, 7, 300, 20000, ... bytes; what comes back
      // must be the same stream.
      std::vector<std::uint8_t> sent(200 * 1024);
      for (auto& byte : sent) byte = static_cast<std::uint8_t>(rng());
      const std::size_t pieces[] = {1, 7, 300, 20000, 3, 65536, 9999, 1};
      std::size_t off = 0, k = 0;
      std::vector<std::uint8_t> got(sent.size());
      std::size_t received = 0;
      while (off < sent.size()) {
        const std::size_t n = std::min(pieces[k++ % std::size(pieces)], sent.size() - off);
        asio::write(s, asio::buffer(sent.data() + off, n));
        off += n;
        // Read back whatever is there so neither side's buffers fill up.
        while (received < off) {
          const std::size_t r = s.read_some(asio::buffer(got.data() + received, off - received));
          received += r;
        }
      }
      CHECK(received == sent.size());
      CHECK(got == sent);
    }
    // Half-close: the server echoes everything and then closes its side.
    const std::uint8_t tail[5] = {1, 2, 3, 4, 5};
    asio::write(sockets[0], asio::buffer(tail));
    sockets[0].shutdown(tcp::socket::shutdown_send);
    std::uint8_t back[16] = {};
    boost::system::error_code ec;
    const std::size_t n = asio::read(sockets[0], asio::buffer(back), ec);
    CHECK(n == 5);
    CHECK(ec == asio::error::eof);
    CHECK(std::equal(tail, tail + 5, back));

    CHECK(server.connectionsAccepted() == 4);
    CHECK(server.handlerFailures() == 0);
    server.stop();
    server.stop();
    CHECK_FALSE(server.running());
    CHECK(server.port() == 0);
    CHECK(server.connectionsOpen() == 0);
    // The connections are closed by stop().
    std::uint8_t one = 0;
    for (std::size_t c = 1; c < sockets.size(); ++c) {
      boost::system::error_code e;
      sockets[c].read_some(asio::buffer(&one, 1), e);
      CHECK(e);
    }
  }
}

TEST_CASE("AsioEchoServer: start after stop, bad address, double start") {
  AsioEchoServer server;
  server.start();
  CHECK_THROWS_AS(server.start(), std::logic_error);
  server.stop();
  server.start();
  CHECK(server.port() != 0);
  server.stop();

  netbuf::tools::AsioEchoServerOptions bad;
  bad.address = "not an address";
  AsioEchoServer badServer(bad);
  CHECK_THROWS_AS(badServer.start(), std::invalid_argument);
}

TEST_CASE("EchoLoad: small messages, pipelined, several connections") {
  AsioEchoServer server;
  server.start();
  const EchoLoadResult r = runLoad(server.port(), 4, 128, 8, 0.3);
  checkSane(r);
  CHECK(r.connectionsOpened == 4);
  CHECK(r.bytes == r.messages * 128);
  CHECK(r.seconds > 0.2);
  CHECK(r.seconds < 0.5);
  server.stop();
}

TEST_CASE("EchoLoad: 16 KiB messages, window 2, two client threads") {
  netbuf::tools::AsioEchoServerOptions opt;
  opt.threads = 2;
  AsioEchoServer server(opt);
  server.start();
  const EchoLoadResult r = runLoad(server.port(), 4, 16384, 2, 0.3, 2);
  checkSane(r);
  CHECK(r.bytes == r.messages * 16384);
  server.stop();
}

TEST_CASE("EchoLoad: window 1, one connection; options are validated") {
  AsioEchoServer server;
  server.start();
  checkSane(runLoad(server.port(), 1, 8, 1, 0.2));
  server.stop();

  EchoLoadOptions o;
  o.port = 1;
  o.messageSize = 7;
  CHECK_FALSE(o.validate().empty());
  CHECK_THROWS_AS(EchoLoad(o).run(), std::invalid_argument);
  o.messageSize = 8;
  o.window = 0;
  CHECK_FALSE(o.validate().empty());
  o.window = 1;
  CHECK(o.validate().empty());
}

TEST_CASE("processCpuSeconds: this process's CPU time grows with work; bad pids read as negative") {
  using netbuf::tools::processCpuSeconds;
  const int self = static_cast<int>(getpid());
  const double before = processCpuSeconds(self);
  REQUIRE(before >= 0);
  // Burn 150 ms of this thread's CPU time (not wall time: the machine may be busy).
  timespec t0{}, t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  volatile std::uint64_t sink = 0;
  do {
    for (int i = 0; i < 10000; ++i) sink = sink + static_cast<std::uint64_t>(i);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while (static_cast<double>(t.tv_sec - t0.tv_sec) +
               static_cast<double>(t.tv_nsec - t0.tv_nsec) / 1e9 <
           0.15);
  const double after = processCpuSeconds(self);
  CHECK(after - before >= 0.1);  // 150 ms, read in 10 ms ticks
  CHECK(after - before < 5);
  // The same work, seen as this thread's time: it ran on this thread, so it is all there.
  const int tid = netbuf::tools::currentThreadId();
  const double threadNow = netbuf::tools::threadCpuSeconds(tid);
  CHECK(threadNow >= 0.1);
  CHECK(threadNow <= processCpuSeconds(self) + 0.02);
  CHECK(netbuf::tools::threadCpuSeconds(0) < 0);
  CHECK(netbuf::tools::threadCpuSeconds(-3) < 0);

  CHECK(processCpuSeconds(0) < 0);
  CHECK(processCpuSeconds(-1) < 0);
  // Process ids are below pid_max, so pid_max itself never names a process.
  int pidMax = 0;
  std::ifstream("/proc/sys/kernel/pid_max") >> pidMax;
  REQUIRE(pidMax > 0);
  CHECK(processCpuSeconds(pidMax) < 0);
  CHECK(netbuf::tools::threadCpuSeconds(pidMax) < 0);
}

TEST_CASE("Echo servers: CPU time of their I/O threads while running; a load client reads it") {
  for (const bool useNetbuf : {false, true}) {
    CAPTURE(useNetbuf);
    netbuf::tools::AsioEchoServerOptions so;
    so.threads = 2;
    AsioEchoServer asioServer(so);
    netbuf::tools::NetbufEchoServer netbufServer(so);
    const netbuf::tools::EchoServerCounters& counters =
        useNetbuf ? static_cast<const netbuf::tools::EchoServerCounters&>(netbufServer)
                  : asioServer;
    CHECK(counters.cpuSeconds() < 0);  // no thread yet
    std::uint16_t port = 0;
    if (useNetbuf) {
      netbufServer.start();
      port = netbufServer.port();
    } else {
      asioServer.start();
      port = asioServer.port();
    }
    EchoLoadOptions opt = loadOptions(port, 4, 16, 0.4, 0.1);
    opt.serverCpuClock = [&counters] { return counters.cpuSeconds(); };
    const EchoLoadResult r = EchoLoad(opt).run();
    checkSane(r);
    // Serving 0.4 s of echo traffic takes CPU time on the server's threads, and no more than the
    // threads could use; the clock is read again after the run, so it is at least the window's.
    CHECK(r.serverCpuSeconds > 0);
    CHECK(r.serverCpuSeconds <= (r.seconds + 0.1) * 2 + 0.05);  // two server threads
    CHECK(counters.cpuSeconds() >= r.serverCpuSeconds);
    if (useNetbuf) {
      netbufServer.stop();
    } else {
      asioServer.stop();
    }
    CHECK(counters.cpuSeconds() < 0);  // the threads are gone
  }
  // A clock that throws leaves the server's figure unmeasured; the run itself is unaffected.
  AsioEchoServer server;
  server.start();
  EchoLoadOptions throwing = loadOptions(server.port(), 1, 1, 0.2, 0.05);
  throwing.serverCpuClock = []() -> double { throw std::runtime_error("no clock"); };
  const EchoLoadResult t = EchoLoad(throwing).run();
  checkSane(t);
  CHECK(t.serverCpuSeconds < 0);
  CHECK(netbuf::tools::echoJson(throwing, t).find("server_cpu") == std::string::npos);
  server.stop();

  EchoLoadOptions both;
  both.port = 1;
  both.serverPid = 1;
  both.serverCpuClock = [] { return 0.0; };
  CHECK_FALSE(both.validate().empty());
}

TEST_CASE("EchoLoad: CPU time in the window, for this process and a server pid") {
  AsioEchoServer server;
  server.start();
  EchoLoadOptions opt = loadOptions(server.port(), 2, 16, 0.4, 0.05);

  // Without a server pid: this process's CPU only (the load's thread and the server's, both here).
  EchoLoadResult r = EchoLoad(opt).run();
  checkSane(r);
  CHECK(r.serverCpuSeconds < 0);
  CHECK(r.clientCpuSeconds > 0);  // the load keeps a thread busy for 0.4 s
  // Two busy threads (client and server) over the window, plus the sampler's wake-up delay and
  // clock ticks.
  CHECK(r.clientCpuSeconds <= (r.seconds + 0.1) * 2 + 0.05);
  CHECK(netbuf::tools::echoJson(opt, r).find("\"client_cpu_s\":") != std::string::npos);
  CHECK(netbuf::tools::echoJson(opt, r).find("server_cpu") == std::string::npos);

  // The server runs in this process here, so its pid is this one: it used CPU in the window.
  opt.serverPid = static_cast<int>(getpid());
  r = EchoLoad(opt).run();
  checkSane(r);
  CHECK(r.serverCpuSeconds > 0);
  CHECK(r.serverCpuSeconds <= (r.seconds + 0.1) * 2 + 0.05);
  const std::string json = netbuf::tools::echoJson(opt, r);
  CHECK(json.find("\"server_cpu_s\":") != std::string::npos);
  CHECK(json.find("\"server_cpu_us_per_msg\":") != std::string::npos);

  // A run stopped before its window begins measures nothing.
  opt.warmupSeconds = 30;
  EchoLoad early(opt);
  const EchoLoadResult e =
      runInterrupted(early, std::chrono::milliseconds(100), [&] { early.stop(); });
  CHECK(e.clientCpuSeconds < 0);
  CHECK(e.serverCpuSeconds < 0);
  server.stop();

  opt.serverPid = -5;
  CHECK_FALSE(opt.validate().empty());
}

TEST_CASE("EchoLoad: nothing listening counts connect errors, no crash") {
  // Find a port with nothing listening: bind one, note it, close it.
  std::uint16_t port = 0;
  {
    AsioEchoServer server;
    server.start();
    port = server.port();
    server.stop();
  }
  const EchoLoadResult r = runLoad(port, 3, 128, 4, 0.2);
  CHECK(r.connectionsOpened == 0);
  CHECK(r.errors == 3);
  CHECK(r.messages == 0);
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.firstError.empty());
}

TEST_CASE("EchoLoad: the server stopping mid-run ends the load with errors counted") {
  AsioEchoServer server;
  server.start();
  // 30 s: it ends long before, when every connection has failed.
  EchoLoadOptions opt = loadOptions(server.port(), 4, 16, 30, 0);
  opt.messageSize = 1024;
  EchoLoad load(opt);
  const auto t0 = std::chrono::steady_clock::now();
  const EchoLoadResult r =
      runInterrupted(load, std::chrono::milliseconds(200), [&] { server.stop(); });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("first error: " << r.firstError);
  CHECK(took < 10);
  CHECK(r.errors == 4);
  CHECK(r.mismatches == 0);
  CHECK(r.messages > 0);
  CHECK_FALSE(r.firstError.empty());
}

TEST_CASE("EchoLoad: stop() from another thread ends a run early") {
  AsioEchoServer server;
  server.start();
  EchoLoadOptions opt = loadOptions(server.port(), 2, 4, 30, 0);
  EchoLoad load(opt);
  const EchoLoadResult r =
      runInterrupted(load, std::chrono::milliseconds(150), [&] { load.stop(); });
  CHECK(r.errors == 0);
  CHECK(r.messages > 0);
  CHECK(r.seconds < 10);
  server.stop();
}

TEST_CASE("NetbufEchoServer: carries the load client's traffic exactly, then stops") {
  netbuf::tools::NetbufEchoServer server;
  CHECK_FALSE(server.running());
  server.start();
  CHECK(server.running());
  REQUIRE(server.port() != 0);
  CHECK_THROWS_AS(server.start(), std::logic_error);
  struct Shape {
    std::size_t size, window;
  };
  for (Shape shape : {Shape{128, 8}, Shape{16384, 2}}) {
    netbuf::tools::EchoLoadOptions opt;
    opt.port = server.port();
    opt.connections = 4;
    opt.messageSize = shape.size;
    opt.window = shape.window;
    opt.durationSeconds = 0.3;
    opt.warmupSeconds = 0.1;
    netbuf::tools::EchoLoad load(opt);
    const auto r = load.run();
    CAPTURE(r.firstError);
    CHECK(r.ok());
    CHECK(r.mismatches == 0);
    CHECK(r.p50Ns <= r.p99Ns);
  }
  CHECK(server.connectionsAccepted() == 8);
  CHECK(server.bytesEchoed() > 0);
  server.stop();
  server.stop();  // idempotent
  CHECK_FALSE(server.running());
  CHECK(server.port() == 0);
}

TEST_CASE(
    "NetbufEchoServer and EchoLoad over TLS: verified, refused without the CA, mid-run stop") {
  const netbuf::test::TestCa ca("echo load CA");
  const netbuf::test::TestKeyPair cert = ca.issue(netbuf::test::CertificateSpec{});
  netbuf::SslContext::Options serverTls;
  serverTls.certificateChainPem = cert.chainPem;
  serverTls.privateKeyPem = cert.keyPem;
  netbuf::tools::AsioEchoServerOptions so;
  so.tls = netbuf::SslContext::forServer(serverTls);
  netbuf::tools::NetbufEchoServer server(so);
  server.start();
  netbuf::SslContext::Options clientTls;
  clientTls.trustedCaPem = ca.certPem();
  const auto trusting = netbuf::SslContext::forClient(clientTls);

  struct Shape {
    std::size_t connections, size, window, threads;
  };
  for (Shape shape : {Shape{4, 128, 8, 2}, Shape{2, 16384, 2, 1}, Shape{1, 200 * 1024, 1, 1}}) {
    CAPTURE(shape.size);
    EchoLoadOptions opt = loadOptions(server.port(), shape.connections, shape.window, 0.3, 0.1);
    opt.messageSize = shape.size;
    opt.threads = shape.threads;
    opt.tls = trusting;
    EchoLoad load(opt);
    const EchoLoadResult r = load.run();
    checkSane(r);
    CHECK(r.connectionsOpened == shape.connections);
  }
  CHECK(server.connectionsAccepted() == 7);
  CHECK(server.bytesEchoed() > 0);

  // A client that trusts only the system's roots refuses the server: every handshake fails, the
  // run ends at once with the reason.
  {
    EchoLoadOptions opt = loadOptions(server.port(), 2, 1, 5, 0);
    opt.tls = netbuf::SslContext::forClient();
    EchoLoad load(opt);
    const auto t0 = std::chrono::steady_clock::now();
    const EchoLoadResult r = load.run();
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
    CHECK(r.connectionsOpened == 0);
    CHECK(r.errors == 2);
    CHECK(r.messages == 0);
    CHECK(r.firstError.find("TLS handshake: ") == 0);
    CHECK(r.firstError.find("trusted root") != std::string::npos);
  }

  // The server going away mid-run fails every connection; the run ends early, errors counted.
  {
    EchoLoadOptions opt = loadOptions(server.port(), 3, 4, 30, 0);
    opt.tls = trusting;
    EchoLoad load(opt);
    const EchoLoadResult r =
        runInterrupted(load, std::chrono::milliseconds(300), [&] { server.stop(); });
    INFO("first error: " << r.firstError);
    CHECK(r.seconds < 10);
    CHECK(r.errors == 3);
    CHECK(r.mismatches == 0);
    CHECK(r.messages > 0);
  }
}

// ---- progress reporting (EchoLoadOptions::onProgress)

namespace {
using namespace netbuf::tools;  // NOLINT: test-local
}  // namespace

TEST_CASE("EchoLoad: progress reports every interval, then a last one; counter matches") {
  AsioEchoServer server;
  server.start();
  EchoLoadOptions opt;
  opt.port = server.port();
  opt.connections = 4;
  opt.window = 8;
  opt.threads = 2;
  opt.warmupSeconds = 0.1;
  opt.durationSeconds = 0.5;
  opt.progressIntervalSeconds = 0.1;
  std::vector<EchoLoadProgress> seen;
  std::thread::id caller = std::this_thread::get_id();
  bool onCaller = true;
  opt.onProgress = [&](const EchoLoadProgress& p) {
    onCaller = onCaller && std::this_thread::get_id() == caller;
    seen.push_back(p);
  };
  EchoLoad load(opt);
  const EchoLoadResult r = load.run();
  server.stop();
  CHECK(r.ok());
  CHECK(onCaller);
  REQUIRE(seen.size() >= 4);
  CHECK(seen.back().last);
  CHECK(seen.front().warmingUp);
  CHECK_FALSE(seen[seen.size() - 2].warmingUp);
  for (std::size_t k = 0; k + 1 < seen.size(); ++k) {
    CHECK_FALSE(seen[k].last);
    CHECK(seen[k].messages <= seen[k + 1].messages);
    CHECK(seen[k].elapsedSeconds < seen[k + 1].elapsedSeconds);
    CHECK(seen[k].messagesPerSecond > 0);
    CHECK(seen[k].totalSeconds == doctest::Approx(0.6));
  }
  CHECK(seen.back().errors == 0);
  CHECK(seen.back().elapsedSeconds >=
        0.5);  // warmup + duration (no upper bound: CI machines stall)
  // The counter includes warmup messages: at least the measured ones.
  CHECK(load.messagesCompleted() == seen.back().messages);
  CHECK(load.messagesCompleted() >= r.messages);
  const std::string line = echoProgressLine(seen.front());
  CHECK(line.find(" s / 0.6 s") != std::string::npos);
  CHECK(line.find("(warmup)") != std::string::npos);
}

TEST_CASE("EchoLoad: a throwing progress callback ends the run early and is rethrown") {
  AsioEchoServer server;
  server.start();
  EchoLoadOptions opt;
  opt.port = server.port();
  opt.connections = 2;
  opt.threads = 2;
  opt.warmupSeconds = 0;
  opt.durationSeconds = 30;
  opt.progressIntervalSeconds = 0.05;
  int calls = 0;
  opt.onProgress = [&](const EchoLoadProgress&) {
    ++calls;
    throw std::runtime_error("enough");
  };
  EchoLoad load(opt);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(load.run(), "enough", std::runtime_error);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  CHECK(calls == 1);
  // Not sticky, unlike stop(): the next run goes the whole way.
  opt.onProgress = nullptr;
  opt.durationSeconds = 0.2;
  EchoLoad again(opt);
  CHECK(again.run().ok());
  server.stop();
}

TEST_CASE("EchoLoad: stop() during a run with progress ends it, with a last report") {
  AsioEchoServer server;
  server.start();
  EchoLoadOptions opt;
  opt.port = server.port();
  opt.warmupSeconds = 0;
  opt.durationSeconds = 30;
  opt.progressIntervalSeconds = 1;
  std::vector<EchoLoadProgress> seen;
  opt.onProgress = [&](const EchoLoadProgress& p) { seen.push_back(p); };
  EchoLoad load(opt);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    load.stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const EchoLoadResult r = load.run();
  stopper.join();
  server.stop();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  REQUIRE(seen.size() == 1);  // woke by the threads' end, not the 1 s tick
  CHECK(seen[0].last);
  CHECK(r.messages > 0);
}

TEST_CASE("EchoLoadOptions: the progress interval is checked when a callback is set") {
  EchoLoadOptions opt;
  opt.port = 1;
  opt.progressIntervalSeconds = 0;
  CHECK(opt.validate().empty());  // no callback: unused
  opt.onProgress = [](const EchoLoadProgress&) {};
  CHECK(opt.validate().find("progress interval") != std::string::npos);
  opt.progressIntervalSeconds = 0.5;
  CHECK(opt.validate().empty());
}

TEST_CASE("echoJson: every field, parsed back; strings escaped, CPU fields only when measured") {
  EchoLoadOptions o;
  o.connections = 16;
  o.messageSize = 16384;
  o.window = 64;
  o.threads = 32;  // reported capped at the connections
  EchoLoadResult r;
  r.seconds = 1.23456;
  r.messages = 1000;
  r.messagesPerSecond = 810.4;
  r.megabytesPerSecond = 13.2771;
  r.p50Ns = 1500;
  r.p99Ns = 2501;
  r.p999Ns = 3000;
  r.maxNs = 4000;
  r.connectionsOpened = 15;
  r.mismatches = 2;
  r.errors = 3;
  r.firstError = "bad \"byte\"\n\x01 \\";
  // The Document views the text it parsed: keep the text alive.
  std::string text = netbuf::tools::echoJson(o, r);
  netbuf::Document d = netbuf::json::parse(text);
  const netbuf::Value& v = d.root();
  CHECK(v["connections"].asUInt64() == 16);
  CHECK(v["size"].asUInt64() == 16384);
  CHECK(v["window"].asUInt64() == 64);
  CHECK(v["threads"].asUInt64() == 16);
  CHECK(v["seconds"].asDouble() == 1.235);
  CHECK(v["messages"].asUInt64() == 1000);
  CHECK(v["msgs_per_s"].asUInt64() == 810);
  CHECK(v["mb_per_s"].asDouble() == 13.28);
  CHECK(v["p50_us"].asDouble() == 1.5);
  CHECK(v["p99_us"].asDouble() == 2.5);
  CHECK(v["p999_us"].asDouble() == 3.0);
  CHECK(v["max_us"].asDouble() == 4.0);
  CHECK(v["connections_opened"].asUInt64() == 15);
  CHECK(v["mismatches"].asUInt64() == 2);
  CHECK(v["errors"].asUInt64() == 3);
  CHECK(v["first_error"].asStr() == r.firstError);
  CHECK(v.find("client_cpu_s") == nullptr);
  CHECK(v.find("server_cpu_s") == nullptr);

  r.firstError.clear();
  r.clientCpuSeconds = 0.5;
  r.serverCpuSeconds = 0.25;
  text = netbuf::tools::echoJson(o, r);
  d = netbuf::json::parse(text);
  CHECK(d.root().find("first_error") == nullptr);
  CHECK(d.root()["client_cpu_s"].asDouble() == 0.5);
  CHECK(d.root()["server_cpu_s"].asDouble() == 0.25);
  CHECK(d.root()["server_cpu_us_per_msg"].asDouble() == 250.0);
}
