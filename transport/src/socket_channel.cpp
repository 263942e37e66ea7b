#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cstring>
#include "detail/endpoint_format.hpp"
#include <netbuf/transport/socket_channel.hpp>

namespace netbuf {

namespace {

using boost::asio::ip::tcp;

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

std::shared_ptr<SocketChannel> SocketChannel::create(EventLoop& loop, Socket socket,
                                                     const ChannelOptions& options) {
  return std::shared_ptr<SocketChannel>(new SocketChannel(loop, std::move(socket), options));
}

SocketChannel::SocketChannel(EventLoop& loop, Socket socket, const ChannelOptions& options)
    : Channel(loop, options.allocator != nullptr ? *options.allocator
                                                 : ByteBufAllocator::defaultAllocator()),
      loop_(&loop),
      socket_(std::move(socket)),
      options_(options),
      readSizes_(readSizeTable(options.minReadSize, options.maxReadSize)) {
  setAutoReadFlag(options.autoRead);  // not active yet: only records the flag
  if (options.writeBufferLowWaterMark > options.writeBufferHighWaterMark) {
    throw IllegalArgumentError(
        fmt::format("writeBufferLowWaterMark {} is above writeBufferHighWaterMark {}",
                    options.writeBufferLowWaterMark, options.writeBufferHighWaterMark));
  }
  while (readSizeIndex_ + 1 < readSizes_.size() &&
         readSizes_[readSizeIndex_] < options.initialReadSize)
    ++readSizeIndex_;
  iov_.reserve(64);
  // The addresses are read once, here: afterwards they are plain values any thread may read (the
  // socket itself belongs to the loop, and its descriptor is closed there).
  boost::system::error_code ec;
  const auto local = socket_.local_endpoint(ec);
  if (!ec) {
    domain_ = detail::isDomain(local);
    localAddress_ = detail::formatEndpoint(local);
    localTcp_ = detail::toTcp(local);
  } else {
    localAddress_ = "?";
  }
  const auto remote = socket_.remote_endpoint(ec);
  if (!ec) {
    remoteAddress_ = detail::formatEndpoint(remote);
    remoteTcp_ = detail::toTcp(remote);
  } else {
    remoteAddress_ = "?";
  }
}

SocketChannel::~SocketChannel() {
  destroyPipeline();
  // Destroyed while open (its group went away before it closed): the queued writes' listeners
  // still hear of it, once.
  for (auto* q : {&flushed_, &unflushed_}) {
    for (auto& w : *q) {
      if (w.listener != nullptr) w.listener->operationComplete(ChannelErrc::closedBeforeWritten);
    }
    q->clear();
  }
}

void SocketChannel::submit(detail::OutboundTask& task) {
  loop_->execute(std::move(task));  // posted as is: no std::function around it
}

bool SocketChannel::runOnLoop(std::function<void()> fn) {
  if (inEventLoop()) {
    fn();
    return true;
  }
  try {
    loop_->execute([self = shared_from_this(), fn = std::move(fn)] { fn(); });
    return true;
  } catch (const RejectedExecutionError&) {
    return false;
  }
}

void SocketChannel::start(const Initializer& init) {
  boost::system::error_code ignored;
  if (!domain_) {
    socket_.set_option(tcp::no_delay(options_.tcpNoDelay), ignored);
    socket_.set_option(boost::asio::socket_base::keep_alive(options_.keepAlive), ignored);
  }
  if (options_.sendBufferSize > 0)
    socket_.set_option(boost::asio::socket_base::send_buffer_size(options_.sendBufferSize),
                       ignored);
  if (options_.receiveBufferSize > 0) {
    socket_.set_option(boost::asio::socket_base::receive_buffer_size(options_.receiveBufferSize),
                       ignored);
  }
  // Writes are made directly (flush writes at once) and must never block the loop.
  socket_.non_blocking(true, ignored);
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
  const std::size_t now = pendingBytes_.load(std::memory_order_relaxed) + n;
  pendingBytes_.store(now, std::memory_order_relaxed);
  if (now > options_.writeBufferHighWaterMark && writable_.load(std::memory_order_relaxed)) {
    writable_.store(false, std::memory_order_relaxed);
    pipeline().fireChannelWritabilityChanged();
  }
}

void SocketChannel::removePending(std::size_t n) {
  const std::size_t now = pendingBytes_.load(std::memory_order_relaxed) - n;
  pendingBytes_.store(now, std::memory_order_relaxed);
  if (now < options_.writeBufferLowWaterMark && !writable_.load(std::memory_order_relaxed)) {
    writable_.store(true, std::memory_order_relaxed);
    pipeline().fireChannelWritabilityChanged();
  }
}

void SocketChannel::doWrite(Message msg, WriteListener* listener) {
  if (!open_ || outputShutdown_.load(std::memory_order_relaxed) || shutdownOutputPending_) {
    if (listener != nullptr) listener->operationComplete(ChannelErrc::closed);
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
        "encoder for it in the pipeline",
        typeName(msg.type())));
  }
  const std::size_t n = readableBytes(buf);
  unflushed_.push_back({std::move(buf), n, listener});
  addPending(n);
}

