#pragma once

#include <netbuf/buffer/error.hpp>

namespace netbuf {

/// An operation on an empty ByteBuf handle: default-constructed or moved-from.
class EmptyBufferError : public Error {
 public:
  using Error::Error;
};

}  // namespace netbuf
