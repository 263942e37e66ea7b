// Transport (transport.hpp) where the system refuses io_uring: a child process installs a seccomp
// filter that fails io_uring_setup with EPERM (as container runtimes' default profiles do), then
// the probe says why, Transport::IoUring fails with TransportUnavailableError, and Transport::Auto
// falls back to Asio with one line on stderr. (A forked child: the filter cannot be undone.) The
// program runs with NETBUF_TRANSPORT unset (ctest clears it): with io_uring named there, test_main
// would probe before the fork, and the child would inherit that cached answer.
#include <netbuf/transport/transport.hpp>

#include <doctest/doctest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <netbuf/transport/event_loop.hpp>
#include <string>

using namespace netbuf;

namespace {

/// Fails io_uring_setup with EPERM for this process from now on.
bool refuseIoUring() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/// In the child: what the parent checks, as an exit status (0: all as expected).
int childChecks() {
  if (!refuseIoUring()) return 10;
  const IoUringSupport& s = ioUringSupport();
  if (s.available) return 11;
  if (s.reason.find("io_uring_setup") == std::string::npos) return 12;
  if (s.reason.find("Operation not permitted") == std::string::npos) return 13;
  try {
    EventLoopGroup group(1, Transport::IoUring);
    return 14;
  } catch (const TransportUnavailableError& e) {
    if (std::string(e.what()).find("io_uring_setup") == std::string::npos) return 15;
  }
  for (int i = 0; i < 2; ++i) {  // two groups, one line
    EventLoopGroup group(1, Transport::Auto);
    if (group.transport() != Transport::Asio) return 16;
  }
  return 0;
}

}  // namespace

TEST_CASE("Transport: io_uring refused by a seccomp filter: a clear error, and Auto falls back") {
  int err[2];
  REQUIRE(::pipe(err) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(err[1], 2);
    ::close(err[0]);
    ::close(err[1]);
    std::_Exit(childChecks());
  }
  ::close(err[1]);
  std::string stderrText;
  char buf[512];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) stderrText.append(buf, n);
  ::close(err[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("child stderr: " << stderrText);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // One line for the fallback, naming the reason.
  const std::string line = "netbuf: io_uring unavailable (io_uring_setup";
  const auto first = stderrText.find(line);
  CHECK(first != std::string::npos);
  CHECK(stderrText.find(line, first + 1) == std::string::npos);
  CHECK(stderrText.find("using the Asio transport") != std::string::npos);
}
