#include <netbuf/codec/msgpack/message_pack_reader.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <new>
#include <utility>
#include <vector>
#include "message_pack_wire.hpp"

namespace netbuf {

using namespace detail;  // NOLINT: the internal wire helpers

namespace {

ValueType wireType(const Head& h) noexcept {
  switch (h.kind) {
    case Kind::UInt:
      return ValueType::UInt;
    case Kind::Int:
      return ValueType::Int;
    case Kind::Nil:
    case Kind::Reserved:
      return ValueType::Nil;
    case Kind::Bool:
      return ValueType::Bool;
    case Kind::F32:
      return ValueType::Float32;
    case Kind::F64:
      return ValueType::Float64;
    case Kind::Str:
      return ValueType::Str;
    case Kind::Bin:
      return ValueType::Bin;
    case Kind::Array:
      return ValueType::Array;
    case Kind::Map:
      return ValueType::Map;
    case Kind::Ext:
      return h.type == -1 ? ValueType::Timestamp : ValueType::Ext;
  }
  return ValueType::Nil;
}

/// Decodes a timestamp's data; false (and `why`) when it is not one of the three valid forms.
bool decodeTimestamp(const std::byte* d, std::uint64_t n, Timestamp& out, std::string& why) {
  if (n == 4) {
    out = {static_cast<std::int64_t>(loadBE<std::uint32_t>(d)), 0};
    return true;
  }
  if (n == 8) {
    const std::uint64_t x = loadBE<std::uint64_t>(d);
    const auto ns = static_cast<std::uint32_t>(x >> 34);
    if (ns > Value::kMaxNanoseconds) {
      why = fmt::format("timestamp nanoseconds {} exceed {}", ns, Value::kMaxNanoseconds);
      return false;
    }
    out = {static_cast<std::int64_t>(x & ((std::uint64_t{1} << 34) - 1)), ns};
    return true;
  }
  if (n == 12) {
    const std::uint32_t ns = loadBE<std::uint32_t>(d);
    if (ns > Value::kMaxNanoseconds) {
      why = fmt::format("timestamp nanoseconds {} exceed {}", ns, Value::kMaxNanoseconds);
      return false;
    }
    out = {static_cast<std::int64_t>(loadBE<std::uint64_t>(d + 4)), ns};
    return true;
  }
  why = fmt::format("timestamp of {} bytes (must be 4, 8 or 12)", n);
  return false;
}

// ---------------------------------------------------------------- errors (out of line)

[[noreturn]] void throwTruncated(std::uint64_t offset, std::uint64_t need, std::uint64_t have) {
  detail::throwMessagePackError(
      MessagePackErrc::Truncated,
      fmt::format("item needs {} bytes, the input has {} left", need, have), offset, need, have);
}

[[noreturn]] void throwReserved(std::uint64_t offset) {
  detail::throwMessagePackError(MessagePackErrc::ReservedByte, "reserved byte 0xc1", offset, 0xc1);
}

[[noreturn]] void throwLimit(MessagePackErrc code, const char* what, const char* limitName,
                             std::uint64_t value, std::uint64_t limit, std::uint64_t offset) {
  detail::throwMessagePackError(code,
                                fmt::format("{} {} exceeds {} {}", what, value, limitName, limit),
                                offset, value, limit);
}

[[noreturn]] void throwLengthLimit(Kind kind, std::uint64_t len, const MessagePackLimits& l,
                                   std::uint64_t offset) {
  switch (kind) {
    case Kind::Str:
      throwLimit(MessagePackErrc::StrLengthLimit, "str length", "maxStrLength", len, l.maxStrLength,
                 offset);
    case Kind::Bin:
      throwLimit(MessagePackErrc::BinLengthLimit, "bin length", "maxBinLength", len, l.maxBinLength,
                 offset);
    case Kind::Ext:
      throwLimit(MessagePackErrc::ExtLengthLimit, "ext length", "maxExtLength", len, l.maxExtLength,
                 offset);
    case Kind::Array:
      throwLimit(MessagePackErrc::ContainerLengthLimit, "array length", "maxContainerLength", len,
                 l.maxContainerLength, offset);
    default:
      throwLimit(MessagePackErrc::ContainerLengthLimit, "map length", "maxContainerLength", len,
                 l.maxContainerLength, offset);
  }
}

[[noreturn]] void throwDepth(std::uint64_t depth, std::uint64_t limit, std::uint64_t offset) {
  throwLimit(MessagePackErrc::DepthLimit, "nesting depth", "maxDepth", depth, limit, offset);
}

[[noreturn]] void throwInvalidUtf8(std::uint64_t header, std::uint64_t bad) {
  detail::throwMessagePackError(MessagePackErrc::InvalidUtf8,
                                fmt::format("str with ill-formed UTF-8 at offset {}", bad), header);
}

[[noreturn]] void throwInvalidTimestamp(const std::string& why, std::uint64_t offset) {
  detail::throwMessagePackError(MessagePackErrc::InvalidTimestamp, why, offset);
}

[[noreturn]] void throwTypeMismatch(ValueType expected, ValueType actual, std::uint8_t byte,
                                    std::uint64_t offset) {
  detail::throwMessagePackError(MessagePackErrc::TypeMismatch,
                                fmt::format("expected {}, got {} (0x{:02x})",
                                            valueTypeName(expected), valueTypeName(actual), byte),
                                offset);
}

// ---------------------------------------------------------------- the value parser

/// One decoding of a top-level value. Decoding never reads at or past `end`: the input's end, or
/// maxMessageSize bytes after the value's start when that comes first.
struct Ctx {
  const std::byte* in;
  std::size_t end;
  std::size_t inputEnd;
  std::size_t start;
  const MessagePackReadOptions& opt;
  std::uint64_t base;
};

Ctx makeCtx(std::span<const std::byte> input, std::size_t start, const MessagePackReadOptions& opt,
            std::uint64_t base) noexcept {
  const std::size_t room = input.size() - start;
  const std::size_t end = start + std::min(room, opt.limits.maxMessageSize);
  return Ctx{input.data(), end, input.size(), start, opt, base};
}

/// The item at `item` needs the bytes up to needEnd, past c.end: MessageSizeLimit when maxMessage
/// Size is what cut the input short, else Truncated.
[[noreturn]] void needBytes(const Ctx& c, std::size_t item, std::uint64_t needEnd) {
  if (c.end < c.inputEnd) {
    throwLimit(MessagePackErrc::MessageSizeLimit, "message size", "maxMessageSize",
               needEnd - c.start, c.opt.limits.maxMessageSize, c.base + c.start);
  }
  throwTruncated(c.base + item, needEnd - item, c.inputEnd - item);
}

struct Frame {
  void* base;          // Value[] (array) or Member[] (map); null when skipping
  std::size_t i;       // items done (a map pair is two items)
  std::size_t n;       // items in all
  std::size_t header;  // offset of the container's header (for DuplicateKey)
  bool map;
};

/// The parser's explicit stack: 32 frames inline (no allocation for ordinary documents), then a
/// heap vector. Its size is the current nesting depth.
class FrameStack {
 public:
  FrameStack() noexcept {}  // frames are written before they are read
  FrameStack(const FrameStack&) = delete;
  FrameStack& operator=(const FrameStack&) = delete;
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  Frame& top() noexcept { return data_[size_ - 1]; }
  void pop() noexcept { --size_; }
  [[gnu::always_inline]] void push(const Frame& f) {
    if (size_ == cap_) [[unlikely]]
      grow();
    data_[size_++] = f;
  }

