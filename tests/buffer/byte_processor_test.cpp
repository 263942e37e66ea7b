#include <netbuf/buffer/byte_processor.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <string>

namespace {

/// For every byte value, whether the processor stops (returns false) on it.
template <class P>
std::string stopSet(const P& p) {
  std::string stops;
  for (int v = 0; v < 256; ++v) {
    if (!p(static_cast<std::byte>(v))) stops.push_back(static_cast<char>(v));
  }
  return stops;
}

std::string allBytesExcept(const std::string& excluded) {
  std::string out;
  for (int v = 0; v < 256; ++v) {
    if (excluded.find(static_cast<char>(v)) == std::string::npos)
      out.push_back(static_cast<char>(v));
  }
  return out;
}

}  // namespace

using namespace netbuf::processors;

TEST_CASE("byte finders stop exactly at their byte") {
  CHECK(stopSet(findNul) == std::string(1, '\0'));
  CHECK(stopSet(findCr) == "\r");
  CHECK(stopSet(findLf) == "\n");
  CHECK(stopSet(findSemicolon) == ";");
  CHECK(stopSet(findComma) == ",");
  CHECK(stopSet(findAsciiSpace) == " ");
  CHECK(stopSet(FindByte{std::byte{0xFF}}) == "\xFF");
  CHECK(stopSet(FindByte{std::byte{0x80}}) == "\x80");
}

TEST_CASE("non-byte finders stop at everything but their byte") {
  CHECK(stopSet(findNonNul) == allBytesExcept(std::string(1, '\0')));
  CHECK(stopSet(findNonCr) == allBytesExcept("\r"));
  CHECK(stopSet(findNonLf) == allBytesExcept("\n"));
  CHECK(stopSet(FindNonByte{std::byte{'a'}}) == allBytesExcept("a"));
}

TEST_CASE("CRLF finders") {
  CHECK(stopSet(findCrlf) == "\n\r");  // ascending byte order: LF (0x0A) before CR (0x0D)
  CHECK(stopSet(findNonCrlf) == allBytesExcept("\r\n"));
}

TEST_CASE("linear whitespace finders: space and tab only") {
  CHECK(stopSet(findLinearWhitespace) == "\t ");
  CHECK(stopSet(findNonLinearWhitespace) == allBytesExcept(" \t"));
  // CR/LF/VT/FF are not linear whitespace.
  CHECK(findLinearWhitespace(std::byte{'\n'}));
  CHECK(findLinearWhitespace(std::byte{'\r'}));
  CHECK_FALSE(findNonLinearWhitespace(std::byte{'\n'}));
}

TEST_CASE("whitespace finder: space, \\t, \\n, \\v, \\f, \\r") {
  CHECK(stopSet(findWhitespace) == "\t\n\v\f\r ");
  // Neighbours of the range are not whitespace.
  CHECK(findWhitespace(std::byte{0x08}));
  CHECK(findWhitespace(std::byte{0x0E}));
  CHECK(findWhitespace(std::byte{0x1F}));
  CHECK(findWhitespace(std::byte{0x21}));
  CHECK(findWhitespace(std::byte{0xA0}));  // NBSP in Latin-1 is not ASCII whitespace
}

TEST_CASE("processors are constexpr function objects") {
  static_assert(!findNul(std::byte{0}));
  static_assert(findNul(std::byte{1}));
  static_assert(!findNonNul(std::byte{1}));
  static_assert(!findCrlf(std::byte{'\r'}));
  static_assert(!findWhitespace(std::byte{'\v'}));
  static_assert(findNonCrlf(std::byte{'\n'}));
  static_assert(!findNonCrlf(std::byte{'x'}));

  // Usable as a plain scan predicate.
  const std::array<std::byte, 6> bytes{std::byte{'a'}, std::byte{'b'},  std::byte{';'},
                                       std::byte{'c'}, std::byte{'\r'}, std::byte{'\n'}};
  std::size_t stop = bytes.size();
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (!findSemicolon(bytes[i])) {
      stop = i;
      break;
    }
  }
  CHECK(stop == 2);
}
