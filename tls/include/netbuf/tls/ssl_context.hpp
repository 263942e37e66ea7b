#pragma once
// SslContext: the TLS configuration shared by every connection of a server or a client (Netty's
// SslContext, over OpenSSL's SSL_CTX): built once, then newHandler() makes one SslHandler per
// channel.
//
//     SslContext::Options o;
//     o.certificateChainFile = "server.pem";
//     o.privateKeyFile = "server.key";
//     o.alpnProtocols = {"http/1.1"};
//     auto tls = SslContext::forServer(o);
//     ...  // in the child initializer:
//     ch.pipeline().addLast("tls", tls->newHandler());
//
//     auto client = SslContext::forClient();  // the system's trusted roots, verification on
//     ch.pipeline().addLast("tls", client->newHandler("example.com", 443));
//
// Defaults (each an Options field): TLS 1.2 and 1.3 only; OpenSSL's default cipher suites and
// groups; session tickets on (servers issue them, clients keep the last one per host and port and
// offer it on the next connection: resumption; as OpenSSL rules, a session whose connection ended
// without close_notify is not offered again); client-initiated renegotiation refused.
//
// Verification. A client verifies the server by default: the chain must reach a trusted root (the
// system store, /etc/ssl/certs, unless trustedCaFile/trustedCaPem name others) and the certificate
// must name the host given to newHandler() (a DNS name, or an IP address in its IP entries).
// Failures are SslErrc codes naming the reason (certificateExpired, unknownCa,
// hostnameMismatch...). insecureSkipVerification turns all of it off: the connection is then
// encrypted but not authenticated, so anyone on the path can read it. A server verifies clients
// only with clientAuth (mutual TLS) against trustedCaFile/trustedCaPem.
//
// SNI: a client sends the host given to newHandler() (a DNS name; IP addresses are not sent, as
// RFC 6066 says). A server answers with its own certificate, or with another context's
// (certificate and key) for a name registered with addServerName().
//
// Threading: build and configure (addServerName) before the first handler is made; after that the
// context is read-only, and newHandler() and the session cache may be used from any thread.
// Lifetime: every handler holds the context (shared_ptr).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct ssl_ctx_st;      // OpenSSL's SSL_CTX
struct ssl_session_st;  // OpenSSL's SSL_SESSION

namespace netbuf {

class SslHandler;
struct SslContextCallbacks;

/// A protocol version a context accepts (minVersion..maxVersion).
enum class TlsVersion { tls12, tls13 };

/// Whether a server asks its clients for certificates (mutual TLS).
enum class ClientAuth {
  none,      ///< no certificate asked for
  optional,  ///< asked for and verified when sent; a client without one is let in
  require,   ///< a client without a certificate that verifies is refused
};

class SslContext : public std::enable_shared_from_this<SslContext> {
 public:
  struct Options {
    // ---- this side's certificate (a server's: required; a client's: for mutual TLS). Each is a
    // file name or the PEM text itself; the chain is the leaf first, then its intermediates.
    std::string certificateChainFile;
    std::string certificateChainPem;
    std::string privateKeyFile;
    std::string privateKeyPem;

    // ---- whom to trust: a client's roots for servers, a server's for client certificates (and
    // the CA names it sends in its request). Empty on a client: the system store.
    std::string trustedCaFile;
    std::string trustedCaPem;
    /// Also trust the system store when trustedCaFile/trustedCaPem are given (clients only).
    bool alsoTrustSystemStore = false;
    /// Client: do not verify the server at all (neither its chain nor its name). The connection
    /// is encrypted but anyone on the path can impersonate the server. For tests and debugging.
    bool insecureSkipVerification = false;
    /// Server: ask clients for certificates (mutual TLS).
    ClientAuth clientAuth = ClientAuth::none;

    // ---- protocol
    TlsVersion minVersion = TlsVersion::tls12;
    TlsVersion maxVersion = TlsVersion::tls13;
    /// OpenSSL cipher list for TLS 1.2 ("ECDHE+AESGCM"); empty: OpenSSL's default.
    std::string cipherList;
    /// TLS 1.3 cipher suites ("TLS_AES_128_GCM_SHA256:..."); empty: OpenSSL's default.
    std::string cipherSuites;
    /// Key exchange groups ("X25519:P-256"); empty: OpenSSL's default.
    std::string groups;
    /// ALPN protocols, most preferred first ("h2", "http/1.1"). A client offers them; a server
    /// picks its most preferred one the client offers, and refuses a client that offers ALPN but
    /// none of these (SslErrc::noApplicationProtocol, RFC 7301). Empty: no ALPN.
    std::vector<std::string> alpnProtocols;
    /// Session resumption with tickets (and, for TLS 1.2, the server's session cache).
    bool sessionTickets = true;
    /// Server: sessions kept for TLS 1.2 session-ID resumption; client: peers remembered.
    std::size_t sessionCacheSize = 20480;
    std::chrono::seconds sessionTimeout{7200};