 private:
  [[gnu::noinline]] void grow() {
    if (data_ == inline_) heap_.assign(inline_, inline_ + size_);
    heap_.resize(cap_ * 2);
    data_ = heap_.data();
    cap_ = heap_.size();
  }
  static constexpr std::size_t kInline = 32;
  Frame inline_[kInline];
  std::vector<Frame> heap_;
  Frame* data_ = inline_;
  std::size_t size_ = 0;
  std::size_t cap_ = kInline;
};

Value* slotOf(const Frame& f) noexcept {
  if (f.map) {
    Member& m = static_cast<Member*>(f.base)[f.i >> 1];
    return (f.i & 1) != 0 ? &m.value : &m.key;
  }
  return static_cast<Value*>(f.base) + f.i;
}

// ---- duplicate keys

/// A float key as the canonical encoder writes it: its bits, every NaN the quiet NaN.
std::uint64_t floatKeyBits(const Value& v) noexcept {
  if (v.type() == ValueType::Float32) {
    const float f = v.asFloat32();
    return f != f ? 0x7fc00000u : std::bit_cast<std::uint32_t>(f);
  }
  const double d = v.asDouble();
  return d != d ? 0x7ff8000000000000ULL : std::bit_cast<std::uint64_t>(d);
}

/// Key identity: Value == (Int 1 == UInt 1), except floats, compared by floatKeyBits (NaN keys
/// are the same key, 0.0 and -0.0 are not), so that it matches the canonical encoder's "same
/// encoded bytes" rule.
bool sameKey(const Value& a, const Value& b) noexcept {
  if (a.type() == ValueType::Str && b.type() == ValueType::Str) {
    const std::string_view x = a.asStr(), y = b.asStr();
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
  }
  if (a.type() != b.type()) return a == b;  // Int vs UInt by number; else different
  switch (a.type()) {
    case ValueType::Float32:
    case ValueType::Float64:
      return floatKeyBits(a) == floatKeyBits(b);
    case ValueType::Array: {
      const auto x = a.asArray(), y = b.asArray();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!sameKey(x[i], y[i])) return false;
      }
      return true;
    }
    case ValueType::Map: {
      const auto x = a.asMap(), y = b.asMap();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!sameKey(x[i].key, y[i].key) || !sameKey(x[i].value, y[i].value)) return false;
      }
      return true;
    }
    default:
      return a == b;
  }
}

std::uint64_t keyFingerprint(const Value& k) noexcept {
  // Length plus the first, middle and last bytes: three loads, no loop, no store-to-load stall.
  if (k.type() != ValueType::Str) return 0;  // never equal to a Str's (bit 63 set below)
  const std::string_view s = k.asStr();
  if (s.empty()) return std::uint64_t{1} << 63;
  const auto at = [&](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(s[i])}; };
  return (std::uint64_t{1} << 63) | (std::uint64_t{s.size() & 0xffffffff} << 24) | (at(0) << 16) |
         (at(s.size() / 2) << 8) | at(s.size() - 1);
}

int rankOf(ValueType t) noexcept {
  switch (t) {
    case ValueType::Nil:
      return 0;
    case ValueType::Bool:
      return 1;
    case ValueType::Int:
    case ValueType::UInt:
      return 2;
    case ValueType::Float32:
      return 3;
    case ValueType::Float64:
      return 4;
    case ValueType::Str:
      return 5;
    case ValueType::Bin:
      return 6;
    case ValueType::Array:
      return 7;
    case ValueType::Map:
      return 8;
    case ValueType::Ext:
      return 9;
    case ValueType::Timestamp:
      return 10;
  }
  return 11;
}

