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

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/tls/ssl_context.hpp>

#include "asio_echo_server.hpp"
#include "commands.hpp"
#include "echo_load.hpp"
#include "netbuf_echo_server.hpp"
#include "stop_signals.hpp"
#include "tls_options.hpp"
#include "transport_options.hpp"

namespace netbuf::tools {
namespace {

/// The echo servers behind one interface: netbuf's own (on the transport its options name; bench
/// echo's NetbufIoUring is the same server on io_uring), and the plain-Asio floor.
enum class EchoImpl { Netbuf, NetbufIoUring, Asio };

const char* implName(EchoImpl i) {
  switch (i) {
    case EchoImpl::Netbuf:
      return "netbuf";
    case EchoImpl::NetbufIoUring:
      return "netbuf-io_uring";
    default:
      return "asio";
  }
}

constexpr std::string_view kImplNames[] = {"netbuf", "asio"};

class AnyEchoServer {
 public:
  AnyEchoServer(EchoImpl impl, const AsioEchoServerOptions& opt) {
    if (impl == EchoImpl::Asio) {
      asio_ = std::make_unique<AsioEchoServer>(opt);
    } else {
      netbuf_ = std::make_unique<NetbufEchoServer>(opt);
    }
  }
  void start() { netbuf_ ? netbuf_->start() : asio_->start(); }
  void stop() { netbuf_ ? netbuf_->stop() : asio_->stop(); }
  std::uint16_t port() const { return netbuf_ ? netbuf_->port() : asio_->port(); }
  /// What the I/O threads run: netbuf's transport, or Asio for the plain-Asio server.
  Transport transport() const { return netbuf_ ? netbuf_->transport() : Transport::Asio; }
  /// The running server's counters (both servers share them through EchoServerCounters).
  const EchoServerCounters& counters() const {
    return netbuf_ ? static_cast<const EchoServerCounters&>(*netbuf_) : *asio_;
  }

