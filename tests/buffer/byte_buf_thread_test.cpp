// Handles on one storage used and destroyed on different threads: the count is atomic, the storage
// is freed exactly once, and the freeing thread sees the bytes written before the handles were
// handed over. Run under ThreadSanitizer by scripts/test (label "threaded").
#include <netbuf/buffer/byte_buf.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

using netbuf::ByteBuf;
using netbuf::Unpooled;

namespace {

struct CountingDeleter {
  std::atomic<int>* calls;
  void operator()(void* p, std::size_t) const {
    calls->fetch_add(1, std::memory_order_relaxed);
    std::free(p);
  }
};

ByteBuf wrappedCounting(std::size_t size, std::atomic<int>& calls) {
  void* mem = std::malloc(size);
  REQUIRE(mem != nullptr);
  return Unpooled::wrappedBuffer(mem, size, CountingDeleter{&calls});
}

}  // namespace

TEST_CASE("retained slices released concurrently free the storage exactly once") {
  constexpr int kThreads = 4;
  constexpr int kSlicesPerThread = 2000;
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> frees{0};
    std::vector<std::vector<ByteBuf>> perThread(kThreads);
    {
      ByteBuf root = wrappedCounting(kThreads * 8, frees);
      root.writerIndex(0);
      for (int t = 0; t < kThreads; ++t) root.writeLong(0x0102030405060700 + t);
      for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kSlicesPerThread; ++i) {
          perThread[t].push_back(root.retainedSlice(static_cast<std::size_t>(t) * 8, 8));
        }
      }
      CHECK(root.refCnt() == 1 + kThreads * kSlicesPerThread);
    }  // the root handle goes first; the slices keep the storage alive
    CHECK(frees.load() == 0);

    std::atomic<long> sum{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        long local = 0;
        for (ByteBuf& s : perThread[t]) {
          local += s.getLong(0) == 0x0102030405060700 + t ? 1 : 0;
          s.reset();  // concurrent releases on the shared count
        }
        sum.fetch_add(local);
      });
    }
    for (auto& th : threads) th.join();
    CHECK(sum.load() == kThreads * kSlicesPerThread);
    CHECK(frees.load() == 1);
  }
}

TEST_CASE("a buffer moved to another thread is written there and read back after join") {
  ByteBuf buf = Unpooled::buffer(16);
  ByteBuf shared = buf.retainedDuplicate();
  std::thread writer([b = std::move(shared)]() mutable {
    for (int i = 0; i < 1000; ++i) b.setInt(0, i);
  });
  writer.join();
  CHECK(buf.getInt(0) == 999);
  CHECK(buf.refCnt() == 1);
}

TEST_CASE("batched slices released on other threads while the credit is held free once") {
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> frees{0};
    std::vector<ByteBuf> slices;
    ByteBuf buf = wrappedCounting(4096, frees);
    buf.setIndex(0, 4096);
    for (int i = 0; i < 1000; ++i) slices.push_back(buf.readRetainedSliceBatched(4));
    std::thread releaser([s = std::move(slices)]() mutable { s.clear(); });
    buf.reset();  // returns the unspent credit while the other thread releases slices
    releaser.join();
    CHECK(frees.load() == 1);
  }
}
