// Replaces the global operator new and delete with malloc and free plus two per-thread hooks: a
// count of the allocations (tests of "no allocation per operation after warm-up") and an injected
// failure (tests of running out of memory). Include it in exactly one file of a test program (the
// replacements are definitions). Such programs are named *_alloc_test.cpp or *_oom_test.cpp:
// ThreadSanitizer's runtime defines operator new itself, so tests/CMakeLists.txt leaves them out
// of TSan builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
#include <new>

namespace netbuf::test {

/// operator new calls made by this thread so far (array and nothrow forms included: they call
/// these). Trivially initialised, so it is safe to touch from any thread at any time.
inline thread_local std::uint64_t tAllocations = 0;

/// Allocations on this thread until one throws std::bad_alloc; -1: none does.
inline thread_local long tFailIn = -1;

inline void* replacedAllocate(std::size_t n, std::size_t align) {
  ++tAllocations;
  if (tFailIn >= 0 && tFailIn-- == 0) throw std::bad_alloc();
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n == 0 ? 1 : n);
  } else if (posix_memalign(&p, align, n == 0 ? align : n) != 0) {
    p = nullptr;
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

/// Turns the default allocator's leak detection off (whatever NETBUF_LEAK_DETECTION says), for
/// allocation counts: the detector records each buffer it samples with an allocation of its own,
/// by design, as Netty's does.
inline void disableLeakDetection() {
  PooledByteBufAllocator::setDefaultLeakDetectionLevel(LeakDetectionLevel::Disabled);
  if (auto* pool = dynamic_cast<PooledByteBufAllocator*>(&ByteBufAllocator::defaultAllocator())) {
    pool->setLeakDetectionLevel(LeakDetectionLevel::Disabled);
  }
}

}  // namespace netbuf::test

void* operator new(std::size_t n) { return netbuf::test::replacedAllocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return netbuf::test::replacedAllocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
