#include <netbuf/transport/chunked_file.hpp>

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

using namespace netbuf;

namespace {

/// A temporary file holding `content`, removed at the end of the scope.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/netbuf_chunked_file_XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
    ::close(fd);
    path = name;
  }
  ~TempFile() { ::unlink(path.c_str()); }
};

std::string readAll(ChunkedFile& f, std::vector<std::size_t>* sizes = nullptr) {
  std::string out;
  auto& alloc = ByteBufAllocator::defaultAllocator();
  while (!f.isEndOfInput()) {
    ByteBuf b = f.readChunk(alloc);
    if (sizes != nullptr) sizes->push_back(b.readableBytes());
    out += b.readableStringView();
  }
  return out;
}

}  // namespace

TEST_CASE("ChunkedFile: the whole file in chunks of the chunk size, the last one shorter") {
  const TempFile file("0123456789abcdefghij");  // 20 bytes
  ChunkedFile f(file.path, 8);
  CHECK(f.length() == 20);
  CHECK(f.startOffset() == 0);
  CHECK(f.endOffset() == 20);
  CHECK(f.chunkSize() == 8);
  CHECK(f.name() == file.path);
  std::vector<std::size_t> sizes;
  CHECK(readAll(f, &sizes) == "0123456789abcdefghij");
  CHECK(sizes == std::vector<std::size_t>{8, 8, 4});
  CHECK(f.progress() == 20);
  CHECK(f.currentOffset() == 20);
  CHECK_FALSE(f.readChunk(ByteBufAllocator::defaultAllocator()).isValid());  // at the end
  f.close();
  f.close();  // idempotent
}

TEST_CASE("ChunkedFile: a range; the default chunk size; an empty range") {
  const TempFile file("0123456789abcdefghij");
  ChunkedFile range(file.path, 5, 10, 4);
  CHECK(range.length() == 10);
  CHECK(readAll(range) == "56789abcde");
  CHECK(range.progress() == 10);
  ChunkedFile whole(file.path);
  CHECK(whole.chunkSize() == ChunkedFile::kDefaultChunkSize);
  CHECK(readAll(whole) == "0123456789abcdefghij");
  ChunkedFile empty(file.path, 3, 0);
  CHECK(empty.isEndOfInput());
  CHECK(empty.length() == 0);
}

TEST_CASE("ChunkedFile: an adopted descriptor; close() ends the input") {
  const TempFile file("hello world");
  const int fd = ::open(file.path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ChunkedFile f(fd, 6, 5, 3);
  CHECK(f.name() == "fd " + std::to_string(fd));
  CHECK(f.readChunk(ByteBufAllocator::defaultAllocator()).readableStringView() == "wor");
  f.close();
  CHECK(f.isEndOfInput());
  CHECK(::fcntl(fd, F_GETFD) == -1);  // closed by the ChunkedFile
  CHECK(errno == EBADF);
}

TEST_CASE("ChunkedFile: errors name the file, the offset and the cause") {
  SUBCASE("no such file") {
    try {
      ChunkedFile f("/nonexistent/netbuf/file");
      FAIL("no exception");
    } catch (const std::system_error& e) {
      CHECK(e.code() == std::errc::no_such_file_or_directory);
      CHECK(std::string(e.what()).find("/nonexistent/netbuf/file") != std::string::npos);
    }
  }
  SUBCASE("invalid arguments") {
    const TempFile file("x");
    CHECK_THROWS_AS(ChunkedFile(file.path, -1, 1), IllegalArgumentError);
    CHECK_THROWS_AS(ChunkedFile(file.path, 0, -1), IllegalArgumentError);
    CHECK_THROWS_AS(ChunkedFile(file.path, 0), IllegalArgumentError);  // chunk size 0
    CHECK_THROWS_AS(ChunkedFile(file.path, INT64_MAX, 1), IllegalArgumentError);
  }
  SUBCASE("the file ends before the range") {
    const TempFile file("short");
    ChunkedFile f(file.path, 0, 100, 4);
    auto& alloc = ByteBufAllocator::defaultAllocator();
    CHECK(f.readChunk(alloc).readableStringView() == "shor");
    try {
      f.readChunk(alloc);
      FAIL("no exception");
    } catch (const std::system_error& e) {
      CHECK(e.code() == std::errc::io_error);
      CHECK(std::string(e.what()).find("ends at offset 5, before the end of its range at 100") !=
            std::string::npos);
    }
  }
  SUBCASE("a read error (a directory)") {
    const int fd = ::open("/tmp", O_RDONLY | O_DIRECTORY);
    REQUIRE(fd >= 0);
    ChunkedFile f(fd, 0, 10);
    try {
      f.readChunk(ByteBufAllocator::defaultAllocator());
      FAIL("no exception");
    } catch (const std::system_error& e) {
      CHECK(e.code() == std::errc::is_a_directory);
      CHECK(std::string(e.what()).find("at offset 0") != std::string::npos);
    }
  }
}
