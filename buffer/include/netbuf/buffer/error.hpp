#pragma once
// Error: the base of netbuf's error hierarchy (errors.hpp includes every error type of buffer/).

#include <stdexcept>

namespace netbuf {

/// Base of every exception netbuf throws, so a handler can catch one type. Messages always name the
/// values involved (index, length, bounds, offset, limit): an error report is only useful if it
/// says *where*.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace netbuf
