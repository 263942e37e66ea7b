#pragma once
// Errors of the MessagePack codec. Every decoding failure is a MessagePackError (a DecoderError, so
// the codec framework reports it like any other codec error) carrying a code, the byte offset where
// the offending item starts (relative to the start of the decoded input, or the stream offset when
// raised by MessagePackDecoder in a pipeline) and, for limit errors, the declared value and the
// limit. Messages read like
//   "MessagePackError(StrLengthLimit): str length 4294967295 exceeds maxStrLength 67108864 at
//    offset 17".
// Encoding failures (invalid UTF-8 handed to packStr, duplicate keys in canonical mode, ...) are
// EncoderErrors.
#include <cstdint>
#include <netbuf/codec/codec_errors.hpp>
#include <string>
#include <string_view>

namespace netbuf {

enum class MessagePackErrc : std::uint8_t {
  Truncated,             // the input ends inside a value (whole-buffer decode / pull reader)
  ReservedByte,          // 0xc1, "never used" in the spec
  InvalidUtf8,           // a str whose bytes are not UTF-8 (strict mode)
  InvalidTimestamp,      // ext -1 with a length other than 4/8/12, or nanoseconds > 999999999
  DuplicateKey,          // a map repeats a key (unless allowDuplicateKeys)
  DepthLimit,            // nesting deeper than maxDepth
  ContainerLengthLimit,  // array elements or map pairs above maxContainerLength
  StrLengthLimit,        // str bytes above maxStrLength
  BinLengthLimit,        // bin bytes above maxBinLength
  ExtLengthLimit,        // ext data bytes above maxExtLength
  MessageSizeLimit,      // one top-level value above maxMessageSize bytes
  TypeMismatch,          // pull reader: the next value has another type than asked
  IntegerOverflow,       // pull reader / typed API: the integer does not fit the target type
  TrailingBytes,         // whole-buffer decode: bytes after the single top-level value
};

std::string_view messagePackErrcName(MessagePackErrc code) noexcept;

class MessagePackError : public DecoderError {
 public:
  MessagePackError(MessagePackErrc code, const std::string& what, std::uint64_t offset,
                   std::uint64_t value = kNone, std::uint64_t limit = kNone)
      : DecoderError(what, offset, value, limit), code_(code) {}
  MessagePackErrc code() const noexcept { return code_; }

 private:
  MessagePackErrc code_;
};

namespace detail {
/// Builds "MessagePackError(<Code>): <detail> at offset <offset>" and throws.
[[noreturn]] void throwMessagePackError(MessagePackErrc code, std::string_view detail,
                                        std::uint64_t offset,
                                        std::uint64_t value = CodecError::kNone,
                                        std::uint64_t limit = CodecError::kNone);
}  // namespace detail

}  // namespace netbuf
