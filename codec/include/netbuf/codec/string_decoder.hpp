#pragma once
// StringDecoder: frames to text (Netty's class of that name). Usually placed after a framing
// decoder (LineBasedFrameDecoder, JsonObjectDecoder...) and before the handler that wants strings.
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
// Ownership and threading: the decoder keeps no state; one thread at a time.

#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/message_to_message_decoder.hpp>
#include <string>
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

}  // namespace netbuf
