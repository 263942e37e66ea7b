#pragma once
// JSON writer: serialises a Value tree (value.hpp) as JSON straight into a ByteBuf, compact,
// pretty or canonical (RFC 8785, the JSON Canonicalization Scheme).
//
//   ByteBuf out = Unpooled::buffer();
//   json::write(doc.root(), out);                                 // {"a":[1,2.5,"x"]}
//   json::toString(doc.root(), {.pretty = true});                 // indented, 2 spaces
//   json::toString(doc.root(), {.canonical = true});              // RFC 8785 bytes
//
// Output (every mode): valid UTF-8. Strings escape '"', '\\' and control characters (\b \f \n
// \r \t, others \u00xx, lowercase hex); '/' and DEL are not escaped. escapeNonAscii writes every
// non-ASCII character as \uxxxx (a surrogate pair above the BMP), so the output is ASCII.
// Integers are written exactly. Float64 uses the shortest text that reads back as the same double
// (std::to_chars), with ".0" appended when that text looks like an integer, so that parsing it
// gives a Float64 again ("1.0", "-0.0", "1e+21"); Float32 uses the shortest text of the float.
//
// Canonical mode (RFC 8785; pretty and escapeNonAscii are ignored): no whitespace; object members
// sorted by their keys' UTF-16 code units; numbers in ECMAScript's Number.prototype.toString form
// (4.5, 0.002, 1e+30, 1e-7; -0 -> 0); Float32 is written as the double it equals; integers with
// |n| > 2^53 are written as the double they round to (RFC 8785 numbers are IEEE doubles, I-JSON):
// 2^64 - 1 -> 18446744073709552000. Duplicate keys are an EncoderError. Equal trees give identical
// bytes whatever the members' order. Tagged extended-type objects keep their integers exact.
//
// Extended types (Bin, Ext, Timestamp): with extendedTypes, the tagged objects json_parser.hpp
// reads back ({"$bin":"<base64>"}, {"$ext":[type,"<base64>"]}, {"$timestamp":[s,ns]}, always
// compact); without it they are an EncoderError naming the type. With extendedTypes a Float32 is
// tagged too ({"$float32":1.5}: its number as above), so that it reads back as a Float32.
//
// Errors (EncoderError, offset kNone; the tree is not changed): a Str flagged invalid UTF-8 (or
// holding ill-formed UTF-8), NaN or an infinity, a map key that is not a Str, Bin/Ext/Timestamp
// without extendedTypes, nesting deeper than maxDepth (value = depth, limit = maxDepth), duplicate
// keys in canonical mode. On error, out's writerIndex is restored (nothing partial is left).
//
// Cost: the writer keeps a cursor into out's writable room, so a token costs one bounds compare and
// raw stores (ensureWritable only when the room runs out: once per write for a buffer of the right
// size); strings under 16 bytes without escapes are checked and copied with one 16-byte load (which
// may read past the string within its 4 KiB page; word loads in sanitizer builds and near a page
// end), longer ones 16 bytes at a time (SSE2); canonical sorting of a map of at most 32 members is
// an insertion sort on a stack array of 8-byte key prefixes that also finds duplicates (no heap
// allocation). Recursion depth is bounded by maxDepth.
//
// JsonStreamWriter (below) writes the same text from a sequence of calls instead of a Value tree:
// the base of the typed API (json_traits.hpp).

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/value.hpp>
#include <string>
#include <string_view>
#include <type_traits>

// The stream writer's calls are forced inline: its speed depends on the compiler seeing that the
// writer's address never escapes (see JsonStreamWriter's general code), and one out-of-line call
// that takes `this` would put its state back in memory for the whole caller.
#if defined(__GNUC__)
#define NETBUF_JSON_INLINE [[gnu::always_inline]] inline
#define NETBUF_JSON_FLATTEN [[gnu::flatten]] inline
#else
#define NETBUF_JSON_INLINE inline
#define NETBUF_JSON_FLATTEN inline
#endif

