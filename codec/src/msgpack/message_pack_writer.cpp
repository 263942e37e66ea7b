#include <netbuf/codec/msgpack/message_pack_writer.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <utility>
#include <vector>

namespace netbuf {

using detail::copyBytes;
using detail::store16;
using detail::store32;
using detail::store64;
using detail::wireByte;

namespace {

constexpr std::size_t kScratchCapacity = 256;
constexpr std::size_t kMaxLength = UINT32_MAX;
// Maps up to this many members are sorted on the stack in canonical mode.
constexpr std::size_t kStackSortMembers = 32;

[[noreturn]] void throwInvalidUtf8(std::size_t at, std::size_t size) {
  throw EncoderError(
      fmt::format("MessagePack encoder: str of {} bytes is not valid UTF-8 at byte {}", size, at),
      at);
}

[[noreturn]] void throwInvalidFlaggedStr(std::size_t size) {
  throw EncoderError(
      fmt::format("MessagePack encoder: str of {} bytes flagged invalid UTF-8 has no canonical "
                  "form",
                  size),
      CodecError::kNone, size);
}

[[noreturn]] void throwDepth(std::size_t depth, std::size_t limit) {
  throw EncoderError(
      fmt::format("MessagePack encoder: nesting depth {} exceeds maxDepth {}", depth, limit),
      CodecError::kNone, depth, limit);
}

[[noreturn]] void throwBadNanoseconds(std::uint32_t ns) {
  throw EncoderError(fmt::format("MessagePack encoder: timestamp nanoseconds {} exceed {}", ns,
                                 Value::kMaxNanoseconds),
                     CodecError::kNone, ns, Value::kMaxNanoseconds);
}

[[noreturn]] void throwDuplicateKey(const Value& key, std::size_t members) {
  std::string shown = key.toDebugString();
  if (shown.size() > 64) shown = shown.substr(0, 61) + "...";
  throw EncoderError(fmt::format("MessagePack encoder: duplicate map key {} in a map of {} "
                                 "members (canonical mode)",
                                 shown, members),
                     CodecError::kNone);
}

/// A Str map key being sorted in canonical mode.
struct StrKey {
  const char* data;
  std::size_t size;
  const Member* member;
};

/// Bytewise comparison of sizeof(W) bytes at p and q as one big-endian word.
template <class W>
inline int compareWord(const char* p, const char* q) noexcept {
  W a, c;
  std::memcpy(&a, p, sizeof(W));
  std::memcpy(&c, q, sizeof(W));
  if (a == c) return 0;
  if constexpr (std::endian::native == std::endian::little) {
    if constexpr (sizeof(W) == 8) {
      a = __builtin_bswap64(a);
      c = __builtin_bswap64(c);
    } else {
      a = __builtin_bswap32(a);
      c = __builtin_bswap32(c);
    }
  }
  return a < c ? -1 : 1;
}

/// Canonical order of two Str keys: the order of their encodings, which for strings is shorter
/// first (str headers grow with the length), then the bytes.
inline int compareStrKeys(const StrKey& x, const StrKey& y) noexcept {
  if (x.size != y.size) return x.size < y.size ? -1 : 1;
  const std::size_t n = x.size;
  if (n > 64) return std::memcmp(x.data, y.data, n);
  // Short keys (the usual case) share prefixes ("field_1", "field_2"): compare big-endian words
  // (the last one overlapping the previous: those bytes are known equal) instead of calling memcmp.
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8)
      if (const int c = compareWord<std::uint64_t>(x.data + i, y.data + i); c != 0) return c;
    return n % 8 == 0 ? 0 : compareWord<std::uint64_t>(x.data + n - 8, y.data + n - 8);
  }
  if (n >= 4) {
    if (const int c = compareWord<std::uint32_t>(x.data, y.data); c != 0) return c;
    return compareWord<std::uint32_t>(x.data + n - 4, y.data + n - 4);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<unsigned char>(x.data[i]);
    const auto c = static_cast<unsigned char>(y.data[i]);
    if (a != c) return a < c ? -1 : 1;
  }
  return 0;
}

}  // namespace