void SocketChannel::doFlush() {
  if (!unflushed_.empty()) {
    for (auto& w : unflushed_) flushed_.push_back(std::move(w));
    unflushed_.clear();
  }
  // A flush from a listener or handler called by writeFlushed() only queues: the loop there goes
  // on with it. While waiting for the socket, the wait's completion writes it.
  if (!inWrite_ && !waitingWrite_) writeFlushed();
}

void SocketChannel::consumeWritten(std::size_t n) {
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
    if (!open_) return;   // a listener or handler closed the channel
  }
}

void SocketChannel::writeFlushed() {
  if (!open_) return;
  // A flush from a handler while the channel is being destroyed (its handlers are removed in the
  // destructor) cannot wait for the socket: nothing could own the channel until the wait ends.
  inWrite_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{inWrite_};
  for (int spin = 0;; ++spin) {
    // Complete empty writes at the front.
    while (!flushed_.empty() && flushed_.front().remaining == 0) {
      WriteListener* l = flushed_.front().listener;
      flushed_.pop_front();
      if (l != nullptr) l->operationComplete({});
      if (!open_) return;
    }
    if (flushed_.empty()) break;
    if (spin == kWriteSpinCount) {
      // Long enough on this channel: let the loop run other work, then go on.
      std::shared_ptr<SocketChannel> self = std::static_pointer_cast<SocketChannel>(
          weak_from_this().lock());
      if (self == nullptr) return;
      waitingWrite_ = true;
      boost::asio::post(loop_->context(), [self = std::move(self)] {
        self->waitingWrite_ = false;
        self->writeFlushed();
      });
      return;
    }
    iov_.clear();
    std::size_t offered = 0;
    for (auto& w : flushed_) {
      if (iov_.size() >= kMaxIovecs) break;
      if (auto* b = std::get_if<ByteBuf>(&w.buf)) {
        if (b->isReadable()) {
          iov_.push_back(b->readableBuffer());
          offered += iov_.back().size();
        }
      } else {
        for (const auto& piece : std::get<CompositeByteBuf>(w.buf).readableBuffers()) {
          if (iov_.size() >= kMaxIovecs) break;
          iov_.push_back(piece);
          offered += piece.size();
        }
      }
    }
    boost::system::error_code ec;
    const std::size_t n = socket_.write_some(iov_, ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) {
      waitWritable();
      return;
    }
    if (ec) return closeWithError(ec);
    consumeWritten(n);
    if (!open_) return;
    if (n < offered) {  // the socket's buffer is full: the next writev would only say EAGAIN
      waitWritable();
      return;
    }
  }
  afterDrained();
}

void SocketChannel::waitWritable() {
  std::shared_ptr<SocketChannel> self =
      std::static_pointer_cast<SocketChannel>(weak_from_this().lock());
  if (self == nullptr) return;  // being destroyed: nothing could own the channel until then
  waitingWrite_ = true;
  socket_.async_wait(Socket::wait_write,
                     [self = std::move(self)](const boost::system::error_code& ec) {
                       self->waitingWrite_ = false;
                       if (!self->open_) return;
                       if (ec) return self->closeWithError(ec);
                       self->writeFlushed();
                     });
}

void SocketChannel::afterDrained() {
  if (!open_ || !flushed_.empty()) return;
  if (closeWhenDrained_ && unflushed_.empty()) {
    doClose();
    return;
  }
  if (shutdownOutputPending_) {
    shutdownOutputPending_ = false;
    outputShutdown_.store(true, std::memory_order_release);
    boost::system::error_code ignored;
    socket_.shutdown(Socket::shutdown_send, ignored);
  }
}

void SocketChannel::closeGracefully() {
  runOnLoop([this] {
    if (!open_) return;
    closeWhenDrained_ = true;
    doFlush();
    if (!inWrite_ && !waitingWrite_) afterDrained();  // nothing was queued: closes now
  });
}

void SocketChannel::shutdownOutput() {
  runOnLoop([this] {
    if (!open_ || outputShutdown_.load(std::memory_order_relaxed)) return;
    shutdownOutputPending_ = true;
    doFlush();
    if (!inWrite_ && !waitingWrite_) afterDrained();  // nothing queued: shuts down now
  });
}

// ------------------------------------------------------------------ closing

void SocketChannel::addCloseListener(std::function<void()> fn) {
  auto run = [this, fn]() mutable {
    if (!open_) {
      fn();
      return;
    }
    closeListeners_.push_back(std::move(fn));
  };
  if (!runOnLoop(run)) fn();  // the loop is gone: the channel will never run it
}

std::shared_future<void> SocketChannel::closeFuture() {
  std::lock_guard<std::mutex> lock(closeFutureMutex_);
  if (closePromise_ == nullptr) {
    closePromise_ = std::make_shared<std::promise<void>>();
    closeFuture_ = closePromise_->get_future().share();
    addCloseListener([p = closePromise_] { p->set_value(); });
  }
  return closeFuture_;
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
    std::shared_ptr<Channel> keep;
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
  for (auto* q : {&flushed_, &unflushed_}) {
    std::deque<QueuedWrite> fail = std::move(*q);
    q->clear();
    for (auto& w : fail) {
      pendingBytes_.store(pendingBytes_.load(std::memory_order_relaxed) - w.remaining,
                          std::memory_order_relaxed);
      if (w.listener != nullptr) w.listener->operationComplete(ChannelErrc::closedBeforeWritten);
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
