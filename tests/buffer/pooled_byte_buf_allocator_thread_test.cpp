#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
// Cross-thread use of PooledByteBufAllocator; run under ThreadSanitizer by scripts/test.

#include <doctest/doctest.h>

#include "support/leak_check.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

using namespace netbuf;

namespace {

using test::checkNothingLive;

PooledAllocatorOptions pool(std::size_t arenas) { return test::testPool(arenas); }

/// A tiny blocking queue to hand buffers between threads.
struct Handoff {
  std::mutex m;
  std::condition_variable cv;
  std::deque<ByteBuf> q;
  bool done = false;
  void push(ByteBuf b) {
    {
      std::lock_guard l(m);
      q.push_back(std::move(b));
    }
    cv.notify_one();
  }
  bool pop(ByteBuf& out) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return !q.empty() || done; });
    if (q.empty()) return false;
    out = std::move(q.front());
    q.pop_front();
    return true;
  }
  void close() {
    {
      std::lock_guard l(m);
      done = true;
    }
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("producers allocate, consumers release on other threads (2-4 threads)") {
  for (std::size_t arenas : {std::size_t{1}, std::size_t{4}}) {
    for (int producers : {1, 2}) {
      CAPTURE(arenas);
      CAPTURE(producers);
      PooledByteBufAllocator a(pool(arenas));
      Handoff h;
      std::atomic<int> running{producers};
      std::vector<std::thread> threads;
      for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&, p] {
          for (int i = 0; i < 3000; ++i) {
            const std::size_t n = static_cast<std::size_t>((i * 37 + p * 11) % 9000);
            ByteBuf b = a.buffer(n);
            for (std::size_t k = 0; k < n; ++k)
              b.mutableDataUnchecked()[k] = static_cast<std::byte>((i + k) & 0xff);
            b.writerIndex(n);
            h.push(std::move(b));
          }
          if (running.fetch_sub(1) == 1) h.close();
        });
      }
      std::vector<std::thread> consumers;
      std::atomic<long> bad{0};
      for (int c = 0; c < 2; ++c) {
        consumers.emplace_back([&] {
          ByteBuf b;
          while (h.pop(b)) {
            // Content written by the producer is visible and intact.
            const std::size_t n = b.readableBytes();
            if (n > 1 && b.data()[n - 1] != b.data()[n - 1]) bad.fetch_add(1);
            // Some consumers allocate too, so they have caches bound to arenas.
            ByteBuf mine = a.buffer(64);
            mine.writeByte(1);
            b.reset();
          }
        });
      }
      for (auto& t : threads) t.join();
      for (auto& t : consumers) t.join();
      CHECK(bad.load() == 0);
      checkNothingLive(a);
    }
  }
}

TEST_CASE("statistics are exact while the allocating thread lives: remote returns, refills") {
  // One thread allocates; this thread releases everything it made (another arena: onto the
  // allocating arena's return stack), then checks the statistics while the allocating thread is
  // alive but idle. Its next round takes the returned blocks back into its bins (inflow), so
  // every round checks the derived counters across that path.
  PooledAllocatorOptions o = pool(2);
  o.smallCacheSize = 16;
  PooledByteBufAllocator a(o);
  ByteBuf mine = a.buffer(64);  // binds this thread to an arena first
  std::vector<ByteBuf> made;
  std::atomic<int> turn{0};  // even: the allocating thread's turn; odd: this thread's
  constexpr int kRounds = 20;
  std::thread t([&] {
    for (int round = 0; round < kRounds; ++round) {
      while (turn.load(std::memory_order_acquire) != 2 * round) std::this_thread::yield();
      for (int i = 0; i < 150; ++i)
        made.push_back(a.buffer(static_cast<std::size_t>((i * 97 + round * 13) % 5000)));
      turn.store(2 * round + 1, std::memory_order_release);
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    while (turn.load(std::memory_order_acquire) != 2 * round + 1) std::this_thread::yield();
    CAPTURE(round);
    PoolStats s = a.totalStats();
    CHECK(s.liveBuffers == made.size() + 1);
    CHECK(s.allocations == 1 + 150 * static_cast<std::uint64_t>(round + 1));
    made.clear();
    s = a.totalStats();
    CHECK(s.liveBuffers == 1);
    CHECK(s.liveBytes == a.normalizeSize(64));
    turn.store(2 * round + 2, std::memory_order_release);
  }
  t.join();
  mine.reset();
  checkNothingLive(a);
}

TEST_CASE("shared retained slices released concurrently on several threads") {
  PooledByteBufAllocator a(pool(2));
  for (int round = 0; round < 50; ++round) {
    ByteBuf b = a.buffer(1000);
    b.writeZero(1000);
    std::vector<ByteBuf> slices;
    for (int i = 0; i < 4; ++i)
      slices.push_back(b.retainedSlice(static_cast<std::size_t>(i) * 250, 250));
    b.reset();
    std::vector<std::thread> ts;
    for (auto& s : slices) ts.emplace_back([s = std::move(s)]() mutable { s.reset(); });
    for (auto& t : ts) t.join();
  }
  checkNothingLive(a);
}

TEST_CASE("many short-lived threads leave no cached memory behind") {
  PooledByteBufAllocator a(pool(2));
  for (int round = 0; round < 8; ++round) {
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t) {
      ts.emplace_back([&] {
        std::vector<ByteBuf> bufs;
        for (int i = 0; i < 100; ++i) bufs.push_back(a.buffer(static_cast<std::size_t>(i) * 97));
      });
    }
    for (auto& t : ts) t.join();
  }
  const PoolStats s = a.totalStats();
  CHECK(s.cachedBytes == 0);
  checkNothingLive(a);
  a.trim();
  CHECK(a.totalStats().chunks == 0);
}

TEST_CASE("stats and trim may run while other threads allocate") {
  PooledByteBufAllocator a(pool(2));
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t) {
    ts.emplace_back([&] {
      while (!stop.load()) {
        ByteBuf b = a.buffer(512);
        b.writeZero(100);
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    (void)a.stats();
    if (i % 50 == 0) a.trim();
  }
  stop = true;
  for (auto& t : ts) t.join();
  checkNothingLive(a);
}

TEST_CASE("another arena's blocks released in batches: counted at once, pushed by trim and exit") {
  for (const int count : {5, 100}) {  // below and above one batch
    PooledByteBufAllocator a(pool(2));
    ByteBuf mine = a.buffer(64);  // binds this thread to an arena first
    std::vector<ByteBuf> theirs;
    std::thread([&] {
      for (int i = 0; i < count; ++i) theirs.push_back(a.buffer(64));
    }).join();  // the other arena's thread is gone; its blocks live on here
    theirs.clear();
    mine.reset();
    checkNothingLive(a);  // released blocks count as free even while they wait in a batch
    CHECK(a.trim() > 0);  // the batch is pushed and drained, so both chunks are empty
    CHECK(a.totalStats().chunks == 0);

    // A releasing thread's batch reaches the arena when that thread exits.
    std::vector<ByteBuf> more;
    for (int i = 0; i < count; ++i) more.push_back(a.buffer(64));
    std::thread([&] { more.clear(); }).join();
    checkNothingLive(a);
    CHECK(a.trim() > 0);
    CHECK(a.totalStats().chunks == 0);
  }
}
