#pragma once
// Two TLS ends on EmbeddedChannels, for SslHandler tests without sockets: each end is
// [SslHandler, TlsRecorder]; pump() carries each end's ciphertext (what reached its head) into the
// other as inbound reads until nothing moves. Tests can instead move the bytes by hand (split,
// corrupt, drop them) with takeOutbound() and feed().

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/tls/ssl_close_completion_event.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <netbuf/tls/ssl_handshake_completion_event.hpp>
#include <netbuf/transport/embedded_channel.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace netbuf::test {

/// The tail of a TLS end: keeps the plaintext read and the TLS events.
class TlsRecorder final : public ChannelHandler {
 public:
  std::string received;
  std::vector<SslHandshakeCompletionEvent> handshakes;
  std::vector<SslCloseCompletionEvent> closes;
  int inactive = 0;
  int reads = 0;
  std::size_t bytes = 0;
  bool keepText = true;  // false: count the plaintext only (benchmarks)

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if (!msg.is<ByteBuf>()) return ctx.fireChannelRead(std::move(msg));
    ByteBuf b = msg.take<ByteBuf>();
    bytes += b.readableBytes();
    if (keepText) received.append(b.readableStringView());
    ++reads;
  }
  void userEventTriggered(ChannelHandlerContext& ctx, Message ev) override {
    if (ev.is<SslHandshakeCompletionEvent>()) {
      handshakes.push_back(ev.take<SslHandshakeCompletionEvent>());
    } else if (ev.is<SslCloseCompletionEvent>()) {
      closes.push_back(ev.take<SslCloseCompletionEvent>());
    } else {
      ctx.fireUserEventTriggered(std::move(ev));
    }
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    ++inactive;
    ctx.fireChannelInactive();
  }
};

struct TlsEnd {
  std::unique_ptr<EmbeddedChannel> ch;
  SslHandler* ssl = nullptr;
  TlsRecorder* rec = nullptr;

  explicit TlsEnd(std::unique_ptr<SslHandler> handler) {
    ssl = handler.get();
    ssl->setLogErrors(false);
    auto r = std::make_unique<TlsRecorder>();
    rec = r.get();
    ch = std::make_unique<EmbeddedChannel>(std::move(handler), std::move(r));
  }

  /// Every ciphertext byte that reached the head, in order, as one string.
  std::string takeOutbound() {
    std::string out;
    while (auto m = ch->readOutboundMessage()) {
      if (m.is<ByteBuf>()) out.append(m.as<ByteBuf>().readableStringView());
    }
    return out;
  }
  /// Feeds bytes in as one read.
  void feed(std::string_view bytes) {
    if (!bytes.empty()) ch->writeInbound(Unpooled::copiedBuffer(bytes));
  }
  /// Writes text and flushes.
  void send(std::string_view text) { ch->writeOutbound(Unpooled::copiedBuffer(text)); }
  bool handshakeSucceeded() const {
    return rec->handshakes.size() == 1 && rec->handshakes[0].isSuccess();
  }
  std::error_code handshakeError() const {
    return rec->handshakes.empty() ? std::error_code() : rec->handshakes[0].error;
  }
};

/// Carries ciphertext both ways until neither end has any; returns the bytes carried.
inline std::size_t pump(TlsEnd& a, TlsEnd& b) {
  std::size_t total = 0;
  for (;;) {
    const std::string ab = a.takeOutbound();
    if (b.ch->isOpen()) b.feed(ab);
    const std::string ba = b.takeOutbound();
    if (a.ch->isOpen()) a.feed(ba);
    total += ab.size() + ba.size();
    if (ab.empty() && ba.empty()) return total;
  }
}

/// TLS records in a ciphertext stream: (content type, length) of each whole record.
struct TlsRecordHeader {
  int type;
  std::size_t length;
};
inline std::vector<TlsRecordHeader> tlsRecords(std::string_view s) {
  std::vector<TlsRecordHeader> out;
  while (s.size() >= 5) {
    const std::size_t len =
        (static_cast<unsigned char>(s[3]) << 8) | static_cast<unsigned char>(s[4]);
    if (s.size() < 5 + len) break;
    out.push_back({static_cast<unsigned char>(s[0]), len});
    s.remove_prefix(5 + len);
  }
  return out;
}

}  // namespace netbuf::test
