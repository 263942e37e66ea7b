#include <netbuf/redis/redis_keyspace.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

namespace netbuf {
namespace {

// ---------------------------------------------------------------------------------------------
// Limits and constants of redis-server 7.0 (its defaults, as `CONFIG GET` reports them)

constexpr std::string_view kRedisVersion = "7.0.15";
constexpr std::size_t kSetMaxIntsetEntries = 512;
constexpr std::size_t kHashMaxListpackEntries = 512;
constexpr std::size_t kHashMaxListpackValue = 64;
constexpr std::size_t kZsetMaxListpackEntries = 128;
constexpr std::size_t kZsetMaxListpackValue = 64;
constexpr std::size_t kProtoMaxBulkLen = 512ull * 1024 * 1024;

constexpr std::string_view kErrWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr std::string_view kErrNotInteger = "ERR value is not an integer or out of range";
constexpr std::string_view kErrSyntax = "ERR syntax error";
constexpr std::string_view kErrNotFloat = "ERR value is not a valid float";
constexpr std::string_view kErrOverflow = "ERR increment or decrement would overflow";
constexpr std::string_view kErrMustBePositive = "ERR value is out of range, must be positive";
constexpr std::string_view kErrNan = "ERR resulting score is not a number (NaN)";

// ---------------------------------------------------------------------------------------------
// Text helpers

constexpr char toLowerAscii(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr char toUpperAscii(char c) noexcept {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

/// Whether s equals lower (a lower-case literal) ignoring ASCII case: Redis's strcasecmp on
/// option names.
bool iequals(std::string_view s, std::string_view lower) noexcept {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (toLowerAscii(s[i]) != lower[i]) return false;
  }
  return true;
}

/// What a C "%s" of s prints: the bytes before the first NUL.
std::string_view cstr(std::string_view s) noexcept {
  const std::size_t nul = s.find('\0');
  return nul == std::string_view::npos ? s : s.substr(0, nul);
}

/// Redis's string2ll: a canonical decimal integer ("0", "-12"; no sign '+', no leading zeros,
/// no spaces) that fits an int64.
bool parseInt64(std::string_view s, std::int64_t& out) noexcept {
  const std::size_t n = s.size();
  if (n == 0 || n > 20) return false;
  if (n == 1 && s[0] == '0') {
    out = 0;
    return true;
  }
  std::size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == n) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  std::uint64_t v = 0;
  for (; i < n; ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (v > kMax + 1) return false;
    out = static_cast<std::int64_t>(0 - v);  // two's complement: kMax + 1 gives INT64_MIN
  } else {
    if (v > kMax) return false;
    out = static_cast<std::int64_t>(v);
  }
  return true;
}

/// Calls strtod on s (which need not be NUL-terminated); returns the value and, through
/// consumedAll, whether the whole of s was read.
double strtodView(std::string_view s, bool& consumedAll) {
  char small[128];
  std::string large;
  const char* p;
  if (s.size() < sizeof small) {
    std::memcpy(small, s.data(), s.size());
    small[s.size()] = '\0';
    p = small;
  } else {
    large.assign(s);
    p = large.c_str();
  }
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(p, &end);
  consumedAll = static_cast<std::size_t>(end - p) == s.size();
  return v;
}

/// Redis's getDoubleFromObject: strtod over the whole string, no leading space, no overflow,
/// not NaN ("inf", "-inf", "1e3", "0x10" are accepted).
bool parseDouble(std::string_view s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  bool all = false;
  const double v = strtodView(s, all);
  if (!all) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO)) {
    return false;
  }
  if (std::isnan(v)) return false;
  out = v;
  return true;
}

std::string_view formatInt(std::int64_t v, char (&buf)[24]) noexcept {
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

/// Redis's stringmatchlen (util.c): glob matching with * ? [abc] [^a-z] and \ escapes. The C
/// original reads the pattern's NUL terminator in a few places; at() stands in for it.
bool globMatchImpl(std::string_view pat, std::size_t pi, std::string_view str, std::size_t si,
                   bool nocase, bool& skipLongerMatches, int nesting) {
  // Each '*' recurses once: a pattern of many stars against a long key would otherwise take the
  // loop thread's stack. Past 1000 levels it is no match, as in Redis's stringmatchlen.
  if (nesting > 1000) return false;
  auto at = [&](std::size_t i) { return i < pat.size() ? pat[i] : '\0'; };
  auto fold = [&](char c) { return nocase ? toLowerAscii(c) : c; };
  // Lengths are signed as in the C code: the '[' branch can step back over the end.
  auto plen = static_cast<std::ptrdiff_t>(pat.size() - pi);
  auto slen = static_cast<std::ptrdiff_t>(str.size() - si);
  while (plen > 0 && slen > 0) {
    switch (at(pi)) {
      case '*':
        while (plen > 0 && at(pi + 1) == '*') {
          ++pi;
          --plen;
        }
        if (plen == 1) return true;
        while (slen > 0) {
          if (globMatchImpl(pat, pi + 1, str, si, nocase, skipLongerMatches, nesting + 1)) {
            return true;
          }
          if (skipLongerMatches) return false;
          ++si;
          --slen;
        }
        // The rest of the pattern matches nowhere in the rest of the string: a longer match
        // for an earlier '*' cannot help either.
        skipLongerMatches = true;
        return false;
      case '?':
        ++si;
        --slen;
        break;
      case '[': {
        ++pi;
        --plen;
        const bool negate = at(pi) == '^';
        if (negate) {
          ++pi;
          --plen;
        }
        bool match = false;
        const auto c0 = static_cast<signed char>(str[si]);
        for (;;) {
          if (at(pi) == '\\' && plen >= 2) {
            ++pi;
            --plen;
            if (at(pi) == str[si]) match = true;
          } else if (at(pi) == ']') {
            break;
          } else if (plen == 0) {
            --pi;
            ++plen;
            break;
          } else if (plen >= 3 && at(pi + 1) == '-') {
            int start = static_cast<signed char>(at(pi));
            int end = static_cast<signed char>(at(pi + 2));
            int c = c0;
            if (start > end) std::swap(start, end);
            if (nocase) {
              start = static_cast<signed char>(toLowerAscii(static_cast<char>(start)));
              end = static_cast<signed char>(toLowerAscii(static_cast<char>(end)));
              c = static_cast<signed char>(toLowerAscii(static_cast<char>(c)));
            }
            pi += 2;
            plen -= 2;
            if (c >= start && c <= end) match = true;
          } else if (fold(at(pi)) == fold(str[si])) {
            match = true;
          }
          ++pi;
          --plen;
        }
        if (negate) match = !match;
        if (!match) return false;
        ++si;
        --slen;
        break;
      }
      case '\\':
        if (plen >= 2) {
          ++pi;
          --plen;
        }
        [[fallthrough]];
      default:
        if (fold(at(pi)) != fold(str[si])) return false;
        ++si;
        --slen;
        break;
    }
    ++pi;
    --plen;
    if (slen == 0) {
      while (plen > 0 && at(pi) == '*') {
        ++pi;
        --plen;
      }
      break;
    }
  }
  return plen == 0 && slen == 0;
}

bool globMatch(std::string_view pattern, std::string_view str, bool nocase = false) {
  bool skip = false;
  return globMatchImpl(pattern, 0, str, 0, nocase, skip, 0);
}

// ---------------------------------------------------------------------------------------------
// Values

struct StrHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};
template <class V>
using StrMap = std::unordered_map<std::string, V, StrHash, std::equal_to<>>;
using StrSet = std::unordered_set<std::string, StrHash, std::equal_to<>>;

struct ListValue {
  std::deque<std::string> items;
  std::size_t size() const noexcept { return items.size(); }
};

/// A set in Redis 7.0's two encodings, whose iteration order replies show: an intset (every
/// member a canonical integer and at most set-max-intset-entries of them; iterated in ascending
/// order) or a hash table (unspecified order). Converting is one way, as in Redis.
struct SetValue {
  bool isIntset = true;
  std::vector<std::int64_t> ints;  // sorted, while isIntset
  StrSet table;                    // while !isIntset

  std::size_t size() const noexcept { return isIntset ? ints.size() : table.size(); }

  void convertToTable() {
    table.reserve(ints.size() + 1);
    char buf[24];
    for (std::int64_t v : ints) table.emplace(formatInt(v, buf));
    ints.clear();
    ints.shrink_to_fit();
    isIntset = false;
  }

  bool contains(std::string_view m) const {
    if (isIntset) {
      std::int64_t v;
      return parseInt64(m, v) && std::binary_search(ints.begin(), ints.end(), v);
    }
    return table.find(m) != table.end();
  }

  /// Returns whether m was added (false: already a member).
  bool add(std::string_view m) {
    if (isIntset) {
      std::int64_t v;
      if (parseInt64(m, v)) {
        const auto it = std::lower_bound(ints.begin(), ints.end(), v);
        if (it != ints.end() && *it == v) return false;
        ints.insert(it, v);
        if (ints.size() > kSetMaxIntsetEntries) convertToTable();
        return true;
      }
      convertToTable();
    }
    return table.emplace(m).second;
  }

  bool remove(std::string_view m) {
    if (isIntset) {
      std::int64_t v;
      if (!parseInt64(m, v)) return false;
      const auto it = std::lower_bound(ints.begin(), ints.end(), v);
      if (it == ints.end() || *it != v) return false;
      ints.erase(it);
      return true;
    }
    const auto it = table.find(m);
    if (it == table.end()) return false;
    table.erase(it);
    return true;
  }

  /// Removes and returns a random member (the set must not be empty).
  std::string popRandom(std::mt19937_64& rng) {
    if (isIntset) {
      const std::size_t i = rng() % ints.size();
      char buf[24];
      std::string m(formatInt(ints[i], buf));
      ints.erase(ints.begin() + static_cast<std::ptrdiff_t>(i));
      return m;
    }
    // A random non-empty bucket, then a random element of it (Redis's dictGetRandomKey). A
    // table that shrank a lot is rehashed first so that the search stays short.
    if (table.size() * 8 < table.bucket_count()) table.rehash(0);
    const std::size_t buckets = table.bucket_count();
    for (;;) {
      const std::size_t b = rng() % buckets;
      const std::size_t n = table.bucket_size(b);
      if (n == 0) continue;
      auto local = table.begin(b);
      std::advance(local, static_cast<std::ptrdiff_t>(rng() % n));
      auto node = table.extract(table.find(*local));
      return std::move(node.value());
    }
  }

  template <class F>
  void forEach(F&& f) const {
    if (isIntset) {
      char buf[24];
      for (std::int64_t v : ints) f(formatInt(v, buf));
    } else {
      for (const std::string& m : table) f(std::string_view(m));
    }
  }
};