MessagePackWriter::MessagePackWriter(CompositeByteBuf& out, const MessagePackWriteOptions& options,
                                     ByteBufAllocator& alloc)
    : buf_(&scratch_), composite_(&out), alloc_(&alloc), options_(options) {}

MessagePackWriter::~MessagePackWriter() {
  try {
    flush();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; flush() reports
  }
}

void MessagePackWriter::grow(std::size_t n) {
  if (composite_ != nullptr) {
    // The scratch buffer is created on the first write. Once some of its bytes were flushed, its
    // storage is shared with the composite's components: a fresh buffer (holding only the
    // unflushed bytes) avoids copying the flushed ones along when it grows.
    if (!scratch_.isValid() || scratch_.readerIndex() != 0) {
      const std::size_t pending = scratch_.isValid() ? scratch_.readableBytes() : 0;
      ByteBuf fresh = alloc_->buffer(std::max(kScratchCapacity, pending + n));
      if (pending != 0) fresh.writeBytes(scratch_.readableSpan());
      scratch_ = std::move(fresh);
    }
  }
  buf_->ensureWritable(n);
}

void MessagePackWriter::throwTooLong(const char* what, std::size_t n) {
  throw EncoderError(fmt::format("MessagePack encoder: {} length {} exceeds the format's limit {}",
                                 what, n, kMaxLength),
                     CodecError::kNone, n, kMaxLength);
}

void MessagePackWriter::validateUtf8(std::string_view s) {
  if (s.size() > kMaxLength) throwTooLong("str", s.size());  // before reading a byte of it
  const std::size_t bad =
      utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(s.data()), s.size());
  if (bad != utf8::npos) throwInvalidUtf8(bad, s.size());
}

namespace {
/// Size of the smallest header for kind and length n.
std::size_t headerSize(unsigned kind, std::size_t n) {
  // kind values follow MessagePackWriter::Kind: 0 str, 1 bin, 2 ext, 3 array, 4 map.
  switch (kind) {
    case 0:
      return n < 32 ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : 5;
    case 1:
      return n <= 0xff ? 2 : n <= 0xffff ? 3 : 5;
    case 2:
      if (n == 1 || n == 2 || n == 4 || n == 8 || n == 16) return 2;
      return n <= 0xff ? 3 : n <= 0xffff ? 4 : 6;
    default:
      return n < 16 ? 1 : n <= 0xffff ? 3 : 5;
  }
}

/// Writes the header for kind and n at p (headerSize(kind, n) bytes).
void writeHeader(std::byte* p, unsigned kind, std::int8_t extType, std::size_t n) {
  const auto n32 = static_cast<std::uint32_t>(n);
  const std::byte type = static_cast<std::byte>(extType);
  switch (kind) {
    case 0:  // str
      if (n < 32) {
        p[0] = wireByte(0xa0 | n32);
      } else if (n <= 0xff) {
        p[0] = wireByte(0xd9);
        p[1] = wireByte(n32);
      } else if (n <= 0xffff) {
        p[0] = wireByte(0xda);
        store16(p + 1, static_cast<std::uint16_t>(n));
      } else {
        p[0] = wireByte(0xdb);
        store32(p + 1, n32);
      }
      return;
    case 1:  // bin
      if (n <= 0xff) {
        p[0] = wireByte(0xc4);
        p[1] = wireByte(n32);
      } else if (n <= 0xffff) {
        p[0] = wireByte(0xc5);
        store16(p + 1, static_cast<std::uint16_t>(n));
      } else {
        p[0] = wireByte(0xc6);
        store32(p + 1, n32);
      }
      return;
    case 2:  // ext
      switch (n) {
        case 1:
          p[0] = wireByte(0xd4), p[1] = type;
          return;
        case 2:
          p[0] = wireByte(0xd5), p[1] = type;
          return;
        case 4:
          p[0] = wireByte(0xd6), p[1] = type;
          return;
        case 8:
          p[0] = wireByte(0xd7), p[1] = type;
          return;
        case 16:
          p[0] = wireByte(0xd8), p[1] = type;
          return;
        default:
          break;
      }
      if (n <= 0xff) {
        p[0] = wireByte(0xc7);
        p[1] = wireByte(n32);
        p[2] = type;
      } else if (n <= 0xffff) {
        p[0] = wireByte(0xc8);
        store16(p + 1, static_cast<std::uint16_t>(n));
        p[3] = type;
      } else {
        p[0] = wireByte(0xc9);
        store32(p + 1, n32);
        p[5] = type;
      }
      return;
    default: {  // array (3) / map (4)
      const bool map = kind == 4;
      if (n < 16) {
        p[0] = wireByte((map ? 0x80U : 0x90U) | n32);
      } else if (n <= 0xffff) {
        p[0] = wireByte(map ? 0xde : 0xdc);
        store16(p + 1, static_cast<std::uint16_t>(n));
      } else {
        p[0] = wireByte(map ? 0xdf : 0xdd);
        store32(p + 1, n32);
      }
      return;
    }
  }
}

const char* kindName(unsigned kind) {
  static constexpr const char* kNames[] = {"str", "bin", "ext", "array", "map"};
  return kNames[kind];
}
}  // namespace

