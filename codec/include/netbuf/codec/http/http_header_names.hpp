#pragma once
// Well-known header field names (Netty's HttpHeaderNames), lower case as HTTP/2 writes them; the
// lookups of HttpHeaders ignore case, so they find "Content-Length" as well.

#include <string_view>

namespace netbuf::HttpHeaderNames {

inline constexpr std::string_view kAccept = "accept";
inline constexpr std::string_view kAcceptEncoding = "accept-encoding";
inline constexpr std::string_view kAcceptRanges = "accept-ranges";
inline constexpr std::string_view kAllow = "allow";
inline constexpr std::string_view kConnection = "connection";
inline constexpr std::string_view kContentEncoding = "content-encoding";
inline constexpr std::string_view kContentLength = "content-length";
inline constexpr std::string_view kContentRange = "content-range";
inline constexpr std::string_view kContentType = "content-type";
inline constexpr std::string_view kDate = "date";
inline constexpr std::string_view kExpect = "expect";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kIfModifiedSince = "if-modified-since";
inline constexpr std::string_view kKeepAlive = "keep-alive";
inline constexpr std::string_view kLastModified = "last-modified";
inline constexpr std::string_view kLocation = "location";
inline constexpr std::string_view kRange = "range";
inline constexpr std::string_view kServer = "server";
inline constexpr std::string_view kTe = "te";
inline constexpr std::string_view kTrailer = "trailer";
inline constexpr std::string_view kTransferEncoding = "transfer-encoding";
inline constexpr std::string_view kUpgrade = "upgrade";
inline constexpr std::string_view kUserAgent = "user-agent";

}  // namespace netbuf::HttpHeaderNames

namespace netbuf::HttpHeaderValues {

inline constexpr std::string_view kChunked = "chunked";
inline constexpr std::string_view kClose = "close";
inline constexpr std::string_view kContinue = "100-continue";
inline constexpr std::string_view kKeepAlive = "keep-alive";
inline constexpr std::string_view kTextPlain = "text/plain";
inline constexpr std::string_view kApplicationOctetStream = "application/octet-stream";
inline constexpr std::string_view kBytes = "bytes";

}  // namespace netbuf::HttpHeaderValues
