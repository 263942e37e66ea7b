#pragma once
// FullHttpRequest: a request head with its whole content and trailers (Netty's FullHttpRequest),
// as HttpObjectAggregator produces it and as a client sends one.

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <netbuf/codec/http/http_request.hpp>
#include <utility>

namespace netbuf {

class FullHttpRequest : public HttpRequest {
 public:
  FullHttpRequest() = default;
  FullHttpRequest(HttpMethod method, std::string_view uri, ByteBuf content = {},
                  HttpVersion version = HttpVersion::HTTP_1_1)
      : HttpRequest(method, uri, version), content_(std::move(content)) {}
  FullHttpRequest(HttpRequest head, ByteBuf content,
                  std::unique_ptr<HttpHeaders> trailers = nullptr) noexcept
      : HttpRequest(std::move(head)),
        content_(std::move(content)),
        trailers_(std::move(trailers)) {}

  ByteBuf& content() noexcept { return content_; }
  const ByteBuf& content() const noexcept { return content_; }
  void setContent(ByteBuf content) noexcept { content_ = std::move(content); }
  HttpHeaders& trailingHeaders() {
    if (!trailers_) trailers_ = std::make_unique<HttpHeaders>();
    return *trailers_;
  }
  /// The trailers, or nullptr when there are none.
  const HttpHeaders* trailers() const noexcept { return trailers_.get(); }

 private:
  ByteBuf content_;
  std::unique_ptr<HttpHeaders> trailers_;
};

}  // namespace netbuf
