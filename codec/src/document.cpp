#include <netbuf/codec/document.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/json/detail/json_short_string.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <new>

namespace netbuf {

namespace {
// Block headers are padded to 16 bytes so that the usable area starts 16-aligned.
constexpr std::size_t kHeader = 16;

// The per-thread cache of freed small blocks (see the header comment): up to kCachedBlocks blocks
// of at most kCachedBlockSize usable bytes and kCacheBytes in all, oldest first; when full, a
// freed block replaces the oldest. (A decoder's read batch holds one Document per message until
// the batch is handed on: the cache must hold a batch's worth for the next batch to find them.) A
// block is taken for a request of `size` when it is at least that large and at most 4x (a tiny
// Document does not pin a big block).
constexpr std::size_t kCachedBlockSize = Document::kDefaultFirstBlock;
constexpr int kCachedBlocks = 64;
constexpr std::size_t kCacheBytes = 64 * 1024;  // usable bytes held, at most

struct BlockCache {
  struct Entry {
    void* raw;
    std::size_t size;  // usable bytes (after the header)
  };
  Entry entries[kCachedBlocks];
  int count = 0;
  std::size_t bytes = 0;  // usable bytes of the entries
  ~BlockCache();
};

// Set once this thread's cache is destroyed (thread exit): Documents destroyed later on the thread
// (statics, other thread_locals) free their blocks directly. Trivially destructible, so it can be
// read at any time.
thread_local bool tBlockCacheGone = false;
thread_local BlockCache tBlockCache;

void* newBlock(std::size_t size) {
  return ::operator new (kHeader + size, std::align_val_t{kHeader});
}
void deleteBlock(void* raw) noexcept { ::operator delete (raw, std::align_val_t{kHeader}); }

BlockCache::~BlockCache() {
  tBlockCacheGone = true;
  for (int i = 0; i < count; ++i) deleteBlock(entries[i].raw);
  count = 0;
}

/// Storage for a block of at least `size` usable bytes; `actual` gets its usable size.
void* allocateBlock(std::size_t size, std::size_t& actual) {
  if (size <= kCachedBlockSize && !tBlockCacheGone) {
    BlockCache& c = tBlockCache;
    for (int i = c.count - 1; i >= 0; --i) {  // the most recently freed first (warm in cache)
      const BlockCache::Entry e = c.entries[i];
      if (e.size >= size && e.size / 4 <= size) {
        std::copy(c.entries + i + 1, c.entries + c.count, c.entries + i);  // keeps the age order
        --c.count;
        c.bytes -= e.size;
        actual = e.size;
        return e.raw;
      }
    }
  }
  actual = size;
  return newBlock(size);
}

void freeBlock(void* raw, std::size_t size) noexcept {
  if (size <= kCachedBlockSize && !tBlockCacheGone) {
    BlockCache& c = tBlockCache;
    // Full: the oldest go, so that the cache follows the sizes in use now.
    int evict = 0;
    while (c.count - evict == kCachedBlocks || c.bytes + size > kCacheBytes) {
      deleteBlock(c.entries[evict].raw);
      c.bytes -= c.entries[evict].size;
      ++evict;
    }
    if (evict > 0) {
      std::copy(c.entries + evict, c.entries + c.count, c.entries);
      c.count -= evict;
    }
    c.entries[c.count++] = {raw, size};
    c.bytes += size;
    return;
  }
  deleteBlock(raw);
}

/// Whether a Str key is valid UTF-8: not flagged invalid, and either known plain ASCII or
/// validated now.
bool validUtf8Key(const Value& key) noexcept {
  if (key.hasInvalidUtf8()) return false;
  if (key.isPlainAscii()) return true;
  const std::string_view s = key.asStr();
  return utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(s.data()), s.size()) ==
         utf8::npos;
}

/// Whether the members are in RFC 8785 order: Str keys, none flagged invalid, strictly increasing
/// by UTF-16 code units, all valid UTF-8 (compareUtf16 orders valid UTF-8 only, so the order of
/// adjacent pairs proves the order of the whole only then). Validation comes last, so a map out of
/// order costs its comparisons only.
bool inCanonicalOrder(std::span<const Member> members) noexcept {
  for (std::size_t i = 0; i < members.size(); ++i) {
    const Value& k = members[i].key;
    if (!k.isStr()) return false;
    if (i > 0 && json::compareUtf16(members[i - 1].key.asStr(), k.asStr()) >= 0) return false;
  }
  return std::all_of(members.begin(), members.end(),
                     [](const Member& m) { return validUtf8Key(m.key); });
}
}  // namespace

