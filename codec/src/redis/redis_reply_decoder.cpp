// RedisReplyDecoder (redis_reply_decoder.hpp): RESP2 and RESP3 values, in two phases.
//
//  1. scan(): walks the reply's bytes, validating every line, length and payload, and counts what
//     the tree will need: its nodes (every value but the root, plus one Map node per attribute)
//     and the bytes of its streamed strings. It is resumable: its position, the stack of open
//     aggregates (elements still due, or for a streamed one the index of its element count) and
//     how far the current line was searched are kept between reads, so nothing is scanned twice
//     however the reply is split. Offsets are relative to the reply's first byte (the
//     cumulation's readerIndex: nothing is consumed before the reply is complete), so they stay
//     true when the Merge cumulation moves between reads.
//  2. build(): once the whole reply is there, one allocation of exactly that many nodes, filled
//     by a second, unchecked walk. An aggregate's children are consecutive nodes: a header takes
//     the next block of the node array for its children before its children take theirs (a
//     depth-first bump allocation). An attribute takes one node for its Map and a block for its
//     pairs, and the value after it points at that Map.
//
// Memory: nothing is allocated from a declared length or count. The scan's stack grows by one
// frame per nested aggregate (bounded by maxNestingDepth) and its table of streamed-aggregate
// counts by one entry (a std::size_t) per "?" header, which takes 4 bytes or more of input; the
// nodes are allocated for values that have arrived (3 bytes or more each, sizeof(RespValue) each
// in memory: see the header). An allocation that fails resets the scan (nothing is consumed
// before the reply is emitted): the next read scans the reply again from its start.

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/codec/redis/redis_reply_decoder.hpp>
#include <string>
#include <vector>

#include "resp_parse.hpp"

namespace netbuf {

namespace {

constexpr std::size_t kNotYet = static_cast<std::size_t>(-1);

inline bool isDigit(char c) noexcept { return c >= '0' && c <= '9'; }

inline bool equalsNoCase(const char* s, std::size_t n, const char* lower) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    if (lower[i] == '\0') return false;
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return lower[n] == '\0';
}

/// A RESP3 ':' integer: the specification allows a '+' sign, otherwise string2ll's rules.
bool parseInteger(const char* s, std::size_t n, std::int64_t& v) noexcept {
  if (n > 1 && s[0] == '+') {
    if (s[1] == '-') return false;
    return detail::resp::parseLongLong(s + 1, n - 1, v);
  }
  return detail::resp::parseLongLong(s, n, v);
}

/// A RESP3 ',' double: [+|-]digits[.digits][(e|E)[+|-]digits], or inf / nan with an optional
/// sign (any case). Returns false when the text is not of that form.
bool parseDouble(const char* s, std::size_t n, double& out) {
  std::size_t i = 0;
  bool negative = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (equalsNoCase(s + i, n - i, "inf")) {
    out = negative ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
    return true;
  }
  if (equalsNoCase(s + i, n - i, "nan")) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const std::size_t mantissa = i;
  std::size_t d = i;
  while (d < n && isDigit(s[d])) ++d;
  if (d == i) return false;
  i = d;
  if (i < n && s[i] == '.') {
    d = ++i;
    while (d < n && isDigit(s[d])) ++d;
    if (d == i) return false;
    i = d;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    d = i;
    while (d < n && isDigit(s[d])) ++d;
    if (d == i) return false;
    i = d;
  }
  if (i != n) return false;
  double v = 0;
  const auto r = std::from_chars(s + mantissa, s + n, v);
  if (r.ec == std::errc::result_out_of_range) {
    // Beyond a double's range: what strtod gives (inf, or 0 / a denormal for tiny values).
    const std::string text(s + mantissa, s + n);
    v = std::strtod(text.c_str(), nullptr);
  } else if (r.ec != std::errc() || r.ptr != s + n) {
    return false;
  }
  out = negative ? -v : v;
  return true;
}

bool isBigNumber(const char* s, std::size_t n) noexcept {
  std::size_t i = n > 0 && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (i == n) return false;
  for (; i < n; ++i) {
    if (!isDigit(s[i])) return false;
  }
  return true;
}

bool isAggregateByte(char t) noexcept {
  return t == '*' || t == '%' || t == '~' || t == '>' || t == '|';
}

RespType aggregateType(char t) noexcept {
  switch (t) {
    case '%':
      return RespType::Map;
    case '~':
      return RespType::Set;
    case '>':
      return RespType::Push;
    default:
      return RespType::Array;
  }
}

/// The error a line longer than maxInlineSize gets, by the line's type byte.
RedisProtocolErrc tooLongLineKind(char t) noexcept {
  if (isAggregateByte(t)) return RedisProtocolErrc::TooBigMultibulkCount;
  if (t == '$' || t == '!' || t == '=' || t == ';') return RedisProtocolErrc::TooBigBulkCount;
  return RedisProtocolErrc::TooBigInlineRequest;
}

const char* tooLongLineText(char t) noexcept {
  if (isAggregateByte(t)) return "Protocol error: too big mbulk count string";
  if (t == '$' || t == '!' || t == '=' || t == ';') {
    return "Protocol error: too big bulk count string";
  }
  return "Protocol error: too big reply line";
}

std::string describeByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("0x{:02x}", u);
}

}  // namespace

