#include <netbuf/transport/chunked_file.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <netbuf/buffer/errors.hpp>
#include <system_error>

namespace netbuf {

namespace {

[[noreturn]] void throwErrno(int err, const std::string& what) {
  throw std::system_error(err, std::system_category(), what);
}

std::int64_t fileSize(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throwErrno(errno, fmt::format("ChunkedFile: cannot stat '{}'", name));
  return static_cast<std::int64_t>(st.st_size);
}

int openFile(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throwErrno(errno, fmt::format("ChunkedFile: cannot open '{}'", path));
  return fd;
}

}  // namespace

ChunkedFile::ChunkedFile(const std::string& path, std::size_t chunkSize)
    : fd_(openFile(path)), name_(path), chunkSize_(chunkSize) {
  try {
    init(0, fileSize(fd_, name_));
  } catch (...) {
    close();
    throw;
  }
}

ChunkedFile::ChunkedFile(const std::string& path, std::int64_t offset, std::int64_t length,
                         std::size_t chunkSize)
    : name_(path), chunkSize_(chunkSize) {
  init(offset, length);  // the arguments first: nothing to close when they are wrong
  fd_ = openFile(path);
}

ChunkedFile::ChunkedFile(int fd, std::int64_t offset, std::int64_t length, std::size_t chunkSize)
    : fd_(fd), name_(fmt::format("fd {}", fd)), chunkSize_(chunkSize) {
  try {
    init(offset, length);
  } catch (...) {
    close();
    throw;
  }
}

ChunkedFile::~ChunkedFile() { close(); }

void ChunkedFile::init(std::int64_t offset, std::int64_t length) {
  if (offset < 0 || length < 0) {
    throw IllegalArgumentError(fmt::format(
        "ChunkedFile '{}': offset {} and length {} must not be negative", name_, offset, length));
  }
  if (chunkSize_ == 0) {
    throw IllegalArgumentError(fmt::format("ChunkedFile '{}': chunk size must be positive", name_));
  }
  if (length > std::numeric_limits<std::int64_t>::max() - offset) {
    throw IllegalArgumentError(
        fmt::format("ChunkedFile '{}': offset {} + length {} overflows", name_, offset, length));
  }
  start_ = offset_ = offset;
  end_ = offset + length;
}

ByteBuf ChunkedFile::readChunk(ByteBufAllocator& alloc) {
  if (isEndOfInput()) return ByteBuf();
  const auto left = static_cast<std::uint64_t>(end_ - offset_);
  const std::size_t n = left < chunkSize_ ? static_cast<std::size_t>(left) : chunkSize_;
  ByteBuf buf = alloc.buffer(n, n);
  auto* dst = static_cast<char*>(buf.writableBuffer().data());
  std::size_t done = 0;
  while (done < n) {
    const std::int64_t at = offset_ + static_cast<std::int64_t>(done);
    const ssize_t r = ::pread(fd_, dst + done, n - done, static_cast<off_t>(at));
    if (r < 0) {
      if (errno == EINTR) continue;
      throwErrno(errno, fmt::format("ChunkedFile: cannot read '{}' at offset {}", name_, at));
    }
    if (r == 0) {
      throw std::system_error(
          std::make_error_code(std::errc::io_error),
          fmt::format("ChunkedFile: '{}' ends at offset {}, before the end of its range at {}",
                      name_, at, end_));
    }
    done += static_cast<std::size_t>(r);
  }
  buf.commitWrite(n);
  offset_ += static_cast<std::int64_t>(n);
  return buf;
}

void ChunkedFile::close() {
  if (fd_ < 0) return;
  ::close(fd_);  // not retried on EINTR: Linux releases the descriptor either way
  fd_ = -1;
}

}  // namespace netbuf
