#pragma once
// HttpContent and LastHttpContent: a part of a message's content, as a retained slice of the bytes
// received (no copy), in Netty's message model: a head, any number of HttpContent parts, then one
// LastHttpContent (which may itself carry bytes, and carries the trailer fields of a chunked
// message). A message without content is a head followed by an empty LastHttpContent.

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/detail/http_body.hpp>
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

class LastHttpContent : public detail::HttpBody {
 public:
  LastHttpContent() = default;
  explicit LastHttpContent(ByteBuf content) noexcept : HttpBody(std::move(content), nullptr) {}
  LastHttpContent(ByteBuf content, HttpHeaders trailers)
      : HttpBody(std::move(content), trailers.isEmpty()
                                         ? nullptr
                                         : std::make_unique<HttpHeaders>(std::move(trailers))) {}
};

}  // namespace netbuf