namespace netbuf {

struct JsonWriteOptions {
  /// Newlines and indentation (indent spaces per level; ": " between key and value).
  bool pretty = false;
  int indent = 2;
  /// Non-ASCII characters as \uxxxx escapes.
  bool escapeNonAscii = false;
  /// RFC 8785 output (overrides pretty and escapeNonAscii).
  bool canonical = false;
  /// Bin/Ext/Timestamp as tagged objects instead of an EncoderError; Float32 as {"$float32": x}.
  bool extendedTypes = false;
  /// Most arrays/maps open at once (the top-level one is depth 1).
  std::size_t maxDepth = 512;
};

/// A writer with fixed options (the same as the json::write free function, for symmetry with
/// JsonParser and for holding options in one place).
class JsonWriter {
 public:
  explicit JsonWriter(const JsonWriteOptions& options = {}) : options_(options) {}
  const JsonWriteOptions& options() const noexcept { return options_; }
  void setOptions(const JsonWriteOptions& options) { options_ = options; }

  /// Appends v's JSON text at out's writerIndex (growing out as needed). Throws EncoderError.
  void write(const Value& v, ByteBuf& out) const;
  std::string toString(const Value& v) const;

 private:
  JsonWriteOptions options_;
};

namespace json_detail {
struct WriteRun;

// Short-string helpers shared by the writer and JsonStreamWriter's inline fast paths.

/// kPlainByte[c]: byte c is copied as is in every mode (ASCII, not '"', '\\' or a control).
struct PlainByteTable {
  bool v[256];
  constexpr PlainByteTable() : v() {
    for (int c = 0x20; c < 0x80; ++c) v[c] = c != '"' && c != '\\';
  }
};
inline constexpr PlainByteTable kPlainByte{};

/// The first at most n bytes of s, cut at a UTF-8 character boundary (for quoting text in
/// messages without leaving half a character).
inline std::string_view utf8Prefix(std::string_view s, std::size_t n) noexcept {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// SWAR over a word U (4 or 8 bytes): nonzero when a byte of x needs more than a copy ('"', '\\',
// < 0x20 or >= 0x80). Exact as a boolean (the borrow false positives only occur above a byte that
// is itself flagged).
template <class U>
NETBUF_JSON_INLINE U specialBytes(U x) noexcept {
  constexpr U ones = static_cast<U>(~U{0}) / 0xFF;  // 0x01 in every byte
  const U q = x ^ (ones * '"');
  const U b = x ^ (ones * '\\');
  return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x) & (ones * 0x80);
}

/// copyPlainShort for sizeof(U) <= n <= 2 * sizeof(U): two overlapping word loads and stores.
template <class U>
NETBUF_JSON_INLINE bool copyTwoWords(const char* r, std::size_t n, char* w) noexcept {
  U a, b;
  std::memcpy(&a, r, sizeof(U));
  std::memcpy(&b, r + n - sizeof(U), sizeof(U));
  if ((specialBytes(a) | specialBytes(b)) != 0) return false;
  std::memcpy(w, &a, sizeof(U));
  std::memcpy(w + n - sizeof(U), &b, sizeof(U));
  return true;
}

/// Copies [r, r + n), n < 16, to w when no byte needs escaping (overlapping word loads); returns
/// false (nothing meaningful written) otherwise.
NETBUF_JSON_INLINE bool copyPlainShort(const char* r, std::size_t n, char* w) noexcept {
  if (n >= 8) return copyTwoWords<std::uint64_t>(r, n, w);
  if (n >= 4) return copyTwoWords<std::uint32_t>(r, n, w);
  if (n == 0) return true;
  const char c0 = r[0];
  const char c1 = r[n >> 1];
  const char c2 = r[n - 1];
  if (!(kPlainByte.v[static_cast<unsigned char>(c0)] &
        kPlainByte.v[static_cast<unsigned char>(c1)] &
        kPlainByte.v[static_cast<unsigned char>(c2)]))
    return false;
  w[0] = c0;
  w[n >> 1] = c1;
  w[n - 1] = c2;
  return true;
}

/// The short-string fast path of every writer: at w, sep (none when 0), the quoted s and, for a
/// key, ':', when s is under 16 bytes that need no escaping. Returns the bytes written, or 0 when
/// s needs the general path (nothing meaningful written then). w has room for s.size() + 4 bytes
/// (with the default copy; json_writer.cpp's 16-byte copy needs 20).
template <bool (*Copy)(const char*, std::size_t, char*) noexcept = copyPlainShort>
NETBUF_JSON_INLINE std::size_t writeShortString(char* w, char sep, std::string_view s,
                                                bool isKey) noexcept {
  const std::size_t n = s.size();
  const std::size_t k = sep != 0 ? 1 : 0;
  if (n >= 16 || !Copy(s.data(), n, w + k + 1)) return 0;
  w[0] = sep;  // overwritten by the quote when there is no separator
  w[k] = '"';
  w[k + n + 1] = '"';
  w[k + n + 2] = ':';  // inside the room; past the end (overwritten later) unless a key
  return k + n + 2 + (isKey ? 1 : 0);
}
}  // namespace json_detail

namespace json::detail {
template <class T, class... F>
struct JsonFields;  // json_traits.hpp: NETBUF_JSON_FIELDS's writer uses keyLiteral
}  // namespace json::detail

/// Streaming JSON writer: appends one JSON value to a ByteBuf from a sequence of calls, without a
/// Value tree (the typed API in json_traits.hpp is built on it).
///
///   JsonStreamWriter w(buf);
///   w.beginObject();
///   w.key("id");   w.value(42);
///   w.key("tags"); w.beginArray(); w.value("a"); w.value("b"); w.endArray();
///   w.endObject();                                   // {"id":42,"tags":["a","b"]}
///
/// Output: the same bytes json::write gives for the equivalent tree with the same options (pretty
/// and indent, escapeNonAscii, maxDepth; strings, integers and doubles formatted and escaped by the
/// same code). canonical: no whitespace and RFC 8785 numbers, but members are written in call
/// order and duplicate keys are not detected: the caller writes keys sorted (by UTF-16 code units)
/// to get canonical bytes. extendedTypes does not apply (there is no Bin/Ext call).
///
/// Publication: the writer writes into out's writable room through a cursor of its own and
/// advances out's writerIndex (makes the text readable) when the top-level value is complete, at
/// commit(), and when it is destroyed (also during unwinding), so that the common calls keep their
/// state in registers. `out` must outlive the writer and not be used by anyone else meanwhile
/// (reading bytes already published is fine).
///
/// Calls must form one JSON value: a value in an object needs a key() first, key() only in an
/// object, end*() must match the open container, nothing after the top-level value. A misuse is
/// an EncoderError that writes nothing and leaves the writer's state as it was, so the writer can
/// go on (text of earlier calls may be published by it). A string that is not valid UTF-8,
/// a NaN/infinity and nesting deeper than maxDepth are EncoderErrors after which the writer must
/// be discarded: the failed call may already have published part of its text (json::serialize
/// restores out's writerIndex to where it started). Container state lives in the writer (no
/// allocation up to 21 levels).
class JsonStreamWriter {
 public:
  explicit JsonStreamWriter(ByteBuf& out, const JsonWriteOptions& options = {}) noexcept
      : out_(&out),
        options_(options),
        pos_(!options.pretty || options.canonical ? kTop
                                                  : static_cast<std::uint8_t>(kTop | kPretty)) {
    if (out.isWritable()) {  // else (read-only, empty, full) the first call takes the general path
      w_ = committed_ = reinterpret_cast<char*>(out.writePtrUnchecked());
      lim_ = w_ + out.writableBytes();
    }
  }
  JsonStreamWriter(const JsonStreamWriter&) = delete;
  JsonStreamWriter& operator=(const JsonStreamWriter&) = delete;
  NETBUF_JSON_INLINE ~JsonStreamWriter() {
    commit();
    delete deep_;
  }

