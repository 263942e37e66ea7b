// cli_options.hpp: the option parsers and option errors of the `netbuf` tool.
#include "cli_options.hpp"
// (first include: proves the header is self-contained)

#include <pthread.h>

#include <charconv>
#include <exception>
#include <string>
#include <system_error>

#include "commands.hpp"

namespace netbuf::tools {

bool parseSize(std::string_view s, std::size_t& out) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  out = v;
  return true;
}

bool parseBytes(std::string_view s, std::size_t& out) {
  std::size_t mult = 1;
  for (std::string_view suffix : {"KiB", "Ki", "K", "k"}) {
    if (s.size() > suffix.size() && s.ends_with(suffix)) {
      mult = 1024;
      s.remove_suffix(suffix.size());
      break;
    }
  }
  if (mult == 1) {
    for (std::string_view suffix : {"MiB", "Mi", "M"}) {
      if (s.size() > suffix.size() && s.ends_with(suffix)) {
        mult = std::size_t{1} << 20;
        s.remove_suffix(suffix.size());
        break;
      }
    }
  }
  std::size_t v = 0;
  if (!parseSize(s, v) || v > (SIZE_MAX / mult)) return false;
  out = v * mult;
  return true;
}

bool parseSeconds(std::string_view s, double& out) {
  const std::string str(s);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(str, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (used != str.size() || !(v >= 0) || v > 86400) return false;
  out = v;
  return true;
}

bool parsePort(std::string_view s, std::uint16_t& out) {
  std::size_t v = 0;
  if (!parseSize(s, v) || v > 65535) return false;
  out = static_cast<std::uint16_t>(v);
  return true;
}

bool parseServeOption(const std::vector<std::string_view>& args, std::size_t& k, std::string& host,
                      std::uint16_t& port, std::size_t& threads, bool& ok) {
  if (k + 1 >= args.size()) return false;
  const std::string_view a = args[k];
  if (a == "--host") {
    host = std::string(args[++k]);
  } else if (a == "--port") {
    ok = parsePort(args[++k], port);
  } else if (a == "--threads") {
    ok = parseSize(args[++k], threads) && threads >= 1 && threads <= 1024;
  } else {
    return false;
  }
  return true;
}

int badOption(const char* command, std::string_view option, void (*usage)(std::FILE*)) {
  std::fprintf(stderr, "netbuf %s: unknown, incomplete or invalid option '%.*s'\n", command,
               static_cast<int>(option.size()), option.data());
  usage(stderr);
  return kExitUsage;
}

int missingOption(const char* command, const char* option, void (*usage)(std::FILE*)) {
  std::fprintf(stderr, "netbuf %s: %s is required\n", command, option);
  usage(stderr);
  return kExitUsage;
}

int invalidOptions(const char* command, std::string_view why) {
  std::fprintf(stderr, "netbuf %s: %.*s\n", command, static_cast<int>(why.size()), why.data());
  return kExitUsage;
}

sigset_t blockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void printListening(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  std::printf("listening on %s%s%s:%u\n", v6 ? "[" : "", host.c_str(), v6 ? "]" : "",
              static_cast<unsigned>(port));
  std::fflush(stdout);
}

const char* waitForStopSignal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  return sig == SIGINT ? "SIGINT" : "SIGTERM";
}

}  // namespace netbuf::tools
