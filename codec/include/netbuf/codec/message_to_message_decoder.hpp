#pragma once
// MessageToMessageDecoder: decodes one message into zero or more others (Netty's class of the same
// name), e.g. a frame into a string. The counterpart of ByteToMessageDecoder for decoders that do
// not need a byte cumulation; it presents the same interface, so DecoderHandler and DecoderRunner
// drive both.
//
// Derived provides `void decode(In msg, std::vector<Out>& out)`. A CodecError it throws goes to the
// error handler (the two-argument channelRead rethrows it); the message is consumed either way
// (its handles are released when decode returns or throws). Other exceptions propagate.

#include <exception>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <utility>
#include <vector>

namespace netbuf {

template <class Derived, class In, class Out>
class MessageToMessageDecoder {
 public:
  using InputType = In;
  using OutputType = Out;
  using Output = std::vector<Out>;

  template <class OnError>
  void channelRead(In msg, Output& out, OnError&& onError) {
    try {
      static_cast<Derived&>(*this).decode(std::move(msg), out);
    } catch (const CodecError&) {
      onError(std::current_exception());
    }
  }
  void channelRead(In msg, Output& out) { channelRead(std::move(msg), out, RethrowCodecError{}); }
  /// Nothing is accumulated, so the end of a batch and the end of the stream have nothing to do.
  void channelReadComplete() noexcept {}
  template <class OnError>
  void channelInactive(Output&, OnError&&) noexcept {}
  void channelInactive(Output&) noexcept {}

 protected:
  ~MessageToMessageDecoder() = default;
};

}  // namespace netbuf
