#pragma once
// RedisRequestDecoder: bytes a client sends to RedisCommands, as redis-server's processInputBuffer
// reads them: a request starting with '*' is a multibulk request (*<argc>\r\n then argc bulk
// strings $<len>\r\n<bytes>\r\n), anything else an inline request (one line, split on spaces and
// tabs with Redis's quoting rules: "..." with \n \r \t \b \a \\ \" \xHH escapes, '...' with \'
// only; a closing quote must be followed by a space or the end of the line). Empty lines and
// "*0" / "*-1" requests are skipped, as Redis does.
//
// Zero copy: a multibulk command's arguments view a retained slice of the cumulation. The
// cumulation is Merge (contiguous); bulk payloads are not copied again when a large one spans
// reads (the cumulation grows to hold it; memory is bounded by maxBulkLength / maxMessageBytes).
//
// Limits (RedisDecoderOptions): an inline request or a *n / $n line longer than maxInlineSize
// (before its newline arrives), a count over maxMultibulkLength, a bulk over maxBulkLength, a
// request over maxMessageBytes. A declared count allocates at most what the bytes already received
// can hold (each argument takes at least 4 bytes: "$0\r\n" is not enough, "$0\r\n\r\n" is 6), so a
// peer that announces *2147483647 gets nothing reserved.
//
// Errors: RedisProtocolError (see redis_protocol_error.hpp), after which everything is discarded.

#include <cstdint>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/redis/redis_command.hpp>
#include <netbuf/codec/redis/redis_decoder_options.hpp>
#include <netbuf/codec/redis/redis_protocol_error.hpp>
#include <vector>

namespace netbuf {

class RedisRequestDecoder : public ByteToMessageDecoder<RedisRequestDecoder, RedisCommand> {
 public:
  explicit RedisRequestDecoder(const RedisDecoderOptions& options = {},
                               ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  const RedisDecoderOptions& options() const noexcept { return options_; }
  void setOptions(const RedisDecoderOptions& options) noexcept { options_ = options; }

  /// The framework hook (see ByteToMessageDecoder): decodes every complete command in in (one
  /// per call with setSingleDecode(true)).
  void decode(ByteBuf& in, std::vector<RedisCommand>& out);
  /// The cumulation must be Merge (requests are parsed as contiguous bytes): a composite one
  /// throws IllegalStateError.
  void decode(CompositeByteBuf& in, std::vector<RedisCommand>& out);
  /// Bytes left at the end of the stream are an incomplete request: dropped without an error,
  /// as Redis drops a half-sent request of a client that disconnects.
  void decodeLast(ByteBuf& in, std::vector<RedisCommand>& out);

  /// True after a RedisProtocolError: every later byte is discarded.
  bool isDiscarding() const noexcept;

 private:
  // Implementation state (multibulk progress: argc, argument views parsed so far, offsets) is
  // private to redis_request_decoder.cpp.
  RedisDecoderOptions options_;
  struct State;
  struct StateDeleter {
    void operator()(State*) const noexcept;
  };
  std::unique_ptr<State, StateDeleter> state_;
};

}  // namespace netbuf