struct RedisReplyDecoder::State {
  /// An open aggregate (or attribute) of the scan.
  struct Frame {
    std::uint64_t remaining;  // fixed size: elements still due (a Map's are 2 per pair)
    std::size_t countIndex;   // streamed: its entry in streamedCounts
    char kind;                // '*', '%', '~', '>' or '|'
    bool streamed;
    bool attrPending;  // an attribute was read at this level: the next element carries it
  };
  /// An open aggregate of the build.
  struct BuildFrame {
    RespValue* slots;
    std::size_t total;
    std::size_t filled;
    bool streamed;
    const RespValue* pendingAttr;
  };

  bool discarding = false;
  std::size_t pos = 0;      // next byte of the reply to scan
  std::size_t scanned = 0;  // bytes of the line at pos already searched for its '\r'
  bool inStreamedString = false;
  bool topAttrPending = false;
  std::vector<Frame> stack;
  std::vector<std::size_t> streamedCounts;  // elements of each streamed aggregate, in order
  std::size_t nodes = 0;
  std::size_t ownedBytes = 0;
  std::vector<BuildFrame> buildStack;  // scratch of build()

  void reset() noexcept {
    pos = 0;
    scanned = 0;
    inStreamedString = false;
    topAttrPending = false;
    stack.clear();
    streamedCounts.clear();
    nodes = 0;
    ownedBytes = 0;
    buildStack.clear();
    // Tables over 1024 entries are freed between replies: one huge reply must not pin their
    // memory for the connection's lifetime.
    if (stack.capacity() > 1024) std::vector<Frame>().swap(stack);
    if (streamedCounts.capacity() > 1024) std::vector<std::size_t>().swap(streamedCounts);
    if (buildStack.capacity() > 1024) std::vector<BuildFrame>().swap(buildStack);
  }

  [[noreturn]] static void fail(RedisProtocolErrc kind, const std::string& what,
                                std::uint64_t offset, std::uint64_t value = CodecError::kNone,
                                std::uint64_t limit = CodecError::kNone) {
    throw RedisProtocolError(kind, what, offset, value, limit);
  }

  /// The '\r' of the line at pos, relative to pos, once it and the byte after it have arrived;
  /// kNotYet while waiting. Throws when the line runs past maxInlineSize or its '\r' is not
  /// followed by '\n'.
  std::size_t findLineEnd(const char* p, std::size_t n, std::size_t maxInline, std::uint64_t base) {
    const std::size_t avail = n - pos;
    const std::size_t window = maxInline < avail ? maxInline + 1 : avail;
    if (scanned < window) {
      const char* cr = detail::resp::findByte(p + pos + scanned, window - scanned, '\r');
      if (cr != nullptr) {
        const auto at = static_cast<std::size_t>(cr - (p + pos));
        scanned = at;
        if (at + 1 >= avail) return kNotYet;
        if (p[pos + at + 1] != '\n') {
          fail(RedisProtocolErrc::MissingCrlf, "Protocol error: '\\r' not followed by '\\n'",
               base + pos + at);
        }
        return at;
      }
      scanned = window;
    }
    if (avail > maxInline) {
      fail(tooLongLineKind(p[pos]), tooLongLineText(p[pos]), base + pos,
           std::uint64_t{maxInline} + 1, maxInline);
    }
    return kNotYet;
  }

