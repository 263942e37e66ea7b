#pragma once
// Typed MessagePack: C++ values straight to and from the wire, without a Value tree.
//
//   struct Point { std::int32_t x = 0; std::int32_t y = 0; };
//   NETBUF_MSGPACK_FIELDS(Point, x, y)            // at namespace scope of netbuf or globally
//
//   MessagePackWriter w(buf);  msgpack::pack(w, Point{1, 2});      // {"x":1,"y":2}
//   MessagePackReader r(buf.readableSpan());  Point p = msgpack::unpack<Point>(r);
//
// MessagePackTraits<T> has `static void pack(MessagePackWriter&, const T&)` and
// `static void unpack(MessagePackReader&, T&)`. Provided for:
//  - bool; every integer type (unpack range-checked: IntegerOverflow, nothing consumed); float
//    (float32 only) and double (float64 or float32);
//  - std::string (copied) and std::string_view (a view into the reader's input); both strict UTF-8;
//  - std::vector<std::byte> (copied) and std::span<const std::byte> (a view): bin, never str;
//  - std::vector<T>, std::array<T, N> (array; N must match: TypeMismatch-style error otherwise),
//    std::pair / std::tuple (array of their size), std::map / std::unordered_map (map; a repeated
//    key keeps the last value), std::optional<T> (nil when empty);
//  - Timestamp and std::chrono::system_clock::time_point (timestamp ext -1; time points are
//    truncated to nanoseconds when packing).
// NETBUF_MSGPACK_FIELDS(Type, field...) (up to 16 fields) encodes a struct as a map keyed by the
// field names, in declaration order. Unpacking accepts the keys in any order, skips unknown keys
// (MessagePackReader::skip: structure, limits and depth checked), and leaves fields whose keys are
// missing as they were (default-initialised for a fresh T); pairs whose key is not a str are
// skipped too. Use it at global namespace scope (it specialises netbuf::MessagePackTraits), after
// the struct; every field type needs traits of its own (nested structs: their own macro first).
//
// Errors: MessagePackError from the reader (TypeMismatch, IntegerOverflow, Truncated, limits ...)
// and EncoderError from the writer. A failed unpack may leave the target partly assigned.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <netbuf/codec/detail/container_traits.hpp>
#include <netbuf/codec/detail/field_reflection.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <optional>
#include <ratio>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace netbuf {

template <class T, class = void>
struct MessagePackTraits;

namespace msgpack {
template <class T>
void pack(MessagePackWriter& w, const T& v) {
  MessagePackTraits<T>::pack(w, v);
}
template <class T>
void unpack(MessagePackReader& r, T& v) {
  MessagePackTraits<T>::unpack(r, v);
}
template <class T>
T unpack(MessagePackReader& r) {
  T v{};
  MessagePackTraits<T>::unpack(r, v);
  return v;
}
}  // namespace msgpack

namespace detail {
/// A container's element count that does not match a fixed-size target (std::array, pair, tuple).
[[noreturn]] void throwMessagePackArity(std::size_t expected, std::size_t actual,
                                        std::uint64_t offset);
[[noreturn]] void throwMessagePackCountTooLarge(std::size_t n);
/// IntegerOverflow (unpack, at the timestamp's offset) or EncoderError (pack) for a time_point
/// outside the other side's range.
[[noreturn]] void throwMessagePackTimePointRange(const char* what, std::uint64_t offset);
/// A container's size as a MessagePack count; EncoderError above UINT32_MAX.
inline std::uint32_t checkedCount(std::size_t n) {
  if (n > UINT32_MAX) [[unlikely]]
    throwMessagePackCountTooLarge(n);
  return static_cast<std::uint32_t>(n);
}

/// MessagePack's steps of the shared container traits (container_traits.hpp).
struct MessagePackFormat {
  using Writer = MessagePackWriter;
  using Reader = MessagePackReader;
  template <class T>
  static void writeElement(MessagePackWriter& w, const T& v) {
    msgpack::pack(w, v);
  }
  template <class T>
  static void readElement(MessagePackReader& r, T& v) {
    msgpack::unpack(r, v);
  }
  static void writeNull(MessagePackWriter& w) { w.packNil(); }
  static bool tryReadNull(MessagePackReader& r) { return r.tryReadNil(); }
  static void beginArray(MessagePackWriter& w, std::size_t n) {
    w.packArrayHeader(checkedCount(n));
  }
  static void endArray(MessagePackWriter&) {}
  /// The count is bounded by the bytes left, not by the memory the elements need (a 200-byte T
  /// per 1-byte element): the hint is at most 1024 elements.
  template <class Start, class Element>
  static void readArray(MessagePackReader& r, Start&& start, Element&& element) {
    const MessagePackReader::Scope scope(r);
    const std::uint32_t n = r.readArrayHeader();
    start(std::min<std::size_t>(n, 1024));
    for (std::uint32_t i = 0; i < n; ++i) element();
  }
};
}  // namespace detail

