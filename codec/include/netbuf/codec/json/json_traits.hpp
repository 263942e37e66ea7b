#pragma once
// Typed JSON: C++ values straight to and from JSON text, without a Value tree, for servers that
// know their schema. Built on JsonStreamWriter (json_stream_writer.hpp) and JsonReader
// (json_reader.hpp).
//
//   struct User { std::string name; std::uint32_t age = 0; std::optional<std::string> email; };
//   NETBUF_JSON_FIELDS(User, name, age, email)     // at global namespace scope, after the struct
//
//   json::serialize(User{"ada", 36, {}}, buf);     // {"name":"ada","age":36,"email":null}
//   User u = json::deserialize<User>(text);
//
// Customisation point: specialise `netbuf::JsonTraits<T>` with
//   static void write(JsonStreamWriter&, const T&);   static void read(JsonReader&, T&);
// (the second template parameter is for enable_if partial specialisations). Provided:
//  - bool; every integer type (read range-checked: NumberOutOfRange; "1.5" or "1e3" for an integer
//    is TypeMismatch); float and double (read from any number: an integer token becomes the nearest
//    double; written shortest, NaN/infinity -> EncoderError);
//  - std::string (unescaped copy); std::string_view: read as a view into the INPUT, so only a
//    string without escapes can be read that way (a string with escapes is TypeMismatch: read a
//    std::string), and the input must outlive the view;
//  - std::vector<T>, std::array<T, N> (exactly N elements, else TypeMismatch), std::pair and
//    std::tuple (arrays of their size); std::map / std::unordered_map with std::string keys
//    (objects, in the container's order, or RFC 8785's with JsonWriteOptions::canonical; a
//    repeated key read keeps the last value); std::optional<T> (null when empty; reading null
//    gives nullopt).
// NETBUF_JSON_FIELDS(Type, field...) (1 to 16 fields) writes a struct as an object keyed by the
// field names in the listed order, or in RFC 8785 order with JsonWriteOptions::canonical. Both
// orders and each key's JSON text ("name": for names of up to 13 plain ASCII characters) are
// worked out at compile time, so a call writes the fields as hand-written JsonStreamWriter calls
// with literal keys would; a field listed twice is a compile error. Reading accepts the keys in any
// order; unknown keys are skipped (JsonReader::skipValue: structure, UTF-8, depth and limits still
// checked); a missing key leaves the field as it was (its default for a fresh T); a repeated key:
// the last one wins (each occurrence is read into the field in turn), as in NETBUF_MSGPACK_FIELDS.
//
// Errors: JsonError from the reader (TypeMismatch and NumberOutOfRange with the offset of the
// offending value, Syntax, UnexpectedEnd for truncated input, DepthLimit, the size limits ...) and
// EncoderError from the writer. deserialize() also requires the end of the input after the value
// (TrailingContent). A failed read may leave the target partly assigned; serialize() restores
// out's writerIndex on error.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/detail/container_traits.hpp>
#include <netbuf/codec/detail/field_reflection.hpp>
#include <netbuf/codec/json/detail/json_inline.hpp>
#include <netbuf/codec/json/detail/json_short_string.hpp>
#include <netbuf/codec/json/json_parse_options.hpp>
#include <netbuf/codec/json/json_reader.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_write_options.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace netbuf {

template <class T, class = void>
struct JsonTraits;

namespace json {

/// Writes v through JsonTraits<T>.
template <class T>
inline void writeValue(JsonStreamWriter& w, const T& v) {
  JsonTraits<T>::write(w, v);
}

/// Reads into v through JsonTraits<T>.
template <class T>
void readValue(JsonReader& r, T& v) {
  JsonTraits<T>::read(r, v);
}

}  // namespace json

