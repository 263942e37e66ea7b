#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <netbuf/tls/ssl_close_completion_event.hpp>
#include <netbuf/tls/ssl_errc.hpp>
#include <netbuf/tls/ssl_error.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <netbuf/tls/ssl_handshake_completion_event.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <new>

#include "detail/buffer_bio.hpp"
#include "detail/openssl_ptr.hpp"
#include "detail/ssl_registry.hpp"

namespace netbuf {

namespace detail {

struct SslWriteBatches;

/// The listeners of the writes whose last bytes are in one ciphertext write: notified together
/// when that write completes. Owned by SslWriteBatches and reused (no allocation per flush once
/// warm); while in flight it holds the pool, so a handler removed meanwhile leaves it valid.
struct SslWriteBatch final : WriteListener {
  std::shared_ptr<SslWriteBatches> pool;  // set while in flight
  std::vector<WriteListener*> listeners;
  bool closeAfter = false;  // this write carries close_notify: close the channel when done

  void operationComplete(std::error_code ec) noexcept override;
};

struct SslWriteBatches {
  SslHandler* handler = nullptr;  // nulled when the handler goes
  std::vector<std::unique_ptr<SslWriteBatch>> all;
  std::vector<SslWriteBatch*> idle;
  /// Listeners of writes that end in the ciphertext being built (SslHandler::out_).
  std::vector<WriteListener*> collecting;

  void closeNotifyWritten() { handler->onCloseNotifyWritten(); }

  SslWriteBatch* take(std::shared_ptr<SslWriteBatches> self) {
    if (idle.empty()) {
      all.push_back(std::make_unique<SslWriteBatch>());
      idle.push_back(all.back().get());
    }
    SslWriteBatch* b = idle.back();
    idle.pop_back();
    b->pool = std::move(self);
    return b;
  }
};

void SslWriteBatch::operationComplete(std::error_code ec) noexcept {
  std::shared_ptr<SslWriteBatches> keep = std::move(pool);  // outlives the listeners' calls
  for (WriteListener* l : listeners) l->operationComplete(ec);
  listeners.clear();
  const bool close = std::exchange(closeAfter, false);
  keep->idle.push_back(this);
  if (close && keep->handler != nullptr) keep->closeNotifyWritten();
}

}  // namespace detail

namespace {

/// Per-record bytes a record adds to its plaintext (header, nonce, tag, padding), rounded up.
constexpr std::size_t kRecordOverhead = 64;

bool isIpAddress(const std::string& host) {
  ASN1_OCTET_STRING* ip = a2i_IPADDRESS(host.c_str());
  if (ip == nullptr) {
    ERR_clear_error();
    return false;
  }
  ASN1_OCTET_STRING_free(ip);
  return true;
}

}  // namespace

SslHandler::SslHandler(std::shared_ptr<SslContext> context, bool client, std::string peerHost,
                       std::uint16_t peerPort)
    : context_(std::move(context)),
      client_(client),
      handshakeTimeout_(context_->options().handshakeTimeout),
      closeNotifyFlushTimeout_(context_->options().closeNotifyFlushTimeout),
      logErrors_(context_->options().logErrors),
      batches_(std::make_shared<detail::SslWriteBatches>()) {
  ssl_ = SSL_new(context_->native());
  if (ssl_ == nullptr) throw std::bad_alloc();
  ++detail::gLiveSslConnections;
  batches_->handler = this;
  try {
    SSL_set_ex_data(ssl_, detail::sslHandlerIndex(), this);
    BIO* bio = detail::BufferBio::create(*this);
    SSL_set_bio(ssl_, bio, bio);  // one BIO both ways: SSL_free frees it
    if (!client_) {
      SSL_set_accept_state(ssl_);
      return;
    }
    SSL_set_connect_state(ssl_);
    if (!peerHost.empty()) {
      const bool ip = isIpAddress(peerHost);
      // SNI carries DNS names only (RFC 6066, 3).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"  // OpenSSL's macro casts the name
      if (!ip && SSL_set_tlsext_host_name(ssl_, peerHost.c_str()) != 1) throw std::bad_alloc();
#pragma GCC diagnostic pop
      if (!context_->options().insecureSkipVerification) {
        const int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), peerHost.c_str())
                          : SSL_set1_host(ssl_, peerHost.c_str());
        if (ok != 1) {
          throw SslError(SslErrc::badConfiguration, "bad peer host \"" + peerHost + "\"");
        }
      }
      if (context_->options().sessionTickets) {
        sessionKey_ = peerHost + ":" + std::to_string(peerPort);
        if (SSL_SESSION* s = context_->findSession(sessionKey_, cachedGeneration_)) {
          SSL_set_session(ssl_, s);
          SSL_SESSION_free(s);
        }
      }
    }
  } catch (...) {
    SSL_free(ssl_);
    --detail::gLiveSslConnections;
    throw;
  }
}

