#include <netbuf/codec/http/http_headers.hpp>

#include <netbuf/buffer/illegal_argument_error.hpp>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/codec/http/http_request_decoder.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace netbuf;
using namespace std::string_literals;

namespace {

std::string encoded(const HttpHeaders& h) {
  std::string s(h.encodedSize(), '\0');
  char* end = h.encodeTo(s.data());
  CHECK(end == s.data() + s.size());  // exactly encodedSize() bytes
  return s;
}

}  // namespace

TEST_CASE("HttpHeaders: add keeps order and duplicates; get finds the first, ignoring case") {
  HttpHeaders h;
  CHECK(h.isEmpty());
  h.add("Content-Type", "text/plain").add("X-A", "1").add("x-a", "2").add("X-A", "3");
  CHECK(h.size() == 4);
  CHECK_FALSE(h.isEmpty());
  CHECK(h.name(0) == "Content-Type");
  CHECK(h.value(0) == "text/plain");
  CHECK(h.field(2).name == "x-a");
  CHECK(h.field(2).value == "2");
  CHECK(h.get("content-type") == "text/plain");
  CHECK(h.get(HttpHeaderNames::kContentType) == "text/plain");
  CHECK(h.get("X-a") == "1");
  CHECK_FALSE(h.get("missing").has_value());
  CHECK(h.get("missing", "dflt") == "dflt");
  CHECK(h.get("x-A", "dflt") == "1");
  CHECK(h.contains("CONTENT-TYPE"));
  CHECK_FALSE(h.contains("content-typ"));
  CHECK(h.getAll("X-A") == std::vector<std::string_view>{"1", "2", "3"});
  CHECK(h.getAll("nothing").empty());
  CHECK(h.count("x-a") == 3);
  CHECK(h.count("Content-Type") == 1);
  CHECK(h.count("nothing") == 0);
  std::vector<std::string> seen;
  h.forEach([&](std::string_view n, std::string_view v) {
    seen.push_back(std::string(n) + "=" + std::string(v));
  });
  CHECK(seen == std::vector<std::string>{"Content-Type=text/plain", "X-A=1", "x-a=2", "X-A=3"});
}

TEST_CASE("HttpHeaders: set replaces every field of the name; remove removes them all") {
  HttpHeaders h;
  h.add("A", "1").add("B", "2").add("a", "3");
  h.set("A", "4");
  CHECK(h.getAll("a") == std::vector<std::string_view>{"4"});
  CHECK(h.size() == 2);
  CHECK(h.name(0) == "B");  // the others keep their order; the new field goes last
  CHECK(h.name(1) == "A");
  h.set("content-length", std::uint64_t{1234});
  CHECK(h.get("Content-Length") == "1234");
  h.add("n", std::uint64_t{0}).add("m", std::uint64_t{18446744073709551615ULL});
  CHECK(h.get("n") == "0");
  CHECK(h.get("m") == "18446744073709551615");
  CHECK(h.remove("A") == 1);
  CHECK(h.remove("A") == 0);
  CHECK_FALSE(h.contains("a"));
  h.add("x", "1").add("X", "2");
  CHECK(h.remove("x") == 2);
  CHECK(h.size() == 4);
  h.clear();
  CHECK(h.isEmpty());
  CHECK_FALSE(h.contains("b"));
  h.add("after", "clear");  // the store is reused
  CHECK(h.get("after") == "clear");
  CHECK(h.size() == 1);
}

TEST_CASE("HttpHeaders: containsValue matches one comma-separated element, ignoring case") {
  HttpHeaders h;
  h.add("Connection", "keep-alive, Upgrade").add("connection", " CLOSE ");
  CHECK(h.containsValue("connection", "close"));
  CHECK(h.containsValue("Connection", "upgrade"));
  CHECK(h.containsValue("Connection", "Keep-Alive"));
  CHECK_FALSE(h.containsValue("Connection", "keep"));
  CHECK_FALSE(h.containsValue("Connection", "keep-alive, upgrade"));
  CHECK_FALSE(h.containsValue("Upgrade", "close"));
  h.add("TE", "trailers,,  deflate\t,");
  CHECK(h.containsValue("te", "deflate"));
  CHECK(h.containsValue("te", "trailers"));
}

TEST_CASE("HttpHeaders: getUInt reads digits only") {
  HttpHeaders h;
  h.add("a", "12").add("b", "1a").add("c", "").add("d", "+1").add("e", "007");
  h.add("f", "9999999999999999999").add("g", "99999999999999999999").add("h", " 5");
  CHECK(h.getUInt("a") == 12U);
  CHECK_FALSE(h.getUInt("b").has_value());
  CHECK_FALSE(h.getUInt("c").has_value());
  CHECK_FALSE(h.getUInt("d").has_value());
  CHECK(h.getUInt("e") == 7U);
  CHECK(h.getUInt("f") == 9999999999999999999ULL);
  CHECK_FALSE(h.getUInt("g").has_value());  // would overflow
  CHECK(h.getUInt("h") == 5U);              // add() trimmed the space
  CHECK_FALSE(h.getUInt("missing").has_value());
}

