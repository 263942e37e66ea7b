// `netbuf serve echo`, `netbuf load echo` and `netbuf bench echo`: the echo server, its load
// generator, and the standard echo matrix run in-process (server and client in this one program).

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "asio_echo_server.hpp"
#include "cli_options.hpp"
#include "commands.hpp"
#include "echo_load.hpp"
#include "netbuf_echo_server.hpp"

namespace netbuf::tools {
namespace {

/// The two echo servers behind one interface: netbuf's own, and the plain-Asio floor.
enum class EchoImpl { Netbuf, Asio };

const char* implName(EchoImpl i) { return i == EchoImpl::Netbuf ? "netbuf" : "asio"; }

bool parseImpl(std::string_view s, EchoImpl& out) {
  if (s == "netbuf") {
    out = EchoImpl::Netbuf;
  } else if (s == "asio") {
    out = EchoImpl::Asio;
  } else {
    return false;
  }
  return true;
}

class AnyEchoServer {
 public:
  AnyEchoServer(EchoImpl impl, const AsioEchoServerOptions& opt) {
    if (impl == EchoImpl::Netbuf) {
      netbuf_ = std::make_unique<NetbufEchoServer>(opt);
    } else {
      asio_ = std::make_unique<AsioEchoServer>(opt);
    }
  }
  void start() { netbuf_ ? netbuf_->start() : asio_->start(); }
  void stop() { netbuf_ ? netbuf_->stop() : asio_->stop(); }
  std::uint16_t port() const { return netbuf_ ? netbuf_->port() : asio_->port(); }
  /// The running server's counters (both servers share them through EchoServerCounters).
  const EchoServerCounters& counters() const {
    return netbuf_ ? static_cast<const EchoServerCounters&>(*netbuf_) : *asio_;
  }

 private:
  std::unique_ptr<NetbufEchoServer> netbuf_;
  std::unique_ptr<AsioEchoServer> asio_;
};

// ---------------------------------------------------------------------------------------------
// serve echo

void printServeUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: netbuf serve echo [--host ADDR] [--port P | --unix PATH] [--udp]\n"
               "                         [--threads T] [--impl I]\n\n"
               "Runs an echo server until SIGINT or SIGTERM. Prints 'listening on ADDR:PORT' (or\n"
               "'listening on unix:PATH', 'listening on udp:ADDR:PORT') first, on one line.\n\n"
               "  --host ADDR    address to listen on (default 127.0.0.1)\n"
               "  --port P       port (default 0: any free port, printed)\n"
               "  --unix PATH    listen on a Unix domain stream socket instead ('@name': an\n"
               "                 abstract one); netbuf's server only\n"
               "  --udp          echo UDP datagrams on ADDR:PORT instead (each to its sender);\n"
               "                 netbuf's server only\n"
               "  --threads T    I/O threads, one io_context each (default 1)\n"
               "  --impl I       the server: 'netbuf' (default; netbuf's transport) or 'asio'\n"
               "                 (a hand-written plain Boost.Asio server, the floor netbuf is\n"
               "                 measured against)\n\n"
               "The MessagePack-RPC server: see 'netbuf serve rpc --help'.\n");
}

