#pragma once
// Waiting on other threads from a test: for a condition that event loops or peers make true, and
// for a function run on a channel's loop.
#include <chrono>
#include <future>
#include <netbuf/transport/channel.hpp>
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

/// Runs fn on the channel's loop and waits for it (pipelines and loop-only state are the loop's).
template <class Fn>
void onLoop(Channel& ch, Fn fn) {
  std::promise<void> done;
  ch.executor().execute([&] {
    fn();
    done.set_value();
  });
  done.get_future().wait();
}

}  // namespace netbuf::test
