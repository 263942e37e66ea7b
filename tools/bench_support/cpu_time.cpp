// CPU time from /proc (see cpu_time.hpp).

#include "cpu_time.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include <unistd.h>

namespace netbuf::tools {

namespace {

/// utime + stime of a /proc/.../stat file, in seconds; negative when unreadable.
double cpuSecondsFromStat(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return -1;
  char buf[1024];
  const std::size_t got = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[got] = '\0';
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are counted from
  // the last ')'. utime and stime are fields 14 and 15 (proc(5)), the 12th and 13th after it.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return -1;
  unsigned long long utime = 0, stime = 0;
  if (std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                  &stime) != 2)
    return -1;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (ticks <= 0) return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(ticks);
}

}  // namespace

double processCpuSeconds(int pid) {
  if (pid <= 0) return -1;
  return cpuSecondsFromStat("/proc/" + std::to_string(pid) + "/stat");
}

double threadCpuSeconds(int tid) {
  if (tid <= 0) return -1;
  return cpuSecondsFromStat("/proc/self/task/" + std::to_string(tid) + "/stat");
}

int currentThreadId() { return static_cast<int>(::gettid()); }

}  // namespace netbuf::tools
