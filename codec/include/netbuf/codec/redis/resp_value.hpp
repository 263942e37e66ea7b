#pragma once
// RespValue: one node of a decoded RESP reply (a tree owned by a RedisReply, see redis_reply.hpp),
// or a value built by hand to be written with RespWriter::value().
//
// A RespValue is a small trivially copyable view (32 bytes): strings view bytes owned elsewhere
// (the reply's retained input, or the caller's storage for hand-built values), aggregates view an
// array of child nodes. It never owns anything; it is valid as long as its owner.
//
// Maps and attributes are stored flat: elements() of a Map is k0 v0 k1 v1 ..., size() counts the
// pairs. An attribute (|n ...) is not a value of its own: it annotates the value that follows it,
// and that value's attributes() points at a Map node holding it (nullptr when there is none).

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/error.hpp>
#include <netbuf/codec/redis/resp_type.hpp>
#include <span>
#include <string_view>

namespace netbuf {

/// A RespValue accessor used on a value of another type (asInteger() of a bulk string...).
class RespTypeError : public Error {
 public:
  RespTypeError(std::string_view accessor, RespType actual);
  RespType actual() const noexcept { return actual_; }

 private:
  RespType actual_;
};

class RespValue {
 public:
  /// A RESP3 null.
  constexpr RespValue() noexcept = default;

  // ---- builders (views: the caller keeps the bytes and children alive) ----
  static RespValue simpleString(std::string_view text) noexcept {
    return RespValue(RespType::SimpleString, text);
  }
  static RespValue simpleError(std::string_view text) noexcept {
    return RespValue(RespType::SimpleError, text);
  }
  static RespValue bulkString(std::string_view bytes) noexcept {
    return RespValue(RespType::BulkString, bytes);
  }
  static RespValue bulkError(std::string_view bytes) noexcept {
    return RespValue(RespType::BulkError, bytes);
  }
  static RespValue bigNumber(std::string_view digits) noexcept {
    return RespValue(RespType::BigNumber, digits);
  }
  /// payload is the whole wire payload "txt:Some string" (format, colon, text).
  static RespValue verbatimString(std::string_view payload) noexcept {
    return RespValue(RespType::VerbatimString, payload);
  }
  static constexpr RespValue integer(std::int64_t v) noexcept {
    RespValue r;
    r.type_ = RespType::Integer;
    r.int_ = v;
    return r;
  }
  static constexpr RespValue boolean(bool v) noexcept {
    RespValue r;
    r.type_ = RespType::Boolean;
    r.int_ = v ? 1 : 0;
    return r;
  }
  static constexpr RespValue doubleValue(double v) noexcept {
    RespValue r;
    r.type_ = RespType::Double;
    r.double_ = v;
    return r;
  }
  /// form: '_' (RESP3 null), '$' (RESP2 null bulk string) or '*' (RESP2 null array).
  static constexpr RespValue null(char form = '_') noexcept {
    RespValue r;
    r.nullForm_ = form;
    return r;
  }
  /// Array, Set or Push of `elements`.
  static RespValue aggregate(RespType type, std::span<const RespValue> elements) noexcept {
    RespValue r;
    r.type_ = type;
    r.children_ = elements.data();
    r.size_ = elements.size();
    return r;
  }
  /// A Map of elements.size() / 2 pairs (k0 v0 k1 v1 ...; the size must be even).
  static RespValue map(std::span<const RespValue> flatPairs) noexcept {
    RespValue r;
    r.type_ = RespType::Map;
    r.children_ = flatPairs.data();
    r.size_ = flatPairs.size() / 2;
    return r;
  }

  // ---- inspection ----
  RespType type() const noexcept { return type_; }
  bool isNull() const noexcept { return type_ == RespType::Null; }
  /// SimpleError or BulkError.
  bool isError() const noexcept {
    return type_ == RespType::SimpleError || type_ == RespType::BulkError;
  }
  /// Array, Map, Set or Push.
  bool isAggregate() const noexcept {
    return type_ == RespType::Array || type_ == RespType::Map || type_ == RespType::Set ||
           type_ == RespType::Push;
  }
  /// The wire form of a null: '_', '$' or '*'.
  char nullForm() const noexcept { return nullForm_; }

  /// The bytes of a SimpleString, SimpleError, BulkString, BulkError, BigNumber (the digits) or
  /// VerbatimString (the text after "fmt:"). Throws RespTypeError for the other types.
  std::string_view asString() const;
  /// The whole payload of a string type, for a VerbatimString including "fmt:".
  std::string_view payload() const;
  /// A VerbatimString's three-letter format ("txt", "mkd").
  std::string_view verbatimFormat() const;
  /// An Integer; throws RespTypeError otherwise.
  std::int64_t asInteger() const;
  /// A Double; throws RespTypeError otherwise.
  double asDouble() const;
  /// A Boolean; throws RespTypeError otherwise.
  bool asBool() const;
  /// The children of an Array, Set, Push (size() of them) or Map (2 * size(), flat pairs);
  /// throws RespTypeError for the other types.
  std::span<const RespValue> elements() const;
  /// Elements of an aggregate (pairs for a Map), bytes of a string type, else 0.
  std::size_t size() const noexcept { return size_; }
  /// The i-th element of an Array, Set or Push (bounds-checked; throws std::out_of_range).
  const RespValue& operator[](std::size_t i) const;
  /// A Map's value for a string key (simple or bulk), or nullptr.
  const RespValue* find(std::string_view key) const;

  /// The attribute map sent before this value, or nullptr.
  const RespValue* attributes() const noexcept { return attributes_; }
  void setAttributes(const RespValue* map) noexcept { attributes_ = map; }

  /// Structural equality (types, null forms, bytes, numbers with NaN equal to NaN, children and
  /// attributes).
  friend bool operator==(const RespValue& a, const RespValue& b) noexcept;

 private:
  RespValue(RespType type, std::string_view bytes) noexcept
      : type_(type), size_(bytes.size()), str_(bytes.data()) {}

  RespType type_ = RespType::Null;
  char nullForm_ = '_';
  std::size_t size_ = 0;
  union {
    const char* str_ = nullptr;
    const RespValue* children_;
    std::int64_t int_;
    double double_;
  };
  const RespValue* attributes_ = nullptr;
};

}  // namespace netbuf