template <class T>
int cmp3(T a, T b) noexcept {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int cmpBytes(std::span<const std::byte> a, std::span<const std::byte> b) noexcept {
  if (a.size() != b.size()) return cmp3(a.size(), b.size());
  if (a.empty()) return 0;
  const int r = std::memcmp(a.data(), b.data(), a.size());
  return cmp3(r, 0);
}

std::span<const std::byte> strBytes(const Value& v) noexcept {
  const std::string_view s = v.asStr();
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

/// A total preorder whose equivalence is sameKey: sorting by it brings equal keys together.
int compareKeys(const Value& a, const Value& b) noexcept {
  const int ra = rankOf(a.type()), rb = rankOf(b.type());
  if (ra != rb) return cmp3(ra, rb);
  switch (a.type()) {
    case ValueType::Nil:
      return 0;
    case ValueType::Bool:
      return cmp3(a.asBool(), b.asBool());
    case ValueType::Int:
    case ValueType::UInt: {
      const bool na = a.type() == ValueType::Int && a.asInt64() < 0;
      const bool nb = b.type() == ValueType::Int && b.asInt64() < 0;
      if (na != nb) return na ? -1 : 1;
      return na ? cmp3(a.asInt64(), b.asInt64()) : cmp3(a.asUInt64(), b.asUInt64());
    }
    case ValueType::Float32:
    case ValueType::Float64:
      return cmp3(floatKeyBits(a), floatKeyBits(b));  // equivalent exactly when sameKey
    case ValueType::Str:
      return cmpBytes(strBytes(a), strBytes(b));
    case ValueType::Bin:
      return cmpBytes(a.asBin(), b.asBin());
    case ValueType::Ext:
      if (a.extType() != b.extType()) return cmp3(a.extType(), b.extType());
      return cmpBytes(a.extData(), b.extData());
    case ValueType::Timestamp:
      return cmp3(a.asTimestamp(), b.asTimestamp());
    case ValueType::Array: {
      const auto x = a.asArray(), y = b.asArray();
      if (x.size() != y.size()) return cmp3(x.size(), y.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (const int r = compareKeys(x[i], y[i]); r != 0) return r;
      }
      return 0;
    }
    case ValueType::Map: {
      const auto x = a.asMap(), y = b.asMap();
      if (x.size() != y.size()) return cmp3(x.size(), y.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (const int r = compareKeys(x[i].key, y[i].key); r != 0) return r;
        if (const int r = compareKeys(x[i].value, y[i].value); r != 0) return r;
      }
      return 0;
    }
  }
  return 0;
}

constexpr std::size_t kNoDuplicate = static_cast<std::size_t>(-1);
/// Maps with up to this many keys are checked through a fingerprint table (no allocation).
constexpr std::size_t kHashedKeys = 64;

/// Index of the earliest key equal to an earlier one, or kNoDuplicate.
std::size_t firstDuplicateKey(const Member* m, std::size_t n) {
  if (n <= kHashedKeys) {
    // 64-bit fingerprints (a Str key's length and three of its bytes; other key types share one
    // fingerprint and are compared in full): equal keys have equal fingerprints, and distinct keys
    // of protocols rarely collide, so the full comparison seldom runs.
    std::uint64_t fp[kHashedKeys];
    for (std::size_t i = 0; i < n; ++i) fp[i] = keyFingerprint(m[i].key);
    if (n <= 6) {  // at most 15 pairs: compare them all
      for (std::size_t j = 1; j < n; ++j) {
        for (std::size_t i = 0; i < j; ++i) {
          if (fp[i] == fp[j] && sameKey(m[i].key, m[j].key)) return j;
        }
      }
      return kNoDuplicate;
    }
    // Otherwise an open-addressing table of key indexes (+1; 0 is empty) hashed by fingerprint,
    // at most a quarter full: keys go in in order, so the first key that meets an equal one in its
    // probe run (equal keys hash alike; nothing is removed) is the earliest repeat.
    const unsigned bits = n <= 16 ? 6 : 8;
    const std::size_t mask = (std::size_t{1} << bits) - 1;
    std::uint8_t table[std::size_t{1} << 8];
    std::memset(table, 0, mask + 1);
    for (std::size_t j = 0; j < n; ++j) {
      std::size_t h = static_cast<std::size_t>((fp[j] * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
      for (;;) {
        const std::size_t e = table[h];
        if (e == 0) {
          table[h] = static_cast<std::uint8_t>(j + 1);
          break;
        }
        if (fp[e - 1] == fp[j] && sameKey(m[e - 1].key, m[j].key)) return j;
        h = (h + 1) & mask;
      }
    }
    return kNoDuplicate;
  }
  std::vector<std::uint32_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
  std::sort(idx.begin(), idx.end(), [m](std::uint32_t x, std::uint32_t y) {
    const int r = compareKeys(m[x].key, m[y].key);
    return r != 0 ? r < 0 : x < y;
  });
  std::size_t best = kNoDuplicate;
  for (std::size_t k = 1; k < n; ++k) {
    const std::uint32_t p = idx[k - 1], q = idx[k];
    // In a class of equivalent keys sorted by index, the first equal adjacent pair gives the
    // class's second occurrence; the classes' minimum is the earliest one.
    if (q < best && compareKeys(m[p].key, m[q].key) == 0 && sameKey(m[p].key, m[q].key) &&
        (k < 2 || compareKeys(m[idx[k - 2]].key, m[p].key) != 0)) {
      best = q;
    }
  }
  return best;
}

template <bool kBuild>
std::size_t parse(const Ctx& c, std::size_t pos, Value* slot, Document* doc,
                  std::size_t depth0 = 0);

/// The offset of key `index` of the (already validated) map whose header is at `header`.
std::size_t offsetOfMapKey(const Ctx& c, std::size_t header, std::size_t index) {
  std::size_t pos = header + headInfo(u8(c.in + header)).hdr;
  for (std::size_t k = 0; k < 2 * index; ++k) pos = parse<false>(c, pos, nullptr, nullptr);
  return pos;
}

[[noreturn, gnu::noinline]] void throwDuplicate(const Ctx& c, const Member* m, std::size_t header,
                                                std::size_t j) {
  const std::size_t at = offsetOfMapKey(c, header, j);
  detail::throwMessagePackError(MessagePackErrc::DuplicateKey,
                                fmt::format("map key {} repeats an earlier key ({})", j,
                                            m[j].key.toDebugString().substr(0, 64)),
                                c.base + at, j);
}

/// DuplicateKey (at the repeated key's offset) when two of the n complete members are equal.
void checkDuplicates(const Ctx& c, const Member* m, std::size_t n, std::size_t header) {
  const std::size_t j = firstDuplicateKey(m, n);
  if (j == kNoDuplicate) [[likely]]
    return;
  throwDuplicate(c, m, header, j);
}

/// Decodes (kBuild) or skips the value at pos; returns the offset after it.
template <bool kBuild>
std::size_t parse(const Ctx& c, std::size_t pos, Value* slot, Document* doc, std::size_t depth0) {
  const MessagePackLimits& lim = c.opt.limits;
  FrameStack st;
  for (;;) {
    if (pos >= c.end) [[unlikely]]
      needBytes(c, pos, std::uint64_t{pos} + 1);
    const std::byte* p = c.in + pos;
    const std::uint8_t b = u8(p);
    if (b <= 0x7f) {
      if constexpr (kBuild) *slot = Value::uinteger(b);
      ++pos;
    } else if (b >= 0xe0) {
      if constexpr (kBuild) *slot = Value::integer(static_cast<std::int8_t>(b));
      ++pos;
    } else {
      const HeadInfo info = headInfo(b);
      if (info.hdr > c.end - pos) [[unlikely]]
        needBytes(c, pos, std::uint64_t{pos} + info.hdr);
      const Head h = readHead(p, info);
      const std::size_t body = pos + h.hdr;
      switch (h.kind) {
        case Kind::Nil:
          if constexpr (kBuild) *slot = Value::nil();
          break;
        case Kind::Reserved:
          throwReserved(c.base + pos);
        case Kind::Bool:
          if constexpr (kBuild) *slot = Value::boolean(b == 0xc3);
          break;
        case Kind::UInt:
          if constexpr (kBuild) *slot = Value::uinteger(h.v);
          break;
        case Kind::Int:
          if constexpr (kBuild) *slot = Value::integer(static_cast<std::int64_t>(h.v));
          break;
        case Kind::F32:
          if constexpr (kBuild)
            *slot = Value::float32(std::bit_cast<float>(loadBE<std::uint32_t>(p + 1)));
          break;
        case Kind::F64:
          if constexpr (kBuild)
            *slot = Value::float64(std::bit_cast<double>(loadBE<std::uint64_t>(p + 1)));
          break;
        case Kind::Str: {
          if (h.v > lim.maxStrLength) [[unlikely]]
            throwLengthLimit(Kind::Str, h.v, lim, c.base + pos);
          if (h.v > c.end - body) [[unlikely]]
            needBytes(c, pos, body + h.v);
          if constexpr (kBuild) {
            const std::byte* d = c.in + body;
            const std::size_t n = h.v;
            bool bad = false;
            if (n > 16 || !detail::isShortAscii(d, n)) {
              const std::size_t k = utf8::firstInvalidUtf8(d, n);
              if (k != utf8::npos) {
                if (!c.opt.lenientUtf8) throwInvalidUtf8(c.base + pos, c.base + body + k);
                bad = true;
              }
            }
            *slot = Value::strView({reinterpret_cast<const char*>(d), n}, bad);
          }
          pos = body + h.v;
          goto next;
        }
        case Kind::Bin:
          if (h.v > lim.maxBinLength) [[unlikely]]
            throwLengthLimit(Kind::Bin, h.v, lim, c.base + pos);
          if (h.v > c.end - body) [[unlikely]]
            needBytes(c, pos, body + h.v);
          if constexpr (kBuild) *slot = Value::binView({c.in + body, h.v});
          pos = body + h.v;
          goto next;
        case Kind::Ext:
          if (h.v > lim.maxExtLength) [[unlikely]]
            throwLengthLimit(Kind::Ext, h.v, lim, c.base + pos);
          if (h.v > c.end - body) [[unlikely]]
            needBytes(c, pos, body + h.v);
          if constexpr (kBuild) {
            if (h.type == -1) {
              Timestamp ts;
              std::string why;
              if (!decodeTimestamp(c.in + body, h.v, ts, why))
                throwInvalidTimestamp(why, c.base + pos);
              *slot = Value::timestamp(ts);
            } else {
              *slot = Value::extView(h.type, {c.in + body, h.v});
            }
          }
          pos = body + h.v;
          goto next;
        case Kind::Array:
        case Kind::Map: {
          const bool map = h.kind == Kind::Map;
          if (h.v > lim.maxContainerLength) [[unlikely]]
            throwLengthLimit(h.kind, h.v, lim, c.base + pos);
          const std::uint64_t items = map ? 2 * h.v : h.v;
          if (items > c.end - body) [[unlikely]]
            needBytes(c, pos, body + items);
          if (depth0 + st.size() >= lim.maxDepth) [[unlikely]]
            throwDepth(depth0 + st.size() + 1, lim.maxDepth, c.base + pos);
          void* base = nullptr;
          if constexpr (kBuild) {
            if (map) {
              const std::span<Member> m = doc->allocateMap(h.v);
              base = m.data();
              *slot = Value::mapView(m);
            } else {
              const std::span<Value> a = doc->allocateArray(h.v);
              base = a.data();
              *slot = Value::arrayView(a);
            }
          }
          pos = body;
          if (items == 0) goto next;
          st.push(Frame{base, 0, items, body - h.hdr, map});
          if constexpr (kBuild) slot = slotOf(st.top());
          continue;
        }
      }
      pos = body;
    }
  next:
    for (;;) {
      if (st.empty()) return pos;
      Frame& f = st.top();
      if (++f.i < f.n) {
        if constexpr (kBuild) slot = slotOf(f);
        break;
      }
      if constexpr (kBuild) {
        if (f.map && f.n > 2 && !c.opt.allowDuplicateKeys)
          checkDuplicates(c, static_cast<const Member*>(f.base), f.n / 2, f.header);
      }
      st.pop();
    }
  }
}

// ---------------------------------------------------------------- the build path

/// True when the n <= 31 bytes at p are all ASCII: at most four overlapping word loads.
[[gnu::always_inline]] inline bool isFixStrAscii(const std::byte* p, std::size_t n) noexcept {
  if (n <= 16) return detail::isShortAscii(p, n);
  std::uint64_t a, b, x, y;
  std::memcpy(&a, p, 8);
  std::memcpy(&b, p + 8, 8);
  std::memcpy(&x, p + n - 16, 8);
  std::memcpy(&y, p + n - 8, 8);
  return ((a | b | x | y) & 0x8080808080808080ULL) == 0;
}

/// Writes a node into arena storage the parser has not initialised yet (Value is trivially
/// copyable and destructible, so this is a plain 16-byte store).
[[gnu::always_inline]] inline void put(Value* slot, const Value& v) noexcept {
  ::new (static_cast<void*>(slot)) Value(v);
}

/// The decoding path: recursive descent, the element count and slot pointer of each open
/// container kept in registers. Nodes go into uninitialised arena space (allocateBytes): every
/// slot is written before the container is complete, and nothing built here is reachable until
/// the caller publishes the root after a successful decode, so a failed decode never exposes an
/// unwritten slot. Recursion stops at kMaxRecursion open containers (a few hundred bytes of stack
/// at most); a deeper container is handed, with its depth, to the iterative parse<true>, whose
/// explicit stack honours any maxDepth. Errors, their order and offsets are those of parse<true>:
/// both check an item's bytes, limits and depth in the same order, in document order.
class Builder {
 public:
  static constexpr std::size_t kMaxRecursion = 64;

  Builder(const Ctx& c, Document* doc) noexcept
      : c_(c),
        doc_(doc),
        in_(c.in),
        end_(c.end),
        maxStr_(c.opt.limits.maxStrLength),
        checkDuplicateKeys_(!c.opt.allowDuplicateKeys) {}

  /// Decodes the value at pos (inside `depth` open containers) into *slot; the offset after it.
  [[gnu::always_inline]] std::size_t value(std::size_t pos, Value* slot, std::size_t depth) {
    if (pos < end_) [[likely]] {
      const std::byte* p = in_ + pos;
      const std::uint8_t b = u8(p);
      if (b <= 0x7f) {
        put(slot, Value::uinteger(b));
        return pos + 1;
      }
      if ((b & 0xe0) == 0xa0) {  // fixstr of ASCII (map keys, mostly)
        const std::size_t n = b & 0x1f;
        if (n < end_ - pos && n <= maxStr_ && isFixStrAscii(p + 1, n)) [[likely]] {
          put(slot, Value::strView({reinterpret_cast<const char*>(p + 1), n}));
          return pos + 1 + n;
        }
      } else if (b >= 0xe0) {
        put(slot, Value::integer(static_cast<std::int8_t>(b)));
        return pos + 1;
      }
    }
    return valueSlow(pos, slot, depth);
  }

 private:
  [[gnu::noinline]] std::size_t valueSlow(std::size_t pos, Value* slot, std::size_t depth) {
    if (pos >= end_) [[unlikely]]
      needBytes(c_, pos, std::uint64_t{pos} + 1);
    const std::byte* p = in_ + pos;
    const std::uint8_t b = u8(p);
    const std::size_t left = end_ - pos;
    // Each form: its header's bytes present, then (payloads, containers) limit, bytes, depth.
    const auto need = [&](std::size_t hdr) {
      if (hdr > left) [[unlikely]]
        needBytes(c_, pos, std::uint64_t{pos} + hdr);
    };
    if (b <= 0x7f) {
      put(slot, Value::uinteger(b));
      return pos + 1;
    }
    if (b >= 0xe0) {
      put(slot, Value::integer(static_cast<std::int8_t>(b)));
      return pos + 1;
    }
    if (b <= 0x8f) return map(pos, 1, b & 0x0f, slot, depth);
    if (b <= 0x9f) return array(pos, 1, b & 0x0f, slot, depth);
    if (b <= 0xbf) return str(pos, 1, b & 0x1f, slot);
    switch (b) {
      case 0xc0:
        put(slot, Value::nil());
        return pos + 1;
      case 0xc1:
        throwReserved(c_.base + pos);
      case 0xc2:
      case 0xc3:
        put(slot, Value::boolean(b == 0xc3));
        return pos + 1;
      case 0xc4:
        need(2);
        return bin(pos, 2, u8(p + 1), slot);
      case 0xc5:
        need(3);
        return bin(pos, 3, loadBE<std::uint16_t>(p + 1), slot);
      case 0xc6:
        need(5);
        return bin(pos, 5, loadBE<std::uint32_t>(p + 1), slot);
      case 0xc7:
        need(3);
        return ext(pos, 3, u8(p + 1), slot);
      case 0xc8:
        need(4);
        return ext(pos, 4, loadBE<std::uint16_t>(p + 1), slot);
      case 0xc9:
        need(6);
        return ext(pos, 6, loadBE<std::uint32_t>(p + 1), slot);
      case 0xca:
        need(5);
        put(slot, Value::float32(std::bit_cast<float>(loadBE<std::uint32_t>(p + 1))));
        return pos + 5;
      case 0xcb:
        need(9);
        put(slot, Value::float64(std::bit_cast<double>(loadBE<std::uint64_t>(p + 1))));
        return pos + 9;
      case 0xcc:
        need(2);
        put(slot, Value::uinteger(u8(p + 1)));
        return pos + 2;
      case 0xcd:
        need(3);
        put(slot, Value::uinteger(loadBE<std::uint16_t>(p + 1)));
        return pos + 3;
      case 0xce:
        need(5);
        put(slot, Value::uinteger(loadBE<std::uint32_t>(p + 1)));
        return pos + 5;
      case 0xcf:
        need(9);
        put(slot, Value::uinteger(loadBE<std::uint64_t>(p + 1)));
        return pos + 9;
      case 0xd0:
        need(2);
        putSigned(slot, static_cast<std::int8_t>(u8(p + 1)));
        return pos + 2;
      case 0xd1:
        need(3);
        putSigned(slot, static_cast<std::int16_t>(loadBE<std::uint16_t>(p + 1)));
        return pos + 3;
      case 0xd2:
        need(5);
        putSigned(slot, static_cast<std::int32_t>(loadBE<std::uint32_t>(p + 1)));
        return pos + 5;
      case 0xd3:
        need(9);
        putSigned(slot, static_cast<std::int64_t>(loadBE<std::uint64_t>(p + 1)));
        return pos + 9;
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        need(2);
        return ext(pos, 2, std::size_t{1} << (b - 0xd4), slot);
      case 0xd9:
        need(2);
        return str(pos, 2, u8(p + 1), slot);
      case 0xda:
        need(3);
        return str(pos, 3, loadBE<std::uint16_t>(p + 1), slot);
      case 0xdb:
        need(5);
        return str(pos, 5, loadBE<std::uint32_t>(p + 1), slot);
      case 0xdc:
        need(3);
        return array(pos, 3, loadBE<std::uint16_t>(p + 1), slot, depth);
      case 0xdd:
        need(5);
        return array(pos, 5, loadBE<std::uint32_t>(p + 1), slot, depth);
      case 0xde:
        need(3);
        return map(pos, 3, loadBE<std::uint16_t>(p + 1), slot, depth);
      default:  // 0xdf
        need(5);
        return map(pos, 5, loadBE<std::uint32_t>(p + 1), slot, depth);
    }
  }

  /// Signed forms keep the Int/UInt split of readHead: non-negative values are UInt.
  static void putSigned(Value* slot, std::int64_t i) noexcept {
    put(slot, i < 0 ? Value::integer(i) : Value::uinteger(static_cast<std::uint64_t>(i)));
  }

  /// Payload bytes of a str/bin/ext of length n whose header (hdr bytes) is at pos: checks the
  /// limit, then that the bytes are present.
  void payload(Kind kind, std::size_t limit, std::size_t pos, std::size_t hdr, std::size_t n) {
    if (n > limit) [[unlikely]]
      throwLengthLimit(kind, n, c_.opt.limits, c_.base + pos);
    if (n > end_ - pos - hdr) [[unlikely]]
      needBytes(c_, pos, std::uint64_t{pos} + hdr + n);
  }

  std::size_t str(std::size_t pos, std::size_t hdr, std::size_t n, Value* slot) {
    payload(Kind::Str, maxStr_, pos, hdr, n);
    const std::byte* d = in_ + pos + hdr;
    bool bad = false;
    if (n > 16 || !detail::isShortAscii(d, n)) {
      const std::size_t k = utf8::firstInvalidUtf8(d, n);
      if (k != utf8::npos) {
        if (!c_.opt.lenientUtf8) throwInvalidUtf8(c_.base + pos, c_.base + pos + hdr + k);
        bad = true;
      }
    }
    put(slot, Value::strView({reinterpret_cast<const char*>(d), n}, bad));
    return pos + hdr + n;
  }

  std::size_t bin(std::size_t pos, std::size_t hdr, std::size_t n, Value* slot) {
    payload(Kind::Bin, c_.opt.limits.maxBinLength, pos, hdr, n);
    put(slot, Value::binView({in_ + pos + hdr, n}));
    return pos + hdr + n;
  }

  /// hdr counts the type byte, the last of the header.
  std::size_t ext(std::size_t pos, std::size_t hdr, std::size_t n, Value* slot) {
    payload(Kind::Ext, c_.opt.limits.maxExtLength, pos, hdr, n);
    const std::byte* d = in_ + pos + hdr;
    const auto type = static_cast<std::int8_t>(u8(d - 1));
    if (type == -1) {
      Timestamp ts;
      std::string why;
      if (!decodeTimestamp(d, n, ts, why)) throwInvalidTimestamp(why, c_.base + pos);
      put(slot, Value::timestamp(ts));
    } else {
      put(slot, Value::extView(type, {d, n}));
    }
    return pos + hdr + n;
  }

  /// Container checks (as parse<true>): length limit, its items' minimum bytes, depth.
  void container(Kind kind, std::size_t pos, std::size_t hdr, std::size_t n, std::size_t items,
                 std::size_t depth) {
    const MessagePackLimits& lim = c_.opt.limits;
    if (n > lim.maxContainerLength) [[unlikely]]
      throwLengthLimit(kind, n, lim, c_.base + pos);
    if (items > end_ - pos - hdr) [[unlikely]]
      needBytes(c_, pos, std::uint64_t{pos} + hdr + items);
    if (depth >= lim.maxDepth) [[unlikely]]
      throwDepth(depth + 1, lim.maxDepth, c_.base + pos);
  }

  std::size_t array(std::size_t pos, std::size_t hdr, std::size_t n, Value* slot,
                    std::size_t depth) {
    container(Kind::Array, pos, hdr, n, n, depth);
    if (depth >= kMaxRecursion) [[unlikely]]
      return parse<true>(c_, pos, slot, doc_, depth);
    auto* a = reinterpret_cast<Value*>(doc_->allocateBytes(n * sizeof(Value)));
    put(slot, Value::arrayView({a, n}));
    pos += hdr;
    for (std::size_t i = 0; i < n; ++i) pos = value(pos, a + i, depth + 1);
    return pos;
  }

  std::size_t map(std::size_t pos, std::size_t hdr, std::size_t n, Value* slot, std::size_t depth) {
    container(Kind::Map, pos, hdr, n, 2 * n, depth);
    if (depth >= kMaxRecursion) [[unlikely]]
      return parse<true>(c_, pos, slot, doc_, depth);
    auto* m = reinterpret_cast<Member*>(doc_->allocateBytes(n * sizeof(Member)));
    put(slot, Value::mapView({m, n}));
    const std::size_t header = pos;
    pos += hdr;
    for (std::size_t i = 0; i < n; ++i) {
      pos = value(pos, &m[i].key, depth + 1);
      pos = value(pos, &m[i].value, depth + 1);
    }
    if (n > 1 && checkDuplicateKeys_) checkDuplicates(c_, m, n, header);
    return pos;
  }

  const Ctx& c_;
  Document* doc_;
  const std::byte* in_;
  std::size_t end_;
  std::size_t maxStr_;
  bool checkDuplicateKeys_;
};

/// Decodes the value at pos into a fresh Value; the offset after it.
std::size_t build(const Ctx& c, std::size_t pos, Value& out, Document& doc) {
  Builder b(c, &doc);
  return b.value(pos, &out, 0);
}

}  // namespace

// ---------------------------------------------------------------- MessagePackReader

void MessagePackReader::throwDepth() const {
  detail::throwMessagePackError(
      MessagePackErrc::DepthLimit,
      fmt::format("nesting deeper than maxDepth {}", options_.limits.maxDepth), offset(),
      options_.limits.maxDepth + 1, options_.limits.maxDepth);
}

ValueType MessagePackReader::nextType() const {
  if (pos_ >= input_.size()) throwTruncated(offset(), 1, 0);
  const HeadInfo info = headInfo(byteAt(pos_));
  if (info.kind == Kind::Reserved) throwReserved(offset());
  if (info.kind == Kind::Ext) {
    if (info.hdr > remaining()) throwTruncated(offset(), info.hdr, remaining());
    return readHead(input_.data() + pos_, info).type == -1 ? ValueType::Timestamp : ValueType::Ext;
  }
  if (info.kind == Kind::Int && info.hdr > 1) {
    if (info.hdr > remaining()) throwTruncated(offset(), info.hdr, remaining());
    return wireType(readHead(input_.data() + pos_, info));
  }
  return wireType(Head{info.kind, info.hdr, false, 0, 0});
}

void MessagePackReader::throwUnexpected(ValueType expected) const {
  const ValueType actual = nextType();  // Truncated / ReservedByte first
  throwTypeMismatch(expected, actual, byteAt(pos_), offset());
}

MessagePackReader::IntegerItem MessagePackReader::peekInteger() const {
  if (pos_ >= input_.size()) throwTruncated(offset(), 1, 0);
  const HeadInfo info = headInfo(byteAt(pos_));
  if (info.kind != Kind::UInt && info.kind != Kind::Int) throwUnexpected(ValueType::Int);
  if (info.hdr > remaining()) throwTruncated(offset(), info.hdr, remaining());
  const Head h = readHead(input_.data() + pos_, info);
  return {h.v, h.negative, h.hdr};
}

void MessagePackReader::throwIntegerOverflow(const IntegerItem& it, std::int64_t min,
                                             std::uint64_t max) const {
  const std::string v =
      it.negative ? std::to_string(static_cast<std::int64_t>(it.bits)) : std::to_string(it.bits);
  detail::throwMessagePackError(MessagePackErrc::IntegerOverflow,
                                fmt::format("integer {} outside [{}, {}]", v, min, max), offset(),
                                it.bits, max);
}

std::int64_t MessagePackReader::readInt64Slow() { return readInteger<std::int64_t>(); }

std::uint64_t MessagePackReader::readUInt64Slow() { return readInteger<std::uint64_t>(); }

float MessagePackReader::readFloat32() {
  if (pos_ < input_.size() && byteAt(pos_) == 0xca) {
    if (remaining() < 5) throwTruncated(offset(), 5, remaining());
    const float f = std::bit_cast<float>(loadBE<std::uint32_t>(input_.data() + pos_ + 1));
    pos_ += 5;
    return f;
  }
  throwUnexpected(ValueType::Float32);
}

double MessagePackReader::readDouble() {
  if (pos_ < input_.size() && byteAt(pos_) == 0xcb) {
    if (remaining() < 9) throwTruncated(offset(), 9, remaining());
    const double d = std::bit_cast<double>(loadBE<std::uint64_t>(input_.data() + pos_ + 1));
    pos_ += 9;
    return d;
  }
  if (pos_ < input_.size() && byteAt(pos_) == 0xca) return readFloat32();
  throwUnexpected(ValueType::Float64);
}

namespace {
/// The str/bin/ext item at pos: checks kind, limit and bytes; returns its header.
Head payloadItem(std::span<const std::byte> in, std::size_t pos, std::uint64_t offset, Kind kind,
                 ValueType expected, const MessagePackLimits& lim) {
  if (pos >= in.size()) throwTruncated(offset, 1, 0);
  const HeadInfo info = headInfo(std::to_integer<std::uint8_t>(in[pos]));
  if (info.kind == Kind::Reserved) throwReserved(offset);
  const std::size_t left = in.size() - pos;
  if (info.kind != kind) {
    Head h{info.kind, info.hdr, false, 0, 0};
    if (info.kind == Kind::Int && info.hdr <= left) h = readHead(in.data() + pos, info);
    throwTypeMismatch(expected, wireType(h), std::to_integer<std::uint8_t>(in[pos]), offset);
  }
  if (info.hdr > left) throwTruncated(offset, info.hdr, left);
  const Head h = readHead(in.data() + pos, info);
  if (kind == Kind::Ext && (h.type == -1) != (expected == ValueType::Timestamp))
    throwTypeMismatch(expected, wireType(h), std::to_integer<std::uint8_t>(in[pos]), offset);
  const std::size_t limit = kind == Kind::Str   ? lim.maxStrLength
                            : kind == Kind::Bin ? lim.maxBinLength
                                                : lim.maxExtLength;
  if (h.v > limit) throwLengthLimit(kind, h.v, lim, offset);
  if (h.v > left - h.hdr) throwTruncated(offset, h.hdr + h.v, left);
  return h;
}
}  // namespace

std::string_view MessagePackReader::readStrSlow() {
  const Head h = payloadItem(input_, pos_, offset(), Kind::Str, ValueType::Str, options_.limits);
  const std::byte* d = input_.data() + pos_ + h.hdr;
  const std::size_t k = utf8::firstInvalidUtf8(d, h.v);
  if (k != utf8::npos) throwInvalidUtf8(offset(), offset() + h.hdr + k);
  pos_ += h.hdr + h.v;
  return {reinterpret_cast<const char*>(d), h.v};
}

std::span<const std::byte> MessagePackReader::readBin() {
  const Head h = payloadItem(input_, pos_, offset(), Kind::Bin, ValueType::Bin, options_.limits);
  const std::byte* d = input_.data() + pos_ + h.hdr;
  pos_ += h.hdr + h.v;
  return {d, h.v};
}

MessagePackReader::ExtRef MessagePackReader::readExt() {
  const Head h = payloadItem(input_, pos_, offset(), Kind::Ext, ValueType::Ext, options_.limits);
  const std::byte* d = input_.data() + pos_ + h.hdr;
  pos_ += h.hdr + h.v;
  return {h.type, {d, h.v}};
}

Timestamp MessagePackReader::readTimestamp() {
  const Head h =
      payloadItem(input_, pos_, offset(), Kind::Ext, ValueType::Timestamp, options_.limits);
  Timestamp ts;
  std::string why;
  if (!decodeTimestamp(input_.data() + pos_ + h.hdr, h.v, ts, why))
    throwInvalidTimestamp(why, offset());
  pos_ += h.hdr + h.v;
  return ts;
}

std::uint32_t MessagePackReader::readContainerSlow(bool map) {
  const ValueType expected = map ? ValueType::Map : ValueType::Array;
  if (pos_ >= input_.size()) throwTruncated(offset(), 1, 0);
  const HeadInfo info = headInfo(byteAt(pos_));
  if (info.kind != (map ? Kind::Map : Kind::Array)) throwUnexpected(expected);
  if (info.hdr > remaining()) throwTruncated(offset(), info.hdr, remaining());
  const Head h = readHead(input_.data() + pos_, info);
  if (h.v > options_.limits.maxContainerLength)
    throwLengthLimit(info.kind, h.v, options_.limits, offset());
  const std::uint64_t items = map ? 2 * h.v : h.v;
  if (items > remaining() - h.hdr) throwTruncated(offset(), h.hdr + items, remaining());
  pos_ += h.hdr;
  return static_cast<std::uint32_t>(h.v);
}

void MessagePackReader::skip() {
  const Ctx c = makeCtx(input_, pos_, options_, baseOffset_);
  pos_ = parse<false>(c, pos_, nullptr, nullptr);
}

Value MessagePackReader::readValue(Document& doc) {
  const Ctx c = makeCtx(input_, pos_, options_, baseOffset_);
  Value v;
  pos_ = build(c, pos_, v, doc);
  return v;
}

// ---------------------------------------------------------------- whole-value decoding

namespace msgpack {

std::size_t decodeOne(std::span<const std::byte> input, Document& into,
                      const MessagePackReadOptions& options, std::uint64_t baseOffset) {
  const Ctx c = makeCtx(input, 0, options, baseOffset);
  Value v;
  const std::size_t end = build(c, 0, v, into);
  into.setRoot(v);
  return end;
}

void decode(std::span<const std::byte> input, Document& into, const MessagePackReadOptions& options,
            std::uint64_t baseOffset) {
  const Ctx c = makeCtx(input, 0, options, baseOffset);
  Value v;
  const std::size_t end = build(c, 0, v, into);
  if (end != input.size()) [[unlikely]] {
    detail::throwMessagePackError(MessagePackErrc::TrailingBytes,
                                  fmt::format("{} bytes after the value", input.size() - end),
                                  baseOffset + end, input.size() - end);
  }
  into.setRoot(v);
}

void decode(ByteBuf input, Document& into, const MessagePackReadOptions& options,
            std::uint64_t baseOffset) {
  decode(input.readableSpan(), into, options, baseOffset);
  into.keepAlive(std::move(input));
}

Document decode(ByteBuf input, const MessagePackReadOptions& options) {
  Document doc;
  decode(std::move(input), doc, options, 0);
  return doc;
}

}  // namespace msgpack

}  // namespace netbuf
