#pragma once
// The string-kernel benchmark workloads, shared by microbench/utf8_bench.cpp (Google Benchmark)
// and `netbuf bench strings` (its own timing loop), so both measure exactly the same code.
//
// Workloads: the Netty benchmark inputs from microbench/data/bench-strings/ (ASCII and mixed text
// of 16, 128 and 1024 UTF-16 units; the mixed files hold about 2% surrogate pairs) and Netty's own
// "Some UTF-8 like äÄ∏ŒŒ" repeated to 128 units. Operations: the netbuf kernels and, beside each,
// the baselines a C++ user would otherwise write: a straightforward scalar loop, the
// std::wstring_convert route (convert to a std::string, then copy it), and memcpy of the same
// number of input bytes (the physical reference). Every variant writes into a reused destination.

#include <netbuf/buffer/utf8.hpp>

#include <algorithm>
#include <codecvt>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <locale>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace netbuf::bench {

struct Workload {
  std::string name;  // e.g. "ascii-128"
  std::u16string u16;
  std::u32string u32;
  std::string utf8;
};

/// Destination size that fits every operation's bound for every workload (4 bytes per unit).
inline std::size_t destinationBytes(const std::vector<Workload>& ws) {
  std::size_t most = 0;
  for (const Workload& w : ws) most = std::max(most, 4 * w.u16.size() + 4 * w.utf8.size());
  return most + 64;
}

/// The reused destination every variant writes into, starting on a 4 KiB page boundary.
///
/// Why aligned: a destination at whatever address the heap hands out may put the first few
/// hundred bytes across a page boundary, and then every iteration pays for page-split stores (and,
/// on AMD Zen 4/5, for the next iteration's input loads that 4K-alias them): Netty's 128-unit mixed
/// string went from about 25 ns to 60-70 ns under AVX-512, by the accident of heap layout. A
/// writer appending to a real buffer crosses a page once per 4 KiB of output, not on every
/// call, and Netty's pooled buffers (the comparison) start on page or subpage boundaries too. The
/// kernels still handle a crossing cheaply (utf8_avx512.cpp, storeAcrossPage); this just keeps a
/// 1-in-25 case from being measured as the only case.
class Destination {
 public:
  explicit Destination(std::size_t bytes) : storage_(bytes + 4096) {}
  std::byte* data() noexcept {
    const auto p = reinterpret_cast<std::uintptr_t>(storage_.data());
    return storage_.data() + ((4096 - (p & 4095)) & 4095);
  }

 private:
  std::vector<std::byte> storage_;
};

namespace detail {

// Decoding for setup only (the files are well-formed; anything else is an error).
inline std::u32string decodeForSetup(const std::string& s, const std::string& what) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t len = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    if (i + len > s.size() ||
        !utf8::isValidUtf8(reinterpret_cast<const std::byte*>(s.data() + i), len))
      throw std::runtime_error(what + ": not well-formed UTF-8 at byte " + std::to_string(i));
    char32_t c = len == 1 ? b : b & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k)
      c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out += c;
    i += len;
  }
  return out;
}

inline std::u16string toUtf16(const std::u32string& cps) {
  std::u16string out;
  for (char32_t c : cps) {
    if (c < 0x10000) {
      out += static_cast<char16_t>(c);
    } else {
      out += static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10));
      out += static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF));
    }
  }
  return out;
}

inline Workload makeWorkload(std::string name, std::string utf8) {
  Workload w;
  w.name = std::move(name);
  w.u32 = decodeForSetup(utf8, w.name);
  w.u16 = toUtf16(w.u32);
  w.utf8 = std::move(utf8);
  return w;
}

}  // namespace detail

