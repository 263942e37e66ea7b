#pragma once
// Typed JSON: C++ values straight to and from JSON text, without a Value tree, for servers that
// know their schema. Built on JsonStreamWriter (json_writer.hpp) and JsonReader (json_parser.hpp).
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
#include <netbuf/codec/json/json_parser.hpp>
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

namespace detail {
/// Marks the library's own JsonTraits (below): their write is forced inline.
template <class T>
concept LibraryTraits = requires {
  typename JsonTraits<T>::NetbufLibraryTraits;
};

/// A container's element. The library's own types are written inline (their traits are forced
/// inline, and an element type strictly smaller than its container cannot lead back to it);
/// anything else (NETBUF_JSON_FIELDS structs, users' traits) through writeValue, which is not
/// forced: a struct can hold a container of itself (struct Node { std::vector<Node> kids; }), and
/// a cycle of forced-inline functions does not compile.
template <class T>
NETBUF_JSON_INLINE void writeElement(JsonStreamWriter& w, const T& v) {
  if constexpr (LibraryTraits<T>) {
    JsonTraits<T>::write(w, v);
  } else {
    writeValue(w, v);
  }
}
}  // namespace detail

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
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::optional<T>& v) {
    if (v) {
      json::detail::writeElement(w, *v);
    } else {
      w.null();
    }
  }
  static void read(JsonReader& r, std::optional<T>& v) {
    if (r.tryReadNull()) {
      v.reset();
    } else {
      T x{};
      json::readValue(r, x);
      v = std::move(x);
    }
  }
};

template <class T, class A>
struct JsonTraits<std::vector<T, A>> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::vector<T, A>& v) {
    w.beginArray();
    for (const T& x : v) json::detail::writeElement(w, x);
    w.endArray();
  }
  static void read(JsonReader& r, std::vector<T, A>& v) {
    v.clear();
    r.readBeginArray();
    while (r.hasNextElement()) {  // each element is at least one byte: growth bounded by input
      T x{};
      json::readValue(r, x);
      v.push_back(std::move(x));
    }
    r.readEndArray();
  }
};

template <class T, std::size_t N>
struct JsonTraits<std::array<T, N>> {
  using NetbufLibraryTraits = void;
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const std::array<T, N>& v) {
    w.beginArray();
    for (const T& x : v) json::detail::writeElement(w, x);
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
    (json::detail::writeElement(w, std::get<I>(v)), ...);
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
    json::detail::writeElement(w, v.first);
    json::detail::writeElement(w, v.second);
    w.endArray();
  }
  static void read(JsonReader& r, std::pair<A, B>& v) {
    r.readBeginArray();
    json::readValue(r, v.first);
    json::readValue(r, v.second);
    r.readEndArray();
  }
};

namespace json::detail {
template <class M>
struct MapTraits {
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
    for (const char c : name)
      plain = plain && json_detail::kPlainByte.v[static_cast<unsigned char>(c)];
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

template <std::size_t N>
constexpr bool hasDuplicates(const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (names[i] == names[j]) return true;
    }
  }
  return false;
}

/// Field table of NETBUF_JSON_FIELDS. Names::value is the std::array of the field names in the
/// listed order; everything derived from them (the key text, the canonical order) is computed at
/// compile time, so writing a struct costs what the equivalent hand-written calls cost.
template <class T, class... F>
struct JsonFields {
  static constexpr std::size_t kCount = sizeof...(F);

  /// The field indices in RFC 8785 order of their names.
  template <class Names>
  static constexpr std::array<std::size_t, kCount> kOrder = canonicalOrder(Names::value);
  template <class Names>
  static constexpr bool kListedSorted = [] {
    for (std::size_t i = 0; i < kCount; ++i) {
      if (kOrder<Names>[i] != i) return false;
    }
    return true;
  }();
  template <class Names, std::size_t... P>
  static constexpr auto canonicalSequence(std::index_sequence<P...>) {
    return std::index_sequence<kOrder<Names>[P]...>{};
  }

  template <class Names>
  NETBUF_JSON_INLINE static void write(JsonStreamWriter& w, const T& obj, F T::*... members) {
    w.beginObject();
    const auto fields = std::tie(members...);
    constexpr auto listed = std::make_index_sequence<kCount>{};
    if constexpr (!kListedSorted<Names>) {
      if (w.options().canonical) {
        writeFields<Names>(w, obj, fields, canonicalSequence<Names>(listed));
        w.endObject();
        return;
      }
    }
    writeFields<Names>(w, obj, fields, listed);
    w.endObject();
  }

  template <class Names, class Fields, std::size_t... I>
  NETBUF_JSON_INLINE static void writeFields(JsonStreamWriter& w, const T& obj,
                                             const Fields& fields, std::index_sequence<I...>) {
    (writeField<Names, I>(w, obj, fields), ...);
  }

