#pragma once
// StringEncoder: text to bytes (Netty's class of that name), usually the outbound twin of
// StringDecoder.
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
// Ownership and threading: the encoder keeps only an allocator pointer (the allocator must outlive
// it); one thread at a time.

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/message_to_byte_encoder.hpp>
#include <string>
#include <string_view>

namespace netbuf {

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
