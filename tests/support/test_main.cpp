// The doctest main shared by every test program: it runs the tests with LeakCheckListener
// (leak_check.hpp) registered, and fails the program when a test case leaked pooled buffers.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <netbuf/transport/transport.hpp>
#include <string_view>

#include "support/leak_check.hpp"

REGISTER_LISTENER("netbuf-leak-check", 1, netbuf::test::LeakCheckListener);

/// ctest's SKIP_RETURN_CODE for the suite's io_uring runs (tests/CMakeLists.txt).
constexpr int kSkipped = 77;

int main(int argc, char** argv) {
  // The io_uring run of a program (NETBUF_TRANSPORT=io_uring) is skipped, visibly, where the
  // system refuses io_uring, instead of failing every test in it.
  if (const char* t = std::getenv("NETBUF_TRANSPORT");
      t != nullptr && netbuf::parseTransport(t) == netbuf::Transport::IoUring &&
      !netbuf::ioUringSupport().available) {
    std::printf("SKIPPED: io_uring unavailable: %s\n", netbuf::ioUringSupport().reason.c_str());
    return kSkipped;
  }
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  const int rc = context.run();
  if (const int leaking = netbuf::test::leakingTestCases.load(); leaking != 0) {
    std::fprintf(stderr, "netbuf: %d test case(s) leaked pooled buffers\n", leaking);
    return rc != 0 ? rc : 1;
  }
  return rc;
}
