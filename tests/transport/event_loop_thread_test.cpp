// EventLoopGroup and EventLoop: tasks run on the loop's thread in submission order, delays are
// honoured, exceptions stay on the loop, and graceful shutdown honours its quiet period and
// timeout and leaves nothing running. Run under ThreadSanitizer by scripts/test ("threaded").
#include <netbuf/transport/event_loop.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

/// Blocks until count() reaches n (or 5 s pass, failing the test).
class Latch {
 public:
  void countDown() {
    std::lock_guard<std::mutex> g(m_);
    ++count_;
    cv_.notify_all();
  }
  bool waitFor(int n) {
    std::unique_lock<std::mutex> g(m_);
    return cv_.wait_for(g, 5s, [&] { return count_ >= n; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int count_ = 0;
};

}  // namespace

TEST_CASE("EventLoopGroup: loops, round robin, and the thread each loop runs on") {
  EventLoopGroup group(3);
  CHECK(group.size() == 3);
  CHECK(&group.next() == &group.loop(0));
  CHECK(&group.next() == &group.loop(1));
  CHECK(&group.next() == &group.loop(2));
  CHECK(&group.next() == &group.loop(0));
  CHECK_THROWS_AS(group.loop(3), std::out_of_range);
  CHECK(group.loop(2).index() == 2);
  CHECK(group.currentLoop() == nullptr);
  CHECK_FALSE(group.loop(0).inEventLoop());

  Latch done;
  std::mutex m;
  std::set<std::thread::id> threads;
  for (std::size_t i = 0; i < group.size(); ++i) {
    EventLoop& loop = group.loop(i);
    loop.execute([&, &loop = loop] {
      CHECK(loop.inEventLoop());
      CHECK(group.currentLoop() == &loop);
      {
        std::lock_guard<std::mutex> g(m);
        threads.insert(std::this_thread::get_id());
      }
      done.countDown();
    });
  }
  REQUIRE(done.waitFor(3));
  CHECK(threads.size() == 3);
  CHECK(threads.count(std::this_thread::get_id()) == 0);
  CHECK(EventLoopGroup().size() >= 1);  // default: hardware threads
}

TEST_CASE("EventLoop: execute runs tasks in submission order, from any thread") {
  EventLoopGroup group(1);
  EventLoop& loop = group.loop(0);
  std::vector<int> order;  // touched only on the loop thread
  Latch done;
  constexpr int kPerThread = 1000;
  std::vector<std::thread> submitters;
  std::vector<std::vector<int>> seen(2);
  for (int t = 0; t < 2; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        loop.execute([&, t, i] {
          seen[static_cast<std::size_t>(t)].push_back(i);
          if (seen[0].size() + seen[1].size() == 2 * kPerThread) done.countDown();
        });
      }
    });
  }
  for (auto& s : submitters) s.join();
  REQUIRE(done.waitFor(1));
  for (const auto& v : seen) {
    REQUIRE(v.size() == kPerThread);
    for (int i = 0; i < kPerThread; ++i) CHECK(v[static_cast<std::size_t>(i)] == i);
  }
  (void)order;
  // The count drops just after each task returns (the last task's latch fires inside it).
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (loop.pendingTasks() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  CHECK(loop.pendingTasks() == 0);
}

TEST_CASE("EventLoop: a task's exception is reported and the loop goes on") {
  EventLoopGroup group(1);
  EventLoop& loop = group.loop(0);
  Latch done;
  loop.execute([] { throw std::runtime_error("boom (expected by the test)"); });
  loop.execute([] { throw 42; });
  loop.execute([&] { done.countDown(); });
  REQUIRE(done.waitFor(1));
  CHECK(loop.tasksFailed() == 2);
}

