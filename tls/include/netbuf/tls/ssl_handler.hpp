#pragma once
// SslHandler: TLS at the head of a channel pipeline (Netty's SslHandler), over OpenSSL. Every
// protocol handler after it reads and writes plaintext unchanged:
//
//     socket -> [SslHandler: ciphertext in, plaintext out] -> decoders -> ...     inbound
//     socket <- [SslHandler: plaintext in, ciphertext out] <- encoders <- ...     outbound
//
// Made by SslContext::newHandler(). A client handler starts its handshake when the channel becomes
// active; a server handler answers the client's. When the handshake ends,
// SslHandshakeCompletionEvent goes towards the tail (success with what was negotiated, or the
// reason it failed).
//
// Inbound: each ByteBuf read from the socket goes to OpenSSL through a BIO that reads straight from
// the buffer (no copy into a memory BIO); the records it completes are decrypted into one buffer
// from the channel's allocator and fired as one channelRead (a partial record waits for the next
// read). The peer's close_notify fires SslCloseCompletionEvent and, by default, this side answers
// with its own close_notify and closes; with setCloseOnPeerCloseNotify(false) the channel stays
// open for writing (a TLS half-close) and further input is ignored.
//
// Outbound: writes (ByteBuf, CompositeByteBuf, AnyByteBuf, FileRegion: a file is read with pread,
// as TLS cannot use sendfile) are held until flush(), which encrypts them: small writes are
// gathered into records of up to 16 KiB (a burst of small writes makes full records, not one record
// each), larger ones are encrypted from their own memory; the ciphertext of a flush goes to the
// socket as one write and one gather write (at most 256 KiB per socket write: a flush of more stops
// while the channel is not writable and goes on at channelWritabilityChanged, so water marks hold
// through TLS). Writes made before the handshake completes wait for it. A write's listener is
// notified when the ciphertext that ends it has been written to the socket.
//
// Closing: close() flushes what is queued, sends close_notify and closes once it is written (or
// after closeNotifyFlushTimeout). closeOutbound() sends close_notify and keeps reading
// (half-close).
//
// Failures never reach the handlers after this one as exceptions: a handshake that fails or times
// out, a peer that does not speak TLS, a corrupted record, a renegotiation attempt, a close without
// close_notify each fire their completion event with an SslErrc, are logged with the reason (unless
// logging is off), fail the queued writes, and close this channel only.
//
// Threading: a handler, on its channel's loop. Queries (isHandshakeDone, protocol...) on the loop.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/tls/ssl_certificate.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/transport/channel_executor.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/detail/ring_queue.hpp>
#include <netbuf/transport/file_region.hpp>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

struct ssl_st;  // OpenSSL's SSL

namespace netbuf {

struct SslContextCallbacks;

namespace detail {
struct BufferBio;
struct SslWriteBatches;
}  // namespace detail

class SslHandler final : public ChannelHandler {
 public:
  /// Plaintext per record (TLS's limit: 2^14).
  static constexpr std::size_t kMaxRecordPlaintext = 16 * 1024;
  /// Ciphertext handed to the socket per write; a flush of more waits for writability between.
  static constexpr std::size_t kMaxCiphertextPerWrite = 256 * 1024;

  ~SslHandler() override;
  SslHandler(const SslHandler&) = delete;
  SslHandler& operator=(const SslHandler&) = delete;

  bool isClient() const noexcept { return client_; }
  const std::shared_ptr<SslContext>& context() const noexcept { return context_; }

  // ---- settings (from the context's Options; change them before the channel is active)
  void setHandshakeTimeout(std::chrono::milliseconds t) noexcept { handshakeTimeout_ = t; }
  void setCloseNotifyFlushTimeout(std::chrono::milliseconds t) noexcept {
    closeNotifyFlushTimeout_ = t;
  }
  void setLogErrors(bool on) noexcept { logErrors_ = on; }
  /// false: the peer's close_notify ends reading only; writing goes on until close().
  void setCloseOnPeerCloseNotify(bool on) noexcept { closeOnPeerCloseNotify_ = on; }

  // ---- the session (loop thread)
  bool isHandshakeDone() const noexcept { return handshakeDone_; }
  /// "TLSv1.3", the cipher suite, the ALPN protocol ("" when none), once the handshake is done.
  std::string protocol() const;
  std::string cipher() const;
  std::string applicationProtocol() const;
  SslCertificate peerCertificate() const;
  bool isSessionReused() const noexcept;
  /// Sends close_notify after what is queued and keeps reading (Netty's closeOutbound). Writes
  /// after it fail with ChannelErrc::closed.
  void closeOutbound();

  /// OpenSSL's SSL object, for what this class does not offer.
  ssl_st* native() const noexcept { return ssl_; }

  // ---- ChannelHandler
  void handlerAdded(ChannelHandlerContext& ctx) override;
  void handlerRemoved(ChannelHandlerContext& ctx) override;
  void channelActive(ChannelHandlerContext& ctx) override;
  void channelInactive(ChannelHandlerContext& ctx) override;
  void channelRead(ChannelHandlerContext& ctx, Message msg) override;
  void channelWritabilityChanged(ChannelHandlerContext& ctx) override;
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override;
  void flush(ChannelHandlerContext& ctx) override;
  void close(ChannelHandlerContext& ctx) override;