  void checkMessageSize(std::uint64_t end, const RedisDecoderOptions& o, std::uint64_t at) const {
    if (end > o.maxMessageBytes) {
      fail(RedisProtocolErrc::MessageTooLarge, "Protocol error: reply exceeds the message limit",
           at, end, o.maxMessageBytes);
    }
  }

  /// A value (or an attribute) begins at the current level: counts its node and its place in a
  /// streamed parent.
  void beginValue(bool attribute, std::uint64_t at) {
    bool& pending = stack.empty() ? topAttrPending : stack.back().attrPending;
    if (attribute) {
      if (pending) {
        fail(RedisProtocolErrc::InvalidAttribute, "Protocol error: two attributes before a value",
             at);
      }
      pending = true;
      ++nodes;  // its Map node
      return;
    }
    pending = false;
    if (!stack.empty()) {
      ++nodes;
      if (stack.back().streamed) ++streamedCounts[stack.back().countIndex];
    }
  }

  /// A value (or an attribute) ended at the current level. Returns true when it completed the
  /// reply.
  bool endValue(bool attribute) {
    for (;;) {
      if (stack.empty()) return !attribute;
      if (attribute) return false;  // the value it annotates is still to come
      Frame& top = stack.back();
      if (top.streamed || --top.remaining != 0) return false;
      attribute = top.kind == '|';
      stack.pop_back();
    }
  }

  void push(const Frame& f, const RedisDecoderOptions& o, std::uint64_t at) {
    if (stack.size() + 1 > o.maxNestingDepth) {
      fail(RedisProtocolErrc::NestingTooDeep, "Protocol error: aggregates nested too deep", at,
           stack.size() + 1, o.maxNestingDepth);
    }
    stack.push_back(f);
  }

  /// A length: a non-negative string2ll integer.
  static std::uint64_t parseLength(const char* s, std::size_t n, std::uint64_t at) {
    std::int64_t v = 0;
    if (!detail::resp::parseLongLong(s, n, v) || v < 0) {
      fail(RedisProtocolErrc::InvalidInteger, "Protocol error: invalid length", at);
    }
    return static_cast<std::uint64_t>(v);
  }

