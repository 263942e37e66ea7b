#include <netbuf/tls/ssl_certificate.hpp>

#include <doctest/doctest.h>
#include <openssl/pem.h>

#include <chrono>
#include <string>

#include "support/test_certificates.hpp"

using namespace netbuf;
using namespace netbuf::test;

namespace {

SslCertificate parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  SslCertificate cert(x);  // takes its own reference
  X509_free(x);
  return cert;
}

}  // namespace

TEST_CASE("an empty certificate answers empty") {
  SslCertificate c;
  CHECK(c.empty());
  CHECK(!c);
  CHECK(c.subject().empty());
  CHECK(c.commonName().empty());
  CHECK(c.dnsNames().empty());
  CHECK(c.der().empty());
  CHECK(c.pem().empty());
  CHECK(c.native() == nullptr);
}

TEST_CASE("the fields of a certificate") {
  TestCa ca("netbuf test CA");
  CertificateSpec spec;
  spec.commonName = "api.example";
  spec.dnsNames = {"api.example", "*.api.example"};
  spec.ipAddresses = {"10.0.0.1", "2001:db8::1"};
  spec.notBefore = std::chrono::hours(-1);
  spec.notAfter = std::chrono::hours(24);
  const auto now = std::chrono::system_clock::now();
  const TestKeyPair pair = ca.issue(spec);
  SslCertificate c = parse(pair.certPem);
  REQUIRE(!c.empty());
  CHECK(c.commonName() == "api.example");
  CHECK(c.subject() == "CN=api.example");
  CHECK(c.issuer() == "CN=netbuf test CA");
  CHECK(c.dnsNames() == std::vector<std::string>{"api.example", "*.api.example"});
  CHECK(c.ipAddresses() == std::vector<std::string>{"10.0.0.1", "2001:db8::1"});
  CHECK(c.serialNumber().size() >= 30);  // 16 random bytes in hexadecimal
  CHECK(std::chrono::abs(c.notBefore() - (now - std::chrono::hours(1))) < std::chrono::minutes(1));
  CHECK(std::chrono::abs(c.notAfter() - (now + std::chrono::hours(24))) < std::chrono::minutes(1));
  CHECK(c.pem() == pair.certPem);
  const auto der = c.der();
  CHECK(der.size() > 200);
  CHECK(der[0] == std::byte{0x30});  // a DER SEQUENCE
}

TEST_CASE("copies share the certificate; moves take it") {
  SslCertificate a = parse(TestCa().certPem());
  SslCertificate b = a;
  CHECK(b.native() == a.native());
  SslCertificate c = std::move(a);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  CHECK(c.native() == b.native());
  b = SslCertificate();
  CHECK(b.empty());
  CHECK(c.commonName() == "netbuf test CA");
}