TEST_CASE("EventLoop: schedule runs after the delay; cancel prevents it") {
  EventLoopGroup group(1);
  EventLoop& loop = group.loop(0);
  Latch done;
  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration ranAfter{};
  std::atomic<bool> ranOnLoop{false};
  ScheduledTask t = loop.schedule(30ms, [&] {
    ranAfter = std::chrono::steady_clock::now() - start;
    ranOnLoop = loop.inEventLoop();
    done.countDown();
  });
  std::atomic<bool> cancelledRan{false};
  ScheduledTask c = loop.schedule(10ms, [&] { cancelledRan = true; });
  CHECK(c.cancel());
  CHECK_FALSE(c.cancel());  // already cancelled
  CHECK(c.isCancelled());
  REQUIRE(done.waitFor(1));
  CHECK(ranAfter >= 30ms);
  CHECK(ranOnLoop.load());
  CHECK(t.isDone());
  CHECK_FALSE(t.cancel());  // already ran
  std::this_thread::sleep_for(30ms);
  CHECK_FALSE(cancelledRan.load());
  ScheduledTask empty;
  CHECK_FALSE(empty.cancel());
  CHECK_FALSE(empty.isDone());
  CHECK_FALSE(empty.isCancelled());

  Latch thrown;
  loop.schedule(1ms, [&] {
    thrown.countDown();
    throw std::runtime_error("scheduled boom (expected by the test)");
  });
  REQUIRE(thrown.waitFor(1));
  loop.execute([&] { done.countDown(); });
  REQUIRE(done.waitFor(2));
  CHECK(loop.tasksFailed() == 1);
}

TEST_CASE("EventLoopGroup: graceful shutdown runs queued tasks, then rejects new ones") {
  EventLoopGroup group(2);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) {
    group.next().execute([&] {
      std::this_thread::sleep_for(100us);
      ++ran;
    });
  }
  CHECK_FALSE(group.loop(0).isTerminated());
  group.shutdownGracefully(20ms, 5s);
  CHECK(group.isShuttingDown());
  CHECK(group.isTerminated());
  CHECK(group.loop(0).isTerminated());
  CHECK(group.loop(1).isTerminated());
  CHECK(ran.load() == 100);  // all submitted before the quiet period ended
  CHECK_THROWS_AS(group.loop(0).execute([] {}), RejectedExecutionError);
  CHECK_THROWS_AS(group.loop(1).schedule(1ms, [] {}), RejectedExecutionError);
  group.shutdownGracefully(0ms, 0ms);  // again: no effect
  CHECK(ran.load() == 100);
}

TEST_CASE("EventLoopGroup: a task submitted during the quiet period runs; the timeout bounds it") {
  SUBCASE("quiet period restarts with each submission") {
    EventLoopGroup group(1);
    std::atomic<int> ran{0};
    std::thread late([&] {
      for (int i = 0; i < 5; ++i) {
        std::this_thread::sleep_for(20ms);
        group.loop(0).execute([&] { ++ran; });
      }
    });
    std::this_thread::sleep_for(5ms);
    group.shutdownGracefully(100ms, 10s);
    late.join();
    CHECK(ran.load() == 5);
  }
  SUBCASE("a busy loop is stopped at the timeout; later tasks are rejected") {
    EventLoopGroup group(1);
    std::atomic<int> rejected{0};
    std::thread feeder([&] {  // feeds until rejected (bounded at 10 s)
      const auto giveUp = std::chrono::steady_clock::now() + 10s;
      while (std::chrono::steady_clock::now() < giveUp) {
        try {
          group.loop(0).execute([] {});
        } catch (const RejectedExecutionError&) {
          ++rejected;
          return;
        }
        std::this_thread::sleep_for(1ms);
      }
    });
    const auto start = std::chrono::steady_clock::now();
    group.shutdownGracefully(1s, 100ms);  // the feeder never lets it be quiet for 1 s
    const auto took = std::chrono::steady_clock::now() - start;
    feeder.join();
    CHECK(took >= 100ms);
    CHECK(took < 900ms);
    CHECK(group.isTerminated());
    CHECK(rejected.load() == 1);
  }
}

