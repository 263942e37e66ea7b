#pragma once
// DelimiterBasedFrameDecoder: splits the stream at one or more delimiters (Netty 4.1's class of the
// same name), and Delimiters, its two ready-made delimiter sets.
//
//   +--------------+          +-----+-----+         (delimiter "\0", stripDelimiter = true)
//   | ABC\0DEF\0GH |   ->     | ABC | DEF |   ("GH" waits for its delimiter)
//   +--------------+          +-----+-----+
//
// Parameters:
//  - maxFrameLength (> 0): the longest frame accepted, counted WITHOUT its delimiter.
//  - stripDelimiter: frames exclude the delimiter (true) or include it (false).
//  - failFast: see "too-long frames" below.
//  - delimiters: at least one, none empty; any bytes (NUL included). When several match, the one
//    that gives the SHORTEST frame wins (the occurrence that starts first in the stream); among
//    delimiters starting at the same byte, the one listed first wins. So with {"\r\n", "\n"},
//    "abc\r\n" gives "abc" (delimiter "\r\n"), and with {"ab", "b"}, "xab" gives "x".
//
// Too-long frames (TooLongFrameError: offset = stream offset of the frame's first byte, value =
// frame length, limit = maxFrameLength). Decoding always resumes right after the frame's delimiter.
//  - If the frame's delimiter is already buffered, frame and delimiter are skipped and the error is
//    raised (both modes), with the frame's full length.
//  - Otherwise, as soon as the buffered bytes prove the frame longer than maxFrameLength, they are
//    skipped and the decoder enters discarding mode, skipping input as it streams in until the
//    delimiter. failFast = true raises the error at once (value = the frame's bytes seen so far)
//    and not again at the delimiter; failFast = false raises it when the delimiter arrives (value =
//    the frame's full discarded length).
//
// Frames are retained slices of the cumulation (zero copy). Memory is bounded: the cumulation holds
// at most maxFrameLength + longest delimiter - 1 bytes plus one read. Each search resumes where the
// previous one stopped (less the longest delimiter - 1 bytes that a split delimiter may straddle),
// so a long frame arriving in small reads is scanned a bounded number of times per byte, not
// quadratically. Delimiters are found with the buffers' vectorised byte search (indexOf on their
// first byte), then compared.
//
// Deliberate differences from Netty, all so that the output does not depend on how the input is
// split into reads (the same frames and errors however the bytes arrive; the result is what Netty
// gives when the whole stream arrives in one read):
//  - A match is taken only once no delimiter that would win over it (starting earlier, or at the
//    same byte and listed first) can still complete with the next bytes. E.g. with {"b", "abcd"},
//    "xab" waits: "xabcd" must give "x" (Netty would give "xa" when "cd" came in a later read).
//  - Bytes that may be the start of a delimiter split across reads (a suffix of the buffered bytes
//    that is a proper prefix of some delimiter) are neither counted in the too-long check nor
//    skipped in discarding mode, so a delimiter split across reads is still found.
//  - With failFast = false the error's value is the whole discarded length, including the bytes
//    before the delimiter in the last read (Netty omits those).
//  - The line delimiters {"\r\n", "\n"} are handled by this general search, not by delegating to
//    LineBasedFrameDecoder as Netty does; the frames and errors are the same.
//
// End of stream: decodeLast takes the matches that were waiting for a possibly longer delimiter
// (which can no longer complete), as Netty would have; an unterminated last frame is dropped
// (bytesDropped() counts it), as in Netty. If decodeLast meets a too-long frame, the error ends the
// stream and what follows it is dropped.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <string>
#include <vector>