    // ---- each SslHandler's (copied into it by newHandler; SslHandler has setters too)
    /// A handshake that has not completed after this long fails (SslErrc::handshakeTimeout) and
    /// closes the channel; 0: no limit.
    std::chrono::milliseconds handshakeTimeout{10'000};
    /// How long close() waits for its close_notify to reach the socket before it closes anyway.
    std::chrono::milliseconds closeNotifyFlushTimeout{3'000};
    /// Failures (handshake, bad records, renegotiation) are logged to stderr with the channel's
    /// addresses and the reason before the channel closes.
    bool logErrors = true;
    /// At most this many failure lines per second for all the context's connections; the rest
    /// are counted and summed up in one line (a peer that fails handshakes on purpose cannot
    /// flood the log, nor spend the server's time writing it). 0: no limit.
    unsigned maxLogLinesPerSecond = 10;
  };

  /// A server context: Options must name a certificate and its key. Throws SslError
  /// (SslErrc::badConfiguration, with OpenSSL's reason) when anything does not load.
  static std::shared_ptr<SslContext> forServer(const Options& options);
  /// A client context (verification on, the system store unless the options name roots).
  static std::shared_ptr<SslContext> forClient();
  static std::shared_ptr<SslContext> forClient(const Options& options);

  ~SslContext();
  SslContext(const SslContext&) = delete;
  SslContext& operator=(const SslContext&) = delete;

  bool isServer() const noexcept { return server_; }
  const Options& options() const noexcept { return options_; }

  /// Server: connections whose SNI names serverName ("api.example.com", or "*.example.com" for
  /// one label under example.com; compared without case) get context's certificate and key
  /// (context is a server context). Before the first handler is made.
  void addServerName(std::string serverName, std::shared_ptr<SslContext> context);

  /// A server-side handler (SslError badConfiguration on a client context).
  std::unique_ptr<SslHandler> newHandler();
  /// A client-side handler for peerHost (sent as SNI when it is a DNS name, and verified against
  /// the certificate unless insecureSkipVerification) and peerPort (with peerHost, the key of the
  /// session kept for resumption). An empty peerHost verifies the chain only. SslError
  /// badConfiguration on a server context.
  std::unique_ptr<SslHandler> newHandler(std::string peerHost, std::uint16_t peerPort = 0);

  /// Client session cache: sessions remembered now (one per host and port).
  std::size_t cachedSessions() const;
  /// Forgets every remembered session.
  void clearSessionCache();

  /// OpenSSL objects owned by netbuf now, in every context: SSL_CTX, SSL and SSL_SESSION (cached).
  /// Tests check it returns to its earlier value (nothing leaked). Any thread.
  struct OpenSslObjects {
    std::int64_t contexts = 0;
    std::int64_t connections = 0;
    std::int64_t sessions = 0;
  };
  static OpenSslObjects liveObjects() noexcept;

  ssl_ctx_st* native() const noexcept { return ctx_; }

 private:
  friend class SslHandler;
  friend struct SslContextCallbacks;
  /// Whether one more failure line may be written now (Options::maxLogLinesPerSecond); writes
  /// the count of the lines held back in the previous second first. Any thread.
  bool admitLogLine();
  SslContext(const Options& options, bool server);
  void configure();
  void loadTrust(bool client);
  /// The context registered for an SNI name, or nullptr (server).
  SslContext* contextForServerName(std::string_view name) const noexcept;
  /// Client session cache (key "host:port"), each entry numbered when stored (its generation).
  /// findSession: a copy of the session to offer, owned by the caller (the cache keeps its own, so
  /// concurrent connections and TLS 1.2 resumptions, which bring no new session, offer it too),
  /// and the entry's generation. storeSession: a newer one (takes the reference); returns its
  /// generation. forgetSession: drops the entry if it is still that generation (a connection that
  /// ended without close_notify spoils the session it used, as OpenSSL rules; a newer one stored
  /// meanwhile stays).
  ssl_session_st* findSession(const std::string& key, std::uint64_t& generation);
  std::uint64_t storeSession(const std::string& key, ssl_session_st* session);
  void forgetSession(const std::string& key, std::uint64_t generation);

  Options options_;
  bool server_;
  ssl_ctx_st* ctx_ = nullptr;
  std::vector<unsigned char> alpnWire_;  // alpnProtocols as ALPN's length-prefixed list
  std::vector<std::pair<std::string, std::shared_ptr<SslContext>>> serverNames_;
  std::mutex logMutex_;
  std::chrono::steady_clock::time_point logWindowStart_{};
  unsigned logLines_ = 0;            // written in the current window
  std::uint64_t logSuppressed_ = 0;  // held back in the current window
  mutable std::mutex sessionsMutex_;
  struct CachedSession {
    ssl_session_st* session;
    std::uint64_t generation;
  };
  std::unordered_map<std::string, CachedSession> sessions_;
  std::uint64_t sessionGeneration_ = 0;  // the last generation handed out (under sessionsMutex_)
};

}  // namespace netbuf