MessagePackWriter& MessagePackWriter::packHeader(Kind kind, std::int8_t extType, std::size_t n) {
  if (n > kMaxLength) [[unlikely]]
    throwTooLong(kindName(kind), n);
  const std::size_t h = headerSize(kind, n);
  writeHeader(reserve(h), kind, extType, n);
  return commit(h);
}

MessagePackWriter& MessagePackWriter::packLong(Kind kind, std::int8_t extType, const void* data,
                                               std::size_t n) {
  // The length is checked before the payload is touched (a fake span of 2^33 bytes is never read).
  if (n > kMaxLength) [[unlikely]]
    throwTooLong(kindName(kind), n);
  const std::size_t h = headerSize(kind, n);
  std::byte* p = reserve(h + n);
  writeHeader(p, kind, extType, n);
  copyBytes(p + h, data, n);
  return commit(h + n);
}

MessagePackWriter& MessagePackWriter::packStr(std::u16string_view utf16) {
  // Every unit gives at least one byte: checking the unit count first rejects a huge view
  // without reading it (and keeps 3 * size from overflowing).
  if (utf16.size() > kMaxLength) throwTooLong("str", utf16.size());
  const std::size_t n = utf8::utf8Bytes(utf16);
  if (n > kMaxLength) throwTooLong("str", n);
  const std::size_t h = headerSize(kStr, n);
  std::byte* p = reserve(h + utf8::utf8MaxBytes(utf16.size()));  // the kernel's scratch bound
  writeHeader(p, kStr, 0, n);
  const std::size_t written = utf8::encodeUtf8(utf16, p + h);
  return commit(h + written);  // written == n (the exact-length contract of utf8Bytes)
}

MessagePackWriter& MessagePackWriter::packStr(std::u32string_view utf32) {
  if (utf32.size() > kMaxLength) throwTooLong("str", utf32.size());
  const std::size_t n = utf8::utf8Bytes(utf32);
  if (n > kMaxLength) throwTooLong("str", n);
  const std::size_t h = headerSize(kStr, n);
  std::byte* p = reserve(h + 4 * utf32.size());  // the kernel's scratch bound
  writeHeader(p, kStr, 0, n);
  const std::size_t written = utf8::encodeUtf8(utf32, p + h);
  return commit(h + written);
}

MessagePackWriter& MessagePackWriter::packBin(ByteBuf payload) {
  const std::size_t n = payload.readableBytes();
  if (composite_ == nullptr || n < options_.zeroCopyThreshold || n == 0)
    return packBin(payload.readableSpan());
  if (n > kMaxLength) throwTooLong("bin", n);
  packHeader(kBin, 0, n);
  flush();
  composite_->addComponent(true, std::move(payload));
  flushed_ += n;
  return *this;
}

