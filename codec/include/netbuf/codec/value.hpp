#pragma once
// Value: one node of netbuf's document model, shared by the MessagePack and JSON codecs, so a
// server can take JSON in and send MessagePack out (or the reverse) without converting trees.
//
//   type        payload                     MessagePack wire             JSON
//   Nil         -                           nil (0xc0)                   null
//   Bool        bool                        false/true                   false/true
//   Int         int64_t                     (neg)fixint, int8..int64     number (integer)
//   UInt        uint64_t                    fixint, uint8..uint64        number (integer)
//   Float32     float                       float32                      number; {"$float32": x}
//   Float64     double                      float64                      number
//   Str         UTF-8 bytes (view)          fixstr, str8/16/32           string
//   Bin         bytes (view)                bin8/16/32                   {"$bin": "<base64>"}
//   Array       Value[n] (view)             fixarray, array16/32         array
//   Map         Member[n] (view), in order  fixmap, map16/32             object (string keys)
//   Ext         int8 type + bytes (view)    fixext1..16, ext8/16/32      {"$ext": [type, "<b64>"]}
//   Timestamp   int64 s + uint32 ns         ext -1 (32/64/96-bit forms)  {"$timestamp": [s, ns]}
//
// Integers: Int and UInt compare equal when they hold the same number (Int 5 == UInt 5), because
// the wire keeps no signedness for non-negative values. Decoders produce UInt for values >= 0 and
// Int for negative ones (msgpack-c's convention); a Value built by hand keeps the type it was given
// until it is encoded. Float32 and Float64 are distinct types and never equal each other.
//
// Ownership: a Value is a 16-byte, trivially copyable, NON-OWNING handle, like std::string_view.
// Scalars are held inline; Str, Bin, Ext, Array and Map point at memory owned by someone else:
// normally a Document (its arena and the input buffers it keeps alive), or static storage such as
// string literals. A Value must not outlive that memory. Values are immutable through this API;
// Document's builders create them.
//
// Lengths are at most UINT32_MAX (MessagePack's own limit), elements or bytes.
//
// Hints: a Str may carry isPlainAscii() and a Map hasCanonicalOrder(), facts about its bytes or
// members that the builder or decoder that made the Value already knew (Document's builders, the
// JSON parser), so that the JSON writer need not find them out again on every write. They are
// never set on a Value made with the public view factories, never change what a Value means, and
// are ignored by operator==. They describe the bytes as they were when the Value was made: memory
// a Value views must not change while the Value is in use (for a view made by the parser, the
// input text), or a writer may trust a stale hint.
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/errors.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace netbuf {

enum class ValueType : std::uint8_t {
  Nil,
  Bool,
  Int,
  UInt,
  Float32,
  Float64,
  Str,
  Bin,
  Array,
  Map,
  Ext,
  Timestamp,
};

/// "Nil", "Bool", ... (stable names, used in error messages).
std::string_view valueTypeName(ValueType type) noexcept;

/// Thrown by Value's accessors when the value has another type (or an integer is out of range for
/// the asked type). Message: "expected Str, got UInt".
class ValueTypeError : public Error {
 public:
  ValueTypeError(ValueType expected, ValueType actual);
  ValueTypeError(const std::string& what, ValueType actual) : Error(what), actual_(actual) {}
  ValueType actual() const noexcept { return actual_; }

 private:
  ValueType actual_;
};

/// A MessagePack timestamp (extension type -1): seconds since 1970-01-01T00:00:00Z and
/// nanoseconds, 0 <= nanoseconds <= 999'999'999.
struct Timestamp {
  std::int64_t seconds = 0;
  std::uint32_t nanoseconds = 0;
  friend bool operator==(const Timestamp&, const Timestamp&) = default;
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

struct Member;
class Value;

namespace detail {
/// Sets Value's hints (see isPlainAscii(), hasCanonicalOrder()); for Document and the decoders,
/// which establish the facts first. Not a public API: a wrong hint makes the JSON writer emit
/// invalid or non-canonical text.
struct ValueHints {
  static Value plainAscii(Value v) noexcept;
  static Value canonicalOrder(Value v) noexcept;
  /// A valid UTF-8 Str viewing [p, p + n), with the plainAscii hint when `plain`. Its first word
  /// (type, aux, size) is written as one 64-bit store: parsers build one per string token, and
  /// byte-wise field writes there cost a partial-register merge or a store-forwarding stall.
  static Value str(const char* p, std::uint32_t n, bool plain) noexcept;
};
}  // namespace detail

class Value {
 public:
  static constexpr std::uint32_t kMaxNanoseconds = 999'999'999;

  /// Nil.
  constexpr Value() noexcept : Value(ValueType::Nil) {}

  static constexpr Value nil() noexcept { return Value(); }
  static constexpr Value boolean(bool b) noexcept {
    Value v(ValueType::Bool);
    v.u_.b = b;
    return v;
  }
  static constexpr Value integer(std::int64_t i) noexcept {
    Value v(ValueType::Int);
    v.u_.i = i;
    return v;
  }
  static constexpr Value uinteger(std::uint64_t u) noexcept {
    Value v(ValueType::UInt);
    v.u_.u = u;
    return v;
  }
  static constexpr Value float32(float f) noexcept {
    Value v(ValueType::Float32);
    v.u_.f = f;
    return v;
  }
  static constexpr Value float64(double d) noexcept {
    Value v(ValueType::Float64);
    v.u_.d = d;
    return v;
  }
  /// Views `text` (not copied; the caller keeps it alive and unchanged while the Value is used:
  /// see Hints above). Not validated here: encoders and Document::str validate; `invalidUtf8`
  /// marks text a lenient decoder kept as raw bytes.
  /// Throws IllegalArgumentError when longer than UINT32_MAX (as do the other views).
  static Value strView(std::string_view text, bool invalidUtf8 = false) {
    Value v(ValueType::Str, text.data(), checkedLength(text.size()));
    v.aux_ = invalidUtf8 ? kInvalidUtf8 : 0;
    return v;
  }
  /// Views `bytes` (not copied).
  static Value binView(std::span<const std::byte> bytes) {
    return Value(ValueType::Bin, bytes.data(), checkedLength(bytes.size()));
  }
  /// Views `data` (not copied). Type -1 is MessagePack's timestamp type: use timestamp(); an Ext
  /// of type -1 is an IllegalArgumentError (it would encode to bytes decoders reject, or to a
  /// timestamp that is not in its smallest form).
  static Value extView(std::int8_t type, std::span<const std::byte> data) {
    if (type == -1) [[unlikely]]
      throwTimestampExt();
    Value v(ValueType::Ext, data.data(), checkedLength(data.size()));
    v.aux_ = static_cast<std::uint8_t>(type);
    return v;
  }
  /// Views `elements` (not copied).
  static Value arrayView(std::span<const Value> elements) {
    return Value(ValueType::Array, elements.data(), checkedLength(elements.size()));
  }
  /// Views `members` (not copied); their order is kept.
  static Value mapView(std::span<const Member> members);
  /// Throws IllegalArgumentError when nanoseconds > 999'999'999.
  static Value timestamp(Timestamp ts);

  ValueType type() const noexcept { return type_; }
  bool isNil() const noexcept { return type_ == ValueType::Nil; }
  bool isBool() const noexcept { return type_ == ValueType::Bool; }
  /// Int or UInt.
  bool isInteger() const noexcept { return type_ == ValueType::Int || type_ == ValueType::UInt; }
  /// Float32 or Float64.
  bool isFloat() const noexcept {
    return type_ == ValueType::Float32 || type_ == ValueType::Float64;
  }
  bool isNumber() const noexcept { return isInteger() || isFloat(); }
  bool isStr() const noexcept { return type_ == ValueType::Str; }
  bool isBin() const noexcept { return type_ == ValueType::Bin; }
  bool isArray() const noexcept { return type_ == ValueType::Array; }
  bool isMap() const noexcept { return type_ == ValueType::Map; }
  bool isExt() const noexcept { return type_ == ValueType::Ext; }
  bool isTimestamp() const noexcept { return type_ == ValueType::Timestamp; }

  /// Accessors throw ValueTypeError on a different type.
  bool asBool() const {
    if (type_ != ValueType::Bool) [[unlikely]]
      throwType(ValueType::Bool);
    return u_.b;
  }
  /// Int, or UInt <= INT64_MAX; otherwise ValueTypeError.
  std::int64_t asInt64() const {
    if (type_ == ValueType::Int || (type_ == ValueType::UInt && u_.u <= INT64_MAX)) [[likely]]
      return u_.i;
    throwInt64();
  }
  /// UInt, or Int >= 0; otherwise ValueTypeError.
  std::uint64_t asUInt64() const {
    if (type_ == ValueType::UInt || (type_ == ValueType::Int && u_.i >= 0)) [[likely]]
      return u_.u;
    throwUInt64();
  }
  /// Float32 only.
  float asFloat32() const {
    if (type_ != ValueType::Float32) [[unlikely]]
      throwType(ValueType::Float32);
    return u_.f;
  }
  /// Any number converted to double (integers may round).
  double asDouble() const;
  /// Str (also one flagged invalidUtf8: check hasInvalidUtf8()).
  std::string_view asStr() const {
    if (type_ != ValueType::Str) [[unlikely]]
      throwType(ValueType::Str);
    return {static_cast<const char*>(u_.p), size_};
  }
  /// True for a Str a lenient decoder kept although its bytes are not valid UTF-8.
  bool hasInvalidUtf8() const noexcept {
    return type_ == ValueType::Str && (aux_ & kInvalidUtf8) != 0;
  }
  /// A hint: true for a Str known to be printable ASCII other than '"' and '\\' (bytes 0x20-0x7F
  /// but 0x22 and 0x5C), which JSON writes as it is in every mode. Set by Document::str and
  /// strUnchecked (which scan for it) and by the JSON parser (from its scan of the string, and for
  /// one with escapes from what they decode to); false means not known.
  bool isPlainAscii() const noexcept {
    return type_ == ValueType::Str && (aux_ & kPlainAscii) != 0;
  }
  /// A hint: true for a Map known to have Str keys, none flagged invalidUtf8, in strictly
  /// increasing RFC 8785 order (by UTF-16 code units, json::compareUtf16), so distinct: the order
  /// canonical JSON writes, which then need not sort them. Set by Document::map when the members
  /// come in that order and by Document::sortedMap; false means not known.
  bool hasCanonicalOrder() const noexcept {
    return type_ == ValueType::Map && (aux_ & kCanonicalOrder) != 0;
  }
  std::span<const std::byte> asBin() const {
    if (type_ != ValueType::Bin) [[unlikely]]
      throwType(ValueType::Bin);
    return {static_cast<const std::byte*>(u_.p), size_};
  }
  std::int8_t extType() const {
    if (type_ != ValueType::Ext) [[unlikely]]
      throwType(ValueType::Ext);
    return static_cast<std::int8_t>(aux_);
  }
  std::span<const std::byte> extData() const {
    if (type_ != ValueType::Ext) [[unlikely]]
      throwType(ValueType::Ext);
    return {static_cast<const std::byte*>(u_.p), size_};
  }
  Timestamp asTimestamp() const {
    if (type_ != ValueType::Timestamp) [[unlikely]]
      throwType(ValueType::Timestamp);
    return {u_.i, size_};
  }
  std::span<const Value> asArray() const {
    if (type_ != ValueType::Array) [[unlikely]]
      throwType(ValueType::Array);
    return {static_cast<const Value*>(u_.p), size_};
  }
  std::span<const Member> asMap() const;

  /// Elements of an Array, pairs of a Map, bytes of Str/Bin/Ext; 0 for scalars.
  std::size_t size() const noexcept {
    return type_ >= ValueType::Str && type_ <= ValueType::Ext ? size_ : 0;
  }

  /// Map lookup of a Str key (linear scan, first match; O(n) is right for the small maps of
  /// protocols). nullptr when absent; ValueTypeError when this is not a Map.
  const Value* find(std::string_view key) const;
  /// Array element (IndexOutOfBoundsError past the end; ValueTypeError when not an Array).
  const Value& operator[](std::size_t index) const;
  /// Map value for a Str key: IllegalArgumentError naming the key when absent. (A template so
  /// that v[0] picks the array overload, not the const char* one.)
  template <class K>
  requires(std::is_convertible_v<const K&, std::string_view> && !std::is_integral_v<K>) const Value&
  operator[](const K& key) const {
    return at(std::string_view(key));
  }
  /// The same as operator[] with a key.
  const Value& at(std::string_view key) const;

  /// Deep structural equality: same type (Int and UInt compare by number), same bytes, elements
  /// and members in the same order. Floats compare as the IEEE values (NaN != NaN, 0.0 == -0.0).
  friend bool operator==(const Value& a, const Value& b) noexcept;

  /// Debug text in a JSON-like notation (bin as hex, ext and timestamp tagged); not a JSON
  /// encoder (see the JSON codec for that).
  std::string toDebugString() const;

 private:
  constexpr explicit Value(ValueType t) noexcept : type_(t) {}
  Value(ValueType t, const void* p, std::uint32_t n) noexcept : type_(t), size_(n) { u_.p = p; }
  // Inline because decoders build one view per node; the throw is out of line.
  static std::uint32_t checkedLength(std::size_t n) {
    if (n > UINT32_MAX) [[unlikely]]
      throwTooLong(n);
    return static_cast<std::uint32_t>(n);
  }
  [[noreturn]] static void throwTooLong(std::size_t n);
  [[noreturn]] static void throwTimestampExt();
  [[noreturn]] void throwType(ValueType expected) const;
  [[noreturn]] void throwInt64() const;
  [[noreturn]] void throwUInt64() const;

  // aux_ bits of a Str and of a Map.
  static constexpr std::uint8_t kInvalidUtf8 = 1;     // Str: kept although not valid UTF-8
  static constexpr std::uint8_t kPlainAscii = 2;      // Str: the isPlainAscii() hint
  static constexpr std::uint8_t kCanonicalOrder = 1;  // Map: the hasCanonicalOrder() hint

  // Layout (16 bytes): the type, aux (Str: the two flags above; Map: the order hint; Ext: the ext
  // type), size (bytes, elements or pairs; a Timestamp's nanoseconds), and the payload word.
  ValueType type_;
  std::uint8_t aux_ = 0;
  std::uint32_t size_ = 0;
  union Payload {
    bool b;
    std::int64_t i;
    std::uint64_t u;
    float f;
    double d;
    const void* p;
  } u_{.u = 0};

  friend class Document;
  friend struct detail::ValueHints;
};

static_assert(sizeof(Value) == 16);

/// One key/value pair of a Map. Keys may be any Value (MessagePack allows it); JSON keys are Str.
struct Member {
  Value key;
  Value value;
  friend bool operator==(const Member&, const Member&) = default;
};

inline Value Value::mapView(std::span<const Member> members) {
  return Value(ValueType::Map, members.data(), checkedLength(members.size()));
}

inline Value detail::ValueHints::plainAscii(Value v) noexcept {
  if (v.type_ == ValueType::Str && (v.aux_ & Value::kInvalidUtf8) == 0)
    v.aux_ |= Value::kPlainAscii;
  return v;
}

inline Value detail::ValueHints::str(const char* p, std::uint32_t n, bool plain) noexcept {
  static_assert(std::is_trivially_copyable_v<Value> && std::is_standard_layout_v<Value> &&
                offsetof(Value, type_) == 0 && offsetof(Value, aux_) == 1 &&
                offsetof(Value, size_) == 4 && std::endian::native == std::endian::little);
  const std::uint64_t head = static_cast<std::uint64_t>(ValueType::Str) |
                             static_cast<std::uint64_t>(plain ? Value::kPlainAscii : 0) << 8 |
                             static_cast<std::uint64_t>(n) << 32;
  Value v;
  std::memcpy(static_cast<void*>(&v), &head, sizeof head);
  v.u_.p = p;
  return v;
}

inline Value detail::ValueHints::canonicalOrder(Value v) noexcept {
  if (v.type_ == ValueType::Map) v.aux_ |= Value::kCanonicalOrder;
  return v;
}

inline std::span<const Member> Value::asMap() const {
  if (type_ != ValueType::Map) [[unlikely]]
    throwType(ValueType::Map);
  return {static_cast<const Member*>(u_.p), size_};
}

}  // namespace netbuf
