// HttpUrl: parse() of the http and https URLs a client accepts (schemes and their default ports,
// IPv6 literals, query without a path, fragments) and of those it must refuse (other schemes,
// userinfo, empty hosts, bad ports, whitespace and control characters that would corrupt a request
// line), authority() as the Host field's value, and resolve() of redirect Locations.
#include <netbuf/http/http_url.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

using netbuf::HttpUrl;

namespace {

/// parse(url), REQUIREd to succeed (the failure names the URL).
HttpUrl parsed(std::string_view url) {
  const std::optional<HttpUrl> u = HttpUrl::parse(url);
  REQUIRE_MESSAGE(u.has_value(), "refused: " << url);
  return *u;
}

}  // namespace

TEST_CASE("HttpClient: HttpUrl::parse splits host, port and target") {
  HttpUrl u = parsed("http://example.com/a/b?x=1&y=2");
  CHECK(u.host == "example.com");
  CHECK(u.port == 80);
  CHECK(u.target == "/a/b?x=1&y=2");

  u = parsed("http://127.0.0.1:8080/path");
  CHECK(u.host == "127.0.0.1");
  CHECK(u.port == 8080);
  CHECK(u.target == "/path");

  // No path at all: the origin-form target "/".
  u = parsed("http://h");
  CHECK(u.host == "h");
  CHECK(u.port == 80);
  CHECK(u.target == "/");
  CHECK(parsed("http://h:81").target == "/");

  // The scheme is case-insensitive (RFC 3986 3.1); the host is kept as written.
  u = parsed("HTTP://Example.COM/");
  CHECK(u.host == "Example.COM");
  CHECK(u.target == "/");

  // The extreme ports; an explicit ":80" is the default.
  CHECK(parsed("http://h:1/").port == 1);
  CHECK(parsed("http://h:65535/").port == 65535);
  CHECK(parsed("http://h:80/").port == 80);
  CHECK(parsed("http://h:00080/").port == 80);  // five digits, leading zeros allowed

  // An '@' or ':' in the path is no userinfo or port.
  u = parsed("http://h/a@b:c");
  CHECK(u.host == "h");
  CHECK(u.port == 80);
  CHECK(u.target == "/a@b:c");
}

TEST_CASE("HttpClient: HttpUrl::parse of the scheme and its default port") {
  HttpUrl u = parsed("http://h/");
  CHECK(u.scheme == "http");
  CHECK_FALSE(u.isHttps());
  CHECK(u.port == 80);

  u = parsed("https://example.com/a?b");
  CHECK(u.scheme == "https");
  CHECK(u.isHttps());
  CHECK(u.host == "example.com");
  CHECK(u.port == 443);
  CHECK(u.target == "/a?b");

  // Lower case whatever the URL's spelling; an explicit port wins over the default.
  u = parsed("HTTPS://h:8443");
  CHECK(u.scheme == "https");
  CHECK(u.port == 8443);
  CHECK(u.target == "/");
  CHECK(parsed("hTTpS://[::1]/").host == "::1");
  CHECK(parsed("https://[::1]/").port == 443);
  // An empty port is the scheme's default, as for http.
  CHECK(parsed("https://h:/x").port == 443);
  // Port 80 on https is a port like any other.
  CHECK(parsed("https://h:80/").port == 80);
}

TEST_CASE("HttpClient: HttpUrl::parse of IPv6 literals") {
  HttpUrl u = parsed("http://[::1]:8080/x");
  CHECK(u.host == "::1");  // without the brackets: what a resolver takes
  CHECK(u.port == 8080);
  CHECK(u.target == "/x");

  u = parsed("http://[2001:db8::7]/");
  CHECK(u.host == "2001:db8::7");
  CHECK(u.port == 80);

  u = parsed("http://[::1]");
  CHECK(u.host == "::1");
  CHECK(u.target == "/");

  CHECK_FALSE(HttpUrl::parse("http://[::1/"));    // no closing bracket
  CHECK_FALSE(HttpUrl::parse("http://[::1]x/"));  // junk after it
  CHECK_FALSE(HttpUrl::parse("http://[]/"));      // empty
  // Unbracketed, an IPv6 address is ambiguous with host:port (RFC 3986 3.2.2 requires brackets).
  CHECK_FALSE(HttpUrl::parse("http://::1/"));
  CHECK_FALSE(HttpUrl::parse("http://a:b:80/"));
}