/// Loads the six files from `dataDir`/bench-strings and adds Netty's mixed string. Throws
/// std::runtime_error naming the file when one is missing or malformed.
inline std::vector<Workload> loadWorkloads(const std::string& dataDir) {
  std::vector<Workload> out;
  for (const char* kind : {"ascii", "mixed"}) {
    for (int n : {16, 128, 1024}) {
      const std::string name = std::string(kind) + "-" + std::to_string(n);
      const std::string path = dataDir + "/bench-strings/" + name + ".txt";
      std::ifstream in(path, std::ios::binary);
      if (!in) throw std::runtime_error("cannot open benchmark input " + path);
      std::ostringstream text;
      text << in.rdbuf();
      std::string s = text.str();
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      out.push_back(detail::makeWorkload(name, std::move(s)));
      if (out.back().u16.size() != static_cast<std::size_t>(n))
        throw std::runtime_error(path + ": expected " + std::to_string(n) +
                                 " UTF-16 units, found " + std::to_string(out.back().u16.size()));
    }
  }
  // Netty's ByteBufUtilBenchmark string: 21 units repeated and cut to 128 units (164 bytes).
  const std::u32string unit = U"Some UTF-8 like \u00E4\u00C4\u220F\u0152\u0152";
  std::u32string netty;
  while (netty.size() < 128) netty += unit;
  netty.resize(128);
  std::string utf8(4 * netty.size(), '\0');
  utf8.resize(
      utf8::encodeUtf8(std::u32string_view(netty), reinterpret_cast<std::byte*>(utf8.data())));
  out.push_back(detail::makeWorkload("netty-128", std::move(utf8)));
  return out;
}

// ---------------------------------------------------------------- the straightforward loops

// "Scalar" is meant literally: these loops are one unit at a time. GCC and clang would otherwise
// auto-vectorise the simplest of them (writeAscii) at -O3, which measures the compiler rather than
// the loop a user writes; NETBUF_SCALAR_LOOP keeps them scalar on both compilers.
#if defined(__clang__)
#define NETBUF_SCALAR_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#define NETBUF_NO_VECTORIZE
#else
#define NETBUF_SCALAR_LOOP
#define NETBUF_NO_VECTORIZE __attribute__((optimize("no-tree-vectorize")))
#endif

namespace loops {

NETBUF_NO_VECTORIZE inline std::size_t writeAscii(const std::u16string& s, unsigned char* d) {
  NETBUF_SCALAR_LOOP
  for (char16_t c : s) *d++ = c < 0x80 ? static_cast<unsigned char>(c) : '?';
  return s.size();
}

inline unsigned char* put(char32_t c, unsigned char* d) {
  if (c < 0x80) {
    *d++ = static_cast<unsigned char>(c);
  } else if (c < 0x800) {
    *d++ = static_cast<unsigned char>(0xC0 | (c >> 6));
    *d++ = static_cast<unsigned char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *d++ = static_cast<unsigned char>(0xE0 | (c >> 12));
    *d++ = static_cast<unsigned char>(0x80 | ((c >> 6) & 0x3F));
    *d++ = static_cast<unsigned char>(0x80 | (c & 0x3F));
  } else {
    *d++ = static_cast<unsigned char>(0xF0 | (c >> 18));
    *d++ = static_cast<unsigned char>(0x80 | ((c >> 12) & 0x3F));
    *d++ = static_cast<unsigned char>(0x80 | ((c >> 6) & 0x3F));
    *d++ = static_cast<unsigned char>(0x80 | (c & 0x3F));
  }
  return d;
}

inline std::size_t utf8FromU16(const std::u16string& s, unsigned char* d) {
  unsigned char* start = d;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
        s[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[++i] - 0xDC00);
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = '?';
    }
    d = put(c, d);
  }
  return static_cast<std::size_t>(d - start);
}

inline std::size_t utf8FromU32(const std::u32string& s, unsigned char* d) {
  unsigned char* start = d;
  for (char32_t c : s) d = put((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF ? U'?' : c, d);
  return static_cast<std::size_t>(d - start);
}

inline std::size_t utf8Bytes(const std::u16string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char16_t c = s[i];
    if (c < 0x80)
      n += 1;
    else if (c < 0x800)
      n += 2;
    else if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
             s[i + 1] <= 0xDFFF) {
      n += 4;
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF)
      n += 1;
    else
      n += 3;
  }
  return n;
}

/// Length of the well-formed sequence at s[i], 0 if ill-formed (Table 3-7).
inline std::size_t validSequence(const std::string& s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned b = at(i);
  if (b < 0x80) return 1;
  std::size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
  if (b < 0xC2 || b > 0xF4 || i + len > s.size()) return 0;
  unsigned lo = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80;
  unsigned hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
  for (std::size_t k = 1; k < len; ++k, lo = 0x80, hi = 0xBF)
    if (at(i + k) < lo || at(i + k) > hi) return 0;
  return len;
}

