#pragma once
// Decoding MessagePack: limits and options, a pull reader for typed decoding without a tree, and
// whole-value decoding into a Document (zero copy).
//
//   Document doc = msgpack::decode(frame);          // Str/Bin/Ext view into `frame` (kept alive)
//   std::string_view name = doc.root()["name"].asStr();
//   ByteBuf blob = doc.retainedSlice(doc.root()["blob"]);   // a retained slice, no copy
//
//   MessagePackReader r(frame.readableSpan());      // pull: no tree at all
//   std::uint32_t n = r.readArrayHeader();
//   std::int64_t id = r.readInt64();  std::string_view m = r.readStr();
//
// Zero copy: Str, Bin and Ext values (and readStr/readBin/readExt results) point into the input.
// Decoding a 64 MiB bin costs what decoding a 64 KiB one does. For ByteBuf input the Document
// keeps the buffer alive (Document::keepAlive); for span input the caller keeps it alive.
//
// Decoding is one pass and iterative (an explicit stack, 32 levels inline, then on the heap, never
// deeper than maxDepth): no recursion, so a 100,000-deep nesting bomb costs one DepthLimit error,
// never a stack overflow. Arrays and maps are allocated in the Document's arena straight from their
// declared counts (after the checks below), and their elements are decoded in place.
//
// Integers: Int for negative numbers, UInt for non-negative ones, whatever the wire form (int8 0x05
// decodes to UInt 5; uint64 holding 1 to UInt 1). float32 -> Float32, float64 -> Float64.
//
// Validation and limits, all checked BEFORE anything is allocated or copied, each a
// MessagePackError with its code and the offset of the offending header:
//  - 0xc1 (ReservedByte); input ending inside a value (Truncated: the offset is the header of the
//    item that does not fit, or the end of the input when an element is missing altogether).
//  - a declared str/bin/ext length above its limit or past the end of the input (the limit error
//    when it exceeds the limit, else Truncated); an array/map count above maxContainerLength, or
//    above the bytes left (every element needs at least one byte, every map pair two: Truncated),
//    so a 4 GiB declared length or a 2^32-element array in a 10-byte message allocates nothing.
//  - nesting deeper than maxDepth (the top-level value is depth 1; a container at depth maxDepth
//    may hold scalars but not containers) -> DepthLimit; decoding is iterative.
//  - a top-level value longer than maxMessageSize bytes -> MessageSizeLimit (offset: the value's
//    first byte; value: the end the value needs at least, relative to its first byte). Decoding
//    never looks past maxMessageSize bytes of the value.
//  - str: UTF-8 validated (vectorised; short ASCII strings take a word-at-a-time fast path).
//    Strict (default): InvalidUtf8 at the offset of the str's header (the message names the offset
//    of the bad byte inside it). Lenient: the raw bytes are kept and the Value is flagged
//    (Value::hasInvalidUtf8()); never replaced.
//  - ext -1 (timestamp): data length must be 4, 8 or 12 and nanoseconds <= 999999999, else
//    InvalidTimestamp; decodes to a Timestamp Value (all three forms, and ext8 carrying them).
//  - maps: duplicate keys -> DuplicateKey at the offset of the earliest second occurrence, unless
//    allowDuplicateKeys (then all pairs are kept, in order). Two keys are the same when the
//    canonical encoder would write them alike: Value equality (Int 1 == UInt 1), except that floats
//    compare by their bits with every NaN the same (two NaN keys are duplicates; 0.0 and -0.0 are
//    not), so any map this decoder accepts can be encoded canonically. Maps of up to 6 pairs
//    compare keys pairwise, 7-64 pairs go through a small fingerprint hash table, larger maps sort
//    key indices (O(n log n), never quadratic).
//  - memory: a decoded tree takes at most 16 arena bytes per input byte (a 16-byte Value per
//    element, a 32-byte Member per pair of >= 2 bytes; empty containers take none), so
//    maxMessageSize also bounds a Document's memory (64 MiB -> at most 1 GiB): lower it for
//    servers with many connections.
// Offsets are relative to the start of the input plus `baseOffset` (a stream offset in pipelines).
// After an error the Document passed in may hold arena space of the failed attempt; its root and
// kept buffers are unchanged.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/detail/message_pack_bytes.hpp>
#include <netbuf/codec/msgpack/message_pack_error.hpp>
#include <netbuf/codec/value.hpp>
#include <span>
#include <string_view>
#include <type_traits>

