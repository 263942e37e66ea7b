#pragma once
// X.509 certificates and keys for TLS loopback tests, made at test time with the OpenSSL 3 C API
// (link with -lssl -lcrypto). They are made afresh in every test run, so no fixture in the
// repository can expire and fail the suite years from now, and a test can ask for exactly the
// certificate it needs (expired, client-auth only, issued by an intermediate, self-signed) instead
// of keeping one file per case. Nothing here shells out to the openssl command.
//
// Everything comes back as PEM text in std::string: a TestCa keeps no OpenSSL object alive between
// calls (it parses its own PEM when it issues), so it is a plain copyable value and tests that
// count live OpenSSL objects see none of it. Every OpenSSL object made inside a call is owned by a
// unique_ptr; a failure throws std::runtime_error naming the step and OpenSSL's error text.

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace netbuf::test {

enum class TestKeyType { EcP256, Rsa2048 };

/// What a leaf certificate says. The defaults make a server certificate for localhost that is
/// valid now (from an hour ago, so a clock slightly behind does not reject it) for 30 days.
struct CertificateSpec {
  std::string commonName = "localhost";
  std::vector<std::string> dnsNames = {"localhost"};            // subjectAltName DNS: entries
  std::vector<std::string> ipAddresses = {"127.0.0.1", "::1"};  // subjectAltName IP: entries
  std::chrono::seconds notBefore{-3600};                        // offset from now
  std::chrono::seconds notAfter{30 * 24 * 3600};  // offset from now (negative: expired)
  bool serverAuth = true;                         // extendedKeyUsage serverAuth
  bool clientAuth = false;                        // extendedKeyUsage clientAuth
  TestKeyType keyType = TestKeyType::EcP256;
};

/// A certificate and its private key (unencrypted PKCS#8), both PEM.
struct TestKeyPair {
  std::string certPem;
  std::string keyPem;
  /// The leaf, then the CA certificates that issued it up to but excluding the root: what a
  /// server sends (SSL_CTX_use_certificate_chain_file). For a leaf of a root CA it is certPem.
  std::string chainPem;
};

namespace test_certificates_detail {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using KeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;
using GeneralNamePtr = std::unique_ptr<GENERAL_NAME, Deleter<GENERAL_NAME_free>>;
using Ia5StringPtr = std::unique_ptr<ASN1_IA5STRING, Deleter<ASN1_IA5STRING_free>>;
using OctetStringPtr = std::unique_ptr<ASN1_OCTET_STRING, Deleter<ASN1_OCTET_STRING_free>>;

/// Throws with `what` and every error on this thread's OpenSSL error queue, which it empties so
/// that the next failure does not report this one's errors.
[[noreturn]] inline void throwOpenSsl(const std::string& what) {
  std::string message = "test certificates: " + what;
  const char* sep = ": ";
  while (const unsigned long code = ERR_get_error()) {
    std::array<char, 256> text{};
    ERR_error_string_n(code, text.data(), text.size());
    message += sep;
    message += text.data();
    sep = "; ";
  }
  throw std::runtime_error(message);
}

inline void check(bool ok, const char* what) {
  if (!ok) throwOpenSsl(what);
}

inline KeyPtr generateKey(TestKeyType type) {
  const bool ec = type == TestKeyType::EcP256;
  KeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, ec ? "EC" : "RSA", nullptr));
  check(ctx != nullptr, "EVP_PKEY_CTX_new_from_name");
  check(EVP_PKEY_keygen_init(ctx.get()) > 0, "EVP_PKEY_keygen_init");
  if (ec) {
    check(EVP_PKEY_CTX_set_group_name(ctx.get(), "P-256") > 0, "EVP_PKEY_CTX_set_group_name");
  } else {
    check(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), 2048) > 0,
          "EVP_PKEY_CTX_set_rsa_keygen_bits");
  }
  EVP_PKEY* key = nullptr;
  check(EVP_PKEY_keygen(ctx.get(), &key) > 0, "EVP_PKEY_keygen");
  return KeyPtr(key);
}

inline BioPtr memoryBio() {
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr, "BIO_new");
  return bio;
}

inline std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

inline std::string certificatePem(X509* cert) {
  BioPtr bio = memoryBio();
  check(PEM_write_bio_X509(bio.get(), cert) == 1, "PEM_write_bio_X509");
  return bioText(bio.get());
}