  /// Publishes the text written so far (advances out's writerIndex).
  NETBUF_JSON_INLINE void commit() noexcept {
    out_->advanceWriterUnchecked(static_cast<std::size_t>(w_ - committed_));
    committed_ = w_;
  }

  // The common calls (compact output, short plain strings, integers, booleans, null, containers
  // up to kInline levels deep) are inline fast paths; everything else goes through the
  // out-of-line general code, which also reports misuse.
  NETBUF_JSON_INLINE void beginObject() {
    if (!openFast('{', kObjectFirst)) open('{', kObjectFirst);
  }
  NETBUF_JSON_INLINE void endObject() {
    if (!closeFast(kObjectFirst)) close('}');
  }
  NETBUF_JSON_INLINE void beginArray() {
    if (!openFast('[', kArrayFirst)) open('[', kArrayFirst);
  }
  NETBUF_JSON_INLINE void endArray() {
    if (!closeFast(kArrayFirst)) close(']');
  }
  /// The next member's key (in an object, before its value).
  NETBUF_JSON_INLINE void key(std::string_view name) {
    if (keyFast(name)) return;
    general(static_cast<std::uint8_t>((pos_ & kPretty) | kObjectValue),
            [&](const Call& c) { return keySlow(c, name); });
  }

  NETBUF_JSON_INLINE void value(std::string_view s) {
    if (stringFast(s)) return;
    general(afterValue(), [&](const Call& c) { return stringSlow(c, s); });
  }
  NETBUF_JSON_INLINE void value(const char* s) { value(std::string_view(s)); }
  NETBUF_JSON_INLINE void value(const std::string& s) { value(std::string_view(s)); }
  NETBUF_JSON_INLINE void value(bool b) {
    if (literalFast(b ? "true\0\0\0" : "false\0\0", b ? 4 : 5)) return;
    general(afterValue(), [&](const Call& c) { return boolSlow(c, b); });
  }
  NETBUF_JSON_INLINE void value(double d) {
    general(afterValue(), [&](const Call& c) { return doubleSlow(c, d); });
  }
  /// Written with the float's own shortest text (canonical: the double it equals).
  NETBUF_JSON_INLINE void value(float f) {
    general(afterValue(), [&](const Call& c) { return floatSlow(c, f); });
  }
  /// Every integer type (char types included) is written as a number.
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) NETBUF_JSON_INLINE void value(T v) {
    if constexpr (std::is_signed_v<T>) {
      valueInt(static_cast<std::int64_t>(v));
    } else {
      valueUInt(static_cast<std::uint64_t>(v));
    }
  }
  NETBUF_JSON_INLINE void valueInt(std::int64_t v) {
    if (!(options_.canonical && (v > kMaxSafe || v < -kMaxSafe)) && numberFast(v)) return;
    general(afterValue(), [&](const Call& c) { return intSlow(c, v); });
  }
  NETBUF_JSON_INLINE void valueUInt(std::uint64_t v) {
    if (!(options_.canonical && v > static_cast<std::uint64_t>(kMaxSafe)) && numberFast(v)) return;
    general(afterValue(), [&](const Call& c) { return uintSlow(c, v); });
  }
  NETBUF_JSON_INLINE void null() {
    if (literalFast("null\0\0\0", 4)) return;
    general(afterValue(), [&](const Call& c) { return nullSlow(c); });
  }

