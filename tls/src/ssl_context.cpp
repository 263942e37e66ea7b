#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/tls1.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_error.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <new>

#include "detail/openssl_ptr.hpp"
#include "detail/ssl_registry.hpp"

namespace netbuf {

namespace detail {

int sslHandlerIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace detail

namespace {

[[noreturn]] void configError(const std::string& what) {
  std::string detail = detail::drainOpenSslErrors();
  throw SslError(SslErrc::badConfiguration, detail.empty() ? what : what + " (" + detail + ")");
}

int protocolVersion(TlsVersion v) {
  return v == TlsVersion::tls12 ? TLS1_2_VERSION : TLS1_3_VERSION;
}

detail::BioPtr memoryBio(const std::string& text) {
  detail::BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) throw std::bad_alloc();
  return bio;
}

/// Every certificate in a PEM text, in order.
std::vector<detail::X509Ptr> readCertificates(const std::string& pem, const char* what) {
  auto bio = memoryBio(pem);
  std::vector<detail::X509Ptr> out;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    out.emplace_back(cert);
  }
  // The loop ends at the end of the text (a "no start line" error, expected) or at bad input.
  const unsigned long e = ERR_peek_last_error();
  if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) ERR_clear_error();
  if (out.empty()) configError(std::string("no certificate in ") + what);
  if (ERR_peek_error() != 0) configError(std::string("bad certificate in ") + what);
  return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

SslHandler* handlerOf(const SSL* ssl) {
  return static_cast<SslHandler*>(SSL_get_ex_data(ssl, detail::sslHandlerIndex()));
}

}  // namespace

// ---- callbacks (OpenSSL calls them on the connection's loop thread, inside an SSL call)

struct SslContextCallbacks {
  /// Server: the SNI name picks the context whose certificate answers.
  static int serverName(SSL* ssl, int*, void* arg) {
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (name == nullptr) return SSL_TLSEXT_ERR_NOACK;
    if (SslContext* c = static_cast<SslContext*>(arg)->contextForServerName(name)) {
      // SSL_set_SSL_CTX moves the certificate, key and trust store over, not the client
      // certificate settings: the named context's clientAuth applies too.
      SSL_set_SSL_CTX(ssl, c->ctx_);
      SSL_set_verify(ssl, SSL_CTX_get_verify_mode(c->ctx_), nullptr);
      if (STACK_OF(X509_NAME)* names = SSL_CTX_get_client_CA_list(c->ctx_)) {
        SSL_set_client_CA_list(ssl, SSL_dup_CA_list(names));
      }
    }
    return SSL_TLSEXT_ERR_OK;
  }

  /// Server: the first of our ALPN protocols (our preference) that the client offers; none in
  /// common is a fatal no_application_protocol alert (RFC 7301, 3.2).
  static int selectAlpn(SSL*, const unsigned char** out, unsigned char* outLen,
                        const unsigned char* in, unsigned inLen, void* arg) {
    const auto* self = static_cast<SslContext*>(arg);
    for (const std::string& ours : self->options_.alpnProtocols) {
      for (unsigned i = 0; i < inLen;) {
        const unsigned len = in[i];
        if (i + 1 + len > inLen) break;
        if (len == ours.size() && std::equal(ours.begin(), ours.end(), in + i + 1)) {
          *out = in + i + 1;
          *outLen = static_cast<unsigned char>(len);
          return SSL_TLSEXT_ERR_OK;
        }
        i += 1 + len;
      }
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }

  /// Client: a session (or TLS 1.3 ticket) the server issued, kept for the next connection to the
  /// same host and port. The cache keeps a copy: the connection goes on using (and OpenSSL goes on
  /// changing) its own object, and returning 0 leaves OpenSSL's reference with OpenSSL.
  static int newSession(SSL* ssl, SSL_SESSION* session) {
    SslHandler* h = handlerOf(ssl);
    if (h == nullptr || h->sessionKey_.empty() || !SSL_SESSION_is_resumable(session)) return 0;
    if (SSL_SESSION* copy = SSL_SESSION_dup(session)) {
      h->cachedGeneration_ = h->context_->storeSession(h->sessionKey_, copy);
      h->storedSession_ = true;
    }
    return 0;
  }

  /// A handshake starting on an established TLS 1.2 connection is a renegotiation: the handler
  /// fails the connection when the SSL call returns. (TLS 1.3 has none; its post-handshake
  /// messages start no handshake.)
  static void info(const SSL* ssl, int where, int) {
    if ((where & SSL_CB_HANDSHAKE_START) == 0) return;
    SslHandler* h = handlerOf(ssl);
    if (h != nullptr && h->handshakeDone_ && SSL_version(ssl) <= TLS1_2_VERSION) {
      h->renegotiation_ = true;
    }
  }
};

SslContext::SslContext(const Options& options, bool server) : options_(options), server_(server) {
  ctx_ = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx_ == nullptr) configError("SSL_CTX_new failed");
  ++detail::gLiveSslContexts;
  try {
    configure();
  } catch (...) {
    SSL_CTX_free(ctx_);
    --detail::gLiveSslContexts;
    throw;
  }
}

