// The `netbuf` tool's command table: every command and subcommand with its usage text, options
// (and their defaults, which the handlers read through ParsedOptions) and handler. Adding a
// subcommand is one entry here and one handler.

#include <array>
#include <cstddef>

#include "commands.hpp"

#ifndef NETBUF_BENCH_DATA_DIR
#define NETBUF_BENCH_DATA_DIR "microbench/data"
#endif

namespace netbuf::tools {
namespace {

// ---- bench

constexpr OptionSpec kBenchStringsOptions[] = {
    {"--seconds", "S", "total measuring time in (0, 3600], spread over all rows", "3"},
    {"--json", "", "one JSON object on stdout instead of the table"},
    {"--data", "DIR", "directory holding bench-strings/", NETBUF_BENCH_DATA_DIR},
};

constexpr OptionSpec kBenchEchoOptions[] = {
    {"--seconds", "S",
     "measured seconds per row, in (0, 3600]; each row first warms up\nfor min(0.5, S/2) seconds",
     "1"},
    {"--impl", "I",
     "the servers: 'both' (asio and netbuf), 'all' (also netbuf-io_uring,\nskipped with "
     "the reason where io_uring is unavailable), or one of\n'netbuf' (netbuf's on the asio "
     "transport), 'netbuf-io_uring' (on\nio_uring) and 'asio' (plain Boost.Asio, the floor)",
     "both"},
    {"--json", "", "one JSON object on stdout instead of the table"},
};

constexpr OptionSpec kBenchAcceptOptions[] = {
    {"--seconds", "S", "seconds per design, in (0, 600]", "1"},
    {"--loops", "L", "the server's event loops, 1..256", "2"},
    {"--clients", "C", "client threads, 1..256", "2"},
    {"--open-loop", "", "clients close right after connect() instead of waiting for the server"},
    {"--json", "", "one JSON object on stdout instead of the table"},
};

constexpr OptionSpec kBenchHttpOptions[] = {
    {"--seconds", "S", "total measuring time in (0, 3600], spread over all rows", "3"},
    {"--json", "", "one JSON object on stdout instead of the table"},
};

constexpr Subcommand kBench[] = {
    {"strings", "the text fast paths (UTF-8/UTF-16/ASCII) against their baselines",
     "Runs the shared string workloads (tools/bench_support/bench_strings.hpp) with a "
     "steady_clock\n"
     "timing loop and prints one row per operation and workload: netbuf's throughput and its\n"
     "ratio to each baseline (baseline time / netbuf time; for memcpy, the fraction of memcpy\n"
     "speed reached). vs-tier0 is netbuf's own scalar tier, forced.",
     kBenchStringsOptions, runBenchStrings},
    {"http", "HTTP request parsing, netbuf's decoder against http-parser",
     "Parses two requests (picohttpparser's 703-byte browser GET and a chunked POST) into the\n"
     "head, field views and body slices, with HttpRequestDecoder and with Node's http-parser\n"
     "2.9.4 in the same program, in alternating rounds; prints ns per request, GB/s and the\n"
     "ratio (http-parser's time / netbuf's).",
     kBenchHttpOptions, runBenchHttp},
    {"echo", "the echo server matrix, netbuf against the plain-Asio floor, in-process",
     "Starts an echo server in this process on 127.0.0.1 (port 0, one I/O thread) and drives it\n"
     "with the load client (one thread, on asio) over the standard matrix: 1 and 16 connections\n"
     "x 128 B and 16 KiB messages x window 1 and 64. One row per case and server; with several\n"
     "servers, each case runs on all of them back to back (same conditions), and each netbuf\n"
     "row is followed by its ratio to asio's messages per second, then the ratio of the server\n"
     "threads' CPU time per message (asio's / netbuf's; /proc, Linux). Exits 1 when a row had\n"
     "an error or completed nothing.",
     kBenchEchoOptions, runBenchEcho},
    {"accept", "connections accepted per second: one acceptor, or one per loop",
     "Connections accepted per second by a netbuf server with L loops and C client threads\n"
     "opening and closing connections for S seconds per design: one acceptor handing sockets\n"
     "out round robin, then one SO_REUSEPORT acceptor per loop. By default each client waits\n"
     "for the server to close its connection before the next (closed loop); --open-loop closes\n"
     "right after connect(), which can overflow the listen queue (see the 'listen overflows'\n"
     "column: each costs a client a 1 s SYN retransmission). Exits 1 on any error.",
     kBenchAcceptOptions, runBenchAccept},
};

// ---- options shared by the servers (TLS, transport) and by the clients (TLS)

/// The tables' options, in order: one table per subcommand, the shared rows written once.
template <std::size_t... N>
constexpr std::array<OptionSpec, (N + ...)> joinOptions(const OptionSpec (&... tables)[N]) {
  std::array<OptionSpec, (N + ...)> out{};
  std::size_t k = 0;
  const auto append = [&](const auto& table) {
    for (const OptionSpec& o : table) out[k++] = o;
  };
  (append(tables), ...);
  return out;
}

constexpr OptionSpec kTransportServerOptions[] = {
    {"--transport", "T",
     "the loops' I/O: 'asio' (epoll), 'io_uring' (Linux 6.0+) or 'auto'\n(io_uring where "
     "the system allows it, else asio); default:\n$NETBUF_TRANSPORT, else asio"},
};

constexpr OptionSpec kTlsServerOptions[] = {
    {"--tls-cert", "FILE",
     "serve TLS with this certificate chain (PEM, the leaf first);\nwith --tls-key"},
    {"--tls-key", "FILE", "the private key of --tls-cert (PEM)"},
    {"--tls-client-ca", "FILE",
     "with --tls-cert: require client certificates issued by the CAs\nin FILE (PEM): mutual TLS"},
};

constexpr OptionSpec kTlsClientOptions[] = {
    {"--cacert", "FILE", "TLS: trust the CA certificates in FILE (PEM) instead of the\nsystem's"},
    {"--insecure", "",
     "TLS: do not verify the server's certificate (encrypted, not\nauthenticated; a warning "
     "goes to stderr)"},
};

// ---- serve

constexpr OptionSpec kServeEchoOptionsBase[] = {
    {"--host", "ADDR", "address to listen on", "127.0.0.1"},
    {"--port", "P", "port; 0: any free port, printed", "0"},
    {"--unix", "PATH",
     "listen on a Unix domain stream socket instead ('@name': an\nabstract one); netbuf's "
     "server only"},
    {"--udp", "",
     "echo UDP datagrams on ADDR:PORT instead (each to its sender);\nnetbuf's "
     "server only"},
    {"--threads", "T", "I/O threads, one io_context each, 1..1024", "1"},
    {"--impl", "I",
     "the server: 'netbuf' (netbuf's transport) or 'asio' (a hand-written\nplain Boost.Asio "
     "server, the floor netbuf is measured against)",
     "netbuf"},
};
constexpr auto kServeEchoOptions =
    joinOptions(kServeEchoOptionsBase, kTransportServerOptions, kTlsServerOptions);

constexpr OptionSpec kServeRpcOptionsBase[] = {
    {"--host", "ADDR", "address to listen on", "127.0.0.1"},
    {"--port", "P", "port; 0: any free port, printed", "0"},
    {"--threads", "T", "I/O threads, 1..1024", "1"},
};
constexpr auto kServeRpcOptions = joinOptions(kServeRpcOptionsBase, kTransportServerOptions);

constexpr OptionSpec kServeHttpOptionsBase[] = {
    {"--host", "ADDR", "address to listen on", "127.0.0.1"},
    {"--port", "P", "port; 0: any free port, printed", "0"},
    {"--threads", "T", "I/O threads, 1..1024", "1"},
    {"--root", "DIR", "serve DIR's files under /files/"},
    {"--max-content-length", "N", "largest request body; K/M suffixes are binary", "1M"},
};
constexpr auto kServeHttpOptions =
    joinOptions(kServeHttpOptionsBase, kTransportServerOptions, kTlsServerOptions);

constexpr OptionSpec kServeRedisOptionsBase[] = {
    {"--host", "ADDR", "address to listen on", "127.0.0.1"},
    {"--port", "P", "port; 0: any free port, printed", "6379"},
    {"--threads", "T",
     "I/O threads, 1..1024; with T > 1 the keys are sharded over the\nthreads (see "
     "redis_server.hpp)",
     "1"},
    {"--maxclients", "N", "connections open at once (Redis's maxclients); none by default"},
    {"--timeout", "S", "close connections idle for S seconds (Redis's timeout); 0: never", "0"},
};
constexpr auto kServeRedisOptions =
    joinOptions(kServeRedisOptionsBase, kTransportServerOptions, kTlsServerOptions);

constexpr Subcommand kServe[] = {
    {"echo", "an echo server (TCP, Unix domain socket or UDP) until SIGINT/SIGTERM",
     "Prints 'listening on ADDR:PORT' (or 'listening on unix:PATH', 'listening on\n"
     "udp:ADDR:PORT') first, on one line, then 'transport: T' (asio or io_uring: what the\n"
     "loops run; UDP goes through asio on either); on SIGINT or SIGTERM stops and prints what\n"
     "it served. --transport chooses netbuf's transport, for --impl netbuf.\n"
     "With --tls-cert and --tls-key every connection runs TLS (TCP or --unix, --impl netbuf):\n"
     "an SslHandler first in its pipeline, the echo behind it.",
     kServeEchoOptions, runServeEcho},
    {"rpc", "the demo MessagePack-RPC server until SIGINT/SIGTERM",
     "Prints 'listening on ADDR:PORT' first, on one line, then 'transport: T' (asio or\n"
     "io_uring). Methods:\n"
     "  echo(...)        returns its params array\n"
     "  add(a, b)        a + b (integers; overflow -> error)\n"
     "  put(key, bin)    stores the bin under the str key, returns nil\n"
     "  get(key)         the bin stored under key, or nil\n"
     "  sleep(ms)        replies ms after ms milliseconds (asynchronous)",
     kServeRpcOptions, runServeRpc},
    {"http", "the demo HTTP/1.1 server until SIGINT/SIGTERM",
     "Prints 'listening on ADDR:PORT' first, on one line, then 'transport: T' (asio or\n"
     "io_uring). Routes:\n"
     "  GET  /           Hello, World! (text/plain)\n"
     "  POST /echo       the request body\n"
     "  GET  /files/REL  DIR/REL with --root DIR (no path leaves DIR)\n"
     "  anything else    404\n"
     "With --tls-cert and --tls-key it serves HTTPS instead (ALPN: http/1.1).",
     kServeHttpOptions, runServeHttp},
    {"redis", "the Redis server (RESP2 and RESP3, in memory) until SIGINT/SIGTERM",
     "Prints 'listening on ADDR:PORT' first, on one line, then 'transport: T' (asio or\n"
     "io_uring). Strings, lists, sets, hashes and sorted sets with expiry, for redis-cli,\n"
     "redis-benchmark and Redis client libraries; nothing is persisted. With --threads T > 1\n"
     "each thread owns the keys of its shard: commands whose keys span shards run split (MGET,\n"
     "MSET, DEL, EXISTS...) or are refused with -CROSSSLOT, as in Redis Cluster; keys sharing\n"
     "a {hash tag} share a shard.\n"
     "With --tls-cert and --tls-key every connection runs TLS (redis-cli --tls).",
     kServeRedisOptions, runServeRedis},
};

// ---- load

constexpr OptionSpec kLoadEchoOptionsBase[] = {
    {"--port", "P", "server port, 1..65535", {}, true},
    {"--host", "H", "server address or name", "127.0.0.1"},
    {"--connections", "C", "connections", "1"},
    {"--size", "N", "message bytes, >= 8; K/M suffixes are binary", "128"},
    {"--window", "W", "messages in flight per connection", "1"},
    {"--duration", "D", "measured seconds", "5"},
    {"--warmup", "S", "seconds run before measuring", "0.5"},
    {"--threads", "T", "client threads; connections spread round robin", "1"},
    {"--server-pid", "PID",
     "also report the CPU time process PID (the server) used in\nthe measured window, and per "
     "message (Linux /proc)"},
    {"--tls", "",
     "connect with TLS (netbuf's SslHandler in each connection's\npipeline), verifying the "
     "server against the system's CAs"},
    {"--json", "", "one JSON object on stdout instead of the table"},
    {"--progress", "",
     "a progress line on stderr every 0.5 s (elapsed / total\nseconds, msgs/s and MB/s since "
     "the previous line, errors):\nrewritten in place on a terminal, one line each otherwise"},
};
constexpr auto kLoadEchoOptions = joinOptions(kLoadEchoOptionsBase, kTlsClientOptions);

constexpr OptionSpec kLoadRpcOptions[] = {
    {"--port", "P", "server port, 1..65535", {}, true},
    {"--host", "H", "server address", "127.0.0.1"},
    {"--connections", "C", "connections", "1"},
    {"--window", "W", "calls in flight per connection", "16"},
    {"--seconds", "S", "measured seconds", "5"},
    {"--warmup", "S", "seconds run before measuring", "0.5"},
    {"--method", "M", "echo, add or put-get", "echo"},
    {"--payload", "N", "bin bytes for echo and put", "16"},
    {"--threads", "T", "client event loops", "1"},
    {"--style", "S", "callback (completion handlers) or coroutine (use_awaitable)", "callback"},
    {"--json", "", "one JSON object on stdout instead of the table"},
};

constexpr Subcommand kLoad[] = {
    {"echo", "drive an echo server and report throughput and latency",
     "Each connection keeps W messages of N bytes in flight, sending one more for every one\n"
     "echoed back. Prints messages/s, MB/s (echoed payload, 1 MB = 1e6 bytes) and\n"
     "p50/p99/p999/max latency (send to last byte back). Exits 1 when any error or mismatch\n"
     "occurred or no message completed. With --tls each connection completes its TLS\n"
     "handshake before the clock starts; a failed handshake counts as an error.",
     kLoadEchoOptions, runLoadEcho},
    {"rpc", "drive a 'netbuf serve rpc' server and report calls/s and latency",
     "Each connection keeps W calls in flight, issuing one more for every one completed:\n"
     "from each call's callback (--style callback), or from W coroutines per connection that\n"
     "each await one call after another (--style coroutine). Prints calls/s and\n"
     "p50/p99/p999/max latency (call to completion). Exits 1 when any call failed or none\n"
     "completed.",
     kLoadRpcOptions, runLoadRpc},
};

// ---- msgpack, json

constexpr OptionSpec kMsgpackEncodeOptions[] = {
    {"--canonical", "", "map entries sorted by their encoded keys"},
};

constexpr OptionSpec kMsgpackDecodeOptions[] = {
    {"--pretty", "", "indented JSON (one document per value still)"},
    {"--lenient-utf8", "",
     "accept str values that are not valid UTF-8 (JSON still cannot hold\n"
     "them: such a value is an error when written)"},
};

constexpr std::string_view kMappingText =
    "JSON <-> MessagePack: null, booleans, strings, arrays and maps map to their counterparts;\n"
    "integers that fit int64/uint64 stay integers, other numbers are float64. MessagePack's\n"
    "other types are tagged objects with one member:\n"
    "  float32    {\"$float32\": <number>}      (the float's shortest text)\n"
    "  bin        {\"$bin\": \"<base64>\"}\n"
    "  ext        {\"$ext\": [type, \"<base64>\"]}\n"
    "  timestamp  {\"$timestamp\": [seconds, nanoseconds]}\n"
    "so 'netbuf msgpack decode | netbuf msgpack encode' gives back the input byte for byte\n"
    "for values in their shortest encoding (what netbuf and msgpack-c write). No JSON form:\n"
    "maps with keys that are not strings, NaN and infinities (an error naming the offset).";

constexpr Subcommand kMsgpack[] = {
    {"encode", "JSON on stdin -> MessagePack on stdout", kMappingText, kMsgpackEncodeOptions,
     runMsgpackEncode},
    {"decode", "MessagePack on stdin (values one after another) -> one JSON line each",
     kMappingText, kMsgpackDecodeOptions, runMsgpackDecode},
};

constexpr Subcommand kJson[] = {
    {"validate",
     "exit 0 if stdin is one valid JSON document, else 1 with the error",
     {},
     {},
     runJsonValidate},
    {"canonical", "RFC 8785 (JCS) canonical form of stdin on stdout", {}, {}, runJsonCanonical},
    {"pretty", "indented form of stdin on stdout", {}, {}, runJsonPretty},
};

// ---- http

constexpr OptionSpec kHttpGetOptionsBase[] = {
    {"URL", "", "http://host[:port]/path or https://host[:port]/path", {}, true},
    {"--output", "FILE", "write the body to FILE instead of stdout"},
    {"-o", "FILE", "the same as --output"},
    {"--timeout", "S", "seconds to wait for the response", "30"},
    {"--location", "", "follow redirects (at most 5)"},
};
constexpr auto kHttpGetOptions = joinOptions(kHttpGetOptionsBase, kTlsClientOptions);

constexpr OptionSpec kHttpPostOptionsBase[] = {
    {"URL", "", "http://host[:port]/path or https://host[:port]/path", {}, true},
    {"--data", "DATA", "the body: the text DATA, or @FILE for FILE's bytes", {}, true},
    {"--content-type", "TYPE", "the body's media type", "application/octet-stream"},
    {"--output", "FILE", "write the response body to FILE instead of stdout"},
    {"-o", "FILE", "the same as --output"},
    {"--timeout", "S", "seconds to wait for the response", "30"},
    {"--location", "", "follow redirects (at most 5)"},
};
constexpr auto kHttpPostOptions = joinOptions(kHttpPostOptionsBase, kTlsClientOptions);

constexpr Subcommand kHttp[] = {
    {"get", "GET a URL: the body on stdout, the status line on stderr",
     "Exits 0 on a 2xx response, 1 otherwise (another status, a connection or protocol error).\n"
     "https URLs: the server's certificate must chain to the system's CAs (or --cacert's) and\n"
     "name the URL's host; a handshake that fails is reported with its reason.",
     kHttpGetOptions, runHttpGet},
    {"post", "POST a body to a URL: the response body on stdout, the status line on stderr",
     "Exits 0 on a 2xx response, 1 otherwise. https URLs as for get.", kHttpPostOptions,
     runHttpPost},
};

constexpr Command kTable[] = {
    {"bench", "built-in benchmarks", kBench},
    {"serve", "servers that run until SIGINT/SIGTERM", kServe},
    {"load", "load generators that report throughput and latency", kLoad},
    {"http", "an HTTP/1.1 client (HttpClient)", kHttp},
    {"msgpack", "MessagePack <-> JSON on stdin/stdout", kMsgpack},
    {"json", "check and reformat JSON on stdin", kJson},
};

}  // namespace

std::span<const Command> commandTable() { return kTable; }

}  // namespace netbuf::tools
