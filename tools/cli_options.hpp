#pragma once
// Option values and option errors shared by the `netbuf` tool's commands (echo_command.cpp,
// rpc_command.cpp, bench_command.cpp). Each parser takes one argument's text, whole: it returns
// false (and leaves `out` unchanged) unless all of it is a valid value in range, so a command
// answers a bad value with badOption() and exit code kExitUsage (commands.hpp).

#include <signal.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf::tools {

/// A decimal count (std::from_chars: digits only, no sign or space, no overflow).
bool parseSize(std::string_view s, std::size_t& out);

/// A byte count with an optional K/Ki/KiB/k or M/Mi/MiB suffix (binary: 16K = 16384); the
/// product must fit a std::size_t.
bool parseBytes(std::string_view s, std::size_t& out);

/// Seconds in [0, 86400] (std::stod syntax, fractions allowed; NaN rejected).
bool parseSeconds(std::string_view s, double& out);

/// A TCP port in 0..65535 (0 is accepted: callers that need a real port check it).
bool parsePort(std::string_view s, std::uint16_t& out);

/// The server options `serve echo` and `serve rpc` share, at args[k]: --host ADDR, --port P,
/// --threads T (1..1024). Returns false when args[k] is none of them or has no value after it;
/// else consumes the value (k moves to it), stores it and sets ok to whether it was valid.
bool parseServeOption(const std::vector<std::string_view>& args, std::size_t& k, std::string& host,
                      std::uint16_t& port, std::size_t& threads, bool& ok);

/// The load options `load echo` and `load rpc` share, at args[k], into opt's fields of the same
/// names: --host H, --port P (1..65535; sets havePort), --connections C, --window W, --warmup S,
/// --threads T (the loads' validate() checks the ranges). Returns and consumes like
/// parseServeOption.
template <class LoadOptions>
bool parseLoadOption(const std::vector<std::string_view>& args, std::size_t& k, LoadOptions& opt,
                     bool& havePort, bool& ok) {
  if (k + 1 >= args.size()) return false;
  const std::string_view a = args[k];
  if (a == "--host") {
    opt.host = std::string(args[++k]);
  } else if (a == "--port") {
    ok = parsePort(args[++k], opt.port) && opt.port != 0;
    havePort = true;
  } else if (a == "--connections") {
    ok = parseSize(args[++k], opt.connections);
  } else if (a == "--window") {
    ok = parseSize(args[++k], opt.window);
  } else if (a == "--warmup") {
    ok = parseSeconds(args[++k], opt.warmupSeconds);
  } else if (a == "--threads") {
    ok = parseSize(args[++k], opt.threads);
  } else {
    return false;
  }
  return true;
}

/// Prints "netbuf <command>: unknown, incomplete or invalid option '<option>'" and the usage
/// (via usage(stderr)) on stderr; returns kExitUsage.
int badOption(const char* command, std::string_view option, void (*usage)(std::FILE*));

/// Prints "netbuf <command>: <option> is required" and the usage on stderr; returns kExitUsage.
int missingOption(const char* command, const char* option, void (*usage)(std::FILE*));

/// Prints "netbuf <command>: <why>" on stderr (an options check that failed, e.g. a load's
/// validate()); returns kExitUsage.
int invalidOptions(const char* command, std::string_view why);

// ---- servers that run until SIGINT/SIGTERM (serve echo, serve rpc)

/// Blocks SIGINT and SIGTERM in the calling thread and returns the set: call it before starting
/// the server's threads (they inherit the mask), so that only waitForStopSignal() takes them.
sigset_t blockStopSignals();
/// Prints "listening on HOST:PORT" (an IPv6 host in brackets) on stdout and flushes: scripts wait
/// for this line.
void printListening(const std::string& host, std::uint16_t port);
/// Waits for SIGINT or SIGTERM (blocked with blockStopSignals) and returns its name.
const char* waitForStopSignal(const sigset_t& signals);

}  // namespace netbuf::tools