SslContext::~SslContext() {
  clearSessionCache();
  SSL_CTX_free(ctx_);
  --detail::gLiveSslContexts;
}

std::shared_ptr<SslContext> SslContext::forServer(const Options& options) {
  return std::shared_ptr<SslContext>(new SslContext(options, true));
}

std::shared_ptr<SslContext> SslContext::forClient() { return forClient(Options()); }

std::shared_ptr<SslContext> SslContext::forClient(const Options& options) {
  return std::shared_ptr<SslContext>(new SslContext(options, false));
}

void SslContext::configure() {
  const Options& o = options_;
  if (!SSL_CTX_set_min_proto_version(ctx_, protocolVersion(o.minVersion)) ||
      !SSL_CTX_set_max_proto_version(ctx_, protocolVersion(o.maxVersion)) ||
      o.minVersion > o.maxVersion) {
    configError("bad protocol version range");
  }
  // No renegotiation in either direction; the info callback turns an attempt into a failure.
  SSL_CTX_set_options(ctx_, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // NO_AUTO_CHAIN: the chain sent is the one configured (leaf, then intermediates). Without it
  // OpenSSL builds a chain from the trust store on every handshake whose configured chain has no
  // intermediates: a verification per connection, for nothing.
  SSL_CTX_set_mode(ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_NO_AUTO_CHAIN);
  SSL_CTX_set_info_callback(ctx_, &SslContextCallbacks::info);
  if (!o.cipherList.empty() && !SSL_CTX_set_cipher_list(ctx_, o.cipherList.c_str())) {
    configError("bad cipher list \"" + o.cipherList + "\"");
  }
  if (!o.cipherSuites.empty() && !SSL_CTX_set_ciphersuites(ctx_, o.cipherSuites.c_str())) {
    configError("bad TLS 1.3 cipher suites \"" + o.cipherSuites + "\"");
  }
  if (!o.groups.empty() && !SSL_CTX_set1_groups_list(ctx_, o.groups.c_str())) {
    configError("bad groups \"" + o.groups + "\"");
  }

  // This side's certificate and key.
  const bool hasCert = !o.certificateChainFile.empty() || !o.certificateChainPem.empty();
  const bool hasKey = !o.privateKeyFile.empty() || !o.privateKeyPem.empty();
  if (!o.certificateChainFile.empty() &&
      SSL_CTX_use_certificate_chain_file(ctx_, o.certificateChainFile.c_str()) != 1) {
    configError("cannot load the certificate chain from " + o.certificateChainFile);
  }
  if (!o.certificateChainPem.empty()) {
    auto certs = readCertificates(o.certificateChainPem, "certificateChainPem");
    if (SSL_CTX_use_certificate(ctx_, certs[0].get()) != 1) configError("bad certificate");
    for (std::size_t i = 1; i < certs.size(); ++i) {
      if (SSL_CTX_add1_chain_cert(ctx_, certs[i].get()) != 1) configError("bad chain certificate");
    }
  }
  if (!o.privateKeyFile.empty() &&
      SSL_CTX_use_PrivateKey_file(ctx_, o.privateKeyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
    configError("cannot load the private key from " + o.privateKeyFile);
  }
  if (!o.privateKeyPem.empty()) {
    auto bio = memoryBio(o.privateKeyPem);
    detail::EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key || SSL_CTX_use_PrivateKey(ctx_, key.get()) != 1) configError("bad privateKeyPem");
  }
  if (hasCert != hasKey) configError("a certificate needs its private key and the other way round");
  if (hasCert && SSL_CTX_check_private_key(ctx_) != 1) {
    configError("the private key does not match the certificate");
  }
  if (server_ && !hasCert) configError("a server context needs a certificate and a private key");

  // Whom to trust, and whom to verify.
  const bool hasTrust = !o.trustedCaFile.empty() || !o.trustedCaPem.empty();
  if (!o.trustedCaFile.empty() &&
      SSL_CTX_load_verify_locations(ctx_, o.trustedCaFile.c_str(), nullptr) != 1) {
    configError("cannot load trusted CAs from " + o.trustedCaFile);
  }
  if (!o.trustedCaPem.empty()) {
    X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
    for (auto& cert : readCertificates(o.trustedCaPem, "trustedCaPem")) {
      if (X509_STORE_add_cert(store, cert.get()) != 1) configError("bad trusted CA");
    }
  }
  if (server_) {
    if (o.clientAuth != ClientAuth::none) {
      if (!hasTrust) configError("client authentication needs trustedCaFile or trustedCaPem");
      // The CA names sent in the certificate request: the trusted CAs' subjects.
      STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
      if (names == nullptr) throw std::bad_alloc();
      if (!o.trustedCaFile.empty()) {
        SSL_add_file_cert_subjects_to_stack(names, o.trustedCaFile.c_str());
      }
      if (!o.trustedCaPem.empty()) {
        for (auto& cert : readCertificates(o.trustedCaPem, "trustedCaPem")) {
          X509_NAME* n = X509_NAME_dup(X509_get_subject_name(cert.get()));
          if (n != nullptr) sk_X509_NAME_push(names, n);
        }
      }
      SSL_CTX_set_client_CA_list(ctx_, names);  // takes ownership
      SSL_CTX_set_verify(
          ctx_,
          SSL_VERIFY_PEER |
              (o.clientAuth == ClientAuth::require ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
          nullptr);
    } else {
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    }
  } else {
    if ((!hasTrust || o.alsoTrustSystemStore) && SSL_CTX_set_default_verify_paths(ctx_) != 1) {
      configError("cannot load the system's trusted CAs");
    }
    SSL_CTX_set_verify(ctx_, o.insecureSkipVerification ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                       nullptr);
  }

  // ALPN.
  for (const std::string& p : o.alpnProtocols) {
    if (p.empty() || p.size() > 255) configError("bad ALPN protocol \"" + p + "\"");
    alpnWire_.push_back(static_cast<unsigned char>(p.size()));
    alpnWire_.insert(alpnWire_.end(), p.begin(), p.end());
  }
  if (!alpnWire_.empty()) {
    if (server_) {
      SSL_CTX_set_alpn_select_cb(ctx_, &SslContextCallbacks::selectAlpn, this);
    } else if (SSL_CTX_set_alpn_protos(ctx_, alpnWire_.data(),
                                       static_cast<unsigned>(alpnWire_.size())) != 0) {
      configError("cannot set the ALPN protocols");
    }
  }

  // Sessions.
  if (!o.sessionTickets) {
    SSL_CTX_set_options(ctx_, SSL_OP_NO_TICKET);
    if (server_) SSL_CTX_set_num_tickets(ctx_, 0);
  }
  SSL_CTX_set_timeout(ctx_, static_cast<long>(o.sessionTimeout.count()));
  if (server_) {
    static const unsigned char kSessionContext[] = "netbuf";
    SSL_CTX_set_session_id_context(ctx_, kSessionContext, sizeof kSessionContext - 1);
    SSL_CTX_sess_set_cache_size(ctx_, static_cast<long>(o.sessionCacheSize));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"  // OpenSSL's macro casts the callback
    SSL_CTX_set_tlsext_servername_callback(ctx_, &SslContextCallbacks::serverName);
#pragma GCC diagnostic pop
    SSL_CTX_set_tlsext_servername_arg(ctx_, this);
  } else {
    // Sessions are kept here (per host and port), not in OpenSSL's cache (which a client does
    // not look up).
    SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx_, &SslContextCallbacks::newSession);
  }
}

void SslContext::addServerName(std::string serverName, std::shared_ptr<SslContext> context) {
  if (!server_ || context == nullptr || !context->server_) {
    throw SslError(SslErrc::badConfiguration,
                   "addServerName needs a server context for a server context");
  }
  serverNames_.emplace_back(std::move(serverName), std::move(context));
}

SslContext* SslContext::contextForServerName(std::string_view name) const noexcept {
  for (const auto& [pattern, ctx] : serverNames_) {
    if (equalsIgnoreCase(pattern, name)) return ctx.get();
  }
  // "*.example.com" covers exactly one label before ".example.com".
  const std::size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0) return nullptr;
  for (const auto& [pattern, ctx] : serverNames_) {
    if (pattern.size() > 2 && pattern[0] == '*' && pattern[1] == '.' &&
        equalsIgnoreCase(std::string_view(pattern).substr(1), name.substr(dot))) {
      return ctx.get();
    }
  }
  return nullptr;
}