TEST_CASE("HttpClient: HttpUrl::parse of queries and fragments") {
  // A query without a path: the target still starts with '/' (origin-form, RFC 9112 3.2.1).
  CHECK(parsed("http://h?x").target == "/?x");
  CHECK(parsed("http://h:81?x=1&y").target == "/?x=1&y");
  CHECK(parsed("http://h?").target == "/?");
  CHECK(parsed("http://h:81?x").port == 81);
  CHECK(parsed("http://[::1]?q").target == "/?q");

  // A fragment is the client's own business: never sent.
  CHECK(parsed("http://h/p#frag").target == "/p");
  CHECK(parsed("http://h/p?q=1#frag").target == "/p?q=1");
  CHECK(parsed("http://h#frag").target == "/");
  CHECK(parsed("http://h:81#f").port == 81);
  // A '#' ends the URL even where a '/' or '?' would come later.
  CHECK(parsed("http://h#/x?y").target == "/");
}

TEST_CASE("HttpClient: HttpUrl::parse refuses what is not an http URL of that form") {
  // Other schemes.
  CHECK_FALSE(HttpUrl::parse("ftp://h/"));
  CHECK_FALSE(HttpUrl::parse("ws://h/"));
  CHECK_FALSE(HttpUrl::parse("http:/h/"));
  CHECK_FALSE(HttpUrl::parse("http:h"));
  CHECK_FALSE(HttpUrl::parse("//h/"));
  CHECK_FALSE(HttpUrl::parse("h/"));
  CHECK_FALSE(HttpUrl::parse(""));
  CHECK_FALSE(HttpUrl::parse("http"));
  CHECK_FALSE(HttpUrl::parse("httpx://h/"));
  CHECK_FALSE(HttpUrl::parse("httpsx://h/"));
  CHECK_FALSE(HttpUrl::parse("https:/h/"));
  CHECK_FALSE(HttpUrl::parse("https//h/"));
  CHECK_FALSE(HttpUrl::parse("https://"));
  CHECK_FALSE(HttpUrl::parse("https://user@h/"));

  // userinfo: refused outright (credentials in URLs are deprecated, RFC 9110 4.2.4).
  CHECK_FALSE(HttpUrl::parse("http://user@h/"));
  CHECK_FALSE(HttpUrl::parse("http://user:pass@h:80/"));
  CHECK_FALSE(HttpUrl::parse("http://@h/"));

  // Empty hosts.
  CHECK_FALSE(HttpUrl::parse("http://"));
  CHECK_FALSE(HttpUrl::parse("http:///path"));
  CHECK_FALSE(HttpUrl::parse("http://:8080/"));
  CHECK_FALSE(HttpUrl::parse("http://?x"));
  CHECK_FALSE(HttpUrl::parse("http://#f"));

  // Bad ports: not digits, zero, over 65535, too many digits, a sign.
  CHECK_FALSE(HttpUrl::parse("http://h:abc/"));
  CHECK_FALSE(HttpUrl::parse("http://h:0/"));
  CHECK_FALSE(HttpUrl::parse("http://h:65536/"));
  CHECK_FALSE(HttpUrl::parse("http://h:99999/"));
  CHECK_FALSE(HttpUrl::parse("http://h:123456/"));
  CHECK_FALSE(HttpUrl::parse("http://h:-1/"));
  CHECK_FALSE(HttpUrl::parse("http://h:+80/"));
  CHECK_FALSE(HttpUrl::parse("http://h:8 0/"));

  // Whitespace and control characters, in the host or the target: sent as they are, they would
  // split or end the request line.
  CHECK_FALSE(HttpUrl::parse("http://a b/"));
  CHECK_FALSE(HttpUrl::parse("http://h/a b"));
  CHECK_FALSE(HttpUrl::parse("http://h/a\tb"));
  CHECK_FALSE(HttpUrl::parse("http://h/a\r\nHost: evil"));
  CHECK_FALSE(HttpUrl::parse("http://h/?q=\x7f"));
  CHECK_FALSE(HttpUrl::parse(std::string_view("http://h/\0x", 10)));
  CHECK_FALSE(HttpUrl::parse("http://h\\x/"));
  CHECK_FALSE(HttpUrl::parse("http:// h/"));
}