TEST_CASE("EventLoopGroup: nothing runs after shutdown returns; a loop cannot shut its group") {
  std::atomic<bool> afterShutdown{false};
  std::atomic<bool> shutdownReturned{false};
  {
    EventLoopGroup group(1);
    EventLoop& loop = group.loop(0);
    Latch sawError;
    loop.execute([&] {
      try {
        group.shutdownGracefully(0ms, 0ms);
      } catch (const IllegalStateError&) {
        sawError.countDown();
      }
    });
    REQUIRE(sawError.waitFor(1));
    // A long scheduled task that must never start, and queued tasks cut by a zero timeout.
    loop.schedule(200ms, [&] { afterShutdown = shutdownReturned.load(); });
    for (int i = 0; i < 1000; ++i) {
      loop.execute([&] {
        if (shutdownReturned.load()) afterShutdown = true;
      });
    }
    group.shutdownGracefully(0ms, 0ms);
    shutdownReturned = true;
    std::this_thread::sleep_for(250ms);
  }  // the destructor destroys what never ran
  CHECK_FALSE(afterShutdown.load());
}

TEST_CASE(
    "EventLoopGroup: a dropped task is destroyed with the group, and may call the loop then") {
  // A task cut by the shutdown's timeout never runs; it is destroyed when the group is, while the
  // loop is still whole, so its destructor can still submit (and be refused). Its loop's
  // io_context is being destroyed then: context() says so with IllegalStateError.
  struct Guard {
    EventLoop* loop;
    std::atomic<int>* destroyedUnrun;
    std::atomic<int>* refused;
    std::atomic<int>* contextGone;
    bool ran = false;
    Guard(EventLoop* l, std::atomic<int>* d, std::atomic<int>* r, std::atomic<int>* c)
        : loop(l), destroyedUnrun(d), refused(r), contextGone(c) {}
    Guard(Guard&& o) noexcept
        : loop(std::exchange(o.loop, nullptr)),
          destroyedUnrun(o.destroyedUnrun),
          refused(o.refused),
          contextGone(o.contextGone),
          ran(o.ran) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (loop == nullptr || ran) return;
      ++*destroyedUnrun;
      try {
        loop->execute([] {});
      } catch (const RejectedExecutionError&) {
        ++*refused;
      }
      try {
        (void)loop->context();
      } catch (const IllegalStateError&) {
        ++*contextGone;
      }
    }
    void operator()() { ran = true; }
  };
  std::atomic<int> destroyedUnrun{0};
  std::atomic<int> refused{0};
  std::atomic<int> contextGone{0};
  auto group = std::make_unique<EventLoopGroup>(1);
  EventLoop& loop = group->loop(0);
  CHECK_NOTHROW((void)loop.context());
  Latch busy;
  loop.execute([&] {
    busy.countDown();
    std::this_thread::sleep_for(100ms);
  });
  REQUIRE(busy.waitFor(1));
  loop.execute(Guard(&loop, &destroyedUnrun, &refused, &contextGone));
  group->shutdownGracefully(0ms, 0ms);
  CHECK(loop.isTerminated());
  CHECK_NOTHROW((void)loop.context());  // shut down, but the io_context lives until destruction
  CHECK(destroyedUnrun.load() == 0);    // still queued in the stopped loop
  group.reset();
  CHECK(destroyedUnrun.load() == 1);
  CHECK(refused.load() == 1);
  CHECK(contextGone.load() == 1);
}

TEST_CASE("EventLoopGroup: the destructor shuts down by itself") {
  std::atomic<int> ran{0};
  {
    EventLoopGroup group(2);
    Latch done;
    group.loop(1).execute([&] {
      ++ran;
      done.countDown();
    });
    REQUIRE(done.waitFor(1));
  }
  CHECK(ran.load() == 1);
}
