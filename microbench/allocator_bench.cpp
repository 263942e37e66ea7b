// Allocator benchmarks: each case beside the baselines a user would otherwise write. Figures and
// the command are recorded in docs/benchmarks.md.
//
// The rows measure what a user gets without tuning: `Pooled` is a PooledByteBufAllocator as
// constructed (leak detection at the process default, `simple` unless NETBUF_LEAK_DETECTION says
// otherwise), `Default` is Unpooled::buffer, i.e. ByteBufAllocator::defaultAllocator() (the
// process-wide pool unless NETBUF_ALLOCATOR=unpooled), `Unpooled` is UnpooledByteBufAllocator.
// `PooledLeakDetectionDisabled` is the one tuned configuration, labelled as such.
//
//  - BM_AllocRelease_*: allocate + release one buffer of n bytes, LIFO (the thread-cache fast
//  path).
//  - BM_RandomSlot_*/size/slots: Netty's ByteBufAllocatorBenchmark shape: 8192 live slots, each op
//    replaces a random slot (release the old buffer, allocate a new one); also with 512 slots,
//    whose handles and control blocks stay in the core's caches. BM_RandomSlot_Floor is the same
//    loop over FloorAllocator below: what ByteBuf's handle, the virtual call and the release
//    protocol cost with no allocator work behind them. BM_RandomSlot_MallocHandle is the malloc
//    row with a slot as large as a ByteBuf (a pointer, a capacity and indices), not a bare pointer.
//  - BM_ProducerConsumer_*: one thread allocates, another releases (the cross-thread path).
//  - BM_SteadyStateMemory: memory the pool holds for a mixed-size live set (counters).

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using netbuf::ByteBuf;

// Every benchmark runs in a multi-threaded process (multi_threaded.cpp, linked into each program):
// the malloc baselines take the locks they take in a server.

/// A pool as a user constructs it (never destroyed).
netbuf::PooledByteBufAllocator& pooled() {
  static auto* a = new netbuf::PooledByteBufAllocator();
  return *a;
}

/// The same pool with leak detection off: the tuned configuration.
netbuf::PooledByteBufAllocator& pooledLeakDetectionDisabled() {
  static auto* a = [] {
    netbuf::PooledAllocatorOptions o;
    o.leakDetection = netbuf::LeakDetectionLevel::Disabled;
    return new netbuf::PooledByteBufAllocator(o);
  }();
  return *a;
}

netbuf::ByteBufAllocator& unpooled() { return netbuf::UnpooledByteBufAllocator::instance(); }

/// Unpooled::buffer as an allocator-shaped object, for the templates below.
struct DefaultBuffers {
  ByteBuf buffer(std::size_t n, std::size_t max) { return netbuf::Unpooled::buffer(n, max); }
};

const std::vector<std::int64_t> kSizes{64, 256, 4096, 65536, 1 << 20};

// ------------------------------------------------------------------ allocate + release (LIFO)

template <class Alloc>
void allocRelease(benchmark::State& state, Alloc& a) {
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    ByteBuf b = a.buffer(n, n);
    benchmark::DoNotOptimize(b.data());
  }
}
void BM_AllocRelease_Pooled(benchmark::State& state) { allocRelease(state, pooled()); }
void BM_AllocRelease_PooledLeakDetectionDisabled(benchmark::State& state) {
  allocRelease(state, pooledLeakDetectionDisabled());
}
void BM_AllocRelease_Default(benchmark::State& state) {
  DefaultBuffers d;
  allocRelease(state, d);
}
void BM_AllocRelease_Unpooled(benchmark::State& state) { allocRelease(state, unpooled()); }
void BM_AllocRelease_Malloc(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(n);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
void BM_AllocRelease_Vector(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    std::vector<std::byte> v(n);
    benchmark::DoNotOptimize(v.data());
  }
}

// ------------------------------------------------------------------ Netty's random-slot workload