namespace detail {
/// Marks the library's own JsonTraits (below): their write is forced inline.
template <class T>
concept JsonLibraryTraits = requires {
  typename JsonTraits<T>::NetbufLibraryTraits;
};

/// A container's element. The library's own types are written inline (their traits are forced
/// inline, and an element type strictly smaller than its container cannot lead back to it);
/// anything else (NETBUF_JSON_FIELDS structs, users' traits) through writeValue, which is not
/// forced: a struct can hold a container of itself (struct Node { std::vector<Node> kids; }), and
/// a cycle of forced-inline functions does not compile.
template <class T>
NETBUF_JSON_INLINE void writeJsonElement(JsonStreamWriter& w, const T& v) {
  if constexpr (JsonLibraryTraits<T>) {
    JsonTraits<T>::write(w, v);
  } else {
    json::writeValue(w, v);
  }
}

/// JSON's steps of the shared container traits (container_traits.hpp).
struct JsonFormat {
  using Writer = JsonStreamWriter;
  using Reader = JsonReader;
  template <class T>
  NETBUF_JSON_INLINE static void writeElement(JsonStreamWriter& w, const T& v) {
    writeJsonElement(w, v);
  }
  template <class T>
  static void readElement(JsonReader& r, T& v) {
    json::readValue(r, v);
  }
  NETBUF_JSON_INLINE static void writeNull(JsonStreamWriter& w) { w.null(); }
  static bool tryReadNull(JsonReader& r) { return r.tryReadNull(); }
  NETBUF_JSON_INLINE static void beginArray(JsonStreamWriter& w, std::size_t) { w.beginArray(); }
  NETBUF_JSON_INLINE static void endArray(JsonStreamWriter& w) { w.endArray(); }
  /// Each element is at least one byte of input, so the growth is bounded by the input: no hint.
  template <class Start, class Element>
  static void readArray(JsonReader& r, Start&& start, Element&& element) {
    start(std::size_t{0});
    r.readBeginArray();
    while (r.hasNextElement()) element();
    r.readEndArray();
  }
};
}  // namespace detail

namespace json {

/// Appends v's JSON text to out (options as JsonStreamWriter's). On error out's writerIndex is
/// restored and the exception propagates.
// Flattened (GCC): every call in it is inlined, recursion aside, down to the writer's out-of-line
// general code, so the writer's state stays in registers for the whole value, also across the
// writeValue calls that writeElement leaves unforced. (Clang 14 does not flatten the calls that
// inlining exposes; the forced-inline traits cover the common cases there.)
template <class T>
NETBUF_JSON_FLATTEN void serialize(const T& v, ByteBuf& out, const JsonWriteOptions& options = {}) {
  const std::size_t mark = out.writerIndex();
  try {
    JsonStreamWriter w(out, options);
    JsonTraits<T>::write(w, v);
  } catch (...) {
    out.writerIndex(mark);
    throw;
  }
}

/// v's JSON text as a std::string.
template <class T>
std::string serializeToString(const T& v, const JsonWriteOptions& options = {}) {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(256);
  serialize(v, buf, options);
  return std::string(buf.readableStringView());
}

/// Reads one T from text (exactly one JSON value, optionally surrounded by whitespace).
template <class T>
T deserialize(std::string_view text, const JsonParseOptions& options = {}) {
  JsonReader r(text, options);
  T v{};
  readValue(r, v);
  r.readEnd();
  return v;
}

/// Reads one T from input's readable bytes (not consumed; views into them stay valid as long as
/// the buffer's storage).
template <class T>
T deserialize(const ByteBuf& input, const JsonParseOptions& options = {}) {
  return deserialize<T>(input.readableStringView(), options);
}
/// Views into a temporary buffer would dangle (std::string_view fields): refused.
template <class T>
T deserialize(ByteBuf&& input, const JsonParseOptions& options = {}) = delete;

}  // namespace json

template <>
struct JsonTraits<bool> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, bool v) { w.value(v); }
  static void read(JsonReader& r, bool& v) { v = r.readBool(); }
};

template <class T>
struct JsonTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, T v) { w.value(v); }
  static void read(JsonReader& r, T& v) { v = r.readInteger<T>(); }
};

template <class T>
struct JsonTraits<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, T v) {
    if constexpr (std::is_same_v<T, float>) {
      w.value(v);
    } else {
      w.value(static_cast<double>(v));
    }
  }
  static void read(JsonReader& r, T& v) {
    if constexpr (std::is_same_v<T, float>) {
      v = r.readFloat();  // range-checked
    } else {
      v = static_cast<T>(r.readDouble());
    }
  }
};

template <>
struct JsonTraits<std::string> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::string& v) {
    w.value(std::string_view(v));
  }
  static void read(JsonReader& r, std::string& v) { v = r.readString(); }
};

template <>
struct JsonTraits<std::string_view> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, std::string_view v) { w.value(v); }
  static void read(JsonReader& r, std::string_view& v) { v = r.readStringNoEscapes(); }
};

template <class T>
struct JsonTraits<std::optional<T>> {
  using NetbufLibraryTraits = void;
  using Impl = detail::OptionalTraits<detail::JsonFormat, T>;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::optional<T>& v) {
    Impl::write(w, v);
  }
  static void read(JsonReader& r, std::optional<T>& v) { Impl::read(r, v); }
};

template <class T, class A>
struct JsonTraits<std::vector<T, A>> {
  using NetbufLibraryTraits = void;
  using Impl = detail::VectorTraits<detail::JsonFormat, T, A>;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::vector<T, A>& v) {
    Impl::write(w, v);
  }
  static void read(JsonReader& r, std::vector<T, A>& v) { Impl::read(r, v); }
};

