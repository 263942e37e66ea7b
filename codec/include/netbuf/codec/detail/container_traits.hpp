#pragma once
// The format-independent half of the typed traits of std::optional and std::vector, shared by
// JSON (JsonTraits, json_traits.hpp) and MessagePack (MessagePackTraits, message_pack_traits.hpp).
// Internal.
//
// A Format names the writer and reader and supplies the format's own steps:
//   using Writer; using Reader;
//   template <class T> static void writeElement(Writer&, const T&);  // through the format's traits
//   template <class T> static void readElement(Reader&, T&);
//   static void writeNull(Writer&);          static bool tryReadNull(Reader&);
//   static void beginArray(Writer&, std::size_t size);  static void endArray(Writer&);
//   template <class Start, class Element>
//   static void readArray(Reader&, Start&& start, Element&& element);
//       // calls start(capacityHint) before the first element, then element() once per element
//
// The functions here are forced inline, so each format's traits keep the inlining they declare
// for themselves (JSON's writes are forced inline into the caller, MessagePack's are not).
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#if defined(__GNUC__)
#define NETBUF_DETAIL_ALWAYS_INLINE [[gnu::always_inline]] inline
#else
#define NETBUF_DETAIL_ALWAYS_INLINE inline
#endif

namespace netbuf::detail {

/// std::optional<T>: the value when engaged, the format's null otherwise; reading null gives
/// nullopt, anything else a T.
template <class Format, class T>
struct OptionalTraits {
  NETBUF_DETAIL_ALWAYS_INLINE static void write(typename Format::Writer& w,
                                                const std::optional<T>& v) {
    if (v) {
      Format::writeElement(w, *v);
    } else {
      Format::writeNull(w);
    }
  }
  NETBUF_DETAIL_ALWAYS_INLINE static void read(typename Format::Reader& r, std::optional<T>& v) {
    if (Format::tryReadNull(r)) {
      v.reset();
    } else {
      T x{};
      Format::readElement(r, x);
      v = std::move(x);
    }
  }
};

/// std::vector<T, A>: an array of its elements in order. Reading replaces the contents; the
/// capacity reserved up front is the format's hint (bounded by the format, since an element count
/// read from the input says nothing about the memory the elements need), the rest grows as
/// elements actually decode.
template <class Format, class T, class A>
struct VectorTraits {
  NETBUF_DETAIL_ALWAYS_INLINE static void write(typename Format::Writer& w,
                                                const std::vector<T, A>& v) {
    Format::beginArray(w, v.size());
    for (const T& x : v) Format::writeElement(w, x);
    Format::endArray(w);
  }
  NETBUF_DETAIL_ALWAYS_INLINE static void read(typename Format::Reader& r, std::vector<T, A>& v) {
    Format::readArray(
        r,
        [&](std::size_t capacityHint) {
          v.clear();
          v.reserve(capacityHint);
        },
        [&] {
          T x{};
          Format::readElement(r, x);
          v.push_back(std::move(x));
        });
  }
};

}  // namespace netbuf::detail
