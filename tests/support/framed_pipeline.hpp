#pragma once
// A two-stage decoder pipeline for DecoderRunner, for the tests of per-frame decoders: a frame
// decoder (a ByteToMessageDecoder emitting AnyByteBuf frames) followed by a MessageToMessageDecoder
// of those frames. Frames are handed on after each read, and before any error of the frame
// decoder is reported, so messages and errors come out in stream order (as a pipeline fires them).

#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>

#include <exception>
#include <utility>
#include <vector>

namespace netbuf::test {

template <class Framer, class Decoder>
struct FramedPipeline {
  using OutputType = typename Decoder::OutputType;
  using Output = std::vector<OutputType>;

  explicit FramedPipeline(Framer f, Decoder d = Decoder())
      : framer(std::move(f)), decoder(std::move(d)) {}

  template <class OnError>
  void channelRead(ByteBuf in, Output& out, OnError&& onError) {
    auto inOrder = [&](std::exception_ptr e) {
      forward(out, onError);
      onError(std::move(e));
    };
    framer.channelRead(std::move(in), frames, inOrder);
    forward(out, onError);
  }
  void channelRead(ByteBuf in, Output& out) {
    channelRead(std::move(in), out, RethrowCodecError{});
  }
  void channelReadComplete() {
    framer.channelReadComplete();
    decoder.channelReadComplete();
  }
  template <class OnError>
  void channelInactive(Output& out, OnError&& onError) {
    auto inOrder = [&](std::exception_ptr e) {
      forward(out, onError);
      onError(std::move(e));
    };
    framer.channelInactive(frames, inOrder);
    forward(out, onError);
    decoder.channelInactive(out, onError);
  }

  template <class OnError>
  void forward(Output& out, OnError& onError) {
    for (AnyByteBuf& f : frames) decoder.channelRead(std::move(f), out, onError);
    frames.clear();
  }

  Framer framer;
  Decoder decoder;
  std::vector<AnyByteBuf> frames;  // the framer's output not yet handed on
};

}  // namespace netbuf::test