namespace netbuf {

struct MessagePackLimits {
  /// Nesting of arrays and maps (the top-level container is depth 1).
  std::size_t maxDepth = 512;
  std::size_t maxContainerLength = std::size_t{1} << 24;  // elements (array) or pairs (map)
  std::size_t maxStrLength = std::size_t{64} << 20;
  std::size_t maxBinLength = std::size_t{64} << 20;
  std::size_t maxExtLength = std::size_t{64} << 20;
  /// Bytes of one top-level value (headers and payloads).
  std::size_t maxMessageSize = std::size_t{64} << 20;
};

struct MessagePackReadOptions {
  MessagePackLimits limits;
  /// Keep invalid UTF-8 in a str as raw bytes flagged on the Value instead of failing.
  bool lenientUtf8 = false;
  /// Keep maps with repeated keys instead of failing with DuplicateKey.
  bool allowDuplicateKeys = false;
};

/// Pull reader over contiguous bytes. Each read* call consumes exactly one item (a scalar, or a
/// container's header: the caller then reads its elements/pairs) and throws MessagePackError
/// (TypeMismatch naming the expected and the actual wire type; Truncated; ReservedByte; limits;
/// IntegerOverflow) without consuming anything when it fails. Length limits and UTF-8 validation
/// apply as above; depth is the caller's business except in skip() and readValue() (which enforce
/// maxDepth and maxMessageSize). Common forms (fixint, fixstr of ASCII, fixarray, fixmap, nil,
/// bool) are decoded inline; everything else goes through out-of-line code.
///
/// The reader views the input (never copies it); the caller keeps it alive while the views it
/// returned are used. Not thread-safe.
class MessagePackReader {
 public:
  struct ExtRef {
    std::int8_t type;
    std::span<const std::byte> data;
  };

  explicit MessagePackReader(std::span<const std::byte> input,
                             const MessagePackReadOptions& options = {},
                             std::uint64_t baseOffset = 0) noexcept
      : input_(input), baseOffset_(baseOffset), options_(options) {}

  /// Bytes consumed so far (relative to the input start, without baseOffset).
  std::size_t position() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return input_.size() - pos_; }
  bool atEnd() const noexcept { return pos_ == input_.size(); }
  /// The stream offset of the next item (position() + baseOffset).
  std::uint64_t offset() const noexcept { return baseOffset_ + pos_; }

  /// The type of the next item (Int for negative integers, UInt for non-negative ones, Timestamp
  /// for ext -1); Truncated at the end; ReservedByte for 0xc1. Consumes nothing.
  ValueType nextType() const;

  void readNil() {
    if (pos_ < input_.size() && byteAt(pos_) == 0xc0) [[likely]] {
      ++pos_;
      return;
    }
    throwUnexpected(ValueType::Nil);
  }
  /// Consumes a nil and returns true, or returns false without consuming anything (also at the
  /// end of the input).
  bool tryReadNil() noexcept {
    if (pos_ < input_.size() && byteAt(pos_) == 0xc0) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool readBool() {
    if (pos_ < input_.size()) [[likely]] {
      const std::uint8_t b = byteAt(pos_);
      if (b == 0xc2 || b == 0xc3) {
        ++pos_;
        return b == 0xc3;
      }
    }
    throwUnexpected(ValueType::Bool);
  }
  /// Any integer that fits (IntegerOverflow otherwise).
  std::int64_t readInt64() {
    if (pos_ < input_.size()) [[likely]] {
      const std::uint8_t b = byteAt(pos_);
      if (b <= 0x7f || b >= 0xe0) {
        ++pos_;
        return static_cast<std::int8_t>(b);
      }
    }
    return readInt64Slow();
  }
  std::uint64_t readUInt64() {
    if (pos_ < input_.size() && byteAt(pos_) <= 0x7f) [[likely]]
      return byteAt(pos_++);
    return readUInt64Slow();
  }
  /// Any integer that fits T (a narrower integer type; bool excluded): IntegerOverflow naming the
  /// value and T's range otherwise, without consuming anything.
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) T readInteger() {
    IntegerItem it = peekInteger();
    using L = std::numeric_limits<T>;
    if (it.negative) {
      if constexpr (std::is_signed_v<T>) {
        if (static_cast<std::int64_t>(it.bits) >= static_cast<std::int64_t>(L::min())) {
          pos_ += it.size;
          return static_cast<T>(static_cast<std::int64_t>(it.bits));
        }
      }
    } else if (it.bits <= static_cast<std::uint64_t>(L::max())) {
      pos_ += it.size;
      return static_cast<T>(it.bits);
    }
    throwIntegerOverflow(it, static_cast<std::int64_t>(L::min()),
                         static_cast<std::uint64_t>(L::max()));
  }
  /// Float32 only (a float64 or integer is a TypeMismatch: types are kept exact).
  float readFloat32();
  /// Float64 or Float32 (widened exactly).
  double readDouble();
  /// Validated UTF-8 (strict even in lenient mode: the typed API wants text), a view.
  std::string_view readStr() {
    if (pos_ < input_.size()) [[likely]] {
      const std::uint8_t b = byteAt(pos_);
      const std::size_t n = b & 0x1fU;
      if ((b & 0xe0U) == 0xa0U && n < input_.size() - pos_ && n <= options_.limits.maxStrLength &&
          detail::isShortAscii(input_.data() + pos_ + 1, n)) {
        const char* p = reinterpret_cast<const char*>(input_.data() + pos_ + 1);
        pos_ += 1 + n;
        return {p, n};
      }
    }
    return readStrSlow();
  }
  std::span<const std::byte> readBin();
  /// Any ext other than -1 (a timestamp is a TypeMismatch here: use readTimestamp).
  ExtRef readExt();
  Timestamp readTimestamp();
  std::uint32_t readArrayHeader() {
    if (pos_ < input_.size()) [[likely]] {
      const std::uint8_t b = byteAt(pos_);
      const std::size_t n = b & 0x0fU;
      if ((b & 0xf0U) == 0x90U && n < input_.size() - pos_ &&
          n <= options_.limits.maxContainerLength) {
        ++pos_;
        return static_cast<std::uint32_t>(n);
      }
    }
    return readContainerSlow(false);
  }
  std::uint32_t readMapHeader() {
    if (pos_ < input_.size()) [[likely]] {
      const std::uint8_t b = byteAt(pos_);
      const std::size_t n = b & 0x0fU;
      if ((b & 0xf0U) == 0x80U && 2 * n < input_.size() - pos_ &&
          n <= options_.limits.maxContainerLength) {
        ++pos_;
        return static_cast<std::uint32_t>(n);
      }
    }
    return readContainerSlow(true);
  }
  /// Consumes one complete value (containers included), checking structure, limits, depth and
  /// maxMessageSize; no tree, and no UTF-8, timestamp or duplicate-key validation.
  void skip();
  /// Decodes the next complete value into doc's arena (views into the input) and returns it. All
  /// of the header comment's checks apply; the value is not set as doc's root.
  Value readValue(Document& doc);

