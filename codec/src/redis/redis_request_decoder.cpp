// RedisRequestDecoder (redis_request_decoder.hpp): redis-server 7.0's processInputBuffer,
// processMultibulkBuffer and processInlineBuffer, with sdssplitargs' quoting rules.
//
// Nothing of a request is consumed until the whole request has arrived: the decoder keeps its
// progress as offsets relative to the request's first byte (the cumulation's readerIndex), which
// stay true when the Merge cumulation is compacted or reallocated between reads; the argument
// views are made from those offsets once the request is complete, into a retained slice of it.
//
// Where the rules leave Redis's code on purpose (both for the sake of a result that does not
// depend on how the input is split into reads):
//  - a '*' / '$' line's '\r' must come within maxInlineSize bytes of the line's start (Redis
//    checks only that no '\r' has arrived once more bytes than that are buffered, so a long line
//    that arrives in one read passes its check but fails string2ll anyway);
//  - an inline line's '\n' must come within maxInlineSize + 1 bytes likewise;
//  - lines are searched with memchr, not strchr: a NUL byte does not hide the line's end. Inside
//    an inline line a NUL ends the arguments, as sdssplitargs (a C-string function) reads it.

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/codec/redis/redis_request_decoder.hpp>
#include <new>
#include <string>

#include "resp_parse.hpp"

namespace netbuf {

namespace {

constexpr std::size_t kNotYet = static_cast<std::size_t>(-1);

/// One parsed argument of a multibulk request: its payload's offset from the request's first
/// byte and its length.
struct ArgRef {
  std::size_t off;
  std::size_t len;
};

/// One argument of an inline request: `len` bytes at `off` in the line, or in the command's own
/// storage when `owned` (it was unescaped or joined from quoted parts).
struct Token {
  std::size_t off;
  std::size_t len;
  bool owned;
};

inline bool isSpace(char c) noexcept {
  // C's isspace in the "C" locale, which sdssplitargs uses to skip blanks.
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline bool isHex(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

/// Builds one token of splitArgs: a view of the line while its bytes are consecutive line bytes,
/// switching to owned storage at the first byte that is not (an escape, a quote inside a token).
class TokenBuilder {
 public:
  TokenBuilder(const char* line, std::size_t lineLen, std::unique_ptr<char[]>& owned,
               std::size_t& ownedUsed) noexcept
      : line_(line), lineLen_(lineLen), owned_(owned), ownedUsed_(ownedUsed) {}

  void start(std::size_t at) noexcept { token_ = Token{at, 0, false}; }
  /// Appends the line's byte at index i.
  void raw(std::size_t i) {
    if (!token_.owned) {
      if (token_.len == 0) {
        token_.off = i;
        token_.len = 1;
        return;
      }
      if (token_.off + token_.len == i) {
        ++token_.len;
        return;
      }
      toOwned();
    }
    owned_[ownedUsed_++] = line_[i];
    ++token_.len;
  }
  /// Appends a byte that is not the line's (an unescaped one).
  void byte(char c) {
    if (!token_.owned) toOwned();
    owned_[ownedUsed_++] = c;
    ++token_.len;
  }
  Token done() const noexcept { return token_; }

 private:
  void toOwned() {
    // Every owned byte stands for at least one distinct byte of the line: the line's length
    // bounds the storage of all the tokens of the line.
    if (!owned_) owned_ = std::make_unique<char[]>(lineLen_);
    std::memcpy(owned_.get() + ownedUsed_, line_ + token_.off, token_.len);
    token_.off = ownedUsed_;
    ownedUsed_ += token_.len;
    token_.owned = true;
  }

  const char* line_;
  std::size_t lineLen_;
  std::unique_ptr<char[]>& owned_;
  std::size_t& ownedUsed_;
  Token token_{0, 0, false};
};

/// sdssplitargs (sds.c) over [line, line + len): appends the arguments to tokens; false for
/// unbalanced quotes (an unterminated quote, or a closing quote followed by neither a blank nor
/// the end). owned receives the bytes of arguments that are not a run of the line.
bool splitArgs(const char* line, std::size_t len, std::vector<Token>& tokens,
               std::unique_ptr<char[]>& owned) {
  if (const void* nul = std::memchr(line, '\0', len); nul != nullptr) {
    len = static_cast<std::size_t>(static_cast<const char*>(nul) - line);
  }
  std::size_t ownedUsed = 0;
  TokenBuilder tb(line, len, owned, ownedUsed);
  std::size_t i = 0;
  for (;;) {
    while (i < len && isSpace(line[i])) ++i;
    if (i >= len) return true;
    tb.start(i);
    bool inDouble = false;
    bool inSingle = false;
    for (bool done = false; !done;) {
      if (inDouble) {
        if (i >= len) return false;  // unterminated quotes
        const char c = line[i];
        if (c == '\\' && i + 3 < len && line[i + 1] == 'x' && isHex(line[i + 2]) &&
            isHex(line[i + 3])) {
          tb.byte(static_cast<char>(hexValue(line[i + 2]) * 16 + hexValue(line[i + 3])));
          i += 4;
        } else if (c == '\\' && i + 1 < len) {
          char e = line[i + 1];
          switch (e) {
            case 'n':
              e = '\n';
              break;
            case 'r':
              e = '\r';
              break;
            case 't':
              e = '\t';
              break;
            case 'b':
              e = '\b';
              break;
            case 'a':
              e = '\a';
              break;
            default:
              break;
          }
          tb.byte(e);
          i += 2;
        } else if (c == '"') {
          if (i + 1 < len && !isSpace(line[i + 1])) return false;
          done = true;
          ++i;
        } else {
          tb.raw(i++);
        }
      } else if (inSingle) {
        if (i >= len) return false;
        const char c = line[i];
        if (c == '\\' && i + 1 < len && line[i + 1] == '\'') {
          tb.raw(i + 1);
          i += 2;
        } else if (c == '\'') {
          if (i + 1 < len && !isSpace(line[i + 1])) return false;
          done = true;
          ++i;
        } else {
          tb.raw(i++);
        }
      } else {
        if (i >= len) break;
        switch (line[i]) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
            done = true;
            ++i;
            break;
          case '"':
            inDouble = true;
            ++i;
            break;
          case '\'':
            inSingle = true;
            ++i;
            break;
          default:
            tb.raw(i++);
            break;
        }
      }
    }
    tokens.push_back(tb.done());
  }
}

}  // namespace

// Progress of the request being decoded. Offsets are relative to the request's first byte.
struct RedisRequestDecoder::State {
  enum class Phase : std::uint8_t {
    Start,    // between requests
    Count,    // a multibulk request's "*<count>" line
    Args,     // its arguments: "$<len>" lines and payloads
    Inline,   // an inline request's line
    Discard,  // after an error: everything is skipped
  };
  Phase phase = Phase::Start;
  std::size_t pos = 0;          // Args: the next length line, or the payload when bulkLen >= 0
  std::size_t scanned = 0;      // bytes of the current line already searched for its end
  std::uint64_t remaining = 0;  // Args: arguments still to come
  std::int64_t bulkLen = -1;    // Args: the length just read, -1 before the length line
  std::vector<ArgRef> args;     // Args: the arguments parsed so far (reused between requests)
  std::vector<Token> tokens;    // Inline: scratch (reused)