/// Random slot indices below `slots`, precomputed so the generator costs nothing in the timed loop.
std::vector<std::uint16_t> slotIndices(std::size_t slots) {
  std::vector<std::uint16_t> out(1 << 16);
  std::mt19937 rng(42);
  for (auto& x : out) x = static_cast<std::uint16_t>(rng() % slots);
  return out;
}

/// Not a usable allocator: the least any allocator can do behind ByteBuf's interface. One thread,
/// requests up to kMax bytes, a LIFO stack of preallocated control blocks (64 bytes, as the
/// pool's), no size classes, statistics or checks; every block points at the same memory.
class FloorAllocator final : public netbuf::ByteBufAllocator {
 public:
  static constexpr std::size_t kMax = 256;
  explicit FloorAllocator(std::size_t blocks) : blocks_(blocks) {
    free_.reserve(blocks);  // push_back in destroy never allocates
    for (Block& b : blocks_) {
      b.kind = netbuf::StorageKind::Pooled;
      b.data = memory_;
      b.size = kMax;
      b.allocator = this;
      b.destroy = &destroy;
      free_.push_back(&b);
    }
  }
  bool isPooled() const noexcept override { return true; }
  netbuf::detail::Storage* allocateStorage(std::size_t n) override {
    if (n > kMax || free_.empty()) throw std::bad_alloc();
    Block* b = free_.back();
    free_.pop_back();
    b->refs.store(1, std::memory_order_relaxed);
    return b;
  }

 private:
  struct alignas(64) Block : netbuf::detail::Storage {};
  static void destroy(netbuf::detail::Storage* s) noexcept {
    static_cast<FloorAllocator*>(s->allocator)->free_.push_back(static_cast<Block*>(s));
  }
  std::vector<Block> blocks_;
  std::vector<Block*> free_;
  std::byte memory_[kMax]{};
};

template <class Alloc>
void randomSlotByteBuf(benchmark::State& state, Alloc& a) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<ByteBuf> slots(static_cast<std::size_t>(state.range(1)));
  for (auto& s : slots) s = a.buffer(n, std::max<std::size_t>(n, 1));
  const auto idx = slotIndices(slots.size());
  std::size_t k = 0;
  for (auto _ : state) {
    ByteBuf& slot = slots[idx[k++ & 0xffff]];
    slot = a.buffer(n, std::max<std::size_t>(n, 1));
    benchmark::DoNotOptimize(slot.data());
  }
}
void BM_RandomSlot_Pooled(benchmark::State& state) { randomSlotByteBuf(state, pooled()); }
void BM_RandomSlot_PooledLeakDetectionDisabled(benchmark::State& state) {
  randomSlotByteBuf(state, pooledLeakDetectionDisabled());
}
void BM_RandomSlot_Default(benchmark::State& state) {
  DefaultBuffers d;
  randomSlotByteBuf(state, d);
}
void BM_RandomSlot_Unpooled(benchmark::State& state) { randomSlotByteBuf(state, unpooled()); }
void BM_RandomSlot_Floor(benchmark::State& state) {
  // Behind a base-class reference, as a pipeline holds its allocator: one virtual call per
  // allocation. The pooled rows make none on a cache hit (ByteBufAllocator::buffer's inline path),
  // one on anything else.
  static auto* floor = new FloorAllocator(8192 + 1);
  netbuf::ByteBufAllocator& a = *floor;
  randomSlotByteBuf(state, a);
}
/// What a hand-rolled buffer handle over malloc keeps in each slot: the pointer and, beside it, the
/// capacity and indices. The same 48 bytes as a ByteBuf, so that a row of these and the pooled one
/// move the same slot memory.
struct MallocHandle {
  void* data = nullptr;
  std::size_t capacity = 0;
  std::size_t maxCapacity = 0;
  std::size_t readerIndex = 0;
  std::size_t writerIndex = 0;
  std::size_t flags = 0;
};
static_assert(sizeof(MallocHandle) == sizeof(ByteBuf), "the slot footprint of the pooled rows");

