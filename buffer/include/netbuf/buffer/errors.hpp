#pragma once
// netbuf's error hierarchy. Every error netbuf throws derives from netbuf::Error, so a handler can
// catch one type. Messages always name the values involved (index, length, bounds, offset, limit):
// an error report is only useful if it says *where*.

#include <cstddef>
#include <stdexcept>
#include <string>

namespace netbuf {

/// Base of every exception netbuf throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An index or length outside a buffer's bounds, or index arithmetic that would overflow.
class IndexOutOfBoundsError : public Error {
 public:
  using Error::Error;
};

/// A write (set*, write*, capacity change, writable region) through a read-only buffer.
class ReadOnlyBufferError : public Error {
 public:
  using Error::Error;
};

/// An operation on an empty ByteBuf handle: default-constructed or moved-from.
class EmptyBufferError : public Error {
 public:
  using Error::Error;
};

/// An argument that is invalid independent of any buffer's bounds (a negative size, max < initial).
class IllegalArgumentError : public Error {
 public:
  using Error::Error;
};

/// An operation that cannot be done in the object's current state or from the calling thread (a
/// loop thread asking its own group to shut down, which would join itself; a pipeline changed off
/// its channel's loop).
class IllegalStateError : public Error {
 public:
  using Error::Error;
};

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
