#pragma once
// HttpBody: the content and trailer fields that LastHttpContent, FullHttpRequest and
// FullHttpResponse each carry, written once. The trailers are allocated on first use, so a
// message without them costs no allocation for them.

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <utility>

namespace netbuf::detail {

class HttpBody {
 public:
  HttpBody() = default;
  HttpBody(ByteBuf content, std::unique_ptr<HttpHeaders> trailers) noexcept
      : content_(std::move(content)), trailers_(std::move(trailers)) {}

  ByteBuf& content() noexcept { return content_; }
  const ByteBuf& content() const noexcept { return content_; }
  void setContent(ByteBuf content) noexcept { content_ = std::move(content); }
  /// The trailer fields (empty unless a chunked message sent some or code added them).
  HttpHeaders& trailingHeaders() {
    if (!trailers_) trailers_ = std::make_unique<HttpHeaders>();
    return *trailers_;
  }
  bool hasTrailingHeaders() const noexcept { return trailers_ && !trailers_->isEmpty(); }
  /// The trailers, or nullptr when there are none.
  const HttpHeaders* trailers() const noexcept { return trailers_.get(); }
  std::unique_ptr<HttpHeaders> takeTrailers() noexcept { return std::move(trailers_); }

 protected:
  ~HttpBody() = default;  // a part of the message types, never used on its own
  HttpBody(HttpBody&&) noexcept = default;
  HttpBody& operator=(HttpBody&&) noexcept = default;

 private:
  ByteBuf content_;
  std::unique_ptr<HttpHeaders> trailers_;
};

}  // namespace netbuf::detail
