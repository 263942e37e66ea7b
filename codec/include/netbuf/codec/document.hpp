#pragma once
// Document: owns the memory behind a tree of Values (see value.hpp): an arena for nodes and copied
// bytes, plus the input buffers that decoded Values view into (zero copy).
//
//   Document doc;                                   // building by hand
//   Value name = doc.str("netbuf");                 // copied into the arena
//   doc.setRoot(doc.map({{doc.str("name"), name}, {doc.str("n"), Value::uinteger(3)}}));
//
//   Document in = msgpack::decode(frame);           // decoding: Str/Bin view into `frame`,
//   ByteBuf blob = in.retainedSlice(in.root()["blob"]);  // which `in` keeps alive
//
// Ownership: a Document is move-only. Every Value it created, and every Value a decoder put in it,
// stays valid until the Document is destroyed or clear()ed (moving the Document keeps them valid:
// the arena's blocks do not move). Buffers passed to keepAlive() are released then too.
//
// Arena: a bump allocator over blocks taken from operator new; the first block is 4 KiB (or the
// size asked in the constructor), later ones double up to 1 MiB, and a request larger than a block
// gets a block of its own. clear() keeps the largest block for reuse, so a Document reused per
// message allocates nothing in the steady state. Blocks of up to 4 KiB that a Document frees go to
// a cache of the freeing thread's (64 blocks, 64 KiB at most, the oldest evicted first) and are
// taken again by the next Documents made on that thread (a block up to 4x the size asked: a
// Document may get more than it asked for), and the first kept buffer is held inline: a decoder
// that makes a Document per small message (a MessagePack-RPC connection) allocates nothing in the
// steady state either, as long as a read batch's Documents fit the cache. Not thread-safe (one
// owner at a time, like any container); a finished Document may be moved to and read from another
// thread.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/value.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace netbuf {

class Document {
 public:
  static constexpr std::size_t kDefaultFirstBlock = 4096;
  static constexpr std::size_t kMaxBlock = 1024 * 1024;

  /// firstBlockSize: 0 means the default; larger than kMaxBlock is clamped to kMaxBlock.
  explicit Document(std::size_t firstBlockSize = kDefaultFirstBlock) noexcept
      : firstBlockSize_(firstBlockSize == 0 ? kDefaultFirstBlock
                                            : std::min(firstBlockSize, kMaxBlock)) {}
  Document(Document&& other) noexcept;
  Document& operator=(Document&& other) noexcept;
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;
  ~Document();

  /// The top-level value (Nil until set).
  const Value& root() const noexcept { return root_; }
  void setRoot(Value v) noexcept { root_ = v; }

  /// Forgets every Value, releases the kept buffers and rewinds the arena (its largest block is
  /// kept for reuse). Values obtained before are dangling afterwards.
  void clear() noexcept;

  /// Keeps `buf` alive as long as this Document (decoders keep their input here so that Str and
  /// Bin values can view into it). An empty handle is ignored.
  void keepAlive(ByteBuf buf);
  /// The kept buffers, oldest first.
  std::span<const ByteBuf> keptBuffers() const noexcept {
    if (!kept_.empty()) return kept_;
    return firstKept_ ? std::span<const ByteBuf>(&firstKept_, 1) : std::span<const ByteBuf>();
  }

