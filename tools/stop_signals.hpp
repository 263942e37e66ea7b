#pragma once
// Servers of the `netbuf` tool that run until SIGINT/SIGTERM (serve echo, serve rpc): the stop
// signals are taken by sigwait() on the main thread, never by a handler on an I/O thread.

#include <signal.h>

#include <cstdint>
#include <string>

namespace netbuf::tools {

/// Blocks SIGINT and SIGTERM in the calling thread and returns the set: call it before starting
/// the server's threads (they inherit the mask), so that only waitForStopSignal() takes them.
sigset_t blockStopSignals();
/// Prints "listening on HOST:PORT" (an IPv6 host in brackets; with a prefix such as "udp:" before
/// the host) on stdout and flushes: scripts wait for this line.
void printListening(const std::string& host, std::uint16_t port, const char* prefix = "");
/// Waits for SIGINT or SIGTERM (blocked with blockStopSignals) and returns its name.
const char* waitForStopSignal(const sigset_t& signals);

}  // namespace netbuf::tools