namespace netbuf {

/// Netty's Delimiters: common delimiter sets for DelimiterBasedFrameDecoder.
struct Delimiters {
  /// One NUL byte ("\0"), as used by Flash XML sockets.
  static std::vector<std::string> nulDelimiter();
  /// "\r\n" and "\n" (a text line).
  static std::vector<std::string> lineDelimiter();
};

class DelimiterBasedFrameDecoder
    : public ByteToMessageDecoder<DelimiterBasedFrameDecoder, AnyByteBuf> {
 public:
  /// Throws IllegalArgumentError when maxFrameLength is 0, delimiters is empty or holds an empty
  /// delimiter.
  DelimiterBasedFrameDecoder(std::size_t maxFrameLength, bool stripDelimiter, bool failFast,
                             std::vector<std::string> delimiters,
                             Cumulator cumulator = Cumulator::Merge,
                             ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());
  /// One delimiter; stripDelimiter = true, failFast = true (Netty's defaults).
  DelimiterBasedFrameDecoder(std::size_t maxFrameLength, std::string delimiter,
                             Cumulator cumulator = Cumulator::Merge,
                             ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());
  /// Several delimiters; stripDelimiter = true, failFast = true.
  DelimiterBasedFrameDecoder(std::size_t maxFrameLength, std::vector<std::string> delimiters,
                             Cumulator cumulator = Cumulator::Merge,
                             ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  std::size_t maxFrameLength() const noexcept { return maxFrameLength_; }
  bool isStripDelimiter() const noexcept { return stripDelimiter_; }
  bool isFailFast() const noexcept { return failFast_; }
  const std::vector<std::string>& delimiters() const noexcept { return delimiters_; }
  /// True while a too-long frame is being skipped.
  bool isDiscarding() const noexcept { return discarding_; }

  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    decodeOne(in, out, false);
  }

  /// End of stream: no more bytes can complete a delimiter, so the matches that waited for one are
  /// taken; every frame left is emitted.
  template <class Buf>
  void decodeLast(Buf& in, std::vector<AnyByteBuf>& out) {
    while (in.isReadable()) {
      const std::size_t before = in.readableBytes();
      decodeOne(in, out, true);
      if (in.readableBytes() == before) break;
    }
  }

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  enum class Found : std::uint8_t { None, Pending, Match };
  struct Search {
    Found found = Found::None;
    std::size_t pos = npos;  // Match/Pending: index of the winning delimiter's first byte
    std::size_t delim = 0;   // Match/Pending: index into delimiters_
    // None/Pending: the first index that may start a delimiter completed by later bytes (or the
    // writerIndex): the frame has at least partial - readerIndex bytes.
    std::size_t partial = 0;
  };

  /// True when in[p, p + d.size()) == d; the caller guarantees p + d.size() <= writerIndex.
  template <class Buf>
  static bool equalAt(const Buf& in, std::size_t p, const char* d, std::size_t n) {
    if (const std::byte* q = in.contiguous(p, n)) return std::memcmp(q, d, n) == 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (in.getUnsignedByte(p + k) != static_cast<unsigned char>(d[k])) return false;
    }
    return true;
  }

  /// True when in[p, w) is a proper prefix of d (d could still complete with later bytes).
  template <class Buf>
  static bool partialAt(const Buf& in, std::size_t p, std::size_t w, const std::string& d) {
    return w - p < d.size() && equalAt(in, p, d.data(), w - p);
  }

  /// Finds the winning delimiter occurrence at or after `from` in [readerIndex, writerIndex).
  /// Unless atEnd, a match that a delimiter still arriving could beat is reported as Pending.
  template <class Buf>
  Search find(const Buf& in, std::size_t from, bool atEnd) const {
    const std::size_t r = in.readerIndex();
    const std::size_t w = in.writerIndex();
    Search s;
    for (std::size_t i = 0; i < delimiters_.size(); ++i) {
      const std::string& d = delimiters_[i];
      if (w - from < d.size()) continue;
      // Candidate starts: p + d.size() <= w, and (for later delimiters) p < the best so far, as an
      // earlier-listed delimiter wins a tie.
      std::size_t end = w - d.size() + 1;
      if (s.pos != npos) end = std::min(end, s.pos);
      const auto first = static_cast<std::byte>(d[0]);
      for (std::size_t p = from; p < end;) {
        const std::size_t q = in.indexOf(p, end, first);
        if (q == Buf::npos) break;
        if (equalAt(in, q + 1, d.data() + 1, d.size() - 1)) {
          s.found = Found::Match;
          s.pos = q;
          s.delim = i;
          break;
        }
        p = q + 1;
      }
    }
    const std::size_t lowest = w - r >= maxDelimLength_ ? w - maxDelimLength_ + 1 : r;
    if (s.found == Found::Match) {
      if (atEnd) return s;
      // Could a delimiter starting before the match (or at it, listed first) still complete?
      for (std::size_t p = std::max(lowest, r); p <= s.pos && p < w; ++p) {
        for (std::size_t i = 0; i < delimiters_.size(); ++i) {
          if (p == s.pos && i >= s.delim) break;
          if (partialAt(in, p, w, delimiters_[i])) {
            s.found = Found::Pending;
            s.partial = p;
            return s;
          }
        }
      }
      return s;
    }
    s.partial = w;
    for (std::size_t p = std::max(lowest, r); p < w && s.partial == w; ++p) {
      for (const std::string& d : delimiters_) {
        if (partialAt(in, p, w, d)) {
          s.partial = p;
          break;
        }
      }
    }
    return s;
  }

