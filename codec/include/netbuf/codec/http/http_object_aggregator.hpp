#pragma once
// HttpObjectAggregator: a head, its HttpContent parts and its LastHttpContent become one
// FullHttpRequest or FullHttpResponse (Netty's class of the same name). Full messages pass
// through.
//
// Content: a message whose content arrived in one piece keeps that piece (a slice of the received
// bytes, no copy); otherwise the pieces are copied into one buffer sized by Content-Length when
// known. Trailers move into the full message.
//
// Limits and expectations (RFC 9110 §10.1.1), for requests:
//  - content over maxContentLength (declared by Content-Length, or counted as it arrives):
//    HttpDecoderError 413 "content-too-large", and the rest of that message is discarded;
//  - "Expect: 100-continue" on an HTTP/1.1 request whose Content-Length fits: the continue
//    handler is called (a server writes "100 Continue" with it) before any content is read; one
//    whose length does not fit fails with 413 at once, without waiting for the body;
//  - any other expectation: HttpDecoderError 417 "unsupported-expectation", message discarded.
// Responses are limited by the content counted as it arrives only: the response to a HEAD request
// and a 304 declare, in Content-Length, content they do not carry.
// A server answers the error's status and closes (HttpServer does).

#include <cstdint>
#include <functional>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <netbuf/codec/message_to_message_decoder.hpp>
#include <optional>
#include <vector>

namespace netbuf {

class HttpObjectAggregator
    : public MessageToMessageDecoder<HttpObjectAggregator, HttpObject, HttpObject> {
 public:
  /// Called for an acceptable "Expect: 100-continue" request, before its content.
  using ContinueHandler = std::function<void()>;

  explicit HttpObjectAggregator(std::uint64_t maxContentLength,
                                ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : alloc_(&alloc), maxContentLength_(maxContentLength) {}

  std::uint64_t maxContentLength() const noexcept { return maxContentLength_; }
  void setMaxContentLength(std::uint64_t n) noexcept { maxContentLength_ = n; }
  void setContinueHandler(ContinueHandler handler) { onContinue_ = std::move(handler); }

  void decode(HttpObject msg, std::vector<HttpObject>& out);

 private:
  void appendContent(ByteBuf& piece);
  [[noreturn]] void failTooLarge(std::uint64_t size);

  ByteBufAllocator* alloc_;
  std::uint64_t maxContentLength_;
  ContinueHandler onContinue_;
  std::optional<HttpRequest> request_;  // the head being aggregated (one of the two)
  std::optional<HttpResponse> response_;
  ByteBuf content_;
  std::uint64_t size_ = 0;
  std::uint64_t expected_ = 0;  // Content-Length, when known (sizes the copy)
  bool copied_ = false;         // content_ is our own buffer (not the first piece's slice)
  bool discarding_ = false;     // after an error: until the message's LastHttpContent
};

}  // namespace netbuf
