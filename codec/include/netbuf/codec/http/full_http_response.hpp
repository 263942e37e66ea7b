#pragma once
// FullHttpResponse: a response head with its whole content and trailers (Netty's
// FullHttpResponse). The encoder adds Content-Length when the response has neither it nor
// Transfer-Encoding and may have content.

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <netbuf/codec/http/http_response.hpp>
#include <utility>

namespace netbuf {

class FullHttpResponse : public HttpResponse {
 public:
  FullHttpResponse() = default;
  explicit FullHttpResponse(HttpResponseStatus status, ByteBuf content = {},
                            HttpVersion version = HttpVersion::HTTP_1_1)
      : HttpResponse(status, version), content_(std::move(content)) {}
  FullHttpResponse(HttpResponse head, ByteBuf content,
                   std::unique_ptr<HttpHeaders> trailers = nullptr) noexcept
      : HttpResponse(std::move(head)),
        content_(std::move(content)),
        trailers_(std::move(trailers)) {}

  ByteBuf& content() noexcept { return content_; }
  const ByteBuf& content() const noexcept { return content_; }
  void setContent(ByteBuf content) noexcept { content_ = std::move(content); }
  HttpHeaders& trailingHeaders() {
    if (!trailers_) trailers_ = std::make_unique<HttpHeaders>();
    return *trailers_;
  }
  const HttpHeaders* trailers() const noexcept { return trailers_.get(); }

 private:
  ByteBuf content_;
  std::unique_ptr<HttpHeaders> trailers_;
};

}  // namespace netbuf
