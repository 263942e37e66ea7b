#pragma once
// Files for tests that hand real peers (curl, nginx, Python) something on disk: a fresh
// directory removed at the end of the scope, and whole-file reads and writes.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>

namespace netbuf::test {

/// A fresh directory under the temp directory ("<tag>-<pid>-<n>"), removed with its contents at
/// the end of the scope.
struct TempDir {
  explicit TempDir(std::string_view tag) {
    path = std::filesystem::temp_directory_path() /
           (std::string(tag) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path path;
  static inline int counter = 0;
};

inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void writeFile(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

}  // namespace netbuf::test
