#pragma once
// RedisProtocolError: bad RESP input, with what was wrong (kind()), where (offset(), the stream
// offset of the offending byte or line) and, for a limit, the value and the limit.
//
// what() for a request error is the text redis-server 7.0 puts after "-ERR " before closing the
// connection, e.g. "Protocol error: invalid bulk length", so that a server answers
//   -ERR <what()>\r\n
// and closes, as Redis does. After a RedisProtocolError the decoders discard everything that
// follows (a RESP stream cannot be re-synchronised).

#include <cstdint>
#include <netbuf/codec/codec_errors.hpp>
#include <string>
#include <string_view>

namespace netbuf {

enum class RedisProtocolErrc : std::uint8_t {
  TooBigInlineRequest,     // "Protocol error: too big inline request"
  UnbalancedQuotes,        // "Protocol error: unbalanced quotes in request"
  TooBigMultibulkCount,    // "Protocol error: too big mbulk count string"
  InvalidMultibulkLength,  // "Protocol error: invalid multibulk length"
  TooBigBulkCount,         // "Protocol error: too big bulk count string"
  ExpectedDollar,          // "Protocol error: expected '$', got 'x'"
  InvalidBulkLength,       // "Protocol error: invalid bulk length"
  MessageTooLarge,   // "Protocol error: request exceeds the query buffer limit" (maxMessageBytes)
  InlineNotAllowed,  // "Protocol error: inline commands are disabled"
  // Replies only:
  UnknownType,         // a first byte that is no RESP type
  InvalidInteger,      // a :, length or count that is not a decimal integer in range
  InvalidDouble,       // a , that is not a RESP3 double
  InvalidBoolean,      // a # other than t or f
  InvalidBigNumber,    // a ( that is not an optional sign and digits
  InvalidVerbatim,     // a = payload without "fmt:" (3 bytes and a colon)
  MissingCrlf,         // a line or bulk payload not followed by \r\n
  NestingTooDeep,      // aggregates nested past maxNestingDepth
  InvalidStreamChunk,  // a streamed string's part that is not ;n, or a stray '.'
  InvalidAttribute,    // an attribute with no value after it
  Truncated,           // decodeOne(): the input ends inside the value, or bytes follow it
};

class RedisProtocolError : public DecoderError {
 public:
  RedisProtocolError(RedisProtocolErrc kind, const std::string& what, std::uint64_t offset,
                     std::uint64_t value = kNone, std::uint64_t limit = kNone)
      : DecoderError(what, offset, value, limit), kind_(kind) {}

  RedisProtocolErrc kind() const noexcept { return kind_; }
  /// Whether a limit of RedisDecoderOptions was exceeded.
  bool isTooLong() const noexcept {
    return kind_ == RedisProtocolErrc::TooBigInlineRequest ||
           kind_ == RedisProtocolErrc::TooBigMultibulkCount ||
           kind_ == RedisProtocolErrc::TooBigBulkCount ||
           kind_ == RedisProtocolErrc::MessageTooLarge ||
           kind_ == RedisProtocolErrc::NestingTooDeep || (value() != kNone && limit() != kNone);
  }

 private:
  RedisProtocolErrc kind_;
};

}  // namespace netbuf
