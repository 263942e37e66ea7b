// Fuzzing of PooledByteBufAllocator: the input chooses a small pool's options and then runs a
// program of allocations, releases, growth, retained slices, copies, trims and leak detection
// level changes on it. The pool is tiny (4 KiB pages, 64 KiB chunks, caches of a few entries,
// frequent sweeps, optionally a chunk bound), so that misses, refills, sweeps, cache overflow,
// huge and fallback allocations, reallocation across classes and leak sampling all happen within
// a short input.
//
// Checks: every byte a live buffer or slice holds keeps the pattern written into it (two live
// buffers sharing memory, or a block reused while still referenced, would overwrite each other;
// under ASan a touch of a released slot faults at once); the pool counts exactly the live storages
// the program holds; tracked leaks are never more than those; and once everything is released,
// nothing is live, nothing is tracked, and trimming returns every chunk.
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include "fuzz_check.hpp"
#include "fuzz_input.hpp"

#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace {

using netbuf::ByteBuf;
using netbuf::LeakDetectionLevel;
using netbuf::PooledAllocatorOptions;
using netbuf::PooledByteBufAllocator;
using Input = netbuf::fuzz::FuzzInput;

using netbuf::fuzz::check;
using netbuf::fuzz::fail;

constexpr std::size_t kPage = 4096;
constexpr std::size_t kChunk = 64 * 1024;
constexpr std::size_t kMaxLive = 48;
constexpr std::size_t kMaxCapacity = 3 * kChunk;

/// Pseudo-random bytes; the buffer with seed k holds kPattern[k % 251 + i] at position i.
const std::vector<std::byte>& patternBytes() {
  static const std::vector<std::byte> p = [] {
    std::vector<std::byte> v(kMaxCapacity + 256);
    std::uint32_t x = 2463534242u;
    for (std::byte& b : v) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      b = static_cast<std::byte>(x >> 24);
    }
    return v;
  }();
  return p;
}

const std::byte* pattern(std::uint32_t seed) { return patternBytes().data() + seed % 251; }

/// A buffer the program holds: its readable bytes are pattern(seed, 0 .. writerIndex), and
/// `storage` names the storage it is on (a new name whenever growth moves it).
struct Live {
  ByteBuf buf;
  std::uint32_t seed;
  std::uint64_t storage;
};

/// A retained slice: `expected` is what it read when it was made, `storage` the storage it holds.
struct Slice {
  ByteBuf buf;
  std::string expected;
  std::uint64_t storage;
};

void fill(ByteBuf& b, std::uint32_t seed, std::size_t from, std::size_t to) {
  b.writeBytes(std::span<const std::byte>(pattern(seed) + from, to - from));
}

void verify(const Live& l) {
  if (std::memcmp(l.buf.readPtr(), pattern(l.seed), l.buf.readableBytes()) != 0)
    fail("a live buffer's bytes changed");
}

void verify(const Slice& s) {
  if (s.buf.readableStringView() != s.expected) fail("a retained slice's bytes changed");
}

std::size_t chooseSize(Input& in) {
  const std::uint8_t kind = in.byte() % 6;
  const std::size_t x = in.u16();
  switch (kind) {
    case 0:
      return x % 64;  // the first tiny classes, 0 included
    case 1:
      return x % kPage;  // small classes
    case 2:
      return kPage - 8 + x % 16;  // the page edge
    case 3:
      return x % kChunk;  // normal classes
    case 4:
      return kChunk - 8 + x % 16;  // the chunk edge: huge above it
    default:
      return kChunk + x % kChunk;  // huge
  }
}