SslHandler::~SslHandler() {
  cancelTimers();
  batches_->handler = nullptr;
  failPending(ChannelErrc::closedBeforeWritten);
  releaseBuffers();
  // OpenSSL's rule for its own cache, applied to ours: an established connection that ends
  // without having sent close_notify spoils the session it used, which is not offered again. It
  // used the cached one only if the server resumed it or issued one that was stored.
  if (cachedGeneration_ != 0 && SSL_is_init_finished(ssl_) &&
      (SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN) == 0 &&
      (storedSession_ || SSL_session_reused(ssl_) == 1)) {
    context_->forgetSession(sessionKey_, cachedGeneration_);
  }
  SSL_free(ssl_);
  --detail::gLiveSslConnections;
}

// ---------------------------------------------------------------- session queries

std::string SslHandler::protocol() const { return handshakeDone_ ? SSL_get_version(ssl_) : ""; }

std::string SslHandler::cipher() const {
  const SSL_CIPHER* c = handshakeDone_ ? SSL_get_current_cipher(ssl_) : nullptr;
  const char* name = c != nullptr ? SSL_CIPHER_standard_name(c) : nullptr;
  return name != nullptr ? name : "";
}

std::string SslHandler::applicationProtocol() const {
  const unsigned char* p = nullptr;
  unsigned len = 0;
  SSL_get0_alpn_selected(ssl_, &p, &len);
  return p != nullptr ? std::string(reinterpret_cast<const char*>(p), len) : std::string();
}

SslCertificate SslHandler::peerCertificate() const {
  return SslCertificate(SSL_get0_peer_certificate(ssl_));
}

bool SslHandler::isSessionReused() const noexcept { return SSL_session_reused(ssl_) == 1; }

// ---------------------------------------------------------------- lifecycle

void SslHandler::handlerAdded(ChannelHandlerContext& ctx) {
  ctx_ = &ctx;
  if (ctx.channel().isActive()) startHandshake(ctx);
}

void SslHandler::handlerRemoved(ChannelHandlerContext&) {
  cancelTimers();
  batches_->handler = nullptr;
  failPending(ChannelErrc::handlerRemoved);
  releaseBuffers();
  ctx_ = nullptr;
}

void SslHandler::channelActive(ChannelHandlerContext& ctx) {
  startHandshake(ctx);
  ctx.fireChannelActive();
}

void SslHandler::startHandshake(ChannelHandlerContext& ctx) {
  if (handshakeStarted_) return;
  handshakeStarted_ = true;
  if (handshakeTimeout_.count() > 0) {
    handshakeTimer_ =
        ctx.channel().executor().schedule(handshakeTimeout_, [this] { onHandshakeTimeout(); });
  }
  if (client_) continueHandshake(ctx);  // the ClientHello
}

