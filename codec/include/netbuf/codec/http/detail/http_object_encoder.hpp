#pragma once
// The encoding shared by HttpRequestEncoder and HttpResponseEncoder (Netty's HttpObjectEncoder).
//
// Each head is sized first and written with one ensureWritable and memcpy's (status lines, names
// and values are already bytes). Content: a message whose head says "Transfer-Encoding: chunked"
// has its HttpContent parts framed as chunks and its LastHttpContent as the last chunk with the
// trailers; otherwise content goes out as is. Content up to kCopyThreshold bytes is copied behind
// the head (one buffer, one iovec); larger content follows as its own buffer (zero copy, gathered
// into the same writev by the channel).
//
// Full messages: when a FullHttp* has neither Content-Length nor Transfer-Encoding, the encoder
// writes "content-length: N" (if the message may have content), so a handler need not count.
// Responses to HEAD (the encoder is told the request methods, see pushRequestMethod), and 1xx,
// 204 and 304 responses, go out without their content bytes, keeping their headers.

#include <cstdint>
#include <deque>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/http/http_method.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <string_view>
#include <vector>

namespace netbuf::detail {

class HttpObjectEncoder {
 public:
  static constexpr std::size_t kCopyThreshold = 4096;

  /// Encodes msg into out (one or two buffers per message). Throws EncoderError for an HttpContent
  /// outside a message, a head inside one, or a request object given to a response encoder and
  /// the other way round.
  void encode(bool responses, HttpObject&& msg, std::vector<AnyByteBuf>& out,
              ByteBufAllocator& alloc);

  /// Appends a whole response to dst (the server's batched path: many responses, one buffer).
  /// headRequest: the request was HEAD (no content bytes).
  /// extraFields: "name: value\r\n" lines written after the response's own fields, unchecked
  /// (the server's date and connection fields, formatted without touching the response).
  static void appendResponse(ByteBuf& dst, const FullHttpResponse& response, bool headRequest,
                             std::string_view extraFields = {});

  void pushRequestMethod(HttpMethod::Id method) { methods_.push_back(method); }

 private:
  enum class Framing : std::uint8_t { None, Raw, Chunked, Suppressed };
  void encodeContent(const ByteBuf& content, bool last, const HttpHeaders* trailers, ByteBuf& head,
                     std::vector<AnyByteBuf>& out, ByteBufAllocator& alloc, ByteBuf&& owned);
  bool nextIsHead(std::uint16_t status);

  Framing framing_ = Framing::None;  // None: between messages
  std::deque<HttpMethod::Id> methods_;
};

}  // namespace netbuf::detail
