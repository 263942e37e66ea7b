#pragma once
// PoolMisuseError and its three kinds (DoubleReleaseError, WrongAllocatorError, UseAfterFreeError):
// the errors a PooledByteBufAllocator throws when its memory is misused. Kept together: four
// trivial types of one family, thrown by one class.

#include <netbuf/buffer/error.hpp>

namespace netbuf {

/// Base of the errors that report a misuse of pooled memory.
class PoolMisuseError : public Error {
 public:
  using Error::Error;
};
/// A storage block released when it had already been returned to its pool.
class DoubleReleaseError : public PoolMisuseError {
 public:
  using PoolMisuseError::PoolMisuseError;
};
/// A storage block released into, or checked against, an allocator that did not make it.
class WrongAllocatorError : public PoolMisuseError {
 public:
  using PoolMisuseError::PoolMisuseError;
};
/// Access through a handle whose storage has already been returned to its pool.
class UseAfterFreeError : public PoolMisuseError {
 public:
  using PoolMisuseError::PoolMisuseError;
};

}  // namespace netbuf