  // ---- builders: everything is copied into the arena unless the name says View ----
  /// Copies `text`; throws Utf8Error (from the buffer module) when it is not valid UTF-8. The
  /// result carries the isPlainAscii() hint when the text is plain ASCII.
  Value str(std::string_view text);
  /// Copies without validating; invalidUtf8 as in Value::strView. Without invalidUtf8, the result
  /// carries the isPlainAscii() hint when the text is plain ASCII.
  Value strUnchecked(std::string_view text, bool invalidUtf8 = false);
  Value bin(std::span<const std::byte> bytes);
  Value ext(std::int8_t type, std::span<const std::byte> data);
  Value array(std::initializer_list<Value> elements) {
    return array(std::span<const Value>(elements.begin(), elements.size()));
  }
  Value array(std::span<const Value> elements);
  Value map(std::initializer_list<Member> members) {
    return map(std::span<const Member>(members.begin(), members.size()));
  }
  /// Copies the members in the order given (which MessagePack and non-canonical JSON keep). When
  /// that order is already canonical (Str keys, valid UTF-8, strictly increasing by UTF-16 code
  /// units), the result carries the hasCanonicalOrder() hint, so canonical JSON need not sort it.
  Value map(std::span<const Member> members);
  /// Copies the members sorted into RFC 8785 order (keys by UTF-16 code units, as canonical JSON
  /// writes them; the result carries hasCanonicalOrder()): a map sorted once, when built (as
  /// nlohmann::json's std::map is, though that sorts bytes), for a tree written canonically more
  /// than once or looked at in key order. Every key must be a Str of valid UTF-8 and keys distinct:
  /// IllegalArgumentError otherwise, naming the key (the arena may keep the copy's space).
  Value sortedMap(std::initializer_list<Member> members) {
    return sortedMap(std::span<const Member>(members.begin(), members.size()));
  }
  Value sortedMap(std::span<const Member> members);

  /// Arena space for n elements or members, default-initialised (Nil), for decoders and builders
  /// that fill them in place; wrap the result with Value::arrayView / Value::mapView.
  std::span<Value> allocateArray(std::size_t n);
  std::span<Member> allocateMap(std::size_t n);
  /// Raw arena bytes (alignment 8), uninitialised. n == 0 gives a valid non-null pointer and
  /// takes no arena space (empty containers cost nothing).
  std::byte* allocateBytes(std::size_t n);

  /// A ByteBuf holding the bytes of a Str, Bin or Ext value: a retained slice (zero copy) when they
  /// lie inside one of the kept buffers, otherwise a fresh copy from `alloc`. ValueTypeError for
  /// other types.
  ByteBuf retainedSlice(const Value& v,
                        ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator()) const;

  /// Bytes handed out by the arena so far (including alignment padding) and bytes it holds.
  std::size_t arenaUsed() const noexcept { return used_; }
  std::size_t arenaReserved() const noexcept { return reserved_; }

 private:
  struct Block {
    Block* next;
    std::size_t size;  // usable bytes after the header
  };
  std::byte* allocateSlow(std::size_t n);
  /// text copied into the arena, as a Str with the given flag and hint.
  Value copiedStr(std::string_view text, bool invalidUtf8, bool plainAscii);
  /// A static, 16-aligned address for zero-byte allocations (never written through).
  static std::byte* emptyStorage() noexcept;
  void freeBlocks(Block* b) noexcept;

  Value root_;
  std::byte* cur_ = nullptr;  // next free byte of head_
  std::byte* end_ = nullptr;
  Block* head_ = nullptr;  // newest block first
  std::size_t firstBlockSize_;
  std::size_t used_ = 0;
  std::size_t reserved_ = 0;
  // The kept buffers: the first alone in firstKept_ (no allocation for the common single input
  // buffer); from the second on, all of them in kept_ (firstKept_ then empty).
  ByteBuf firstKept_;
  std::vector<ByteBuf> kept_;
};

inline std::byte* Document::allocateBytes(std::size_t n) {
  // Fast path: bump within the current block. Sizes are rounded to 8 so every pointer handed out
  // stays 8-aligned (blocks start 16-aligned), which Value and Member need.
  if (n == 0) [[unlikely]]
    return emptyStorage();
  const std::size_t rounded = (n + 7) & ~std::size_t{7};
  if (rounded < n || static_cast<std::size_t>(end_ - cur_) < rounded) [[unlikely]]
    return allocateSlow(n);
  std::byte* p = cur_;
  cur_ += rounded;
  used_ += rounded;
  return p;
}

}  // namespace netbuf