  /// Scans on from pos; true once the reply is complete (pos is then its size).
  bool scan(const char* p, std::size_t n, std::uint64_t base, const RedisDecoderOptions& o) {
    for (;;) {
      if (pos >= n) return false;
      const std::size_t cr = findLineEnd(p, n, o.maxInlineSize, base);
      if (cr == kNotYet) return false;
      const char t = p[pos];
      if (cr == 0) {  // an empty line: no type byte at all
        fail(RedisProtocolErrc::UnknownType, "Protocol error: an empty line instead of a value",
             base + pos);
      }
      const char* body = p + pos + 1;
      const std::size_t blen = cr - 1;
      const std::size_t lineEnd = pos + cr + 2;
      const std::uint64_t at = base + pos;
      checkMessageSize(lineEnd, o, at);

      if (inStreamedString) {
        if (t != ';') {
          fail(RedisProtocolErrc::InvalidStreamChunk,
               "Protocol error: expected ';' in a streamed string, got " + describeByte(t), at);
        }
        const std::uint64_t len = parseLength(body, blen, at);
        if (len > o.maxBulkLength) {
          fail(RedisProtocolErrc::InvalidBulkLength, "Protocol error: invalid bulk length", at, len,
               o.maxBulkLength);
        }
        if (len == 0) {
          inStreamedString = false;
          pos = lineEnd;
          scanned = 0;
          if (endValue(false)) return true;
          continue;
        }
        const std::uint64_t end = lineEnd + len + 2;
        checkMessageSize(end, o, at);
        if (n < end) return false;  // pos stays at the chunk's line; scanned finds it at once
        if (p[end - 2] != '\r' || p[end - 1] != '\n') {
          fail(RedisProtocolErrc::MissingCrlf, "Protocol error: bulk payload not followed by CRLF",
               base + end - 2);
        }
        ownedBytes += static_cast<std::size_t>(len);
        pos = static_cast<std::size_t>(end);
        scanned = 0;
        continue;
      }

      bool done = false;
      std::size_t next = lineEnd;
      switch (t) {
        case '+':
        case '-':
          beginValue(false, at);
          done = endValue(false);
          break;
        case ':': {
          std::int64_t v = 0;
          if (!parseInteger(body, blen, v)) {
            fail(RedisProtocolErrc::InvalidInteger, "Protocol error: invalid integer", at);
          }
          beginValue(false, at);
          done = endValue(false);
          break;
        }
        case ',': {
          double v = 0;
          if (!parseDouble(body, blen, v)) {
            fail(RedisProtocolErrc::InvalidDouble, "Protocol error: invalid double", at);
          }
          beginValue(false, at);
          done = endValue(false);
          break;
        }
        case '#':
          if (blen != 1 || (body[0] != 't' && body[0] != 'f')) {
            fail(RedisProtocolErrc::InvalidBoolean, "Protocol error: invalid boolean", at);
          }
          beginValue(false, at);
          done = endValue(false);
          break;
        case '_':
          if (blen != 0) {
            fail(RedisProtocolErrc::MissingCrlf, "Protocol error: '_' not followed by CRLF",
                 at + 1);
          }
          beginValue(false, at);
          done = endValue(false);
          break;
        case '(':
          if (!isBigNumber(body, blen)) {
            fail(RedisProtocolErrc::InvalidBigNumber, "Protocol error: invalid big number", at);
          }
          beginValue(false, at);
          done = endValue(false);
          break;
        case '$':
        case '!':
        case '=': {
          if (t == '$' && blen == 1 && body[0] == '?') {
            beginValue(false, at);
            inStreamedString = true;
            break;
          }
          if (t == '$' && blen == 2 && body[0] == '-' && body[1] == '1') {
            beginValue(false, at);
            done = endValue(false);
            break;
          }
          const std::uint64_t len = parseLength(body, blen, at);
          if (len > o.maxBulkLength) {
            fail(RedisProtocolErrc::InvalidBulkLength, "Protocol error: invalid bulk length", at,
                 len, o.maxBulkLength);
          }
          const std::uint64_t end = lineEnd + len + 2;
          checkMessageSize(end, o, at);
          if (n < end) return false;  // the payload is not all here: rescan just this line
          if (p[end - 2] != '\r' || p[end - 1] != '\n') {
            fail(RedisProtocolErrc::MissingCrlf,
                 "Protocol error: bulk payload not followed by CRLF", base + end - 2);
          }
          if (t == '=' && (len < 4 || p[lineEnd + 3] != ':')) {
            fail(RedisProtocolErrc::InvalidVerbatim,
                 "Protocol error: verbatim string without a \"fmt:\" prefix", at);
          }
          beginValue(false, at);
          done = endValue(false);
          next = static_cast<std::size_t>(end);
          break;
        }
        case '*':
        case '%':
        case '~':
        case '>':
        case '|': {
          const bool attribute = t == '|';
          if (!attribute && blen == 1 && body[0] == '?') {
            beginValue(false, at);
            streamedCounts.push_back(0);
            push(Frame{0, streamedCounts.size() - 1, t, true, false}, o, at);
            break;
          }
          if (t == '*' && blen == 2 && body[0] == '-' && body[1] == '1') {
            beginValue(false, at);
            done = endValue(false);
            break;
          }
          const std::uint64_t count = parseLength(body, blen, at);
          if (count > o.maxMultibulkLength) {
            fail(RedisProtocolErrc::InvalidMultibulkLength,
                 "Protocol error: invalid multibulk length", at, count, o.maxMultibulkLength);
          }
          // count < 2^63 (parsed as int64): twice it fits.
          const std::uint64_t elements = (t == '%' || attribute) ? count * 2 : count;
          beginValue(attribute, at);
          if (elements == 0) {
            done = endValue(attribute);
          } else {
            push(Frame{elements, 0, t, false, false}, o, at);
          }
          break;
        }
        case '.': {
          if (stack.empty() || !stack.back().streamed) {
            fail(RedisProtocolErrc::InvalidStreamChunk,
                 "Protocol error: '.' outside a streamed aggregate", at);
          }
          if (blen != 0) {
            fail(RedisProtocolErrc::InvalidStreamChunk, "Protocol error: '.' not followed by CRLF",
                 at);
          }
          const Frame& top = stack.back();
          if (top.attrPending) {
            fail(RedisProtocolErrc::InvalidAttribute,
                 "Protocol error: an attribute with no value after it", at);
          }
          if (top.kind == '%' && streamedCounts[top.countIndex] % 2 != 0) {
            fail(RedisProtocolErrc::InvalidStreamChunk,
                 "Protocol error: a streamed map ended after a key", at);
          }
          stack.pop_back();
          done = endValue(false);
          break;
        }
        default:
          fail(RedisProtocolErrc::UnknownType,
               "Protocol error: unknown RESP type " + describeByte(t), at);
      }
      pos = next;
      scanned = 0;
      if (done) return true;
    }
  }

