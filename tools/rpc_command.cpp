// `netbuf serve rpc` and `netbuf load rpc`: the demo MessagePack-RPC server (rpc_service.hpp) and
// its load generator (rpc_load.hpp). docs/rpc.md describes both.

#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/rpc/message_pack_rpc_server.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "rpc_load.hpp"
#include "rpc_service.hpp"

namespace netbuf::tools {
namespace {

void printServeRpcUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: netbuf serve rpc [--host ADDR] [--port P] [--threads T]\n\n"
               "Runs a MessagePack-RPC server until SIGINT or SIGTERM. Prints\n"
               "'listening on ADDR:PORT' first, on one line. Methods:\n"
               "  echo(...)        returns its params array\n"
               "  add(a, b)        a + b (integers; overflow -> error)\n"
               "  put(key, bin)    stores the bin under the str key, returns nil\n"
               "  get(key)         the bin stored under key, or nil\n"
               "  sleep(ms)        replies ms after ms milliseconds (asynchronous)\n\n"
               "  --host ADDR    address to listen on (default 127.0.0.1)\n"
               "  --port P       port (default 0: any free port, printed)\n"
               "  --threads T    I/O threads (default 1)\n");
}

void printLoadRpcUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: netbuf load rpc --port P [--host H] [--connections C] [--window W]\n"
               "                       [--seconds S] [--warmup S] [--method M] [--payload N]\n"
               "                       [--threads T]\n\n"
               "Drives a `netbuf serve rpc` server: each connection keeps W calls in flight,\n"
               "issuing one more for every one completed. Prints calls/s and p50/p99/p999/max\n"
               "latency (call to callback). Exits 1 when any call failed or none completed.\n\n"
               "  --host H          server address (default 127.0.0.1)\n"
               "  --port P          server port (required)\n"
               "  --connections C   connections (default 1)\n"
               "  --window W        calls in flight per connection (default 16)\n"
               "  --seconds S       measured seconds (default 5)\n"
               "  --warmup S        seconds run before measuring (default 0.5)\n"
               "  --method M        echo (default), add or put-get\n"
               "  --payload N       bin bytes for echo and put (default 16)\n"
               "  --threads T       client event loops (default 1)\n");
}

}  // namespace

int runServeRpc(const std::vector<std::string_view>& args) {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t threads = 1;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string_view a = args[k];
    bool ok = true;
    if (a == "--help" || a == "-h") {
      printServeRpcUsage(stdout);
      return kExitOk;
    } else if (!parseServeOption(args, k, host, port, threads, ok)) {
      return badOption("serve rpc", a, printServeRpcUsage);
    }
    if (!ok) return badOption("serve rpc", args[k], printServeRpcUsage);
  }

  const sigset_t signals = blockStopSignals();  // before the loops' threads exist

  MessagePackRpcServer rpc;
  registerDemoMethods(rpc, std::make_shared<RpcDemoStore>());
  rpc.onProtocolError([](Channel& ch, std::exception_ptr e) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    std::fprintf(stderr, "netbuf serve rpc: protocol error from %s, closing: %s\n",
                 ch.remoteAddress().c_str(), what.c_str());
  });
  EventLoopGroup group(threads);
  auto server = rpc.bind(group, host, port);
  printListening(host, server->port());

  const char* sig = waitForStopSignal(signals);
  server->close();
  server->closeChildren();
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
  const RpcServerStats s = rpc.stats();
  std::printf(
      "stopped (%s); %llu connection(s), %llu request(s), %llu notification(s), %llu error "
      "response(s), %llu protocol error(s)\n",
      sig, static_cast<unsigned long long>(s.connections),
      static_cast<unsigned long long>(s.requests), static_cast<unsigned long long>(s.notifications),
      static_cast<unsigned long long>(s.errorResponses),
      static_cast<unsigned long long>(s.protocolErrors));
  return kExitOk;
}

int runLoadRpc(const std::vector<std::string_view>& args) {
  RpcLoadOptions opt;
  bool havePort = false;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string_view a = args[k];
    const bool hasValue = k + 1 < args.size();
    bool ok = true;
    if (a == "--help" || a == "-h") {
      printLoadRpcUsage(stdout);
      return kExitOk;
    } else if (parseLoadOption(args, k, opt, havePort, ok)) {
    } else if (a == "--seconds" && hasValue) {
      ok = parseSeconds(args[++k], opt.durationSeconds);
    } else if (a == "--method" && hasValue) {
      ok = parseRpcLoadMethod(std::string(args[++k]), opt.method);
    } else if (a == "--payload" && hasValue) {
      ok = parseSize(args[++k], opt.payload);
    } else {
      return badOption("load rpc", a, printLoadRpcUsage);
    }
    if (!ok) return badOption("load rpc", args[k], printLoadRpcUsage);
  }
  if (!havePort) return missingOption("load rpc", "--port", printLoadRpcUsage);
  if (const std::string why = opt.validate(); !why.empty()) return invalidOptions("load rpc", why);
  const RpcLoadResult r = runRpcLoad(opt);
  const auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  std::printf(
      "rpc load against %s:%u: method %s, payload %zu B, %zu connection(s) x window %zu, %.1f s "
      "measured after %.1f s warmup\n\n",
      opt.host.c_str(), static_cast<unsigned>(opt.port), rpcLoadMethodName(opt.method), opt.payload,
      opt.connections, opt.window, r.seconds, opt.warmupSeconds);
  std::printf("%12s %12s %10s %10s %10s %10s %8s\n", "calls", "calls/s", "p50 us", "p99 us",
              "p999 us", "max us", "errors");
  std::printf("%12llu %12.0f %10.1f %10.1f %10.1f %10.1f %8llu\n",
              static_cast<unsigned long long>(r.calls), r.callsPerSecond, us(r.p50Ns), us(r.p99Ns),
              us(r.p999Ns), us(r.maxNs), static_cast<unsigned long long>(r.errors));
  if (!r.firstError.empty()) std::printf("\nfirst error: %s\n", r.firstError.c_str());
  return r.ok() ? kExitOk : kExitFailure;
}

}  // namespace netbuf::tools
