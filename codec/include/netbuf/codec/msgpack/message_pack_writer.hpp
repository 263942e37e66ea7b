#pragma once
// MessagePackWriter: a streaming MessagePack encoder that writes straight into a ByteBuf (or, for
// zero-copy payloads, a CompositeByteBuf), always in the smallest wire form:
//
//   w.packMapHeader(2);                     // 0x82
//   w.packStr("id");  w.packUInt(7);        // 0xa2 'i' 'd'  0x07
//   w.packStr("blob"); w.packBin(payload);  // 0xa4 ...     0xc4/0xc5/0xc6 len bytes
//
// Smallest forms: non-negative integers as positive fixint / uint8 / uint16 / uint32 / uint64 and
// negative ones as negative fixint / int8 / int16 / int32 / int64, whichever fits first (so
// packInt(5) and packUInt(5) give the same byte); fixstr / str8 / str16 / str32; bin8 / bin16 /
// bin32; fixarray / array16 / array32; fixmap / map16 / map32; fixext 1/2/4/8/16 before ext8 /
// ext16 / ext32 (an ext of 0, 3, 5.. bytes is an ext8); timestamps in the 32-bit form when
// nanoseconds == 0 and 0 <= seconds <= UINT32_MAX, the 64-bit form when 0 <= seconds < 2^34, else
// the 96-bit form. Floats keep their type (float32 stays float32, float64 stays float64: the
// writer never narrows or widens).
//
// Strings: packStr(std::string_view) validates UTF-8 (short ASCII inline, else the vectorised
// validator) and throws EncoderError at the first ill-formed byte (offset() = its index in the
// string; never replaces silently); u16/u32 strings are transcoded straight into the buffer (exact
// UTF-8 length computed first, so the header is written once; a lone surrogate, or a code point
// that is a surrogate or above U+10FFFF, becomes '?' exactly as in ByteBuf::writeUtf8). The
// transcoders may use up to 3 (UTF-16) or 4 (UTF-32) bytes per unit of scratch room past the
// header, so that much room is reserved (but only the exact length is written). packStrUnchecked
// skips validation (for bytes known to be UTF-8, or a lenient round trip of a Value flagged
// invalid).
//
// pack(const Value&): a Str not flagged invalid is validated as packStr does; a Str flagged
// hasInvalidUtf8() is written raw (packStrUnchecked) so a lenient decode round-trips, except in
// canonical mode (EncoderError). Containers nested deeper than options.maxDepth (the top-level
// value is depth 1) are an EncoderError: this bounds the recursion (a tree filled in place through
// Document::allocateArray could even be cyclic).
//
// Zero copy: constructed over a CompositeByteBuf, the writer encodes into a scratch ByteBuf from
// the allocator (allocated on the first write); packBin(ByteBuf) with at least zeroCopyThreshold
// (and at least one) readable bytes then appends the scratch bytes so far (as a retained slice of
// the scratch buffer, which keeps being written after them) and the payload itself as components
// (the payload is moved in, not copied). flush() (also called by the destructor) appends what is
// still in the scratch buffer. The composite's own rules apply (past maxNumComponents it
// consolidates, which copies). Over a plain ByteBuf, packBin(ByteBuf) copies.
//
// Canonical encoding (options.canonical = true): smallest forms (always); in pack(const Value&),
// map members written in the order of their keys' encoded bytes (bytewise, a shorter prefix first:
// for Str keys this is "shorter key first, then memcmp of the bytes", because str headers grow
// with the length; keys of other types are encoded canonically into a scratch buffer and those
// bytes compared); every NaN written as the quiet NaN of its width (0x7fc00000 /
// 0x7ff8000000000000, so NaNs with different payloads encode alike; also in packFloat/packDouble);
// and an EncoderError for two keys of one map with identical encodings (Int 1 and UInt 1 included)
// and for a Str flagged invalid UTF-8. Values that differ only in member insertion order (or in
// Int/UInt signedness of a number) give identical bytes. 0.0 and -0.0 are distinct on the wire
// and stay distinct. Maps of at most 32 members are sorted without allocating (insertion sort of
// member pointers on the stack). docs/msgpack.md lists the rules.
//
// Errors: EncoderError for invalid UTF-8 (offset() = index of the bad byte), canonical violations
// and a depth above maxDepth (offset() = kNone; value()/limit() = depth and maxDepth); lengths
// above UINT32_MAX are EncoderErrors too (value() = the length, limit() = UINT32_MAX; checked
// before any byte of the payload is read). The output buffer's own errors pass through
// (IndexOutOfBoundsError past its maxCapacity, ReadOnlyBufferError, EmptyBufferError). If a pack
// call throws, the bytes already written by earlier calls stay; the failed call may have written a
// partial item (the output is then not valid MessagePack: discard it).
//
// Ownership: the writer holds a reference to the output buffer, which must outlive it. Not
// thread-safe. Not copyable or movable (in composite mode it points at its own scratch buffer).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/msgpack/detail/message_pack_bytes.hpp>
#include <netbuf/codec/value.hpp>
#include <span>
#include <string_view>