  template <class Buf>
  void decodeOne(Buf& in, std::vector<AnyByteBuf>& out, bool atEnd) {
    const std::size_t r = in.readerIndex();
    const std::size_t readable = in.readableBytes();
    if (readable == 0) return;
    if (searched_ > readable) searched_ = 0;  // the cumulation was replaced behind our back
    // Starts before this are decided: every delimiter fit in the bytes then buffered.
    const std::size_t decided = readable >= maxDelimLength_ ? readable - maxDelimLength_ + 1 : 0;
    const Search s = find(in, r + searched_, atEnd);
    if (s.found != Found::Match) {
      // No delimiter yet (or only one that a longer delimiter may still beat): the frame has at
      // least s.partial - r bytes.
      const std::size_t frameBytes = s.partial - r;
      if (!discarding_) {
        searched_ =
            s.found == Found::None ? decided : std::max(searched_, std::min(s.pos - r, decided));
        if (frameBytes > maxFrameLength_) {
          discarding_ = true;
          tooLongFrameLength_ = frameBytes;
          frameStart_ = streamOffset(r);
          in.skipBytes(frameBytes);
          searched_ = 0;
          if (failFast_) failTooLong(frameStart_, frameBytes, false);
        }
      } else {
        tooLongFrameLength_ += frameBytes;
        in.skipBytes(frameBytes);
        searched_ = 0;
      }
      return;
    }
    searched_ = 0;
    const std::size_t frameLength = s.pos - r;
    const std::size_t delimLength = delimiters_[s.delim].size();
    if (discarding_) {
      // The end of the frame being discarded: resume right after its delimiter.
      const std::uint64_t total = tooLongFrameLength_ + frameLength;
      discarding_ = false;
      tooLongFrameLength_ = 0;
      in.skipBytes(frameLength + delimLength);
      if (!failFast_) failTooLong(frameStart_, total, true);
      return;
    }
    if (frameLength > maxFrameLength_) {
      const std::uint64_t start = streamOffset(r);
      in.skipBytes(frameLength + delimLength);
      failTooLong(start, frameLength, true);
    }
    if (stripDelimiter_) {
      emitFrame(in, frameLength, out);
      in.skipBytes(delimLength);
    } else {
      emitFrame(in, frameLength + delimLength, out);
    }
  }

  /// Throws TooLongFrameError for a frame at stream offset `offset` of `length` bytes (`complete`:
  /// the full length is known, else it is the part seen so far).
  [[noreturn]] void failTooLong(std::uint64_t offset, std::uint64_t length, bool complete) const;

  std::size_t maxFrameLength_;
  bool stripDelimiter_;
  bool failFast_;
  bool discarding_ = false;
  std::vector<std::string> delimiters_;
  std::size_t maxDelimLength_ = 0;
  // Bytes past readerIndex at which no delimiter can start (searched already); reset when
  // readerIndex moves. Invariant: searched_ <= readable bytes.
  std::size_t searched_ = 0;
  std::uint64_t tooLongFrameLength_ = 0;  // bytes of the too-long frame skipped so far
  std::uint64_t frameStart_ = 0;          // stream offset of the too-long frame's first byte
};

}  // namespace netbuf
