#pragma once
// HttpClientCodec: HttpRequestEncoder and HttpResponseDecoder as one duplex codec (Netty's class
// of the same name). The encoder tells the decoder the method of every request it writes, so the
// response to HEAD is read without content and a 2xx to CONNECT switches to raw bytes.

#include <netbuf/codec/http/http_request_encoder.hpp>
#include <netbuf/codec/http/http_response_decoder.hpp>
#include <utility>
#include <vector>

namespace netbuf {

class HttpClientCodec {
 public:
  using InputType = ByteBuf;
  using OutputType = HttpObject;
  using Output = std::vector<HttpObject>;
  using EncoderInputType = HttpObject;

  explicit HttpClientCodec(const HttpDecoderOptions& options = {},
                           ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : decoder_(options, alloc), encoder_(alloc) {}

  template <class In, class OnError>
  void channelRead(In&& in, Output& out, OnError&& onError) {
    decoder_.channelRead(std::forward<In>(in), out, onError);
  }
  template <class In>
  void channelRead(In&& in, Output& out) {
    channelRead(std::forward<In>(in), out, RethrowCodecError{});
  }
  void channelReadComplete() { decoder_.channelReadComplete(); }
  template <class OnError>
  void channelInactive(Output& out, OnError&& onError) {
    decoder_.channelInactive(out, onError);
  }
  void channelInactive(Output& out) { channelInactive(out, RethrowCodecError{}); }

  void write(HttpObject msg, std::vector<AnyByteBuf>& out) {
    if (const auto* r = std::get_if<HttpRequest>(&msg)) decoder_.pushRequestMethod(r->method());
    if (const auto* r = std::get_if<FullHttpRequest>(&msg)) decoder_.pushRequestMethod(r->method());
    encoder_.write(std::move(msg), out);
  }

  HttpResponseDecoder& decoder() noexcept { return decoder_; }
  HttpRequestEncoder& encoder() noexcept { return encoder_; }

 private:
  HttpResponseDecoder decoder_;
  HttpRequestEncoder encoder_;
};

}  // namespace netbuf