namespace netbuf {

struct MessagePackWriteOptions {
  /// Sort map keys (see above) and reject what has no canonical form.
  bool canonical = false;
  /// Composite output only: packBin(ByteBuf) payloads of at least this many bytes become
  /// components instead of being copied.
  std::size_t zeroCopyThreshold = 4096;
  /// pack(const Value&): deepest container nesting accepted (top-level value = depth 1).
  std::size_t maxDepth = 1024;
};

class MessagePackWriter {
 public:
  explicit MessagePackWriter(ByteBuf& out, const MessagePackWriteOptions& options = {}) noexcept
      : buf_(&out), startIndex_(out.writerIndex()), options_(options) {}
  explicit MessagePackWriter(CompositeByteBuf& out, const MessagePackWriteOptions& options = {},
                             ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());
  MessagePackWriter(const MessagePackWriter&) = delete;
  MessagePackWriter& operator=(const MessagePackWriter&) = delete;
  /// Flushes (composite output). An error while flushing is swallowed here (a destructor must not
  /// throw): call flush() yourself to see it.
  ~MessagePackWriter();

  MessagePackWriter& packNil() { return put1(0xc0); }
  MessagePackWriter& packBool(bool b) { return put1(b ? 0xc3 : 0xc2); }
  MessagePackWriter& packInt(std::int64_t i) {
    if (i >= 0) return packUInt(static_cast<std::uint64_t>(i));
    if (i >= -32) return put1(static_cast<std::uint8_t>(i));  // negative fixint 0xe0..0xff
    if (i >= INT8_MIN) {
      std::byte* p = reserve(2);
      p[0] = detail::wireByte(0xd0);
      p[1] = detail::wireByte(static_cast<std::uint8_t>(i));
      return commit(2);
    }
    if (i >= INT16_MIN) {
      std::byte* p = reserve(3);
      p[0] = detail::wireByte(0xd1);
      detail::store16(p + 1, static_cast<std::uint16_t>(i));
      return commit(3);
    }
    if (i >= INT32_MIN) {
      std::byte* p = reserve(5);
      p[0] = detail::wireByte(0xd2);
      detail::store32(p + 1, static_cast<std::uint32_t>(i));
      return commit(5);
    }
    std::byte* p = reserve(9);
    p[0] = detail::wireByte(0xd3);
    detail::store64(p + 1, static_cast<std::uint64_t>(i));
    return commit(9);
  }
  MessagePackWriter& packUInt(std::uint64_t u) {
    if (u < 0x80) return put1(static_cast<unsigned>(u));
    if (u <= 0xff) {
      std::byte* p = reserve(2);
      p[0] = detail::wireByte(0xcc);
      p[1] = detail::wireByte(static_cast<unsigned>(u));
      return commit(2);
    }
    if (u <= 0xffff) {
      std::byte* p = reserve(3);
      p[0] = detail::wireByte(0xcd);
      detail::store16(p + 1, static_cast<std::uint16_t>(u));
      return commit(3);
    }
    if (u <= 0xffffffff) {
      std::byte* p = reserve(5);
      p[0] = detail::wireByte(0xce);
      detail::store32(p + 1, static_cast<std::uint32_t>(u));
      return commit(5);
    }
    std::byte* p = reserve(9);
    p[0] = detail::wireByte(0xcf);
    detail::store64(p + 1, u);
    return commit(9);
  }
  MessagePackWriter& packFloat(float f) {
    std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
    if (options_.canonical && f != f) bits = 0x7fc00000U;
    std::byte* p = reserve(5);
    p[0] = detail::wireByte(0xca);
    detail::store32(p + 1, bits);
    return commit(5);
  }
  MessagePackWriter& packDouble(double d) {
    std::uint64_t bits = std::bit_cast<std::uint64_t>(d);
    if (options_.canonical && d != d) bits = 0x7ff8000000000000ULL;
    std::byte* p = reserve(9);
    p[0] = detail::wireByte(0xcb);
    detail::store64(p + 1, bits);
    return commit(9);
  }
  MessagePackWriter& packStr(std::string_view utf8) {
    const std::size_t n = utf8.size();
    if (n < 32 && buf_->isWritable(n + 1)) [[likely]] {
      // Copied and checked in one pass; committed only when the bytes were ASCII. (Only where
      // the room is there already: growth, and its errors, come after validation, as before.)
      std::byte* p = buf_->writePtrUnchecked();
      if (detail::copySmallAscii(p + 1, utf8.data(), n)) [[likely]] {
        p[0] = detail::wireByte(0xa0 | static_cast<unsigned>(n));
        return commit(n + 1);
      }
    }
    validateUtf8(utf8);
    return packStrUnchecked(utf8);
  }
  MessagePackWriter& packStr(std::u16string_view utf16);
  MessagePackWriter& packStr(std::u32string_view utf32);
  MessagePackWriter& packStrUnchecked(std::string_view bytes) {
    const std::size_t n = bytes.size();
    if (n < 32) [[likely]] {
      std::byte* p = reserve(n + 1);
      p[0] = detail::wireByte(0xa0 | static_cast<unsigned>(n));
      detail::copySmallAscii(p + 1, bytes.data(), n);  // the ASCII answer is not needed
      return commit(n + 1);
    }
    return packLong(kStr, 0, bytes.data(), n);
  }
  MessagePackWriter& packBin(std::span<const std::byte> bytes) {
    return packLong(kBin, 0, bytes.data(), bytes.size());
  }
  /// Composite output and >= zeroCopyThreshold bytes: zero copy; otherwise copied.
  MessagePackWriter& packBin(ByteBuf payload);
  /// type -1 is the timestamp type: use packTimestamp (packExt(-1, ...) is not validated).
  MessagePackWriter& packExt(std::int8_t type, std::span<const std::byte> data) {
    return packLong(kExt, type, data.data(), data.size());
  }
  /// EncoderError when nanoseconds > 999'999'999.
  MessagePackWriter& packTimestamp(Timestamp ts);
  MessagePackWriter& packArrayHeader(std::uint32_t n) {
    if (n < 16) [[likely]]
      return put1(0x90 | n);
    return packHeader(kArray, 0, n);
  }
  MessagePackWriter& packMapHeader(std::uint32_t n) {
    if (n < 16) [[likely]]
      return put1(0x80 | n);
    return packHeader(kMap, 0, n);
  }
  /// Headers only, for callers that write the payload themselves with packRaw.
  MessagePackWriter& packStrHeader(std::uint32_t n) { return packHeader(kStr, 0, n); }
  MessagePackWriter& packBinHeader(std::uint32_t n) { return packHeader(kBin, 0, n); }
  MessagePackWriter& packExtHeader(std::int8_t type, std::uint32_t n) {
    return packHeader(kExt, type, n);
  }
  /// Appends already-encoded MessagePack bytes as they are (any length; not checked).
  MessagePackWriter& packRaw(std::span<const std::byte> bytes) {
    std::byte* p = reserve(bytes.size());
    detail::copyBytes(p, bytes.data(), bytes.size());
    return commit(bytes.size());
  }
  /// A whole Value tree (canonical per the options).
  MessagePackWriter& pack(const Value& v) {
    packValue(v, 1);
    return *this;
  }