// The two kinds of malloc slot: a bare pointer, or a handle around one.
template <class Slot>
Slot mallocSlot(std::size_t n) {
  if constexpr (std::is_same_v<Slot, void*>) {
    return std::malloc(n);
  } else {
    return MallocHandle{std::malloc(n), n, std::max<std::size_t>(n, 1), 0, 0, 0};
  }
}
// The slot's pointer as an lvalue: DoNotOptimize then takes the slot's own memory, not a copy.
void*& slotData(void*& p) { return p; }
void*& slotData(MallocHandle& h) { return h.data; }

/// The random-slot loop over malloc/free, each slot a Slot (above).
template <class Slot>
void randomSlotMalloc(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<Slot> slots(static_cast<std::size_t>(state.range(1)));
  for (auto& s : slots) s = mallocSlot<Slot>(n);
  const auto idx = slotIndices(slots.size());
  std::size_t k = 0;
  for (auto _ : state) {
    Slot& slot = slots[idx[k++ & 0xffff]];
    std::free(slotData(slot));
    slot = mallocSlot<Slot>(n);
    benchmark::DoNotOptimize(slotData(slot));
  }
  for (auto& s : slots) std::free(slotData(s));
}
void BM_RandomSlot_Malloc(benchmark::State& state) { randomSlotMalloc<void*>(state); }
void BM_RandomSlot_MallocHandle(benchmark::State& state) { randomSlotMalloc<MallocHandle>(state); }

// ------------------------------------------------------------------ producer / consumer

/// Single-producer single-consumer ring of items (ByteBuf or void*).
template <class T>
struct Ring {
  static constexpr std::size_t kCap = 1024;
  std::unique_ptr<T[]> items{new T[kCap]};
  alignas(64) std::atomic<std::size_t> head{0};  // consumer position
  alignas(64) std::atomic<std::size_t> tail{0};  // producer position
  alignas(64) std::atomic<bool> done{false};

  void push(T&& v) {
    const std::size_t t = tail.load(std::memory_order_relaxed);
    while (t - head.load(std::memory_order_acquire) == kCap) std::this_thread::yield();
    items[t % kCap] = std::move(v);
    tail.store(t + 1, std::memory_order_release);
  }
  template <class F>
  void consume(F&& f) {
    std::size_t h = head.load(std::memory_order_relaxed);
    for (;;) {
      const std::size_t t = tail.load(std::memory_order_acquire);
      if (h == t) {
        if (done.load(std::memory_order_acquire) && h == tail.load(std::memory_order_acquire))
          return;
        std::this_thread::yield();
        continue;
      }
      for (; h != t; ++h) f(items[h % kCap]);
      head.store(h, std::memory_order_release);
    }
  }
};

template <class Alloc>
void producerConsumerByteBuf(benchmark::State& state, Alloc& a) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Ring<ByteBuf> ring;
  std::thread consumer([&] { ring.consume([](ByteBuf& b) { b.reset(); }); });
  for (auto _ : state) ring.push(a.buffer(n, n));
  ring.done.store(true, std::memory_order_release);
  consumer.join();
}
void BM_ProducerConsumer_Pooled(benchmark::State& state) {
  producerConsumerByteBuf(state, pooled());
}
void BM_ProducerConsumer_Unpooled(benchmark::State& state) {
  producerConsumerByteBuf(state, unpooled());
}
void BM_ProducerConsumer_Malloc(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Ring<void*> ring;
  std::thread consumer([&] { ring.consume([](void*& p) { std::free(p); }); });
  for (auto _ : state) {
    void* p = std::malloc(n);
    benchmark::DoNotOptimize(p);
    ring.push(std::move(p));
  }
  ring.done.store(true, std::memory_order_release);
  consumer.join();
}

// ------------------------------------------------------------------ steady-state memory

