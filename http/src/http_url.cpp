// HttpUrl (http_url.hpp).

#include <netbuf/http/http_url.hpp>

namespace netbuf {

namespace {

/// Whether a request target can be sent as it is: no whitespace, control character or DEL (they
/// would split or end the request line).
bool isSendableTarget(std::string_view target) {
  for (const char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  return true;
}

/// Whether url starts with scheme (lower case), compared without case (RFC 3986 3.1).
bool startsWithScheme(std::string_view url, std::string_view scheme) {
  if (url.size() < scheme.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    const char c = url[i];
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (lower != scheme[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<HttpUrl> HttpUrl::parse(std::string_view url) {
  HttpUrl u;
  std::string_view rest;
  if (startsWithScheme(url, "http://")) {
    rest = url.substr(7);
  } else if (startsWithScheme(url, "https://")) {
    u.scheme = "https";
    u.port = 443;
    rest = url.substr(8);
  } else {
    return std::nullopt;
  }
  if (const std::size_t hash = rest.find('#'); hash != std::string_view::npos) {
    rest = rest.substr(0, hash);
  }
  const std::size_t pathStart = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, pathStart);
  if (pathStart != std::string_view::npos) {
    // Built in a string of its own: g++ 12 warns falsely (-Wrestrict) about assign("/") here.
    const std::string_view t = rest.substr(pathStart);
    std::string target;
    target.reserve(t.size() + 1);
    if (t.front() == '?') target.push_back('/');
    target.append(t);
    u.target = std::move(target);
  }
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  std::string_view portText;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    u.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      portText = after.substr(1);
    }
  } else {
    // The first ':' ends the host: an unbracketed IPv6 address ("http://::1/") is refused (its
    // host comes out empty, or its port not a number), not split at its last colon.
    const std::size_t colon = authority.find(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) portText = authority.substr(colon + 1);
  }
  if (u.host.empty()) return std::nullopt;
  for (const char c : u.host) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == '/' || c == '\\') return std::nullopt;
  }
  if (!portText.empty()) {
    unsigned port = 0;
    if (portText.size() > 5) return std::nullopt;
    for (const char c : portText) {
      if (c < '0' || c > '9') return std::nullopt;
      port = port * 10 + static_cast<unsigned>(c - '0');
    }
    if (port == 0 || port > 65535) return std::nullopt;
    u.port = static_cast<std::uint16_t>(port);
  }
  if (!isSendableTarget(u.target)) return std::nullopt;
  return u;
}

std::string HttpUrl::authority() const {
  // Appended piece by piece (g++ 12 warns falsely about "[" + host + "]").
  const bool v6 = host.find(':') != std::string::npos;
  std::string a;
  a.reserve(host.size() + 8);
  if (v6) a.push_back('[');
  a.append(host);
  if (v6) a.push_back(']');
  if (port != defaultPort()) {
    a.push_back(':');
    a.append(std::to_string(port));
  }
  return a;
}

std::optional<HttpUrl> HttpUrl::resolve(std::string_view location) const {
  if (!location.empty() && location.front() == '/' &&
      (location.size() == 1 || location[1] != '/')) {
    HttpUrl u = *this;
    u.target = std::string(location.substr(0, location.find('#')));
    // Checked as parse() checks a URL's: a Location such as "/a b" must not reach a request line.
    if (!isSendableTarget(u.target)) return std::nullopt;
    return u;
  }
  return parse(location);
}

}  // namespace netbuf
