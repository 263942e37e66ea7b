// Number conversion in the JSON parser (shared by both engines and JsonReader): the double read
// for a number token must be bit for bit what std::from_chars reads from the same text, including
// the cases the fast paths (exact small powers of ten, 128-bit powers of five) cannot settle and
// hand to from_chars. Seeded random inputs; the seed is printed on failure.
#include <netbuf/codec/json/json_parser.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <netbuf/codec/json/json_reader.hpp>
#include <random>
#include <string>

using namespace netbuf;

namespace {

/// The correctly rounded double for `text` (a JSON number within the double range): from_chars',
/// or strtod's where from_chars reports a subnormal result as out of range.
double reference(const std::string& text) {
  double d = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
  REQUIRE(r.ptr == text.data() + text.size());
  if (r.ec == std::errc::result_out_of_range) {
    d = std::strtod(text.c_str(), nullptr);
    REQUIRE(std::isfinite(d));
  } else {
    REQUIRE(r.ec == std::errc());
  }
  return d;
}

/// Parses `text` as a one-element array with each engine, and with the pull reader, and checks
/// every result against from_chars bit for bit.
void checkNumber(const std::string& text) {
  const double want = reference(text);
  const std::string doc = "[" + text + "]";
  for (const auto engine : {JsonParser::Engine::Indexed, JsonParser::Engine::ByteAtATime}) {
    JsonParser parser;
    parser.setEngine(engine);
    Document d;
    parser.parse(doc, d);
    const Value& v = d.root()[0];
    REQUIRE(v.type() == ValueType::Float64);
    if (std::bit_cast<std::uint64_t>(v.asDouble()) != std::bit_cast<std::uint64_t>(want)) {
      FAIL_CHECK(text << " read as " << v.asDouble() << ", from_chars gives " << want);
    }
  }
  JsonReader reader(doc);
  reader.readBeginArray();
  const double r = reader.readDouble();
  if (std::bit_cast<std::uint64_t>(r) != std::bit_cast<std::uint64_t>(want)) {
    FAIL_CHECK(text << " read by JsonReader as " << r << ", from_chars gives " << want);
  }
}

}  // namespace

TEST_CASE("numbers: shortest round-trip texts of random doubles read back bit for bit") {
  const std::uint64_t seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  char buf[64];
  for (int i = 0; i < 200000; ++i) {
    double d = std::bit_cast<double>(rng());
    if (!std::isfinite(d)) continue;
    if (i % 4 == 0)
      d = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 120) - 60);
    const auto r = std::to_chars(buf, buf + sizeof buf, d);
    const std::string text(buf, r.ptr);
    // Integers print without a fraction; make them floats so they are read as doubles.
    checkNumber(text.find_first_of(".e") == std::string::npos ? text + ".0" : text);
  }
}

TEST_CASE("numbers: random significands of 1 to 19 digits at every decimal exponent") {
  const std::uint64_t seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200000; ++i) {
    const int digits = 1 + static_cast<int>(rng() % 19);
    std::string sig;
    for (int k = 0; k < digits; ++k) sig += static_cast<char>('0' + rng() % 10);
    if (sig[0] == '0') sig[0] = '1';
    // Exponents from below the subnormals to above the double range, minus the overflowing ones
    // (those are errors, tested elsewhere): keep the value under 1e308.
    int e = static_cast<int>(rng() % 680) - 360;
    if (e + digits > 308) e = 308 - digits;
    std::string text;
    if (i % 3 == 0 && digits > 1) {
      // A decimal point inside the significand.
      const auto at = static_cast<std::size_t>(1 + rng() % static_cast<std::uint64_t>(digits - 1));
      text = sig.substr(0, at) + "." + sig.substr(at) + "e" + std::to_string(e);
    } else {
      text = sig + "e" + std::to_string(e);
    }
    if (rng() % 2 == 0) text = "-" + text;
    checkNumber(text);
  }
}

