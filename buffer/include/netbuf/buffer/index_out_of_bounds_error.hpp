#pragma once

#include <netbuf/buffer/error.hpp>

namespace netbuf {

/// An index or length outside a buffer's bounds, or index arithmetic that would overflow.
class IndexOutOfBoundsError : public Error {
 public:
  using Error::Error;
};

}  // namespace netbuf