 private:
  std::unique_ptr<NetbufEchoServer> netbuf_;
  std::unique_ptr<AsioEchoServer> asio_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// serve echo

int runServeEcho(const ParsedOptions& options) {
  AsioEchoServerOptions opt;
  opt.address = options.text("--host");
  opt.port = options.port("--port");
  opt.threads = options.count("--threads", 1, 1024);
  const EchoImpl impl =
      options.choice("--impl", kImplNames) == 0 ? EchoImpl::Netbuf : EchoImpl::Asio;
  opt.transport = serverTransport(options);
  if (options.given("--transport") && impl != EchoImpl::Netbuf)
    throw UsageError("--transport chooses the transport of --impl netbuf only");
  opt.udp = options.flag("--udp");
  if (options.given("--unix")) {
    opt.unixPath = options.text("--unix");
    if (opt.unixPath.empty()) options.invalid("--unix", "a socket path");
  }
  if ((!opt.unixPath.empty() || opt.udp) && impl != EchoImpl::Netbuf)
    throw UsageError("--unix and --udp are served by --impl netbuf only");
  if (!opt.unixPath.empty() && opt.udp) throw UsageError("--unix and --udp exclude each other");
  const bool tls =
      options.given("--tls-cert") || options.given("--tls-key") || options.given("--tls-client-ca");
  if (tls && (opt.udp || impl != EchoImpl::Netbuf))
    throw UsageError("TLS is served over TCP and Unix domain sockets by --impl netbuf only");
  opt.tls = serverTlsContext(options);

  const sigset_t signals = blockStopSignals();  // before the server's threads exist

  AnyEchoServer server(impl, opt);
  server.start();
  if (opt.udp) {
    printListening(opt.address, server.port(), "udp:");
  } else if (opt.unixPath.empty()) {
    printListening(opt.address, server.port());
  } else {
    std::printf("listening on unix:%s\n", opt.unixPath.c_str());
    std::fflush(stdout);
  }
  // A DatagramChannel's I/O stays on the loop's io_context on either transport (transport.hpp).
  printTransport(server.transport(), opt.udp && server.transport() == Transport::IoUring
                                         ? "UDP datagrams go through asio"
                                         : nullptr);

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

int runLoadEcho(const ParsedOptions& options) {
  EchoLoadOptions opt;
  opt.host = options.text("--host");
  opt.port = options.port("--port", true);
  opt.connections = options.count("--connections");
  opt.messageSize = options.bytes("--size");
  opt.window = options.count("--window");
  opt.durationSeconds = options.seconds("--duration");
  opt.warmupSeconds = options.seconds("--warmup");
  opt.threads = options.count("--threads");
  if (options.given("--server-pid"))
    opt.serverPid = static_cast<int>(options.count("--server-pid", 1, INT32_MAX));
  if (options.flag("--tls")) {
    opt.tls = clientTlsContext(options);
  } else if (options.given("--cacert") || options.flag("--insecure")) {
    throw UsageError("--cacert and --insecure go with --tls");
  }
  const bool json = options.flag("--json");
  const bool progress = options.flag("--progress");
  if (const std::string why = opt.validate(); !why.empty()) throw UsageError(why);
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
    std::printf("echo load against %s:%u%s, %.1f s measured after %.1f s warmup\n\n",
                opt.host.c_str(), static_cast<unsigned>(opt.port), opt.tls ? " over TLS" : "",
                r.seconds, opt.warmupSeconds);
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

int runBenchEcho(const ParsedOptions& options) {
  const double seconds = options.seconds("--seconds", 3600, true);
  const bool json = options.flag("--json");
  constexpr std::string_view kChoices[] = {"both", "all", "netbuf", "netbuf-io_uring", "asio"};
  std::vector<EchoImpl> impls;
  // Why netbuf-io_uring is left out of 'all' (empty: it is not). Asked for alone, an unavailable
  // io_uring fails the command instead (TransportUnavailableError from start()).
  std::string ioUringSkipped;
  switch (options.choice("--impl", kChoices)) {
    case 0:
      impls = {EchoImpl::Asio, EchoImpl::Netbuf};
      break;
    case 1:
      impls = {EchoImpl::Asio, EchoImpl::Netbuf};
      if (const IoUringSupport& io = ioUringSupport(); io.available) {
        impls.push_back(EchoImpl::NetbufIoUring);
      } else {
        ioUringSkipped = io.reason.empty() ? "io_uring is unavailable" : io.reason;
      }
      break;
    case 2:
      impls = {EchoImpl::Netbuf};
      break;
    case 3:
      impls = {EchoImpl::NetbufIoUring};
      break;
    default:
      impls = {EchoImpl::Asio};
      break;
  }
  const bool withIoUring =
      std::find(impls.begin(), impls.end(), EchoImpl::NetbufIoUring) != impls.end();
  std::size_t nameWidth = 6;  // "netbuf": the table's width before netbuf-io_uring
  for (EchoImpl impl : impls)
    nameWidth = std::max(nameWidth, std::string_view(implName(impl)).size());

  std::vector<std::unique_ptr<AnyEchoServer>> servers;
  for (EchoImpl impl : impls) {
    AsioEchoServerOptions opt;  // 127.0.0.1, port 0, one thread
    // Each netbuf row names its transport, whatever NETBUF_TRANSPORT says.
    opt.transport = impl == EchoImpl::NetbufIoUring ? Transport::IoUring : Transport::Asio;
    servers.push_back(std::make_unique<AnyEchoServer>(impl, opt));
    servers.back()->start();
  }

  struct Case {
    std::size_t connections, size, window;
  };
  std::vector<Case> cases;
  for (std::size_t c : {1, 16})
    for (std::size_t n : {128, 16384})
      for (std::size_t w : {1, 64}) cases.push_back({c, n, w});

  bool allOk = true;
  // JSON: one object, written row by row; each complete row is flushed to stdout as it comes, so
  // a reader sees progress (the bytes flushed are consumed from `out`, never moved: the writer
  // keeps writing after them).
  ByteBuf out = Unpooled::buffer(4096);
  JsonStreamWriter w(out);
  const auto flushJson = [&] {
    w.commit();
    std::fwrite(out.readableStringView().data(), 1, out.readableBytes(), stdout);
    out.skipBytes(out.readableBytes());
  };
  if (json) {
    w.beginObject();
    w.key("suite");
    w.value("echo");
    w.key("seconds");
    w.value(seconds);
    if (!ioUringSkipped.empty()) {
      w.key("skipped");
      w.beginArray();
      w.beginObject();
      w.key("impl");
      w.value(implName(EchoImpl::NetbufIoUring));
      w.key("reason");
      w.value(std::string_view(ioUringSkipped));
      w.endObject();
      w.endArray();
      // stdout holds the JSON only: the reason is on stderr too, for whoever watches the run.
      std::fprintf(stderr, "netbuf bench echo: netbuf-io_uring skipped: %s\n",
                   ioUringSkipped.c_str());
    }
    w.key("results");
    w.beginArray();
  } else {
    if (withIoUring) {
      std::printf(
          "netbuf bench echo: echo servers with 1 I/O thread on 127.0.0.1 (netbuf's on the asio\n"
          "and on the io_uring transport, and the plain Asio floor), load client 1 thread on\n"
          "asio; %.1f s measured per row. MB/s: echoed payload, 1 MB = 1e6 bytes. cpu us: the\n"
          "server thread's CPU time per message in the window (io_uring: work the kernel hands\n"
          "to its io-wq threads is not counted). ratio: the row's msgs/s / asio msgs/s for the\n"
          "same case; cpu: asio's CPU per message / the row's (above 1: netbuf needs less).\n",
          seconds);
    } else {
      std::printf(
          "netbuf bench echo: echo servers with 1 I/O thread on 127.0.0.1 (netbuf's and the\n"
          "plain Asio floor), load client 1 thread; %.1f s measured per row. MB/s: echoed\n"
          "payload, 1 MB = 1e6 bytes. cpu us: the server thread's CPU time per message in the\n"
          "window. ratio: netbuf msgs/s / asio msgs/s for the same case; cpu: asio's CPU per\n"
          "message / netbuf's (above 1: netbuf needs less).\n",
          seconds);
    }
    if (!ioUringSkipped.empty())
      std::printf("netbuf-io_uring: skipped: %s\n", ioUringSkipped.c_str());
    std::printf("\n%s\n",
                fmt::format("{:<{}} {}    cpu us", "impl", nameWidth, echoTableHeader()).c_str());
  }
  std::fflush(stdout);
  std::string firstError;
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
        w.beginObject();
        w.key("impl");
        w.value(name);
        writeEchoFields(w, opt, r);
        w.endObject();
        flushJson();
      } else {
        std::string line = fmt::format("{:<{}} {}", name, nameWidth, echoTableRow(opt, r));
        if (cpuPerMessage >= 0) line += fmt::format(" {:9.3f}", cpuPerMessage);
        if (impls[s] == EchoImpl::Asio) {
          asioRate = r.messagesPerSecond;
          asioCpu = cpuPerMessage;
        }
        if (impls[s] != EchoImpl::Asio && asioRate > 0) {
          line += fmt::format("  ratio {:.2f}", r.messagesPerSecond / asioRate);
          if (asioCpu > 0 && cpuPerMessage > 0)
            line += fmt::format(", cpu {:.2f}", asioCpu / cpuPerMessage);
        }
        std::printf("%s\n", line.c_str());
      }
      std::fflush(stdout);
    }
  }
  for (auto& server : servers) server->stop();
  if (json) {
    w.endArray();
    w.key("ok");
    w.value(allOk);
    w.endObject();
    flushJson();
    std::printf("\n");
  } else if (!firstError.empty()) {
    std::printf("\nfirst error: %s\n", firstError.c_str());
  }
  return allOk ? kExitOk : kExitFailure;
}

}  // namespace netbuf::tools