int runServeEcho(const std::vector<std::string_view>& args) {
  AsioEchoServerOptions opt;
  EchoImpl impl = EchoImpl::Netbuf;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string_view a = args[k];
    bool ok = true;
    if (a == "--help" || a == "-h") {
      printServeUsage(stdout);
      return kExitOk;
    } else if (parseServeOption(args, k, opt.address, opt.port, opt.threads, ok)) {
    } else if (a == "--impl" && k + 1 < args.size()) {
      ok = parseImpl(args[++k], impl);
    } else if (a == "--udp") {
      opt.udp = true;
    } else if (a == "--unix" && k + 1 < args.size()) {
      opt.unixPath = std::string(args[++k]);
      ok = !opt.unixPath.empty();
    } else {
      return badOption("serve echo", a, printServeUsage);
    }
    if (!ok) return badOption("serve echo", args[k], printServeUsage);
  }
  if ((!opt.unixPath.empty() || opt.udp) && impl != EchoImpl::Netbuf)
    return invalidOptions("serve echo", "--unix and --udp are served by --impl netbuf only");
  if (!opt.unixPath.empty() && opt.udp)
    return invalidOptions("serve echo", "--unix and --udp exclude each other");

  const sigset_t signals = blockStopSignals();  // before the server's threads exist

  AnyEchoServer server(impl, opt);
  server.start();
  if (opt.udp) {
    const bool v6 = opt.address.find(':') != std::string::npos;
    std::printf("listening on udp:%s%s%s:%u\n", v6 ? "[" : "", opt.address.c_str(), v6 ? "]" : "",
                static_cast<unsigned>(server.port()));
    std::fflush(stdout);
  } else if (opt.unixPath.empty()) {
    printListening(opt.address, server.port());
  } else {
    std::printf("listening on unix:%s\n", opt.unixPath.c_str());
    std::fflush(stdout);
  }

  const char* sig = waitForStopSignal(signals);
  server.stop();
  if (opt.udp) {
    std::printf("stopped (%s); %llu datagram(s) echoed, %llu bytes\n", sig,
                static_cast<unsigned long long>(server.counters().datagramsEchoed()),
                static_cast<unsigned long long>(server.counters().bytesEchoed()));
  } else {
    std::printf("stopped (%s); %llu connection(s) served, %llu bytes echoed\n", sig,
                static_cast<unsigned long long>(server.counters().connectionsAccepted()),
                static_cast<unsigned long long>(server.counters().bytesEchoed()));
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// load echo

void printLoadUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: netbuf load echo --port P [--host H] [--connections C] [--size N]\n"
               "                        [--window W] [--duration D] [--warmup S] [--threads T]\n"
               "                        [--server-pid PID] [--json] [--progress]\n\n"
               "Drives an echo server: each connection keeps W messages of N bytes in flight,\n"
               "sending one more for every one echoed back. Prints messages/s, MB/s (echoed\n"
               "payload, 1 MB = 1e6 bytes) and p50/p99/p999/max latency (send to last byte back).\n"
               "Exits 1 when any error or mismatch occurred or no message completed.\n\n"
               "  --host H          server address or name (default 127.0.0.1)\n"
               "  --port P          server port (required)\n"
               "  --connections C   connections (default 1)\n"
               "  --size N          message bytes, >= 8; K/M suffixes are binary (default 128)\n"
               "  --window W        messages in flight per connection (default 1)\n"
               "  --duration D      measured seconds (default 5)\n"
               "  --warmup S        seconds run before measuring (default 0.5)\n"
               "  --threads T       client threads; connections spread round robin (default 1)\n"
               "  --server-pid PID  also report the CPU time process PID (the server) used in\n"
               "                    the measured window, and per message (Linux /proc)\n"
               "  --json            one JSON object on stdout\n"
               "  --progress        a progress line on stderr every 0.5 s (elapsed / total\n"
               "                    seconds, msgs/s and MB/s since the previous line, errors):\n"
               "                    rewritten in place on a terminal, one line each otherwise\n\n"
               "The MessagePack-RPC load: see 'netbuf load rpc --help'.\n");
}

/// Parses the load options shared by `load echo`; returns -1 when parsed, else an exit code.
int parseLoadOptions(const std::vector<std::string_view>& args, EchoLoadOptions& opt, bool& json,
                     bool& progress) {
  bool havePort = false;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string_view a = args[k];
    const bool hasValue = k + 1 < args.size();
    bool ok = true;
    if (a == "--help" || a == "-h") {
      printLoadUsage(stdout);
      return kExitOk;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--progress") {
      progress = true;
    } else if (parseLoadOption(args, k, opt, havePort, ok)) {
    } else if (a == "--size" && hasValue) {
      ok = parseBytes(args[++k], opt.messageSize);
    } else if (a == "--duration" && hasValue) {
      ok = parseSeconds(args[++k], opt.durationSeconds);
    } else if (a == "--server-pid" && hasValue) {
      std::size_t pid = 0;
      ok = parseSize(args[++k], pid) && pid >= 1 && pid <= INT32_MAX;
      opt.serverPid = static_cast<int>(pid);
    } else {
      return badOption("load echo", a, printLoadUsage);
    }
    if (!ok) return badOption("load echo", args[k], printLoadUsage);
  }
  if (!havePort) return missingOption("load echo", "--port", printLoadUsage);
  if (const std::string why = opt.validate(); !why.empty()) return invalidOptions("load echo", why);
  return -1;
}

