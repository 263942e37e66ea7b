// The doctest main shared by every test program: it runs the tests with LeakCheckListener
// (leak_check.hpp) registered, and fails the program when a test case leaked pooled buffers.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "support/leak_check.hpp"

REGISTER_LISTENER("netbuf-leak-check", 1, netbuf::test::LeakCheckListener);

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  const int rc = context.run();
  if (const int leaking = netbuf::test::leakingTestCases.load(); leaking != 0) {
    std::fprintf(stderr, "netbuf: %d test case(s) leaked pooled buffers\n", leaking);
    return rc != 0 ? rc : 1;
  }
  return rc;
}