inline std::size_t copyUtf8(const std::string& s, unsigned char* d) {
  unsigned char* start = d;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = validSequence(s, i);
    if (len == 0) {  // one replacement per bad byte: simpler than maximal subparts, never slower
      *d++ = 0xEF;
      *d++ = 0xBF;
      *d++ = 0xBD;
      ++i;
    } else {
      for (std::size_t k = 0; k < len; ++k) *d++ = static_cast<unsigned char>(s[i + k]);
      i += len;
    }
  }
  return static_cast<std::size_t>(d - start);
}

inline std::size_t isValid(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = validSequence(s, i);
    if (len == 0) return 0;
    i += len;
  }
  return 1;
}

inline std::size_t toUtf16(const std::string& s, char16_t* d) {
  char16_t* start = d;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = validSequence(s, i);
    if (len == 0) {
      *d++ = 0xFFFD;
      ++i;
      continue;
    }
    const auto b = static_cast<unsigned char>(s[i]);
    char32_t c = len == 1 ? b : b & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k)
      c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    if (c >= 0x10000) {
      *d++ = static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10));
      *d++ = static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF));
    } else {
      *d++ = static_cast<char16_t>(c);
    }
    i += len;
  }
  return static_cast<std::size_t>(d - start);
}

}  // namespace loops

// ---------------------------------------------------------------- the std::wstring_convert route

namespace codecvt {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
using U16 = std::wstring_convert<std::codecvt_utf8_utf16<char16_t>, char16_t>;
using U32 = std::wstring_convert<std::codecvt_utf8<char32_t>, char32_t>;

// A user would construct the converter per call; keep one per thread to measure the conversion
// itself rather than the facet allocation.
inline U16& u16() {
  thread_local U16 conv("?", u"\uFFFD");
  return conv;
}
inline U32& u32() {
  thread_local U32 conv("?", U"\uFFFD");
  return conv;
}

inline std::size_t utf8FromU16(const std::u16string& s, unsigned char* d) {
  const std::string out = u16().to_bytes(s);
  std::memcpy(d, out.data(), out.size());
  return out.size();
}
inline std::size_t utf8FromU32(const std::u32string& s, unsigned char* d) {
  const std::string out = u32().to_bytes(s);
  std::memcpy(d, out.data(), out.size());
  return out.size();
}
inline std::size_t utf8Bytes(const std::u16string& s) { return u16().to_bytes(s).size(); }
inline std::size_t toUtf16(const std::string& s, char16_t* d) {
  const std::u16string out = u16().from_bytes(s);
  std::memcpy(d, out.data(), 2 * out.size());
  return out.size();
}
/// Validate by decoding (the converter reports ill-formed input), then copy the original.
inline std::size_t copyUtf8(const std::string& s, unsigned char* d) {
  (void)u16().from_bytes(s);
  std::memcpy(d, s.data(), s.size());
  return s.size();
}
inline std::size_t isValid(const std::string& s) {
  const std::u16string out = u16().from_bytes(s);
  return u16().converted() == s.size() ? 1 : 0;
}
#pragma GCC diagnostic pop
}  // namespace codecvt

// ---------------------------------------------------------------- operations

enum class Variant { Netbuf, NetbufScalar, Loop, Codecvt, Memcpy };
inline const char* variantName(Variant v) {
  switch (v) {
    case Variant::Netbuf:
      return "netbuf";
    case Variant::NetbufScalar:
      return "netbuf-scalar";
    case Variant::Loop:
      return "scalar-loop";
    case Variant::Codecvt:
      return "codecvt";
    case Variant::Memcpy:
      return "memcpy";
  }
  return "?";
}

using Kernel = std::size_t (*)(const Workload&, std::byte*);

struct Operation {
  const char* name;  // "writeAscii", "writeUtf8/u16", ...
  std::size_t (*inputBytes)(const Workload&);
  Kernel netbuf;  // runs under the active tier (Variant::NetbufScalar forces Scalar)
  Kernel loop;
  Kernel codecvt;  // nullptr where the standard library offers no such route
};

namespace ops {
inline unsigned char* u8p(std::byte* d) { return reinterpret_cast<unsigned char*>(d); }
inline char16_t* u16p(std::byte* d) { return reinterpret_cast<char16_t*>(d); }
inline std::size_t u16Bytes(const Workload& w) { return 2 * w.u16.size(); }
inline std::size_t u32Bytes(const Workload& w) { return 4 * w.u32.size(); }
inline std::size_t utf8Bytes(const Workload& w) { return w.utf8.size(); }
}  // namespace ops