  /// The reply of the bytes scan() accepted: [p, p + pos) of input (a slice holding them).
  RedisReply build(ByteBuf input, std::uint64_t offset) {
    RedisReply::Parts parts;
    parts.offset = offset;
    parts.wireSize = pos;
    if (nodes != 0) parts.nodes = std::make_unique<RespValue[]>(nodes);
    if (ownedBytes != 0) parts.owned = std::make_unique<char[]>(ownedBytes);
    parts.ownedSize = ownedBytes;
    const char* p = reinterpret_cast<const char*>(input.readPtr());
    RespValue* pool = parts.nodes.get();
    std::size_t bump = 0;
    std::size_t ownedUsed = 0;
    std::size_t streamedIndex = 0;
    const RespValue* topPending = nullptr;
    bool rootDone = false;
    std::size_t at = 0;
    buildStack.clear();

    auto lineOf = [&](std::size_t& bodyLen) {
      const char* cr = static_cast<const char*>(std::memchr(p + at + 1, '\r', pos - at - 1));
      bodyLen = static_cast<std::size_t>(cr - (p + at + 1));
      return at + 1 + bodyLen + 2;  // the line's end
    };
    auto length = [](const char* s, std::size_t n) {
      std::int64_t v = 0;
      detail::resp::parseLongLong(s, n, v);
      return static_cast<std::size_t>(v);
    };

    for (;;) {
      while (!buildStack.empty() && buildStack.back().filled == buildStack.back().total) {
        if (buildStack.back().streamed) at += 3;  // ".\r\n"
        buildStack.pop_back();
      }
      if (rootDone && buildStack.empty()) break;

      const char t = p[at];
      std::size_t blen = 0;
      const std::size_t lineEnd = lineOf(blen);
      const char* body = p + at + 1;
      const RespValue*& pending = buildStack.empty() ? topPending : buildStack.back().pendingAttr;

      if (t == '|') {
        const std::size_t k = 2 * length(body, blen);
        RespValue* map = pool + bump;
        RespValue* kids = map + 1;
        bump += 1 + k;
        *map = RespValue::map({kids, k});
        pending = map;
        at = lineEnd;
        if (k != 0) buildStack.push_back(BuildFrame{kids, k, 0, false, nullptr});
        continue;
      }

      RespValue v;
      RespValue* kids = nullptr;
      std::size_t kidCount = 0;
      bool opens = false;
      bool streamed = false;
      std::size_t next = lineEnd;
      switch (t) {
        case '+':
          v = RespValue::simpleString({body, blen});
          break;
        case '-':
          v = RespValue::simpleError({body, blen});
          break;
        case ':': {
          std::int64_t i = 0;
          parseInteger(body, blen, i);
          v = RespValue::integer(i);
          break;
        }
        case ',': {
          double d = 0;
          parseDouble(body, blen, d);
          v = RespValue::doubleValue(d);
          break;
        }
        case '#':
          v = RespValue::boolean(body[0] == 't');
          break;
        case '_':
          v = RespValue::null('_');
          break;
        case '(':
          v = RespValue::bigNumber({body, blen});
          break;
        case '$':
        case '!':
        case '=': {
          if (t == '$' && blen == 1 && body[0] == '?') {
            char* dst = parts.owned.get() + ownedUsed;
            std::size_t total = 0;
            std::size_t c = lineEnd;
            for (;;) {
              at = c;
              std::size_t clen = 0;
              const std::size_t chunkLineEnd = lineOf(clen);
              const std::size_t len = length(p + c + 1, clen);
              if (len == 0) {
                next = chunkLineEnd;
                break;
              }
              std::memcpy(dst + total, p + chunkLineEnd, len);
              total += len;
              c = chunkLineEnd + len + 2;
            }
            ownedUsed += total;
            v = RespValue::bulkString({total != 0 ? dst : nullptr, total});
            break;
          }
          if (t == '$' && blen == 2 && body[0] == '-') {
            v = RespValue::null('$');
            break;
          }
          const std::size_t len = length(body, blen);
          const std::string_view payload(p + lineEnd, len);
          next = lineEnd + len + 2;
          v = t == '$'   ? RespValue::bulkString(payload)
              : t == '!' ? RespValue::bulkError(payload)
                         : RespValue::verbatimString(payload);
          break;
        }
        default: {  // '*', '%', '~', '>'
          if (blen == 1 && body[0] == '?') {
            kidCount = streamedCounts[streamedIndex++];
            streamed = true;
          } else if (t == '*' && blen == 2 && body[0] == '-') {
            v = RespValue::null('*');
            break;
          } else {
            kidCount = length(body, blen);
            if (t == '%') kidCount *= 2;
          }
          kids = kidCount != 0 ? pool + bump : nullptr;
          bump += kidCount;
          opens = kidCount != 0 || streamed;
          const std::span<const RespValue> span(kids, kidCount);
          v = t == '%' ? RespValue::map(span) : RespValue::aggregate(aggregateType(t), span);
          break;
        }
      }
      v.setAttributes(pending);
      pending = nullptr;
      if (buildStack.empty()) {
        parts.root = v;
        rootDone = true;
      } else {
        BuildFrame& top = buildStack.back();
        top.slots[top.filled++] = v;
      }
      at = next;
      if (opens) buildStack.push_back(BuildFrame{kids, kidCount, 0, streamed, nullptr});
    }
    parts.input = std::move(input);
    return RedisReply(std::move(parts));
  }
};

