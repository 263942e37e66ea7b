#pragma once
// The codec error hierarchy. Every codec error is a netbuf::Error and says what went wrong, where
// in the stream (offset() counts bytes from the start of the decoder's input stream), the value
// involved (a frame length, a nesting depth) and the limit it broke:
//
//   netbuf::Error
//     CodecError                 offset(), value(), limit()
//       DecoderError             a decoder broke its contract or met input it cannot decode
//         TooLongFrameError      a frame longer than the configured maximum (it is skipped)
//         CorruptedFrameError    input that violates the framing (it is skipped)
//       EncoderError             a message that cannot be encoded (a length that does not fit)

#include <cstdint>
#include <netbuf/buffer/errors.hpp>
#include <string>

namespace netbuf {

class CodecError : public Error {
 public:
  /// offset()/value()/limit() when the quantity does not apply.
  static constexpr std::uint64_t kNone = UINT64_MAX;

  CodecError(const std::string& what, std::uint64_t offset, std::uint64_t value = kNone,
             std::uint64_t limit = kNone)
      : Error(what), offset_(offset), value_(value), limit_(limit) {}

  /// Stream offset of the first byte of the offending frame or byte (kNone for encoders).
  std::uint64_t offset() const noexcept { return offset_; }
  /// The offending quantity (frame length, depth, field value), or kNone.
  std::uint64_t value() const noexcept { return value_; }
  /// The limit that quantity broke, or kNone.
  std::uint64_t limit() const noexcept { return limit_; }

 private:
  std::uint64_t offset_;
  std::uint64_t value_;
  std::uint64_t limit_;
};

class DecoderError : public CodecError {
 public:
  using CodecError::CodecError;
};

class TooLongFrameError : public DecoderError {
 public:
  using DecoderError::DecoderError;
};

class CorruptedFrameError : public DecoderError {
 public:
  using DecoderError::DecoderError;
};

class EncoderError : public CodecError {
 public:
  using CodecError::CodecError;
};

}  // namespace netbuf