inline const std::vector<Operation>& operations() {
  using namespace ops;
  static const std::vector<Operation> table = {
      {"writeAscii", u16Bytes,
       [](const Workload& w, std::byte* d) {
         return utf8::encodeAscii(std::u16string_view(w.u16), d);
       },
       [](const Workload& w, std::byte* d) { return loops::writeAscii(w.u16, u8p(d)); }, nullptr},
      {"writeUtf8/u16", u16Bytes,
       [](const Workload& w, std::byte* d) {
         return utf8::encodeUtf8(std::u16string_view(w.u16), d);
       },
       [](const Workload& w, std::byte* d) { return loops::utf8FromU16(w.u16, u8p(d)); },
       [](const Workload& w, std::byte* d) { return codecvt::utf8FromU16(w.u16, u8p(d)); }},
      {"writeUtf8/u32", u32Bytes,
       [](const Workload& w, std::byte* d) {
         return utf8::encodeUtf8(std::u32string_view(w.u32), d);
       },
       [](const Workload& w, std::byte* d) { return loops::utf8FromU32(w.u32, u8p(d)); },
       [](const Workload& w, std::byte* d) { return codecvt::utf8FromU32(w.u32, u8p(d)); }},
      {"writeUtf8/validated", utf8Bytes,
       [](const Workload& w, std::byte* d) { return utf8::copyUtf8Replacing(w.utf8, d); },
       [](const Workload& w, std::byte* d) { return loops::copyUtf8(w.utf8, u8p(d)); },
       [](const Workload& w, std::byte* d) { return codecvt::copyUtf8(w.utf8, u8p(d)); }},
      {"utf8Bytes", u16Bytes,
       [](const Workload& w, std::byte*) { return utf8::utf8Bytes(std::u16string_view(w.u16)); },
       [](const Workload& w, std::byte*) { return loops::utf8Bytes(w.u16); },
       [](const Workload& w, std::byte*) { return codecvt::utf8Bytes(w.u16); }},
      {"readUtf8AsUtf16", utf8Bytes,
       [](const Workload& w, std::byte* d) { return utf8::utf8ToUtf16(w.utf8, u16p(d)); },
       [](const Workload& w, std::byte* d) { return loops::toUtf16(w.utf8, u16p(d)); },
       [](const Workload& w, std::byte* d) { return codecvt::toUtf16(w.utf8, u16p(d)); }},
      {"isValidUtf8", utf8Bytes,
       [](const Workload& w, std::byte*) {
         return static_cast<std::size_t>(
             utf8::isValidUtf8(reinterpret_cast<const std::byte*>(w.utf8.data()), w.utf8.size()));
       },
       [](const Workload& w, std::byte*) { return loops::isValid(w.utf8); },
       [](const Workload& w, std::byte*) { return codecvt::isValid(w.utf8); }},
  };
  return table;
}

/// The physical reference: memcpy of the operation's input bytes into the destination.
inline std::size_t memcpyInput(const Operation& op, const Workload& w, std::byte* d) {
  const std::size_t n = op.inputBytes(w);
  const void* src = op.inputBytes == ops::u16Bytes   ? static_cast<const void*>(w.u16.data())
                    : op.inputBytes == ops::u32Bytes ? static_cast<const void*>(w.u32.data())
                                                     : static_cast<const void*>(w.utf8.data());
  std::memcpy(d, src, n);
  return n;
}

/// The variants measured for an operation, in table-column order.
inline std::vector<Variant> variantsOf(const Operation& op) {
  std::vector<Variant> v{Variant::Netbuf, Variant::NetbufScalar, Variant::Loop};
  if (op.codecvt) v.push_back(Variant::Codecvt);
  v.push_back(Variant::Memcpy);
  return v;
}

/// One call of `variant`; the caller forces the Scalar tier around NetbufScalar runs.
inline std::size_t runOnce(const Operation& op, Variant variant, const Workload& w, std::byte* d) {
  switch (variant) {
    case Variant::Netbuf:
    case Variant::NetbufScalar:
      return op.netbuf(w, d);
    case Variant::Loop:
      return op.loop(w, d);
    case Variant::Codecvt:
      return op.codecvt(w, d);
    case Variant::Memcpy:
      return memcpyInput(op, w, d);
  }
  return 0;
}

}  // namespace netbuf::bench
