// FileRegion (file_region.hpp).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <netbuf/transport/file_region.hpp>
#include <system_error>

namespace netbuf {

struct FileRegion::Fd {
  explicit Fd(int f) noexcept : fd(f) {}
  ~Fd() { ::close(fd); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int fd;
};

FileRegion::FileRegion(int fd, std::uint64_t position, std::uint64_t count)
    : fd_(std::make_shared<Fd>(fd)), position_(position), count_(count) {}

int FileRegion::fd() const noexcept { return fd_ ? fd_->fd : -1; }

FileRegion FileRegion::open(const std::filesystem::path& path, std::uint64_t position,
                            std::uint64_t count) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::system_category(), "open " + path.string());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::system_category(), "fstat " + path.string());
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t start = std::min(position, size);
  return FileRegion(fd, start, std::min(count, size - start));
}

}  // namespace netbuf