void SslHandler::onHandshakeTimeout() {
  if (ctx_ == nullptr || handshakeDone_ || failed_) return;
  ChannelPipeline::EventScope scope(ctx_->pipeline());
  fail(*ctx_, SslErrc::handshakeTimeout,
       "no handshake within " + std::to_string(handshakeTimeout_.count()) + " ms");
}

void SslHandler::channelInactive(ChannelHandlerContext& ctx) {
  inactive_ = true;
  cancelTimers();
  if (!failed_) {
    if (handshakeStarted_ && !handshakeDone_) {
      failed_ = true;
      const std::error_code ec = SslErrc::closedDuringHandshake;
      // A connection that closes before sending a byte (a port probe, a health check), or that
      // this side closed, is not worth a log line; one that stops half way through is.
      if (!closing_ && (client_ || bytesReceived_ > 0)) log(ctx, "TLS handshake failed", ec, "");
      SslHandshakeCompletionEvent ev;
      ev.error = ec;
      ctx.fireUserEventTriggered(Message(std::move(ev)));
    } else if (handshakeDone_ && !inputClosed_ && !closeNotifySent_) {
      // The peer stopped without close_notify. (After ours, a peer may just close: not a loss.)
      ctx.fireUserEventTriggered(Message(SslCloseCompletionEvent{SslErrc::truncated}));
    }
  }
  failPending(ChannelErrc::closedBeforeWritten);
  releaseBuffers();
  ctx.fireChannelInactive();
}

void SslHandler::cancelTimers() noexcept {
  handshakeTimer_.cancel();
  closeTimer_.cancel();
}

void SslHandler::releaseBuffers() noexcept {
  in_ = ByteBuf();
  out_ = ByteBuf();
  staging_ = ByteBuf();
}

void SslHandler::failPending(std::error_code ec) {
  // Gather first: a listener may write again (and must find the queue consistent).
  std::vector<WriteListener*> failed;
  failed.swap(stagingListeners_);
  failed.insert(failed.end(), batches_->collecting.begin(), batches_->collecting.end());
  batches_->collecting.clear();
  while (!pending_.empty()) {
    if (pending_.front().listener != nullptr) failed.push_back(pending_.front().listener);
    pending_.pop_front();
  }
  pendingBytes_ = 0;
  if (staging_.isValid()) staging_.clear();
  for (WriteListener* l : failed) l->operationComplete(ec);
}

// ---------------------------------------------------------------- inbound

void SslHandler::channelRead(ChannelHandlerContext& ctx, Message msg) {
  if (!msg.is<ByteBuf>()) {
    ctx.fireChannelRead(std::move(msg));
    return;
  }
  ByteBuf b = msg.take<ByteBuf>();
  if (failed_ || inputClosed_ || !b.isReadable()) return;  // released here
  bytesReceived_ += b.readableBytes();
  if (!in_.isReadable()) {
    in_ = std::move(b);
  } else if (!in_.isReadOnly() && in_.isWritable(b.readableBytes())) {
    in_.appendBytes(b.readableSpan());
  } else {
    // The rest of a record from the previous read, and this read, in one buffer.
    ByteBuf merged = ctx.alloc().buffer(in_.readableBytes() + b.readableBytes());
    merged.appendBytes(in_.readableSpan());
    merged.appendBytes(b.readableSpan());
    in_ = std::move(merged);
  }
  decode(ctx);
  if (!in_.isReadable()) in_ = ByteBuf();  // an idle connection holds no buffer
}

void SslHandler::decode(ChannelHandlerContext& ctx) {
  if (!handshakeDone_) {
    if (!handshakeStarted_) startHandshake(ctx);
    if (failed_ || !continueHandshake(ctx)) return;
  }
  readApplicationData(ctx);
}

bool SslHandler::continueHandshake(ChannelHandlerContext& ctx) {
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    writeOut(ctx, true);          // the last flight (a server's tickets)
    if (stopped()) return false;  // the socket failed under that write: channelInactive ran
    onHandshakeDone(ctx);
    return !stopped() && !closing_;
  }
  const int err = SSL_get_error(ssl_, r);
  if (err == SSL_ERROR_WANT_READ) {
    writeOut(ctx, true);
    return false;
  }
  std::string detail;
  const std::error_code ec = classify(r, detail);
  fail(ctx, ec, detail);
  return false;
}

