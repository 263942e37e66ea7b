#pragma once
// HttpResponseStatus: a status code and its reason phrase (Netty's HttpResponseStatus). Constants
// for the codes netbuf's codec and server produce; valueOf() gives the registered reason phrase of
// any code (RFC 9110 §15), or "Unknown Status".
//
// Ownership: reasonPhrase() of a constant or of valueOf() is static; a status decoded from a
// response views the response's storage (keep the response alive, or copy it).

#include <cstdint>
#include <string_view>

namespace netbuf {

class HttpResponseStatus {
 public:
  constexpr HttpResponseStatus() noexcept : HttpResponseStatus(200, "OK") {}
  constexpr HttpResponseStatus(std::uint16_t code, std::string_view reasonPhrase) noexcept
      : reason_(reasonPhrase), code_(code) {}

  /// The registered reason phrase of code ("Unknown Status" for an unregistered one).
  static std::string_view reasonPhraseOf(std::uint16_t code) noexcept;
  /// code with its registered reason phrase.
  static HttpResponseStatus valueOf(std::uint16_t code) noexcept {
    return HttpResponseStatus(code, reasonPhraseOf(code));
  }

  constexpr std::uint16_t code() const noexcept { return code_; }
  constexpr std::string_view reasonPhrase() const noexcept { return reason_; }
  /// 1 for 1xx, 2 for 2xx, ...
  constexpr int codeClass() const noexcept { return code_ / 100; }
  /// 1xx, 204 and 304 responses never have content (RFC 9112 §6.3).
  constexpr bool mayHaveContent() const noexcept {
    return code_ >= 200 && code_ != 204 && code_ != 304;
  }

  /// Equal codes (the reason phrase is not compared, as in Netty).
  friend constexpr bool operator==(const HttpResponseStatus& a, const HttpResponseStatus& b) {
    return a.code_ == b.code_;
  }

  static const HttpResponseStatus CONTINUE;
  static const HttpResponseStatus SWITCHING_PROTOCOLS;
  static const HttpResponseStatus OK;
  static const HttpResponseStatus CREATED;
  static const HttpResponseStatus NO_CONTENT;
  static const HttpResponseStatus PARTIAL_CONTENT;
  static const HttpResponseStatus MOVED_PERMANENTLY;
  static const HttpResponseStatus FOUND;
  static const HttpResponseStatus NOT_MODIFIED;
  static const HttpResponseStatus BAD_REQUEST;
  static const HttpResponseStatus FORBIDDEN;
  static const HttpResponseStatus NOT_FOUND;
  static const HttpResponseStatus METHOD_NOT_ALLOWED;
  static const HttpResponseStatus REQUEST_TIMEOUT;
  static const HttpResponseStatus LENGTH_REQUIRED;
  static const HttpResponseStatus REQUEST_ENTITY_TOO_LARGE;
  static const HttpResponseStatus REQUEST_URI_TOO_LONG;
  static const HttpResponseStatus REQUESTED_RANGE_NOT_SATISFIABLE;
  static const HttpResponseStatus EXPECTATION_FAILED;
  static const HttpResponseStatus REQUEST_HEADER_FIELDS_TOO_LARGE;
  static const HttpResponseStatus INTERNAL_SERVER_ERROR;
  static const HttpResponseStatus NOT_IMPLEMENTED;
  static const HttpResponseStatus SERVICE_UNAVAILABLE;
  static const HttpResponseStatus HTTP_VERSION_NOT_SUPPORTED;

 private:
  std::string_view reason_;
  std::uint16_t code_;
};

inline constexpr HttpResponseStatus HttpResponseStatus::CONTINUE{100, "Continue"};
inline constexpr HttpResponseStatus HttpResponseStatus::SWITCHING_PROTOCOLS{101,
                                                                            "Switching Protocols"};
inline constexpr HttpResponseStatus HttpResponseStatus::OK{200, "OK"};
inline constexpr HttpResponseStatus HttpResponseStatus::CREATED{201, "Created"};
inline constexpr HttpResponseStatus HttpResponseStatus::NO_CONTENT{204, "No Content"};
inline constexpr HttpResponseStatus HttpResponseStatus::PARTIAL_CONTENT{206, "Partial Content"};
inline constexpr HttpResponseStatus HttpResponseStatus::MOVED_PERMANENTLY{301, "Moved Permanently"};
inline constexpr HttpResponseStatus HttpResponseStatus::FOUND{302, "Found"};
inline constexpr HttpResponseStatus HttpResponseStatus::NOT_MODIFIED{304, "Not Modified"};
inline constexpr HttpResponseStatus HttpResponseStatus::BAD_REQUEST{400, "Bad Request"};
inline constexpr HttpResponseStatus HttpResponseStatus::FORBIDDEN{403, "Forbidden"};
inline constexpr HttpResponseStatus HttpResponseStatus::NOT_FOUND{404, "Not Found"};
inline constexpr HttpResponseStatus HttpResponseStatus::METHOD_NOT_ALLOWED{405,
                                                                           "Method Not Allowed"};
inline constexpr HttpResponseStatus HttpResponseStatus::REQUEST_TIMEOUT{408, "Request Timeout"};
inline constexpr HttpResponseStatus HttpResponseStatus::LENGTH_REQUIRED{411, "Length Required"};
inline constexpr HttpResponseStatus HttpResponseStatus::REQUEST_ENTITY_TOO_LARGE{
    413, "Content Too Large"};
inline constexpr HttpResponseStatus HttpResponseStatus::REQUEST_URI_TOO_LONG{414, "URI Too Long"};
inline constexpr HttpResponseStatus HttpResponseStatus::REQUESTED_RANGE_NOT_SATISFIABLE{
    416, "Range Not Satisfiable"};
inline constexpr HttpResponseStatus HttpResponseStatus::EXPECTATION_FAILED{417,
                                                                           "Expectation Failed"};
inline constexpr HttpResponseStatus HttpResponseStatus::REQUEST_HEADER_FIELDS_TOO_LARGE{
    431, "Request Header Fields Too Large"};
inline constexpr HttpResponseStatus HttpResponseStatus::INTERNAL_SERVER_ERROR{
    500, "Internal Server Error"};
inline constexpr HttpResponseStatus HttpResponseStatus::NOT_IMPLEMENTED{501, "Not Implemented"};
inline constexpr HttpResponseStatus HttpResponseStatus::SERVICE_UNAVAILABLE{503,
                                                                            "Service Unavailable"};
inline constexpr HttpResponseStatus HttpResponseStatus::HTTP_VERSION_NOT_SUPPORTED{
    505, "HTTP Version Not Supported"};

}  // namespace netbuf