  /// Containers open now (0 at the top level).
  std::size_t depth() const noexcept { return depth_; }
  /// Whether the top-level value is complete.
  bool done() const noexcept { return (pos_ & kPosMask) == kDone; }
  const JsonWriteOptions& options() const noexcept { return options_; }

 private:
  template <class, class...>
  friend struct json::detail::JsonFields;

  static constexpr std::int64_t kMaxSafe = std::int64_t{1} << 53;  // canonical: exact integers

  // ---- state. pos_ says what the next call may write and which separator it needs. The values
  // are chosen so that each fast path tests it with one or two compares: values may go where
  // pos_ < kDone, keys where pos_ is kObjectFirst or kObjectNext. Pretty output sets kPretty, so
  // that no fast path matches and the general code (which also indents) writes every token.
  static constexpr std::uint8_t kTop = 0;          // before the top-level value
  static constexpr std::uint8_t kObjectValue = 1;  // in an object, after a key: its value
  static constexpr std::uint8_t kArrayFirst = 2;   // in an array, before its first element
  static constexpr std::uint8_t kArrayNext = 3;    // in an array, before a further one (',')
  static constexpr std::uint8_t kDone = 4;         // after the top-level value
  static constexpr std::uint8_t kObjectFirst = 5;  // in an object, before its first key
  static constexpr std::uint8_t kObjectNext = 6;   // in an object, before a further key (',')
  static constexpr std::uint8_t kPosMask = 7;
  static constexpr std::uint8_t kPretty = 0x80;
  /// Where a value written at a value position p < kDone leaves its container.
  NETBUF_JSON_INLINE static std::uint8_t afterValue(std::uint8_t p) noexcept {
    static constexpr std::uint8_t kAfter[kDone] = {kDone, kObjectNext, kArrayNext, kArrayNext};
    return kAfter[p];
  }
  /// pos_ after a value written now (kDone when pos_ does not admit one: the general code throws
  /// then and the result is not used), with pos_'s pretty flag.
  NETBUF_JSON_INLINE std::uint8_t afterValue() const noexcept {
    const std::uint8_t p = pos_ & kPosMask;
    return static_cast<std::uint8_t>((pos_ & kPretty) | (p < kDone ? afterValue(p) : kDone));
  }
  /// Resume positions (3 bits each) that resume_ holds: 21 levels. Deeper containers move the
  /// outermost ones to deep_ (general code).
  static constexpr std::size_t kInline = 21;
  static constexpr unsigned kOldestShift = 3 * (kInline - 1);  // the outermost inline level
  static constexpr std::uint64_t kInlineMask = (std::uint64_t{1} << (3 * kInline)) - 1;

