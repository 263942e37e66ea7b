// `netbuf serve rpc` and `netbuf load rpc`: the demo MessagePack-RPC server (rpc_service.hpp) and
// its load generator (rpc_load.hpp). docs/rpc.md describes both.

#include <signal.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/rpc/message_pack_rpc_server.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "rpc_load.hpp"
#include "rpc_service.hpp"
#include "stop_signals.hpp"
#include "transport_options.hpp"

namespace netbuf::tools {

int runServeRpc(const ParsedOptions& options) {
  const std::string host = options.text("--host");
  const std::uint16_t port = options.port("--port");
  const std::size_t threads = options.count("--threads", 1, 1024);
  const Transport transport = serverTransport(options);

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
  EventLoopGroup group(threads, transport);
  auto server = rpc.bind(group, host, port);
  printListening(host, server->port());
  printTransport(group.transport());

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

int runLoadRpc(const ParsedOptions& options) {
  RpcLoadOptions opt;
  opt.host = options.text("--host");
  opt.port = options.port("--port", true);
  opt.connections = options.count("--connections");
  opt.window = options.count("--window");
  opt.durationSeconds = options.seconds("--seconds");
  opt.warmupSeconds = options.seconds("--warmup");
  if (!parseRpcLoadMethod(options.text("--method"), opt.method))
    options.invalid("--method", "echo, add or put-get");
  opt.payload = options.count("--payload");
  opt.threads = options.count("--threads");
  if (!parseRpcLoadStyle(options.text("--style"), opt.style))
    options.invalid("--style", "callback or coroutine");
  if (const std::string why = opt.validate(); !why.empty()) throw UsageError(why);
  const RpcLoadResult r = runRpcLoad(opt);
  const auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  if (options.flag("--json")) {
    ByteBuf out = Unpooled::buffer(512);
    {
      JsonStreamWriter w(out);
      const auto member = [&w](std::string_view name, auto value) {
        w.key(name);
        w.value(value);
      };
      // Latencies to 0.01 us, rates to whole calls: the precision the measurement has.
      const auto cents = [](double v) { return std::round(v * 100) / 100; };
      w.beginObject();
      member("method", rpcLoadMethodName(opt.method));
      member("style", rpcLoadStyleName(opt.style));
      member("payload", opt.payload);
      member("connections", opt.connections);
      member("window", opt.window);
      member("seconds", std::round(r.seconds * 1000) / 1000);
      member("calls", r.calls);
      member("calls_per_s", static_cast<std::uint64_t>(std::llround(r.callsPerSecond)));
      member("p50_us", cents(us(r.p50Ns)));
      member("p99_us", cents(us(r.p99Ns)));
      member("p999_us", cents(us(r.p999Ns)));
      member("max_us", cents(us(r.maxNs)));
      member("connections_opened", r.connectionsOpened);
      member("errors", r.errors);
      if (!r.firstError.empty()) member("first_error", std::string_view(r.firstError));
      w.endObject();
    }
    out.writeByte('\n');
    std::fwrite(out.readableStringView().data(), 1, out.readableBytes(), stdout);
    return r.ok() ? kExitOk : kExitFailure;
  }
  std::printf(
      "rpc load against %s:%u: method %s (%s style), payload %zu B, %zu connection(s) x window "
      "%zu, %.1f s measured after %.1f s warmup\n\n",
      opt.host.c_str(), static_cast<unsigned>(opt.port), rpcLoadMethodName(opt.method),
      rpcLoadStyleName(opt.style), opt.payload, opt.connections, opt.window, r.seconds,
      opt.warmupSeconds);
  std::printf("%12s %12s %10s %10s %10s %10s %8s\n", "calls", "calls/s", "p50 us", "p99 us",
              "p999 us", "max us", "errors");
  std::printf("%12llu %12.0f %10.1f %10.1f %10.1f %10.1f %8llu\n",
              static_cast<unsigned long long>(r.calls), r.callsPerSecond, us(r.p50Ns), us(r.p99Ns),
              us(r.p999Ns), us(r.maxNs), static_cast<unsigned long long>(r.errors));
  if (!r.firstError.empty()) std::printf("\nfirst error: %s\n", r.firstError.c_str());
  return r.ok() ? kExitOk : kExitFailure;
}

}  // namespace netbuf::tools
