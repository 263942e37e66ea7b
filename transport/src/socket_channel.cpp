#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <netbuf/transport/socket_channel.hpp>

#include "detail/endpoint_format.hpp"
#include "detail/io_uring_loop.hpp"
#include "detail/socket_channel_ring.hpp"

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
  return make<SocketChannel>(loop, std::move(socket), options);
}

std::shared_ptr<SocketChannel> SocketChannel::create(EventLoop& loop, int fd,
                                                     const ChannelOptions& options) {
  if (loop.ioUring() != nullptr) return make<SocketChannel>(loop, fd, options);
  // On Asio the descriptor becomes a socket of the loop's io_context, of the family it has.
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::system_category(), "SocketChannel::create: getsockname");
  }
  Socket socket(loop.context());
  boost::system::error_code ec;
  socket.assign(boost::asio::generic::stream_protocol(addr.ss_family, 0), fd, ec);
  if (ec) {
    ::close(fd);
    throw std::system_error(ec.value(), std::system_category(), "SocketChannel::create");
  }
  return make<SocketChannel>(loop, std::move(socket), options);
}

SocketChannel::SocketChannel(EventLoop& loop, Socket socket, const ChannelOptions& options)
    : EventLoopChannel(
          loop,
          options.allocator != nullptr ? *options.allocator : ByteBufAllocator::defaultAllocator(),
          options.writeBufferHighWaterMark, options.writeBufferLowWaterMark),
      socket_(std::move(socket)),
      options_(options),
      readSizes_(readSizeTable(options.minReadSize, options.maxReadSize)) {
  init(socket_.native_handle(), options);
  if (loop.ioUring() != nullptr) {
    // A socket Asio connected (Bootstrap) or accepted: the ring takes its descriptor over, and
    // Asio's epoll no longer watches it.
    boost::system::error_code ec;
    const int fd = socket_.release(ec);
    if (ec) throw std::system_error(ec.value(), std::system_category(), "SocketChannel: release");
    try {
      ring_ = std::make_unique<RingIo>(*this, *loop.ioUring(), fd);
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
}

SocketChannel::SocketChannel(EventLoop& loop, int fd, const ChannelOptions& options)
    : EventLoopChannel(
          loop,
          options.allocator != nullptr ? *options.allocator : ByteBufAllocator::defaultAllocator(),
          options.writeBufferHighWaterMark, options.writeBufferLowWaterMark),
      socket_(loop.context()),
      options_(options),
      readSizes_(readSizeTable(options.minReadSize, options.maxReadSize)) {
  try {
    ring_ = std::make_unique<RingIo>(*this, *loop.ioUring(), fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  init(fd, options);
}

int SocketChannel::nativeHandle() noexcept { return ring_ ? ring_->fd : socket_.native_handle(); }

std::size_t SocketChannel::nextReadSize() const noexcept {
  return ring_ ? detail::IoUringLoop::kBufferSize : readSizes_[readSizeIndex_];
}

void SocketChannel::init(int fd, const ChannelOptions& options) {
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
  boost::asio::generic::stream_protocol::endpoint ep;
  auto len = static_cast<socklen_t>(ep.capacity());
  if (::getsockname(fd, ep.data(), &len) == 0) {
    ep.resize(len);
    domain_ = detail::isDomain(ep);
    localAddress_ = detail::formatEndpoint(ep);
    localTcp_ = detail::toTcp(ep);
  } else {
    localAddress_ = "?";
  }
  len = static_cast<socklen_t>(ep.capacity());
  if (::getpeername(fd, ep.data(), &len) == 0) {
    ep.resize(len);
    remoteAddress_ = detail::formatEndpoint(ep);
    remoteTcp_ = detail::toTcp(ep);
  } else {
    remoteAddress_ = "?";
  }
}

SocketChannel::~SocketChannel() {
  destroyPipeline();
  // Destroyed with a cancelled send's writes unsettled (the ring was torn down with the group):
  // their listeners hear of it.
  if (ring_) ringSettleInFlight(-ECANCELED);
  // Destroyed while open (its group went away before it closed): the queued writes' listeners
  // still hear of it, once.
  open_.store(false, std::memory_order_release);
  failWrites(flushed_, [](const QueuedWrite& w) { return w.remaining; });
  failWrites(unflushed_, [](const QueuedWrite& w) { return w.remaining; });
}

void SocketChannel::start(const Initializer& init) {
  const int fd = nativeHandle();
  auto setInt = [fd](int level, int name, int value) {
    ::setsockopt(fd, level, name, &value, sizeof value);  // best effort, as Netty's options are
  };
  if (!domain_) {
    setInt(IPPROTO_TCP, TCP_NODELAY, options_.tcpNoDelay ? 1 : 0);
    setInt(SOL_SOCKET, SO_KEEPALIVE, options_.keepAlive ? 1 : 0);
  }
  if (options_.sendBufferSize > 0) setInt(SOL_SOCKET, SO_SNDBUF, options_.sendBufferSize);
  if (options_.receiveBufferSize > 0) setInt(SOL_SOCKET, SO_RCVBUF, options_.receiveBufferSize);
  // Writes are made directly (flush writes at once; file regions on both transports) and must
  // never block the loop.
  if (ring_) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  } else {
    boost::system::error_code ignored;
    socket_.non_blocking(true, ignored);
  }
  if (eventLoop().isShuttingDown()) {  // its hooks have run: nothing would ever close it
    doClose();
    return;
  }
  if (init) {
    try {
      init(*this);
    } catch (...) {
      doClose();  // never counted in: closes the socket only
      throw;
    }
  }
  if (!open_) return;       // the initializer closed it (a connection limit): never counted in
  if (!registerOnLoop()) {  // the initializer ran into the shutdown
    doClose();
    return;
  }
  pipeline().fireChannelActive();
  if (open_ && isAutoRead() && !reading_) startRead();  // channelActive may have started one
}

// ------------------------------------------------------------------ reading

void SocketChannel::onAutoReadChanged() {
  if (ring_) {
    if (!isAutoRead()) {
      if (reading_) ringStopRead();
      return;
    }
    if (!open_ || !active_) return;
    if (!ring_->stash.empty() || ring_->eof) {
      // Delivered from a later loop task, never inside the handler that turned reading on.
      if (ring_->drainPosted) return;
      auto self = std::static_pointer_cast<SocketChannel>(weak_from_this().lock());
      if (self == nullptr) return;
      ring_->drainPosted = true;
      boost::asio::post(eventLoop().context(), [self = std::move(self)] {
        self->ring_->drainPosted = false;
        self->ringDrainStash();
      });
      return;
    }
  }
  if (isAutoRead() && open_ && active_ && !reading_) startRead();
}

void SocketChannel::startRead() {
  if (ring_) return ringStartRead();
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

void SocketChannel::doWrite(Message msg, WriteListener* listener) {
  if (!open_.load(std::memory_order_relaxed) || outputShutdown_.load(std::memory_order_relaxed) ||
      shutdownOutputPending_) {
    if (listener != nullptr) listener->operationComplete(ChannelErrc::closed);
    return;
  }
  AnyByteBuf buf;
  if (msg.is<FileRegion>()) {
    FileRegion file = msg.take<FileRegion>();
    const auto n = static_cast<std::size_t>(file.count());
    unflushed_.push_back({ByteBuf(), n, listener, std::move(file)});
    addPending(n);
    return;
  }
  if (msg.is<ByteBuf>()) {
    buf = msg.take<ByteBuf>();
  } else if (msg.is<AnyByteBuf>()) {
    buf = msg.take<AnyByteBuf>();
  } else if (msg.is<CompositeByteBuf>()) {
    buf = msg.take<CompositeByteBuf>();
  } else {
    throw MessageTypeError(fmt::format(
        "SocketChannel writes buffers (ByteBuf, CompositeByteBuf, AnyByteBuf) and FileRegions, "
        "not {}: put an "
        "encoder for it in the pipeline",
        typeName(msg.type())));
  }
  const std::size_t n = readableBytes(buf);
  unflushed_.push_back({std::move(buf), n, listener});
  addPending(n);
}

void SocketChannel::doFlush() {
  // All or nothing: an allocation that failed half-way would leave moved-from writes, still
  // naming their listeners, in unflushed_.
  flushed_.appendFrom(unflushed_);
  // A flush from a listener or handler called by writeFlushed() only queues: the loop there goes
  // on with it. While waiting for the socket, the wait's completion writes it.
  if (!inWrite_ && !waitingWrite_) writeFlushed();
}

void SocketChannel::consumeWritten(std::size_t n) {
  while (n > 0 && !flushed_.empty()) {
    QueuedWrite& w = flushed_.front();
    const std::size_t take = std::min(n, w.remaining);
    if (w.file.isValid()) {
      w.file.advance(take);
    } else {
      std::visit([take](auto& b) { b.skipBytes(take); }, w.buf);
    }
    w.remaining -= take;
    n -= take;
    WriteListener* done = nullptr;
    if (w.remaining == 0) {
      done = w.listener;
      flushed_.pop_front();  // w is gone from here on
    }
    // The count first: a listener (or a coroutine it resumes on the spot) sees its own write's
    // bytes gone from pendingWriteBytes().
    removePending(take);  // may fire channelWritabilityChanged
    if (done != nullptr) done->operationComplete({});
    if (!open_) return;  // a listener or handler closed the channel
  }
}

void SocketChannel::fillIovecs() {
  iov_.clear();
  auto add = [&](const void* p, std::size_t n) { iov_.push_back(iovec{const_cast<void*>(p), n}); };
  for (auto& w : flushed_) {
    if (iov_.size() >= kMaxIovecs || w.file.isValid()) break;
    if (auto* b = std::get_if<ByteBuf>(&w.buf)) {
      if (b->isReadable()) add(b->readableBuffer().data(), b->readableBytes());
    } else {
      for (const auto& piece : std::get<CompositeByteBuf>(w.buf).readableBuffers()) {
        if (iov_.size() >= kMaxIovecs) break;
        add(piece.data(), piece.size());
      }
    }
  }
}

bool SocketChannel::completeEmptyWrites() {
  while (!flushed_.empty() && flushed_.front().remaining == 0) {
    WriteListener* l = flushed_.front().listener;
    flushed_.pop_front();
    if (l != nullptr) l->operationComplete({});
    if (!open_) return false;
  }
  return true;
}

void SocketChannel::yieldWrite() {
  std::shared_ptr<SocketChannel> self =
      std::static_pointer_cast<SocketChannel>(weak_from_this().lock());
  if (self == nullptr) return;  // being destroyed: nothing could own the channel until then
  waitingWrite_ = true;
  boost::asio::post(eventLoop().context(), [self = std::move(self)] {
    self->waitingWrite_ = false;
    self->writeFlushed();
  });
}

SocketChannel::FileSend SocketChannel::sendFileChunk() {
  // A file region goes out alone, with sendfile (zero copy); the buffers queued before it have
  // been written by then, those after it wait for it.
  FileRegion& f = flushed_.front().file;
  auto off = static_cast<off_t>(f.position());
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(f.count(), 1U << 30));
  const ssize_t n = ::sendfile(nativeHandle(), f.fd(), &off, want);
  if (n < 0) {
    const int err = errno;
    if (err == EINTR) return FileSend::Sent;  // nothing sent: simply again
    if (err == EAGAIN || err == EWOULDBLOCK) return FileSend::Full;
    closeWithError(boost::system::error_code(err, boost::system::system_category()));
    return FileSend::Closed;
  }
  if (n == 0) {
    // The file ended before the region did: the peer was promised more bytes than exist.
    closeWithError(boost::system::error_code(EIO, boost::system::system_category()));
    return FileSend::Closed;
  }
  consumeWritten(static_cast<std::size_t>(n));
  return open_ ? FileSend::Sent : FileSend::Closed;
}

void SocketChannel::writeFlushed() {
  if (ring_) return ringWriteFlushed();
  if (!open_) return;
  inWrite_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{inWrite_};
  const int fd = socket_.native_handle();
  for (int spin = 0;; ++spin) {
    if (!completeEmptyWrites()) return;
    if (flushed_.empty()) break;
    // Long enough on this channel: let the loop run other work, then go on.
    if (spin == kWriteSpinCount) return yieldWrite();
    if (flushed_.front().file.isValid()) {
      const FileSend sent = sendFileChunk();
      if (sent == FileSend::Full) return waitWritable();
      if (sent == FileSend::Closed) return;
      continue;
    }
    fillIovecs();
    msghdr mh{};
    mh.msg_iov = iov_.data();
    mh.msg_iovlen = iov_.size();
    // MSG_NOSIGNAL: a peer that went away is EPIPE here, never a SIGPIPE for the process.
    const ssize_t n = ::sendmsg(fd, &mh, MSG_NOSIGNAL);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return waitWritable();
      return closeWithError(boost::system::error_code(err, boost::system::system_category()));
    }
    const auto written = static_cast<std::size_t>(n);
    consumeWritten(written);
    if (!open_) return;
    // A part taken is no reason to wait yet: the peer may have drained some meanwhile; only
    // EAGAIN says the buffer is full (Netty's doWrite goes on the same way).
  }
  afterDrained();
}

void SocketChannel::waitWritable() {
  // A flush from a handler while the channel is being destroyed (its handlers are removed in the
  // destructor) cannot wait for the socket: nothing could own the channel until the wait ends.
  std::shared_ptr<SocketChannel> self =
      std::static_pointer_cast<SocketChannel>(weak_from_this().lock());
  if (self == nullptr) return;
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
    ::shutdown(nativeHandle(), SHUT_WR);  // what Asio's shutdown(shutdown_send) calls
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

void SocketChannel::closeWithError(const boost::system::error_code& ec) {
  if (!isQuietClose(ec)) {
    pipeline().fireExceptionCaught(std::make_exception_ptr(
        std::system_error(ec.value(), std::system_category(), "socket error")));
  }
  doClose();
}

void SocketChannel::doClose() {
  if (!open_) return;
  CloseGuard guard = beginClose();
  if (ring_) {
    ringClose();
  } else {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }
  failWrites(flushed_, [](const QueuedWrite& w) { return w.remaining; });
  failWrites(unflushed_, [](const QueuedWrite& w) { return w.remaining; });
  endClose();
}

}  // namespace netbuf
