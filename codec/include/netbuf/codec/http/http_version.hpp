#pragma once
// HttpVersion: the protocol version of a message (Netty's HttpVersion). netbuf speaks HTTP/1.0 and
// HTTP/1.1; a request of another HTTP/1.x minor version is handled as HTTP/1.1 (RFC 9110 §6.2),
// and other major versions are refused by the decoders (505).

#include <cstdint>
#include <string_view>

namespace netbuf {

class HttpVersion {
 public:
  constexpr HttpVersion() noexcept : HttpVersion(1, 1) {}
  constexpr HttpVersion(std::uint8_t major, std::uint8_t minor) noexcept
      : major_(major), minor_(minor) {}

  static const HttpVersion HTTP_1_0;
  static const HttpVersion HTTP_1_1;

  constexpr std::uint8_t majorVersion() const noexcept { return major_; }
  constexpr std::uint8_t minorVersion() const noexcept { return minor_; }
  /// "HTTP/1.1" (1.0 and 1.1 only; the decoders never produce another).
  constexpr std::string_view text() const noexcept {
    return minor_ == 0 ? std::string_view("HTTP/1.0") : std::string_view("HTTP/1.1");
  }
  /// Persistent connections are the default from HTTP/1.1 on (RFC 9112 §9.3).
  constexpr bool isKeepAliveDefault() const noexcept { return major_ > 1 || minor_ >= 1; }

  friend constexpr bool operator==(HttpVersion, HttpVersion) noexcept = default;

 private:
  std::uint8_t major_;
  std::uint8_t minor_;
};

inline constexpr HttpVersion HttpVersion::HTTP_1_0{1, 0};
inline constexpr HttpVersion HttpVersion::HTTP_1_1{1, 1};

}  // namespace netbuf
