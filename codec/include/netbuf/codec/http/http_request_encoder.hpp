#pragma once
// HttpRequestEncoder: HttpRequest / HttpContent / LastHttpContent / FullHttpRequest to bytes
// (Netty's class of the same name); see detail/http_object_encoder.hpp. A FullHttpRequest with
// content (or a POST, PUT or PATCH) and without framing headers gets "content-length: N".

#include <netbuf/codec/http/detail/http_object_encoder.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <netbuf/codec/message_to_message_encoder.hpp>
#include <vector>

namespace netbuf {

class HttpRequestEncoder : public MessageToMessageEncoder<HttpRequestEncoder, HttpObject> {
 public:
  using MessageToMessageEncoder::MessageToMessageEncoder;

  void encode(HttpObject msg, std::vector<AnyByteBuf>& out) {
    core_.encode(false, std::move(msg), out, alloc());
  }

 private:
  detail::HttpObjectEncoder core_;
};

}  // namespace netbuf
