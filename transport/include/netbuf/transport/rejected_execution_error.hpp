#pragma once

#include <netbuf/buffer/error.hpp>

namespace netbuf {

/// A task handed to an executor that no longer runs tasks: an EventLoop that has shut down (or is
/// shutting down and past its quiet period).
class RejectedExecutionError : public Error {
 public:
  using Error::Error;
};

}  // namespace netbuf
