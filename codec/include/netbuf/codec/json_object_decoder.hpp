#pragma once
// JsonObjectDecoder: splits a byte stream of JSON objects and arrays into one frame per top-level
// value (Netty's class of the same name), or, with streamArrayElements, one frame per element of a
// top-level array.
//
//   {"a":1}  [1,{"b":"}"}]{"c":[]}    ->  | {"a":1} | [1,{"b":"}"}] | {"c":[]} |
//   [ 1 , "x" , {"k":[2]} ]  (stream)  ->  | 1 | "x" | {"k":[2]} |
//
// Framing only: a value is the bytes from its opening '{' or '[' to the byte where the count of
// open brackets returns to zero, outside strings ('"' ... '"' with backslash escapes). '{' and '['
// count alike, as in Netty, so "{]" is a frame. The JSON itself is NOT validated (a later handler
// parses it); only the bracket structure, string quoting and escapes are followed.
//
// Between top-level values, JSON whitespace (space, \t, \r, \n) is skipped. Any other byte where a
// value must start is junk: it is reported once as CorruptedFrameError (offset = that byte) and
// the junk is skipped up to the next '{' or '[', where decoding resumes. (Netty instead enters a
// permanent "corrupted" state that drops the rest of the stream.)
//
// streamArrayElements = true: a top-level array is not emitted whole; its elements are, each as
// soon as the ',' or ']' that ends it arrives, with surrounding whitespace trimmed and the
// brackets and commas dropped (Netty's behaviour). Elements may be any value: objects, arrays,
// strings, numbers, literals. Empty elements ("[]", "[1,]") emit nothing (Netty emits an empty
// buffer). A top-level object is emitted whole in this mode too.
//
// Limits (memory stays bounded by maxObjectLength whatever the input):
//  - maxObjectLength: the most bytes one value may span, counting from its first byte ('{' or '['
//    to the closing bracket; in stream mode an element's bytes from its first non-whitespace byte
//    up to, not including, the ',' or ']' that ends it, so trailing whitespace counts). When the
//    (maxObjectLength + 1)th byte of a value arrives, TooLongFrameError is thrown at once
//    (offset = the value's first byte, value = maxObjectLength + 1, limit = maxObjectLength).
//  - maxDepth: the most brackets open at once (the top-level value is depth 1; in stream mode the
//    enclosing array counts as depth 1, so its elements' brackets start at depth 2). The bracket
//    that would open level maxDepth + 1 throws CorruptedFrameError (offset = the value's first
//    byte, value = maxDepth + 1, limit = maxDepth).
//  After either error, the rest of the offending value is discarded as it streams in (brackets
//  and strings are still followed, nothing is buffered) and decoding resumes after its closing
//  bracket, or in stream mode at the next element. (Netty reports TooLongFrameException when its
//  buffer passes the limit and then misreads the value's tail as new input.)
//
// Work is incremental: the scanner state (open brackets, inside a string, after a backslash) and
// how many bytes past readerIndex were already scanned survive between reads, so a value arriving
// one byte at a time is scanned once (linear time). Frames are retained slices of the cumulation
// (zero copy). A value still incomplete at end of stream is dropped (no error, as in Netty).
//
// Ownership and threading: as every ByteToMessageDecoder (one channel, one thread).

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <vector>

namespace netbuf {

class JsonObjectDecoder : public ByteToMessageDecoder<JsonObjectDecoder, AnyByteBuf> {
 public:
  static constexpr std::size_t kDefaultMaxObjectLength = 1024 * 1024;
  static constexpr std::size_t kDefaultMaxDepth = 512;

