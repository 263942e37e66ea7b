#pragma once
// FullHttpRequest: a request head with its whole content and trailers (Netty's FullHttpRequest),
// as HttpObjectAggregator produces it and as a client sends one.

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/detail/http_body.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <netbuf/codec/http/http_request.hpp>
#include <utility>

namespace netbuf {

class FullHttpRequest : public HttpRequest, public detail::HttpBody {
 public:
  FullHttpRequest() = default;
  FullHttpRequest(HttpMethod method, std::string_view uri, ByteBuf content = {},
                  HttpVersion version = HttpVersion::HTTP_1_1)
      : HttpRequest(method, uri, version), HttpBody(std::move(content), nullptr) {}
  FullHttpRequest(HttpRequest head, ByteBuf content,
                  std::unique_ptr<HttpHeaders> trailers = nullptr) noexcept
      : HttpRequest(std::move(head)), HttpBody(std::move(content), std::move(trailers)) {}
};

}  // namespace netbuf
