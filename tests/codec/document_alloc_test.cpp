// Document's allocations, counted with a replaced operator new: freed arena blocks of up to 4 KiB
// are taken again by the thread's next Documents (within 4x of the size asked, 64 KiB in all),
// larger ones are not cached, and the first kept buffer costs no allocation. Each case runs on a
// thread of its own, so that it starts with an empty cache. (Not under TSan: see
// support/replaced_operator_new.hpp.)
#include <netbuf/codec/document.hpp>

#include <doctest/doctest.h>

#include "support/replaced_operator_new.hpp"

#include <cstdint>
#include <string_view>
#include <thread>
#include <vector>

using namespace netbuf;
using netbuf::test::tAllocations;

namespace {

/// Runs fn on a new thread (an empty block cache) and waits for it.
template <class Fn>
void onFreshThread(Fn fn) {
  std::thread(fn).join();
}

/// A Document whose first block has `size` usable bytes (asked), in use.
void fill(std::vector<Document>& docs, int n, std::size_t size) {
  for (int i = 0; i < n; ++i) {
    docs.emplace_back(size);
    (void)docs.back().allocateBytes(8);
  }
}

}  // namespace

TEST_CASE("Document: a freed small block is taken by the thread's next Document") {
  onFreshThread([] {
    {
      Document a(256);
      (void)a.allocateBytes(8);
    }  // allocates its block; freeing caches it
    const std::uint64_t before = tAllocations;
    {
      Document b(256);
      (void)b.allocateBytes(8);
      CHECK(b.arenaReserved() == 256);
    }
    CHECK(tAllocations == before);

    // A batch of Documents freed together is taken again by the next batch.
    std::vector<Document> batch;
    batch.reserve(16);
    fill(batch, 16, 256);
    batch.clear();
    const std::uint64_t beforeBatch = tAllocations;
    fill(batch, 16, 256);
    CHECK(tAllocations == beforeBatch);
    batch.clear();
  });
}

TEST_CASE("Document: cached blocks are handed out within 4x of the size asked, up to 4 KiB") {
  onFreshThread([] {
    {
      Document big(4096);
      (void)big.allocateBytes(8);
    }
    // 32 bytes asked: the 4 KiB block is more than 4x that; the Document gets its own.
    std::uint64_t before = tAllocations;
    {
      Document tiny(32);
      (void)tiny.allocateBytes(8);
      CHECK(tiny.arenaReserved() == 32);
    }
    CHECK(tAllocations == before + 1);
    // 2 KiB asked: the cached 4 KiB block is taken, all of it usable.
    before = tAllocations;
    {
      Document mid(2048);
      (void)mid.allocateBytes(8);
      CHECK(mid.arenaReserved() == 4096);
    }
    CHECK(tAllocations == before);
    // Blocks above 4 KiB are not cached.
    {
      Document huge(8192);
      (void)huge.allocateBytes(8);
    }
    before = tAllocations;
    {
      Document again(8192);
      (void)again.allocateBytes(8);
    }
    CHECK(tAllocations == before + 1);
  });
}

TEST_CASE("Document: the cache holds 64 KiB at most, the oldest blocks evicted first") {
  onFreshThread([] {
    std::vector<Document> docs;
    docs.reserve(17);
    fill(docs, 17, 4096);
    docs.clear();  // 17 blocks of 4 KiB freed: 16 fit
    const std::uint64_t before = tAllocations;
    fill(docs, 17, 4096);
    CHECK(tAllocations == before + 1);
    docs.clear();
  });
}

TEST_CASE("Document: the first kept buffer costs no allocation, a second one does") {
  onFreshThread([] {
    ByteBuf a = Unpooled::copiedBuffer(std::string_view("a"));
    ByteBuf b = Unpooled::copiedBuffer(std::string_view("b"));
    Document doc(64);
    const std::uint64_t before = tAllocations;
    doc.keepAlive(std::move(a));
    CHECK(tAllocations == before);
    doc.keepAlive(std::move(b));
    CHECK(tAllocations > before);
    CHECK(doc.keptBuffers().size() == 2);
  });
}
