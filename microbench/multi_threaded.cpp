// Linked into every benchmark program: starts (and joins) one thread before main, so that every
// benchmark runs in a multi-threaded process, as a server is.
//
// Why it matters: while a process has never started a thread, glibc reports it single-threaded
// (__libc_single_threaded), and two common baselines take shortcuts they cannot take in a server:
// libstdc++'s shared_ptr counts with plain adds instead of locked ones, and glibc's malloc skips
// its arena locks outside the thread cache. netbuf's own code does not look at the flag (its
// reference counts are always atomic), so without this the baselines alone would be measured in a
// state no server is in.

#include <cstdio>
#include <cstdlib>
#include <thread>
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define NETBUF_HAVE_SINGLE_THREADED_FLAG 1
#endif

namespace {

// NETBUF_BENCH_SINGLE_THREADED=1 skips it, so that the same binary (same code placement) can show
// what the single-threaded shortcuts are worth.
const bool kProcessIsMultiThreaded = [] {
  const char* single = std::getenv("NETBUF_BENCH_SINGLE_THREADED");
  if (single != nullptr && single[0] == '1') return false;
  std::thread([] {}).join();
#ifdef NETBUF_HAVE_SINGLE_THREADED_FLAG
  // The flag is what the baselines read; say so if a future libc keeps it set after a join.
  if (__libc_single_threaded)
    std::fputs("warning: the process still reports itself single-threaded\n", stderr);
#endif
  return true;
}();

}  // namespace
