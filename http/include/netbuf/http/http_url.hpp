#pragma once
// HttpUrl: the parts of an "http://host[:port][/path][?query]" URL a client needs (RFC 3986's
// generic syntax, restricted to the http scheme; no userinfo, fragments dropped).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netbuf {

struct HttpUrl {
  std::string host;  ///< a name, an IPv4 address or an IPv6 address without brackets
  std::uint16_t port = 80;
  std::string target = "/";  ///< path and query, the request target (origin-form)

  /// The parts of url, or nothing when it is not an http URL of that form.
  static std::optional<HttpUrl> parse(std::string_view url);
  /// "host" or "host:port" (port omitted when 80), IPv6 in brackets: the Host field's value.
  std::string authority() const;
  /// A redirect's Location resolved against this URL: an absolute http URL, or an absolute path
  /// on the same host ("/next"). Nothing for other forms.
  std::optional<HttpUrl> resolve(std::string_view location) const;
};

}  // namespace netbuf