TEST_CASE("HttpHeaders: add refuses what could split a message (IllegalArgumentError)") {
  HttpHeaders h;
  // Values: CR, LF, NUL, other controls and DEL; HTAB and obs-text are fine.
  for (const std::string& v :
       {"a\rb"s, "a\nb"s, "a\r\nX-Injected: 1"s, "a\0b"s, "\x01"s, "\x7f"s, "\x1f"s}) {
    CAPTURE(v);
    CHECK_THROWS_AS(h.add("X", v), IllegalArgumentError);
    CHECK_THROWS_AS(h.set("X", v), IllegalArgumentError);
  }
  // Names: tokens only.
  for (const std::string& n :
       {""s, "a b"s, "a:b"s, "a\r\n"s, "(x)"s, "caf\xc3\xa9"s, "a\0"s, "x "s, " x"s}) {
    CAPTURE(n);
    CHECK_THROWS_AS(h.add(n, "v"), IllegalArgumentError);
  }
  CHECK(h.isEmpty());  // nothing was added by a refused call
  h.add("X", "tab\there caf\xc3\xa9");
  CHECK(h.get("x") == "tab\there caf\xc3\xa9");
  h.add("!#$%&'*+-.^_`|~09azAZ", "v");
  CHECK(h.contains("!#$%&'*+-.^_`|~09azAZ"));
  // Surrounding whitespace is not part of a value.
  h.add("Trim", " \t v v \t ");
  CHECK(h.get("trim") == "v v");
  CHECK(http_util::isToken("Content-Length"));
  CHECK_FALSE(http_util::isToken("Content Length"));
  CHECK(http_util::isValidFieldValue("any\tthing \x80\xff"));
  CHECK_FALSE(http_util::isValidFieldValue("a\x7f"));
  CHECK(http_util::equalsIgnoreCase("Content-LENGTH", "content-length"));
  CHECK_FALSE(http_util::equalsIgnoreCase("content-length", "content-lengtH "));
}

TEST_CASE("HttpHeaders: adding a view of the headers' own text is safe") {
  // add("b", *h.get("a")) stores the name, which may grow the owned store the value views: the
  // value must be copied first.
  HttpHeaders h;
  h.add("a", std::string(40, 'v'));
  for (int i = 0; i < 40; ++i) {
    const std::string_view v = *h.get("a");
    h.add("b", v);
    h.add(h.name(0), h.value(h.size() - 1));
  }
  CHECK(h.count("b") == 40);
  for (std::string_view v : h.getAll("a")) CHECK(v == std::string(40, 'v'));
  for (std::string_view v : h.getAll("b")) CHECK(v == std::string(40, 'v'));
  // set() with a value from the fields it removes.
  h.set("a", *h.get("a"));
  CHECK(h.getAll("a") == std::vector<std::string_view>{std::string_view(std::string(40, 'v'))});
}

TEST_CASE("HttpHeaders: encodedSize and encodeTo write name: value CRLF lines") {
  HttpHeaders h;
  CHECK(h.encodedSize() == 0);
  CHECK(encoded(h).empty());
  h.add("A", "1").add("Bb", "").add("Cc", "x y");
  CHECK(h.encodedSize() == 6 + 6 + 9);
  CHECK(encoded(h) == "A: 1\r\nBb: \r\nCc: x y\r\n");
}

TEST_CASE("HttpHeaders: copy is independent; moving keeps the views") {
  HttpHeaders h;
  h.add("A", "1").add("B", "2");
  HttpHeaders c = h.copy();
  c.add("C", "3");
  c.set("A", "9");
  CHECK(h.size() == 2);
  CHECK(h.get("a") == "1");
  CHECK_FALSE(h.contains("c"));
  CHECK(c.get("a") == "9");
  CHECK(c.get("b") == "2");
  HttpHeaders empty;
  CHECK(empty.copy().isEmpty());
  const std::string_view before = *h.get("b");
  HttpHeaders moved = std::move(h);
  CHECK(moved.get("b") == "2");
  CHECK(moved.get("b")->data() == before.data());
}

TEST_CASE("HttpHeaders: decoded headers view their backing; copies share it read-only") {
  DecoderRunner<HttpRequestDecoder> run;
  run.feed("GET / HTTP/1.1\r\nHost: a\r\nX-Y: z\r\n\r\n");
  REQUIRE(run.messages().size() == 2);
  HttpHeaders& h = std::get<HttpRequest>(run.messages()[0]).headers();
  CHECK(h.backing().isReadable());
  HttpHeaders c = h.copy();
  h.clear();  // drops the original's backing
  run.messages().clear();
  CHECK(c.size() == 2);
  CHECK(c.get("x-y") == "z");
  CHECK(c.get("host") == "a");
  c.add("added", "later");
  CHECK(encoded(c) == "Host: a\r\nX-Y: z\r\nadded: later\r\n");
}

TEST_CASE("HttpHeaders: a moved-from HttpHeaders is empty and usable") {
  HttpHeaders h;
  h.add("a", "1").add("b", "2");
  HttpHeaders moved(std::move(h));
  CHECK(moved.size() == 2);
  CHECK(h.size() == 0);  // NOLINT(bugprone-use-after-move): the state after a move is specified
  CHECK_FALSE(h.get("a"));
  h.add("c", "3");
  CHECK(h.get("c") == std::optional<std::string_view>("3"));
  HttpHeaders assigned;
  assigned = std::move(moved);
  CHECK(assigned.size() == 2);
  CHECK(moved.size() == 0);  // NOLINT(bugprone-use-after-move)
  moved.add("d", "4");
  CHECK(moved.size() == 1);
}
