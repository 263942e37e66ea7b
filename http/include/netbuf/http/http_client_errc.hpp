#pragma once
// HttpClientErrc: why an HttpClient request failed, as the ErrorCode of its completion. Errors of
// the transport (connection refused, reset) arrive as Asio's codes; a connection that closed
// before the whole response arrived is ChannelErrc::closed; a TLS handshake that failed is its
// SslErrc.

#include <system_error>

namespace netbuf {

enum class HttpClientErrc : int {
  /// The URL is not "http://host[:port][/path]" or "https://..." (other schemes included).
  invalidUrl = 1,
  /// The response broke HTTP/1.1 (the decoder's HttpDecoderError); the connection was closed.
  malformedResponse,
  /// The response's content is over Options::maxContentLength.
  responseTooLarge,
  /// No response within Options::requestTimeout; the connection was closed.
  timedOut,
  /// More than Options::maxRedirects redirects.
  tooManyRedirects,
  /// HttpClient::close() ran (or the client was destroyed) before the response came.
  clientClosed,
};

const std::error_category& httpClientCategory() noexcept;

inline std::error_code make_error_code(HttpClientErrc e) noexcept {
  return {static_cast<int>(e), httpClientCategory()};
}

}  // namespace netbuf

template <>
struct std::is_error_code_enum<netbuf::HttpClientErrc> : std::true_type {};