  template <class Names, std::size_t I, class Fields>
  NETBUF_JSON_INLINE static void writeField(JsonStreamWriter& w, const T& obj,
                                            const Fields& fields) {
    static constexpr std::array<FieldKey, kCount> keys = fieldKeys(Names::value);
    if constexpr (keys[I].size != 0) {
      w.keyLiteral(keys[I].quoted, keys[I].size, Names::value[I]);
    } else {
      w.key(Names::value[I]);
    }
    // Directly (no writeValue): a field cannot contain its struct by value, so this cannot recurse
    // without a container, which breaks the cycle (writeElement).
    const auto& value = obj.*std::get<I>(fields);
    JsonTraits<std::remove_cvref_t<decltype(value)>>::write(w, value);
  }

  template <class Names>
  static void read(JsonReader& r, T& obj, F T::*... members) {
    r.readBeginObject();
    while (const auto k = r.nextKey()) {
      const std::string_view key = *k;  // compared before the value is read
      const std::string_view* name = Names::value.data();
      bool found = false;
      ((!found && *name++ == key ? (json::readValue(r, obj.*members), found = true) : false), ...);
      if (!found) r.skipValue();
    }
    r.readEndObject();
  }
};
}  // namespace json::detail

template <class V, class C, class A>
struct JsonTraits<std::map<std::string, V, C, A>>
    : json::detail::MapTraits<std::map<std::string, V, C, A>> {};

template <class V, class H, class E, class A>
struct JsonTraits<std::unordered_map<std::string, V, H, E, A>>
    : json::detail::MapTraits<std::unordered_map<std::string, V, H, E, A>> {};

}  // namespace netbuf

// ---- NETBUF_JSON_FIELDS(Type, field...): 1 to 16 fields.
#define NETBUF_JSON_DETAIL_CAT(a, b) NETBUF_JSON_DETAIL_CAT2(a, b)
#define NETBUF_JSON_DETAIL_CAT2(a, b) a##b
#define NETBUF_JSON_DETAIL_COUNT(...) \
  NETBUF_JSON_DETAIL_COUNT2(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define NETBUF_JSON_DETAIL_COUNT2(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, \
                                  _15, _16, N, ...)                                            \
  N
#define NETBUF_JSON_DETAIL_MAP(m, T, ...)                                               \
  NETBUF_JSON_DETAIL_CAT(NETBUF_JSON_DETAIL_MAP, NETBUF_JSON_DETAIL_COUNT(__VA_ARGS__)) \
  (m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP1(m, T, a) m(T, a)
#define NETBUF_JSON_DETAIL_MAP2(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP1(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP3(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP2(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP4(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP3(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP5(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP4(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP6(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP5(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP7(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP6(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP8(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP7(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP9(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP8(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP10(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP9(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP11(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP10(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP12(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP11(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP13(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP12(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP14(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP13(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP15(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP14(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_MAP16(m, T, a, ...) m(T, a), NETBUF_JSON_DETAIL_MAP15(m, T, __VA_ARGS__)
#define NETBUF_JSON_DETAIL_NAME(T, f) std::string_view(#f)
#define NETBUF_JSON_DETAIL_MEMBER(T, f) &T::f
#define NETBUF_JSON_DETAIL_TYPE(T, f) decltype(T::f)

/// Defines netbuf::JsonTraits<Type> writing Type as an object {"field": value, ...} in the listed
/// order (RFC 8785 order in canonical mode). Use at global namespace scope.
#define NETBUF_JSON_FIELDS(Type, ...)                                                            \
  template <>                                                                                    \
  struct netbuf::JsonTraits<Type> {                                                              \
    using Fields =                                                                               \
        ::netbuf::json::detail::JsonFields<Type, NETBUF_JSON_DETAIL_MAP(NETBUF_JSON_DETAIL_TYPE, \
                                                                        Type, __VA_ARGS__)>;     \
    struct NetbufJsonFieldNames {                                                                \
      static constexpr auto value = std::to_array<std::string_view>(                             \
          {NETBUF_JSON_DETAIL_MAP(NETBUF_JSON_DETAIL_NAME, Type, __VA_ARGS__)});                 \
      static_assert(!::netbuf::json::detail::hasDuplicates(value),                               \
                    "NETBUF_JSON_FIELDS: a field is listed twice");                              \
    };                                                                                           \
    NETBUF_JSON_INLINE static void write(::netbuf::JsonStreamWriter& w, const Type& v) {         \
      Fields::template write<NetbufJsonFieldNames>(                                              \
          w, v, NETBUF_JSON_DETAIL_MAP(NETBUF_JSON_DETAIL_MEMBER, Type, __VA_ARGS__));           \
    }                                                                                            \
    static void read(::netbuf::JsonReader& r, Type& v) {                                         \
      Fields::template read<NetbufJsonFieldNames>(                                               \
          r, v, NETBUF_JSON_DETAIL_MAP(NETBUF_JSON_DETAIL_MEMBER, Type, __VA_ARGS__));           \
    }                                                                                            \
  };
