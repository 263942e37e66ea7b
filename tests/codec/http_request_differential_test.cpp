// Differential test of HttpRequestDecoder (http_request_decoder.hpp) against a reference parser:
// random valid requests (methods, targets, 0-20 fields with random token names and values,
// Content-Length or chunked bodies with random chunking, extensions and trailers, stray CRLFs
// between requests) are rendered to bytes, fed to the decoder in random reads, and what it
// decodes must equal what a straightforward std::string parser reads from the same bytes. The seed
// is printed on failure (CAPTURE); NETBUF_HTTP_DIFF_SEED=<n> replays one.
#include <netbuf/codec/http/http_request_decoder.hpp>

#include <netbuf/codec/decoder_runner.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace netbuf;

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;
  std::string uri;
  std::string version;
  Fields fields;
  std::string body;
  Fields trailers;

  friend bool operator==(const Request&, const Request&) = default;
};

std::string describe(const std::vector<Request>& rs) {
  std::string s;
  for (const Request& r : rs) {
    s += "[" + r.method + " " + r.uri + " " + r.version;
    for (const auto& [n, v] : r.fields) s += " | " + n + ": " + v;
    s += " || " + std::to_string(r.body.size()) + " bytes";
    for (const auto& [n, v] : r.trailers) s += " | " + n + ": " + v;
    s += "]\n";
  }
  return s;
}

// ---------------------------------------------------------------- the reference parser

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

/// Reads valid requests, nothing else: no error handling beyond what valid input needs.
struct Reference {
  std::string_view s;
  std::size_t pos = 0;

  std::string line() {
    const std::size_t e = s.find("\r\n", pos);
    REQUIRE(e != std::string_view::npos);
    std::string l(s.substr(pos, e - pos));
    pos = e + 2;
    return l;
  }
  Fields fieldLines() {
    Fields f;
    for (std::string l = line(); !l.empty(); l = line()) {
      const std::size_t colon = l.find(':');
      f.emplace_back(l.substr(0, colon), std::string(trim(std::string_view(l).substr(colon + 1))));
    }
    return f;
  }
  std::vector<Request> parse() {
    std::vector<Request> all;
    while (pos < s.size()) {
      if (s.substr(pos, 2) == "\r\n") {
        pos += 2;
        continue;
      }
      Request r;
      const std::string start = line();
      const std::size_t sp1 = start.find(' ');
      const std::size_t sp2 = start.find(' ', sp1 + 1);
      r.method = start.substr(0, sp1);
      r.uri = start.substr(sp1 + 1, sp2 - sp1 - 1);
      r.version = start.substr(sp2 + 1);
      r.fields = fieldLines();
      bool chunked = false;
      std::size_t length = 0;
      for (const auto& [n, v] : r.fields) {
        if (iequals(n, "transfer-encoding")) chunked = true;
        if (iequals(n, "content-length")) length = std::stoul(v);
      }
      if (chunked) {
        for (;;) {
          const std::string sizeLine = line();
          const std::size_t size = std::stoul(sizeLine, nullptr, 16);  // stops at ';' or ' '
          if (size == 0) break;
          r.body += s.substr(pos, size);
          pos += size + 2;
        }
        r.trailers = fieldLines();
      } else {
        r.body = s.substr(pos, length);
        pos += length;
      }
      all.push_back(std::move(r));
    }
    return all;
  }
};

// ---------------------------------------------------------------- the generator

