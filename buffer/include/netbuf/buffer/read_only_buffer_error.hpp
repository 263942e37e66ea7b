#pragma once

#include <netbuf/buffer/error.hpp>

namespace netbuf {

/// A write (set*, write*, capacity change, writable region) through a read-only buffer.
class ReadOnlyBufferError : public Error {
 public:
  using Error::Error;
};

}  // namespace netbuf