template <class T, std::size_t N>
struct JsonTraits<std::array<T, N>> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::array<T, N>& v) {
    w.beginArray();
    for (const T& x : v) detail::writeJsonElement(w, x);
    w.endArray();
  }
  static void read(JsonReader& r, std::array<T, N>& v) {
    r.readBeginArray();
    for (T& x : v) json::readValue(r, x);  // fewer elements: TypeMismatch at the ']'
    r.readEndArray();                      // more elements: TypeMismatch
  }
};

template <class... Ts>
struct JsonTraits<std::tuple<Ts...>> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::tuple<Ts...>& v) {
    w.beginArray();
    writeAll(w, v, std::index_sequence_for<Ts...>{});
    w.endArray();
  }
  template <std::size_t... I>
  NETBUF_JSON_INLINE static void writeAll(JsonStreamWriter& w, const std::tuple<Ts...>& v,
                                          std::index_sequence<I...>) {
    (detail::writeJsonElement(w, std::get<I>(v)), ...);
  }
  static void read(JsonReader& r, std::tuple<Ts...>& v) {
    r.readBeginArray();
    std::apply([&](auto&... x) { (json::readValue(r, x), ...); }, v);
    r.readEndArray();
  }
};

template <class A, class B>
struct JsonTraits<std::pair<A, B>> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::pair<A, B>& v) {
    w.beginArray();
    detail::writeJsonElement(w, v.first);
    detail::writeJsonElement(w, v.second);
    w.endArray();
  }
  static void read(JsonReader& r, std::pair<A, B>& v) {
    r.readBeginArray();
    json::readValue(r, v.first);
    json::readValue(r, v.second);
    r.readEndArray();
  }
};

namespace detail {
template <class M>
struct JsonMapTraits {
  using NetbufLibraryTraits = void;
  static_assert(std::is_same_v<typename M::key_type, std::string>,
                "JSON object keys are strings: use std::string keys");
  static void write(JsonStreamWriter& w, const M& m) {
    w.beginObject();
    const auto byKey = [](const auto& a, const auto& b) {
      return json::compareUtf16(a.first, b.first) < 0;
    };
    if (w.options().canonical && m.size() > 1 && !std::is_sorted(m.begin(), m.end(), byKey)) {
      // RFC 8785 order (UTF-16 code units), not the container's: an unordered_map's order is
      // arbitrary, and std::map's byte order differs where U+E000..U+FFFF meets characters above
      // U+FFFF (already sorted: written as it is). Keys are unique, so no duplicate check.
      std::vector<const typename M::value_type*> order;
      order.reserve(m.size());
      for (const auto& e : m) order.push_back(&e);
      std::sort(order.begin(), order.end(),
                [&](const auto* a, const auto* b) { return byKey(*a, *b); });
      for (const auto* e : order) {
        w.key(e->first);
        json::writeValue(w, e->second);
      }
    } else {
      for (const auto& [k, v] : m) {
        w.key(k);
        json::writeValue(w, v);
      }
    }
    w.endObject();
  }
  static void read(JsonReader& r, M& m) {
    m.clear();
    r.readBeginObject();
    while (const auto k = r.nextKey()) {
      typename M::mapped_type v{};
      std::string key(*k);  // copy first: reading the value may reuse the reader's scratch
      json::readValue(r, v);
      m.insert_or_assign(std::move(key), std::move(v));
    }
    r.readEndObject();
  }
};

/// A field's key as JsonStreamWriter::keyLiteral takes it: "name": in 16 zero-padded bytes, or
/// size 0 when it does not fit or needs an escape in some mode (written by key() then).
struct FieldKey {
  char quoted[16] = {};
  std::size_t size = 0;
};

template <std::size_t N>
constexpr std::array<FieldKey, N> fieldKeys(const std::array<std::string_view, N>& names) {
  std::array<FieldKey, N> keys{};
  for (std::size_t i = 0; i < N; ++i) {
    const std::string_view name = names[i];
    bool plain = name.size() + 3 <= 16;
    for (const char c : name) plain = plain && detail::kPlainByte.v[static_cast<unsigned char>(c)];
    if (!plain) continue;
    FieldKey& k = keys[i];
    k.quoted[0] = '"';
    for (std::size_t j = 0; j < name.size(); ++j) k.quoted[j + 1] = name[j];
    k.quoted[name.size() + 1] = '"';
    k.quoted[name.size() + 2] = ':';
    k.size = name.size() + 3;
  }
  return keys;
}

/// The field indices in RFC 8785 order of their names (insertion sort, at compile time).
template <std::size_t N>
constexpr std::array<std::size_t, N> canonicalOrder(const std::array<std::string_view, N>& names) {
  std::array<std::size_t, N> order{};
  for (std::size_t i = 0; i < N; ++i) {
    std::size_t j = i;
    for (; j > 0 && json::compareUtf16(names[i], names[order[j - 1]]) < 0; --j)
      order[j] = order[j - 1];
    order[j] = i;
  }
  return order;
}

/// NETBUF_JSON_FIELDS's writer and reader over a field table (field_reflection.hpp). Everything
/// derived from the names (each key's text, the canonical order) is computed at compile time, so
/// writing a struct costs what the equivalent hand-written calls with literal keys cost.
template <class Table>
struct JsonFields {
  using T = typename Table::Type;
  static constexpr std::size_t kCount = Table::kCount;