TEST_CASE("HttpClient: HttpUrl::parse accepts an empty port as the default") {
  // RFC 3986 3.2.3: "http://h:/" is equivalent to "http://h/" (the port may be empty).
  CHECK(parsed("http://h:/x").port == 80);
  CHECK(parsed("http://h:").target == "/");
  CHECK(parsed("http://[::1]:/").port == 80);
}

TEST_CASE("HttpClient: HttpUrl::authority is the Host field's value") {
  CHECK(parsed("http://example.com/").authority() == "example.com");
  CHECK(parsed("http://example.com:80/").authority() == "example.com");  // default omitted
  CHECK(parsed("http://example.com:8080/").authority() == "example.com:8080");
  CHECK(parsed("http://127.0.0.1:1/").authority() == "127.0.0.1:1");
  // IPv6 back in brackets, so that the port stays unambiguous.
  CHECK(parsed("http://[::1]/").authority() == "[::1]");
  CHECK(parsed("http://[::1]:8080/").authority() == "[::1]:8080");
  CHECK(parsed("http://[2001:db8::7]:65535/").authority() == "[2001:db8::7]:65535");

  HttpUrl built;
  built.host = "h";
  built.port = 443;
  CHECK(built.authority() == "h:443");

  // The default port is the scheme's: 443 is omitted for https, 80 is not.
  CHECK(parsed("https://example.com/").authority() == "example.com");
  CHECK(parsed("https://example.com:443/").authority() == "example.com");
  CHECK(parsed("https://example.com:80/").authority() == "example.com:80");
  CHECK(parsed("https://[::1]:8443/").authority() == "[::1]:8443");
}

TEST_CASE("HttpClient: HttpUrl::resolve of redirect Locations") {
  const HttpUrl base = parsed("http://origin:8080/a/b?q=1");

  // An absolute path: same host and port, the new target.
  std::optional<HttpUrl> r = base.resolve("/next");
  REQUIRE(r);
  CHECK(r->host == "origin");
  CHECK(r->port == 8080);
  CHECK(r->target == "/next");
  r = base.resolve("/");
  REQUIRE(r);
  CHECK(r->target == "/");
  r = base.resolve("/n?x=2#frag");  // fragment dropped, query kept
  REQUIRE(r);
  CHECK(r->target == "/n?x=2");
  CHECK(r->authority() == "origin:8080");

  // An absolute http URL: anywhere.
  r = base.resolve("http://other/x");
  REQUIRE(r);
  CHECK(r->host == "other");
  CHECK(r->port == 80);
  CHECK(r->target == "/x");
  r = base.resolve("http://[::1]:9/y?z");
  REQUIRE(r);
  CHECK(r->host == "::1");
  CHECK(r->port == 9);
  CHECK(r->target == "/y?z");

  // An absolute https URL, and back: the scheme follows the Location.
  r = base.resolve("https://other/s");
  REQUIRE(r);
  CHECK(r->isHttps());
  CHECK(r->port == 443);
  CHECK(r->target == "/s");
  r->target = "/t";
  std::optional<HttpUrl> r2 = r->resolve("/next");  // a path keeps the scheme and port
  REQUIRE(r2);
  CHECK(r2->isHttps());
  CHECK(r2->host == "other");
  CHECK(r2->port == 443);
  CHECK(r2->target == "/next");
  r2 = r->resolve("http://plain:81/");
  REQUIRE(r2);
  CHECK_FALSE(r2->isHttps());
  CHECK(r2->port == 81);

  // Every other form is refused (the client then returns the 3xx as it is).
  CHECK_FALSE(base.resolve(""));
  CHECK_FALSE(base.resolve("next"));  // relative path
  CHECK_FALSE(base.resolve("../up"));
  CHECK_FALSE(base.resolve("?q=2"));  // query only
  CHECK_FALSE(base.resolve("#frag"));
  CHECK_FALSE(base.resolve("//other/x"));      // network-path reference
  CHECK_FALSE(base.resolve("ftp://other/x"));  // another scheme
  CHECK_FALSE(base.resolve("http://user@other/"));
  // A path with whitespace or control characters would corrupt the next request line, exactly as
  // in parse().
  CHECK_FALSE(base.resolve("/a b"));
  CHECK_FALSE(base.resolve("/a\r\nX-Injected: 1"));
  CHECK_FALSE(base.resolve("/\x7f"));
}
