#pragma once
// ChunkedGenerator: a ChunkedInput whose chunks come from a function, for bodies that are
// produced as they are sent (a database cursor, a computed stream, data arriving from elsewhere).
// Netty has no class of this name; it plays the role of a custom ChunkedInput (or ChunkedStream
// over a generating InputStream) without a class of your own.
//
//     std::size_t row = 0;
//     channel.writeAndFlush(std::make_unique<ChunkedGenerator>(
//         [&](ByteBufAllocator& alloc) -> std::optional<ByteBuf> {
//           if (row == rows.size()) return std::nullopt;         // the end
//           ByteBuf b = alloc.buffer(256);
//           b.writeBytes(format(rows[row++]));
//           return b;                                            // the next chunk
//         }));
//
// The function is called each time the handler wants a chunk (while the channel is writable) and
// returns:
//   - a buffer with readable bytes: the next chunk;
//   - a buffer with nothing readable (ByteBuf() too): nothing available right now. The handler
//     suspends the transfer; call ChunkedWriteHandler::resumeTransfer() (on the loop) when more
//     is available;
//   - std::nullopt: the end of the input. The function is not called again.
// With a known length (the constructor's second argument, -1: unknown), the input also ends once
// that many bytes have been produced, without another call (so no empty end-of-input write
// follows). A chunk that would go past the length is not cut: length() is only informative.
//
// Errors: whatever the function throws propagates from readChunk(): ChunkedWriteHandler fails the
// write with it (std::system_error's code, otherwise ChannelErrc::writeFailed).
//
// Ownership: the generator owns the function (and what it captures) until close() or its
// destruction, whichever comes first; close() destroys it, so captured resources go as soon as the
// input ends or fails.
//
// Threading: the function runs on the channel's loop, one call at a time.

#include <cstdint>
#include <functional>
#include <netbuf/transport/chunked_input.hpp>
#include <optional>

namespace netbuf {

class ChunkedGenerator final : public ChunkedInput {
 public:
  /// Produces the next chunk; nothing readable: nothing now; std::nullopt: the end.
  using Generate = std::function<std::optional<ByteBuf>(ByteBufAllocator&)>;

  /// length: the total the function will produce, or -1 when unknown.
  explicit ChunkedGenerator(Generate generate, std::int64_t length = -1);
  ~ChunkedGenerator() override = default;

  /// True once the function returned std::nullopt, length bytes were produced, or after close().
  bool isEndOfInput() override { return ended_; }
  /// Calls the function (unless ended: then an empty buffer).
  ByteBuf readChunk(ByteBufAllocator& alloc) override;
  std::int64_t length() const override { return length_; }
  std::int64_t progress() const override { return progress_; }
  /// Destroys the function; the input is at its end.
  void close() override;

 private:
  Generate generate_;
  std::int64_t length_;
  std::int64_t progress_ = 0;
  bool ended_ = false;
};

}  // namespace netbuf
