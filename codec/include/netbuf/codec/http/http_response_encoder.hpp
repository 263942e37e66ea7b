#pragma once
// HttpResponseEncoder: HttpResponse / HttpContent / LastHttpContent / FullHttpResponse to bytes
// (Netty's class of the same name); see detail/http_object_encoder.hpp for framing, the automatic
// Content-Length and zero-copy content. pushRequestMethod() tells it the method of each request
// being answered, in order (HttpServerCodec does), so a response to HEAD carries no content.

#include <netbuf/codec/http/detail/http_object_encoder.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <netbuf/codec/message_to_message_encoder.hpp>
#include <vector>

namespace netbuf {

class HttpResponseEncoder : public MessageToMessageEncoder<HttpResponseEncoder, HttpObject> {
 public:
  using MessageToMessageEncoder::MessageToMessageEncoder;

  void encode(HttpObject msg, std::vector<AnyByteBuf>& out) {
    core_.encode(true, std::move(msg), out, alloc());
  }
  void pushRequestMethod(HttpMethod method) { core_.pushRequestMethod(method.id()); }

 private:
  detail::HttpObjectEncoder core_;
};

}  // namespace netbuf
