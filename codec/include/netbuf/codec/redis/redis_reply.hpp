#pragma once
// RedisReply: one decoded RESP value (a reply, a push message or any RESP3 value) as a tree of
// RespValue nodes, and the memory behind it.
//
//   RedisReplyDecoder decoder;               // see redis_reply_decoder.hpp
//   std::vector<RedisReply> out;
//   decoder.channelRead(std::move(bytes), out);
//   for (const RedisReply& r : out) use(r.root());
//
// Ownership: move-only. The nodes live in one block owned by the reply (a scalar reply needs
// none: its root is stored inline); bulk payloads view a retained slice of the decoder's
// cumulation (zero copy), which the reply keeps alive. Only a streamed string ($? with ;n chunks)
// is copied, into storage of the reply's own. Moving a reply keeps every RespValue and view valid.
// Not thread-safe; a finished reply may be moved to and read from another thread.

#include <cstddef>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/redis/resp_value.hpp>

namespace netbuf {

class RedisReply {
 public:
  /// A RESP3 null with no storage.
  RedisReply() noexcept = default;
  RedisReply(RedisReply&&) noexcept = default;
  RedisReply& operator=(RedisReply&&) noexcept = default;
  RedisReply(const RedisReply&) = delete;
  RedisReply& operator=(const RedisReply&) = delete;

  const RespValue& root() const noexcept { return root_; }
  /// Shorthands for root().
  RespType type() const noexcept { return root_.type(); }
  bool isError() const noexcept { return root_.isError(); }
  bool isPush() const noexcept { return root_.type() == RespType::Push; }

  /// A zero-copy ByteBuf of a string value of this reply (its payload, as asString() for a
  /// VerbatimString): a retained slice of the received bytes, or a copy for a streamed string.
  /// Throws std::invalid_argument when value's bytes are not held by this reply.
  ByteBuf retainedSlice(const RespValue& value) const;

  /// The stream offset of the reply's first byte.
  std::uint64_t offset() const noexcept { return offset_; }
  /// The number of bytes the reply took on the wire.
  std::size_t wireSize() const noexcept { return wireSize_; }

  // ---- used by the decoder to build a reply ----
  struct Parts {
    RespValue root;
    std::unique_ptr<RespValue[]> nodes;  // every non-root node
    ByteBuf input;                       // the slice of the input that bulk payloads view
    std::unique_ptr<char[]> owned;       // assembled streamed strings (a heap block: moving
                                         // the reply keeps views into it valid)
    std::size_t ownedSize = 0;           // bytes of owned
    std::uint64_t offset = 0;
    std::size_t wireSize = 0;
  };
  explicit RedisReply(Parts parts) noexcept
      : root_(parts.root),
        nodes_(std::move(parts.nodes)),
        input_(std::move(parts.input)),
        owned_(std::move(parts.owned)),
        ownedSize_(parts.ownedSize),
        offset_(parts.offset),
        wireSize_(parts.wireSize) {}

 private:
  RespValue root_;
  std::unique_ptr<RespValue[]> nodes_;
  ByteBuf input_;
  std::unique_ptr<char[]> owned_;
  std::size_t ownedSize_ = 0;
  std::uint64_t offset_ = 0;
  std::size_t wireSize_ = 0;
};

}  // namespace netbuf
