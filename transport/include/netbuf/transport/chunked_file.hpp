#pragma once
// ChunkedFile: a ChunkedInput that reads a file, or a range of it, in chunks of a fixed size
// (Netty's io.netty.handler.stream.ChunkedFile).
//
//     channel.writeAndFlush(std::make_unique<ChunkedFile>("big.bin"), &listener);        // whole
//     channel.writeAndFlush(std::make_unique<ChunkedFile>("big.bin", 4096, 1 << 20));     // range
//
// Each readChunk() allocates a buffer of min(chunkSize, bytes left) from the allocator it is given
// and fills it with POSIX pread() at the current offset (retrying on EINTR and short reads), so the
// file's own offset is never used and reads block the loop only for one chunk (a regular file on a
// local disk: the page cache). Netty's ChunkedFile reads through a RandomAccessFile the same way.
// There is no sendfile/zero-copy path (Netty's ChunkedNioFile/DefaultFileRegion): the bytes pass
// through a buffer.
//
// The range is fixed when the object is made: offset + length bytes (the whole file by default,
// its size taken with fstat). A file that shrinks below the range makes readChunk() throw.
//
// Errors (all std::system_error unless said otherwise, with the path and the offset in what()):
//   - the constructor: the file cannot be opened or fstat'ed (its errno, e.g. ENOENT, EACCES);
//     IllegalArgumentError for a negative offset or length, a zero chunk size, or a range that
//     overflows;
//   - readChunk(): pread fails (its errno, e.g. EIO), or the file ends before the range does
//     (std::errc::io_error). ChunkedWriteHandler turns the exception into the failure of the write
//     (the listener gets the exception's code) and closes the file.
//
// Ownership: the object owns its file descriptor (opened O_RDONLY | O_CLOEXEC, or adopted by the fd
// constructor) and closes it in close() or its destructor.
//
// Threading: one thread at a time (the channel's loop, once written).

#include <cstddef>
#include <cstdint>
#include <netbuf/transport/chunked_input.hpp>
#include <string>

namespace netbuf {

class ChunkedFile final : public ChunkedInput {
 public:
  static constexpr std::size_t kDefaultChunkSize = 8192;

  /// The whole file at path.
  explicit ChunkedFile(const std::string& path, std::size_t chunkSize = kDefaultChunkSize);
  /// length bytes of the file at path, from offset.
  ChunkedFile(const std::string& path, std::int64_t offset, std::int64_t length,
              std::size_t chunkSize = kDefaultChunkSize);
  /// Adopts an open file descriptor (closed by close() and the destructor, also when this
  /// constructor throws); reads length bytes from offset.
  ChunkedFile(int fd, std::int64_t offset, std::int64_t length,
              std::size_t chunkSize = kDefaultChunkSize);
  ~ChunkedFile() override;
  ChunkedFile(const ChunkedFile&) = delete;
  ChunkedFile& operator=(const ChunkedFile&) = delete;

  std::int64_t startOffset() const noexcept { return start_; }
  std::int64_t endOffset() const noexcept { return end_; }
  /// The offset of the next chunk.
  std::int64_t currentOffset() const noexcept { return offset_; }
  std::size_t chunkSize() const noexcept { return chunkSize_; }
  /// What error messages call the file: its path, or "fd <n>".
  const std::string& name() const noexcept { return name_; }

  /// True once the range has been read, or after close().
  bool isEndOfInput() override { return offset_ >= end_ || fd_ < 0; }
  /// The next min(chunkSize, bytes left) bytes; an empty buffer at the end. Throws
  /// std::system_error (see the header comment).
  ByteBuf readChunk(ByteBufAllocator& alloc) override;
  std::int64_t length() const override { return end_ - start_; }
  std::int64_t progress() const override { return offset_ - start_; }
  /// Closes the file descriptor (idempotent).
  void close() override;

 private:
  void init(std::int64_t offset, std::int64_t length);

  int fd_ = -1;
  std::string name_;
  std::int64_t start_ = 0;
  std::int64_t end_ = 0;
  std::int64_t offset_ = 0;
  std::size_t chunkSize_;
};

}  // namespace netbuf