template <>
struct MessagePackTraits<bool> {
  static void pack(MessagePackWriter& w, bool v) { w.packBool(v); }
  static void unpack(MessagePackReader& r, bool& v) { v = r.readBool(); }
};

template <class T>
struct MessagePackTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static void pack(MessagePackWriter& w, T v) {
    if constexpr (std::is_signed_v<T>) {
      w.packInt(v);
    } else {
      w.packUInt(v);
    }
  }
  static void unpack(MessagePackReader& r, T& v) { v = r.readInteger<T>(); }
};

template <>
struct MessagePackTraits<float> {
  static void pack(MessagePackWriter& w, float v) { w.packFloat(v); }
  static void unpack(MessagePackReader& r, float& v) { v = r.readFloat32(); }
};

template <>
struct MessagePackTraits<double> {
  static void pack(MessagePackWriter& w, double v) { w.packDouble(v); }
  static void unpack(MessagePackReader& r, double& v) { v = r.readDouble(); }
};

template <>
struct MessagePackTraits<std::string> {
  static void pack(MessagePackWriter& w, const std::string& v) { w.packStr(std::string_view(v)); }
  static void unpack(MessagePackReader& r, std::string& v) { v = r.readStr(); }
};

template <>
struct MessagePackTraits<std::string_view> {
  static void pack(MessagePackWriter& w, std::string_view v) { w.packStr(v); }
  static void unpack(MessagePackReader& r, std::string_view& v) { v = r.readStr(); }
};

template <>
struct MessagePackTraits<std::vector<std::byte>> {
  static void pack(MessagePackWriter& w, const std::vector<std::byte>& v) {
    w.packBin(std::span<const std::byte>(v));
  }
  static void unpack(MessagePackReader& r, std::vector<std::byte>& v) {
    const auto b = r.readBin();
    v.assign(b.begin(), b.end());
  }
};

template <>
struct MessagePackTraits<std::span<const std::byte>> {
  static void pack(MessagePackWriter& w, std::span<const std::byte> v) { w.packBin(v); }
  static void unpack(MessagePackReader& r, std::span<const std::byte>& v) { v = r.readBin(); }
};

template <>
struct MessagePackTraits<Timestamp> {
  static void pack(MessagePackWriter& w, const Timestamp& v) { w.packTimestamp(v); }
  static void unpack(MessagePackReader& r, Timestamp& v) { v = r.readTimestamp(); }
};