MessagePackWriter& MessagePackWriter::packTimestamp(Timestamp ts) {
  const std::int64_t s = ts.seconds;
  const std::uint32_t ns = ts.nanoseconds;
  if (ns > Value::kMaxNanoseconds) throwBadNanoseconds(ns);
  if (s >= 0 && (static_cast<std::uint64_t>(s) >> 34) == 0) {
    const auto us = static_cast<std::uint64_t>(s);
    if (ns == 0 && (us >> 32) == 0) {  // timestamp 32: fixext4, uint32 seconds
      std::byte* p = reserve(6);
      p[0] = wireByte(0xd6);
      p[1] = wireByte(0xff);
      store32(p + 2, static_cast<std::uint32_t>(us));
      return commit(6);
    }
    std::byte* p = reserve(10);  // timestamp 64: fixext8, ns in the upper 30 bits, s in 34
    p[0] = wireByte(0xd7);
    p[1] = wireByte(0xff);
    store64(p + 2, (std::uint64_t{ns} << 34) | us);
    return commit(10);
  }
  std::byte* p = reserve(15);  // timestamp 96: ext8 length 12, uint32 ns, int64 s
  p[0] = wireByte(0xc7);
  p[1] = wireByte(12);
  p[2] = wireByte(0xff);
  store32(p + 3, ns);
  store64(p + 7, static_cast<std::uint64_t>(s));
  return commit(15);
}

void MessagePackWriter::flush() {
  if (composite_ == nullptr || !scratch_.isValid()) return;
  const std::size_t n = scratch_.readableBytes();
  if (n == 0) return;
  // A retained slice: the scratch buffer keeps being written after these bytes (its later bytes
  // are never seen through the slice), so a zero-copy payload costs no new scratch allocation.
  composite_->addComponent(true, scratch_.retainedSlice());
  scratch_.readerIndex(scratch_.writerIndex());
  flushed_ += n;
  if (scratch_.writableBytes() < 64) scratch_.reset();  // next write starts a fresh one
}

[[gnu::always_inline]] inline bool MessagePackWriter::packScalar(const Value& v) {
  switch (v.type()) {
    case ValueType::Nil:
      packNil();
      return true;
    case ValueType::Bool:
      packBool(v.asBool());
      return true;
    case ValueType::Int:
      packInt(v.asInt64());
      return true;
    case ValueType::UInt:
      packUInt(v.asUInt64());
      return true;
    case ValueType::Float32:
      packFloat(v.asFloat32());
      return true;
    case ValueType::Float64:
      packDouble(v.asDouble());
      return true;
    case ValueType::Str: {
      const std::string_view s = v.asStr();
      if (v.hasInvalidUtf8()) [[unlikely]] {
        if (options_.canonical) throwInvalidFlaggedStr(s.size());
        packStrUnchecked(s);
      } else {
        packStr(s);
      }
      return true;
    }
    case ValueType::Bin:
      packBin(v.asBin());
      return true;
    case ValueType::Ext:
      packExt(v.extType(), v.extData());
      return true;
    case ValueType::Timestamp:
      packTimestamp(v.asTimestamp());
      return true;
    case ValueType::Array:
    case ValueType::Map:
      break;
  }
  return false;
}

void MessagePackWriter::packContainer(const Value& v, std::size_t depth) {
  if (depth > options_.maxDepth) [[unlikely]]
    throwDepth(depth, options_.maxDepth);
  if (v.isArray()) {
    const std::span<const Value> elements = v.asArray();
    packArrayHeader(static_cast<std::uint32_t>(elements.size()));
    for (const Value& e : elements)
      if (!packScalar(e)) packContainer(e, depth + 1);
    return;
  }
  const std::span<const Member> members = v.asMap();
  if (options_.canonical && members.size() > 1) {
    packMapCanonical(members, depth);
    return;
  }
  packMapHeader(static_cast<std::uint32_t>(members.size()));
  for (const Member& m : members) {
    if (!packScalar(m.key)) packContainer(m.key, depth + 1);
    if (!packScalar(m.value)) packContainer(m.value, depth + 1);
  }
}

void MessagePackWriter::packValue(const Value& v, std::size_t depth) {
  if (!packScalar(v)) packContainer(v, depth);
}

