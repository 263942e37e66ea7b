// stop_signals.hpp: how the `netbuf` tool's servers wait for SIGINT/SIGTERM.
#include "stop_signals.hpp"
// (first include: proves the header is self-contained)

#include <pthread.h>

#include <cstdio>

namespace netbuf::tools {

sigset_t blockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void printListening(const std::string& host, std::uint16_t port, const char* prefix) {
  const bool v6 = host.find(':') != std::string::npos;
  std::printf("listening on %s%s%s%s:%u\n", prefix, v6 ? "[" : "", host.c_str(), v6 ? "]" : "",
              static_cast<unsigned>(port));
  std::fflush(stdout);
}

const char* waitForStopSignal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  return sig == SIGINT ? "SIGINT" : "SIGTERM";
}

}  // namespace netbuf::tools
