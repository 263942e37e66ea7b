#pragma once
// HttpContent and LastHttpContent: a part of a message's content, as a retained slice of the bytes
// received (no copy), in Netty's message model: a head, any number of HttpContent parts, then one
// LastHttpContent (which may itself carry bytes, and carries the trailer fields of a chunked
// message). A message without content is a head followed by an empty LastHttpContent.

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <utility>

namespace netbuf {

class HttpContent {
 public:
  HttpContent() = default;
  explicit HttpContent(ByteBuf content) noexcept : content_(std::move(content)) {}

  ByteBuf& content() noexcept { return content_; }
  const ByteBuf& content() const noexcept { return content_; }

 private:
  ByteBuf content_;
};

class LastHttpContent {
 public:
  LastHttpContent() = default;
  explicit LastHttpContent(ByteBuf content) noexcept : content_(std::move(content)) {}
  LastHttpContent(ByteBuf content, HttpHeaders trailers)
      : content_(std::move(content)),
        trailers_(trailers.isEmpty() ? nullptr
                                     : std::make_unique<HttpHeaders>(std::move(trailers))) {}

  ByteBuf& content() noexcept { return content_; }
  const ByteBuf& content() const noexcept { return content_; }
  /// The trailer fields (empty unless a chunked message sent some). Allocated on first use, so an
  /// ordinary last part costs no allocation.
  HttpHeaders& trailingHeaders() {
    if (!trailers_) trailers_ = std::make_unique<HttpHeaders>();
    return *trailers_;
  }
  bool hasTrailingHeaders() const noexcept { return trailers_ && !trailers_->isEmpty(); }
  /// The trailers, or nullptr when there are none.
  const HttpHeaders* trailers() const noexcept { return trailers_.get(); }
  std::unique_ptr<HttpHeaders> takeTrailers() noexcept { return std::move(trailers_); }

 private:
  ByteBuf content_;
  std::unique_ptr<HttpHeaders> trailers_;
};

}  // namespace netbuf
