#pragma once
// RedisDecoderOptions: the limits of the request and reply decoders. Defaults are redis-server's
// (networking.c and config.c of Redis 7.0); each has a setter. Exceeding one is a
// RedisProtocolError naming the limit, the value and the stream offset.

#include <cstddef>
#include <cstdint>

namespace netbuf {

struct RedisDecoderOptions {
  /// proto-max-bulk-len: the longest bulk string ($n), 512 MB.
  static constexpr std::uint64_t kDefaultMaxBulkLength = 512ull * 1024 * 1024;
  /// PROTO_INLINE_MAX_SIZE: the longest inline request, and the longest *n / $n line, 64 KB.
  static constexpr std::size_t kDefaultMaxInlineSize = 64 * 1024;
  /// The most elements of one aggregate (*n, %n, ~n, >n, |n): Redis allows INT_MAX (2^31 - 1).
  static constexpr std::uint64_t kDefaultMaxMultibulkLength = 2147483647ull;
  /// The deepest nesting of aggregates in a reply (requests are flat): hiredis's reader allows 7
  /// levels; netbuf allows more since RESP3 replies nest maps in arrays in maps.
  static constexpr std::size_t kDefaultMaxNestingDepth = 128;
  /// client-query-buffer-limit: the most bytes one request or reply may take, 1 GB.
  static constexpr std::uint64_t kDefaultMaxMessageBytes = 1024ull * 1024 * 1024;

  std::uint64_t maxBulkLength = kDefaultMaxBulkLength;
  std::size_t maxInlineSize = kDefaultMaxInlineSize;
  std::uint64_t maxMultibulkLength = kDefaultMaxMultibulkLength;
  std::size_t maxNestingDepth = kDefaultMaxNestingDepth;
  std::uint64_t maxMessageBytes = kDefaultMaxMessageBytes;
  /// Whether the request decoder accepts inline commands (Redis does; Netty's decoder does not).
  bool allowInline = true;

  RedisDecoderOptions& setMaxBulkLength(std::uint64_t v) noexcept {
    maxBulkLength = v;
    return *this;
  }
  RedisDecoderOptions& setMaxInlineSize(std::size_t v) noexcept {
    maxInlineSize = v;
    return *this;
  }
  RedisDecoderOptions& setMaxMultibulkLength(std::uint64_t v) noexcept {
    maxMultibulkLength = v;
    return *this;
  }
  RedisDecoderOptions& setMaxNestingDepth(std::size_t v) noexcept {
    maxNestingDepth = v;
    return *this;
  }
  RedisDecoderOptions& setMaxMessageBytes(std::uint64_t v) noexcept {
    maxMessageBytes = v;
    return *this;
  }
  RedisDecoderOptions& setAllowInline(bool v) noexcept {
    allowInline = v;
    return *this;
  }
};

}  // namespace netbuf