TEST_CASE("numbers: exponents too long to keep exactly still give the right verdict") {
  // An exponent of nine or more digits is not kept exactly: such a number takes the slow path,
  // which reports a huge value as out of range however many leading zeros the fraction has.
  JsonParseOptions o;
  o.maxNumberLength = SIZE_MAX;
  const std::string zeros(999999, '0');
  for (const auto engine : {JsonParser::Engine::Indexed, JsonParser::Engine::ByteAtATime}) {
    JsonParser parser(o);
    parser.setEngine(engine);
    Document d;
    CHECK_THROWS_AS(parser.parse("[0." + zeros + "1e10000000]", d), JsonError);
    CHECK_THROWS_AS(parser.parse("[1e123456789012345678901234567890]", d), JsonError);
    parser.parse("[1e-123456789012345678901234567890, -2E-0000000000000000000000000000001]", d);
    CHECK(std::bit_cast<std::uint64_t>(d.root()[0].asDouble()) == 0);
    CHECK(d.root()[1].asDouble() == -0.2);
    CHECK_THROWS_AS(parser.parse("[0." + zeros + "1e1000000000000]", d), JsonError);
    parser.parse("[0." + zeros + "1e1000005]", d);  // 10^-1000000 x 10^1000005
    CHECK(d.root()[0].asDouble() == 1e5);
  }
}

TEST_CASE("numbers: exact ties round to even, near-ties round to nearest") {
  const std::uint64_t seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    // Halfway between two doubles of magnitude 2^k (k = 53..63): an odd multiple of half an ulp,
    // an integer of up to 19 digits; and the same value written with a fraction and an exponent.
    const int k = 53 + static_cast<int>(rng() % 11);
    const std::uint64_t halfUlp = std::uint64_t{1} << (k - 53);
    const std::uint64_t base =
        (std::uint64_t{1} << k) + (rng() % (std::uint64_t{1} << 52)) * 2 * halfUlp;
    for (const std::uint64_t v : {base + halfUlp, base + halfUlp - 1, base + halfUlp + 1}) {
      const std::string digits = std::to_string(v);
      checkNumber(digits + ".0");
      checkNumber(digits + "0e-1");
      checkNumber(digits.substr(0, 1) + "." + digits.substr(1) + "e" +
                  std::to_string(digits.size() - 1));
    }
    // Halfway in [2^52, 2^53), where an ulp is 1: j + 0.5.
    const std::uint64_t j = (std::uint64_t{1} << 52) + rng() % (std::uint64_t{1} << 52);
    checkNumber(std::to_string(j) + ".5");
    checkNumber(std::to_string(j) + ".50000");
    checkNumber(std::to_string(j) + ".4999");
  }
  // Fixed edges: the smallest normal, the largest finite, subnormals, and powers of ten.
  for (const char* text :
       {"2.2250738585072014e-308", "2.2250738585072011e-308", "1.7976931348623157e308",
        "4.9406564584124654e-324", "5e-324", "1e-320", "9007199254740993.0", "9007199254740995.0",
        "1e22", "1e23", "8.98846567431158e307", "0.1", "0.30000000000000004", "123456789e-5",
        "9999999999999999999.0", "1.0000000000000002", "7.3177701707893310e+15"}) {
    CAPTURE(text);
    checkNumber(text);
  }
  for (int e = -340; e <= 308; ++e) checkNumber("1e" + std::to_string(e));
  // An integer part of 0 and leading zeros in the fraction (not significant digits).
  for (const char* text : {"0.000000000000000000000000000001234567890123456789",
                           "0.0000000000000000000012345678901234567891", "-0.000123",
                           "0.1000000000000000055511151231257827", "0.00000000000000000000",
                           "-0.0e10", "0e-400", "0.0000000000000000000000000000000000001e-290"}) {
    CAPTURE(text);
    checkNumber(text);
  }
  // Integers past 2^64 (read as doubles: bigIntegersAsDouble), including ones whose digits
  // accumulated modulo 2^64 give 0 or a small number.
  for (const char* text : {"18446744073709551616", "36893488147419103232", "-9223372036854775809",
                           "18446744073709551617", "100000000000000000000000",
                           "-123456789012345678901234567890", "99999999999999999999"}) {
    CAPTURE(text);
    checkNumber(text);
  }
}
