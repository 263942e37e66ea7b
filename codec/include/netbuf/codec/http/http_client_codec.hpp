#pragma once
// HttpClientCodec: HttpRequestEncoder and HttpResponseDecoder as one duplex codec (Netty's class
// of the same name). The encoder tells the decoder the method of every request it writes, so the
// response to HEAD is read without content and a 2xx to CONNECT switches to raw bytes.

#include <netbuf/codec/http/http_request_encoder.hpp>
#include <netbuf/codec/http/http_response_decoder.hpp>
#include <optional>
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

  // Constrained to what the decoder reads, so that callers probing for channelRead (DecoderRunner,
  // pipelines) see the codec's real input types.
  template <class In, class OnError>
  requires requires(HttpResponseDecoder& d, In&& in, Output& out, OnError&& onError) {
    d.channelRead(std::forward<In>(in), out, onError);
  }
  void channelRead(In&& in, Output& out, OnError&& onError) {
    decoder_.channelRead(std::forward<In>(in), out, onError);
  }
  template <class In>
  requires requires(HttpResponseDecoder& d, In&& in, Output& out) {
    d.channelRead(std::forward<In>(in), out);
  }
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
    // The method is told to the decoder once the request is encoded: a request the encoder refuses
    // is never sent, and must not be paired with a response. (Only the id matters to the decoder;
    // an extension method's name views the request, which the encoder consumes.)
    std::optional<HttpMethod::Id> method;
    if (const auto* r = std::get_if<HttpRequest>(&msg)) method = r->method().id();
    if (const auto* r = std::get_if<FullHttpRequest>(&msg)) method = r->method().id();
    encoder_.write(std::move(msg), out);
    if (method) decoder_.pushRequestMethod(HttpMethod::of(*method));
  }

  HttpResponseDecoder& decoder() noexcept { return decoder_; }
  HttpRequestEncoder& encoder() noexcept { return encoder_; }

 private:
  HttpResponseDecoder decoder_;
  HttpRequestEncoder encoder_;
};

}  // namespace netbuf