/// A hash in Redis 7.0's two encodings: a listpack (insertion order, at most
/// hash-max-listpack-entries fields, fields and values at most hash-max-listpack-value bytes)
/// or a hash table (unspecified order).
struct HashValue {
  bool isListpack = true;
  std::vector<std::pair<std::string, std::string>> pairs;  // while isListpack
  StrMap<std::string> table;                               // while !isListpack

  std::size_t size() const noexcept { return isListpack ? pairs.size() : table.size(); }

  void convertToTable() {
    if (!isListpack) return;
    table.reserve(pairs.size() + 1);
    for (auto& [f, v] : pairs) table.emplace(std::move(f), std::move(v));
    pairs.clear();
    pairs.shrink_to_fit();
    isListpack = false;
  }

  std::string* find(std::string_view field) {
    if (isListpack) {
      for (auto& p : pairs) {
        if (p.first == field) return &p.second;
      }
      return nullptr;
    }
    const auto it = table.find(field);
    return it == table.end() ? nullptr : &it->second;
  }

  /// Sets field to value; returns whether the field is new.
  bool set(std::string_view field, std::string_view value) {
    if (std::string* v = find(field)) {
      v->assign(value);
      return false;
    }
    if (isListpack) {
      pairs.emplace_back(field, value);
      if (pairs.size() > kHashMaxListpackEntries) convertToTable();
    } else {
      table.emplace(field, value);
    }
    return true;
  }

  bool remove(std::string_view field) {
    if (isListpack) {
      for (auto it = pairs.begin(); it != pairs.end(); ++it) {
        if (it->first == field) {
          pairs.erase(it);
          return true;
        }
      }
      return false;
    }
    const auto it = table.find(field);
    if (it == table.end()) return false;
    table.erase(it);
    return true;
  }

  template <class F>
  void forEach(F&& f) const {
    if (isListpack) {
      for (const auto& [k, v] : pairs) f(std::string_view(k), std::string_view(v));
    } else {
      for (const auto& [k, v] : table) f(std::string_view(k), std::string_view(v));
    }
  }
};

/// A sorted set: members ordered by (score, member bytes), as Redis's listpack and skiplist
/// both order them, plus a member -> score table. The order's member views point into the
/// table's keys (node-based: they do not move).
///
/// The encoding Redis 7.0 would use is tracked for one visible effect: a score of -0 stored in a
/// listpack comes back as 0 (ZADD z -0 m; ZSCORE z m answers 0), while a skiplist keeps -0.
/// A zset is a listpack until it has over zset-max-listpack-entries members or one longer than
/// zset-max-listpack-value bytes; converting is one way, as in Redis.
struct ZSetValue {
  using Item = std::pair<double, std::string_view>;
  struct Less {
    bool operator()(const Item& a, const Item& b) const noexcept {
      if (a.first < b.first) return true;
      if (b.first < a.first) return false;
      return a.second < b.second;  // memcmp order, then length: Redis's sdscmp
    }
  };
  std::set<Item, Less> order;
  StrMap<double> scores;
  bool isListpack = true;

  std::size_t size() const noexcept { return scores.size(); }

  /// The score as the encoding stores it: -0 becomes 0 in a listpack.
  double stored(double score) const noexcept { return isListpack && score == 0 ? 0.0 : score; }

  void insert(std::string_view member, double score) {
    if (isListpack &&
        (scores.size() + 1 > kZsetMaxListpackEntries || member.size() > kZsetMaxListpackValue)) {
      isListpack = false;
    }
    score = stored(score);
    const auto it = scores.emplace(std::string(member), score).first;
    order.emplace(score, std::string_view(it->first));
  }
  void update(StrMap<double>::iterator it, double score) {
    score = stored(score);
    order.erase(Item(it->second, it->first));
    it->second = score;
    order.emplace(score, std::string_view(it->first));
  }
  void remove(StrMap<double>::iterator it) {
    order.erase(Item(it->second, it->first));
    scores.erase(it);
  }
  std::size_t rank(StrMap<double>::iterator it) const {
    return static_cast<std::size_t>(
        std::distance(order.begin(), order.find(Item(it->second, it->first))));
  }
  /// The element at index i (0 <= i < size()), walking from the nearer end.
  std::set<Item, Less>::const_iterator at(std::size_t i) const {
    if (i <= order.size() / 2) return std::next(order.begin(), static_cast<std::ptrdiff_t>(i));
    return std::prev(order.end(), static_cast<std::ptrdiff_t>(order.size() - i));
  }
};

using Value = std::variant<std::string, std::unique_ptr<ListValue>, std::unique_ptr<SetValue>,
                           std::unique_ptr<HashValue>, std::unique_ptr<ZSetValue>>;

constexpr std::uint32_t kNotVolatile = std::numeric_limits<std::uint32_t>::max();

struct Entry {
  Value value;
  /// The deadline (nowMs() clock) when slot != kNotVolatile; the key is expired once the clock
  /// passes it (now > expireAt, Redis's keyIsExpired).
  std::int64_t expireAt = 0;
  /// Index in Db::volatileKeys, or kNotVolatile for a key without a deadline.
  std::uint32_t slot = kNotVolatile;
};

using Map = StrMap<Entry>;
using Node = Map::value_type;

/// The value of type T held by n, or nullptr when n holds another type.
template <class T>
T* as(Node* n) noexcept {
  if constexpr (std::is_same_v<T, std::string>) {
    return std::get_if<std::string>(&n->second.value);
  } else {
    auto* p = std::get_if<std::unique_ptr<T>>(&n->second.value);
    return p ? p->get() : nullptr;
  }
}

std::int64_t steadyNowMs() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t unixNowMs() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------------------------------------
// The database: keys, their values and deadlines

class Db {
 public:
  Map map;
  /// Every key with a deadline (pointers to map nodes, which stay put across rehashes), so that
  /// the sweep samples them without scanning the other keys. Entry::slot is the index here.
  std::vector<Node*> volatileKeys;
  std::size_t sweepCursor = 0;
  RedisKeyspace::Clock clock;
  std::mt19937_64 rng{0x9e3779b97f4a7c15ull};

  std::int64_t readClock() const { return clock ? clock() : steadyNowMs(); }

  /// The time of the command being run: read at most once per command (Redis also uses one
  /// time for a whole command), and only by commands that meet a deadline.
  std::int64_t now() {
    if (!nowValid_) {
      now_ = readClock();
      nowValid_ = true;
    }
    return now_;
  }
  void beginCommand() noexcept { nowValid_ = false; }

  bool isExpired(const Entry& e) { return e.slot != kNotVolatile && now() > e.expireAt; }

  /// The live node of key, deleting it first when its deadline has passed (lazy expiry).
  Node* find(std::string_view key) {
    const auto it = map.find(key);
    if (it == map.end()) return nullptr;
    if (it->second.slot != kNotVolatile && now() > it->second.expireAt) {
      eraseAt(it);
      return nullptr;
    }
    return &*it;
  }

  Node* insert(std::string_view key, Value value) {
    const auto it = map.try_emplace(std::string(key)).first;
    it->second.value = std::move(value);
    return &*it;
  }

  /// Replaces n's value by a string (SET, MSET): reuses the string's storage when n holds one;
  /// the deadline goes unless keepTtl.
  void assignString(Node* n, std::string_view v, bool keepTtl) {
    if (auto* s = std::get_if<std::string>(&n->second.value)) {
      s->assign(v.data(), v.size());
    } else {
      n->second.value = std::string(v);
    }
    if (!keepTtl) persist(n->second);
  }

  /// SET semantics: key = v (a string), the deadline removed unless keepTtl.
  Node* setString(std::string_view key, std::string_view v, bool keepTtl = false) {
    if (Node* n = find(key)) {
      assignString(n, v, keepTtl);
      return n;
    }
    return insert(key, std::string(v));
  }

  void erase(Node* n) { eraseAt(map.find(n->first)); }

  void eraseAt(Map::iterator it) {
    persist(it->second);
    map.erase(it);
  }

  void setExpire(Node* n, std::int64_t at) {
    Entry& e = n->second;
    if (e.slot == kNotVolatile) {
      e.slot = static_cast<std::uint32_t>(volatileKeys.size());
      volatileKeys.push_back(n);
    }
    e.expireAt = at;
  }

  /// Removes e's deadline; returns whether it had one.
  bool persist(Entry& e) noexcept {
    if (e.slot == kNotVolatile) return false;
    Node* last = volatileKeys.back();
    volatileKeys[e.slot] = last;
    last->second.slot = e.slot;
    volatileKeys.pop_back();
    e.slot = kNotVolatile;
    return true;
  }

  void clear() {
    map.clear();
    volatileKeys.clear();
    sweepCursor = 0;
  }

  /// Walks the keys with deadlines from a cursor that goes round, removing expired ones: at
  /// most `budget` removals and 4 * budget keys looked at per call, so one call stays short and
  /// successive calls cover every key.
  std::size_t sweep(std::size_t budget) {
    beginCommand();
    std::size_t removed = 0;
    std::size_t checks = budget * 4;
    while (removed < budget && checks > 0 && !volatileKeys.empty()) {
      --checks;
      if (sweepCursor >= volatileKeys.size()) sweepCursor = 0;
      Node* n = volatileKeys[sweepCursor];
      if (now() > n->second.expireAt) {
        erase(n);  // the last key moved into this slot: look at it next
        ++removed;
      } else {
        ++sweepCursor;
      }
    }
    return removed;
  }

 private:
  std::int64_t now_ = 0;
  bool nowValid_ = false;
};

// ---------------------------------------------------------------------------------------------
// Commands

struct Call {
  Db& db;
  const RedisCommand& cmd;
  RespWriter& w;
  RedisSession& session;
  const RedisCommandSpec& spec;

  std::size_t argc() const noexcept { return cmd.size(); }
  std::string_view arg(std::size_t i) const noexcept { return cmd[i]; }
};

using Handler = void (*)(Call&);

/// An error reply whose text holds client bytes: Redis's addReplyErrorFormat turns \r and \n
/// into spaces so that the reply stays one line.
void errorLine(Call& c, std::string text) {
  for (char& ch : text) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  c.w.simpleError(text);
}

void wrongType(Call& c) { c.w.simpleError(kErrWrongType); }
void notInteger(Call& c) { c.w.simpleError(kErrNotInteger); }
void syntaxError(Call& c) { c.w.simpleError(kErrSyntax); }

void arityError(Call& c, std::string_view fullName) {
  std::string e = "ERR wrong number of arguments for '";
  e += fullName;
  e += "' command";
  c.w.simpleError(e);
}

