#pragma once
// The static-file route of HttpServer (HttpServer::staticFiles): path resolution that never
// leaves the root, content types, conditional and range requests. Separate from the server so
// tests can check the rules without sockets.

#include <cstdint>
#include <filesystem>
#include <netbuf/codec/http/full_http_request.hpp>
#include <netbuf/codec/http/full_http_response.hpp>
#include <netbuf/transport/file_region.hpp>
#include <optional>
#include <string_view>
#include <utility>

namespace netbuf::detail {

/// The regular file under root that the percent-encoded relative path rel names, or nothing when
/// it would leave root (a ".." segment, an absolute path, a symlink pointing outside, "%00") or is
/// not a regular file. root must be canonical.
std::optional<std::filesystem::path> resolveUnder(const std::filesystem::path& root,
                                                  std::string_view rel);

/// The media type for a file name's extension (application/octet-stream when unknown).
std::string_view contentTypeFor(const std::filesystem::path& file);

/// A single "bytes=" range of a size-byte resource (RFC 9110 §14.1.2): [first, last], or
/// nothing when the header is absent, malformed or names several ranges (the whole file is
/// served then). unsatisfiable is set when the range lies past the end (416).
struct ByteRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};
std::optional<ByteRange> parseRange(std::string_view header, std::uint64_t size,
                                    bool& unsatisfiable);

/// The answer to a GET or HEAD of a file: the head (with its headers; content empty) and the
/// region to send after it (invalid for HEAD, 304, 404, 416).
struct StaticFileAnswer {
  FullHttpResponse response;
  FileRegion file;
};
StaticFileAnswer serveFile(const FullHttpRequest& request, const std::filesystem::path& root,
                           std::string_view rel);

}  // namespace netbuf::detail