  void startNext() noexcept {
    phase = Phase::Start;
    pos = 0;
    scanned = 0;
    remaining = 0;
    bulkLen = -1;
    args.clear();
    // An argument table over 1024 entries is freed between requests: one huge request must not
    // pin its memory for the connection's lifetime.
    if (args.capacity() > 1024) std::vector<ArgRef>().swap(args);
  }

  /// Decodes the request at in's readerIndex (stream offset base) as far as the bytes allow.
  /// Returns true when it completed one (emitted a command, or consumed one that is none).
  bool step(ByteBuf& in, std::vector<RedisCommand>& out, std::uint64_t base,
            const RedisDecoderOptions& o);

  /// Reports bad input: discards what is buffered and everything after it.
  [[noreturn]] void fail(ByteBuf& in, RedisProtocolErrc kind, const std::string& what,
                         std::uint64_t offset, std::uint64_t value = CodecError::kNone,
                         std::uint64_t limit = CodecError::kNone) {
    startNext();
    phase = Phase::Discard;
    in.skipBytes(in.readableBytes());
    throw RedisProtocolError(kind, what, offset, value, limit);
  }

  /// The '\r' of the line starting at lineStart: its index relative to lineStart once it and the
  /// byte after it have arrived; kNotYet while waiting (`scanned` remembers how far the line was
  /// searched, or where its '\r' is); throws `tooBig` when no '\r' comes within maxInline bytes
  /// of the line's start.
  std::size_t findLineCr(ByteBuf& in, const char* p, std::size_t n, std::size_t lineStart,
                         std::size_t maxInline, RedisProtocolErrc tooBig, const char* tooBigText,
                         std::uint64_t base) {
    const std::size_t avail = n - lineStart;
    const std::size_t window = maxInline < avail ? maxInline + 1 : avail;
    if (scanned < window) {
      const char* cr = detail::resp::findByte(p + lineStart + scanned, window - scanned, '\r');
      if (cr != nullptr) {
        const auto at = static_cast<std::size_t>(cr - (p + lineStart));
        scanned = at;
        return at + 1 < avail ? at : kNotYet;
      }
      scanned = window;
    }
    if (avail > maxInline)
      fail(in, tooBig, tooBigText, base + lineStart, std::uint64_t{maxInline} + 1, maxInline);
    return kNotYet;
  }
};

void RedisRequestDecoder::StateDeleter::operator()(State* s) const noexcept { delete s; }

RedisRequestDecoder::RedisRequestDecoder(const RedisDecoderOptions& options,
                                         ByteBufAllocator& alloc)
    : ByteToMessageDecoder(Cumulator::Merge, alloc), options_(options), state_(new State) {}

bool RedisRequestDecoder::isDiscarding() const noexcept {
  return state_->phase == State::Phase::Discard;
}

void RedisRequestDecoder::decode(CompositeByteBuf&, std::vector<RedisCommand>&) {
  throw IllegalStateError("RedisRequestDecoder needs the Merge cumulator");
}

void RedisRequestDecoder::decodeLast(ByteBuf&, std::vector<RedisCommand>&) {
  // The framework's loop has decoded every complete request: what is left is one cut short by
  // the end of the stream, which Redis drops silently. It is left unconsumed, so the framework
  // counts it in bytesDropped().
  if (state_->phase != State::Phase::Discard) state_->startNext();
}

bool RedisRequestDecoder::State::step(ByteBuf& in, std::vector<RedisCommand>& out,
                                      std::uint64_t base, const RedisDecoderOptions& o) {
  State& s = *this;
  const std::size_t n = in.readableBytes();
  if (n == 0) return false;
  const char* p = reinterpret_cast<const char*>(in.readPtr());

  if (s.phase == State::Phase::Start) {
    if (p[0] == '*') {
      s.phase = State::Phase::Count;
    } else if (o.allowInline) {
      s.phase = State::Phase::Inline;
    } else {
      s.fail(in, RedisProtocolErrc::InlineNotAllowed,
             "Protocol error: inline commands are disabled", base);
    }
    s.scanned = 0;
  }

  switch (s.phase) {
    case State::Phase::Discard:
      in.skipBytes(n);
      return false;

    case State::Phase::Inline: {
      const std::size_t window = o.maxInlineSize < n ? o.maxInlineSize + 1 : n;
      const char* nl = s.scanned < window
                           ? detail::resp::findByte(p + s.scanned, window - s.scanned, '\n')
                           : nullptr;
      if (nl == nullptr) {
        s.scanned = std::max(s.scanned, window);
        if (n > o.maxInlineSize) {
          s.fail(in, RedisProtocolErrc::TooBigInlineRequest,
                 "Protocol error: too big inline request", base, std::uint64_t{o.maxInlineSize} + 1,
                 o.maxInlineSize);
        }
        return false;
      }
      const auto at = static_cast<std::size_t>(nl - p);
      if (at + 1 > o.maxMessageBytes) {
        s.fail(in, RedisProtocolErrc::MessageTooLarge,
               "Protocol error: request exceeds the query buffer limit", base, at + 1,
               o.maxMessageBytes);
      }
      const std::size_t lineLen = at > 0 && p[at - 1] == '\r' ? at - 1 : at;
      s.tokens.clear();
      std::unique_ptr<char[]> owned;
      if (!splitArgs(p, lineLen, s.tokens, owned)) {
        s.fail(in, RedisProtocolErrc::UnbalancedQuotes,
               "Protocol error: unbalanced quotes in request", base);
      }
      if (s.tokens.empty()) {  // an empty line: no command
        s.startNext();
        in.skipBytes(at + 1);
        return true;
      }
      const bool viewsLine =
          std::any_of(s.tokens.begin(), s.tokens.end(), [](const Token& t) { return !t.owned; });
      // The command is emitted before the line is consumed and the state reset: an allocation
      // that fails leaves both as they were, and the line is decoded again.
      ByteBuf slice;
      if (viewsLine) slice = in.retainedSliceBatched(in.readerIndex(), at + 1);
      const char* line = viewsLine ? reinterpret_cast<const char*>(slice.readPtr()) : nullptr;
      std::vector<std::string_view> views;
      views.reserve(s.tokens.size());
      for (const Token& t : s.tokens) {
        views.emplace_back((t.owned ? owned.get() : line) + t.off, t.len);
      }
      out.push_back(RedisCommand::fromViews(std::move(slice), views, base, true, std::move(owned)));
      in.skipBytes(at + 1);
      s.startNext();
      return true;
    }

    case State::Phase::Count: {
      std::uint64_t count = 0;
      std::size_t cr = n > 1 ? detail::resp::fastLength(p + 1, n - 1, count) : 0;
      if (cr != 0 && cr + 1 <= o.maxInlineSize) {
        ++cr;  // index of the '\r' in the request
        if (count > o.maxMultibulkLength) {
          s.fail(in, RedisProtocolErrc::InvalidMultibulkLength,
                 "Protocol error: invalid multibulk length", base, count, o.maxMultibulkLength);
        }
      } else {
        cr = s.findLineCr(in, p, n, 0, o.maxInlineSize, RedisProtocolErrc::TooBigMultibulkCount,
                          "Protocol error: too big mbulk count string", base);
        if (cr == kNotYet) return false;
        std::int64_t ll = 0;
        if (!detail::resp::parseLongLong(p + 1, cr - 1, ll)) {
          s.fail(in, RedisProtocolErrc::InvalidMultibulkLength,
                 "Protocol error: invalid multibulk length", base);
        }
        if (ll > 0 && static_cast<std::uint64_t>(ll) > o.maxMultibulkLength) {
          s.fail(in, RedisProtocolErrc::InvalidMultibulkLength,
                 "Protocol error: invalid multibulk length", base, static_cast<std::uint64_t>(ll),
                 o.maxMultibulkLength);
        }
        count = ll > 0 ? static_cast<std::uint64_t>(ll) : 0;
      }
      // Redis skips the byte after '\r' without looking at it; so does this decoder.
      const std::size_t lineEnd = cr + 2;
      if (lineEnd > o.maxMessageBytes) {
        s.fail(in, RedisProtocolErrc::MessageTooLarge,
               "Protocol error: request exceeds the query buffer limit", base, lineEnd,
               o.maxMessageBytes);
      }
      if (count == 0) {  // *0, *-1, *-n: nothing to run
        s.startNext();
        in.skipBytes(lineEnd);
        return true;
      }
      s.phase = State::Phase::Args;
      s.remaining = count;
      s.pos = lineEnd;
      s.scanned = 0;
      s.bulkLen = -1;
      // At most what the bytes already here can hold (an argument takes 6 bytes or more):
      // a declared count reserves nothing the peer has not sent.
      if (count > s.args.capacity()) {
        s.args.reserve(
            static_cast<std::size_t>(std::min<std::uint64_t>(count, (n - lineEnd) / 6 + 1)));
      }
      break;
    }

    case State::Phase::Args:
      break;

    case State::Phase::Start:
      return false;  // not reached: Start was resolved above
  }

  // ---- arguments: "$<len>\r\n<payload>\r\n", resumable at s.pos
  // s.pos, s.remaining and s.bulkLen are saved only when the request is incomplete: should an
  // allocation fail first (args' growth, the command's), the arguments this call appended are
  // dropped again, so that the next call parses them anew from s.pos.
  struct ArgsRollback {
    std::vector<ArgRef>& args;
    std::size_t size;
    bool keep = false;
    ~ArgsRollback() {
      if (!keep && args.size() > size) args.resize(size);
    }
  } rollback{s.args, s.args.size()};
  std::size_t at = s.pos;
  std::int64_t pending = s.bulkLen;  // the payload length read, or -1
  std::uint64_t left = s.remaining;
  while (left > 0) {
    if (pending < 0) {
      if (at >= n) break;
      const char* line = p + at;
      std::uint64_t len = 0;
      std::size_t cr = line[0] == '$' ? detail::resp::fastLength(line + 1, n - at - 1, len) : 0;
      // The fast path takes a short, well-formed line; anything else (including a line over
      // maxInlineSize, which must fail the same way however it is split) takes the slow one.
      if (cr != 0 && cr + 1 <= o.maxInlineSize) {
        ++cr;
        if (len > o.maxBulkLength) {
          s.fail(in, RedisProtocolErrc::InvalidBulkLength, "Protocol error: invalid bulk length",
                 base + at, len, o.maxBulkLength);
        }
      } else {
        cr = s.findLineCr(in, p, n, at, o.maxInlineSize, RedisProtocolErrc::TooBigBulkCount,
                          "Protocol error: too big bulk count string", base);
        if (cr == kNotYet) {
          s.pos = at;
          s.remaining = left;
          s.bulkLen = pending;
          rollback.keep = true;
          return false;
        }
        if (line[0] != '$') {
          s.fail(in, RedisProtocolErrc::ExpectedDollar,
                 fmt::format("Protocol error: expected '$', got '{}'", line[0]), base + at);
        }
        std::int64_t ll = 0;
        if (!detail::resp::parseLongLong(line + 1, cr - 1, ll) || ll < 0) {
          s.fail(in, RedisProtocolErrc::InvalidBulkLength, "Protocol error: invalid bulk length",
                 base + at);
        }
        len = static_cast<std::uint64_t>(ll);
        if (len > o.maxBulkLength) {
          s.fail(in, RedisProtocolErrc::InvalidBulkLength, "Protocol error: invalid bulk length",
                 base + at, len, o.maxBulkLength);
        }
      }
      const std::size_t lineEnd = at + cr + 2;
      // len < 2^63 and lineEnd <= n: the sum cannot wrap.
      const std::uint64_t requestEnd = static_cast<std::uint64_t>(lineEnd) + len + 2;
      if (requestEnd > o.maxMessageBytes) {
        s.fail(in, RedisProtocolErrc::MessageTooLarge,
               "Protocol error: request exceeds the query buffer limit", base + at, requestEnd,
               o.maxMessageBytes);
      }
      s.scanned = 0;
      at = lineEnd;
      pending = static_cast<std::int64_t>(len);
    }
    // The payload and the two bytes after it (skipped unread, as Redis does).
    const auto need = static_cast<std::uint64_t>(pending) + 2;
    if (n - at < need) break;
    s.args.push_back(ArgRef{at, static_cast<std::size_t>(pending)});
    at += static_cast<std::size_t>(need);
    pending = -1;
    --left;
  }
  if (left > 0) {
    s.pos = at;
    s.remaining = left;
    s.bulkLen = pending;
    rollback.keep = true;
    return false;
  }

  // ---- complete: one retained slice of the request, the views made from it. The command is
  // emitted before the request is consumed and the state reset (see ArgsRollback above).
  ByteBuf slice = in.retainedSliceBatched(in.readerIndex(), at);
  const char* d = reinterpret_cast<const char*>(slice.readPtr());
  const std::size_t argc = s.args.size();
  if (argc <= RedisCommand::kInlineArgs) {
    // Uninitialised storage: zeroing eight views per command (a `rep stos`) cost a third of
    // this function. Only the first argc are constructed, and only they are read.
    union Views {
      Views() noexcept {}
      std::string_view v[RedisCommand::kInlineArgs];
    } views;
    for (std::size_t i = 0; i < argc; ++i) {
      new (&views.v[i]) std::string_view(d + s.args[i].off, s.args[i].len);
    }
    out.push_back(RedisCommand::fromViews(std::move(slice), {views.v, argc}, base, false));
  } else {
    std::vector<std::string_view> views;
    views.reserve(argc);
    for (const ArgRef& a : s.args) views.emplace_back(d + a.off, a.len);
    out.push_back(RedisCommand::fromViews(std::move(slice), views, base, false));
  }
  in.skipBytes(at);
  s.startNext();
  return true;
}

void RedisRequestDecoder::decode(ByteBuf& in, std::vector<RedisCommand>& out) {
  // Pipelined requests are decoded in one call (the framework's per-message loop costs more
  // than a small command's parsing), unless single decode asks for one at a time.
  State& s = *state_;
  while (s.step(in, out, streamOffset(in), options_) && !isSingleDecode() && in.isReadable()) {
  }
}

}  // namespace netbuf
