// The doctest main shared by every test program. Besides running the tests, it asserts after each
// test case that the default allocator has nothing live when it is a pooled one (it is, unless
// NETBUF_ALLOCATOR=unpooled; ctest clears that variable): a test that leaks a buffer fails the
// program, and the leak report names the allocation sites it has.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <atomic>
#include <cstdio>

namespace {

std::atomic<int> gLeakingTests{0};

/// Checks the default allocator at the end of every test case. doctest listeners cannot fail the
/// test that just ended, so a leak is printed with the test's name and fails the whole program.
struct LeakCheckListener : doctest::IReporter {
  explicit LeakCheckListener(const doctest::ContextOptions&) {}

  void test_case_end(const doctest::CurrentTestCaseStats&) override {
    auto* pooled = dynamic_cast<netbuf::PooledByteBufAllocator*>(
        &netbuf::ByteBufAllocator::defaultAllocator());
    if (pooled == nullptr || current_ == nullptr) return;
    const netbuf::PoolStats s = pooled->totalStats();
    if (s.liveBuffers == live_) return;
    if (s.liveBuffers > live_) {
      ++gLeakingTests;
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

}  // namespace

REGISTER_LISTENER("netbuf-leak-check", 1, LeakCheckListener);

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  const int rc = context.run();
  if (gLeakingTests.load() != 0) {
    std::fprintf(stderr, "netbuf: %d test case(s) leaked pooled buffers\n", gLeakingTests.load());
    return rc != 0 ? rc : 1;
  }
  return rc;
}