std::unique_ptr<SslHandler> SslContext::newHandler() {
  if (!server_) {
    throw SslError(SslErrc::badConfiguration,
                   "a client context makes handlers with newHandler(peerHost, peerPort)");
  }
  return std::unique_ptr<SslHandler>(new SslHandler(shared_from_this(), false, {}, 0));
}

std::unique_ptr<SslHandler> SslContext::newHandler(std::string peerHost, std::uint16_t peerPort) {
  if (server_) {
    throw SslError(SslErrc::badConfiguration,
                   "a server context makes handlers with newHandler(); connecting to " + peerHost +
                       " needs a client context");
  }
  return std::unique_ptr<SslHandler>(
      new SslHandler(shared_from_this(), true, std::move(peerHost), peerPort));
}

ssl_session_st* SslContext::findSession(const std::string& key, std::uint64_t& generation) {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return nullptr;
  generation = it->second.generation;
  // A copy, made under the lock: cached sessions are only ever read, copied and freed here, so no
  // OpenSSL object is shared between connections on different threads (OpenSSL reference counts
  // and marks a session it uses without a lock, and its counts are invisible to ThreadSanitizer).
  return SSL_SESSION_dup(it->second.session);
}

void SslContext::forgetSession(const std::string& key, std::uint64_t generation) {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  auto it = sessions_.find(key);
  if (it == sessions_.end() || it->second.generation != generation) return;  // replaced since
  SSL_SESSION_free(it->second.session);
  sessions_.erase(it);
  --detail::gLiveSslSessions;
}

