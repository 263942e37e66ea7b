#pragma once
// ChunkedInput: a source of bytes that ChunkedWriteHandler writes chunk by chunk (Netty's
// io.netty.handler.stream.ChunkedInput<ByteBuf>), so that a large body (a file, a generated
// stream) goes out as fast as the peer takes it instead of being queued whole.
//
//     channel.writeAndFlush(std::make_unique<ChunkedFile>("/var/www/big.iso"), &listener);
//
// netbuf provides ChunkedFile (chunked_file.hpp: a file or a range of it, read with pread) and
// ChunkedGenerator (chunked_generator.hpp: a function producing the next chunk). Your own inputs
// derive from ChunkedInput and are written as std::unique_ptr<ChunkedInput> (see
// chunked_write_handler.hpp for the message types the handler recognises).
//
// The contract, as Netty's:
//   - readChunk(alloc) returns the next chunk, a buffer from alloc (or any buffer the input owns).
//     A buffer with no readable bytes (an empty handle too) means "nothing available right now":
//     unless isEndOfInput() is true afterwards, the handler suspends the transfer until
//     ChunkedWriteHandler::resumeTransfer() or the next flush (Netty's null chunk).
//   - isEndOfInput() is true once readChunk() will return nothing more (it is asked after each
//     readChunk(), so an input that knows it just returned its last chunk should say so then: the
//     handler otherwise reads once more and writes an empty buffer to mark the end).
//   - length() is the total number of bytes, or -1 when unknown; progress() the number of bytes
//     returned so far. They are for the user (ChunkedWriteHandler does not use them).
//   - close() releases what the input holds (a file descriptor); the handler calls it once the
//     input has ended or failed, and the input's destructor must release too when close() was not
//     called. After close() the input is at its end.
//   - Errors: readChunk() and isEndOfInput() report failures by throwing (ChunkedFile throws
//     std::system_error); the handler fails the write with the exception's error code.
//
// Threading: an input is used on the channel's loop only, once it has been written.

#include <cstdint>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>

namespace netbuf {

class ChunkedInput {
 public:
  virtual ~ChunkedInput() = default;

  /// True when no chunk is left.
  virtual bool isEndOfInput() = 0;
  /// The next chunk; nothing readable: nothing available right now (see the header comment).
  virtual ByteBuf readChunk(ByteBufAllocator& alloc) = 0;
  /// Total bytes, or -1 when unknown.
  virtual std::int64_t length() const = 0;
  /// Bytes returned by readChunk() so far.
  virtual std::int64_t progress() const = 0;
  /// Releases the input's resources; idempotent.
  virtual void close() = 0;
};

}  // namespace netbuf
