#pragma once
// FileRegion: a range of a file written to a socket without reading it into user space (Netty's
// DefaultFileRegion). A SocketChannel writes it with sendfile(2), in order with the buffers
// written before and after it; the bytes never pass through a ByteBuf.
//
//     ch.write(std::move(headBytes));                        // e.g. an HTTP response head
//     ch.writeAndFlush(FileRegion::open("big.iso"), token);  // then the file, zero copy
//
// Ownership: the region owns its file descriptor (shared by copies of the handle, closed when the
// last goes). position() and count() describe what is still to be written; the channel advances
// them as the socket takes bytes. A file that shrinks while being sent fails the write (the socket
// is closed: the peer was promised count bytes). Only socket channels write regions; other
// channels (EmbeddedChannel) pass them on as messages for tests to inspect.

#include <cstdint>
#include <filesystem>
#include <memory>

namespace netbuf {

class FileRegion {
 public:
  FileRegion() = default;
  /// Takes ownership of fd: the range [position, position + count).
  FileRegion(int fd, std::uint64_t position, std::uint64_t count);

  /// Opens path read-only: the whole file, or [position, position + count) of it (count clamped
  /// to the file's size). Throws std::system_error when the file cannot be opened or stat'ed.
  static FileRegion open(const std::filesystem::path& path, std::uint64_t position = 0,
                         std::uint64_t count = UINT64_MAX);

  bool isValid() const noexcept { return fd_ != nullptr; }
  int fd() const noexcept;
  /// The file offset of the next byte to write.
  std::uint64_t position() const noexcept { return position_; }
  /// Bytes still to write.
  std::uint64_t count() const noexcept { return count_; }
  /// Bytes written so far.
  std::uint64_t transferred() const noexcept { return transferred_; }
  /// Marks n more bytes as written (n <= count()).
  void advance(std::uint64_t n) noexcept {
    position_ += n;
    count_ -= n;
    transferred_ += n;
  }

 private:
  struct Fd;
  std::shared_ptr<Fd> fd_;
  std::uint64_t position_ = 0;
  std::uint64_t count_ = 0;
  std::uint64_t transferred_ = 0;
};

}  // namespace netbuf