std::uint64_t SslContext::storeSession(const std::string& key, ssl_session_st* session) {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  const std::uint64_t generation = ++sessionGeneration_;
  auto [it, inserted] = sessions_.try_emplace(key, CachedSession{session, generation});
  if (!inserted) {
    SSL_SESSION_free(it->second.session);  // the newer one replaces it
    it->second = {session, generation};
    return generation;
  }
  ++detail::gLiveSslSessions;
  if (sessions_.size() > std::max<std::size_t>(options_.sessionCacheSize, 1)) {
    // Over the bound: forget another peer's session (any: the cache is a hint, not a record).
    auto victim = sessions_.begin();
    if (victim == it) ++victim;
    SSL_SESSION_free(victim->second.session);
    sessions_.erase(victim);
    --detail::gLiveSslSessions;
  }
  return generation;
}

std::size_t SslContext::cachedSessions() const {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  return sessions_.size();
}

void SslContext::clearSessionCache() {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  for (auto& [key, cached] : sessions_) {
    SSL_SESSION_free(cached.session);
    --detail::gLiveSslSessions;
  }
  sessions_.clear();
}

bool SslContext::admitLogLine() {
  if (options_.maxLogLinesPerSecond == 0) return true;
  std::lock_guard<std::mutex> lock(logMutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now - logWindowStart_ >= std::chrono::seconds(1)) {
    if (logSuppressed_ > 0) {
      std::fprintf(stderr,
                   "netbuf: %llu more TLS failures not logged (at most %u lines a second)\n",
                   static_cast<unsigned long long>(logSuppressed_), options_.maxLogLinesPerSecond);
    }
    logWindowStart_ = now;
    logLines_ = 0;
    logSuppressed_ = 0;
  }
  if (logLines_ < options_.maxLogLinesPerSecond) {
    ++logLines_;
    return true;
  }
  ++logSuppressed_;
  return false;
}

SslContext::OpenSslObjects SslContext::liveObjects() noexcept {
  return {detail::gLiveSslContexts.load(), detail::gLiveSslConnections.load(),
          detail::gLiveSslSessions.load()};
}

}  // namespace netbuf
