#pragma once
// Helpers shared by the threaded transport tests.
#include <chrono>
#include <thread>

namespace netbuf::test {

/// Polls cond every millisecond for up to 10 s; returns its last value. For conditions that other
/// threads (event loops, peers) make true.
template <class Cond>
bool eventually(Cond cond) {
  using namespace std::chrono_literals;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return cond();
}

}  // namespace netbuf::test