void SslHandler::onHandshakeDone(ChannelHandlerContext& ctx) {
  handshakeDone_ = true;
  handshakeTimer_.cancel();
  SslHandshakeCompletionEvent ev;
  ev.protocol = protocol();
  ev.cipher = cipher();
  ev.applicationProtocol = applicationProtocol();
  const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
  if (name != nullptr) ev.serverName = name;
  ev.peerCertificate = peerCertificate();
  ev.resumed = isSessionReused();
  ctx.fireUserEventTriggered(Message(std::move(ev)));
  if (failed_ || closing_) return;
  // Writes made during the handshake go out now.
  if (flushPending_) encryptPending(ctx);
  if (closeOutboundPending_ && !failed_) closeOutbound();
}

void SslHandler::readApplicationData(ChannelHandlerContext& ctx) {
  while (!failed_ && !inputClosed_) {
    // Plaintext is never longer than the ciphertext it came from; what OpenSSL holds of a
    // record begun earlier may add up to one record.
    std::size_t cap = in_.readableBytes() + (SSL_has_pending(ssl_) ? kMaxRecordPlaintext : 0);
    cap = std::clamp<std::size_t>(cap, 1024, 4 * kMaxRecordPlaintext);
    ByteBuf plain = ctx.alloc().buffer(cap);
    int err = 0;
    int r = 1;
    while (plain.writableBytes() > 0) {
      std::size_t n = 0;
      ERR_clear_error();
      r = SSL_read_ex(ssl_, plain.writePtrUnchecked(), plain.writableBytes(), &n);
      if (r != 1) {
        err = SSL_get_error(ssl_, r);
        break;
      }
      plain.advanceWriterUnchecked(n);
    }
    std::error_code ec;
    std::string detail;
    if (renegotiation_) {
      ec = SslErrc::renegotiationRefused;
      detail = detail::drainOpenSslErrors();
    } else if (err != 0 && err != SSL_ERROR_WANT_READ && err != SSL_ERROR_ZERO_RETURN) {
      ec = classify(r, detail);
    }
    writeOut(ctx, true);    // what reading produced: a KeyUpdate's answer, an alert
    if (stopped()) return;  // channelInactive has gone by: nothing more is read
    if (plain.isReadable()) ctx.fireChannelRead(std::move(plain));
    if (ec) return fail(ctx, ec, detail);
    if (!ctx.channel().isOpen() || stopped()) return;
    if (err == SSL_ERROR_ZERO_RETURN) return onPeerCloseNotify(ctx);
    if (err == SSL_ERROR_WANT_READ) return;
    // The buffer filled up: there may be more.
  }
}

void SslHandler::onPeerCloseNotify(ChannelHandlerContext& ctx) {
  inputClosed_ = true;
  in_ = ByteBuf();
  ctx.fireUserEventTriggered(Message(SslCloseCompletionEvent{}));
  if (closeOnPeerCloseNotify_ && !closing_ && !failed_) close(ctx);
}

// ---------------------------------------------------------------- outbound