  // ---- the general code. Each *Slow function publishes the caller's pending bytes, checks the
  // call against the position (misuse: EncoderError before anything is written), writes the
  // token through json_detail::WriteRun (separators, indentation, escaping, growth) and returns
  // the cursor window on out's writable room after it. They are static and take the state by
  // value: the writer's address never reaches out-of-line code, which is what lets the compiler
  // keep w_, lim_ and pos_ in registers across the inline calls (a store through the char*
  // cursor may alias anything whose address escaped).
  struct Window {
    char* w;
    char* lim;
  };
  struct Call {
    ByteBuf* out;
    JsonWriteOptions options;
    std::size_t pending;  // bytes written since the last publication
    std::uint8_t pos;
    std::size_t depth;
  };
  static Window openSlow(const Call& c, char bracket);
  static Window closeSlow(const Call& c, char bracket);
  static Window keySlow(const Call& c, std::string_view name);
  static Window stringSlow(const Call& c, std::string_view s);
  static Window boolSlow(const Call& c, bool b);
  static Window nullSlow(const Call& c);
  static Window doubleSlow(const Call& c, double d);
  static Window floatSlow(const Call& c, float f);
  static Window intSlow(const Call& c, std::int64_t v);
  static Window uintSlow(const Call& c, std::uint64_t v);
  /// The separator and indentation before a value at position pos (misuse: EncoderError).
  static void beforeValue(json_detail::WriteRun& run, std::uint8_t pos, std::size_t depth);
  /// The scalar calls' general code: room for the text, beforeValue, write(run).
  template <class Write>
  static Window scalarSlow(const Call& c, std::size_t room, Write&& write);
  static Window windowOf(ByteBuf& out) noexcept;
  /// deep (allocated when null) with room for one more entry.
  static std::string* reserveDeep(std::string* deep);
  static void pushDeep(std::string* deep, std::uint8_t resume) noexcept;
  static std::uint8_t popDeep(std::string* deep) noexcept;

  /// Runs a *Slow function; on success the cursor moves to the window it returns and pos_ becomes
  /// next. On an exception the cursor stays empty (the next call reloads it from out), since the
  /// general code may have grown (moved) out's memory before it threw.
  template <class Slow>
  NETBUF_JSON_INLINE void general(std::uint8_t next, Slow slow) {
    const Call c{out_, options_, static_cast<std::size_t>(w_ - committed_), pos_, depth_};
    w_ = lim_ = committed_ = nullptr;
    const Window win = slow(c);
    w_ = committed_ = win.w;
    lim_ = win.lim;
    pos_ = next;
  }
  NETBUF_JSON_INLINE void open(char bracket, std::uint8_t inside) {
    const std::uint8_t after = afterValue();
    // Room for the resume position first: a bad_alloc must come before the bracket is written.
    if (depth_ >= kInline) deep_ = reserveDeep(deep_);
    general(static_cast<std::uint8_t>((pos_ & kPretty) | inside),
            [&](const Call& c) { return openSlow(c, bracket); });
    push(static_cast<std::uint8_t>(after & kPosMask));
  }
  NETBUF_JSON_INLINE void close(char bracket) {
    general(pos_, [&](const Call& c) { return closeSlow(c, bracket); });  // (publishes all)
    pos_ = static_cast<std::uint8_t>((pos_ & kPretty) | pop());
  }
  /// Records the position to resume when the container being opened closes (past kInline
  /// levels the outermost inline one moves to deep_, where reserveDeep has made room: this cannot
  /// throw).
  NETBUF_JSON_INLINE void push(std::uint8_t resume) noexcept {
    if (depth_ >= kInline) pushDeep(deep_, static_cast<std::uint8_t>(resume_ >> kOldestShift));
    resume_ = (resume_ << 3 | resume) & kInlineMask;
    ++depth_;
  }
  NETBUF_JSON_INLINE std::uint8_t pop() noexcept {
    const auto resume = static_cast<std::uint8_t>(resume_ & 7);
    resume_ >>= 3;
    --depth_;
    if (depth_ >= kInline) resume_ |= std::uint64_t{popDeep(deep_)} << kOldestShift;
    return resume;
  }

