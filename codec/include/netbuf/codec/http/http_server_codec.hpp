#pragma once
// HttpServerCodec: HttpRequestDecoder and HttpResponseEncoder as one duplex codec (Netty's class
// of the same name). The decoder tells the encoder the method of every request it decodes, so
// the response to a HEAD request goes out without content, and pipelined responses pair with
// their requests in order. Drive it as a decoder (channelRead...) and an encoder (write); the
// http module's HttpServer installs it in a pipeline.

#include <netbuf/codec/http/http_request_decoder.hpp>
#include <netbuf/codec/http/http_response_encoder.hpp>
#include <utility>
#include <vector>

namespace netbuf {

class HttpServerCodec {
 public:
  using InputType = ByteBuf;
  using OutputType = HttpObject;
  using Output = std::vector<HttpObject>;
  using EncoderInputType = HttpObject;

  explicit HttpServerCodec(const HttpDecoderOptions& options = {},
                           ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : decoder_(options, alloc), encoder_(alloc) {}

  // Constrained to what the decoder reads, so that callers probing for channelRead (DecoderRunner,
  // pipelines) see the codec's real input types.
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
  template <class In>
  requires requires(HttpRequestDecoder& d, In&& in, Output& out) {
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

  void write(HttpObject msg, std::vector<AnyByteBuf>& out) { encoder_.write(std::move(msg), out); }

  HttpRequestDecoder& decoder() noexcept { return decoder_; }
  HttpResponseEncoder& encoder() noexcept { return encoder_; }

 private:
  void noteRequests(const Output& out, std::size_t from) {
    for (std::size_t i = from; i < out.size(); ++i) {
      if (const auto* r = std::get_if<HttpRequest>(&out[i]))
        encoder_.pushRequestMethod(r->method());
    }
  }

  HttpRequestDecoder decoder_;
  HttpResponseEncoder encoder_;
};

}  // namespace netbuf