template <class D>
struct MessagePackTraits<std::chrono::time_point<std::chrono::system_clock, D>> {
  using TP = std::chrono::time_point<std::chrono::system_clock, D>;
  using Seconds = std::chrono::duration<std::int64_t>;
  /// Splits into whole seconds and nanoseconds without converting the whole value to nanoseconds
  /// (which overflows past the year 2262); a value whose seconds do not fit int64 (only possible
  /// for durations coarser than a second) is an EncoderError.
  static void pack(MessagePackWriter& w, const TP& v) {
    const D d = v.time_since_epoch();
    if constexpr (std::ratio_greater_v<typename D::period, std::ratio<1>>) {
      if (d > std::chrono::duration_cast<D>(Seconds::max()) ||
          d < std::chrono::duration_cast<D>(Seconds::min()))
        detail::throwMessagePackTimePointRange("pack", 0);
    }
    const Seconds s = std::chrono::floor<Seconds>(d);
    const auto sub = std::chrono::duration_cast<std::chrono::nanoseconds>(d - s);  // < 1 s
    w.packTimestamp({s.count(), static_cast<std::uint32_t>(sub.count())});
  }
  /// A timestamp outside what D can hold is IntegerOverflow (offset of the timestamp).
  static void unpack(MessagePackReader& r, TP& v) {
    const std::uint64_t at = r.offset();
    const Timestamp ts = r.readTimestamp();
    if constexpr (std::ratio_less_v<typename D::period, std::ratio<1>>) {
      // D::max() in seconds, minus one for the fraction added below.
      constexpr std::int64_t maxSeconds = std::chrono::duration_cast<Seconds>(D::max()).count() - 1;
      constexpr std::int64_t minSeconds = std::chrono::duration_cast<Seconds>(D::min()).count() + 1;
      if (ts.seconds > maxSeconds || ts.seconds < minSeconds)
        detail::throwMessagePackTimePointRange("unpack", at);
    }
    v = TP(std::chrono::duration_cast<D>(Seconds(ts.seconds)) +
           std::chrono::duration_cast<D>(std::chrono::nanoseconds(ts.nanoseconds)));
  }
};

template <class T>
struct MessagePackTraits<std::optional<T>> {
  using Impl = detail::OptionalTraits<detail::MessagePackFormat, T>;
  static void pack(MessagePackWriter& w, const std::optional<T>& v) { Impl::write(w, v); }
  static void unpack(MessagePackReader& r, std::optional<T>& v) { Impl::read(r, v); }
};

template <class T, class A>
struct MessagePackTraits<
    std::vector<T, A>,
    std::enable_if_t<!std::is_same_v<std::vector<T, A>, std::vector<std::byte>>>> {
  using Impl = detail::VectorTraits<detail::MessagePackFormat, T, A>;
  static void pack(MessagePackWriter& w, const std::vector<T, A>& v) { Impl::write(w, v); }
  static void unpack(MessagePackReader& r, std::vector<T, A>& v) { Impl::read(r, v); }
};

template <class T, std::size_t N>
struct MessagePackTraits<std::array<T, N>> {
  static void pack(MessagePackWriter& w, const std::array<T, N>& v) {
    w.packArrayHeader(static_cast<std::uint32_t>(N));
    for (const T& x : v) msgpack::pack(w, x);
  }
  static void unpack(MessagePackReader& r, std::array<T, N>& v) {
    const MessagePackReader::Scope scope(r);
    const std::uint64_t at = r.offset();
    const std::uint32_t n = r.readArrayHeader();
    if (n != N) detail::throwMessagePackArity(N, n, at);
    for (T& x : v) msgpack::unpack(r, x);
  }
};

template <class... Ts>
struct MessagePackTraits<std::tuple<Ts...>> {
  static void pack(MessagePackWriter& w, const std::tuple<Ts...>& v) {
    w.packArrayHeader(static_cast<std::uint32_t>(sizeof...(Ts)));
    std::apply([&](const auto&... x) { (msgpack::pack(w, x), ...); }, v);
  }
  static void unpack(MessagePackReader& r, std::tuple<Ts...>& v) {
    const MessagePackReader::Scope scope(r);
    const std::uint64_t at = r.offset();
    const std::uint32_t n = r.readArrayHeader();
    if (n != sizeof...(Ts)) detail::throwMessagePackArity(sizeof...(Ts), n, at);
    std::apply([&](auto&... x) { (msgpack::unpack(r, x), ...); }, v);
  }
};