inline std::string privateKeyPem(EVP_PKEY* key) {
  BioPtr bio = memoryBio();
  check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  return bioText(bio.get());
}

inline BioPtr readOnlyBio(const std::string& text) {
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  check(bio != nullptr, "BIO_new_mem_buf");
  return bio;
}

inline X509Ptr parseCertificate(const std::string& pem) {
  BioPtr bio = readOnlyBio(pem);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  check(cert != nullptr, "PEM_read_bio_X509");
  return cert;
}

inline KeyPtr parsePrivateKey(const std::string& pem) {
  BioPtr bio = readOnlyBio(pem);
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  check(key != nullptr, "PEM_read_bio_PrivateKey");
  return key;
}

/// A random positive 16-byte serial. Random rather than counted so that two runs (or two CAs in
/// one run) never issue the same issuer and serial pair, which verifiers may cache or reject.
inline void setRandomSerial(X509* cert) {
  std::array<unsigned char, 16> bytes{};
  check(RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) == 1, "RAND_bytes");
  // The top bit clear keeps the DER INTEGER positive; bit 6 set keeps it nonzero and 16 bytes long.
  bytes[0] = static_cast<unsigned char>((bytes[0] & 0x7f) | 0x40);
  BignumPtr bn(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
  check(bn != nullptr, "BN_bin2bn");
  check(BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) != nullptr, "BN_to_ASN1_INTEGER");
}

/// Sets `t` to now + offset. Split into days and seconds because X509_time_adj_ex takes the
/// seconds as a long, which is 32 bits on some platforms.
inline void setTime(ASN1_TIME* t, std::chrono::seconds offset, const char* what) {
  constexpr long long kDay = 24 * 3600;
  const long long s = offset.count();
  check(X509_time_adj_ex(t, static_cast<int>(s / kDay), static_cast<long>(s % kDay), nullptr) !=
            nullptr,
        what);
}

inline void addCommonName(X509_NAME* name, const std::string& commonName) {
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(commonName.data()),
                                   static_cast<int>(commonName.size()), -1, 0) == 1,
        "X509_NAME_add_entry_by_txt(CN)");
}

/// Adds one extension written in openssl.cnf syntax ("critical,CA:TRUE"). `ctx` names the subject
/// and issuer certificates, which subjectKeyIdentifier and authorityKeyIdentifier read.
inline void addExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  ExtensionPtr ext(X509V3_EXT_nconf_nid(nullptr, ctx, nid, value.c_str()));
  if (ext == nullptr) throwOpenSsl(std::string("X509V3_EXT_nconf_nid(") + OBJ_nid2sn(nid) + ")");
  check(X509_add_ext(cert, ext.get(), -1) == 1, "X509_add_ext");
}

/// subjectAltName built as GENERAL_NAMEs rather than a config string, so that a name containing a
/// comma or colon cannot be misparsed, and a malformed IP address is reported by name.
inline void addSubjectAltName(X509* cert, const std::vector<std::string>& dnsNames,
                              const std::vector<std::string>& ipAddresses) {
  if (dnsNames.empty() && ipAddresses.empty()) return;
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  check(names != nullptr, "sk_GENERAL_NAME_new_null");
  auto push = [&](GeneralNamePtr name) {
    check(sk_GENERAL_NAME_push(names.get(), name.get()) > 0, "sk_GENERAL_NAME_push");
    name.release();  // the stack owns it now
  };
  for (const std::string& dns : dnsNames) {
    Ia5StringPtr text(ASN1_IA5STRING_new());
    check(text != nullptr, "ASN1_IA5STRING_new");
    check(ASN1_STRING_set(text.get(), dns.data(), static_cast<int>(dns.size())) == 1,
          "ASN1_STRING_set");
    GeneralNamePtr name(GENERAL_NAME_new());
    check(name != nullptr, "GENERAL_NAME_new");
    GENERAL_NAME_set0_value(name.get(), GEN_DNS, text.release());
    push(std::move(name));
  }
  for (const std::string& ip : ipAddresses) {
    OctetStringPtr address(a2i_IPADDRESS(ip.c_str()));
    if (address == nullptr) throwOpenSsl("invalid IP address \"" + ip + "\"");
    GeneralNamePtr name(GENERAL_NAME_new());
    check(name != nullptr, "GENERAL_NAME_new");
    GENERAL_NAME_set0_value(name.get(), GEN_IPADD, address.release());
    push(std::move(name));
  }
  check(X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) == 1,
        "X509_add1_ext_i2d(subjectAltName)");
}