std::size_t distinctStorages(const std::vector<Live>& live, const std::vector<Slice>& slices) {
  std::set<std::uint64_t> s;
  for (const Live& l : live) s.insert(l.storage);
  for (const Slice& x : slices) s.insert(x.storage);
  return s.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in{data, size};
  PooledAllocatorOptions o;
  o.pageSize = kPage;
  o.chunkSize = kChunk;
  o.numArenas = 1 + in.byte() % 2;
  o.smallCacheSize = in.byte() % 8;
  o.normalCacheSize = in.byte() % 4;
  o.maxCachedBufferCapacity = kChunk / 2;
  o.maxCachedBytesPerThread = std::size_t{1} << (12 + in.byte() % 6);  // 4 KiB .. 128 KiB
  o.cacheTrimInterval = in.byte() % 32;                                // 0: never
  o.maxChunks = in.byte() % 5;                                         // 0: unbounded
  o.useThreadCache = in.byte() % 8 != 0;
  o.leakDetection = static_cast<LeakDetectionLevel>(in.byte() % 3);
  o.leakSamplingInterval = 1 + in.byte() % 8;
  PooledByteBufAllocator a(o);

  std::vector<Live> live;
  std::vector<Slice> slices;
  std::uint64_t nextStorage = 1;
  std::uint32_t nextSeed = 1;
  std::uint32_t step = 0;
  auto pick = [&](std::size_t n) { return in.u16() % n; };

  while (!in.empty()) {
    const std::uint8_t op = in.byte() % 8;
    if (op <= 1 && live.size() < kMaxLive) {  // allocate (twice as likely as the others)
      const std::size_t n = chooseSize(in);
      Live l{a.buffer(n, kMaxCapacity), nextSeed++, nextStorage++};
      check(l.buf.capacity() == n, "capacity is the requested size");
      check(l.buf.maxFastWritableBytes() >= n, "the slot holds the request");
      a.checkLive(l.buf);
      fill(l.buf, l.seed, 0, n);
      live.push_back(std::move(l));
    } else if (op == 2 && !live.empty()) {  // release one
      const std::size_t i = pick(live.size());
      verify(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op == 3 && !live.empty()) {  // grow: content kept, maybe into another class
      Live& l = live[pick(live.size())];
      const std::size_t extra = chooseSize(in) % (kMaxCapacity - l.buf.writerIndex() + 1);
      const std::byte* before = l.buf.readPtr();
      const std::size_t from = l.buf.writerIndex();
      fill(l.buf, l.seed, from, from + extra);
      if (l.buf.readPtr() != before) l.storage = nextStorage++;
      verify(l);
      a.checkLive(l.buf);
    } else if (op == 4 && !live.empty() && slices.size() < kMaxLive) {  // retained slice
      const Live& l = live[pick(live.size())];
      const std::size_t len = l.buf.readableBytes() == 0 ? 0 : pick(l.buf.readableBytes() + 1);
      const std::size_t at = pick(l.buf.readableBytes() - len + 1);
      ByteBuf s = l.buf.retainedSlice(at, len);
      std::string expected(s.readableStringView());
      slices.push_back({std::move(s), std::move(expected), l.storage});
    } else if (op == 5 && !slices.empty()) {  // release a slice
      const std::size_t i = pick(slices.size());
      verify(slices[i]);
      slices.erase(slices.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op == 6) {  // trim, the thread's cache or the whole pool
      if (in.byte() % 2 == 0)
        a.trimCurrentThreadCache();
      else
        a.trim();
    } else if (op == 7) {  // a level change, or a copy
      if (in.byte() % 2 == 0) {
        a.setLeakDetectionLevel(static_cast<LeakDetectionLevel>(in.byte() % 3));
      } else if (!live.empty()) {
        const Live& l = live[pick(live.size())];
        ByteBuf c = l.buf.copy();
        check(c.equals(l.buf), "a copy equals its source");
      }
    }
    const std::size_t storages = distinctStorages(live, slices);
    const netbuf::PoolStats st = a.totalStats();
    check(st.liveBuffers == storages, "the pool counts exactly the live storages");
    // leaks() symbolizes every record: every 16th step only.
    if (++step % 16 == 0)
      check(a.leaks().size() <= storages, "no more tracked leaks than live storages");
  }

  for (const Live& l : live) verify(l);
  for (const Slice& s : slices) verify(s);
  live.clear();
  slices.clear();
  check(a.totalStats().liveBuffers == 0, "nothing live at the end");
  check(a.leaks().empty(), "nothing tracked at the end");
  a.trimCurrentThreadCache();
  a.trim();
  check(a.totalStats().chunks == 0, "trim returns every chunk once nothing is live");
  return 0;
}
