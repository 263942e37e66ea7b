#include <netbuf/codec/http/http_date.hpp>

#include <doctest/doctest.h>

#include <ctime>
#include <random>
#include <string>

using namespace netbuf;

TEST_CASE("HttpDate: format gives the IMF-fixdate") {
  CHECK(HttpDate::format(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT");  // RFC 9110's example
  CHECK(HttpDate::format(0) == "Thu, 01 Jan 1970 00:00:00 GMT");
  CHECK(HttpDate::format(951782400) == "Tue, 29 Feb 2000 00:00:00 GMT");
  CHECK(HttpDate::format(253402300799) == "Fri, 31 Dec 9999 23:59:59 GMT");
}

TEST_CASE("HttpDate: parse reads the IMF-fixdate") {
  CHECK(HttpDate::parse("Sun, 06 Nov 1994 08:49:37 GMT") == std::time_t{784111777});
  CHECK(HttpDate::parse("Thu, 01 Jan 1970 00:00:00 GMT") == std::time_t{0});
  CHECK(HttpDate::parse("Tue, 29 Feb 2000 00:00:00 GMT") == std::time_t{951782400});
}

TEST_CASE("HttpDate: format and parse round trip") {
  const unsigned seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    const std::time_t t = static_cast<std::time_t>(rng() % 253402300800ULL);
    CAPTURE(t);
    const std::string s = HttpDate::format(t);
    CHECK(s.size() == 29);
    CHECK(HttpDate::parse(s) == t);
  }
}

TEST_CASE("HttpDate: other forms are refused") {
  for (const char* s : {
           "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
           "Sun Nov  6 08:49:37 1994",        // asctime
           "Sun, 06 Nov 1994 08:49:37 UTC",   // not GMT
           "Sun, 06 Nov 1994 08:49:37 GMT ",  // trailing space
           " Sun, 06 Nov 1994 08:49:37 GMT",
           "Sun, 6 Nov 1994 08:49:37 GMT",   // one-digit day
           "sun, 06 Nov 1994 08:49:37 GMT",  // case matters
           "Sun, 06 nov 1994 08:49:37 GMT",  "Xyz, 06 Nov 1994 08:49:37 GMT",
           "Sun, 06 Foo 1994 08:49:37 GMT",  "Sun, 00 Nov 1994 08:49:37 GMT",
           "Sun, 32 Nov 1994 08:49:37 GMT",  "Sun, 06 Nov 1994 24:00:00 GMT",
           "Sun, 06 Nov 1994 08:60:00 GMT",  "Sun, 06 Nov 1994 08:49:61 GMT",
           "Sun, 06 Nov 19x4 08:49:37 GMT",  "Sun, 06 Nov 1994 08-49-37 GMT",
           "Sun; 06 Nov 1994 08:49:37 GMT",  "",
       }) {
    CAPTURE(s);
    CHECK_FALSE(HttpDate::parse(s).has_value());
  }
}

TEST_CASE("HttpDate: current is now, formatted, cached per second") {
  const std::time_t before = std::time(nullptr);
  const std::string now(HttpDate::current());
  const std::time_t after = std::time(nullptr);
  REQUIRE(now.size() == 29);
  const auto t = HttpDate::parse(now);
  REQUIRE(t.has_value());
  CHECK(*t >= before);
  CHECK(*t <= after);
  // Within the same second the same text comes back.
  const std::string_view a = HttpDate::current();
  const std::string_view b = HttpDate::current();
  if (std::time(nullptr) == *HttpDate::parse(a)) CHECK(a == b);
}