void invalidExpireTime(Call& c) {
  std::string e = "ERR invalid expire time in '";
  e += c.spec.name;
  e += "' command";
  c.w.simpleError(e);
}

void unknownSubcommand(Call& c) {
  std::string e = "ERR unknown subcommand '";
  e += cstr(c.arg(1)).substr(0, 128);
  e += "'. Try ";
  for (char ch : cstr(c.arg(0))) e += toUpperAscii(ch);
  e += " HELP.";
  errorLine(c, std::move(e));
}

/// Parses an integer argument, or replies "value is not an integer" and returns false.
bool intArg(Call& c, std::size_t i, std::int64_t& out) {
  if (parseInt64(c.arg(i), out)) return true;
  notInteger(c);
  return false;
}

/// Redis's getPositiveLongFromObjectOrReply(..., NULL): one message for a non-integer and for
/// a negative number.
bool countArg(Call& c, std::size_t i, std::int64_t& out) {
  if (parseInt64(c.arg(i), out) && out >= 0) return true;
  c.w.simpleError(kErrMustBePositive);
  return false;
}

/// The value of type T at key for a write that creates it when missing; nullptr after a
/// WRONGTYPE reply.
template <class T>
T* getOrCreate(Call& c, std::string_view key) {
  if (Node* n = c.db.find(key)) {
    T* v = as<T>(n);
    if (!v) wrongType(c);
    return v;
  }
  auto fresh = std::make_unique<T>();
  T* v = fresh.get();
  c.db.insert(key, std::move(fresh));
  return v;
}

/// Looks key up for a read of type T: returns false after a WRONGTYPE reply; node is nullptr
/// for a missing key.
template <class T>
bool lookupAs(Call& c, std::string_view key, Node*& node, T*& value) {
  node = c.db.find(key);
  value = node ? as<T>(node) : nullptr;
  if (node && !value) {
    wrongType(c);
    return false;
  }
  return true;
}

// ---- connection ----

void cmdPing(Call& c) {
  if (c.argc() > 2) return arityError(c, "ping");
  if (c.argc() == 2) return c.w.bulkString(c.arg(1));
  c.w.simpleString("PONG");
}

void cmdEcho(Call& c) { c.w.bulkString(c.arg(1)); }

void cmdQuit(Call& c) {
  c.w.simpleString("OK");
  c.session.closeAfterReply = true;
}

void cmdSelect(Call& c) {
  std::int64_t id;
  if (!intArg(c, 1, id)) return;
  if (id < std::numeric_limits<int>::min() || id > std::numeric_limits<int>::max()) {
    return c.w.simpleError(
        "ERR value is out of range, value must between -2147483648 and 2147483647");
  }
  // One database per keyspace, as redis-server with `databases 1`.
  if (id != 0) return c.w.simpleError("ERR DB index is out of range");
  c.w.simpleString("OK");
}

/// validateClientName: printable ASCII without spaces.
bool validClientName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '!' && ch <= '~'; });
}

constexpr std::string_view kErrClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";

void cmdHello(Call& c) {
  std::int64_t version = 0;
  std::size_t next = 1;
  if (c.argc() >= 2) {
    if (!parseInt64(c.arg(next++), version)) {
      return c.w.simpleError("ERR Protocol version is not an integer or out of range");
    }
    if (version < 2 || version > 3) return c.w.simpleError("NOPROTO unsupported protocol version");
  }
  std::string_view user, name;
  bool auth = false, setName = false;
  for (std::size_t j = next; j < c.argc(); ++j) {
    const std::size_t more = c.argc() - 1 - j;
    const std::string_view opt = c.arg(j);
    if (iequals(opt, "auth") && more >= 2) {
      auth = true;
      user = c.arg(j + 1);
      j += 2;
    } else if (iequals(opt, "setname") && more >= 1) {
      name = c.arg(j + 1);
      if (!validClientName(name)) return c.w.simpleError(kErrClientName);
      setName = true;
      ++j;
    } else {
      return errorLine(c, "ERR Syntax error in HELLO option '" + std::string(cstr(opt)) + "'");
    }
  }
  // The keyspace has no ACL: the default user has no password (nopass), as in a fresh
  // redis-server, and no other user exists.
  if (auth && user != "default") {
    return c.w.simpleError("WRONGPASS invalid username-password pair or user is disabled.");
  }
  if (setName) c.session.name.assign(name);
  if (version != 0) {
    const auto p = version == 3 ? RespProtocol::Resp3 : RespProtocol::Resp2;
    c.session.protocol = p;
    c.w.setProtocol(p);  // the reply already speaks the new protocol, as in Redis
  }
  RespWriter& w = c.w;
  w.mapHeader(7);
  w.bulkString("server");
  w.bulkString("redis");
  w.bulkString("version");
  w.bulkString(kRedisVersion);
  w.bulkString("proto");
  w.integer(w.isResp3() ? 3 : 2);
  w.bulkString("id");
  w.integer(static_cast<std::int64_t>(c.session.id));
  w.bulkString("mode");
  w.bulkString("standalone");
  w.bulkString("role");
  w.bulkString("master");
  w.bulkString("modules");
  w.arrayHeader(0);
}

std::string clientInfoLine(const Call& c, std::string_view cmdName) {
  std::string s = "id=" + std::to_string(c.session.id);
  s += " addr=";
  s += c.session.peerAddress;
  s += " laddr=";
  s += c.session.localAddress;
  s += " fd=-1 name=";
  s += c.session.name;
  s += " age=0 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0"
       " multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=";
  s += cmdName;
  s += " user=default redir=-1 resp=";
  s += c.w.isResp3() ? '3' : '2';
  s += '\n';
  return s;
}

void cmdClient(Call& c) {
  const std::string_view sub = c.arg(1);
  const std::size_t n = c.argc();
  if (iequals(sub, "setname")) {
    if (n != 3) return arityError(c, "client|setname");
    if (!validClientName(c.arg(2))) return c.w.simpleError(kErrClientName);
    c.session.name.assign(c.arg(2));
    return c.w.simpleString("OK");
  }
  if (iequals(sub, "getname")) {
    if (n != 2) return arityError(c, "client|getname");
    if (c.session.name.empty()) return c.w.null();
    return c.w.bulkString(c.session.name);
  }
  if (iequals(sub, "id")) {
    if (n != 2) return arityError(c, "client|id");
    return c.w.integer(static_cast<std::int64_t>(c.session.id));
  }
  if (iequals(sub, "info")) {
    if (n != 2) return arityError(c, "client|info");
    return c.w.verbatimString("txt", clientInfoLine(c, "client|info"));
  }
  if (iequals(sub, "list")) {
    // The keyspace knows only the calling connection.
    return c.w.verbatimString("txt", clientInfoLine(c, "client|list"));
  }
  if (iequals(sub, "no-evict") || iequals(sub, "no-touch")) {
    if (n != 3)
      return arityError(c, iequals(sub, "no-evict") ? "client|no-evict" : "client|no-touch");
    if (!iequals(c.arg(2), "on") && !iequals(c.arg(2), "off")) return syntaxError(c);
    return c.w.simpleString("OK");
  }
  if (iequals(sub, "setinfo")) {
    // Redis 7.2's library name and version: accepted and ignored (newer clients send it).
    if (n != 4) return arityError(c, "client|setinfo");
    return c.w.simpleString("OK");
  }
  unknownSubcommand(c);
}

// ---- server ----

struct ConfigParam {
  std::string_view name;
  std::string_view value;
};

/// The configuration a client may ask about (redis-benchmark asks for save and appendonly):
/// this keyspace's behaviour in redis.conf terms.
constexpr ConfigParam kConfig[] = {
    {"save", ""},
    {"appendonly", "no"},
    {"databases", "1"},
    {"maxmemory", "0"},
    {"maxmemory-policy", "noeviction"},
    {"timeout", "0"},
    {"proto-max-bulk-len", "536870912"},
    {"hash-max-listpack-entries", "512"},
    {"hash-max-ziplist-entries", "512"},
    {"hash-max-listpack-value", "64"},
    {"hash-max-ziplist-value", "64"},
    {"set-max-intset-entries", "512"},
    {"zset-max-listpack-entries", "128"},
    {"zset-max-ziplist-entries", "128"},
    {"zset-max-listpack-value", "64"},
    {"zset-max-ziplist-value", "64"},
};

void cmdConfig(Call& c) {
  const std::string_view sub = c.arg(1);
  if (iequals(sub, "get")) {
    if (c.argc() < 3) return arityError(c, "config|get");
    // Names as replied: the argument itself for an exact name, the parameter's name for a
    // glob; each parameter once.
    std::vector<std::pair<std::string_view, std::string_view>> out;
    std::vector<bool> seen(std::size(kConfig), false);
    for (std::size_t i = 2; i < c.argc(); ++i) {
      const std::string_view pat = c.arg(i);
      const bool glob = pat.find_first_of("[*?") != std::string_view::npos;
      for (std::size_t k = 0; k < std::size(kConfig); ++k) {
        if (seen[k]) continue;
        const bool match =
            glob ? globMatch(pat, kConfig[k].name, true) : iequals(pat, kConfig[k].name);
        if (!match) continue;
        seen[k] = true;
        out.emplace_back(glob ? kConfig[k].name : pat, kConfig[k].value);
      }
    }
    c.w.mapHeader(out.size());
    for (const auto& [k, v] : out) {
      c.w.bulkString(k);
      c.w.bulkString(v);
    }
    return;
  }
  if (iequals(sub, "resetstat")) {
    if (c.argc() != 2) return arityError(c, "config|resetstat");
    return c.w.simpleString("OK");
  }
  unknownSubcommand(c);
}

void cmdDbsize(Call& c) { c.w.integer(static_cast<std::int64_t>(c.db.map.size())); }

void cmdFlushall(Call& c) {
  if (c.argc() == 2 && !iequals(c.arg(1), "sync") && !iequals(c.arg(1), "async")) {
    return syntaxError(c);
  }
  if (c.argc() > 2) return syntaxError(c);
  c.db.clear();
  c.w.simpleString("OK");
}

void cmdKeys(Call& c) {
  const std::string_view pattern = c.arg(1);
  const bool all = pattern == "*";
  std::vector<std::string_view> found;
  for (const auto& [key, entry] : c.db.map) {
    if ((all || globMatch(pattern, key)) && !c.db.isExpired(entry)) found.push_back(key);
  }
  c.w.arrayHeader(found.size());
  for (std::string_view k : found) c.w.bulkString(k);
}

