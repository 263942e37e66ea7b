#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <sstream>

namespace netbuf {

namespace {

using boost::asio::ip::tcp;

std::string format(const tcp::endpoint& ep) {
  std::ostringstream s;
  s << ep;
  return s.str();
}

/// Netty's AdaptiveRecvByteBufAllocator size table (16-byte steps below 512, then doubling),
/// limited to [min, max].
std::vector<std::size_t> readSizeTable(std::size_t min, std::size_t max) {
  std::vector<std::size_t> t;
  for (std::size_t s = 16; s < 512; s += 16) {
    if (s >= min && s <= max) t.push_back(s);
  }
  for (std::size_t s = 512; s <= max; s *= 2) {
    if (s >= min) t.push_back(s);
  }
  if (t.empty()) t.push_back(std::max<std::size_t>(min, 1));
  return t;
}

constexpr std::size_t kIndexIncrement = 4;
constexpr std::size_t kIndexDecrement = 1;

bool isQuietClose(const boost::system::error_code& ec) {
  return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset ||
         ec == boost::asio::error::operation_aborted || ec == boost::asio::error::broken_pipe ||
         ec == boost::asio::error::bad_descriptor;
}

}  // namespace

std::shared_ptr<SocketChannel> SocketChannel::create(EventLoop& loop, tcp::socket socket,
                                                     const ChannelOptions& options) {
  return std::shared_ptr<SocketChannel>(new SocketChannel(loop, std::move(socket), options));
}

SocketChannel::SocketChannel(EventLoop& loop, tcp::socket socket, const ChannelOptions& options)
    : Channel(options.allocator != nullptr ? *options.allocator
                                           : ByteBufAllocator::defaultAllocator()),
      loop_(&loop),
      socket_(std::move(socket)),
      options_(options),
      readSizes_(readSizeTable(options.minReadSize, options.maxReadSize)) {
  setAutoRead(options.autoRead);  // not active yet: only records the flag
  if (options.writeBufferLowWaterMark > options.writeBufferHighWaterMark) {
    throw IllegalArgumentError(
        fmt::format("writeBufferLowWaterMark {} is above writeBufferHighWaterMark {}",
                    options.writeBufferLowWaterMark, options.writeBufferHighWaterMark));
  }
  while (readSizeIndex_ + 1 < readSizes_.size() &&
         readSizes_[readSizeIndex_] < options.initialReadSize)
    ++readSizeIndex_;
  iov_.reserve(64);
}

SocketChannel::~SocketChannel() { destroyPipeline(); }

void SocketChannel::start(const Initializer& init) {
  boost::system::error_code ignored;
  socket_.set_option(tcp::no_delay(options_.tcpNoDelay), ignored);
  socket_.set_option(boost::asio::socket_base::keep_alive(options_.keepAlive), ignored);
  if (options_.sendBufferSize > 0)
    socket_.set_option(boost::asio::socket_base::send_buffer_size(options_.sendBufferSize),
                       ignored);
  if (options_.receiveBufferSize > 0) {
    socket_.set_option(boost::asio::socket_base::receive_buffer_size(options_.receiveBufferSize),
                       ignored);
  }
  if (init) init(*this);
  if (!open_) return;  // the initializer closed it (a connection limit): never counted in
  loop_->channelOpened();
  // The hook holds the channel: an open channel is owned by its loop until it closes (doClose
  // removes the hook), as a Netty channel is registered with its event loop. Without that, a
  // channel with reading off and no write in flight (no operation holding it) would be destroyed
  // with its socket open once its other owners let go.
  shutdownHook_ = loop_->addShutdownHook([self = shared_from_this()] { self->closeGracefully(); });
  active_ = true;
  pipeline().fireChannelActive();
  if (open_ && isAutoRead()) startRead();
}

std::string SocketChannel::localAddress() const {
  boost::system::error_code ec;
  const auto ep = socket_.local_endpoint(ec);
  return ec ? std::string("?") : format(ep);
}
std::string SocketChannel::remoteAddress() const {
  boost::system::error_code ec;
  const auto ep = socket_.remote_endpoint(ec);
  return ec ? std::string("?") : format(ep);
}
tcp::endpoint SocketChannel::localEndpoint() const {
  boost::system::error_code ec;
  return socket_.local_endpoint(ec);
}
tcp::endpoint SocketChannel::remoteEndpoint() const {
  boost::system::error_code ec;
  return socket_.remote_endpoint(ec);
}

// ------------------------------------------------------------------ reading

void SocketChannel::onAutoReadChanged() {
  if (isAutoRead() && open_ && active_ && !reading_) startRead();
}

void SocketChannel::startRead() {
  reading_ = true;
  ByteBuf buf = alloc().buffer(readSizes_[readSizeIndex_]);
  auto target = buf.writableBuffer();
  socket_.async_read_some(target, [self = shared_from_this(), b = std::move(buf)](
                                      const boost::system::error_code& ec, std::size_t n) mutable {
    self->onRead(ec, n, std::move(b));
  });
}

void SocketChannel::recordReadSize(std::size_t n) noexcept {
  const std::size_t lower =
      readSizeIndex_ >= kIndexDecrement ? readSizeIndex_ - kIndexDecrement : 0;
  if (n <= readSizes_[lower]) {
    if (decreaseNow_) {
      readSizeIndex_ = lower;
      decreaseNow_ = false;
    } else {
      decreaseNow_ = true;
    }
  } else if (n >= readSizes_[readSizeIndex_]) {
    readSizeIndex_ = std::min(readSizeIndex_ + kIndexIncrement, readSizes_.size() - 1);
    decreaseNow_ = false;
  }
}

void SocketChannel::onRead(const boost::system::error_code& ec, std::size_t n, ByteBuf buf) {
  reading_ = false;
  if (!open_) return;
  if (ec) return closeWithError(ec);
  buf.commitWrite(n);
  recordReadSize(n);
  pipeline().fireChannelRead(Message(std::move(buf)));
  pipeline().fireChannelReadComplete();
  if (open_ && isAutoRead() && !reading_) startRead();
}

// ------------------------------------------------------------------ writing

void SocketChannel::addPending(std::size_t n) {
  pendingBytes_ += n;
  if (writable_ && pendingBytes_ > options_.writeBufferHighWaterMark) {
    writable_ = false;
    pipeline().fireChannelWritabilityChanged();
  }
}

void SocketChannel::removePending(std::size_t n) {
  pendingBytes_ -= n;
  if (!writable_ && pendingBytes_ < options_.writeBufferLowWaterMark) {
    writable_ = true;
    pipeline().fireChannelWritabilityChanged();
  }
}

void SocketChannel::doWrite(Message msg, WriteListener* listener) {
  if (!open_ || outputShutdown_ || shutdownOutputPending_) {
    if (listener != nullptr)
      listener->operationComplete(std::make_error_code(std::errc::not_connected));
    return;
  }
  AnyByteBuf buf;
  if (msg.is<ByteBuf>()) {
    buf = msg.take<ByteBuf>();
  } else if (msg.is<AnyByteBuf>()) {
    buf = msg.take<AnyByteBuf>();
  } else if (msg.is<CompositeByteBuf>()) {
    buf = msg.take<CompositeByteBuf>();
  } else {
    throw MessageTypeError(fmt::format(
        "SocketChannel writes buffers (ByteBuf, CompositeByteBuf, AnyByteBuf), not {}: put an "
        "encoder in the pipeline",
        typeName(msg.type())));
  }
  const std::size_t n = readableBytes(buf);
  unflushed_.push_back({std::move(buf), n, listener});
  addPending(n);
}

void SocketChannel::doFlush() {
  if (unflushed_.empty()) return;
  for (auto& w : unflushed_) flushed_.push_back(std::move(w));
  unflushed_.clear();
  if (!writing_) startWrite();
}

void SocketChannel::startWrite() {
  // Complete empty writes at the front, then gather up to kMaxIovecs buffers into one syscall.
  while (!flushed_.empty() && flushed_.front().remaining == 0) {
    WriteListener* l = flushed_.front().listener;
    flushed_.pop_front();
    if (l != nullptr) l->operationComplete({});
  }
  if (flushed_.empty() || !open_) {
    if (flushed_.empty() && closeWhenDrained_ && open_ && unflushed_.empty()) {
      doClose();
      return;
    }
    if (flushed_.empty() && shutdownOutputPending_ && open_) {
      shutdownOutputPending_ = false;
      outputShutdown_ = true;
      boost::system::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
    }
    return;
  }
  // A flush from a handler while the channel is being destroyed (its handlers are removed in the
  // destructor) cannot start a write: nothing could own the channel until it completes.
  std::shared_ptr<SocketChannel> self = weak_from_this().lock();
  if (self == nullptr) return;
  iov_.clear();
  for (auto& w : flushed_) {
    if (iov_.size() >= kMaxIovecs) break;
    if (auto* b = std::get_if<ByteBuf>(&w.buf)) {
      if (b->isReadable()) iov_.push_back(b->readableBuffer());
    } else {
      for (const auto& piece : std::get<CompositeByteBuf>(w.buf).readableBuffers()) {
        if (iov_.size() >= kMaxIovecs) break;
        iov_.push_back(piece);
      }
    }
  }
  writing_ = true;
  socket_.async_write_some(
      iov_, [self = std::move(self)](const boost::system::error_code& ec, std::size_t n) {
        self->onWritten(ec, n);
      });
}

void SocketChannel::onWritten(const boost::system::error_code& ec, std::size_t n) {
  // writing_ stays true while listeners and writability events run: a handler that writes and
  // flushes from them only queues, and the one write below continues (never two at once).
  if (!open_) {
    writing_ = false;
    return;
  }
  if (ec) {
    writing_ = false;
    return closeWithError(ec);
  }
  while (n > 0 && !flushed_.empty()) {
    QueuedWrite& w = flushed_.front();
    const std::size_t take = std::min(n, w.remaining);
    std::visit([take](auto& b) { b.skipBytes(take); }, w.buf);
    w.remaining -= take;
    n -= take;
    WriteListener* done = nullptr;
    if (w.remaining == 0) {
      done = w.listener;
      flushed_.pop_front();  // w is gone from here on
    }
    if (done != nullptr) done->operationComplete({});
    removePending(take);  // may fire channelWritabilityChanged
    if (!open_) {         // a listener or handler closed the channel
      writing_ = false;
      return;
    }
  }
  writing_ = false;
  startWrite();
}

void SocketChannel::closeGracefully() {
  if (!open_) return;
  closeWhenDrained_ = true;
  doFlush();
  if (!writing_) startWrite();  // nothing in flight: closes now (or starts the last writes)
}

void SocketChannel::shutdownOutput() {
  if (!open_ || outputShutdown_) return;
  shutdownOutputPending_ = true;
  doFlush();
  if (!writing_) startWrite();  // nothing queued: shuts down now
}

// ------------------------------------------------------------------ closing

void SocketChannel::addCloseListener(std::function<void()> fn) {
  if (!open_) {
    fn();
    return;
  }
  closeListeners_.push_back(std::move(fn));
}

void SocketChannel::closeWithError(const boost::system::error_code& ec) {
  if (!isQuietClose(ec)) {
    pipeline().fireExceptionCaught(std::make_exception_ptr(
        std::system_error(ec.value(), std::system_category(), "socket error")));
  }
  doClose();
}

void SocketChannel::doClose() {
  if (!open_) return;
  // Removing the hook may drop the last owner. The channel must outlive this close and every
  // frame above it (pipeline code that called close() still uses the pipeline), so the last
  // reference is handed to a later loop task rather than dropped here.
  struct ReleaseLater {
    std::shared_ptr<SocketChannel> keep;
    EventLoop* loop;
    ~ReleaseLater() {
      if (keep == nullptr) return;
      try {
        boost::asio::post(loop->context(), [k = std::move(keep)] {});
      } catch (...) {  // the loop's io_context is gone (group teardown): release here
      }
    }
  } releaseLater{weak_from_this().lock(), loop_};
  open_ = false;
  if (shutdownHook_ != 0) {  // set by start(): the channel counted itself in on its loop
    loop_->removeShutdownHook(shutdownHook_);
    loop_->channelClosed();
    shutdownHook_ = 0;
  }
  boost::system::error_code ignored;
  socket_.close(ignored);
  const auto aborted = std::make_error_code(std::errc::operation_canceled);
  for (auto* q : {&flushed_, &unflushed_}) {
    std::deque<QueuedWrite> fail = std::move(*q);
    q->clear();
    for (auto& w : fail) {
      pendingBytes_ -= w.remaining;
      if (w.listener != nullptr) w.listener->operationComplete(aborted);
    }
  }
  if (active_) pipeline().fireChannelInactive();
  active_ = false;
  auto listeners = std::move(closeListeners_);
  closeListeners_.clear();
  for (auto& fn : listeners) {
    try {
      fn();
    } catch (...) {
    }
  }
}

}  // namespace netbuf