  /// Throws IllegalArgumentError when maxObjectLength or maxDepth is 0.
  explicit JsonObjectDecoder(std::size_t maxObjectLength = kDefaultMaxObjectLength,
                             bool streamArrayElements = false,
                             std::size_t maxDepth = kDefaultMaxDepth,
                             Cumulator cumulator = Cumulator::Merge,
                             ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  std::size_t maxObjectLength() const noexcept { return maxObjectLength_; }
  bool isStreamArrayElements() const noexcept { return streamArrayElements_; }
  std::size_t maxDepth() const noexcept { return maxDepth_; }

  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    // Each state consumes what it has finished with and loops on to the next state; the call ends
    // after one frame, an error (thrown after consuming) or when the readable bytes are all
    // scanned. Every state except Value/Element consumes all it scans, so scanned_ is 0 there.
    for (;;) {
      const std::size_t readable = in.readableBytes();
      switch (state_) {
        case State::Init: {
          const std::size_t ws = skipWhitespace(in);
          if (ws == readable) return;
          const auto c = static_cast<unsigned char>(in.getUnsignedByte(in.readerIndex()));
          if (c == '{' || c == '[') {
            startValue(in, c);
          } else {
            skipJunk(in);  // consumes the junk before reporting it
          }
          break;
        }
        case State::Junk: {
          const std::size_t open = firstOpening(in);
          if (open == npos) {
            in.skipBytes(readable);
            return;
          }
          in.skipBytes(open - in.readerIndex());
          state_ = State::Init;
          break;
        }
        case State::Value:
        case State::Element: {
          const bool element = state_ == State::Element;
          if (element && scanned_ == 0) {
            // Leading whitespace of an element is consumed as it comes: the element (and its
            // length) starts at its first significant byte.
            if (skipWhitespace(in) == readable) return;
          }
          const std::size_t r = in.readerIndex();
          const Stop stop = scan(in, element, true);
          switch (stop) {
            case Stop::End:
              return;  // scanned_ == readableBytes: wait for more
            case Stop::Closed:
              emitFrame(in, scanned_, out);
              resetValue();
              return;
            case Stop::Separator: {
              const bool last = isClosing(in.getUnsignedByte(r + scanned_));
              std::size_t len = scanned_;
              while (len > 0 && isWhitespace(in.getUnsignedByte(r + len - 1))) --len;
              const bool emit = len > 0;
              if (emit) emitFrame(in, len, out);
              in.skipBytes(scanned_ - len + 1);  // trailing whitespace and the separator
              scanned_ = 0;
              if (last) resetValue();
              if (emit) return;
              break;
            }
            case Stop::TooLong:
            case Stop::TooDeep:
              startDiscarding(in, element, stop);  // throws
          }
          break;
        }
        case State::DiscardValue:
        case State::DiscardElement: {
          const bool element = state_ == State::DiscardElement;
          const Stop stop = scan(in, element, false);
          if (stop == Stop::End) {
            in.skipBytes(readable);
            scanned_ = 0;
            return;
          }
          if (stop == Stop::Closed) {
            in.skipBytes(scanned_);
            resetValue();
          } else {  // Separator: ',' continues the array, a closing bracket ends it
            const bool last = isClosing(in.getUnsignedByte(in.readerIndex() + scanned_));
            in.skipBytes(scanned_ + 1);
            scanned_ = 0;
            if (last) {
              resetValue();
            } else {
              state_ = State::Element;
            }
          }
          break;
        }
      }
    }
  }

  /// End of stream: an incomplete value is dropped (the framework releases its bytes); the scanner
  /// is reset so that the decoder could start a new stream.
  template <class Buf>
  void decodeLast(Buf&, std::vector<AnyByteBuf>&) {
    resetValue();
  }

 private:
  enum class State : std::uint8_t {
    Init,            // between top-level values: skip whitespace, expect '{' or '['
    Junk,            // after a reported junk byte: skip to the next '{' or '['
    Value,           // inside a top-level value (emitted whole)
    Element,         // inside a streamed top-level array, scanning one element
    DiscardValue,    // dropping the rest of a value that broke a limit
    DiscardElement,  // dropping the rest of a streamed element that broke a limit
  };
  enum class Stop : std::uint8_t { End, Closed, Separator, TooLong, TooDeep };

  static constexpr std::size_t npos = ByteBuf::npos;
  static constexpr std::byte kOpenBrace{'{'};
  static constexpr std::byte kOpenBracket{'['};

  static constexpr bool isWhitespace(std::uint8_t c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
  }
  static constexpr bool isClosing(std::uint8_t c) noexcept { return c == '}' || c == ']'; }

  /// Consumes the whitespace at readerIndex; returns how many bytes that was.
  template <class Buf>
  static std::size_t skipWhitespace(Buf& in) {
    const std::size_t r = in.readerIndex();
    const std::size_t hit = in.forEachByte(r, in.readableBytes(), [](std::byte b) {
      return isWhitespace(std::to_integer<std::uint8_t>(b));
    });
    const std::size_t n = hit == npos ? in.readableBytes() : hit - r;
    in.skipBytes(n);
    return n;
  }

  /// Index of the first '{' or '[' among the readable bytes, or npos.
  template <class Buf>
  static std::size_t firstOpening(const Buf& in) {
    return in.forEachByte(in.readerIndex(), in.readableBytes(),
                          [](std::byte b) { return b != kOpenBrace && b != kOpenBracket; });
  }

