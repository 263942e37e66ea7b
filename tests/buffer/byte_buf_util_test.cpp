#include <netbuf/buffer/byte_buf_util.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace util = netbuf::byte_buf_util;

std::span<const std::byte> bytesOf(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

}  // namespace

TEST_CASE("hexDump: lower-case, two digits a byte, no separators") {
  CHECK(util::hexDump({}) == "");
  CHECK(util::hexDump(bytesOf(std::string_view("\x0a\xff", 2))) == "0aff");
  CHECK(util::hexDump(bytesOf(std::string_view("\x00\x01\x7f\x80\xAB", 5))) == "00017f80ab");
  std::string all;
  for (int v = 0; v < 256; ++v) all.push_back(static_cast<char>(v));
  const std::string dump = util::hexDump(bytesOf(all));
  REQUIRE(dump.size() == 512);
  CHECK(dump.substr(0, 8) == "00010203");
  CHECK(dump.substr(0x9E * 2, 6) == "9e9fa0");
  CHECK(dump.substr(508) == "feff");
}

TEST_CASE("prettyHexDump: Netty's table for 20 bytes (one full row, one partial)") {
  const std::string_view input("Hello, netbuf!\x00\x01\x7f\x80\xff\n", 20);
  const std::string expected =
      "         +-------------------------------------------------+\n"
      "         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n"
      "+--------+-------------------------------------------------+----------------+\n"
      "|00000000| 48 65 6c 6c 6f 2c 20 6e 65 74 62 75 66 21 00 01 |Hello, netbuf!..|\n"
      "|00000010| 7f 80 ff 0a                                     |....            |\n"
      "+--------+-------------------------------------------------+----------------+";
  CHECK(util::prettyHexDump(bytesOf(input)) == expected);
}

TEST_CASE("prettyHexDump: exact multiple of 16, offsets in hex, printable range 0x20..0x7e") {
  std::string input;
  for (int v = 0x18; v < 0x18 + 32; ++v) input.push_back(static_cast<char>(v));
  input[7] = '~';  // 0x7e is printable
  const std::string expected =
      "         +-------------------------------------------------+\n"
      "         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n"
      "+--------+-------------------------------------------------+----------------+\n"
      "|00000000| 18 19 1a 1b 1c 1d 1e 7e 20 21 22 23 24 25 26 27 |.......~ !\"#$%&'|\n"
      "|00000010| 28 29 2a 2b 2c 2d 2e 2f 30 31 32 33 34 35 36 37 |()*+,-./01234567|\n"
      "+--------+-------------------------------------------------+----------------+";
  CHECK(util::prettyHexDump(bytesOf(input)) == expected);

  // 17 rows: the 17th row's offset is 0x100.
  const std::string big(16 * 16 + 1, 'A');
  const std::string bigDump = util::prettyHexDump(bytesOf(big));
  CHECK(bigDump.find("\n|000000f0| 41") != std::string::npos);
  CHECK(bigDump.find(
            "\n|00000100| 41                                              |A               |\n") !=
        std::string::npos);
}

TEST_CASE("prettyHexDump of nothing is the header and the footer") {
  // Note: Netty returns "" for an empty range; netbuf prints the empty table.
  const std::string expected =
      "         +-------------------------------------------------+\n"
      "         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n"
      "+--------+-------------------------------------------------+----------------+\n"
      "+--------+-------------------------------------------------+----------------+";
  CHECK(util::prettyHexDump({}) == expected);
}

TEST_CASE("firstIndexOf / lastIndexOf") {
  const auto b = bytesOf("abcabc");
  CHECK(util::firstIndexOf(b, std::byte{'a'}) == 0);
  CHECK(util::firstIndexOf(b, std::byte{'c'}) == 2);
  CHECK(util::lastIndexOf(b, std::byte{'a'}) == 3);
  CHECK(util::lastIndexOf(b, std::byte{'c'}) == 5);
  CHECK(util::firstIndexOf(b, std::byte{'z'}) == util::npos);
  CHECK(util::lastIndexOf(b, std::byte{'z'}) == util::npos);
  CHECK(util::firstIndexOf({}, std::byte{0}) == util::npos);
  CHECK(util::lastIndexOf({}, std::byte{0}) == util::npos);
  const auto withHigh = bytesOf(std::string_view("\x00\xff\x00\xff", 4));
  CHECK(util::firstIndexOf(withHigh, std::byte{0xff}) == 1);
  CHECK(util::lastIndexOf(withHigh, std::byte{0x00}) == 2);
  CHECK(util::npos == static_cast<std::size_t>(-1));
}

TEST_CASE("compare: unsigned lexicographic, proper prefix is less, result normalised") {
  CHECK(util::compare({}, {}) == 0);
  CHECK(util::compare(bytesOf("abc"), bytesOf("abc")) == 0);
  CHECK(util::compare(bytesOf("abc"), bytesOf("abd")) == -1);
  CHECK(util::compare(bytesOf("abd"), bytesOf("abc")) == 1);
  CHECK(util::compare(bytesOf("ab"), bytesOf("abc")) == -1);
  CHECK(util::compare(bytesOf("abc"), bytesOf("ab")) == 1);
  CHECK(util::compare({}, bytesOf("a")) == -1);
  // 0x80 > 0x7f when compared unsigned (a signed char comparison would say the opposite).
  CHECK(util::compare(bytesOf("\x80"), bytesOf("\x7f")) == 1);
  CHECK(util::compare(bytesOf("\x01\xff"), bytesOf("\x02")) == -1);
  CHECK(util::compare(bytesOf("a\xff"), bytesOf("a\x01z")) == 1);
}

TEST_CASE("hash: equal bytes hash equally wherever they live; different bytes usually differ") {
  const std::string a = "the quick brown fox jumps";
  const std::string b = "xx" + a;  // same bytes at a different address and alignment
  CHECK(util::hash(bytesOf(a)) == util::hash(bytesOf(std::string_view(b).substr(2))));
  CHECK(util::hash({}) == util::hash(bytesOf("")));

  // Every prefix length 0..24 (covers the 8-byte loop and every tail size) hashes differently,
  // and a one-bit change in any position changes the hash.
  std::set<std::size_t> seen;
  for (std::size_t n = 0; n <= 24; ++n)
    seen.insert(util::hash(bytesOf(std::string_view(a).substr(0, n))));
  CHECK(seen.size() == 25);
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::string c = a;
    c[i] = static_cast<char>(c[i] ^ 1);
    CHECK(util::hash(bytesOf(c)) != util::hash(bytesOf(a)));
  }
  // Zero bytes of different lengths must not collide (the length is mixed in).
  const std::string zeros(16, '\0');
  CHECK(util::hash(bytesOf(std::string_view(zeros).substr(0, 1))) !=
        util::hash(bytesOf(std::string_view(zeros).substr(0, 2))));
  CHECK(util::hash(bytesOf(std::string_view(zeros).substr(0, 8))) !=
        util::hash(bytesOf(std::string_view(zeros).substr(0, 16))));

  // Rough distribution check: 2000 random 12-byte keys give 2000 distinct hashes.
  std::mt19937_64 rng(1234);
  std::set<std::size_t> hashes;
  std::set<std::string> keys;
  for (int i = 0; i < 2000; ++i) {
    std::string k(12, '\0');
    for (char& ch : k) ch = static_cast<char>(rng());
    keys.insert(k);
    hashes.insert(util::hash(bytesOf(k)));
  }
  CHECK(hashes.size() == keys.size());
}
