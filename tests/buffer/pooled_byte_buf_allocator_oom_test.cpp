#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
// PooledByteBufAllocator when memory runs out: every operator new the allocator makes can be made
// to fail, and each failure must leave the pool as it was (no leaked slot, run, block or count).
// This program replaces the global operator new and delete (support/replaced_operator_new.hpp).

#include <doctest/doctest.h>

#include "support/leak_check.hpp"
#include "support/replaced_operator_new.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

using netbuf::test::tFailIn;

using namespace netbuf;

namespace {

using test::checkNothingLive;

PooledAllocatorOptions pool() { return test::testPool(1); }

}  // namespace

TEST_CASE("the injected failure works") {
  // (Calls to the operator itself: a new-expression whose result is unused may be elided.)
  tFailIn = 0;
  CHECK_THROWS_AS(::operator delete(::operator new(sizeof(int))), std::bad_alloc);
  CHECK(tFailIn == -1);
  ::operator delete(::operator new(sizeof(int)));  // disarmed again
}

TEST_CASE("a failed first allocation (any of its operator news) leaves the pool as it was") {
  for (const std::size_t size : {std::size_t{0}, std::size_t{64}, std::size_t{5000},
                                 std::size_t{64} << 10, std::size_t{5} << 20}) {
    int failures = 0;
    for (long failAt = 0; failAt < 64; ++failAt) {
      CAPTURE(size);
      CAPTURE(failAt);
      PooledByteBufAllocator a(pool());
      bool failed = false;
      tFailIn = failAt;
      try {
        ByteBuf b = a.buffer(size, size + 1);
        tFailIn = -1;
        CHECK(b.capacity() == size);
      } catch (const std::bad_alloc&) {
        failed = true;
      }
      tFailIn = -1;
      if (!failed) break;  // failAt is past every allocation the first buffer makes
      ++failures;
      const PoolStats s = a.totalStats();
      CHECK(s.allocations == 0);
      CHECK(s.cacheMisses == 0);
      checkNothingLive(a);
      // The pool still works, and nothing it took before the failure stays taken.
      {
        std::vector<ByteBuf> bufs;
        for (int i = 0; i < 3; ++i) bufs.push_back(a.buffer(size, size + 1));
        CHECK(a.totalStats().liveBuffers == 3);
      }
      checkNothingLive(a);
      a.trim();
      CHECK(a.totalStats().chunks == 0);
    }
    CHECK(failures > 0);  // the scan did reach the allocator's own allocations
  }
}

TEST_CASE("a failure while a miss refills its class in a batch still serves the request") {
  // Each 64-byte allocation after the first 128 needs a new slab of control blocks; fail those
  // in turn while the cache refills, and count every allocation that did succeed.
  for (long failAt = 0; failAt < 8; ++failAt) {
    CAPTURE(failAt);
    PooledByteBufAllocator a(pool());
    std::vector<ByteBuf> bufs;
    bufs.reserve(400);  // push_back must not allocate: only the pool's allocations may fail
    std::uint64_t made = 0;
    tFailIn = failAt;
    for (int i = 0; i < 400; ++i) {
      try {
        bufs.push_back(a.buffer(64));
        ++made;
      } catch (const std::bad_alloc&) {
      }
      if (tFailIn == -1 && i % 50 == 0) tFailIn = failAt;  // re-arm now and then
    }
    tFailIn = -1;
    CHECK(a.totalStats().liveBuffers == bufs.size());
    CHECK(a.totalStats().allocations == made);
    bufs.clear();
    checkNothingLive(a);
    a.trim();
    CHECK(a.totalStats().chunks == 0);
  }
}
