#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <ctime>
#include <netbuf/tls/ssl_certificate.hpp>
#include <utility>

#include "detail/openssl_ptr.hpp"

namespace netbuf {

namespace {

std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

std::string nameText(const X509_NAME* name) {
  if (name == nullptr) return {};
  detail::BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) throw std::bad_alloc();
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  return bioText(bio.get());
}

std::chrono::system_clock::time_point timeOf(const ASN1_TIME* t) {
  struct tm tm {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

template <class Fn>
void forEachAltName(x509_st* cert, Fn&& fn) {
  if (cert == nullptr) return;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) fn(*sk_GENERAL_NAME_value(names, i));
  GENERAL_NAMES_free(names);
}

}  // namespace

SslCertificate::SslCertificate(x509_st* cert) noexcept : cert_(cert) {
  if (cert_ != nullptr) X509_up_ref(cert_);
}

SslCertificate::SslCertificate(const SslCertificate& o) noexcept : SslCertificate(o.cert_) {}

SslCertificate::SslCertificate(SslCertificate&& o) noexcept
    : cert_(std::exchange(o.cert_, nullptr)) {}

SslCertificate& SslCertificate::operator=(SslCertificate o) noexcept {
  std::swap(cert_, o.cert_);
  return *this;
}

SslCertificate::~SslCertificate() {
  if (cert_ != nullptr) X509_free(cert_);
}

std::string SslCertificate::subject() const {
  return cert_ != nullptr ? nameText(X509_get_subject_name(cert_)) : std::string();
}

std::string SslCertificate::issuer() const {
  return cert_ != nullptr ? nameText(X509_get_issuer_name(cert_)) : std::string();
}

std::string SslCertificate::commonName() const {
  if (cert_ == nullptr) return {};
  const X509_NAME* name = X509_get_subject_name(cert_);
  const int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (i < 0) return {};
  const ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, s);
  if (n < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

std::vector<std::string> SslCertificate::dnsNames() const {
  std::vector<std::string> out;
  forEachAltName(cert_, [&](const GENERAL_NAME& n) {
    if (n.type != GEN_DNS) return;
    const ASN1_STRING* s = n.d.dNSName;
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<std::size_t>(ASN1_STRING_length(s)));
  });
  return out;
}

std::vector<std::string> SslCertificate::ipAddresses() const {
  std::vector<std::string> out;
  forEachAltName(cert_, [&](const GENERAL_NAME& n) {
    if (n.type != GEN_IPADD) return;
    const int len = n.d.iPAddress->length;
    if (len != 4 && len != 16) return;
    char text[INET6_ADDRSTRLEN];
    if (inet_ntop(len == 4 ? AF_INET : AF_INET6, n.d.iPAddress->data, text, sizeof text) !=
        nullptr) {
      out.emplace_back(text);
    }
  });
  return out;
}

std::string SslCertificate::serialNumber() const {
  if (cert_ == nullptr) return {};
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert_), nullptr);
  if (bn == nullptr) return {};
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

std::chrono::system_clock::time_point SslCertificate::notBefore() const {
  return cert_ != nullptr ? timeOf(X509_get0_notBefore(cert_))
                          : std::chrono::system_clock::time_point();
}

std::chrono::system_clock::time_point SslCertificate::notAfter() const {
  return cert_ != nullptr ? timeOf(X509_get0_notAfter(cert_))
                          : std::chrono::system_clock::time_point();
}

std::vector<std::byte> SslCertificate::der() const {
  if (cert_ == nullptr) return {};
  const int n = i2d_X509(cert_, nullptr);
  if (n <= 0) return {};
  std::vector<std::byte> out(static_cast<std::size_t>(n));
  auto* p = reinterpret_cast<unsigned char*>(out.data());
  i2d_X509(cert_, &p);
  return out;
}

std::string SslCertificate::pem() const {
  if (cert_ == nullptr) return {};
  detail::BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) throw std::bad_alloc();
  PEM_write_bio_X509(bio.get(), cert_);
  return bioText(bio.get());
}

}  // namespace netbuf