template <class A, class B>
struct MessagePackTraits<std::pair<A, B>> {
  static void pack(MessagePackWriter& w, const std::pair<A, B>& v) {
    w.packArrayHeader(2);
    msgpack::pack(w, v.first);
    msgpack::pack(w, v.second);
  }
  static void unpack(MessagePackReader& r, std::pair<A, B>& v) {
    const MessagePackReader::Scope scope(r);
    const std::uint64_t at = r.offset();
    const std::uint32_t n = r.readArrayHeader();
    if (n != 2) detail::throwMessagePackArity(2, n, at);
    msgpack::unpack(r, v.first);
    msgpack::unpack(r, v.second);
  }
};

namespace detail {
template <class M>
struct MessagePackMapTraits {
  static void pack(MessagePackWriter& w, const M& m) {
    w.packMapHeader(checkedCount(m.size()));
    for (const auto& [k, v] : m) {
      msgpack::pack(w, k);
      msgpack::pack(w, v);
    }
  }
  static void unpack(MessagePackReader& r, M& m) {
    const MessagePackReader::Scope scope(r);
    const std::uint32_t n = r.readMapHeader();
    m.clear();
    for (std::uint32_t i = 0; i < n; ++i) {
      typename M::key_type k{};
      msgpack::unpack(r, k);
      typename M::mapped_type v{};
      msgpack::unpack(r, v);
      m.insert_or_assign(std::move(k), std::move(v));
    }
  }
};

/// NETBUF_MSGPACK_FIELDS's packer and unpacker over a field table (field_reflection.hpp): a map
/// of the fields in the listed order, keyed by their names.
template <class Table>
struct MessagePackFields {
  using T = typename Table::Type;
  static void pack(MessagePackWriter& w, const T& obj) {
    w.packMapHeader(static_cast<std::uint32_t>(Table::kCount));
    Table::forEach([&](auto i) {
      w.packStr(Table::kNames[decltype(i)::value]);
      msgpack::pack(w, Table::template field<decltype(i)::value>(obj));
    });
  }
  static void unpack(MessagePackReader& r, T& obj) {
    const MessagePackReader::Scope scope(r);
    const std::uint32_t n = r.readMapHeader();
    for (std::uint32_t i = 0; i < n; ++i) {
      if (r.nextType() != ValueType::Str) {  // not a field name: skip the pair
        r.skip();
        r.skip();
        continue;
      }
      const std::string_view key = r.readStr();
      const bool found = Table::visit(
          key, [&](auto f) { msgpack::unpack(r, Table::template field<decltype(f)::value>(obj)); });
      if (!found) r.skip();
    }
  }
};
}  // namespace detail

template <class K, class V, class C, class A>
struct MessagePackTraits<std::map<K, V, C, A>>
    : detail::MessagePackMapTraits<std::map<K, V, C, A>> {};

template <class K, class V, class H, class E, class A>
struct MessagePackTraits<std::unordered_map<K, V, H, E, A>>
    : detail::MessagePackMapTraits<std::unordered_map<K, V, H, E, A>> {};

}  // namespace netbuf

/// Defines netbuf::MessagePackTraits<Type> encoding Type as a map {"field": value, ...}; 1 to 16
/// fields. Use at global namespace scope.
#define NETBUF_MSGPACK_FIELDS(Type, ...)                                                    \
  template <>                                                                               \
  struct netbuf::MessagePackTraits<Type> {                                                  \
    NETBUF_DETAIL_FIELD_TABLE(Type, __VA_ARGS__);                                           \
    using Fields = ::netbuf::detail::MessagePackFields<NetbufFieldTable>;                   \
    static void pack(::netbuf::MessagePackWriter& w, const Type& v) { Fields::pack(w, v); } \
    static void unpack(::netbuf::MessagePackReader& r, Type& v) { Fields::unpack(r, v); }   \
  };
