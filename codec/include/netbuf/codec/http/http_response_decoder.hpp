#pragma once
// HttpResponseDecoder: bytes to HttpResponse, HttpContent..., LastHttpContent (Netty's class of
// the same name), with the request decoder's strictness (http_request_decoder.hpp).
//
// A response's framing depends on the request it answers (RFC 9112 §6.3): a response to HEAD, a
// 1xx, 204 or 304 has no content whatever its headers say; a 101 or a 2xx to CONNECT switches the
// connection to another protocol (the bytes that follow come out as HttpContent, undecoded).
// pushRequestMethod() tells the decoder the method of each request sent, in order
// (HttpClientCodec does it for you); without one, GET is assumed. A 1xx response leaves the
// request's method in place for its final response.
//
// Content: Transfer-Encoding whose final coding is chunked, else Content-Length, else everything
// until the connection closes (the LastHttpContent comes at the end of stream).

#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/http/detail/http_decoder_base.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_method.hpp>
#include <netbuf/codec/http/http_object.hpp>

namespace netbuf {

class HttpResponseDecoder
    : public detail::HttpDecoderBase<HttpResponseDecoder,
                                     detail::HttpObjectDecoder::Kind::Response> {
 public:
  explicit HttpResponseDecoder(const HttpDecoderOptions& options = {},
                               ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : HttpDecoderBase(options, alloc) {}

  /// The method of the next request sent on this connection (see the header comment).
  void pushRequestMethod(HttpMethod method) { core_.pushRequestMethod(method.id()); }
};

}  // namespace netbuf
