#pragma once
// The field reflection behind NETBUF_JSON_FIELDS and NETBUF_MSGPACK_FIELDS: a preprocessor
// for-each over a struct's field names (1 to 16) and a field table that holds, at compile time, the
// names in the listed order and the member pointers. Each format's macro is a thin layer on it:
// it specialises its traits with NETBUF_DETAIL_FIELD_TABLE and walks the table (forEach to write,
// visit to read a key), so both formats see the same fields in the same order. Internal.
//
// Everything here is a constant expression: a field's name and member pointer are template
// arguments, so a format's generated code is what hand-written calls with literal keys would be.
#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace netbuf::detail {

/// The member type M of a member pointer type M C::*.
template <class P>
struct MemberType;
template <class C, class M>
struct MemberType<M C::*> {
  using type = M;
};

/// The fields of T: Names::value is the std::array<std::string_view, N> of the field names in the
/// listed order, Members the matching member pointers (&T::field...).
template <class T, class Names, auto... Members>
struct FieldTable {
  using Type = T;
  static constexpr std::size_t kCount = sizeof...(Members);
  static constexpr const std::array<std::string_view, kCount>& kNames = Names::value;

  /// Field I's member pointer type (M T::*) and value. The type is spelled out rather than
  /// deduced (`auto`): clang 14 does not deduce a static variable template's type at its use.
  template <std::size_t I>
  using MemberPointer = std::tuple_element_t<I, std::tuple<decltype(Members)...>>;
  template <std::size_t I>
  static constexpr MemberPointer<I> kMember = std::get<I>(std::tuple{Members...});
  /// Field I's type (cv-unqualified).
  template <std::size_t I>
  using FieldType = std::remove_cv_t<typename MemberType<MemberPointer<I>>::type>;

  /// Field I of obj.
  template <std::size_t I>
  static constexpr const auto& field(const T& obj) noexcept {
    return obj.*kMember<I>;
  }
  template <std::size_t I>
  static constexpr auto& field(T& obj) noexcept {
    return obj.*kMember<I>;
  }

  /// Calls f(std::integral_constant<std::size_t, I>{}) for each field index I of seq, in its order.
  template <class F, std::size_t... I>
  static constexpr void forEach(F&& f, std::index_sequence<I...>) {
    (f(std::integral_constant<std::size_t, I>{}), ...);
  }
  template <class F>
  static constexpr void forEach(F&& f) {
    forEach(std::forward<F>(f), std::make_index_sequence<kCount>{});
  }

  /// Calls f(std::integral_constant<std::size_t, I>{}) for the first field named `key`; returns
  /// whether there was one (the names are compared in the listed order).
  template <class F>
  static bool visit(std::string_view key, F&& f) {
    return visit(key, std::forward<F>(f), std::make_index_sequence<kCount>{});
  }

 private:
  template <class F, std::size_t... I>
  static bool visit(std::string_view key, F&& f, std::index_sequence<I...>) {
    return ((kNames[I] == key ? (f(std::integral_constant<std::size_t, I>{}), true) : false) ||
            ...);
  }
};

/// Whether a name occurs twice in names.
template <std::size_t N>
constexpr bool hasDuplicates(const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (names[i] == names[j]) return true;
    }
  }
  return false;
}

}  // namespace netbuf::detail

// ---- NETBUF_DETAIL_FOR_EACH(m, T, f...): m(T, f) for each of 1 to 16 names, comma-separated.
#define NETBUF_DETAIL_CAT(a, b) NETBUF_DETAIL_CAT2(a, b)
#define NETBUF_DETAIL_CAT2(a, b) a##b
#define NETBUF_DETAIL_COUNT(...) \
  NETBUF_DETAIL_COUNT2(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define NETBUF_DETAIL_COUNT2(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, \
                             _16, N, ...)                                                      \
  N
#define NETBUF_DETAIL_FOR_EACH(m, T, ...) \
  NETBUF_DETAIL_CAT(NETBUF_DETAIL_FOR_EACH, NETBUF_DETAIL_COUNT(__VA_ARGS__))(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH1(m, T, a) m(T, a)
#define NETBUF_DETAIL_FOR_EACH2(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH1(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH3(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH2(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH4(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH3(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH5(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH4(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH6(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH5(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH7(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH6(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH8(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH7(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH9(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH8(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH10(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH9(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH11(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH10(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH12(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH11(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH13(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH12(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH14(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH13(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH15(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH14(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FOR_EACH16(m, T, a, ...) m(T, a), NETBUF_DETAIL_FOR_EACH15(m, T, __VA_ARGS__)
#define NETBUF_DETAIL_FIELD_NAME(T, f) std::string_view(#f)
#define NETBUF_DETAIL_FIELD_MEMBER(T, f) &T::f

/// Inside a class body: `NetbufFieldTable`, the FieldTable of Type's listed fields (names and
/// member pointers), and its names type NetbufFieldNames.
#define NETBUF_DETAIL_FIELD_TABLE(Type, ...)                                                \
  struct NetbufFieldNames {                                                                 \
    static constexpr auto value = std::to_array<std::string_view>(                          \
        {NETBUF_DETAIL_FOR_EACH(NETBUF_DETAIL_FIELD_NAME, Type, __VA_ARGS__)});             \
  };                                                                                        \
  using NetbufFieldTable =                                                                  \
      ::netbuf::detail::FieldTable<Type, NetbufFieldNames,                                  \
                                   NETBUF_DETAIL_FOR_EACH(NETBUF_DETAIL_FIELD_MEMBER, Type, \
                                                          __VA_ARGS__)>
