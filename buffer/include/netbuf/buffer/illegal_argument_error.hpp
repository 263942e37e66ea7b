#pragma once

#include <netbuf/buffer/error.hpp>

namespace netbuf {

/// An argument that is invalid independent of any buffer's bounds (a negative size, max < initial).
class IllegalArgumentError : public Error {
 public:
  using Error::Error;
};

}  // namespace netbuf
