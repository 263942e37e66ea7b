#pragma once
// What the HTTP server tests read back: responses parsed from the raw bytes a server wrote, by a
// deliberately small parser of their own (not the codec's response decoder, so that a bug shared
// by the codec's encoder and decoder cannot hide), and the raw bytes of requests.
//
// The parser knows Content-Length, chunked and close-delimited bodies, 1xx/204/304 and responses
// to HEAD (no body whatever the fields say). Field names are compared case-insensitively.

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf::test {

struct WireResponse {
  std::string version;  ///< "HTTP/1.1"
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> fields;  ///< as sent (names not folded)
  std::string body;

  static bool sameName(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  }
  /// The first field named name (any case).
  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [n, v] : fields) {
      if (sameName(n, name)) return v;
    }
    return std::nullopt;
  }
  std::size_t count(std::string_view name) const {
    return static_cast<std::size_t>(std::count_if(
        fields.begin(), fields.end(), [&](const auto& f) { return sameName(f.first, name); }));
  }
  bool closes() const { return header("connection") == std::optional<std::string>("close"); }
};

/// Parses the response at the front of wire. Returns the bytes it took, or 0 when wire holds only
/// part of one (a close-delimited body is complete only when atEof). A malformed head fails the
/// test.
inline std::size_t parseResponse(std::string_view wire, WireResponse& out, bool head = false,
                                 bool atEof = false) {
  const std::size_t headEnd = wire.find("\r\n\r\n");
  if (headEnd == std::string_view::npos) return 0;
  out = WireResponse();
  std::string_view h = wire.substr(0, headEnd + 2);
  const std::size_t lineEnd = h.find("\r\n");
  const std::string_view line = h.substr(0, lineEnd);
  const std::size_t sp1 = line.find(' ');
  REQUIRE_MESSAGE(sp1 == 8, "bad status line: " << line);
  out.version = std::string(line.substr(0, sp1));
  out.status = std::stoi(std::string(line.substr(sp1 + 1, 3)));
  if (line.size() > sp1 + 5) out.reason = std::string(line.substr(sp1 + 5));
  h.remove_prefix(lineEnd + 2);
  while (!h.empty()) {
    const std::size_t e = h.find("\r\n");
    const std::string_view f = h.substr(0, e);
    const std::size_t colon = f.find(':');
    REQUIRE_MESSAGE(colon != std::string_view::npos, "bad field line: " << f);
    std::string_view v = f.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    out.fields.emplace_back(std::string(f.substr(0, colon)), std::string(v));
    h.remove_prefix(e + 2);
  }
  std::size_t at = headEnd + 4;
  if (head || out.status < 200 || out.status == 204 || out.status == 304) return at;
  if (const auto te = out.header("transfer-encoding");
      te && te->find("chunked") != std::string::npos) {
    for (;;) {
      const std::size_t e = wire.find("\r\n", at);
      if (e == std::string_view::npos) return 0;
      const std::size_t size = std::stoul(std::string(wire.substr(at, e - at)), nullptr, 16);
      at = e + 2;
      if (size == 0) {
        const std::size_t end = wire.find("\r\n", at);  // no trailers from these servers
        return end == std::string_view::npos ? 0 : end + 2;
      }
      if (wire.size() < at + size + 2) return 0;
      out.body.append(wire.substr(at, size));
      at += size + 2;
    }
  }
  if (const auto cl = out.header("content-length")) {
    const std::size_t n = std::stoul(*cl);
    if (wire.size() < at + n) return 0;
    out.body = std::string(wire.substr(at, n));
    return at + n;
  }
  if (!atEof) return 0;
  out.body = std::string(wire.substr(at));
  return wire.size();
}

/// Every complete response in wire, in order; heads[i] says whether the i-th answers a HEAD.
/// `rest` (when given) receives the bytes after the last complete response.
inline std::vector<WireResponse> parseResponses(std::string_view wire,
                                                const std::vector<bool>& heads = {},
                                                std::string* rest = nullptr) {
  std::vector<WireResponse> out;
  for (;;) {
    WireResponse r;
    const bool head = out.size() < heads.size() && heads[out.size()];
    const std::size_t n = parseResponse(wire, r, head);
    if (n == 0) break;
    out.push_back(std::move(r));
    wire.remove_prefix(n);
  }
  if (rest != nullptr) *rest = std::string(wire);
  return out;
}

/// "GET path HTTP/1.1" with a Host field, extra fields (each "name: value\r\n") and a body
/// (Content-Length added when the body is not empty).
inline std::string httpRequest(std::string_view method, std::string_view target,
                               std::string_view extra = "", std::string_view body = "",
                               std::string_view version = "HTTP/1.1") {
  std::string r;
  r.append(method).append(" ").append(target).append(" ").append(version).append("\r\n");
  r.append("Host: test\r\n").append(extra);
  if (!body.empty())
    r.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  r.append("\r\n").append(body);
  return r;
}

}  // namespace netbuf::test