  MessageTypes inboundIn() const noexcept override { return typesOf<ByteBuf>(); }
  MessageTypes inboundOut() const noexcept override { return typesOf<ByteBuf>(); }
  MessageTypes outboundIn() const noexcept override {
    return typesOf<ByteBuf, CompositeByteBuf, AnyByteBuf, FileRegion>();
  }
  MessageTypes outboundOut() const noexcept override { return typesOf<ByteBuf>(); }

 private:
  friend class SslContext;
  friend struct SslContextCallbacks;
  friend struct detail::BufferBio;
  friend struct detail::SslWriteBatches;

  struct PendingWrite {
    std::variant<AnyByteBuf, FileRegion> data;
    std::uint64_t remaining;  // plaintext bytes not yet encrypted
    WriteListener* listener;
  };

  SslHandler(std::shared_ptr<SslContext> context, bool client, std::string peerHost,
             std::uint16_t peerPort);

  void startHandshake(ChannelHandlerContext& ctx);
  void onHandshakeTimeout();
  /// Feeds in_ to OpenSSL: the handshake, then application data.
  void decode(ChannelHandlerContext& ctx);
  /// One handshake step; true once it is complete.
  bool continueHandshake(ChannelHandlerContext& ctx);
  void onHandshakeDone(ChannelHandlerContext& ctx);
  void readApplicationData(ChannelHandlerContext& ctx);
  void onPeerCloseNotify(ChannelHandlerContext& ctx);
  /// Encrypts the queued writes (see the header comment), again while flushes arrive meanwhile.
  void encryptPending(ChannelHandlerContext& ctx);
  void encryptQueued(ChannelHandlerContext& ctx);
  /// Encrypts n bytes at p, gathering small pieces into staging_; last: the flush's final piece.
  bool encryptSpan(const std::byte* p, std::size_t n, bool last);
  bool encryptFile(FileRegion& file, PendingWrite& w);
  bool sslWrite(const std::byte* p, std::size_t n);
  bool flushStaging();
  /// Hands out_ to the socket with the listeners whose writes it ends.
  void writeOut(ChannelHandlerContext& ctx, bool flushNow, bool closeAfter = false);
  void sendCloseNotify(ChannelHandlerContext& ctx, bool thenClose);
  void onCloseNotifyWritten();
  /// The failure path: event, log, queued writes failed, channel closed.
  void fail(ChannelHandlerContext& ctx, std::error_code ec, const std::string& detail);
  /// The SslErrc and OpenSSL's text for an SSL call that returned r.
  std::error_code classify(int r, std::string& detail) const;
  void log(ChannelHandlerContext& ctx, const char* what, std::error_code ec,
           const std::string& detail) const;
  void failPending(std::error_code ec);
  /// Nothing more to do: failed, the channel inactive, or the handler removed.
  bool stopped() const noexcept;
  void releaseBuffers() noexcept;
  void cancelTimers() noexcept;

  std::shared_ptr<SslContext> context_;
  ssl_st* ssl_ = nullptr;
  ChannelHandlerContext* ctx_ = nullptr;  // set while in a pipeline
  std::string sessionKey_;                // client: "host:port" for the session cache
  std::uint64_t cachedGeneration_ = 0;    // client: the cache entry offered or stored (0: none)
  bool storedSession_ = false;            // client: the server issued a session it stored
  bool client_;

  std::chrono::milliseconds handshakeTimeout_;
  std::chrono::milliseconds closeNotifyFlushTimeout_;
  bool logErrors_;
  bool closeOnPeerCloseNotify_ = true;

  // Inbound: ciphertext not yet taken by OpenSSL (the BIO reads from it).
  ByteBuf in_;
  std::uint64_t bytesReceived_ = 0;
  // Outbound: ciphertext the BIO wrote, not yet handed to the socket (outHint_: the capacity the
  // next one is allocated with); plaintext gathered into the next record, and the listeners of
  // the writes that end in it.
  ByteBuf out_;
  std::size_t outHint_ = 4096;
  ByteBuf staging_;
  std::vector<WriteListener*> stagingListeners_;
  detail::RingQueue<PendingWrite> pending_;
  std::uint64_t pendingBytes_ = 0;  // plaintext in pending_
  // Listeners whose writes end in out_, and the reusable batches they are handed on in.
  std::shared_ptr<detail::SslWriteBatches> batches_;

  ScheduledTask handshakeTimer_;
  ScheduledTask closeTimer_;

  bool handshakeStarted_ = false;
  bool handshakeDone_ = false;
  bool flushPending_ = false;       // a flush is owed: before the handshake, or during one
  bool flushPaused_ = false;        // a flush stopped at an unwritable channel
  bool inEncrypt_ = false;          // encryptPending() is on the stack
  bool ignoreWritability_ = false;  // closing: everything queued goes out now
  bool inputClosed_ = false;        // the peer's close_notify arrived
  bool closeNotifySent_ = false;
  bool closeOutboundPending_ = false;  // closeOutbound() before the handshake ended
  bool closing_ = false;               // close() ran: a second close goes straight on
  bool closeForwarded_ = false;        // the close went on towards the socket
  bool failed_ = false;
  bool inactive_ = false;       // channelInactive has gone by
  bool renegotiation_ = false;  // set by OpenSSL's info callback
  // close() or closeOutbound() called back during an encryption round: done when it drains.
  enum class CloseRequest : std::uint8_t { none, closeOutbound, close };
  CloseRequest closeNotifyRequested_ = CloseRequest::none;
};

}  // namespace netbuf