Document::Document(Document&& o) noexcept
    : root_(o.root_),
      cur_(o.cur_),
      end_(o.end_),
      head_(o.head_),
      firstBlockSize_(o.firstBlockSize_),
      used_(o.used_),
      reserved_(o.reserved_),
      firstKept_(std::move(o.firstKept_)),
      kept_(std::move(o.kept_)) {
  o.root_ = Value();
  o.cur_ = o.end_ = nullptr;
  o.head_ = nullptr;
  o.used_ = o.reserved_ = 0;
  o.firstKept_ = ByteBuf();
  o.kept_.clear();
}

Document& Document::operator=(Document&& o) noexcept {
  if (this != &o) {
    freeBlocks(head_);
    firstKept_ = ByteBuf();
    kept_.clear();
    root_ = o.root_;
    cur_ = o.cur_;
    end_ = o.end_;
    head_ = o.head_;
    firstBlockSize_ = o.firstBlockSize_;
    used_ = o.used_;
    reserved_ = o.reserved_;
    firstKept_ = std::move(o.firstKept_);
    kept_ = std::move(o.kept_);
    o.root_ = Value();
    o.cur_ = o.end_ = nullptr;
    o.head_ = nullptr;
    o.used_ = o.reserved_ = 0;
    o.firstKept_ = ByteBuf();
    o.kept_.clear();
  }
  return *this;
}

Document::~Document() { freeBlocks(head_); }

void Document::freeBlocks(Block* b) noexcept {
  while (b != nullptr) {
    Block* next = b->next;
    freeBlock(b, b->size);
    b = next;
  }
}

void Document::clear() noexcept {
  root_ = Value();
  firstKept_ = ByteBuf();
  kept_.clear();
  used_ = 0;
  if (head_ == nullptr) return;
  // Keep the largest block, free the others.
  Block* best = head_;
  for (Block* b = head_->next; b != nullptr; b = b->next) {
    if (b->size > best->size) best = b;
  }
  for (Block* b = head_; b != nullptr;) {
    Block* next = b->next;
    if (b != best) freeBlock(b, b->size);
    b = next;
  }
  if (best->size > kMaxBlock) {
    // A dedicated block for one huge value: do not hold on to it.
    freeBlock(best, best->size);
    head_ = nullptr;
    cur_ = end_ = nullptr;
    reserved_ = 0;
    return;
  }
  best->next = nullptr;
  head_ = best;
  reserved_ = best->size;
  cur_ = reinterpret_cast<std::byte*>(best) + kHeader;
  end_ = cur_ + best->size;
}

std::byte* Document::emptyStorage() noexcept {
  alignas(16) static std::byte empty[16];
  return empty;
}

std::byte* Document::allocateSlow(std::size_t n) {
  if (n > SIZE_MAX / 2) throw std::bad_alloc();
  const std::size_t rounded = (n + 7) & ~std::size_t{7};
  std::size_t next = head_ == nullptr ? firstBlockSize_ : std::min(head_->size * 2, kMaxBlock);
  next = std::max(next, firstBlockSize_);
  const bool dedicated = rounded > next;  // a big request gets a block of its own
  std::size_t size = 0;
  void* raw = allocateBlock(dedicated ? rounded : next, size);  // size: at least that asked
  auto* block = static_cast<Block*>(raw);
  block->size = size;
  reserved_ += size;
  used_ += rounded;
  std::byte* base = static_cast<std::byte*>(raw) + kHeader;
  if (dedicated && head_ != nullptr) {
    // Link it behind the current block so the current block's free space stays in use.
    block->next = head_->next;
    head_->next = block;
    return base;
  }
  block->next = head_;
  head_ = block;
  cur_ = base + rounded;
  end_ = base + size;
  return base;
}

void Document::keepAlive(ByteBuf buf) {
  if (!buf) return;
  if (!firstKept_ && kept_.empty()) {
    firstKept_ = std::move(buf);
    return;
  }
  if (firstKept_) {
    kept_.reserve(2);
    kept_.push_back(std::move(firstKept_));
    firstKept_ = ByteBuf();
  }
  kept_.push_back(std::move(buf));
}

Value Document::str(std::string_view text) {
  // Plain ASCII is valid UTF-8: one scan for the common case, the validation only for the rest.
  const bool plain = detail::plainAsciiText(text.data(), text.size());
  if (!plain) {
    const std::size_t bad =
        utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(text.data()), text.size());
    if (bad != utf8::npos) {
      throw Utf8Error(fmt::format("Document::str: ill-formed UTF-8 at offset {}", bad), bad);
    }
  }
  return copiedStr(text, false, plain);
}