struct Generator {
  std::mt19937_64 rng;

  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng() % n); }
  bool chance(int percent) { return below(100) < static_cast<std::size_t>(percent); }
  char pick(std::string_view alphabet) { return alphabet[below(alphabet.size())]; }

  static constexpr std::string_view kTchar =
      "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static constexpr std::string_view kTarget =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?%";

  std::string token(std::size_t maxLen) {
    std::string t;
    for (std::size_t n = 1 + below(maxLen); n > 0; --n) t.push_back(pick(kTchar));
    return t;
  }
  std::string randomCase(std::string_view s) {
    std::string r(s);
    for (char& c : r)
      if (c >= 'a' && c <= 'z' && chance(30)) c = static_cast<char>(c - 32);
    return r;
  }
  std::string ows() {
    switch (below(5)) {
      case 0:
        return " ";
      case 1:
        return "\t";
      case 2:
        return "  \t";
      default:
        return "";
    }
  }
  /// A field value: visible ASCII, obs-text and inner whitespace, no whitespace at its ends.
  std::string value() {
    std::string v;
    const std::size_t n = below(4) == 0 ? 0 : 1 + below(chance(10) ? 200 : 20);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = below(20);
      if (k == 0 && i > 0 && i + 1 < n) {
        v.push_back(chance(50) ? ' ' : '\t');
      } else if (k == 1) {
        v.push_back(static_cast<char>(0x80 + below(0x80)));
      } else {
        v.push_back(static_cast<char>(0x21 + below(0x7f - 0x21)));
      }
    }
    return v;
  }
  std::string fieldName() {
    for (;;) {
      std::string n = token(12);
      if (!iequals(n, "host") && !iequals(n, "content-length") && !iequals(n, "transfer-encoding"))
        return n;
    }
  }
  std::string hex(std::size_t size) {
    static constexpr char kLower[] = "0123456789abcdef";
    static constexpr char kUpper[] = "0123456789ABCDEF";
    const char* digits = chance(50) ? kLower : kUpper;
    std::string h;
    do {
      h.insert(h.begin(), digits[size % 16]);
      size /= 16;
    } while (size != 0);
    if (chance(10)) h.insert(0, below(3) + 1, '0');
    return h;
  }
  std::string chunkExt() {
    if (!chance(30)) return "";
    std::string e = ows() + ";" + token(5);
    if (chance(50)) e += "=" + token(5);
    return e;
  }

  /// One valid request: what a parser must read, and its bytes.
  std::pair<Request, std::string> request() {
    static constexpr std::string_view kMethods[] = {"GET",     "HEAD",  "POST",  "PUT",    "DELETE",
                                                    "OPTIONS", "PATCH", "TRACE", "CONNECT"};
    Request r;
    r.method = chance(80) ? std::string(kMethods[below(9)]) : token(10);
    if (chance(5)) {
      r.uri = "*";
    } else {
      r.uri = "/";
      for (std::size_t n = below(chance(10) ? 300 : 30); n > 0; --n) r.uri.push_back(pick(kTarget));
    }
    const bool http10 = chance(15);
    r.version = http10 ? "HTTP/1.0" : "HTTP/1.1";
    const std::size_t nFields = below(21);
    for (std::size_t i = 0; i < nFields; ++i) r.fields.emplace_back(fieldName(), value());
    // The framing fields and Host at random places.
    auto insert = [&](std::string name, std::string v) {
      const std::size_t at = below(r.fields.size() + 1);
      r.fields.insert(r.fields.begin() + static_cast<std::ptrdiff_t>(at),
                      {randomCase(name), std::move(v)});
    };
    if (!http10 || chance(50)) insert("host", "example.com");
    const std::size_t bodyKind = below(3);  // none, Content-Length, chunked (HTTP/1.1 only)
    const std::size_t bodyLen = below(4) == 0 ? 0 : 1 + below(chance(10) ? 3000 : 100);
    for (std::size_t i = 0; i < bodyLen; ++i) r.body.push_back(static_cast<char>(rng()));
    const bool chunked = bodyKind == 2 && !http10;
    if (bodyKind == 1 || (bodyKind == 2 && http10)) {
      insert("content-length", std::to_string(r.body.size()));
    } else if (chunked) {
      insert("transfer-encoding", randomCase("chunked"));
      for (std::size_t n = below(4); n > 0; --n) r.trailers.emplace_back(fieldName(), value());
    } else {
      r.body.clear();
    }

    std::string bytes;
    if (chance(10)) bytes += "\r\n";
    bytes += r.method + " " + r.uri + " " + r.version + "\r\n";
    for (const auto& [n, v] : r.fields) bytes += n + ":" + ows() + v + ows() + "\r\n";
    bytes += "\r\n";
    if (chunked) {
      for (std::size_t at = 0; at < r.body.size();) {
        const std::size_t n = std::min(r.body.size() - at, 1 + below(chance(20) ? 2000 : 60));
        bytes += hex(n) + chunkExt() + "\r\n" + r.body.substr(at, n) + "\r\n";
        at += n;
      }
      bytes += hex(0) + chunkExt() + "\r\n";
      for (const auto& [n, v] : r.trailers) bytes += n + ":" + ows() + v + ows() + "\r\n";
      bytes += "\r\n";
    } else {
      bytes += r.body;
    }
    return {std::move(r), std::move(bytes)};
  }
};

/// What the decoder made of the stream, as Requests.
std::vector<Request> decode(std::string_view stream, const std::vector<std::size_t>& cuts,
                            std::size_t& errors) {
  DecoderRunner<HttpRequestDecoder> run;
  run.feedSplitAt(stream, cuts).finish();
  errors = run.errors().size();
  std::vector<Request> out;
  for (const HttpObject& m : run.messages()) {
    if (const auto* h = std::get_if<HttpRequest>(&m)) {
      Request r;
      r.method = std::string(h->method().name());
      r.uri = std::string(h->uri());
      r.version = std::string(h->protocolVersion().text());
      h->headers().forEach([&](std::string_view n, std::string_view v) {
        r.fields.emplace_back(std::string(n), std::string(v));
      });
      out.push_back(std::move(r));
    } else if (const auto* c = std::get_if<HttpContent>(&m)) {
      REQUIRE_FALSE(out.empty());
      out.back().body += c->content().readableStringView();
    } else if (const auto* l = std::get_if<LastHttpContent>(&m)) {
      REQUIRE_FALSE(out.empty());
      out.back().body += l->content().readableStringView();
      if (l->trailers() != nullptr) {
        l->trailers()->forEach([&](std::string_view n, std::string_view v) {
          out.back().trailers.emplace_back(std::string(n), std::string(v));
        });
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("HttpRequestDecoder: differential against a reference parser, random splits") {
  const char* fixed = std::getenv("NETBUF_HTTP_DIFF_SEED");
  const std::uint64_t seed =
      fixed != nullptr ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
  CAPTURE(seed);
  Generator gen{std::mt19937_64(seed)};
  for (int round = 0; round < 400; ++round) {
    CAPTURE(round);
    std::vector<Request> expected;
    std::string stream;
    for (std::size_t n = 1 + gen.below(4); n > 0; --n) {
      auto [r, bytes] = gen.request();
      expected.push_back(std::move(r));
      stream += bytes;
    }
    // The reference reads what was generated (checks the generator and the parser).
    Reference ref{stream};
    const std::vector<Request> parsed = ref.parse();
    REQUIRE(describe(parsed) == describe(expected));
    REQUIRE(parsed == expected);
    // Reads of random sizes, small or large.
    std::vector<std::size_t> cuts;
    const std::size_t maxStep = std::size_t{1} << gen.below(12);
    for (std::size_t at = 0;;) {
      at += 1 + gen.below(maxStep);
      if (at >= stream.size()) break;
      cuts.push_back(at);
    }
    std::size_t errors = 0;
    const std::vector<Request> decoded = decode(stream, cuts, errors);
    CHECK(errors == 0);
    CHECK(describe(decoded) == describe(parsed));
    CHECK(decoded == parsed);
  }
}