void cmdCommand(Call& c);  // needs the table, below

// ---- keys ----

void cmdDel(Call& c) {
  std::int64_t n = 0;
  for (std::size_t i = 1; i < c.argc(); ++i) {
    if (Node* node = c.db.find(c.arg(i))) {
      c.db.erase(node);
      ++n;
    }
  }
  c.w.integer(n);
}

void cmdExists(Call& c) {
  std::int64_t n = 0;
  for (std::size_t i = 1; i < c.argc(); ++i) n += c.db.find(c.arg(i)) != nullptr;
  c.w.integer(n);
}

void cmdType(Call& c) {
  static constexpr std::string_view kNames[] = {"string", "list", "set", "hash", "zset"};
  Node* n = c.db.find(c.arg(1));
  c.w.simpleString(n ? kNames[n->second.value.index()] : "none");
}

/// Redis's parseExtendedExpireArgumentsOrReply (EXPIRE's NX XX GT LT).
enum : unsigned { kExpireNx = 1, kExpireXx = 2, kExpireGt = 4, kExpireLt = 8 };

void expireGeneric(Call& c, bool seconds) {
  unsigned flags = 0;
  for (std::size_t j = 3; j < c.argc(); ++j) {
    const std::string_view opt = c.arg(j);
    if (iequals(opt, "nx"))
      flags |= kExpireNx;
    else if (iequals(opt, "xx"))
      flags |= kExpireXx;
    else if (iequals(opt, "gt"))
      flags |= kExpireGt;
    else if (iequals(opt, "lt"))
      flags |= kExpireLt;
    else
      return errorLine(c, "ERR Unsupported option " + std::string(cstr(opt)));
  }
  if ((flags & kExpireNx) && (flags & (kExpireXx | kExpireGt | kExpireLt))) {
    return c.w.simpleError("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if ((flags & kExpireGt) && (flags & kExpireLt)) {
    return c.w.simpleError("ERR GT and LT options at the same time are not compatible");
  }
  std::int64_t when;
  if (!intArg(c, 2, when)) return;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  if (seconds) {
    if (when > kMax / 1000 || when < kMin / 1000) return invalidExpireTime(c);
    when *= 1000;
  }
  const std::int64_t base = c.db.now();
  if (when > kMax - base) return invalidExpireTime(c);
  when += base;

  Node* n = c.db.find(c.arg(1));
  if (!n) return c.w.integer(0);
  if (flags) {
    const bool has = n->second.slot != kNotVolatile;
    const std::int64_t current = n->second.expireAt;
    if ((flags & kExpireNx) && has) return c.w.integer(0);
    if ((flags & kExpireXx) && !has) return c.w.integer(0);
    // No deadline counts as an infinite one.
    if ((flags & kExpireGt) && (!has || when <= current)) return c.w.integer(0);
    if ((flags & kExpireLt) && has && when >= current) return c.w.integer(0);
  }
  if (when <= base) {
    c.db.erase(n);  // a deadline already passed deletes the key (checkAlreadyExpired)
  } else {
    c.db.setExpire(n, when);
  }
  c.w.integer(1);
}

void cmdExpire(Call& c) { expireGeneric(c, true); }
void cmdPexpire(Call& c) { expireGeneric(c, false); }

void ttlGeneric(Call& c, bool ms) {
  Node* n = c.db.find(c.arg(1));
  if (!n) return c.w.integer(-2);
  if (n->second.slot == kNotVolatile) return c.w.integer(-1);
  const std::int64_t ttl = std::max<std::int64_t>(n->second.expireAt - c.db.now(), 0);
  c.w.integer(ms ? ttl : (ttl + 500) / 1000);
}

void cmdTtl(Call& c) { ttlGeneric(c, false); }
void cmdPttl(Call& c) { ttlGeneric(c, true); }

void cmdPersist(Call& c) {
  Node* n = c.db.find(c.arg(1));
  c.w.integer(n && c.db.persist(n->second) ? 1 : 0);
}

// ---- strings ----

void cmdGet(Call& c) {
  Node* n = c.db.find(c.arg(1));
  if (!n) return c.w.null();
  const std::string* s = as<std::string>(n);
  if (!s) return wrongType(c);
  c.w.bulkString(*s);
}

enum : unsigned {
  kSetNx = 1,
  kSetXx = 2,
  kSetGet = 4,
  kSetKeepTtl = 8,
  kSetEx = 16,
  kSetPx = 32,
  kSetExAt = 64,
  kSetPxAt = 128,
};

/// Redis's getExpireMillisecondsOrReply: the deadline of an EX/PX/EXAT/PXAT argument on this
/// keyspace's clock, or false after an error reply.
bool expireDeadline(Call& c, std::string_view arg, unsigned flags, std::int64_t& deadline) {
  std::int64_t ms;
  if (!parseInt64(arg, ms)) {
    notInteger(c);
    return false;
  }
  const bool seconds = flags & (kSetEx | kSetExAt);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (ms <= 0 || (seconds && ms > kMax / 1000)) {
    invalidExpireTime(c);
    return false;
  }
  if (seconds) ms *= 1000;
  if (flags & (kSetEx | kSetPx)) {
    const std::int64_t now = c.db.now();
    if (ms > kMax - now) {
      invalidExpireTime(c);
      return false;
    }
    deadline = now + ms;
  } else {
    // A Unix time: moved onto the keyspace's clock.
    deadline = ms - unixNowMs() + c.db.now();
  }
  return true;
}

void setGeneric(Call& c, unsigned flags, std::string_view key, std::string_view value,
                std::string_view expireArg) {
  std::int64_t deadline = 0;
  const bool hasExpire = flags & (kSetEx | kSetPx | kSetExAt | kSetPxAt);
  if (hasExpire && !expireDeadline(c, expireArg, flags, deadline)) return;
  Node* n = c.db.find(key);
  if (flags & kSetGet) {
    if (!n) {
      c.w.null();
    } else if (const std::string* old = as<std::string>(n)) {
      c.w.bulkString(*old);
    } else {
      return wrongType(c);
    }
  }
  if (((flags & kSetNx) && n) || ((flags & kSetXx) && !n)) {
    if (!(flags & kSetGet)) c.w.null();
    return;
  }
  if (n) {
    c.db.assignString(n, value, flags & kSetKeepTtl);
  } else {
    n = c.db.insert(key, std::string(value));
  }
  if (hasExpire) c.db.setExpire(n, deadline);
  if (!(flags & kSetGet)) c.w.simpleString("OK");
}

void cmdSet(Call& c) {
  unsigned flags = 0;
  std::string_view expire;
  for (std::size_t j = 3; j < c.argc(); ++j) {
    const std::string_view opt = c.arg(j);
    const bool hasNext = j + 1 < c.argc();
    if (iequals(opt, "nx") && !(flags & kSetXx)) {
      flags |= kSetNx;
    } else if (iequals(opt, "xx") && !(flags & kSetNx)) {
      flags |= kSetXx;
    } else if (iequals(opt, "get")) {
      flags |= kSetGet;
    } else if (iequals(opt, "keepttl") && !(flags & (kSetEx | kSetPx | kSetExAt | kSetPxAt))) {
      flags |= kSetKeepTtl;
    } else if (iequals(opt, "ex") && !(flags & (kSetKeepTtl | kSetPx | kSetExAt | kSetPxAt)) &&
               hasNext) {
      flags |= kSetEx;
      expire = c.arg(++j);
    } else if (iequals(opt, "px") && !(flags & (kSetKeepTtl | kSetEx | kSetExAt | kSetPxAt)) &&
               hasNext) {
      flags |= kSetPx;
      expire = c.arg(++j);
    } else if (iequals(opt, "exat") && !(flags & (kSetKeepTtl | kSetEx | kSetPx | kSetPxAt)) &&
               hasNext) {
      flags |= kSetExAt;
      expire = c.arg(++j);
    } else if (iequals(opt, "pxat") && !(flags & (kSetKeepTtl | kSetEx | kSetPx | kSetExAt)) &&
               hasNext) {
      flags |= kSetPxAt;
      expire = c.arg(++j);
    } else {
      return syntaxError(c);
    }
  }
  setGeneric(c, flags, c.arg(1), c.arg(2), expire);
}

void cmdSetex(Call& c) { setGeneric(c, kSetEx, c.arg(1), c.arg(3), c.arg(2)); }
void cmdPsetex(Call& c) { setGeneric(c, kSetPx, c.arg(1), c.arg(3), c.arg(2)); }

void cmdSetnx(Call& c) {
  if (c.db.find(c.arg(1))) return c.w.integer(0);
  c.db.insert(c.arg(1), std::string(c.arg(2)));
  c.w.integer(1);
}

void cmdGetdel(Call& c) {
  Node* n = c.db.find(c.arg(1));
  if (!n) return c.w.null();
  const std::string* s = as<std::string>(n);
  if (!s) return wrongType(c);
  c.w.bulkString(*s);
  c.db.erase(n);
}

void cmdGetset(Call& c) {
  Node* n = c.db.find(c.arg(1));
  if (!n) {
    c.w.null();
    c.db.insert(c.arg(1), std::string(c.arg(2)));
    return;
  }
  const std::string* s = as<std::string>(n);
  if (!s) return wrongType(c);
  c.w.bulkString(*s);
  c.db.assignString(n, c.arg(2), false);
}

void cmdAppend(Call& c) {
  Node* n = c.db.find(c.arg(1));
  if (!n) {
    n = c.db.insert(c.arg(1), std::string(c.arg(2)));
    return c.w.integer(static_cast<std::int64_t>(as<std::string>(n)->size()));
  }
  std::string* s = as<std::string>(n);
  if (!s) return wrongType(c);
  if (s->size() + c.arg(2).size() > kProtoMaxBulkLen) {
    return c.w.simpleError("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  }
  s->append(c.arg(2));
  c.w.integer(static_cast<std::int64_t>(s->size()));
}

void cmdStrlen(Call& c) {
  Node* n = c.db.find(c.arg(1));
  if (!n) return c.w.integer(0);
  const std::string* s = as<std::string>(n);
  if (!s) return wrongType(c);
  c.w.integer(static_cast<std::int64_t>(s->size()));
}

void incrDecr(Call& c, std::int64_t incr) {
  Node* n = c.db.find(c.arg(1));
  std::int64_t value = 0;
  std::string* s = nullptr;
  if (n) {
    s = as<std::string>(n);
    if (!s) return wrongType(c);
    if (!parseInt64(*s, value)) return notInteger(c);
  }
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  if ((incr < 0 && value < 0 && incr < kMin - value) ||
      (incr > 0 && value > 0 && incr > kMax - value)) {
    return c.w.simpleError(kErrOverflow);
  }
  value += incr;
  char buf[24];
  const std::string_view text = formatInt(value, buf);
  if (s) {
    s->assign(text);  // the deadline stays (Redis's dbOverwrite)
  } else {
    c.db.insert(c.arg(1), std::string(text));
  }
  c.w.integer(value);
}

void cmdIncr(Call& c) { incrDecr(c, 1); }
void cmdDecr(Call& c) { incrDecr(c, -1); }

void cmdIncrby(Call& c) {
  std::int64_t incr;
  if (intArg(c, 2, incr)) incrDecr(c, incr);
}

void cmdDecrby(Call& c) {
  std::int64_t incr;
  if (!intArg(c, 2, incr)) return;
  if (incr == std::numeric_limits<std::int64_t>::min()) {
    return c.w.simpleError("ERR decrement would overflow");
  }
  incrDecr(c, -incr);
}

void cmdMset(Call& c) {
  if (c.argc() % 2 == 0) return arityError(c, c.spec.name);
  for (std::size_t i = 1; i < c.argc(); i += 2) c.db.setString(c.arg(i), c.arg(i + 1));
  c.w.simpleString("OK");
}

void cmdMsetnx(Call& c) {
  if (c.argc() % 2 == 0) return arityError(c, c.spec.name);
  for (std::size_t i = 1; i < c.argc(); i += 2) {
    if (c.db.find(c.arg(i))) return c.w.integer(0);
  }
  for (std::size_t i = 1; i < c.argc(); i += 2) c.db.setString(c.arg(i), c.arg(i + 1));
  c.w.integer(1);
}

void cmdMget(Call& c) {
  c.w.arrayHeader(c.argc() - 1);
  for (std::size_t i = 1; i < c.argc(); ++i) {
    Node* n = c.db.find(c.arg(i));
    const std::string* s = n ? as<std::string>(n) : nullptr;
    if (s) {
      c.w.bulkString(*s);
    } else {
      c.w.null();
    }
  }
}

// ---- lists ----

void pushGeneric(Call& c, bool head) {
  ListValue* l = getOrCreate<ListValue>(c, c.arg(1));
  if (!l) return;
  for (std::size_t i = 2; i < c.argc(); ++i) {
    if (head) {
      l->items.emplace_front(c.arg(i));
    } else {
      l->items.emplace_back(c.arg(i));
    }
  }
  c.w.integer(static_cast<std::int64_t>(l->size()));
}

void cmdLpush(Call& c) { pushGeneric(c, true); }
void cmdRpush(Call& c) { pushGeneric(c, false); }

void popGeneric(Call& c, bool head) {
  if (c.argc() > 3) return arityError(c, c.spec.name);
  const bool hasCount = c.argc() == 3;
  std::int64_t count = 0;
  if (hasCount && !countArg(c, 2, count)) return;
  Node* n;
  ListValue* l;
  if (!lookupAs(c, c.arg(1), n, l)) return;
  if (!n) return hasCount ? c.w.nullArray() : c.w.null();
  if (hasCount && count == 0) return c.w.arrayHeader(0);
  auto& items = l->items;
  if (!hasCount) {
    if (head) {
      c.w.bulkString(items.front());
      items.pop_front();
    } else {
      c.w.bulkString(items.back());
      items.pop_back();
    }
  } else {
    const auto k = std::min<std::size_t>(static_cast<std::size_t>(count), items.size());
    c.w.arrayHeader(k);
    for (std::size_t i = 0; i < k; ++i) {
      if (head) {
        c.w.bulkString(items.front());
        items.pop_front();
      } else {
        c.w.bulkString(items.back());
        items.pop_back();
      }
    }
  }
  if (items.empty()) c.db.erase(n);
}

void cmdLpop(Call& c) { popGeneric(c, true); }
void cmdRpop(Call& c) { popGeneric(c, false); }

void cmdLlen(Call& c) {
  Node* n;
  ListValue* l;
  if (!lookupAs(c, c.arg(1), n, l)) return;
  c.w.integer(n ? static_cast<std::int64_t>(l->size()) : 0);
}

void cmdLrange(Call& c) {
  std::int64_t start, end;
  if (!intArg(c, 2, start) || !intArg(c, 3, end)) return;
  Node* n;
  ListValue* l;
  if (!lookupAs(c, c.arg(1), n, l)) return;
  if (!n) return c.w.arrayHeader(0);
  const auto len = static_cast<std::int64_t>(l->size());
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return c.w.arrayHeader(0);
  if (end >= len) end = len - 1;
  c.w.arrayHeader(static_cast<std::size_t>(end - start + 1));
  auto it = l->items.begin() + start;
  for (std::int64_t i = start; i <= end; ++i, ++it) c.w.bulkString(*it);
}

void cmdLindex(Call& c) {
  // The key before the index, as lindexCommand: a missing key is null and a key of another type
  // WRONGTYPE whatever the index says.
  Node* n;
  ListValue* l;
  if (!lookupAs(c, c.arg(1), n, l)) return;
  if (!n) return c.w.null();
  std::int64_t index;
  if (!intArg(c, 2, index)) return;
  const auto len = static_cast<std::int64_t>(l->size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) return c.w.null();
  c.w.bulkString(l->items[static_cast<std::size_t>(index)]);
}

// ---- sets ----

void cmdSadd(Call& c) {
  SetValue* s = getOrCreate<SetValue>(c, c.arg(1));
  if (!s) return;
  std::int64_t added = 0;
  for (std::size_t i = 2; i < c.argc(); ++i) added += s->add(c.arg(i));
  c.w.integer(added);
}

void cmdSrem(Call& c) {
  Node* n;
  SetValue* s;
  if (!lookupAs(c, c.arg(1), n, s)) return;
  if (!n) return c.w.integer(0);
  std::int64_t removed = 0;
  for (std::size_t i = 2; i < c.argc() && s->size() > 0; ++i) removed += s->remove(c.arg(i));
  if (s->size() == 0) c.db.erase(n);
  c.w.integer(removed);
}

void cmdSismember(Call& c) {
  Node* n;
  SetValue* s;
  if (!lookupAs(c, c.arg(1), n, s)) return;
  c.w.integer(n && s->contains(c.arg(2)) ? 1 : 0);
}

void cmdScard(Call& c) {
  Node* n;
  SetValue* s;
  if (!lookupAs(c, c.arg(1), n, s)) return;
  c.w.integer(n ? static_cast<std::int64_t>(s->size()) : 0);
}

void writeSet(Call& c, const SetValue& s) {
  c.w.setHeader(s.size());
  s.forEach([&](std::string_view m) { c.w.bulkString(m); });
}

void cmdSmembers(Call& c) {
  Node* n;
  SetValue* s;
  if (!lookupAs(c, c.arg(1), n, s)) return;
  if (!n) return c.w.setHeader(0);
  writeSet(c, *s);
}

void cmdSpop(Call& c) {
  if (c.argc() > 3) return syntaxError(c);
  if (c.argc() == 3) {
    std::int64_t count;
    if (!countArg(c, 2, count)) return;
    Node* n;
    SetValue* s;
    if (!lookupAs(c, c.arg(1), n, s)) return;
    if (!n || count == 0) return c.w.setHeader(0);
    if (static_cast<std::uint64_t>(count) >= s->size()) {
      writeSet(c, *s);  // the whole set, then the key goes
      c.db.erase(n);
      return;
    }
    c.w.setHeader(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) c.w.bulkString(s->popRandom(c.db.rng));
    return;
  }
  Node* n;
  SetValue* s;
  if (!lookupAs(c, c.arg(1), n, s)) return;
  if (!n) return c.w.null();
  c.w.bulkString(s->popRandom(c.db.rng));
  if (s->size() == 0) c.db.erase(n);
}

// ---- hashes ----

/// hashTypeTryConversion: a field or value longer than hash-max-listpack-value makes the hash a
/// table before anything is written.
void hashTryConversion(Call& c, HashValue& h, std::size_t from) {
  if (!h.isListpack) return;
  for (std::size_t i = from; i < c.argc(); ++i) {
    if (c.arg(i).size() > kHashMaxListpackValue) return h.convertToTable();
  }
}

void hsetGeneric(Call& c, bool replyOk) {
  if (c.argc() % 2 == 1) return arityError(c, c.spec.name);
  HashValue* h = getOrCreate<HashValue>(c, c.arg(1));
  if (!h) return;
  hashTryConversion(c, *h, 2);
  std::int64_t created = 0;
  for (std::size_t i = 2; i < c.argc(); i += 2) created += h->set(c.arg(i), c.arg(i + 1));
  if (replyOk) return c.w.simpleString("OK");
  c.w.integer(created);
}

void cmdHset(Call& c) { hsetGeneric(c, false); }
void cmdHmset(Call& c) { hsetGeneric(c, true); }

void cmdHsetnx(Call& c) {
  HashValue* h = getOrCreate<HashValue>(c, c.arg(1));
  if (!h) return;
  if (h->find(c.arg(2))) return c.w.integer(0);
  hashTryConversion(c, *h, 2);
  h->set(c.arg(2), c.arg(3));
  c.w.integer(1);
}

void cmdHget(Call& c) {
  Node* n;
  HashValue* h;
  if (!lookupAs(c, c.arg(1), n, h)) return;
  const std::string* v = n ? h->find(c.arg(2)) : nullptr;
  if (!v) return c.w.null();
  c.w.bulkString(*v);
}

void cmdHmget(Call& c) {
  Node* n;
  HashValue* h;
  if (!lookupAs(c, c.arg(1), n, h)) return;
  c.w.arrayHeader(c.argc() - 2);
  for (std::size_t i = 2; i < c.argc(); ++i) {
    const std::string* v = n ? h->find(c.arg(i)) : nullptr;
    if (v) {
      c.w.bulkString(*v);
    } else {
      c.w.null();
    }
  }
}

void cmdHdel(Call& c) {
  Node* n;
  HashValue* h;
  if (!lookupAs(c, c.arg(1), n, h)) return;
  if (!n) return c.w.integer(0);
  std::int64_t removed = 0;
  for (std::size_t i = 2; i < c.argc(); ++i) {
    removed += h->remove(c.arg(i));
    if (h->size() == 0) {
      c.db.erase(n);
      break;
    }
  }
  c.w.integer(removed);
}

void cmdHlen(Call& c) {
  Node* n;
  HashValue* h;
  if (!lookupAs(c, c.arg(1), n, h)) return;
  c.w.integer(n ? static_cast<std::int64_t>(h->size()) : 0);
}

void cmdHexists(Call& c) {
  Node* n;
  HashValue* h;
  if (!lookupAs(c, c.arg(1), n, h)) return;
  c.w.integer(n && h->find(c.arg(2)) ? 1 : 0);
}

void cmdHgetall(Call& c) {
  Node* n;
  HashValue* h;
  if (!lookupAs(c, c.arg(1), n, h)) return;
  if (!n) return c.w.mapHeader(0);
  c.w.mapHeader(h->size());
  h->forEach([&](std::string_view k, std::string_view v) {
    c.w.bulkString(k);
    c.w.bulkString(v);
  });
}

void hashKeysOrValues(Call& c, bool keys) {
  Node* n;
  HashValue* h;
  if (!lookupAs(c, c.arg(1), n, h)) return;
  if (!n) return c.w.arrayHeader(0);
  c.w.arrayHeader(h->size());
  h->forEach([&](std::string_view k, std::string_view v) { c.w.bulkString(keys ? k : v); });
}

void cmdHkeys(Call& c) { hashKeysOrValues(c, true); }
void cmdHvals(Call& c) { hashKeysOrValues(c, false); }

void cmdHincrby(Call& c) {
  std::int64_t incr;
  if (!intArg(c, 3, incr)) return;
  HashValue* h = getOrCreate<HashValue>(c, c.arg(1));
  if (!h) return;
  std::int64_t value = 0;
  std::string* v = h->find(c.arg(2));
  if (v && !parseInt64(*v, value)) return c.w.simpleError("ERR hash value is not an integer");
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  if ((incr < 0 && value < 0 && incr < kMin - value) ||
      (incr > 0 && value > 0 && incr > kMax - value)) {
    return c.w.simpleError(kErrOverflow);
  }
  value += incr;
  char buf[24];
  h->set(c.arg(2), formatInt(value, buf));
  c.w.integer(value);
}

// ---- sorted sets ----

enum : unsigned {
  kZaddNx = 1,
  kZaddXx = 2,
  kZaddGt = 4,
  kZaddLt = 8,
  kZaddIncr = 16,
  kZaddCh = 32,
};

/// zaddGenericCommand: options, then score-member pairs; INCR replies the new score.
void zaddGeneric(Call& c, unsigned flags) {
  std::size_t idx = 2;
  for (; idx < c.argc(); ++idx) {
    const std::string_view opt = c.arg(idx);
    if (iequals(opt, "nx"))
      flags |= kZaddNx;
    else if (iequals(opt, "xx"))
      flags |= kZaddXx;
    else if (iequals(opt, "ch"))
      flags |= kZaddCh;
    else if (iequals(opt, "incr"))
      flags |= kZaddIncr;
    else if (iequals(opt, "gt"))
      flags |= kZaddGt;
    else if (iequals(opt, "lt"))
      flags |= kZaddLt;
    else
      break;
  }
  const bool nx = flags & kZaddNx, xx = flags & kZaddXx, gt = flags & kZaddGt, lt = flags & kZaddLt,
             incr = flags & kZaddIncr;
  const std::size_t elements = c.argc() - idx;
  if (elements == 0 || elements % 2 != 0) return syntaxError(c);
  const std::size_t pairs = elements / 2;
  if (nx && xx) {
    return c.w.simpleError("ERR XX and NX options at the same time are not compatible");
  }
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return c.w.simpleError("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && pairs > 1) {
    return c.w.simpleError("ERR INCR option supports a single increment-element pair");
  }
  // Every score parses before anything changes: the command applies fully or not at all.
  double scoresSmall[8];
  std::vector<double> scoresLarge;
  double* scores = scoresSmall;
  if (pairs > std::size(scoresSmall)) {
    scoresLarge.resize(pairs);
    scores = scoresLarge.data();
  }
  for (std::size_t j = 0; j < pairs; ++j) {
    if (!parseDouble(c.arg(idx + 2 * j), scores[j])) return c.w.simpleError(kErrNotFloat);
  }
  Node* n = c.db.find(c.arg(1));
  ZSetValue* z = nullptr;
  if (n) {
    z = as<ZSetValue>(n);
    if (!z) return wrongType(c);
  }
  std::int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  if (!n && !xx) {
    auto fresh = std::make_unique<ZSetValue>();
    z = fresh.get();
    n = c.db.insert(c.arg(1), std::move(fresh));
  }
  if (z) {
    for (std::size_t j = 0; j < pairs; ++j) {
      score = scores[j];
      const std::string_view member = c.arg(idx + 2 * j + 1);
      const auto it = z->scores.find(member);
      if (it != z->scores.end()) {
        if (nx) continue;
        const double current = it->second;
        if (incr) {
          score += current;
          if (std::isnan(score)) {
            if (z->size() == 0) c.db.erase(n);
            return c.w.simpleError(kErrNan);
          }
        }
        if ((lt && score >= current) || (gt && score <= current)) continue;
        ++processed;
        if (score != current) {
          z->update(it, score);
          ++updated;
        }
      } else if (!xx) {
        z->insert(member, score);
        ++added;
        ++processed;
      }
    }
  }
  if (incr) {
    if (processed) return c.w.doubleValue(score);
    return c.w.null();
  }
  c.w.integer((flags & kZaddCh) ? added + updated : added);
}

void cmdZadd(Call& c) { zaddGeneric(c, 0); }
void cmdZincrby(Call& c) { zaddGeneric(c, kZaddIncr); }

void cmdZrem(Call& c) {
  Node* n;
  ZSetValue* z;
  if (!lookupAs(c, c.arg(1), n, z)) return;
  if (!n) return c.w.integer(0);
  std::int64_t removed = 0;
  for (std::size_t i = 2; i < c.argc(); ++i) {
    const auto it = z->scores.find(c.arg(i));
    if (it == z->scores.end()) continue;
    z->remove(it);
    ++removed;
    if (z->size() == 0) {
      c.db.erase(n);
      break;
    }
  }
  c.w.integer(removed);
}

void cmdZscore(Call& c) {
  Node* n;
  ZSetValue* z;
  if (!lookupAs(c, c.arg(1), n, z)) return;
  if (!n) return c.w.null();
  const auto it = z->scores.find(c.arg(2));
  if (it == z->scores.end()) return c.w.null();
  c.w.doubleValue(it->second);
}

void cmdZcard(Call& c) {
  Node* n;
  ZSetValue* z;
  if (!lookupAs(c, c.arg(1), n, z)) return;
  c.w.integer(n ? static_cast<std::int64_t>(z->size()) : 0);
}

void zrankGeneric(Call& c, bool reverse) {
  Node* n;
  ZSetValue* z;
  if (!lookupAs(c, c.arg(1), n, z)) return;
  if (!n) return c.w.null();
  const auto it = z->scores.find(c.arg(2));
  if (it == z->scores.end()) return c.w.null();
  const std::size_t rank = z->rank(it);
  c.w.integer(static_cast<std::int64_t>(reverse ? z->size() - 1 - rank : rank));
}

void cmdZrank(Call& c) { zrankGeneric(c, false); }
void cmdZrevrank(Call& c) { zrankGeneric(c, true); }

/// zslParseRange's bound: strtod over the rest of the argument after an optional '(' (open
/// bound); an empty number reads as 0 as in Redis; NaN is refused.
bool parseScoreBound(std::string_view arg, double& value, bool& exclusive) {
  exclusive = !arg.empty() && arg[0] == '(';
  if (exclusive) arg.remove_prefix(1);
  bool all = false;
  value = strtodView(arg, all);
  return all && !std::isnan(value);
}

/// zslParseLexRangeItem: "[x" inclusive, "(x" exclusive, "-" and "+" the ends.
struct LexBound {
  enum Kind : std::uint8_t { Min, Max, Inclusive, Exclusive } kind;
  std::string_view value;
};

bool parseLexBound(std::string_view arg, LexBound& b) {
  if (arg.empty()) return false;
  switch (arg[0]) {
    case '+':
      if (arg.size() != 1) return false;
      b = {LexBound::Max, {}};
      return true;
    case '-':
      if (arg.size() != 1) return false;
      b = {LexBound::Min, {}};
      return true;
    case '(':
      b = {LexBound::Exclusive, arg.substr(1)};
      return true;
    case '[':
      b = {LexBound::Inclusive, arg.substr(1)};
      return true;
    default:
      return false;
  }
}

bool lexGteMin(std::string_view m, const LexBound& min) {
  switch (min.kind) {
    case LexBound::Min:
      return true;
    case LexBound::Max:
      return false;
    case LexBound::Inclusive:
      return m >= min.value;
    case LexBound::Exclusive:
      return m > min.value;
  }
  return false;
}

bool lexLteMax(std::string_view m, const LexBound& max) {
  switch (max.kind) {
    case LexBound::Min:
      return false;
    case LexBound::Max:
      return true;
    case LexBound::Inclusive:
      return m <= max.value;
    case LexBound::Exclusive:
      return m < max.value;
  }
  return false;
}

/// One element of a range reply: the member, then (WITHSCORES) its score, as a [member, score]
/// pair in RESP3 and flat in RESP2 (zrangeResultEmitCBufferToClient).
void writeScored(Call& c, const ZSetValue::Item& item, bool withScores) {
  if (withScores && c.w.isResp3()) c.w.arrayHeader(2);
  c.w.bulkString(item.second);
  if (withScores) c.w.doubleValue(item.first);
}

void writeRange(Call& c, const std::vector<const ZSetValue::Item*>& items, bool withScores) {
  c.w.arrayHeader(withScores && !c.w.isResp3() ? items.size() * 2 : items.size());
  for (const ZSetValue::Item* item : items) writeScored(c, *item, withScores);
}

void cmdZrange(Call& c) {
  enum class By : std::uint8_t { Auto, Rank, Score, Lex } by = By::Auto;
  bool reverse = false, withScores = false;
  std::int64_t offset = 0, limit = -1;
  bool hasLimit = false;
  for (std::size_t j = 4; j < c.argc(); ++j) {
    const std::size_t left = c.argc() - j - 1;
    const std::string_view opt = c.arg(j);
    if (iequals(opt, "withscores")) {
      withScores = true;
    } else if (iequals(opt, "limit") && left >= 2) {
      if (!intArg(c, j + 1, offset) || !intArg(c, j + 2, limit)) return;
      hasLimit = true;
      j += 2;
    } else if (!reverse && iequals(opt, "rev")) {
      reverse = true;
    } else if (by == By::Auto && iequals(opt, "bylex")) {
      by = By::Lex;
    } else if (by == By::Auto && iequals(opt, "byscore")) {
      by = By::Score;
    } else {
      return syntaxError(c);
    }
  }
  if (by == By::Auto) by = By::Rank;
  if (hasLimit && limit != -1 && by == By::Rank) {
    return c.w.simpleError(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (withScores && by == By::Lex) {
    return c.w.simpleError("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  std::size_t minIdx = 2, maxIdx = 3;
  if (reverse && by != By::Rank) std::swap(minIdx, maxIdx);  // given as max min

  std::int64_t start = 0, end = 0;
  double minScore = 0, maxScore = 0;
  bool minEx = false, maxEx = false;
  LexBound minLex{}, maxLex{};
  if (by == By::Rank) {
    if (!intArg(c, minIdx, start) || !intArg(c, maxIdx, end)) return;
  } else if (by == By::Score) {
    if (!parseScoreBound(c.arg(minIdx), minScore, minEx) ||
        !parseScoreBound(c.arg(maxIdx), maxScore, maxEx)) {
      return c.w.simpleError("ERR min or max is not a float");
    }
  } else if (!parseLexBound(c.arg(minIdx), minLex) || !parseLexBound(c.arg(maxIdx), maxLex)) {
    return c.w.simpleError("ERR min or max not valid string range item");
  }

  Node* n;
  ZSetValue* z;
  if (!lookupAs(c, c.arg(1), n, z)) return;
  if (!n) return c.w.arrayHeader(0);
  const auto len = static_cast<std::int64_t>(z->size());
  std::vector<const ZSetValue::Item*> out;

  if (by == By::Rank) {
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) return c.w.arrayHeader(0);
    if (end >= len) end = len - 1;
    const auto count = static_cast<std::size_t>(end - start + 1);
    out.reserve(count);
    if (!reverse) {
      auto it = z->at(static_cast<std::size_t>(start));
      for (std::size_t i = 0; i < count; ++i, ++it) out.push_back(&*it);
    } else {
      auto it = z->at(static_cast<std::size_t>(len - 1 - start));
      for (std::size_t i = 0; i < count; ++i) {
        out.push_back(&*it);
        if (i + 1 < count) --it;
      }
    }
    return writeRange(c, out, withScores);
  }

  // BYSCORE / BYLEX: the first element in range from the chosen end, then `offset` skipped
  // (a negative offset skips everything, as Redis's `while (ln && offset--)` does) and at most
  // `limit` taken (negative: no limit).
  if (offset > 0 && offset >= len) return c.w.arrayHeader(0);
  auto gteMin = [&](const ZSetValue::Item& item) {
    if (by == By::Score) return minEx ? item.first > minScore : item.first >= minScore;
    return lexGteMin(item.second, minLex);
  };
  auto lteMax = [&](const ZSetValue::Item& item) {
    if (by == By::Score) return maxEx ? item.first < maxScore : item.first <= maxScore;
    return lexLteMax(item.second, maxLex);
  };
  if (!reverse) {
    auto it = z->order.begin();
    if (by == By::Score) {
      it = z->order.lower_bound(ZSetValue::Item(minScore, std::string_view()));
    }
    while (it != z->order.end() && !gteMin(*it)) ++it;
    for (; it != z->order.end() && offset != 0; ++it) --offset;
    for (; it != z->order.end() && limit != 0 && lteMax(*it); ++it, --limit) out.push_back(&*it);
  } else {
    auto it = z->order.rbegin();
    while (it != z->order.rend() && !lteMax(*it)) ++it;
    for (; it != z->order.rend() && offset != 0; ++it) --offset;
    for (; it != z->order.rend() && limit != 0 && gteMin(*it); ++it, --limit) out.push_back(&*it);
  }
  writeRange(c, out, withScores);
}

void zpopGeneric(Call& c, bool max) {
  if (c.argc() > 3) return syntaxError(c);
  std::int64_t count = -1;  // -1: no count given
  if (c.argc() == 3 && !countArg(c, 2, count)) return;
  const bool nested = c.w.isResp3() && count != -1;
  Node* n;
  ZSetValue* z;
  if (!lookupAs(c, c.arg(1), n, z)) return;
  if (!n || count == 0) return c.w.arrayHeader(0);
  if (count == -1) count = 1;
  const auto k = std::min<std::size_t>(static_cast<std::size_t>(count), z->size());
  c.w.arrayHeader(nested ? k : k * 2);
  for (std::size_t i = 0; i < k; ++i) {
    const auto pos = max ? std::prev(z->order.end()) : z->order.begin();
    const auto it = z->scores.find(pos->second);
    if (nested) c.w.arrayHeader(2);
    c.w.bulkString(it->first);
    c.w.doubleValue(it->second);
    z->remove(it);
  }
  if (z->size() == 0) c.db.erase(n);
}

void cmdZpopmin(Call& c) { zpopGeneric(c, false); }
void cmdZpopmax(Call& c) { zpopGeneric(c, true); }

// ---------------------------------------------------------------------------------------------
// The command table: name, arity, first key, last key, step, write, flags, ACL categories (as
// redis-server 7.0's COMMAND reports them) and the handler.

#define NETBUF_REDIS_COMMANDS(X)                                                              \
  X("append", 3, 1, 1, 1, true, "write denyoom fast", "@write @string @fast", cmdAppend)      \
  X("client", -2, 0, 0, 0, false, "", "@slow", cmdClient)                                     \
  X("command", -1, 0, 0, 0, false, "loading stale", "@slow @connection", cmdCommand)          \
  X("config", -2, 0, 0, 0, false, "", "@slow", cmdConfig)                                     \
  X("dbsize", 1, 0, 0, 0, false, "readonly fast", "@keyspace @read @fast", cmdDbsize)         \
  X("decr", 2, 1, 1, 1, true, "write denyoom fast", "@write @string @fast", cmdDecr)          \
  X("decrby", 3, 1, 1, 1, true, "write denyoom fast", "@write @string @fast", cmdDecrby)      \
  X("del", -2, 1, -1, 1, true, "write", "@keyspace @write @slow", cmdDel)                     \
  X("echo", 2, 0, 0, 0, false, "loading stale fast", "@fast @connection", cmdEcho)            \
  X("exists", -2, 1, -1, 1, false, "readonly fast", "@keyspace @read @fast", cmdExists)       \
  X("expire", -3, 1, 1, 1, true, "write fast", "@keyspace @write @fast", cmdExpire)           \
  X("flushall", -1, 0, 0, 0, true, "write", "@keyspace @write @slow @dangerous", cmdFlushall) \
  X("flushdb", -1, 0, 0, 0, true, "write", "@keyspace @write @slow @dangerous", cmdFlushall)  \
  X("get", 2, 1, 1, 1, false, "readonly fast", "@read @string @fast", cmdGet)                 \
  X("getdel", 2, 1, 1, 1, true, "write fast", "@write @string @fast", cmdGetdel)              \
  X("getset", 3, 1, 1, 1, true, "write denyoom fast", "@write @string @fast", cmdGetset)      \
  X("hdel", -3, 1, 1, 1, true, "write fast", "@write @hash @fast", cmdHdel)                   \
  X("hello", -1, 0, 0, 0, false, "noscript loading stale fast no_auth allow_busy",            \
    "@fast @connection", cmdHello)                                                            \
  X("hexists", 3, 1, 1, 1, false, "readonly fast", "@read @hash @fast", cmdHexists)           \
  X("hget", 3, 1, 1, 1, false, "readonly fast", "@read @hash @fast", cmdHget)                 \
  X("hgetall", 2, 1, 1, 1, false, "readonly", "@read @hash @slow", cmdHgetall)                \
  X("hincrby", 4, 1, 1, 1, true, "write denyoom fast", "@write @hash @fast", cmdHincrby)      \
  X("hkeys", 2, 1, 1, 1, false, "readonly", "@read @hash @slow", cmdHkeys)                    \
  X("hlen", 2, 1, 1, 1, false, "readonly fast", "@read @hash @fast", cmdHlen)                 \
  X("hmget", -3, 1, 1, 1, false, "readonly fast", "@read @hash @fast", cmdHmget)              \
  X("hmset", -4, 1, 1, 1, true, "write denyoom fast", "@write @hash @fast", cmdHmset)         \
  X("hset", -4, 1, 1, 1, true, "write denyoom fast", "@write @hash @fast", cmdHset)           \
  X("hsetnx", 4, 1, 1, 1, true, "write denyoom fast", "@write @hash @fast", cmdHsetnx)        \
  X("hvals", 2, 1, 1, 1, false, "readonly", "@read @hash @slow", cmdHvals)                    \
  X("incr", 2, 1, 1, 1, true, "write denyoom fast", "@write @string @fast", cmdIncr)          \
  X("incrby", 3, 1, 1, 1, true, "write denyoom fast", "@write @string @fast", cmdIncrby)      \
  X("keys", 2, 0, 0, 0, false, "readonly", "@keyspace @read @slow @dangerous", cmdKeys)       \
  X("lindex", 3, 1, 1, 1, false, "readonly", "@read @list @slow", cmdLindex)                  \
  X("llen", 2, 1, 1, 1, false, "readonly fast", "@read @list @fast", cmdLlen)                 \
  X("lpop", -2, 1, 1, 1, true, "write fast", "@write @list @fast", cmdLpop)                   \
  X("lpush", -3, 1, 1, 1, true, "write denyoom fast", "@write @list @fast", cmdLpush)         \
  X("lrange", 4, 1, 1, 1, false, "readonly", "@read @list @slow", cmdLrange)                  \
  X("mget", -2, 1, -1, 1, false, "readonly fast", "@read @string @fast", cmdMget)             \
  X("mset", -3, 1, -1, 2, true, "write denyoom", "@write @string @slow", cmdMset)             \
  X("msetnx", -3, 1, -1, 2, true, "write denyoom", "@write @string @slow", cmdMsetnx)         \
  X("persist", 2, 1, 1, 1, true, "write fast", "@keyspace @write @fast", cmdPersist)          \
  X("pexpire", -3, 1, 1, 1, true, "write fast", "@keyspace @write @fast", cmdPexpire)         \
  X("ping", -1, 0, 0, 0, false, "fast", "@fast @connection", cmdPing)                         \
  X("psetex", 4, 1, 1, 1, true, "write denyoom", "@write @string @slow", cmdPsetex)           \
  X("pttl", 2, 1, 1, 1, false, "readonly fast", "@keyspace @read @fast", cmdPttl)             \
  X("quit", -1, 0, 0, 0, false, "noscript loading stale fast no_auth allow_busy",             \
    "@fast @connection", cmdQuit)                                                             \
  X("rpop", -2, 1, 1, 1, true, "write fast", "@write @list @fast", cmdRpop)                   \
  X("rpush", -3, 1, 1, 1, true, "write denyoom fast", "@write @list @fast", cmdRpush)         \
  X("sadd", -3, 1, 1, 1, true, "write denyoom fast", "@write @set @fast", cmdSadd)            \
  X("scard", 2, 1, 1, 1, false, "readonly fast", "@read @set @fast", cmdScard)                \
  X("select", 2, 0, 0, 0, false, "loading stale fast", "@fast @connection", cmdSelect)        \
  X("set", -3, 1, 1, 1, true, "write denyoom", "@write @string @slow", cmdSet)                \
  X("setex", 4, 1, 1, 1, true, "write denyoom", "@write @string @slow", cmdSetex)             \
  X("setnx", 3, 1, 1, 1, true, "write denyoom fast", "@write @string @fast", cmdSetnx)        \
  X("sismember", 3, 1, 1, 1, false, "readonly fast", "@read @set @fast", cmdSismember)        \
  X("smembers", 2, 1, 1, 1, false, "readonly", "@read @set @slow", cmdSmembers)               \
  X("spop", -2, 1, 1, 1, true, "write fast", "@write @set @fast", cmdSpop)                    \
  X("srem", -3, 1, 1, 1, true, "write fast", "@write @set @fast", cmdSrem)                    \
  X("strlen", 2, 1, 1, 1, false, "readonly fast", "@read @string @fast", cmdStrlen)           \
  X("ttl", 2, 1, 1, 1, false, "readonly fast", "@keyspace @read @fast", cmdTtl)               \
  X("type", 2, 1, 1, 1, false, "readonly fast", "@keyspace @read @fast", cmdType)             \
  X("unlink", -2, 1, -1, 1, true, "write fast", "@keyspace @write @fast", cmdDel)             \
  X("zadd", -4, 1, 1, 1, true, "write denyoom fast", "@write @sortedset @fast", cmdZadd)      \
  X("zcard", 2, 1, 1, 1, false, "readonly fast", "@read @sortedset @fast", cmdZcard)          \
  X("zincrby", 4, 1, 1, 1, true, "write denyoom fast", "@write @sortedset @fast", cmdZincrby) \
  X("zpopmax", -2, 1, 1, 1, true, "write fast", "@write @sortedset @fast", cmdZpopmax)        \
  X("zpopmin", -2, 1, 1, 1, true, "write fast", "@write @sortedset @fast", cmdZpopmin)        \
  X("zrange", -4, 1, 1, 1, false, "readonly", "@read @sortedset @slow", cmdZrange)            \
  X("zrank", 3, 1, 1, 1, false, "readonly fast", "@read @sortedset @fast", cmdZrank)          \
  X("zrem", -3, 1, 1, 1, true, "write fast", "@write @sortedset @fast", cmdZrem)              \
  X("zrevrank", 3, 1, 1, 1, false, "readonly fast", "@read @sortedset @fast", cmdZrevrank)    \
  X("zscore", 3, 1, 1, 1, false, "readonly fast", "@read @sortedset @fast", cmdZscore)

#define NETBUF_REDIS_SPEC(name, arity, first, last, step, write, flags, categories, handler) \
  RedisCommandSpec{name, arity, first, last, step, write, flags, categories},
#define NETBUF_REDIS_HANDLER(name, arity, first, last, step, write, flags, categories, handler) \
  &handler,

constexpr RedisCommandSpec kSpecs[] = {NETBUF_REDIS_COMMANDS(NETBUF_REDIS_SPEC)};
constexpr Handler kHandlers[] = {NETBUF_REDIS_COMMANDS(NETBUF_REDIS_HANDLER)};
static_assert(std::size(kSpecs) == std::size(kHandlers));

#undef NETBUF_REDIS_SPEC
#undef NETBUF_REDIS_HANDLER
#undef NETBUF_REDIS_COMMANDS

// Name lookup without allocation: an open-addressing table, built at compile time, of the
// indexes of kSpecs by a hash of the lower-cased name; a probe compares the name ignoring case.
constexpr std::size_t kLookupSize = 256;  // a power of two, over 3x the number of commands
static_assert(std::size(kSpecs) * 3 < kLookupSize);

constexpr std::uint32_t nameHash(std::string_view s) noexcept {
  std::uint32_t h = 2166136261u;
  for (char ch : s) {
    h ^= static_cast<unsigned char>(toLowerAscii(ch));
    h *= 16777619u;
  }
  return h;
}

constexpr auto kLookup = [] {
  std::array<std::int16_t, kLookupSize> table{};
  for (auto& slot : table) slot = -1;
  for (std::size_t i = 0; i < std::size(kSpecs); ++i) {
    std::size_t pos = nameHash(kSpecs[i].name) & (kLookupSize - 1);
    while (table[pos] != -1) pos = (pos + 1) & (kLookupSize - 1);
    table[pos] = static_cast<std::int16_t>(i);
  }
  return table;
}();

int findIndex(std::string_view name) noexcept {
  if (name.empty() || name.size() > 16) return -1;
  std::size_t pos = nameHash(name) & (kLookupSize - 1);
  for (;;) {
    const int i = kLookup[pos];
    if (i < 0) return -1;
    if (iequals(name, kSpecs[i].name)) return i;
    pos = (pos + 1) & (kLookupSize - 1);
  }
}

template <class F>
void forEachWord(std::string_view s, F&& f) {
  while (!s.empty()) {
    const std::size_t sp = s.find(' ');
    f(s.substr(0, sp));
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
}

std::size_t wordCount(std::string_view s) {
  std::size_t n = 0;
  forEachWord(s, [&](std::string_view) { ++n; });
  return n;
}

/// COMMAND INFO's 10 fields for one command (key specifications and subcommands left empty).
void writeCommandInfo(RespWriter& w, const RedisCommandSpec& spec) {
  w.arrayHeader(10);
  w.bulkString(spec.name);
  w.integer(spec.arity);
  w.setHeader(wordCount(spec.flags));
  forEachWord(spec.flags, [&](std::string_view f) { w.simpleString(f); });
  w.integer(spec.firstKey);
  w.integer(spec.lastKey);
  w.integer(spec.step);
  w.setHeader(wordCount(spec.categories));
  forEachWord(spec.categories, [&](std::string_view f) { w.simpleString(f); });
  w.setHeader(0);    // tips
  w.arrayHeader(0);  // key specifications
  w.arrayHeader(0);  // subcommands
}

void cmdCommand(Call& c) {
  if (c.argc() == 1) {
    c.w.arrayHeader(std::size(kSpecs));
    for (const RedisCommandSpec& spec : kSpecs) writeCommandInfo(c.w, spec);
    return;
  }
  const std::string_view sub = c.arg(1);
  if (iequals(sub, "count")) {
    if (c.argc() != 2) return arityError(c, "command|count");
    return c.w.integer(static_cast<std::int64_t>(std::size(kSpecs)));
  }
  if (iequals(sub, "docs")) {
    // No documentation: clients (redis-cli's hints) do without.
    return c.w.mapHeader(0);
  }
  if (iequals(sub, "info")) {
    if (c.argc() == 2) {
      c.w.arrayHeader(std::size(kSpecs));
      for (const RedisCommandSpec& spec : kSpecs) writeCommandInfo(c.w, spec);
      return;
    }
    c.w.arrayHeader(c.argc() - 2);
    for (std::size_t i = 2; i < c.argc(); ++i) {
      const int idx = findIndex(c.arg(i));
      if (idx < 0) {
        c.w.null();
      } else {
        writeCommandInfo(c.w, kSpecs[idx]);
      }
    }
    return;
  }
  if (iequals(sub, "list")) {
    if (c.argc() != 2) return syntaxError(c);  // FILTERBY is not supported
    c.w.arrayHeader(std::size(kSpecs));
    for (const RedisCommandSpec& spec : kSpecs) c.w.bulkString(spec.name);
    return;
  }
  unknownSubcommand(c);
}

/// "unknown command 'foo', with args beginning with: 'a' 'b' " as processCommand formats it:
/// the name up to 128 bytes, then arguments while the list is under 128 bytes, each cut to
/// what is left of the 128.
void unknownCommand(const RedisCommand& cmd, RespWriter& w) {
  std::string e = "ERR unknown command '";
  e += cstr(cmd[0]).substr(0, 128);
  e += "', with args beginning with: ";
  std::string args;
  for (std::size_t i = 1; i < cmd.size() && args.size() < 128; ++i) {
    const std::size_t room = 128 - args.size();
    args += '\'';
    args += cstr(cmd[i]).substr(0, room);
    args += "' ";
  }
  e += args;
  for (char& ch : e) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  w.simpleError(e);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

struct RedisKeyspace::Impl {
  Db db;
};

RedisKeyspace::RedisKeyspace() : impl_(std::make_unique<Impl>()) {}
RedisKeyspace::~RedisKeyspace() = default;

void RedisKeyspace::execute(const RedisCommand& cmd, RespWriter& out, RedisSession& session) {
  if (cmd.empty()) return;
  const int idx = findIndex(cmd.name());
  if (idx < 0) return unknownCommand(cmd, out);
  const RedisCommandSpec& spec = kSpecs[idx];
  const auto argc = static_cast<int>(std::min<std::size_t>(cmd.size(), 1u << 30));
  Db& db = impl_->db;
  db.beginCommand();
  Call call{db, cmd, out, session, spec};
  if ((spec.arity > 0 && argc != spec.arity) || argc < -spec.arity) {
    return arityError(call, spec.name);
  }
  kHandlers[idx](call);
}

const RedisCommandSpec* RedisKeyspace::findCommand(std::string_view name) noexcept {
  const int idx = findIndex(name);
  return idx < 0 ? nullptr : &kSpecs[idx];
}

std::span<const RedisCommandSpec> RedisKeyspace::commands() noexcept { return kSpecs; }

std::size_t RedisKeyspace::size() const noexcept { return impl_->db.map.size(); }

void RedisKeyspace::clear() { impl_->db.clear(); }

void RedisKeyspace::keys(std::string_view pattern, std::vector<std::string>& out) {
  Db& db = impl_->db;
  db.beginCommand();
  const bool all = pattern == "*";
  for (const auto& [key, entry] : db.map) {
    if ((all || globMatch(pattern, key)) && !db.isExpired(entry)) out.push_back(key);
  }
}

std::size_t RedisKeyspace::sweepExpired(std::size_t budget) { return impl_->db.sweep(budget); }

void RedisKeyspace::setClock(Clock clock) { impl_->db.clock = std::move(clock); }

std::int64_t RedisKeyspace::nowMs() const { return impl_->db.readClock(); }

}  // namespace netbuf