/// A mixed-size live set (log-uniform 16 B .. 64 KiB, 16384 buffers, ~124 MiB requested) in which
/// each op replaces a random buffer. Reports held / live: held = chunk bytes + direct bytes (what
/// the pool took from the OS for data), live = bytes requested by the live buffers (the
/// target's "live bytes"); held_over_slot_bytes divides by the usable slot bytes instead.
void BM_SteadyStateMemory(benchmark::State& state) {
  netbuf::PooledAllocatorOptions o;
  o.leakDetection = netbuf::LeakDetectionLevel::Disabled;
  netbuf::PooledByteBufAllocator a(o);
  constexpr std::size_t kLive = 16384;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> logSize(4.0, 16.0);  // 2^4 .. 2^16
  auto size = [&] { return static_cast<std::size_t>(std::exp2(logSize(rng))); };
  std::vector<ByteBuf> slots(kLive);
  std::vector<std::size_t> requested(kLive);
  std::size_t live = 0;
  for (std::size_t i = 0; i < kLive; ++i) {
    requested[i] = size();
    live += requested[i];
    slots[i] = a.buffer(requested[i], requested[i]);
  }
  std::size_t k = 0;
  for (auto _ : state) {
    const std::size_t i = rng() % kLive;
    live -= requested[i];
    requested[i] = size();
    live += requested[i];
    slots[i] = a.buffer(requested[i], requested[i]);
    ++k;
  }
  const netbuf::PoolStats s = a.totalStats();
  const double held = static_cast<double>(s.chunkBytes + s.hugeLiveBytes);
  state.counters["live_MiB"] = static_cast<double>(live) / (1 << 20);
  state.counters["held_MiB"] = held / (1 << 20);
  state.counters["held_over_live"] = held / static_cast<double>(live);
  state.counters["held_over_slot_bytes"] = held / static_cast<double>(s.liveBytes);
  state.counters["ctrl_MiB"] = static_cast<double>(s.controlBlockBytes) / (1 << 20);
  state.counters["cached_MiB"] = static_cast<double>(s.cachedBytes) / (1 << 20);
  state.counters["slot_MiB"] = static_cast<double>(s.liveBytes) / (1 << 20);
  slots.clear();
}

void sizes(benchmark::internal::Benchmark* b) {
  for (auto n : kSizes) b->Arg(n);
}
void slotSizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {0, 64, 256, 4096, 65536}) b->Args({n, 8192});
  for (std::int64_t n : {0, 256}) b->Args({n, 512});
}
void smallSlotSizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {0, 256}) {
    b->Args({n, 8192});
    b->Args({n, 512});
  }
}
void pcSizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {64, 4096, 65536}) b->Arg(n);
}

}  // namespace

BENCHMARK(BM_AllocRelease_Pooled)->Apply(sizes);
BENCHMARK(BM_AllocRelease_Default)->Apply(sizes);
BENCHMARK(BM_AllocRelease_PooledLeakDetectionDisabled)->Arg(64)->Arg(256)->Arg(4096);
BENCHMARK(BM_AllocRelease_Unpooled)->Apply(sizes);
BENCHMARK(BM_AllocRelease_Malloc)->Apply(sizes);
BENCHMARK(BM_AllocRelease_Vector)->Apply(sizes);
BENCHMARK(BM_RandomSlot_Pooled)->Apply(slotSizes);
BENCHMARK(BM_RandomSlot_Default)->Apply(slotSizes);
BENCHMARK(BM_RandomSlot_PooledLeakDetectionDisabled)->Args({64, 8192})->Args({256, 8192});
BENCHMARK(BM_RandomSlot_Unpooled)->Apply(slotSizes);
BENCHMARK(BM_RandomSlot_Malloc)->Apply(slotSizes);
BENCHMARK(BM_RandomSlot_MallocHandle)->Apply(smallSlotSizes);
BENCHMARK(BM_RandomSlot_Floor)->Apply(smallSlotSizes);
BENCHMARK(BM_ProducerConsumer_Pooled)->Apply(pcSizes)->UseRealTime();
BENCHMARK(BM_ProducerConsumer_Unpooled)->Apply(pcSizes)->UseRealTime();
BENCHMARK(BM_ProducerConsumer_Malloc)->Apply(pcSizes)->UseRealTime();
BENCHMARK(BM_SteadyStateMemory)->Iterations(2000000);

BENCHMARK_MAIN();
