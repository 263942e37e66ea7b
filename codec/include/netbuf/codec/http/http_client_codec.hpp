#pragma once
// HttpClientCodec: HttpRequestEncoder and HttpResponseDecoder as one duplex codec (Netty's class
// of the same name). The encoder tells the decoder the method of every request it writes, so the
// response to HEAD is read without content and a 2xx to CONNECT switches to raw bytes.

#include <netbuf/codec/http/detail/http_duplex_codec.hpp>
#include <netbuf/codec/http/http_request_encoder.hpp>
#include <netbuf/codec/http/http_response_decoder.hpp>
#include <optional>
#include <utility>
#include <vector>

namespace netbuf {

class HttpClientCodec
    : public detail::HttpDuplexCodec<HttpClientCodec, HttpResponseDecoder, HttpRequestEncoder> {
 public:
  explicit HttpClientCodec(const HttpDecoderOptions& options = {},
                           ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : HttpDuplexCodec(options, alloc) {}

  using HttpDuplexCodec::channelRead;
  template <class In, class OnError>
  requires requires(HttpResponseDecoder& d, In&& in, Output& out, OnError&& onError) {
    d.channelRead(std::forward<In>(in), out, onError);
  }
  void channelRead(In&& in, Output& out, OnError&& onError) {
    decoder_.channelRead(std::forward<In>(in), out, onError);
  }

  void write(HttpObject msg, std::vector<AnyByteBuf>& out) {
    // The method is told to the decoder once the request is encoded: a request the encoder refuses
    // is never sent, and must not be paired with a response. (Only the id matters to the decoder;
    // an extension method's name views the request, which the encoder consumes.)
    std::optional<HttpMethod::Id> method;
    if (const auto* r = std::get_if<HttpRequest>(&msg)) method = r->method().id();
    if (const auto* r = std::get_if<FullHttpRequest>(&msg)) method = r->method().id();
    encoder_.write(std::move(msg), out);
    if (method) decoder_.pushRequestMethod(HttpMethod::of(*method));
  }
};

}  // namespace netbuf
