#pragma once
// CPU time of a process or of one of this process's threads, read from /proc (Linux): what the echo
// benchmarks report as a server's cost per message, apart from the wall-clock throughput that a
// shared machine blurs.

namespace netbuf::tools {

/// CPU time (user + system, summed over its threads, live and exited) that process `pid` has
/// used, from /proc/PID/stat; negative when it cannot be read (no such process, not Linux).
/// Clock-tick resolution (10 ms on common kernels).
double processCpuSeconds(int pid);

/// CPU time (user + system) that thread `tid` of this process has used, from
/// /proc/self/task/TID/stat; negative when it cannot be read (no such thread, not Linux).
double threadCpuSeconds(int tid);

/// The calling thread's id, as /proc/self/task names it.
int currentThreadId();

}  // namespace netbuf::tools