  template <class Buf>
  void startValue(Buf& in, unsigned char c) {
    resetScanner();
    if (c == '[' && streamArrayElements_) {
      in.skipBytes(1);  // the array's own bracket is not part of any element
      depth_ = 1;
      state_ = State::Element;
    } else {
      state_ = State::Value;  // the scan counts the opening bracket itself
    }
  }

  /// The byte at readerIndex cannot start a value: consume it and the junk after it (up to the
  /// next '{' or '['), remember to skip further junk, and report it.
  template <class Buf>
  void skipJunk(Buf& in) {
    const std::uint64_t offset = streamOffset(in);
    const std::uint8_t bad = in.getUnsignedByte(in.readerIndex());
    const std::size_t open = firstOpening(in);
    if (open == npos) {
      in.skipBytes(in.readableBytes());
      state_ = State::Junk;
    } else {
      in.skipBytes(open - in.readerIndex());
      state_ = State::Init;
    }
    throwJunk(offset, bad);
  }

  /// Scans the unscanned readable bytes of the current value or element (from scanned_), updating
  /// the scanner state, until the value closes (scanned_ then counts its closing bracket), an
  /// element separator (scanned_ = its position, not applied), a limit is hit (scanned_ = the
  /// offending byte, not applied), or the bytes run out (scanned_ = readableBytes()).
  template <class Buf>
  Stop scan(const Buf& in, bool element, bool limits) {
    const std::size_t maxLength = limits ? maxObjectLength_ : npos;
    const std::size_t maxDepth = limits ? maxDepth_ : npos;
    std::size_t p = scanned_;
    std::size_t depth = depth_;
    bool inString = inString_;
    bool escaped = escaped_;
    Stop stop = Stop::End;
    in.forEachByte(in.readerIndex() + p, in.readableBytes() - p, [&](std::byte b) {
      const auto c = std::to_integer<std::uint8_t>(b);
      // An element ends at a ',' or closing bracket of the array itself; that byte is not part
      // of the element, so it is tested before the length limit.
      if (element && !inString && depth == 1 && (c == ',' || isClosing(c))) {
        stop = Stop::Separator;
        return false;
      }
      if (p >= maxLength) {
        stop = Stop::TooLong;
        return false;
      }
      if (inString) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          inString = false;
        }
      } else if (c == '"') {
        inString = true;
      } else if (c == '{' || c == '[') {
        if (depth >= maxDepth) {
          stop = Stop::TooDeep;
          return false;
        }
        ++depth;
      } else if (isClosing(c)) {
        if (--depth == 0) {
          ++p;
          stop = Stop::Closed;
          return false;
        }
      }
      ++p;
      return true;
    });
    scanned_ = p;
    depth_ = depth;
    inString_ = inString;
    escaped_ = escaped;
    return stop;
  }

  /// A limit broke at byte scanned_ of the value starting at readerIndex: consume the bytes
  /// scanned so far (the scanner state is theirs), switch to discarding, report. Too long: the
  /// offending byte is left for the discarding scan (scanned_ >= maxObjectLength >= 1, so bytes
  /// were consumed). Too deep: the offending byte is an opening bracket outside any string; it is
  /// consumed and counted here, so that progress is made even when it was an element's first byte.
  template <class Buf>
  [[noreturn]] void startDiscarding(Buf& in, bool element, Stop why) {
    const std::uint64_t offset = streamOffset(in);
    if (why == Stop::TooDeep) {
      ++depth_;
      ++scanned_;
    }
    in.skipBytes(scanned_);
    scanned_ = 0;
    state_ = element ? State::DiscardElement : State::DiscardValue;
    if (why == Stop::TooLong) throwTooLong(offset, element);
    throwTooDeep(offset);
  }

  void resetScanner() noexcept {
    scanned_ = 0;
    depth_ = 0;
    inString_ = false;
    escaped_ = false;
  }
  void resetValue() noexcept {
    resetScanner();
    state_ = State::Init;
  }

  [[noreturn]] void throwJunk(std::uint64_t offset, std::uint8_t byte) const;
  [[noreturn]] void throwTooLong(std::uint64_t offset, bool element) const;
  [[noreturn]] void throwTooDeep(std::uint64_t offset) const;

  std::size_t maxObjectLength_;
  std::size_t maxDepth_;
  bool streamArrayElements_;

  // Scanner state. Invariant: scanned_ bytes after readerIndex belong to the current value or
  // element and have been applied to depth_/inString_/escaped_; no other state keeps bytes.
  State state_ = State::Init;
  bool inString_ = false;
  bool escaped_ = false;
  std::size_t depth_ = 0;
  std::size_t scanned_ = 0;
};

}  // namespace netbuf
