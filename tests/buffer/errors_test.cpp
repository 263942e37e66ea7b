#include <netbuf/buffer/errors.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace {

template <class E>
void checkCatchableAsBase(const std::string& message) {
  try {
    throw E(message);
  } catch (const netbuf::Error& e) {
    CHECK(std::string(e.what()) == message);
    CHECK(dynamic_cast<const E*>(&e) != nullptr);
    return;
  }
  FAIL("not caught as netbuf::Error");
}

}  // namespace

TEST_CASE("every netbuf error derives from netbuf::Error, which is a std::runtime_error") {
  static_assert(std::is_base_of_v<std::runtime_error, netbuf::Error>);
  static_assert(std::is_base_of_v<netbuf::Error, netbuf::IndexOutOfBoundsError>);
  static_assert(std::is_base_of_v<netbuf::Error, netbuf::ReadOnlyBufferError>);
  static_assert(std::is_base_of_v<netbuf::Error, netbuf::EmptyBufferError>);
  static_assert(std::is_base_of_v<netbuf::Error, netbuf::IllegalArgumentError>);
  static_assert(std::is_base_of_v<netbuf::Error, netbuf::Utf8Error>);
  // The leaf types are distinct: catching one must not catch another.
  static_assert(!std::is_base_of_v<netbuf::IndexOutOfBoundsError, netbuf::ReadOnlyBufferError>);
  static_assert(!std::is_base_of_v<netbuf::ReadOnlyBufferError, netbuf::EmptyBufferError>);
  static_assert(!std::is_base_of_v<netbuf::EmptyBufferError, netbuf::IndexOutOfBoundsError>);

  checkCatchableAsBase<netbuf::IndexOutOfBoundsError>("index 7 out of bounds");
  checkCatchableAsBase<netbuf::ReadOnlyBufferError>("read-only");
  checkCatchableAsBase<netbuf::EmptyBufferError>("empty");
  checkCatchableAsBase<netbuf::IllegalArgumentError>("bad argument");
  checkCatchableAsBase<netbuf::Error>("plain");
}

TEST_CASE("a specific error is not caught by a sibling handler") {
  bool caughtAsSibling = false;
  bool caughtAsSelf = false;
  try {
    try {
      throw netbuf::ReadOnlyBufferError("ro");
    } catch (const netbuf::IndexOutOfBoundsError&) {
      caughtAsSibling = true;
    }
  } catch (const netbuf::ReadOnlyBufferError& e) {
    caughtAsSelf = true;
    CHECK(std::string(e.what()) == "ro");
  }
  CHECK_FALSE(caughtAsSibling);
  CHECK(caughtAsSelf);
}

TEST_CASE("Utf8Error carries its offset and message") {
  const netbuf::Utf8Error e("ill-formed UTF-8 at offset 42", 42);
  CHECK(e.offset() == 42);
  CHECK(std::string(e.what()) == "ill-formed UTF-8 at offset 42");

  const netbuf::Utf8Error zero("at start", 0);
  CHECK(zero.offset() == 0);

  try {
    throw netbuf::Utf8Error("x", 17);
  } catch (const netbuf::Error& base) {
    const auto* utf = dynamic_cast<const netbuf::Utf8Error*>(&base);
    REQUIRE(utf != nullptr);
    CHECK(utf->offset() == 17);
  }
  // Copies keep the offset (exceptions are copied when rethrown by value).
  const netbuf::Utf8Error copy = e;
  CHECK(copy.offset() == 42);
  CHECK(std::string(copy.what()) == std::string(e.what()));
}