void SslHandler::write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) {
  PendingWrite w{AnyByteBuf(), 0, listener};
  if (msg.is<ByteBuf>()) {
    w.data = AnyByteBuf(msg.take<ByteBuf>());
  } else if (msg.is<CompositeByteBuf>()) {
    w.data = AnyByteBuf(msg.take<CompositeByteBuf>());
  } else if (msg.is<AnyByteBuf>()) {
    w.data = msg.take<AnyByteBuf>();
  } else if (msg.is<FileRegion>()) {
    w.data = msg.take<FileRegion>();
  } else {
    ctx.write(std::move(msg), listener);  // not bytes: the head refuses it, naming its type
    return;
  }
  if (failed_ || inactive_ || closeNotifySent_ || closing_ || closeOutboundPending_ ||
      closeNotifyRequested_ != CloseRequest::none) {
    if (listener != nullptr) listener->operationComplete(ChannelErrc::closed);
    return;
  }
  if (auto* b = std::get_if<AnyByteBuf>(&w.data)) {
    w.remaining = readableBytes(*b);
  } else {
    w.remaining = std::get<FileRegion>(w.data).count();
  }
  pendingBytes_ += w.remaining;
  pending_.push_back(std::move(w));
}

void SslHandler::flush(ChannelHandlerContext& ctx) {
  if (failed_) return;
  if (!handshakeDone_ || flushPaused_) {
    flushPending_ = true;  // the handshake's end (or writability) flushes
    return;
  }
  encryptPending(ctx);
}

void SslHandler::channelWritabilityChanged(ChannelHandlerContext& ctx) {
  if (flushPaused_ && ctx.channel().isWritable()) {
    flushPaused_ = false;
    encryptPending(ctx);
  }
  ctx.fireChannelWritabilityChanged();
}

void SslHandler::encryptPending(ChannelHandlerContext& ctx) {
  if (inEncrypt_) {
    flushPending_ = true;  // a listener wrote and flushed: the loop below goes round again
    return;
  }
  inEncrypt_ = true;
  do {
    flushPending_ = false;
    encryptQueued(ctx);
  } while (flushPending_ && !flushPaused_ && !stopped());
  inEncrypt_ = false;
  // A close or closeOutbound asked for while encrypting (from a listener or a handler the socket
  // write ran): its close_notify goes after everything queued.
  if (closeNotifyRequested_ != CloseRequest::none && !stopped() && !flushPaused_) {
    const bool thenClose = closeNotifyRequested_ == CloseRequest::close;
    closeNotifyRequested_ = CloseRequest::none;
    sendCloseNotify(ctx, thenClose);
  }
}

bool SslHandler::stopped() const noexcept { return failed_ || inactive_ || ctx_ == nullptr; }

void SslHandler::encryptQueued(ChannelHandlerContext& ctx) {
  // Size the ciphertext buffer for what this round will encrypt.
  const std::uint64_t bytes = std::min<std::uint64_t>(pendingBytes_, kMaxCiphertextPerWrite);
  outHint_ = static_cast<std::size_t>(bytes) +
             (static_cast<std::size_t>(bytes) / kMaxRecordPlaintext + 1) * kRecordOverhead;
  // One piece per turn, the front write looked up afresh each time: handing ciphertext to the
  // socket runs listeners and handlers (which may write, close, or remove this handler), and a
  // write queued meanwhile may move the queue's storage.
  while (!pending_.empty()) {
    PendingWrite& w = pending_.front();
    if (auto* buf = std::get_if<AnyByteBuf>(&w.data)) {
      std::span<const std::byte> piece;
      visitBuf(*buf, [&](const auto& b) {
        b.forEachSegment(b.readerIndex(), b.readableBytes(), [&](std::span<const std::byte> seg) {
          piece = seg;
          return false;
        });
      });
      // At most one socket write's worth at a time, so that a large buffer pauses too.
      piece = piece.first(std::min(piece.size(), kMaxCiphertextPerWrite));
      const bool last = piece.size() == pendingBytes_;
      if (!encryptSpan(piece.data(), piece.size(), last)) return;
      skipBytes(*buf, piece.size());
      w.remaining -= piece.size();
      pendingBytes_ -= piece.size();
    } else if (!encryptFile(std::get<FileRegion>(w.data), w)) {
      return;
    }
    if (w.remaining == 0) {
      if (w.listener != nullptr) {
        (staging_.isReadable() ? stagingListeners_ : batches_->collecting).push_back(w.listener);
      }
      pending_.pop_front();
    }
    if (out_.readableBytes() >= kMaxCiphertextPerWrite) {
      writeOut(ctx, true);
      if (stopped()) return;
      if (!ignoreWritability_ && !ctx.channel().isWritable() && !pending_.empty()) {
        flushPaused_ = true;  // channelWritabilityChanged goes on
        return;
      }
    }
  }
  if (!flushStaging()) return;
  // An idle connection keeps no gathering buffer (the pool makes the next one cheaply).
  staging_ = ByteBuf();
  writeOut(ctx, true);
}