Value Document::strUnchecked(std::string_view text, bool invalidUtf8) {
  return copiedStr(text, invalidUtf8,
                   !invalidUtf8 && detail::plainAsciiText(text.data(), text.size()));
}

Value Document::copiedStr(std::string_view text, bool invalidUtf8, bool plainAscii) {
  std::byte* p = allocateBytes(text.size());
  if (!text.empty()) std::memcpy(p, text.data(), text.size());
  const Value v =
      Value::strView(std::string_view(reinterpret_cast<const char*>(p), text.size()), invalidUtf8);
  return plainAscii ? detail::ValueHints::plainAscii(v) : v;
}

Value Document::bin(std::span<const std::byte> bytes) {
  std::byte* p = allocateBytes(bytes.size());
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  return Value::binView({p, bytes.size()});
}

Value Document::ext(std::int8_t type, std::span<const std::byte> data) {
  std::byte* p = allocateBytes(data.size());
  if (!data.empty()) std::memcpy(p, data.data(), data.size());
  return Value::extView(type, {p, data.size()});
}

std::span<Value> Document::allocateArray(std::size_t n) {
  if (n > SIZE_MAX / sizeof(Value)) throw std::bad_alloc();
  auto* p = reinterpret_cast<Value*>(allocateBytes(n * sizeof(Value)));
  std::uninitialized_default_construct_n(p, n);
  return {p, n};
}

std::span<Member> Document::allocateMap(std::size_t n) {
  if (n > SIZE_MAX / sizeof(Member)) throw std::bad_alloc();
  auto* p = reinterpret_cast<Member*>(allocateBytes(n * sizeof(Member)));
  std::uninitialized_default_construct_n(p, n);
  return {p, n};
}

Value Document::array(std::span<const Value> elements) {
  auto out = allocateArray(elements.size());
  std::copy(elements.begin(), elements.end(), out.begin());
  return Value::arrayView(out);
}

Value Document::map(std::span<const Member> members) {
  auto out = allocateMap(members.size());
  std::copy(members.begin(), members.end(), out.begin());
  const Value v = Value::mapView(out);
  return inCanonicalOrder(out) ? detail::ValueHints::canonicalOrder(v) : v;
}

Value Document::sortedMap(std::span<const Member> members) {
  for (std::size_t i = 0; i < members.size(); ++i) {
    const Value& k = members[i].key;
    if (!k.isStr()) {
      throw IllegalArgumentError(
          fmt::format("Document::sortedMap: key {} is {}, not Str", i, valueTypeName(k.type())));
    }
    if (!validUtf8Key(k)) {
      throw IllegalArgumentError(fmt::format("Document::sortedMap: key {} is not valid UTF-8", i));
    }
  }
  auto out = allocateMap(members.size());
  std::copy(members.begin(), members.end(), out.begin());
  std::sort(out.begin(), out.end(), [](const Member& a, const Member& b) {
    return json::compareUtf16(a.key.asStr(), b.key.asStr()) < 0;
  });
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (json::compareUtf16(out[i - 1].key.asStr(), out[i].key.asStr()) == 0) {
      throw IllegalArgumentError(fmt::format("Document::sortedMap: duplicate key \"{}\"",
                                             detail::utf8Prefix(out[i].key.asStr(), 64)));
    }
  }
  return detail::ValueHints::canonicalOrder(Value::mapView(out));
}

ByteBuf Document::retainedSlice(const Value& v, ByteBufAllocator& alloc) const {
  std::span<const std::byte> bytes;
  switch (v.type()) {
    case ValueType::Str: {
      const auto s = v.asStr();
      bytes = {reinterpret_cast<const std::byte*>(s.data()), s.size()};
      break;
    }
    case ValueType::Bin:
      bytes = v.asBin();
      break;
    case ValueType::Ext:
      bytes = v.extData();
      break;
    default:
      throw ValueTypeError(ValueType::Bin, v.type());
  }
  // Pointer comparisons across unrelated objects go through uintptr_t (well defined there).
  const auto p = reinterpret_cast<std::uintptr_t>(bytes.data());
  for (const ByteBuf& k : keptBuffers()) {
    const auto base = reinterpret_cast<std::uintptr_t>(k.data());
    if (p >= base && p - base <= k.capacity() && bytes.size() <= k.capacity() - (p - base)) {
      return k.retainedSlice(p - base, bytes.size());
    }
  }
  ByteBuf copy = alloc.buffer(bytes.size(), bytes.size());
  copy.writeBytes(bytes);
  return copy;
}

}  // namespace netbuf