  static constexpr std::array<FieldKey, kCount> kKeys = fieldKeys(Table::kNames);
  /// The field indices in RFC 8785 order of their names.
  static constexpr std::array<std::size_t, kCount> kOrder = canonicalOrder(Table::kNames);
  static constexpr bool kListedSorted = [] {
    for (std::size_t i = 0; i < kCount; ++i) {
      if (kOrder[i] != i) return false;
    }
    return true;
  }();
  template <std::size_t... P>
  static constexpr auto canonicalSequence(std::index_sequence<P...>) {
    return std::index_sequence<kOrder[P]...>{};
  }

  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const T& obj) {
    w.beginObject();
    constexpr auto listed = std::make_index_sequence<kCount>{};
    if constexpr (!kListedSorted) {
      if (w.options().canonical) {
        writeFields(w, obj, canonicalSequence(listed));
        w.endObject();
        return;
      }
    }
    writeFields(w, obj, listed);
    w.endObject();
  }

  template <std::size_t... I>
  NETBUF_JSON_INLINE static void writeFields(JsonStreamWriter& w, const T& obj,
                                             std::index_sequence<I...>) {
    (writeField<I>(w, obj), ...);
  }

  template <std::size_t I>
  NETBUF_JSON_INLINE static void writeField(JsonStreamWriter& w, const T& obj) {
    if constexpr (kKeys[I].size != 0) {
      w.keyLiteral(kKeys[I].quoted, kKeys[I].size, Table::kNames[I]);
    } else {
      w.key(Table::kNames[I]);
    }
    // Directly (no writeValue): a field cannot contain its struct by value, so this cannot recurse
    // without a container, which breaks the cycle (writeJsonElement).
    JsonTraits<typename Table::template FieldType<I>>::write(w, Table::template field<I>(obj));
  }

  static void read(JsonReader& r, T& obj) {
    r.readBeginObject();
    while (const auto k = r.nextKey()) {
      // The key is compared before the value is read (which may reuse the reader's scratch).
      const bool found = Table::visit(
          *k, [&](auto i) { json::readValue(r, Table::template field<decltype(i)::value>(obj)); });
      if (!found) r.skipValue();
    }
    r.readEndObject();
  }
};
}  // namespace detail

template <class V, class C, class A>
struct JsonTraits<std::map<std::string, V, C, A>>
    : detail::JsonMapTraits<std::map<std::string, V, C, A>> {};

template <class V, class H, class E, class A>
struct JsonTraits<std::unordered_map<std::string, V, H, E, A>>
    : detail::JsonMapTraits<std::unordered_map<std::string, V, H, E, A>> {};
}  // namespace netbuf

/// Defines netbuf::JsonTraits<Type> writing Type as an object {"field": value, ...} in the listed
/// order (RFC 8785 order in canonical mode); 1 to 16 fields. Use at global namespace scope.
#define NETBUF_JSON_FIELDS(Type, ...)                                                    \
  template <>                                                                            \
  struct netbuf::JsonTraits<Type> {                                                      \
    NETBUF_DETAIL_FIELD_TABLE(Type, __VA_ARGS__);                                        \
    static_assert(!::netbuf::detail::hasDuplicates(NetbufFieldTable::kNames),            \
                  "NETBUF_JSON_FIELDS: a field is listed twice");                        \
    using Fields = ::netbuf::detail::JsonFields<NetbufFieldTable>;                       \
    NETBUF_JSON_INLINE static void write(::netbuf::JsonStreamWriter& w, const Type& v) { \
      Fields::write(w, v);                                                               \
    }                                                                                    \
    static void read(::netbuf::JsonReader& r, Type& v) { Fields::read(r, v); }           \
  };
