#pragma once
// Leak checks on allocator statistics. Every test program's main (test_main.cpp) registers
// LeakCheckListener, which checks the default allocator after each test case; the pool's own tests
// give each test a pool of its own (testPool) and require that nothing of it is live
// (checkNothingLive).

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace netbuf::test {

/// A pool of its own for one test: `arenas` arenas, leak detection off.
inline PooledAllocatorOptions testPool(std::size_t arenas) {
  PooledAllocatorOptions o;
  o.numArenas = arenas;
  o.leakDetection = LeakDetectionLevel::Disabled;
  return o;
}

/// Every statistic of live memory is zero, in total and in each arena.
inline void checkNothingLive(const PooledByteBufAllocator& a) {
  const PoolStats s = a.totalStats();
  CHECK(s.liveBuffers == 0);
  CHECK(s.liveBytes == 0);
  CHECK(s.hugeLiveBytes == 0);
  for (const PoolStats& arena : a.stats().arenas) {
    CHECK(arena.liveBuffers == 0);
    CHECK(arena.liveBytes == 0);
  }
}

/// The number of test cases that LeakCheckListener found leaking, in this program.
inline std::atomic<int> leakingTestCases{0};

/// Checks the default allocator at the end of every test case when it is a pooled one (it is,
/// unless NETBUF_ALLOCATOR=unpooled; ctest clears that variable): a test case that leaves more
/// buffers live than it found is printed with its name and the pool's leak report (the allocation
/// sites it has), and counted in leakingTestCases. doctest listeners cannot fail the test case that
/// just ended, so main fails the program instead.
struct LeakCheckListener : doctest::IReporter {
  explicit LeakCheckListener(const doctest::ContextOptions&) {}

  void test_case_end(const doctest::CurrentTestCaseStats&) override {
    auto* pooled = dynamic_cast<PooledByteBufAllocator*>(&ByteBufAllocator::defaultAllocator());
    if (pooled == nullptr || current_ == nullptr) return;
    const PoolStats s = pooled->totalStats();
    if (s.liveBuffers == live_) return;
    if (s.liveBuffers > live_) {
      ++leakingTestCases;
      std::fprintf(stderr, "netbuf: test case \"%s\" (%s:%d) left %llu pooled buffer(s) live\n%s",
                   current_->m_name, current_->m_file.c_str(), current_->m_line,
                   static_cast<unsigned long long>(s.liveBuffers - live_),
                   pooled->reportLeaks().c_str());
    }
    live_ = s.liveBuffers;
  }
  void test_case_start(const doctest::TestCaseData& tc) override { current_ = &tc; }

  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  const doctest::TestCaseData* current_ = nullptr;
  std::uint64_t live_ = 0;  // buffers live before the test (static objects may hold some)
};

}  // namespace netbuf::test
