#pragma once

#include <netbuf/buffer/error.hpp>

namespace netbuf {

/// An operation that cannot be done in the object's current state or from the calling thread (a
/// loop thread asking its own group to shut down, which would join itself; a pipeline changed off
/// its channel's loop).
class IllegalStateError : public Error {
 public:
  using Error::Error;
};

}  // namespace netbuf
