#pragma once
// SslError: a TLS failure as an exception, for code that reports failures by throwing (SslContext
// when a certificate or key does not load; SslHandler's users who rethrow an event's error).
// code() is the reason; what() adds OpenSSL's detail ("certificate has expired", the alert text).

#include <netbuf/buffer/error.hpp>
#include <netbuf/tls/ssl_errc.hpp>
#include <string>

namespace netbuf {

class SslError : public Error {
 public:
  SslError(SslErrc code, const std::string& detail);
  SslErrc code() const noexcept { return code_; }

 private:
  SslErrc code_;
};

}  // namespace netbuf
