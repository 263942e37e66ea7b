// PoolCore's arena operations: control blocks from slabs, runs from chunks, slots from subpages.
// The arena's mutex is held by every caller.

#include "detail/pool_core.hpp"

#include "detail/intrusive_list.hpp"
#include "detail/slab_header.hpp"
#include "detail/subpage.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

namespace netbuf::detail {

namespace {
std::atomic<std::uint32_t> gNextArenaTag{1};

/// Run allocations after which an empty chunk kept by its arena is unmapped if still unused.
constexpr std::uint64_t kEmptyChunkIdleRuns = 4096;
}  // namespace

/// The next unused tag. Never wraps: once 2^32 - 2 arenas have been made in the process, making
/// another (a new allocator) throws instead of repeating a tag.
std::uint32_t PoolArena::nextTag() {
  std::uint32_t t = gNextArenaTag.load(std::memory_order_relaxed);
  do {
    if (t == kDetachedTag)
      throw std::overflow_error(
          "netbuf: PooledByteBufAllocator: every arena tag has been used in this process");
  } while (!gNextArenaTag.compare_exchange_weak(t, t + 1, std::memory_order_relaxed));
  return t;
}
PooledStorage* PoolCore::takeBlock(PoolArena& a) {
  if (a.freeBlocks == nullptr) {
    if (a.slabs.size() == a.slabs.capacity())  // so that the push_back below cannot throw
      a.slabs.reserve(std::max<std::size_t>(16, 2 * a.slabs.size()));
    void* slab = ::operator new (kSlabBytes, std::align_val_t{kSlabBytes});
    a.slabs.push_back(slab);
    a.slabBytes.add(kSlabBytes);
    const std::size_t header = slabHeaderIndex(reinterpret_cast<std::uintptr_t>(slab));
    new (static_cast<std::byte*>(slab) + header * sizeof(PooledStorage)) SlabHeader{};
    for (std::size_t i = 0; i < kSlabBlocks; ++i) {
      if (i >= header && i < header + kSlabHeaderBlocks) continue;  // the header's blocks
      auto* s = new (static_cast<std::byte*>(slab) + i * sizeof(PooledStorage)) PooledStorage();
      s->chunk = &a.detached;
      s->arenaTag = a.tag;
      s->next = a.freeBlocks;
      a.freeBlocks = s;
    }
  }
  PooledStorage* s = a.freeBlocks;
  a.freeBlocks = s->next;
  return s;
}

std::size_t PoolCore::allocateRun(PoolArena& a, std::size_t pages, PoolChunk*& out) {
  // Best fit over the arena's chunks: the shortest free span that holds the run; on equal spans
  // the fullest chunk, so that nearly empty chunks drain and can be unmapped (the role of
  // Netty's PoolChunkList usage quartiles). An empty chunk is taken only when nothing else fits.
  PoolChunk* best = nullptr;
  PoolChunk* idle = nullptr;
  std::size_t bestFirst = 0, bestLength = SIZE_MAX;
  ++a.runAllocations;
  for (PoolChunk* c : a.chunks) {
    if (c->freePages == c->numPages && a.runAllocations - c->emptySince > kEmptyChunkIdleRuns)
      idle = c;
    if (c->freePages < pages) continue;
    if (best != nullptr && bestLength == pages && c->freePages >= best->freePages) continue;
    std::size_t length = 0;
    const std::size_t p = c->bestRun(pages, length);
    if (p == SIZE_MAX) continue;
    if (length < bestLength || (length == bestLength && c->freePages < best->freePages)) {
      best = c;
      bestFirst = p;
      bestLength = length;
    }
  }
  if (idle != nullptr && idle != best) {
    // The empty chunk kept to absorb churn has not been needed for a while: best fit takes an
    // empty chunk only when no other has room, so in a steady state it would stay idle for good.
    --a.emptyChunks;
    destroyChunk(a, idle);
  }
  if (best != nullptr) {
    PoolChunk* c = best;
    const std::size_t p = bestFirst;
    if (c->freePages == c->numPages) --a.emptyChunks;
    c->mark(p, pages, true);
    c->freePages -= static_cast<std::uint32_t>(pages);
    c->runLength[p] = static_cast<std::uint32_t>(pages);
    out = c;
    return p;
  }
  // A new chunk, within maxChunks. Its bookkeeping is allocated first, so that a std::bad_alloc
  // leaves neither a mapping nor a count behind.
  auto c = std::make_unique<PoolChunk>();
  c->arena = &a;
  c->numPages = static_cast<std::uint32_t>(classes.numPages);
  c->freePages = c->numPages;
  c->used.assign((classes.numPages + 63) / 64, 0);
  c->runLength.assign(classes.numPages, 0);
  c->subpageOf.assign(classes.numPages, nullptr);
  if (a.chunks.size() == a.chunks.capacity())
    a.chunks.reserve(std::max<std::size_t>(4, 2 * a.chunks.size()));
  if (options.maxChunks != 0) {
    std::uint64_t n = totalChunks.get();
    do {
      if (n >= options.maxChunks) return SIZE_MAX;
    } while (!totalChunks.v.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  } else {
    totalChunks.add(1);
  }
  void* mem = ::mmap(nullptr, classes.chunkSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    totalChunks.sub(1);
    throw std::bad_alloc();
  }
  c->memory = static_cast<std::byte*>(mem);
  poison(mem, classes.chunkSize);
  a.chunkCount.add(1);
  a.chunks.push_back(c.get());
  PoolChunk* chunk = c.release();
  chunk->mark(0, pages, true);
  chunk->freePages -= static_cast<std::uint32_t>(pages);
  chunk->runLength[0] = static_cast<std::uint32_t>(pages);
  out = chunk;
  return 0;
}

void PoolCore::destroyChunk(PoolArena& a, PoolChunk* c) noexcept {
  unpoison(c->memory, classes.chunkSize);
  ::munmap(c->memory, classes.chunkSize);
  std::erase(a.chunks, c);
  a.chunkCount.sub(1);
  totalChunks.sub(1);
  delete c;
}

void PoolCore::freeRun(PoolArena& a, PoolChunk* c, std::size_t first) noexcept {
  const std::size_t pages = c->runLength[first];
  c->runLength[first] = 0;
  c->mark(first, pages, false);
  c->freePages += static_cast<std::uint32_t>(pages);
  if (c->freePages == c->numPages) {
    // Keep one empty chunk per arena to absorb churn; return the others to the OS at once, which
    // bounds what a burst leaves behind.
    if (a.emptyChunks >= 1) {
      destroyChunk(a, c);
    } else {
      ++a.emptyChunks;
      c->emptySince = a.runAllocations;
    }
  }
}

// Strongly exception-safe: the control block and a new run's Subpage are made before a slot or
// run is taken, so a std::bad_alloc (a new slab, a new chunk) leaves the arena as it was.
PooledStorage* PoolCore::allocateInArena(PoolArena& a, unsigned cls) {
  PooledStorage* s = takeBlock(a);
  // Back onto the slab free list unless it gets a slot (nothing, or an exception, below).
  struct GiveBack {
    PoolArena& a;
    PooledStorage* s;
    ~GiveBack() {
      if (s != nullptr) {
        s->next = a.freeBlocks;
        a.freeBlocks = s;
      }
    }
  } giveBack{a, s};
  PoolChunk* chunk = nullptr;
  std::size_t offset = 0;
  if (cls < classes.numSmall) {
    Subpage* sp = a.partial[cls];
    if (sp == nullptr) {
      auto fresh = std::make_unique<Subpage>();
      fresh->bitmap.assign((classes.slotsPerRun[cls] + 63) / 64, 0);
      const std::size_t first = allocateRun(a, classes.runPages[cls], chunk);
      if (first == SIZE_MAX) return nullptr;
      sp = fresh.get();
      sp->chunk = chunk;
      sp->firstPage = static_cast<std::uint32_t>(first);
      sp->slotSize = classes.sizes[cls];
      sp->numSlots = classes.slotsPerRun[cls];
      sp->numFree = sp->numSlots;
      sp->sizeClass = static_cast<std::uint16_t>(cls);
      for (std::size_t p = first; p < first + classes.runPages[cls]; ++p) chunk->subpageOf[p] = sp;
      listPush(a.partial[cls], fresh.release());
      sp->listed = true;
    }
    const std::uint32_t slot = sp->take();
    if (sp->numFree == 0) {
      listRemove(a.partial[cls], sp);
      sp->listed = false;
    }
    chunk = sp->chunk;
    offset = (std::size_t{sp->firstPage} << classes.pageShift) + std::size_t{slot} * sp->slotSize;
  } else {
    const std::size_t first = allocateRun(a, classes.runPages[cls], chunk);
    if (first == SIZE_MAX) return nullptr;
    offset = first << classes.pageShift;
  }
  giveBack.s = nullptr;
  s->refs.store(0, std::memory_order_relaxed);
  s->kind = StorageKind::Pooled;
  s->data = chunk->memory + offset;
  s->size = classes.sizes[cls];
  s->allocator = facade;
  s->destroy = &destroyPooled;
  s->chunk = chunk;
  s->sizeClass = static_cast<std::uint16_t>(cls);
  slabClassOf(s) = s->sizeClass;
  return s;
}

void PoolCore::freeInArena(PoolArena& a, PooledStorage* s) noexcept {
  PoolChunk* c = s->chunk;
  const std::size_t offset = static_cast<std::size_t>(s->data - c->memory);
  const std::size_t page = offset >> classes.pageShift;
  if (s->sizeClass < classes.numSmall) {
    Subpage* sp = c->subpageOf[page];
    const std::uint32_t slot = static_cast<std::uint32_t>(
        (offset - (std::size_t{sp->firstPage} << classes.pageShift)) / sp->slotSize);
    sp->give(slot);
    const unsigned cls = sp->sizeClass;
    if (!sp->listed) {
      listPush(a.partial[cls], sp);
      sp->listed = true;
    }
    // An empty run goes back to its chunk unless it is the class's only partial run (Netty keeps
    // one so that a class in use does not rebuild its run on every allocation).
    if (sp->numFree == sp->numSlots && (sp->prev != nullptr || sp->next != nullptr)) {
      listRemove(a.partial[cls], sp);
      for (std::size_t p = sp->firstPage; p < sp->firstPage + classes.runPages[cls]; ++p)
        c->subpageOf[p] = nullptr;
      const std::size_t first = sp->firstPage;
      delete sp;
      freeRun(a, c, first);
    }
  } else {
    freeRun(a, c, page);
  }
  s->chunk = &a.detached;
  s->next = a.freeBlocks;
  a.freeBlocks = s;
}

// Frees the blocks other threads pushed onto a's return stack.
void PoolCore::drainLocked(PoolArena& a) noexcept {
  PooledStorage* s = a.returnHead.exchange(nullptr, std::memory_order_acquire);
  while (s != nullptr) {
    PooledStorage* next = s->next;
    freeInArena(a, s);  // counted as freed by its releaser
    s = next;
  }
}

// No thread cache: straight from an arena chosen by the thread's id, under its lock.
PooledStorage* PoolCore::allocateDirectly(unsigned cls) {
  PoolArena& a = *arenas[std::hash<std::thread::id>{}(std::this_thread::get_id()) % arenas.size()];
  std::lock_guard lock(a.mutex);
  drainLocked(a);
  PooledStorage* s = allocateInArena(a, cls);
  if (s != nullptr) {
    a.allocs.add(1);
    a.allocBytes.add(s->size);
  }
  return s;
}

}  // namespace netbuf::detail