bool SslHandler::encryptFile(FileRegion& file, PendingWrite& w) {
  // TLS cannot use sendfile: the file is read into staging_ one record at a time, up to
  // kMaxCiphertextPerWrite per round (the caller then hands it to the socket).
  std::size_t budget = kMaxCiphertextPerWrite;
  while (w.remaining > 0 && budget > 0) {
    if (!staging_.isValid()) staging_ = ctx_->alloc().buffer(kMaxRecordPlaintext);
    const std::size_t room = kMaxRecordPlaintext - staging_.readableBytes();
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(w.remaining, room));
    staging_.ensureWritable(want);
    const ssize_t n =
        ::pread(file.fd(), staging_.writePtrUnchecked(), want, static_cast<off_t>(file.position()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // The file shrank (or failed) under its region: the peer was promised its bytes.
      const int err = n < 0 ? errno : EIO;
      fail(*ctx_, std::error_code(err, std::system_category()),
           "the file region could not be read");
      return false;
    }
    staging_.advanceWriterUnchecked(static_cast<std::size_t>(n));
    file.advance(static_cast<std::uint64_t>(n));
    w.remaining -= static_cast<std::uint64_t>(n);
    pendingBytes_ -= static_cast<std::uint64_t>(n);
    budget -= std::min(budget, static_cast<std::size_t>(n));
    if (staging_.readableBytes() == kMaxRecordPlaintext && !flushStaging()) return false;
  }
  return true;
}

bool SslHandler::encryptSpan(const std::byte* p, std::size_t n, bool last) {
  while (n > 0) {
    if (!staging_.isReadable()) {
      // Nothing gathered: a full record, or the flush's final piece, is encrypted in place.
      if (n >= kMaxRecordPlaintext) {
        if (!sslWrite(p, kMaxRecordPlaintext)) return false;
        p += kMaxRecordPlaintext;
        n -= kMaxRecordPlaintext;
        continue;
      }
      if (last) return sslWrite(p, n);
    }
    if (!staging_.isValid()) staging_ = ctx_->alloc().buffer(kMaxRecordPlaintext);
    const std::size_t take = std::min(n, kMaxRecordPlaintext - staging_.readableBytes());
    staging_.appendBytes(std::span(p, take));
    p += take;
    n -= take;
    if (staging_.readableBytes() == kMaxRecordPlaintext && !flushStaging()) return false;
  }
  return true;
}

bool SslHandler::flushStaging() {
  if (staging_.isReadable()) {
    if (!sslWrite(staging_.readPtr(), staging_.readableBytes())) return false;
    staging_.clear();
  }
  if (!stagingListeners_.empty()) {
    batches_->collecting.insert(batches_->collecting.end(), stagingListeners_.begin(),
                                stagingListeners_.end());
    stagingListeners_.clear();
  }
  return true;
}

bool SslHandler::sslWrite(const std::byte* p, std::size_t n) {
  // SSL_get_error needs a queue holding only this call's errors; user code ran since the last.
  ERR_clear_error();
  std::size_t written = 0;
  const int r = SSL_write_ex(ssl_, p, n, &written);
  if (r == 1) return true;  // the BIO takes everything: all n bytes, as one record
  std::string detail;
  const std::error_code ec = classify(r, detail);
  fail(*ctx_, ec, detail);
  return false;
}

