#pragma once

#include <cstddef>
#include <netbuf/buffer/error.hpp>
#include <string>

namespace netbuf {

/// Ill-formed text in a strict decode or encode. offset() is the byte (or code unit) offset of the
/// first ill-formed unit, relative to the start of the input that was passed in.
class Utf8Error : public Error {
 public:
  Utf8Error(const std::string& what, std::size_t offset) : Error(what), offset_(offset) {}
  std::size_t offset() const noexcept { return offset_; }

 private:
  std::size_t offset_;
};

}  // namespace netbuf
