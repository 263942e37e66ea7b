// Static files (detail/static_files.hpp).

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <netbuf/codec/http/http_date.hpp>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/http/detail/static_files.hpp>
#include <netbuf/http/http_server.hpp>
#include <system_error>

namespace netbuf::detail {

namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parseDecimal(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::optional<std::filesystem::path> resolveUnder(const std::filesystem::path& root,
                                                  std::string_view rel) {
  std::string decoded;
  decoded.reserve(rel.size());
  for (std::size_t i = 0; i < rel.size(); ++i) {
    if (rel[i] != '%') {
      decoded.push_back(rel[i]);
      continue;
    }
    if (i + 2 >= rel.size()) return std::nullopt;
    const int hi = hexValue(rel[i + 1]);
    const int lo = hexValue(rel[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    decoded.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  if (decoded.find('\0') != std::string::npos || decoded.find('\\') != std::string::npos) {
    return std::nullopt;
  }
  // Any ".." segment is refused outright (before and after normalising), as is an absolute path.
  const std::filesystem::path relPath(decoded);
  if (relPath.is_absolute()) return std::nullopt;
  for (const auto& part : relPath) {
    if (part == "..") return std::nullopt;
  }
  std::error_code ec;
  const std::filesystem::path full = std::filesystem::weakly_canonical(root / relPath, ec);
  if (ec) return std::nullopt;
  // Symlinks are resolved by weakly_canonical: the target must still be inside root.
  auto [r, f] = std::mismatch(root.begin(), root.end(), full.begin(), full.end());
  if (r != root.end()) return std::nullopt;
  if (!std::filesystem::is_regular_file(full, ec)) return std::nullopt;
  return full;
}

std::string_view contentTypeFor(const std::filesystem::path& file) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".txt", "text/plain; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".json", "application/json"},
      {".xml", "application/xml"},
      {".csv", "text/csv; charset=utf-8"},
      {".md", "text/markdown; charset=utf-8"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".svg", "image/svg+xml"},
      {".ico", "image/x-icon"},
      {".webp", "image/webp"},
      {".pdf", "application/pdf"},
      {".wasm", "application/wasm"},
      {".zip", "application/zip"},
      {".gz", "application/gzip"},
      {".tar", "application/x-tar"},
      {".mp4", "video/mp4"},
      {".woff2", "font/woff2"},
  };
  const std::string ext = file.extension().string();
  for (const auto& [e, type] : kTypes) {
    if (e.size() == ext.size() && std::equal(e.begin(), e.end(), ext.begin(), [](char a, char b) {
          return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
        })) {
      return type;
    }
  }
  return "application/octet-stream";
}

std::optional<ByteRange> parseRange(std::string_view h, std::uint64_t size, bool& unsatisfiable) {
  unsatisfiable = false;
  constexpr std::string_view kUnit = "bytes=";
  if (h.size() <= kUnit.size() || h.substr(0, kUnit.size()) != kUnit) return std::nullopt;
  std::string_view spec = h.substr(kUnit.size());
  if (spec.find(',') != std::string_view::npos) return std::nullopt;  // several: whole file
  while (!spec.empty() && (spec.front() == ' ' || spec.front() == '\t')) spec.remove_prefix(1);
  while (!spec.empty() && (spec.back() == ' ' || spec.back() == '\t')) spec.remove_suffix(1);
  const std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const std::string_view a = spec.substr(0, dash);
  const std::string_view b = spec.substr(dash + 1);
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  if (a.empty()) {  // suffix: the last b bytes
    std::uint64_t n = 0;
    if (!parseDecimal(b, n)) return std::nullopt;
    if (n == 0 || size == 0) {
      unsatisfiable = true;
      return std::nullopt;
    }
    n = std::min(n, size);
    return ByteRange{size - n, size - 1};
  }
  if (!parseDecimal(a, first)) return std::nullopt;
  if (b.empty()) {
    last = size == 0 ? 0 : size - 1;
  } else {
    if (!parseDecimal(b, last) || last < first) return std::nullopt;
    if (size > 0) last = std::min(last, size - 1);
  }
  if (first >= size) {
    unsatisfiable = true;
    return std::nullopt;
  }
  return ByteRange{first, last};
}

StaticFileAnswer serveFile(const FullHttpRequest& req, const std::filesystem::path& root,
                           std::string_view rel) {
  const auto file = resolveUnder(root, rel);
  if (!file) return {HttpServer::text(HttpResponseStatus::NOT_FOUND, "Not Found\n"), {}};
  // Opened first, and every header comes from this descriptor's fstat: a file replaced or
  // truncated after the check above cannot make the length announced differ from what is sent.
  // O_NONBLOCK: a FIFO swapped in would otherwise block the loop in open(); sendfile ignores it
  // for regular files.
  const int fd = ::open(file->c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {HttpServer::text(HttpResponseStatus::NOT_FOUND, "Not Found\n"), {}};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {HttpServer::text(HttpResponseStatus::NOT_FOUND, "Not Found\n"), {}};
  }
  // Closed on every return, unless handed to the region at the end.
  struct FdGuard {
    int fd;
    ~FdGuard() {
      if (fd >= 0) ::close(fd);
    }
  } guard{fd};
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::time_t mtime = st.st_mtime;
  const std::string lastModified = HttpDate::format(mtime);
  const HttpHeaders& h = req.headers();

  // If-Modified-Since (RFC 9110 §13.1.3), evaluated before Range for GET and HEAD: a file not
  // modified since then is 304.
  if (const auto ims = h.get(HttpHeaderNames::kIfModifiedSince)) {
    if (const auto since = HttpDate::parse(*ims); since && mtime <= *since) {
      FullHttpResponse res(HttpResponseStatus::NOT_MODIFIED);
      res.headers().add(HttpHeaderNames::kLastModified, lastModified);
      return {std::move(res), {}};
    }
  }
  std::uint64_t first = 0;
  std::uint64_t count = size;
  HttpResponseStatus status = HttpResponseStatus::OK;
  std::string contentRange;
  if (const auto range = h.get(HttpHeaderNames::kRange)) {
    bool unsatisfiable = false;
    const auto r = parseRange(*range, size, unsatisfiable);
    if (unsatisfiable) {
      FullHttpResponse res = HttpServer::text(HttpResponseStatus::REQUESTED_RANGE_NOT_SATISFIABLE,
                                              "Range Not Satisfiable\n");
      res.headers().add(HttpHeaderNames::kContentRange, fmt::format("bytes */{}", size));
      return {std::move(res), {}};
    }
    if (r) {
      first = r->first;
      count = r->last - r->first + 1;
      status = HttpResponseStatus::PARTIAL_CONTENT;
      contentRange = fmt::format("bytes {}-{}/{}", r->first, r->last, size);
    }
  }
  FullHttpResponse res(status);
  HttpHeaders& out = res.headers();
  out.add(HttpHeaderNames::kContentType, contentTypeFor(*file));
  out.add(HttpHeaderNames::kContentLength, count);
  out.add(HttpHeaderNames::kLastModified, lastModified);
  out.add(HttpHeaderNames::kAcceptRanges, HttpHeaderValues::kBytes);
  if (!contentRange.empty()) out.add(HttpHeaderNames::kContentRange, contentRange);
  if (req.method().id() == HttpMethod::Id::Head || count == 0) return {std::move(res), {}};
  FileRegion region(fd, first, count);  // owns fd now
  guard.fd = -1;
  return {std::move(res), std::move(region)};
}

}  // namespace netbuf::detail
