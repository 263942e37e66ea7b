#pragma once
// StringDecoder and StringEncoder: frames to text and text to bytes (Netty's classes of the same
// names). Usually placed after a framing decoder (LineBasedFrameDecoder, JsonObjectDecoder...) and
// before the handler that wants strings.
//
// StringDecoder decodes all of a frame's readable bytes as UTF-8 into a std::string. The frame may
// be a ByteBuf or a CompositeByteBuf (a character may straddle components: it is decoded whole).
//  - Utf8Policy::Replace (default): each maximal ill-formed subsequence becomes U+FFFD (the Unicode
//    "best practice", as the buffer module's readUtf8/getUtf8 do; e.g. "\xF0\x80\x80" gives three
//    U+FFFD, because F0 80 is not a prefix of any well-formed sequence). The result is always
//    well-formed UTF-8 and equals the input when that was well-formed. Never throws for text.
//  - Utf8Policy::Strict: ill-formed input throws CorruptedFrameError whose offset() is the byte
//    offset of the first ill-formed byte *within the frame* (a MessageToMessageDecoder sees frames,
//    not the stream), value() is that byte and limit() is kNone. A sequence truncated by the end of
//    the frame is ill-formed at its lead byte.
// Cost: well-formed input is validated (vectorised) and copied once into the string; a composite
// frame is first gathered into scratch memory (once).
//
// StringEncoder writes a std::string into one new buffer from its allocator, in its charset, with
// the buffer module's writers (writeCharSequence / writeUtf8) straight into the buffer: no
// temporary string. sizeHint() is the bound those writers reserve, so exactly one buffer is
// allocated per message and it never regrows:
//  - Utf8: std::string input is taken as UTF-8; well-formed input is copied as is (hint: its size),
//    ill-formed input is written with each maximal ill-formed subsequence replaced by U+FFFD (hint:
//    3 bytes per input byte, the replacing writer's bound). Ill-formed input is never an error.
//  - Ascii: one byte per character; characters above U+007F (and ill-formed subsequences) become
//    '?'. Latin1: the same with U+00FF as the limit. Utf16BE / Utf16LE: two bytes per UTF-16 unit
//    (surrogate pairs above U+FFFF), ill-formed input replaced by U+FFFD.
// encode(std::u16string_view) and encode(std::u32string_view) accept UTF-16 and UTF-32 text in the
// same charsets: an unpaired surrogate (UTF-16) or an invalid code point (UTF-32: a surrogate or a
// value above U+10FFFF) becomes '?' (Java's String.getBytes behaviour); UTF-16 output of UTF-16
// input copies the units as they are.
//
// Ownership and threading: the decoder keeps no state; the encoder only an allocator pointer (the
// allocator must outlive it). Both may be used by one thread at a time.

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/message_encoder.hpp>
#include <netbuf/codec/message_to_message_decoder.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf {

/// What StringDecoder does with ill-formed UTF-8.
enum class Utf8Policy : std::uint8_t {
  Strict,   ///< throw CorruptedFrameError at the first ill-formed byte
  Replace,  ///< replace each maximal ill-formed subsequence by U+FFFD
};

class StringDecoder : public MessageToMessageDecoder<StringDecoder, AnyByteBuf, std::string> {
 public:
  explicit StringDecoder(Utf8Policy policy = Utf8Policy::Replace) noexcept : policy_(policy) {}

  Utf8Policy policy() const noexcept { return policy_; }

  /// The framework hook: appends decode(frame) to out.
  void decode(AnyByteBuf frame, std::vector<std::string>& out) { out.push_back(decode(frame)); }

  /// Decodes frame's readable bytes (indices unchanged) by the policy; usable without a pipeline.
  /// Strict: throws CorruptedFrameError (see the header comment).
  std::string decode(const AnyByteBuf& frame) const;

 private:
  Utf8Policy policy_;
};

class StringEncoder : public MessageToByteEncoder<StringEncoder, std::string> {
 public:
  explicit StringEncoder(Charset charset = Charset::Utf8,
                         ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator()) noexcept
      : MessageToByteEncoder(alloc), charset_(charset) {}

  Charset charset() const noexcept { return charset_; }

  /// The framework hook: writes msg in the charset at out's writerIndex.
  void encode(const std::string& msg, ByteBuf& out) const;
  /// The capacity the writers reserve for msg (see the header comment): one allocation, no growth.
  std::size_t sizeHint(const std::string& msg) const noexcept;

  // A std::string is encoded into a new buffer by the inherited encodeToBuffer(msg) (one
  // allocation of sizeHint(msg) bytes), and into a pipeline by the inherited write(msg, out).

  /// Encodes UTF-16 text into one new buffer (exactly one allocation).
  ByteBuf encode(std::u16string_view text);
  /// Encodes UTF-32 code points into one new buffer (exactly one allocation).
  ByteBuf encode(std::u32string_view text);

 private:
  Charset charset_;
};

}  // namespace netbuf
