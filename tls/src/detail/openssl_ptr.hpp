#pragma once
// unique_ptr aliases for the OpenSSL objects the tls sources own for a scope, and the text of
// OpenSSL's thread-local error queue (drained: the next call must find it empty).

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <cstring>
#include <memory>
#include <string>

namespace netbuf::detail {

template <class T, void (*Free)(T*)>
struct OpenSslDeleter {
  void operator()(T* p) const noexcept { Free(p); }
};

using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509, X509_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY, EVP_PKEY_free>>;

/// Every error queued on this thread, "; "-separated, oldest first; the queue is left empty.
inline std::string drainOpenSslErrors() {
  std::string out;
  char buf[256];
  while (const unsigned long e = ERR_get_error()) {
    // The reason alone ("certificate verify failed") reads best; for a system call's error, the
    // errno's text; the coded form when OpenSSL has no text. Repeats are left out.
    const char* reason = ERR_GET_LIB(e) == ERR_LIB_SYS ? std::strerror(ERR_GET_REASON(e))
                                                       : ERR_reason_error_string(e);
    if (reason == nullptr) {
      ERR_error_string_n(e, buf, sizeof buf);
      reason = buf;
    }
    if (out.find(reason) != std::string::npos) continue;
    if (!out.empty()) out += "; ";
    out += reason;
  }
  return out;
}

}  // namespace netbuf::detail