  /// Composite output: appends the scratch bytes as a component. No-op for ByteBuf output.
  void flush();

  /// Bytes written through this writer so far (headers, payloads, zero-copy components).
  std::size_t bytesWritten() const noexcept {
    if (composite_ == nullptr) return buf_->writerIndex() - startIndex_;
    return flushed_ + scratch_.readableBytes();
  }

  const MessagePackWriteOptions& options() const noexcept { return options_; }

 private:
  enum Kind : unsigned { kStr, kBin, kExt, kArray, kMap };

  /// Room for n bytes at buf_'s writerIndex; returns where they go. Growth (and, in composite
  /// mode, the scratch buffer's allocation) is out of line.
  std::byte* reserve(std::size_t n) {
    if (!buf_->isWritable(n)) [[unlikely]]
      grow(n);
    return buf_->writePtrUnchecked();
  }
  MessagePackWriter& commit(std::size_t n) noexcept {
    buf_->advanceWriterUnchecked(n);
    return *this;
  }
  MessagePackWriter& put1(unsigned byte) {
    *reserve(1) = detail::wireByte(byte);
    return commit(1);
  }
  void grow(std::size_t n);
  /// Header (smallest form for kind and n) plus n payload bytes (none for kArray/kMap).
  MessagePackWriter& packHeader(Kind kind, std::int8_t extType, std::size_t n);
  MessagePackWriter& packLong(Kind kind, std::int8_t extType, const void* data, std::size_t n);
  void packValue(const Value& v, std::size_t depth);
  /// Writes v and returns true unless it is an Array or Map (then writes nothing): inlined into
  /// the container loops so that scalars cost no call.
  bool packScalar(const Value& v);
  void packContainer(const Value& v, std::size_t depth);
  void packMapCanonical(std::span<const Member> members, std::size_t depth);
  void packMapCanonicalGeneric(std::span<const Member> members, std::size_t depth);
  /// Throws EncoderError at the first ill-formed byte of s (returns when s is valid).
  static void validateUtf8(std::string_view s);
  [[noreturn]] static void throwTooLong(const char* what, std::size_t n);

  ByteBuf* buf_;                           // where bytes go: the output or the scratch buffer
  CompositeByteBuf* composite_ = nullptr;  // composite output, or null
  ByteBufAllocator* alloc_ = nullptr;      // composite mode: where the scratch buffer comes from
  ByteBuf scratch_;  // composite mode: [readerIndex, writerIndex) = bytes not yet appended
  std::size_t startIndex_ = 0;  // buf_'s writerIndex at construction (ByteBuf mode)
  std::size_t flushed_ = 0;     // composite mode: bytes already appended as components
  MessagePackWriteOptions options_;
};

namespace msgpack {
/// Encodes v into out (appending at its writerIndex).
void encode(const Value& v, ByteBuf& out, const MessagePackWriteOptions& options = {});
/// Encodes v into a new buffer from alloc.
ByteBuf encode(const Value& v, const MessagePackWriteOptions& options = {},
               ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());
}  // namespace msgpack

}  // namespace netbuf
