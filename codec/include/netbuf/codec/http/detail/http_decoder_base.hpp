#pragma once
// What HttpRequestDecoder and HttpResponseDecoder share: the framework (a Merge cumulation:
// heads are parsed as contiguous bytes), the state machine of http_object_decoder.hpp, the
// options, and the end of stream (a message cut short is reported; a close-delimited response
// is completed). Derived adds only what is its own (the response decoder's request methods).

#include <exception>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/http/detail/http_object_decoder.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <vector>

namespace netbuf::detail {

[[noreturn]] void throwHttpNeedsMerge();

template <class Derived, HttpObjectDecoder::Kind kKind>
class HttpDecoderBase : public ByteToMessageDecoder<Derived, HttpObject> {
  using Base = ByteToMessageDecoder<Derived, HttpObject>;

 public:
  explicit HttpDecoderBase(const HttpDecoderOptions& options, ByteBufAllocator& alloc)
      : Base(Cumulator::Merge, alloc), core_(kKind, options) {}

  const HttpDecoderOptions& options() const noexcept { return core_.options(); }
  /// Changes take effect from the next byte decoded.
  HttpDecoderOptions& options() noexcept { return core_.options(); }
  /// True after an error: every later byte is discarded.
  bool isDiscarding() const noexcept { return core_.state() == HttpObjectDecoder::State::Discard; }

  void decode(ByteBuf& in, std::vector<HttpObject>& out) {
    core_.decode(in, out, this->streamOffset(in));
  }
  void decode(CompositeByteBuf&, std::vector<HttpObject>&) { throwHttpNeedsMerge(); }

  /// End of stream: the framework's last decode, then a close-delimited response completed (its
  /// LastHttpContent) or a message cut short reported (HttpDecoderError
  /// "premature-end-of-stream").
  template <class OnError>
  void channelInactive(std::vector<HttpObject>& out, OnError&& onError) {
    Base::channelInactive(out, onError);
    try {
      core_.endOfStream(out, this->bytesConsumed());
    } catch (const CodecError&) {
      onError(std::current_exception());
    }
  }
  void channelInactive(std::vector<HttpObject>& out) { channelInactive(out, RethrowCodecError{}); }

 protected:
  HttpObjectDecoder core_;
};

}  // namespace netbuf::detail
