#pragma once
// What HttpServerCodec and HttpClientCodec share: a decoder and an encoder driven as one duplex
// codec (typedefs, the framework's events forwarded to the decoder, accessors). Derived provides
// the three-argument channelRead and write, which differ: each side tells the other the request
// methods it sees.

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <utility>
#include <vector>

namespace netbuf::detail {

template <class Derived, class Decoder, class Encoder>
class HttpDuplexCodec {
 public:
  using InputType = ByteBuf;
  using OutputType = HttpObject;
  using Output = std::vector<HttpObject>;
  using EncoderInputType = HttpObject;

  HttpDuplexCodec(const HttpDecoderOptions& options, ByteBufAllocator& alloc)
      : decoder_(options, alloc), encoder_(alloc) {}

  // Constrained to what the decoder reads, so that callers probing for channelRead (DecoderRunner,
  // pipelines) see the codec's real input types.
  template <class In>
  requires requires(Decoder& d, In&& in, Output& out) { d.channelRead(std::forward<In>(in), out); }
  void channelRead(In&& in, Output& out) {
    static_cast<Derived&>(*this).channelRead(std::forward<In>(in), out, RethrowCodecError{});
  }
  void channelReadComplete() { decoder_.channelReadComplete(); }
  template <class OnError>
  void channelInactive(Output& out, OnError&& onError) {
    decoder_.channelInactive(out, onError);
  }
  void channelInactive(Output& out) { channelInactive(out, RethrowCodecError{}); }

  Decoder& decoder() noexcept { return decoder_; }
  Encoder& encoder() noexcept { return encoder_; }

 protected:
  ~HttpDuplexCodec() = default;
  HttpDuplexCodec(HttpDuplexCodec&&) noexcept = default;
  HttpDuplexCodec& operator=(HttpDuplexCodec&&) noexcept = default;

  Decoder decoder_;
  Encoder encoder_;
};

}  // namespace netbuf::detail