  // ---- fast paths: each returns false, having changed nothing, when the general code must run
  /// Room for n bytes at the cursor.
  NETBUF_JSON_INLINE bool room(std::size_t n) const noexcept {
    return static_cast<std::size_t>(lim_ - w_) >= n;
  }
  /// After a value at position p: the new position, and publication of a complete top-level value.
  NETBUF_JSON_INLINE void valueWritten(std::uint8_t p) noexcept {
    pos_ = afterValue(p);
    if (p == kTop) commit();
  }
  NETBUF_JSON_INLINE bool openFast(char bracket, std::uint8_t inside) {
    const std::uint8_t p = pos_;
    if (p >= kDone || depth_ >= kInline || depth_ >= options_.maxDepth || !room(2)) return false;
    w_[0] = ',';  // overwritten by the bracket when there is no separator
    const std::size_t k = p == kArrayNext ? 1 : 0;
    w_[k] = bracket;
    w_ += k + 1;
    push(afterValue(p));  // depth_ < kInline: nothing moves to deep_
    pos_ = inside;
    return true;
  }
  /// first: kObjectFirst or kArrayFirst (the container's "Next" position is first + 1).
  NETBUF_JSON_INLINE bool closeFast(std::uint8_t first) {
    if (static_cast<std::uint8_t>(pos_ - first) > 1 || depth_ > kInline || !room(1)) return false;
    *w_++ = first == kObjectFirst ? '}' : ']';
    pos_ = pop();  // depth_ <= kInline: nothing comes back from deep_
    if (depth_ == 0) commit();
    return true;
  }
  NETBUF_JSON_INLINE bool keyFast(std::string_view name) {
    const std::uint8_t p = pos_;
    const std::size_t n = name.size();
    if (static_cast<std::uint8_t>(p - kObjectFirst) > 1 || n >= 16 || !room(n + 4)) return false;
    const std::size_t m = json_detail::writeShortString(w_, p == kObjectNext ? ',' : 0, name, true);
    if (m == 0) return false;
    w_ += m;
    pos_ = kObjectValue;
    return true;
  }
  /// A key known in advance: `quoted` is its JSON text with quotes and colon ("name":), n bytes,
  /// readable (zero-padded) up to 16 bytes, needing no escape in any mode (plain ASCII).
  NETBUF_JSON_INLINE void keyLiteral(const char* quoted, std::size_t n, std::string_view name) {
    const std::uint8_t p = pos_;
    if (static_cast<std::uint8_t>(p - kObjectFirst) > 1 || n > 16 || !room(17)) {
      key(name);
      return;
    }
    w_[0] = ',';
    const std::size_t k = p == kObjectNext ? 1 : 0;
    std::memcpy(w_ + k, quoted, 16);  // bytes past n are scratch, overwritten later
    w_ += k + n;
    pos_ = kObjectValue;
  }
  NETBUF_JSON_INLINE bool stringFast(std::string_view s) {
    const std::uint8_t p = pos_;
    const std::size_t n = s.size();
    if (p >= kDone || n >= 16 || !room(n + 4)) return false;
    const std::size_t m = json_detail::writeShortString(w_, p == kArrayNext ? ',' : 0, s, false);
    if (m == 0) return false;
    w_ += m;
    valueWritten(p);
    return true;
  }
  /// true, false or null: `text` is n <= 5 bytes, readable (zero-padded) up to 8.
  NETBUF_JSON_INLINE bool literalFast(const char* text, std::size_t n) {
    const std::uint8_t p = pos_;
    if (p >= kDone || !room(9)) return false;
    w_[0] = ',';
    const std::size_t k = p == kArrayNext ? 1 : 0;
    std::memcpy(w_ + k, text, 8);  // bytes past n are scratch
    w_ += k + n;
    valueWritten(p);
    return true;
  }
  template <class T>
  NETBUF_JSON_INLINE bool numberFast(T v) {
    const std::uint8_t p = pos_;
    if (p >= kDone || !room(24)) return false;
    w_[0] = ',';
    w_ = std::to_chars(w_ + (p == kArrayNext ? 1 : 0), w_ + 24, v).ptr;
    valueWritten(p);
    return true;
  }