void RedisReplyDecoder::StateDeleter::operator()(State* s) const noexcept { delete s; }

RedisReplyDecoder::RedisReplyDecoder(const RedisDecoderOptions& options, ByteBufAllocator& alloc)
    : ByteToMessageDecoder(Cumulator::Merge, alloc), options_(options), state_(new State) {}

bool RedisReplyDecoder::isDiscarding() const noexcept { return state_->discarding; }

void RedisReplyDecoder::decode(CompositeByteBuf&, std::vector<RedisReply>&) {
  throw IllegalStateError("RedisReplyDecoder needs the Merge cumulator");
}

void RedisReplyDecoder::decode(ByteBuf& in, std::vector<RedisReply>& out) {
  State& s = *state_;
  const std::size_t n = in.readableBytes();
  if (n == 0) return;
  if (s.discarding) {
    in.skipBytes(n);
    return;
  }
  const std::uint64_t base = streamOffset(in);
  try {
    if (!s.scan(reinterpret_cast<const char*>(in.readPtr()), n, base, options_)) return;
    // Emitted before the reply is consumed: an allocation that fails (the reply's nodes, out's
    // growth) leaves its bytes in the cumulation.
    out.push_back(s.build(in.retainedSliceBatched(in.readerIndex(), s.pos), base));
  } catch (const RedisProtocolError&) {
    // A RESP stream cannot be re-synchronised: everything from here on is discarded.
    s.reset();
    s.discarding = true;
    in.skipBytes(in.readableBytes());
    throw;
  } catch (...) {
    // An allocation failed (the scan's tables, the build): the scan's counts may already include
    // what was being added, so the next call scans the reply again from its first byte, which
    // nothing has consumed.
    s.reset();
    throw;
  }
  in.skipBytes(s.pos);
  s.reset();
}

void RedisReplyDecoder::decodeLast(ByteBuf&, std::vector<RedisReply>&) {
  // The framework's loop has decoded every complete reply: what is left is cut short. It is left
  // unconsumed (the framework drops it) and the scan starts afresh for the next stream.
  if (!state_->discarding) state_->reset();
}

RedisReply RedisReplyDecoder::decodeOne(ByteBuf bytes, const RedisDecoderOptions& options) {
  State s;
  const std::size_t n = bytes.readableBytes();
  if (!s.scan(reinterpret_cast<const char*>(bytes.readPtr()), n, 0, options)) {
    throw RedisProtocolError(RedisProtocolErrc::Truncated, "Protocol error: truncated value", n);
  }
  if (s.pos != n) {
    throw RedisProtocolError(RedisProtocolErrc::Truncated, "Protocol error: bytes after the value",
                             s.pos);
  }
  return s.build(std::move(bytes), 0);
}

}  // namespace netbuf