  const MessagePackReadOptions& options() const noexcept { return options_; }

  /// Nesting depth for code that recurses over the pull API (the typed API does): a Scope
  /// entered per container raises depth() and throws DepthLimit (offset: the reader's position)
  /// past limits.maxDepth, so a nesting bomb fails cleanly instead of exhausting the stack.
  class Scope {
   public:
    explicit Scope(MessagePackReader& r) : r_(r) {
      if (++r_.depth_ > r_.options_.limits.maxDepth) [[unlikely]] {
        --r_.depth_;
        r_.throwDepth();
      }
    }
    ~Scope() { --r_.depth_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    MessagePackReader& r_;
  };
  std::size_t depth() const noexcept { return depth_; }

 private:
  [[noreturn]] void throwDepth() const;
  /// An integer item at pos_, not consumed: its two's complement bits, sign and encoded size.
  struct IntegerItem {
    std::uint64_t bits;
    bool negative;
    std::uint8_t size;
  };

  std::uint8_t byteAt(std::size_t i) const noexcept {
    return std::to_integer<std::uint8_t>(input_[i]);
  }
  IntegerItem peekInteger() const;
  std::int64_t readInt64Slow();
  std::uint64_t readUInt64Slow();
  std::string_view readStrSlow();
  std::uint32_t readContainerSlow(bool map);
  /// Truncated / ReservedByte / TypeMismatch for an item that is not `expected`.
  [[noreturn]] void throwUnexpected(ValueType expected) const;
  [[noreturn]] void throwIntegerOverflow(const IntegerItem& it, std::int64_t min,
                                         std::uint64_t max) const;

  std::span<const std::byte> input_;
  std::size_t pos_ = 0;
  std::uint64_t baseOffset_;
  MessagePackReadOptions options_;
  std::size_t depth_ = 0;
};

namespace msgpack {
/// Decodes exactly one value from `input` into `into` (root set; Str/Bin/Ext view into input,
/// which the caller keeps alive). Bytes after the value -> TrailingBytes (offset: the first one).
void decode(std::span<const std::byte> input, Document& into,
            const MessagePackReadOptions& options = {}, std::uint64_t baseOffset = 0);
/// As above over input's readable bytes; `into` keeps input alive (only when decoding succeeds).
void decode(ByteBuf input, Document& into, const MessagePackReadOptions& options = {},
            std::uint64_t baseOffset = 0);
Document decode(ByteBuf input, const MessagePackReadOptions& options = {});
/// Decodes the first value of `input` (more may follow) and returns the bytes it took.
std::size_t decodeOne(std::span<const std::byte> input, Document& into,
                      const MessagePackReadOptions& options = {}, std::uint64_t baseOffset = 0);
}  // namespace msgpack

}  // namespace netbuf