  ByteBuf* out_;
  JsonWriteOptions options_;
  // The cursor: w_ is where the next byte goes, lim_ the end of out's writable room, committed_
  // the position of out's writerIndex (w_ - committed_ bytes are written but not published).
  // All null when not loaded (before the first general call on a buffer without room, and after
  // a general call threw).
  char* w_ = nullptr;
  char* lim_ = nullptr;
  char* committed_ = nullptr;
  std::uint8_t pos_;
  std::size_t depth_ = 0;
  // The positions to return to when the open containers close, innermost in the low 3 bits: the
  // innermost kInline levels (a register, not an array, so that the compiler can keep it in one:
  // an array indexed by depth kept clang from keeping any of the writer's state in registers);
  // the outer ones in *deep_ (innermost last), allocated when first needed.
  std::uint64_t resume_ = 0;
  std::string* deep_ = nullptr;
};

namespace json {

/// Appends v's JSON text to out. Throws EncoderError (see the header comment); out unchanged then.
void write(const Value& v, ByteBuf& out, const JsonWriteOptions& options = {});
/// v's JSON text as a std::string.
std::string toString(const Value& v, const JsonWriteOptions& options = {});

/// Appends d in ECMAScript Number.prototype.toString form (RFC 8785 numbers) to `out`, which must
/// have room for 32 chars; returns the end. d must be finite.
char* formatEcmaScript(double d, char* out) noexcept;

/// compareUtf16's general case. UTF-8 byte order is code point order, which equals UTF-16 order
/// except that characters above U+FFFF (UTF-8 lead F0..F4, UTF-16 units D800..DBFF) sort before
/// U+E000..U+FFFF (leads EE, EF) in UTF-16. constexpr: NETBUF_JSON_FIELDS sorts its field names
/// with it at compile time.
constexpr int compareUtf16Slow(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size() ? -1 : a.size() == b.size() ? 0 : 1;
  std::size_t s = i;  // start of the differing character (same lead in both when s < i)
  while (s > 0 && (static_cast<unsigned char>(a[s]) & 0xC0) == 0x80) --s;
  const auto la = static_cast<unsigned char>(a[s]);
  const auto lb = static_cast<unsigned char>(b[s]);
  if (la != lb) {
    const bool aSupp = la >= 0xF0;
    const bool bSupp = lb >= 0xF0;
    const bool aHigh = la == 0xEE || la == 0xEF;
    const bool bHigh = lb == 0xEE || lb == 0xEF;
    if (aSupp && bHigh) return -1;
    if (bSupp && aHigh) return 1;
  }
  return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
}
/// Three-way comparison (<0, 0, >0) of two UTF-8 strings by their UTF-16 code units: RFC 8785's
/// member order, which canonical mode writes. It differs from byte order only where a character
/// above U+FFFF meets one in U+E000..U+FFFF.
constexpr int compareUtf16(std::string_view a, std::string_view b) noexcept {
  if (!a.empty() && !b.empty()) {  // the common case inline: first bytes differ, both ASCII
    const auto x = static_cast<unsigned char>(a[0]);
    const auto y = static_cast<unsigned char>(b[0]);
    if (x != y && (x | y) < 0x80) return x < y ? -1 : 1;
  }
  return compareUtf16Slow(a, b);
}

}  // namespace json
}  // namespace netbuf
