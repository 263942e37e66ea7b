#pragma once
// RedisReplyDecoder: bytes a server sends to RedisReplies (one per top-level value: a reply or a
// RESP3 push message), RESP2 and RESP3 alike (a RESP2 reply is a RESP3 value of the first five
// types). Every type of the RESP3 specification, including streamed strings ($? then ;n chunks
// ending with ;0), streamed aggregates (*? ~? %? then values ending with '.') and attributes
// (|n pairs, attached to the value that follows).
//
// Zero copy: bulk payloads view a retained slice of the cumulation (the reply keeps it alive);
// only streamed strings are assembled into storage of the reply's own. Each reply is one tree
// whose nodes are allocated once the reply is complete, one node per value that has arrived, so
// a declared length or count allocates nothing by itself. The memory is bounded by the bytes
// received, not equal to them: a node is sizeof(RespValue) bytes (32 on 64-bit targets) and a
// value can take as few as 3 ("_\r\n", "+\r\n"), so a reply's nodes can take about 11 times its
// size, up to about 11 * maxMessageBytes for the largest reply accepted; streamed strings add one
// copy of their bytes. The decoder scans incomplete input incrementally: a reply split over many
// reads is not rescanned from its start on each read (unless an allocation failed).
//
// Limits (RedisDecoderOptions): maxBulkLength, maxMultibulkLength, maxNestingDepth,
// maxMessageBytes, and maxInlineSize for any one line. Errors: RedisProtocolError, after which
// everything is discarded.

#include <cstdint>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/redis/redis_decoder_options.hpp>
#include <netbuf/codec/redis/redis_protocol_error.hpp>
#include <netbuf/codec/redis/redis_reply.hpp>
#include <vector>

namespace netbuf {

class RedisReplyDecoder : public ByteToMessageDecoder<RedisReplyDecoder, RedisReply> {
 public:
  explicit RedisReplyDecoder(const RedisDecoderOptions& options = {},
                             ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  const RedisDecoderOptions& options() const noexcept { return options_; }
  void setOptions(const RedisDecoderOptions& options) noexcept { options_ = options; }

  /// The framework hook: decodes at most one reply from in.
  void decode(ByteBuf& in, std::vector<RedisReply>& out);
  /// The cumulation must be Merge (replies are parsed as contiguous bytes): a composite one
  /// throws IllegalStateError.
  void decode(CompositeByteBuf& in, std::vector<RedisReply>& out);

  /// End of stream: a reply cut short is dropped (the framework counts its bytes in
  /// bytesDropped()) and the decoder is ready for a new stream.
  void decodeLast(ByteBuf& in, std::vector<RedisReply>& out);

  /// True after a RedisProtocolError: every later byte is discarded.
  bool isDiscarding() const noexcept;

  /// Decodes exactly one value from bytes (a whole reply, nothing after it); throws
  /// RedisProtocolError, including for incomplete input ("truncated", at the offset reached).
  static RedisReply decodeOne(ByteBuf bytes, const RedisDecoderOptions& options = {});

 private:
  RedisDecoderOptions options_;
  struct State;
  struct StateDeleter {
    void operator()(State*) const noexcept;
  };
  std::unique_ptr<State, StateDeleter> state_;
};

}  // namespace netbuf
