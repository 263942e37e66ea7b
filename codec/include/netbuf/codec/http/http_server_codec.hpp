#pragma once
// HttpServerCodec: HttpRequestDecoder and HttpResponseEncoder as one duplex codec (Netty's class
// of the same name). The decoder tells the encoder the method of every request it decodes, so
// the response to a HEAD request goes out without content, and pipelined responses pair with
// their requests in order. Drive it as a decoder (channelRead...) and an encoder (write); the
// http module's HttpServer installs it in a pipeline.

#include <netbuf/codec/http/detail/http_duplex_codec.hpp>
#include <netbuf/codec/http/http_request_decoder.hpp>
#include <netbuf/codec/http/http_response_encoder.hpp>
#include <utility>
#include <vector>

namespace netbuf {

class HttpServerCodec
    : public detail::HttpDuplexCodec<HttpServerCodec, HttpRequestDecoder, HttpResponseEncoder> {
 public:
  explicit HttpServerCodec(const HttpDecoderOptions& options = {},
                           ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : HttpDuplexCodec(options, alloc) {}

  using HttpDuplexCodec::channelRead;
  template <class In, class OnError>
  requires requires(HttpRequestDecoder& d, In&& in, Output& out, OnError&& onError) {
    d.channelRead(std::forward<In>(in), out, onError);
  }
  void channelRead(In&& in, Output& out, OnError&& onError) {
    const std::size_t before = out.size();
    try {
      decoder_.channelRead(std::forward<In>(in), out, onError);
    } catch (...) {
      // The requests decoded before an error the handler rethrew are in out: they will be
      // answered, so the encoder must know their methods all the same.
      noteRequests(out, before);
      throw;
    }
    noteRequests(out, before);
  }

  void write(HttpObject msg, std::vector<AnyByteBuf>& out) { encoder_.write(std::move(msg), out); }

 private:
  void noteRequests(const Output& out, std::size_t from) {
    for (std::size_t i = from; i < out.size(); ++i) {
      if (const auto* r = std::get_if<HttpRequest>(&out[i]))
        encoder_.pushRequestMethod(r->method());
    }
  }
};

}  // namespace netbuf