void MessagePackWriter::packMapCanonical(std::span<const Member> members, std::size_t depth) {
  // All keys Str (the common case): sort (key bytes, length, member) records by (length, bytes),
  // which is the order of the keys' encodings, without encoding anything. One pass collects the
  // records and bails out to the generic path at the first key of another type.
  const std::size_t n = members.size();
  StrKey onStack[kStackSortMembers];
  std::vector<StrKey> onHeap;
  StrKey* keys = onStack;
  if (n > kStackSortMembers) {
    onHeap.resize(n);
    keys = onHeap.data();
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Member& m = members[i];
    if (!m.key.isStr()) [[unlikely]] {
      packMapCanonicalGeneric(members, depth);
      return;
    }
    const std::string_view k = m.key.asStr();
    keys[i] = {k.data(), k.size(), &m};
  }
  if (n <= kStackSortMembers) {
    // Insertion sort: small n, few moves. An element stops at the first key not greater than it,
    // so a duplicate always meets its twin here.
    for (std::size_t i = 1; i < n; ++i) {
      const StrKey x = keys[i];
      std::size_t j = i;
      int c = -1;
      for (; j > 0 && (c = compareStrKeys(x, keys[j - 1])) < 0; --j) keys[j] = keys[j - 1];
      if (c == 0) [[unlikely]]
        throwDuplicateKey(x.member->key, n);
      keys[j] = x;
    }
  } else {
    std::sort(keys, keys + n,
              [](const StrKey& x, const StrKey& y) { return compareStrKeys(x, y) < 0; });
    for (std::size_t i = 1; i < n; ++i)
      if (compareStrKeys(keys[i - 1], keys[i]) == 0) throwDuplicateKey(keys[i].member->key, n);
  }
  packMapHeader(static_cast<std::uint32_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const Member& m = *keys[i].member;
    if (m.key.hasInvalidUtf8()) [[unlikely]]
      throwInvalidFlaggedStr(keys[i].size);
    packStr(std::string_view(keys[i].data, keys[i].size));
    if (!packScalar(m.value)) packContainer(m.value, depth + 1);
  }
}

void MessagePackWriter::packMapCanonicalGeneric(std::span<const Member> members,
                                                std::size_t depth) {
  // Keys of mixed types: encode each key (canonically) into one scratch buffer, sort by those
  // bytes, then copy the key bytes out in that order. Correctness over speed: such maps are rare.
  const std::size_t n = members.size();
  ByteBufAllocator& alloc = alloc_ != nullptr ? *alloc_ : buf_->alloc();
  ByteBuf keys = alloc.buffer(std::max<std::size_t>(64, n * 4));
  struct Key {
    std::size_t offset;
    std::size_t length;
    const Member* member;
  };
  std::vector<Key> order;
  order.reserve(n);
  {
    MessagePackWriter kw(keys, options_);
    for (const Member& m : members) {
      const std::size_t at = keys.writerIndex();
      kw.packValue(m.key, depth + 1);
      order.push_back({at, keys.writerIndex() - at, &m});
    }
  }
  const std::byte* base = keys.readPtr();
  auto compare = [base](const Key& x, const Key& y) {
    const std::size_t common = std::min(x.length, y.length);
    const int c = std::memcmp(base + x.offset, base + y.offset, common);  // lengths are >= 1
    if (c != 0) return c;
    return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
  };
  std::sort(order.begin(), order.end(),
            [&compare](const Key& x, const Key& y) { return compare(x, y) < 0; });
  for (std::size_t i = 1; i < n; ++i)
    if (compare(order[i - 1], order[i]) == 0) throwDuplicateKey(order[i].member->key, n);
  packMapHeader(static_cast<std::uint32_t>(n));
  for (const Key& k : order) {
    packRaw(std::span<const std::byte>(base + k.offset, k.length));
    packValue(k.member->value, depth + 1);
  }
}

namespace msgpack {

void encode(const Value& v, ByteBuf& out, const MessagePackWriteOptions& options) {
  MessagePackWriter w(out, options);
  w.pack(v);
}

ByteBuf encode(const Value& v, const MessagePackWriteOptions& options, ByteBufAllocator& alloc) {
  ByteBuf out = alloc.buffer();
  encode(v, out, options);
  return out;
}

}  // namespace msgpack

}  // namespace netbuf
