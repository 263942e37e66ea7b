// `netbuf serve redis`: the Redis server (RedisServer), for redis-cli, redis-benchmark and any
// Redis client, until SIGINT/SIGTERM.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <netbuf/redis/redis_server.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <string>

#include "commands.hpp"
#include "stop_signals.hpp"
#include "tls_options.hpp"
#include "transport_options.hpp"

namespace netbuf::tools {

int runServeRedis(const ParsedOptions& options) {
  RedisServer::Options opt;
  opt.host = options.text("--host");
  opt.port = options.port("--port");
  const std::size_t threads = options.count("--threads", 1, 1024);
  const Transport transport = serverTransport(options);
  if (options.given("--maxclients")) opt.maxClients = options.count("--maxclients", 1);
  opt.idleTimeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.seconds("--timeout") * 1000));
  opt.tls = serverTlsContext(options);

  const sigset_t signals = blockStopSignals();  // before the loops' threads exist

  // The server's loops are the tool's (bind), not start()'s own: RedisServer::Options has no
  // transport. One keyspace shard per loop, as with start(). The group is made first so that the
  // listener and the server go before it.
  EventLoopGroup group(threads, transport);
  RedisServer server(opt);
  auto listener = server.bind(group, opt.host, opt.port);
  printListening(opt.host, server.port());
  printTransport(group.transport());

  const char* sig = waitForStopSignal(signals);
  server.shutdownGracefully(std::chrono::seconds(5));
  listener.reset();  // a listener must not outlive its group's loops
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
  const RedisServerStats s = server.stats();
  std::printf("stopped (%s); %llu connection(s), %llu command(s), %llu protocol error(s)\n", sig,
              static_cast<unsigned long long>(s.connections),
              static_cast<unsigned long long>(s.commands),
              static_cast<unsigned long long>(s.protocolErrors));
  return kExitOk;
}

}  // namespace netbuf::tools