int runLoadEcho(const std::vector<std::string_view>& args) {
  EchoLoadOptions opt;
  bool json = false;
  bool progress = false;
  if (const int rc = parseLoadOptions(args, opt, json, progress); rc >= 0) return rc;
  // Progress goes to stderr (stdout keeps only the result): on a terminal one line rewritten in
  // place (padded over the previous, longer one), ended by a newline before the result; else one
  // line per report, so logs and pipes get whole lines.
  const bool inPlace = progress && isatty(fileno(stderr)) == 1;
  std::size_t shownWidth = 0;
  if (progress) {
    opt.onProgress = [inPlace, &shownWidth](const EchoLoadProgress& p) {
      const std::string line = echoProgressLine(p);
      if (inPlace) {
        const int pad = shownWidth > line.size() ? static_cast<int>(shownWidth - line.size()) : 0;
        std::fprintf(stderr, "\r%s%*s", line.c_str(), pad, "");
        shownWidth = line.size();
        if (p.last) std::fputc('\n', stderr);
      } else {
        std::fprintf(stderr, "%s\n", line.c_str());
      }
      std::fflush(stderr);
    };
  }
  EchoLoad load(opt);
  const EchoLoadResult r = load.run();
  if (json) {
    std::printf("%s\n", echoJson(opt, r).c_str());
  } else {
    std::printf("echo load against %s:%u, %.1f s measured after %.1f s warmup\n\n",
                opt.host.c_str(), static_cast<unsigned>(opt.port), r.seconds, opt.warmupSeconds);
    std::printf("%s\n%s\n", echoTableHeader().c_str(), echoTableRow(opt, r).c_str());
    if (r.clientCpuSeconds >= 0 && r.seconds > 0) {
      std::printf("\nCPU in the window: client %.2f s (%.2f cores)", r.clientCpuSeconds,
                  r.clientCpuSeconds / r.seconds);
      if (r.serverCpuSeconds >= 0) {
        std::printf(", server (pid %d) %.2f s (%.2f cores", opt.serverPid, r.serverCpuSeconds,
                    r.serverCpuSeconds / r.seconds);
        if (const double perMessage = r.serverCpuMicrosPerMessage(); perMessage >= 0)
          std::printf(", %.3f us per message", perMessage);
        std::printf(")");
      }
      std::printf("\n");
    }
    if (!r.firstError.empty()) std::printf("\nfirst error: %s\n", r.firstError.c_str());
  }
  return r.ok() ? kExitOk : kExitFailure;
}

// ---------------------------------------------------------------------------------------------
// bench echo

void printBenchEchoUsage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: netbuf bench echo [--seconds S] [--impl I] [--json]\n\n"
      "Starts an echo server in this process on 127.0.0.1 (port 0, one I/O thread) and\n"
      "drives it with the load client (one thread) over the standard matrix: 1 and 16\n"
      "connections x 128 B and 16 KiB messages x window 1 and 64. One row per case and\n"
      "server; with both servers, each case runs on both back to back (same conditions)\n"
      "and the netbuf/asio ratio of messages per second follows, then the ratio of the\n"
      "server threads' CPU time per message (asio's / netbuf's; /proc, Linux).\n\n"
      "  --seconds S   measured seconds per row (default 1); each row first warms up\n"
      "                for min(0.5, S/2) seconds\n"
      "  --impl I      'both' (default), 'netbuf' or 'asio' (plain Boost.Asio, the floor)\n"
      "  --json        machine-readable output on stdout\n");
}

}  // namespace

int runServe(const std::vector<std::string_view>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    printServeUsage(args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] != "echo") {
    std::fprintf(stderr, "netbuf serve: unknown server '%.*s' (available: echo, rpc)\n",
                 static_cast<int>(args[0].size()), args[0].data());
    return kExitUsage;
  }
  return runServeEcho(std::vector<std::string_view>(args.begin() + 1, args.end()));
}

int runLoad(const std::vector<std::string_view>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    printLoadUsage(args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] != "echo") {
    std::fprintf(stderr, "netbuf load: unknown load '%.*s' (available: echo, rpc)\n",
                 static_cast<int>(args[0].size()), args[0].data());
    return kExitUsage;
  }
  return runLoadEcho(std::vector<std::string_view>(args.begin() + 1, args.end()));
}