/// The parts of a certificate that differ between a CA and a leaf.
struct Profile {
  std::string commonName;
  std::chrono::seconds notBefore;
  std::chrono::seconds notAfter;
  bool ca = false;
  bool serverAuth = false;
  bool clientAuth = false;
  const std::vector<std::string>* dnsNames = nullptr;
  const std::vector<std::string>* ipAddresses = nullptr;
};

/// Makes a v3 certificate for `subjectKey`, signed with SHA-256 by `issuerKey`. With no issuer
/// certificate it is self-signed (issuerKey is subjectKey).
inline X509Ptr makeCertificate(const Profile& p, EVP_PKEY* subjectKey, X509* issuerCert,
                               EVP_PKEY* issuerKey) {
  X509Ptr cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), X509_VERSION_3) == 1, "X509_set_version");
  setRandomSerial(cert.get());
  setTime(X509_getm_notBefore(cert.get()), p.notBefore, "X509_time_adj_ex(notBefore)");
  setTime(X509_getm_notAfter(cert.get()), p.notAfter, "X509_time_adj_ex(notAfter)");
  addCommonName(X509_get_subject_name(cert.get()), p.commonName);
  X509* issuer = issuerCert != nullptr ? issuerCert : cert.get();
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer)) == 1,
        "X509_set_issuer_name");
  // The public key goes in before the extensions: subjectKeyIdentifier hashes it.
  check(X509_set_pubkey(cert.get(), subjectKey) == 1, "X509_set_pubkey");

  X509V3_CTX ctx{};  // zeroed: no config database, no issuer key override
  X509V3_set_ctx(&ctx, issuer, cert.get(), nullptr, nullptr, 0);
  addExtension(cert.get(), &ctx, NID_basic_constraints,
               p.ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  if (p.ca) {
    addExtension(cert.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    // keyEncipherment only for RSA: TLS 1.2 RSA key exchange encrypts to the key; an EC key is
    // only ever used to sign.
    const bool rsa = EVP_PKEY_is_a(subjectKey, "RSA") == 1;
    addExtension(cert.get(), &ctx, NID_key_usage,
                 rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature");
  }
  std::string eku;
  if (p.serverAuth) eku = "serverAuth";
  if (p.clientAuth) eku += eku.empty() ? "clientAuth" : ",clientAuth";
  if (!eku.empty()) addExtension(cert.get(), &ctx, NID_ext_key_usage, eku);
  if (p.dnsNames != nullptr && p.ipAddresses != nullptr) {
    addSubjectAltName(cert.get(), *p.dnsNames, *p.ipAddresses);
  }
  addExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
  // A self-signed certificate is its own authority; RFC 5280 lets it omit the identifier, and
  // "keyid:always" would demand the issuer's subjectKeyIdentifier, which issued ones always have.
  if (issuerCert != nullptr) {
    addExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
  }

  check(X509_sign(cert.get(), issuerKey, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

inline Profile leafProfile(const CertificateSpec& spec) {
  Profile p;
  p.commonName = spec.commonName;
  p.notBefore = spec.notBefore;
  p.notAfter = spec.notAfter;
  p.serverAuth = spec.serverAuth;
  p.clientAuth = spec.clientAuth;
  p.dnsNames = &spec.dnsNames;
  p.ipAddresses = &spec.ipAddresses;
  return p;
}

inline Profile caProfile(std::string commonName) {
  Profile p;
  p.commonName = std::move(commonName);
  p.notBefore = std::chrono::seconds(-3600);
  p.notAfter = std::chrono::seconds(10LL * 365 * 24 * 3600);  // outlives any leaf a test asks for
  p.ca = true;
  return p;
}

}  // namespace test_certificates_detail

/// A certificate authority made for this test run. It holds only PEM text, so it is cheap to copy
/// and safe to share between threads; issue() and intermediate() parse it on each call.
class TestCa {
 public:
  /// A self-signed root CA (basicConstraints critical CA:TRUE, valid from an hour ago for ten
  /// years) with a fresh key of `keyType`.
  explicit TestCa(std::string commonName = "netbuf test CA",
                  TestKeyType keyType = TestKeyType::EcP256)
      : keyType_(keyType) {
    namespace d = test_certificates_detail;
    d::KeyPtr key = d::generateKey(keyType);
    d::X509Ptr cert =
        d::makeCertificate(d::caProfile(std::move(commonName)), key.get(), nullptr, key.get());
    certPem_ = d::certificatePem(cert.get());
    keyPem_ = d::privateKeyPem(key.get());
  }

  /// This CA's certificate: what a peer trusts (SSL_CTX_load_verify_locations) when it is the root.
  const std::string& certPem() const { return certPem_; }
  const std::string& keyPem() const { return keyPem_; }
  /// This CA's certificate and those above it, excluding the root: empty for a root CA.
  const std::string& chainPem() const { return chainPem_; }

  /// A leaf certificate described by `spec`, signed by this CA. Its chainPem is the leaf followed
  /// by this CA's chainPem.
  TestKeyPair issue(const CertificateSpec& spec) const {
    namespace d = test_certificates_detail;
    d::X509Ptr caCert = d::parseCertificate(certPem_);
    d::KeyPtr caKey = d::parsePrivateKey(keyPem_);
    d::KeyPtr key = d::generateKey(spec.keyType);
    d::X509Ptr cert =
        d::makeCertificate(d::leafProfile(spec), key.get(), caCert.get(), caKey.get());
    TestKeyPair pair;
    pair.certPem = d::certificatePem(cert.get());
    pair.keyPem = d::privateKeyPem(key.get());
    pair.chainPem = pair.certPem + chainPem_;
    return pair;
  }

  /// An intermediate CA signed by this one, with a key of this CA's type. Leaves it issues carry
  /// the intermediate (and any CA between it and the root) in their chainPem.
  TestCa intermediate(std::string commonName) const {
    return intermediate(std::move(commonName), keyType_);
  }
  TestCa intermediate(std::string commonName, TestKeyType keyType) const {
    namespace d = test_certificates_detail;
    d::X509Ptr caCert = d::parseCertificate(certPem_);
    d::KeyPtr caKey = d::parsePrivateKey(keyPem_);
    d::KeyPtr key = d::generateKey(keyType);
    d::X509Ptr cert = d::makeCertificate(d::caProfile(std::move(commonName)), key.get(),
                                         caCert.get(), caKey.get());
    std::string certPem = d::certificatePem(cert.get());
    std::string chainPem = certPem + chainPem_;
    return TestCa(std::move(certPem), d::privateKeyPem(key.get()), std::move(chainPem), keyType);
  }

 private:
  TestCa(std::string certPem, std::string keyPem, std::string chainPem, TestKeyType keyType)
      : keyType_(keyType),
        certPem_(std::move(certPem)),
        keyPem_(std::move(keyPem)),
        chainPem_(std::move(chainPem)) {}

  TestKeyType keyType_;
  std::string certPem_;
  std::string keyPem_;
  std::string chainPem_;
};

/// A self-signed leaf certificate described by `spec` (CA:FALSE): a server no CA vouches for, for
/// tests that expect verification to fail. Its chainPem is its certPem.
inline TestKeyPair selfSigned(const CertificateSpec& spec) {
  namespace d = test_certificates_detail;
  d::KeyPtr key = d::generateKey(spec.keyType);
  d::X509Ptr cert = d::makeCertificate(d::leafProfile(spec), key.get(), nullptr, key.get());
  TestKeyPair pair;
  pair.certPem = d::certificatePem(cert.get());
  pair.keyPem = d::privateKeyPem(key.get());
  pair.chainPem = pair.certPem;
  return pair;
}

/// Writes text to dir/name and returns the path as a string (what SSL_CTX_* file functions and
/// peer processes take). Throws std::runtime_error when the file cannot be written.
inline std::string writeFile(const std::filesystem::path& dir, const std::string& name,
                             const std::string& text) {
  const std::filesystem::path path = dir / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("test certificates: cannot write " + path.string());
  return path.string();
}

}  // namespace netbuf::test