void SslHandler::writeOut(ChannelHandlerContext& ctx, bool flushNow, bool closeAfter) {
  auto& collecting = batches_->collecting;
  if (out_.isReadable()) {
    WriteListener* listener = nullptr;
    if (!collecting.empty() || closeAfter) {
      detail::SslWriteBatch* batch = batches_->take(batches_);
      batch->listeners.swap(collecting);
      batch->closeAfter = closeAfter;
      listener = batch;
    }
    ByteBuf out = std::move(out_);
    out_ = ByteBuf();
    ctx.write(std::move(out), listener);
  } else if (!collecting.empty()) {
    // Writes of no bytes: complete now.
    std::vector<WriteListener*> done;
    done.swap(collecting);
    for (WriteListener* l : done) l->operationComplete({});
  }
  if (flushNow) ctx.flush();
}

// ---------------------------------------------------------------- closing

void SslHandler::closeOutbound() {
  if (stopped() || closeNotifySent_ || closing_) return;
  if (!handshakeDone_) {
    closeOutboundPending_ = true;
    return;
  }
  ignoreWritability_ = true;
  flushPaused_ = false;
  if (inEncrypt_) {
    // Called back from an encryption round: close_notify goes when the round has drained.
    flushPending_ = true;
    if (closeNotifyRequested_ == CloseRequest::none) {
      closeNotifyRequested_ = CloseRequest::closeOutbound;
    }
    return;
  }
  encryptPending(*ctx_);
  if (!stopped() && !closeNotifySent_) sendCloseNotify(*ctx_, false);
}

void SslHandler::close(ChannelHandlerContext& ctx) {
  if (closing_) {
    closeForwarded_ = true;
    ctx.close();
    return;
  }
  closing_ = true;
  if (inEncrypt_ && !failed_ && handshakeDone_ && !closeNotifySent_) {
    // Called back from the socket write of an encryption round (a listener, a handler): the
    // round goes on with everything queued, then sends close_notify and closes.
    ignoreWritability_ = true;
    flushPaused_ = false;
    flushPending_ = true;
    closeNotifyRequested_ = CloseRequest::close;
    return;
  }
  if (failed_ || !handshakeDone_ || closeNotifySent_) {
    failPending(ChannelErrc::closedBeforeWritten);
    closeForwarded_ = true;
    ctx.close();
    return;
  }
  // What is queued goes out first, then close_notify; the channel closes once it is written.
  ignoreWritability_ = true;
  flushPaused_ = false;
  encryptPending(ctx);
  if (stopped()) return;  // fail() closed the channel, or it closed under the writes
  sendCloseNotify(ctx, true);
}

void SslHandler::sendCloseNotify(ChannelHandlerContext& ctx, bool thenClose) {
  closeNotifySent_ = true;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // writes close_notify through the BIO into out_
  ERR_clear_error();
  if (!thenClose) {
    writeOut(ctx, true);
    return;
  }
  if (!out_.isReadable()) {
    closeForwarded_ = true;
    ctx.close();
    return;
  }
  if (closeNotifyFlushTimeout_.count() > 0) {
    closeTimer_ = ctx.channel().executor().schedule(closeNotifyFlushTimeout_, [this] {
      if (ctx_ == nullptr) return;
      ChannelPipeline::EventScope scope(ctx_->pipeline());
      onCloseNotifyWritten();
    });
  }
  writeOut(ctx, true, true);
}

void SslHandler::onCloseNotifyWritten() {
  if (ctx_ == nullptr || closeForwarded_) return;
  closeForwarded_ = true;
  closeTimer_.cancel();
  ctx_->close();
}

// ---------------------------------------------------------------- failures

