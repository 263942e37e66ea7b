#pragma once
// FullHttpResponse: a response head with its whole content and trailers (Netty's
// FullHttpResponse). The encoder adds Content-Length when the response has neither it nor
// Transfer-Encoding and may have content.

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/detail/http_body.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <netbuf/codec/http/http_response.hpp>
#include <utility>

namespace netbuf {

class FullHttpResponse : public HttpResponse, public detail::HttpBody {
 public:
  FullHttpResponse() = default;
  explicit FullHttpResponse(HttpResponseStatus status, ByteBuf content = {},
                            HttpVersion version = HttpVersion::HTTP_1_1)
      : HttpResponse(status, version), HttpBody(std::move(content), nullptr) {}
  FullHttpResponse(HttpResponse head, ByteBuf content,
                   std::unique_ptr<HttpHeaders> trailers = nullptr) noexcept
      : HttpResponse(std::move(head)), HttpBody(std::move(content), std::move(trailers)) {}
};

}  // namespace netbuf
