#pragma once
// HttpRequest: the head of a request (request line and header fields), without its content
// (Netty's HttpRequest). The decoder emits one, followed by HttpContent parts and a
// LastHttpContent; FullHttpRequest carries head and content together.
//
// The method name (of an extension method) and the target are stored in headers()' text stores:
// a decoded request views the bytes it arrived in, a built one owns copies. See http_headers.hpp
// for how long views stay valid.

#include <netbuf/codec/http/http_headers.hpp>
#include <netbuf/codec/http/http_method.hpp>
#include <netbuf/codec/http/http_version.hpp>
#include <string_view>
#include <utility>

namespace netbuf {

class HttpRequest {
 public:
  HttpRequest() = default;
  /// A request to send: copies uri (and an extension method's name).
  HttpRequest(HttpMethod method, std::string_view uri, HttpVersion version = HttpVersion::HTTP_1_1)
      : version_(version), methodId_(method.id()) {
    if (method.isExtension()) methodName_ = headers_.storeText(method.name());
    uri_ = headers_.storeText(uri);
  }
  /// A decoded request: text already in headers' stores.
  HttpRequest(HttpMethod::Id method, HttpHeaders::TextRef methodName, HttpHeaders::TextRef uri,
              HttpVersion version, HttpHeaders headers) noexcept
      : headers_(std::move(headers)),
        methodName_(methodName),
        uri_(uri),
        version_(version),
        methodId_(method) {}

  HttpMethod method() const noexcept {
    return methodId_ == HttpMethod::Id::Other ? HttpMethod(methodId_, headers_.text(methodName_))
                                              : HttpMethod::of(methodId_);
  }
  /// The request target as received (origin-form "/path?query", absolute-form, authority-form or
  /// "*"); not decoded.
  std::string_view uri() const noexcept { return headers_.text(uri_); }
  HttpVersion protocolVersion() const noexcept { return version_; }
  HttpHeaders& headers() noexcept { return headers_; }
  const HttpHeaders& headers() const noexcept { return headers_; }

  void setMethod(HttpMethod method) {
    methodId_ = method.id();
    if (method.isExtension()) methodName_ = headers_.storeText(method.name());
  }
  void setUri(std::string_view uri) { uri_ = headers_.storeText(uri); }
  void setProtocolVersion(HttpVersion version) noexcept { version_ = version; }

 private:
  HttpHeaders headers_;
  HttpHeaders::TextRef methodName_;
  HttpHeaders::TextRef uri_;
  HttpVersion version_;
  HttpMethod::Id methodId_ = HttpMethod::Id::Get;
};

}  // namespace netbuf
