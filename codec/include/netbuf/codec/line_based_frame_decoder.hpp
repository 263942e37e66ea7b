#pragma once
// LineBasedFrameDecoder: splits the stream at line endings, "\n" or "\r\n" (Netty 4.1's class of
// the same name). A lone "\r" is an ordinary byte of the line.
//
//   +--------------+-------+          +-------+-----+         (stripDelimiter = true)
//   | ABC\r\nDE\nF | GH\n  |   ->     |  ABC  | DE  | FGH |
//   +--------------+-------+          +-------+-----+-----+
//
// Parameters:
//  - maxLength (> 0): the longest line accepted, counted WITHOUT its delimiter. A longer line is
//    discarded and reported as a TooLongFrameError (offset = stream offset of the line's first
//    byte, limit = maxLength); decoding resumes right after the line's delimiter.
//  - stripDelimiter: frames exclude the delimiter (true) or include it (false).
//  - failFast: when a too-long line is still arriving (no delimiter yet), report it at once, as
//    soon as more than maxLength bytes of it are buffered (value = the bytes seen so far);
//    no second error follows when its delimiter arrives. With failFast = false the error is raised
//    when the delimiter arrives, with value = the line's full length. A too-long line whose
//    delimiter is already buffered is skipped and reported with its full length in both modes.
//
// Frames are retained slices of the cumulation (zero copy). Memory is bounded: once a line is known
// to be too long its bytes are skipped as they arrive, so the cumulation holds at most
// maxLength + 1 bytes plus one read. The previous scan position is remembered, so a long line that
// arrives in small reads is scanned once in total (linear, not quadratic). The LF search is the
// buffers' vectorised indexOf.
//
// Deliberate differences from Netty, each keeping the output independent of how the input is split
// into reads (the same frames and errors however the bytes arrive):
//  - A "\r" at the end of the buffered bytes may be the first half of a "\r\n" split across reads:
//    it does not count towards the too-long check until the next byte is known (Netty would discard
//    a line of exactly maxLength bytes whose "\r" arrived before its "\n"), and in discarding mode
//    it is kept, not skipped, so a "\n" in the next read still ends the line as "\r\n".
//  - The byte before a "\n" counts as "\r" only when it is at or after readerIndex (Netty looks at
//    the already consumed byte too and can then skip one byte too many).
//
// End of stream: decodeLast is decode, so an unterminated last line is dropped (bytesDropped()
// counts it), as in Netty; a too-long line still being discarded at end of stream is not reported
// when failFast is false (its delimiter never came).

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <vector>

namespace netbuf {

class LineBasedFrameDecoder : public ByteToMessageDecoder<LineBasedFrameDecoder, AnyByteBuf> {
 public:
  /// Throws IllegalArgumentError when maxLength is 0.
  explicit LineBasedFrameDecoder(std::size_t maxLength, bool stripDelimiter = true,
                                 bool failFast = false, Cumulator cumulator = Cumulator::Merge,
                                 ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  std::size_t maxLength() const noexcept { return maxLength_; }
  bool isStripDelimiter() const noexcept { return stripDelimiter_; }
  bool isFailFast() const noexcept { return failFast_; }
  /// True while a too-long line is being skipped.
  bool isDiscarding() const noexcept { return discarding_; }

  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    const std::size_t r = in.readerIndex();
    const std::size_t w = in.writerIndex();
    const std::size_t readable = w - r;
    if (readable == 0) return;
    if (offset_ > readable) offset_ = 0;  // the cumulation was replaced behind our back
    const std::size_t lf = in.indexOf(r + offset_, w, kLf);
    if (lf == Buf::npos) {
      // No delimiter: remember how far we looked (a trailing "\r" holds no LF either).
      const bool trailingCr = in.getUnsignedByte(w - 1) == kCr;
      const std::size_t lineBytes = readable - (trailingCr ? 1 : 0);
      if (!discarding_) {
        offset_ = readable;
        if (lineBytes > maxLength_) {
          // Too long: skip what we have (keeping a possible half "\r\n") and discard the rest of
          // the line as it arrives.
          discarding_ = true;
          discardedBytes_ = lineBytes;
          lineStart_ = streamOffset(r);
          in.skipBytes(lineBytes);
          offset_ = readable - lineBytes;
          if (failFast_) failTooLong(lineStart_, discardedBytes_, maxLength_, false);
        }
      } else if (lineBytes > 0) {
        discardedBytes_ += lineBytes;
        in.skipBytes(lineBytes);
        offset_ = readable - lineBytes;
      } else {
        offset_ = readable;
      }
      return;
    }
    offset_ = 0;
    const bool crlf = lf > r && in.getUnsignedByte(lf - 1) == kCr;
    const std::size_t length = lf - r - (crlf ? 1 : 0);
    const std::size_t delimLength = crlf ? 2 : 1;
    if (discarding_) {
      // The end of the line being discarded: resume right after its delimiter.
      const std::uint64_t total = discardedBytes_ + length;
      const std::uint64_t start = lineStart_;
      in.skipBytes(length + delimLength);
      discarding_ = false;
      discardedBytes_ = 0;
      if (!failFast_) failTooLong(start, total, maxLength_, true);
      return;
    }
    if (length > maxLength_) {
      const std::uint64_t start = streamOffset(r);
      in.skipBytes(length + delimLength);
      failTooLong(start, length, maxLength_, true);
    }
    if (stripDelimiter_) {
      emitFrame(in, length, out);
      in.skipBytes(delimLength);
    } else {
      emitFrame(in, length + delimLength, out);
    }
  }

 private:
  static constexpr std::byte kLf{'\n'};
  static constexpr std::uint8_t kCr = '\r';

  /// Throws TooLongFrameError for a line at stream offset `offset` of `length` bytes (`complete`:
  /// the full length is known, else it is the part seen so far).
  [[noreturn]] static void failTooLong(std::uint64_t offset, std::uint64_t length,
                                       std::size_t maxLength, bool complete);

  std::size_t maxLength_;
  bool stripDelimiter_;
  bool failFast_;
  bool discarding_ = false;
  // Bytes past readerIndex already searched without finding "\n" (Netty's `offset`); reset when
  // readerIndex moves. Invariant: offset_ <= readable bytes.
  std::size_t offset_ = 0;
  std::uint64_t discardedBytes_ = 0;  // bytes of the too-long line skipped so far
  std::uint64_t lineStart_ = 0;       // stream offset of the too-long line's first byte
};

}  // namespace netbuf