int runBenchEcho(const std::vector<std::string_view>& args) {
  double seconds = 1.0;
  bool json = false;
  std::vector<EchoImpl> impls = {EchoImpl::Asio, EchoImpl::Netbuf};
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string_view a = args[k];
    const bool hasValue = k + 1 < args.size();
    if (a == "--help" || a == "-h") {
      printBenchEchoUsage(stdout);
      return kExitOk;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--seconds" && hasValue) {
      if (!parseSeconds(args[++k], seconds) || !(seconds > 0) || seconds > 3600)
        return badOption("bench echo", args[k], printBenchEchoUsage);
    } else if (a == "--impl" && hasValue) {
      EchoImpl one{};
      if (args[++k] == "both") {
        impls = {EchoImpl::Asio, EchoImpl::Netbuf};
      } else if (parseImpl(args[k], one)) {
        impls = {one};
      } else {
        return badOption("bench echo", args[k], printBenchEchoUsage);
      }
    } else {
      return badOption("bench echo", a, printBenchEchoUsage);
    }
  }

  std::vector<std::unique_ptr<AnyEchoServer>> servers;
  for (EchoImpl impl : impls) {
    servers.push_back(std::make_unique<AnyEchoServer>(impl, AsioEchoServerOptions{}));
    servers.back()->start();  // 127.0.0.1, port 0, one thread
  }

  struct Case {
    std::size_t connections, size, window;
  };
  std::vector<Case> cases;
  for (std::size_t c : {1, 16})
    for (std::size_t n : {128, 16384})
      for (std::size_t w : {1, 64}) cases.push_back({c, n, w});

  bool allOk = true;
  if (json) {
    std::printf("{\"suite\":\"echo\",\"seconds\":%g,\"results\":[", seconds);
  } else {
    std::printf(
        "netbuf bench echo: echo servers with 1 I/O thread on 127.0.0.1 (netbuf's and the plain\n"
        "Asio floor), load client 1 thread; %.1f s measured per row. MB/s: echoed payload,\n"
        "1 MB = 1e6 bytes. cpu us: the server thread's CPU time per message in the window.\n"
        "ratio: netbuf msgs/s / asio msgs/s for the same case; cpu: asio's CPU per message /\n"
        "netbuf's (above 1: netbuf needs less).\n\n"
        "impl   %s    cpu us\n",
        seconds, echoTableHeader().c_str());
  }
  std::fflush(stdout);
  std::string firstError;
  bool firstRow = true;
  for (const Case& c : cases) {
    double asioRate = 0;
    double asioCpu = -1;
    for (std::size_t s = 0; s < servers.size(); ++s) {
      EchoLoadOptions opt;
      opt.port = servers[s]->port();
      opt.connections = c.connections;
      opt.messageSize = c.size;
      opt.window = c.window;
      opt.durationSeconds = seconds;
      opt.warmupSeconds = std::min(0.5, seconds / 2);
      opt.serverCpuClock = [server = servers[s].get()] { return server->counters().cpuSeconds(); };
      EchoLoad load(opt);
      const EchoLoadResult r = load.run();
      allOk = allOk && r.ok();
      const double cpuPerMessage = r.serverCpuMicrosPerMessage();
      if (firstError.empty()) firstError = r.firstError;
      const char* name = implName(impls[s]);
      if (json) {
        const std::string row = echoJson(opt, r);  // {"connections":...}
        std::printf("%s\n {\"impl\":\"%s\",%s", firstRow ? "" : ",", name, row.c_str() + 1);
      } else {
        std::string line = fmt::format("{:<6} {}", name, echoTableRow(opt, r));
        if (cpuPerMessage >= 0) line += fmt::format(" {:9.3f}", cpuPerMessage);
        if (impls[s] == EchoImpl::Asio) {
          asioRate = r.messagesPerSecond;
          asioCpu = cpuPerMessage;
        }
        if (impls[s] == EchoImpl::Netbuf && asioRate > 0) {
          line += fmt::format("  ratio {:.2f}", r.messagesPerSecond / asioRate);
          if (asioCpu > 0 && cpuPerMessage > 0)
            line += fmt::format(", cpu {:.2f}", asioCpu / cpuPerMessage);
        }
        std::printf("%s\n", line.c_str());
      }
      firstRow = false;
      std::fflush(stdout);
    }
  }
  for (auto& server : servers) server->stop();
  if (json) {
    std::printf("\n],\"ok\":%s}\n", allOk ? "true" : "false");
  } else {
    std::printf(
        "\nNetty 4.1 (NIO, 1 server thread, 128 B, window 64) for reference: 1.08-1.29M\n"
        "msgs/s on 1 connection, 2.05-2.64M on 16 (published, other hardware).\n");
    if (!firstError.empty()) std::printf("first error: %s\n", firstError.c_str());
  }
  return allOk ? kExitOk : kExitFailure;
}

}  // namespace netbuf::tools
