#include <netbuf/tls/ssl_errc.hpp>

#include <doctest/doctest.h>

#include <netbuf/tls/ssl_error.hpp>

#include <set>
#include <string>

using namespace netbuf;

TEST_CASE("every SslErrc has its own message in the netbuf.ssl category") {
  std::set<std::string> messages;
  for (int v = static_cast<int>(SslErrc::handshakeFailed);
       v <= static_cast<int>(SslErrc::badConfiguration); ++v) {
    const std::error_code ec = static_cast<SslErrc>(v);
    CHECK(std::string(ec.category().name()) == "netbuf.ssl");
    CHECK(ec.message() != "unknown TLS error");
    messages.insert(ec.message());
  }
  CHECK(messages.size() == static_cast<std::size_t>(static_cast<int>(SslErrc::badConfiguration)));
  CHECK(std::error_code(SslErrc::certificateExpired).message() ==
        "the peer's certificate has expired");
  CHECK(std::error_code(static_cast<SslErrc>(999)).message() == "unknown TLS error");
}

TEST_CASE("SslError carries the code and the detail") {
  SslError e(SslErrc::unknownCa, "self-signed certificate");
  CHECK(e.code() == SslErrc::unknownCa);
  CHECK(std::string(e.what()) ==
        "the peer's certificate does not chain to a trusted root: self-signed certificate");
  CHECK(std::string(SslError(SslErrc::truncated, "").what()) ==
        "the connection closed without a TLS close_notify");
}
