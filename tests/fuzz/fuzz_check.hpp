#pragma once
// How a fuzz target fails: loudly, with abort(), so that libFuzzer keeps the input.

#include <cstdio>
#include <cstdlib>

namespace netbuf::fuzz {

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}

inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

}  // namespace netbuf::fuzz
