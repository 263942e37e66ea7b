#pragma once
// HttpResponse: the head of a response (status line and header fields), without its content
// (Netty's HttpResponse). The reason phrase of a decoded response views its own storage.

#include <cstdint>
#include <netbuf/codec/http/http_headers.hpp>
#include <netbuf/codec/http/http_response_status.hpp>
#include <netbuf/codec/http/http_version.hpp>
#include <utility>

namespace netbuf {

class HttpResponse {
 public:
  HttpResponse() = default;
  /// A response to send; a constant's reason phrase is static, another is copied.
  explicit HttpResponse(HttpResponseStatus status, HttpVersion version = HttpVersion::HTTP_1_1)
      : version_(version), code_(status.code()) {
    setReason(status.reasonPhrase());
  }
  /// A decoded response: reason already in headers' stores.
  HttpResponse(std::uint16_t code, HttpHeaders::TextRef reason, HttpVersion version,
               HttpHeaders headers) noexcept
      : headers_(std::move(headers)), reason_(reason), version_(version), code_(code) {}

  HttpResponseStatus status() const noexcept {
    return HttpResponseStatus(code_, reason_.offset == kRegisteredReason
                                         ? HttpResponseStatus::reasonPhraseOf(code_)
                                         : headers_.text(reason_));
  }
  HttpVersion protocolVersion() const noexcept { return version_; }
  HttpHeaders& headers() noexcept { return headers_; }
  const HttpHeaders& headers() const noexcept { return headers_; }

  void setStatus(HttpResponseStatus status) {
    code_ = status.code();
    setReason(status.reasonPhrase());
  }
  void setProtocolVersion(HttpVersion version) noexcept { version_ = version; }

 private:
  void setReason(std::string_view reason) {
    // The registered phrase of a code is static (no copy); any other is stored.
    if (reason == HttpResponseStatus::reasonPhraseOf(code_)) {
      reason_ = {kRegisteredReason, 0};
    } else {
      reason_ = headers_.storeText(reason);
    }
  }

  // reason_.offset == kRegisteredReason: the code's registered phrase (static, nothing stored).
  static constexpr std::uint32_t kRegisteredReason = UINT32_MAX;

  HttpHeaders headers_;
  HttpHeaders::TextRef reason_{kRegisteredReason, 0};
  HttpVersion version_;
  std::uint16_t code_ = 200;
};

}  // namespace netbuf
