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

#include <cstdint>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/http/detail/http_object_decoder.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <netbuf/codec/http/http_request_decoder.hpp>
#include <vector>

namespace netbuf {

class HttpResponseDecoder : public ByteToMessageDecoder<HttpResponseDecoder, HttpObject> {
  using Base = ByteToMessageDecoder<HttpResponseDecoder, HttpObject>;

 public:
  explicit HttpResponseDecoder(const HttpDecoderOptions& options = {},
                               ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : Base(Cumulator::Merge, alloc), core_(detail::HttpObjectDecoder::Kind::Response, options) {}

  /// The method of the next request sent on this connection (see the header comment).
  void pushRequestMethod(HttpMethod method) { core_.pushRequestMethod(method.id()); }

  const HttpDecoderOptions& options() const noexcept { return core_.options(); }
  HttpDecoderOptions& options() noexcept { return core_.options(); }
  bool isDiscarding() const noexcept {
    return core_.state() == detail::HttpObjectDecoder::State::Discard;
  }

  void decode(ByteBuf& in, std::vector<HttpObject>& out) {
    core_.decode(in, out, streamOffset(in));
  }
  void decode(CompositeByteBuf&, std::vector<HttpObject>&) { detail::throwHttpNeedsMerge(); }

  /// End of stream: completes a close-delimited response (its LastHttpContent) or reports one cut
  /// short (HttpDecoderError "premature-end-of-stream").
  template <class OnError>
  void channelInactive(std::vector<HttpObject>& out, OnError&& onError) {
    Base::channelInactive(out, onError);
    try {
      core_.endOfStream(out, bytesConsumed());
    } catch (const CodecError&) {
      onError(std::current_exception());
    }
  }
  void channelInactive(std::vector<HttpObject>& out) { channelInactive(out, RethrowCodecError{}); }

 private:
  detail::HttpObjectDecoder core_;
};

}  // namespace netbuf
