#pragma once
// HttpRequestDecoder: bytes to HttpRequest, HttpContent..., LastHttpContent (Netty's class of the
// same name), strict about RFC 9112 by default (see HttpDecoderOptions for the leniencies and
// http_decoder_error.hpp for the statuses).
//
// Output: each request is its head, then its content as retained slices of the received bytes
// (zero copy: a piece per read for a large body), then a LastHttpContent (with the trailers of a
// chunked request). A request without content is a head and an empty LastHttpContent. Pipelined
// requests come out in order.
//
// Framing (RFC 9112 §6): Transfer-Encoding whose final coding is chunked, else Content-Length,
// else no content. Refused with HttpDecoderError (the decoder then discards everything): see the
// rules in detail/http_object_decoder.cpp's failure sites, each named by rule(): bare CR, bare LF,
// obs-fold, whitespace before a colon, invalid method / target / version / field name, control
// characters, missing or repeated Host in HTTP/1.1, Content-Length not digits, overflowing or
// differing, Content-Length with Transfer-Encoding, unknown codings (501), final coding not
// chunked, chunk sizes that are not hex, too long or over the limit, chunk data without CRLF, and
// every limit of HttpDecoderOptions.
//
// A request whose framing makes the connection unsafe to reuse (HTTP/1.0 with Transfer-Encoding;
// Content-Length with Transfer-Encoding when allowed) gets "connection: close" added to its
// headers, and the decoder discards what follows it.
//
// The cumulation is always Merge (heads are parsed as contiguous bytes).

#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/http/detail/http_decoder_base.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_object.hpp>

namespace netbuf {

class HttpRequestDecoder
    : public detail::HttpDecoderBase<HttpRequestDecoder, detail::HttpObjectDecoder::Kind::Request> {
 public:
  explicit HttpRequestDecoder(const HttpDecoderOptions& options = {},
                              ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : HttpDecoderBase(options, alloc) {}
};

}  // namespace netbuf