void SslHandler::fail(ChannelHandlerContext& ctx, std::error_code ec, const std::string& detail) {
  if (failed_) return;
  failed_ = true;
  handshakeTimer_.cancel();
  writeOut(ctx, true);  // the alert OpenSSL wrote, if any (best effort: the channel closes)
  failPending(ec);
  log(ctx, handshakeDone_ ? "TLS session failed" : "TLS handshake failed", ec, detail);
  if (!handshakeDone_) {
    SslHandshakeCompletionEvent ev;
    ev.error = ec;
    ctx.fireUserEventTriggered(Message(std::move(ev)));
  } else {
    ctx.fireUserEventTriggered(Message(SslCloseCompletionEvent{ec}));
  }
  closing_ = true;
  if (!closeForwarded_) {
    closeForwarded_ = true;
    ctx.close();
  }
}

void SslHandler::log(ChannelHandlerContext& ctx, const char* what, std::error_code ec,
                     const std::string& detail) const {
  if (!logErrors_ || !context_->admitLogLine()) return;
  const Channel& ch = ctx.channel();
  std::fprintf(stderr, "netbuf: %s on channel %s -> %s: %s%s%s (closed)\n", what,
               ch.localAddress().c_str(), ch.remoteAddress().c_str(), ec.message().c_str(),
               detail.empty() ? "" : ": ", detail.c_str());
}

std::error_code SslHandler::classify(int r, std::string& detail) const {
  const int err = SSL_get_error(ssl_, r);
  const unsigned long e = ERR_peek_last_error();
  detail = detail::drainOpenSslErrors();
  if (renegotiation_) return SslErrc::renegotiationRefused;
  const auto fallback = handshakeDone_ ? SslErrc::protocolError : SslErrc::handshakeFailed;
  if (err != SSL_ERROR_SSL || ERR_GET_LIB(e) != ERR_LIB_SSL) {
    if (detail.empty()) detail = err == SSL_ERROR_SYSCALL ? "I/O failure" : "SSL error";
    return fallback;
  }
  const int reason = ERR_GET_REASON(e);
  switch (reason) {
    case SSL_R_CERTIFICATE_VERIFY_FAILED: {
      const long v = SSL_get_verify_result(ssl_);
      detail = X509_verify_cert_error_string(v);
      switch (v) {
        case X509_V_ERR_CERT_HAS_EXPIRED:
          return SslErrc::certificateExpired;
        case X509_V_ERR_CERT_NOT_YET_VALID:
          return SslErrc::certificateNotYetValid;
        case X509_V_ERR_HOSTNAME_MISMATCH:
        case X509_V_ERR_IP_ADDRESS_MISMATCH:
          return SslErrc::hostnameMismatch;
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
        case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
          return SslErrc::unknownCa;
        default:
          return SslErrc::certificateVerifyFailed;
      }
    }
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return SslErrc::peerCertificateRequired;
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
      return handshakeDone_ ? SslErrc::badRecord : SslErrc::notTls;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_VERSION_TOO_HIGH:
      return SslErrc::unsupportedVersion;
    case SSL_R_NO_SHARED_CIPHER:
    case SSL_R_NO_SHARED_GROUPS:
    case SSL_R_NO_SUITABLE_KEY_SHARE:
    case SSL_R_NO_CIPHERS_AVAILABLE:
      return SslErrc::noSharedCipher;
    case SSL_R_NO_APPLICATION_PROTOCOL:
    case SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL:
      return SslErrc::noApplicationProtocol;
    case SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC:
    case SSL_R_DECRYPTION_FAILED:
    case SSL_R_BAD_RECORD_TYPE:
    case SSL_R_UNEXPECTED_RECORD:
    case SSL_R_DATA_LENGTH_TOO_LONG:
    case SSL_R_BAD_LENGTH:
    case SSL_R_LENGTH_MISMATCH:
    case SSL_R_ENCRYPTED_LENGTH_TOO_LONG:
      return SslErrc::badRecord;
    case SSL_R_NO_RENEGOTIATION:
      return SslErrc::renegotiationRefused;
    default:
      break;
  }
  if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) {
    return SslErrc::alertReceived;  // detail names the alert
  }
  return fallback;
}

}  // namespace netbuf
