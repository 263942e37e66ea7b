#pragma once
// HttpUrl: the parts of an "http://host[:port][/path][?query]" or "https://..." URL a client needs
// (RFC 3986's generic syntax, restricted to the http and https schemes; no userinfo, fragments
// dropped).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netbuf {

struct HttpUrl {
  std::string scheme = "http";  ///< "http" or "https", lower case whatever the URL's spelling
  std::string host;             ///< a name, an IPv4 address or an IPv6 address without brackets
  std::uint16_t port = 80;      ///< the scheme's default (80, 443) when the URL names none
  std::string target = "/";     ///< path and query, the request target (origin-form)

  /// The parts of url, or nothing when it is not an http or https URL of that form.
  static std::optional<HttpUrl> parse(std::string_view url);
  /// Whether the scheme is https (the connection runs TLS).
  bool isHttps() const noexcept { return scheme == "https"; }
  /// The scheme's port when the URL names none: 443 for https, 80 for http.
  std::uint16_t defaultPort() const noexcept { return isHttps() ? 443 : 80; }
  /// "host" or "host:port" (port omitted when it is the scheme's default), IPv6 in brackets: the
  /// Host field's value.
  std::string authority() const;
  /// A redirect's Location resolved against this URL: an absolute http or https URL, or an
  /// absolute path on the same scheme, host and port ("/next"). Nothing for other forms.
  std::optional<HttpUrl> resolve(std::string_view location) const;
};

}  // namespace netbuf
