#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <netbuf/transport/datagram_channel.hpp>

#include "detail/endpoint_format.hpp"

namespace netbuf {

namespace {

using boost::asio::ip::udp;

using detail::formatEndpoint;

std::error_code systemError(int err) noexcept { return {err, std::system_category()}; }

/// Errors a UDP socket reports for an ICMP message about an earlier datagram (on a connected
/// socket): about one peer, not about the socket, so reading goes on.
bool isIcmpError(int err) noexcept {
  return err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH || err == EHOSTDOWN ||
         err == ENETDOWN || err == EMSGSIZE;
}

void validate(const DatagramChannelOptions& o) {
  if (o.readBufferSize == 0 || o.readBufferSize > DatagramChannel::kMaxDatagramSize) {
    throw IllegalArgumentError(fmt::format("readBufferSize {} is not in [1, {}]", o.readBufferSize,
                                           DatagramChannel::kMaxDatagramSize));
  }
  if (o.maxMessagesPerRead < 1) {
    throw IllegalArgumentError(
        fmt::format("maxMessagesPerRead {} is below 1", o.maxMessagesPerRead));
  }
  if (o.writeBufferLowWaterMark > o.writeBufferHighWaterMark) {
    throw IllegalArgumentError(
        fmt::format("writeBufferLowWaterMark {} is above writeBufferHighWaterMark {}",
                    o.writeBufferLowWaterMark, o.writeBufferHighWaterMark));
  }
}

}  // namespace

DatagramTruncatedError::DatagramTruncatedError(std::size_t size, std::size_t limit,
                                               const boost::asio::ip::udp::endpoint& sender)
    : Error(fmt::format("datagram of {} bytes from {} is larger than the read buffer of {} bytes "
                        "(DatagramChannelOptions::readBufferSize): dropped",
                        size, formatEndpoint(sender), limit)),
      size_(size),
      limit_(limit),
      sender_(sender) {}

// ------------------------------------------------------------------ creation

namespace {

/// What bind() waits on while the channel's loop starts it.
struct StartWait {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;     // guarded by mutex
  std::exception_ptr error;  // guarded by mutex; null when the start succeeded

  void finish(std::exception_ptr e) {
    {
      std::lock_guard lock(mutex);
      finished = true;
      error = std::move(e);
    }
    done.notify_one();
  }
};

/// The loop task that starts a channel bound from another thread. Move-only: a moved-from task
/// has no `wait` and reports nothing when destroyed.
struct StartTask {
  std::function<void()> start;  // starts the channel; made in bind(), which may call start()
  std::shared_ptr<StartWait> wait;

  StartTask(std::function<void()> s, std::shared_ptr<StartWait> w)
      : start(std::move(s)), wait(std::move(w)) {}
  StartTask(StartTask&&) noexcept = default;
  StartTask& operator=(StartTask&&) = delete;
  ~StartTask() {
    if (wait) {
      wait->finish(std::make_exception_ptr(std::future_error(std::future_errc::broken_promise)));
    }
  }

  void operator()() {
    std::exception_ptr error;
    try {
      start();
    } catch (...) {
      error = std::current_exception();
    }
    // Out of the catch block: `error` is this thread's only reference to the exception.
    std::shared_ptr<StartWait> w = std::move(wait);
    w->finish(std::move(error));
  }
};

}  // namespace

std::shared_ptr<DatagramChannel> DatagramChannel::bind(EventLoopGroup& group,
                                                       const std::string& address,
                                                       unsigned short port, Initializer init,
                                                       const DatagramChannelOptions& options) {
  validate(options);
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(address, ec);
  if (ec) throw std::system_error(ec.value(), std::system_category(), "invalid address " + address);
  const udp::endpoint endpoint(ip, port);
  const std::string what = formatEndpoint(endpoint);
  auto check = [&](const char* step) {
    if (ec) {
      throw std::system_error(ec.value(), std::system_category(),
                              fmt::format("{} UDP {}", step, what));
    }
  };
  // On a loop thread of the group, the channel goes on that loop and starts at once: waiting for
  // another loop from a loop thread could deadlock.
  EventLoop* current = group.currentLoop();
  EventLoop& loop = current != nullptr ? *current : group.next();
  // Set up before the socket is shared with its loop: no other thread touches it yet.
  Socket socket(loop.context());
  socket.open(endpoint.protocol(), ec);
  check("open");
  if (options.reuseAddress) {
    socket.set_option(boost::asio::socket_base::reuse_address(true), ec);
    check("SO_REUSEADDR on");
  }
  if (options.broadcast) {
    socket.set_option(boost::asio::socket_base::broadcast(true), ec);
    check("SO_BROADCAST on");
  }
  if (options.sendBufferSize > 0) {
    socket.set_option(boost::asio::socket_base::send_buffer_size(options.sendBufferSize), ec);
    check("SO_SNDBUF on");
  }
  if (options.receiveBufferSize > 0) {
    socket.set_option(boost::asio::socket_base::receive_buffer_size(options.receiveBufferSize), ec);
    check("SO_RCVBUF on");
  }
  socket.bind(endpoint, ec);
  check("bind");
  // Reads and writes are made directly (recvmsg/sendmsg) and must never block the loop.
  socket.non_blocking(true, ec);
  check("non-blocking mode on");
  auto ch = make<DatagramChannel>(loop, std::move(socket), options);
  if (loop.inEventLoop()) {
    ch->start(init);
    return ch;
  }
  // The caller waits for the loop to start the channel. An exception the initializer throws comes
  // back through `StartWait`, and the loop lets go of it (moved out of its catch block and then out
  // of its hands under the mutex) before the caller can see it, so the caller's thread holds the
  // only reference: an exception object must not be released by two threads whose only order is
  // its (uninstrumented, to ThreadSanitizer) reference count. A task the loop never runs (it shut
  // down meanwhile) is destroyed with the loop's io_context, when the group is destroyed: the wait
  // ends then with std::future_error (broken_promise). RejectedExecutionError comes at once when
  // the group has already shut down.
  auto wait = std::make_shared<StartWait>();
  loop.execute(StartTask([ch, init = std::move(init)] { ch->start(init); }, wait));
  std::exception_ptr error;
  {
    std::unique_lock lock(wait->mutex);
    wait->done.wait(lock, [&] { return wait->finished; });
    error = std::move(wait->error);
  }
  if (error) std::rethrow_exception(std::move(error));
  return ch;
}

DatagramChannel::DatagramChannel(EventLoop& loop, Socket socket,
                                 const DatagramChannelOptions& options)
    : EventLoopChannel(
          loop,
          options.allocator != nullptr ? *options.allocator : ByteBufAllocator::defaultAllocator(),
          options.writeBufferHighWaterMark, options.writeBufferLowWaterMark),
      socket_(std::move(socket)),
      options_(options) {
  validate(options);
  setAutoReadFlag(options.autoRead);  // not active yet: only records the flag
  // Read once, here: afterwards a plain value any thread may read.
  boost::system::error_code ec;
  local_ = socket_.local_endpoint(ec);
  localAddress_ = ec ? std::string("?") : formatEndpoint(local_);
}

DatagramChannel::~DatagramChannel() {
  destroyPipeline();
  // Destroyed while open (its group went away before it closed): the queued writes' listeners
  // still hear of it, once.
  open_.store(false, std::memory_order_release);
  failWrites(flushed_, [](const QueuedDatagram& d) { return d.bytes; });
  failWrites(unflushed_, [](const QueuedDatagram& d) { return d.bytes; });
}

void DatagramChannel::start(const Initializer& init) {
  if (eventLoop().isShuttingDown()) {  // its hooks have run: nothing would ever close it
    doClose();
    throw RejectedExecutionError(
        fmt::format("DatagramChannel {}: the event loop is shutting down", localAddress_));
  }
  if (init) {
    try {
      init(*this);
    } catch (...) {
      doClose();  // never counted in: closes the socket only
      throw;
    }
  }
  if (!open_) return;       // the initializer closed it: never counted in
  if (!registerOnLoop()) {  // the initializer ran into the shutdown
    doClose();
    return;
  }
  pipeline().fireChannelActive();
  if (open_ && isAutoRead() && !reading_) waitReadable();
}

// ------------------------------------------------------------------ peer

std::string DatagramChannel::remoteAddress() const {
  std::lock_guard<std::mutex> lock(peerMutex_);
  return remoteAddress_;
}

DatagramChannel::Endpoint DatagramChannel::remoteEndpoint() const {
  std::lock_guard<std::mutex> lock(peerMutex_);
  return peer_;
}

void DatagramChannel::connectOnLoop(const Endpoint& peer, std::error_code& ec) {
  if (!open_) {
    ec = ChannelErrc::closed;
    return;
  }
  boost::system::error_code bec;
  socket_.connect(peer, bec);
  if (bec) {
    ec = systemError(bec.value());
    return;
  }
  ec.clear();
  const Endpoint actual = socket_.remote_endpoint(bec);
  {
    std::lock_guard<std::mutex> lock(peerMutex_);
    peer_ = bec ? peer : actual;
    remoteAddress_ = formatEndpoint(peer_);
  }
  connected_.store(true, std::memory_order_release);
}

void DatagramChannel::connectThen(const Endpoint& peer, std::function<void(std::error_code)> done) {
  auto fn = [this, peer, done] {
    std::error_code ec;
    connectOnLoop(peer, ec);
    if (done) done(ec);
  };
  if (!runOnLoop(fn) && done) done(ChannelErrc::rejected);
}

void DatagramChannel::connect(const Endpoint& peer) {
  std::error_code ec;
  if (inEventLoop()) {
    connectOnLoop(peer, ec);
  } else {
    if (detail::tCurrentExecutor != nullptr) {
      throw IllegalStateError(fmt::format(
          "the blocking DatagramChannel::connect of {} was called on another loop's thread: use "
          "connect(peer, token)",
          localAddress_));
    }
    auto result = std::make_shared<std::promise<std::error_code>>();
    auto future = result->get_future();
    connectThen(peer, [result](std::error_code e) { result->set_value(e); });
    ec = future.get();
  }
  if (ec) {
    throw std::system_error(
        ec, fmt::format("connect UDP {} to {}", localAddress_, formatEndpoint(peer)));
  }
}

void DatagramChannel::connect(const std::string& address, unsigned short port) {
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(address, ec);
  if (ec) throw std::system_error(ec.value(), std::system_category(), "invalid address " + address);
  connect(Endpoint(ip, port));
}

// ------------------------------------------------------------------ reading

void DatagramChannel::onAutoReadChanged() {
  if (isAutoRead() && open_ && active_ && !reading_) waitReadable();
}

void DatagramChannel::waitReadable() {
  std::shared_ptr<DatagramChannel> self =
      std::static_pointer_cast<DatagramChannel>(weak_from_this().lock());
  if (self == nullptr) return;  // being destroyed
  reading_ = true;
  socket_.async_wait(Socket::wait_read,
                     [self = std::move(self)](const boost::system::error_code& ec) {
                       self->reading_ = false;
                       if (!self->open_) return;
                       if (ec) {
                         if (ec == boost::asio::error::operation_aborted) return;
                         return self->closeWithError(systemError(ec.value()));
                       }
                       // Turned off meanwhile: the datagrams wait in the socket's buffer.
                       if (!self->isAutoRead()) return;
                       self->readBatch();
                     });
}

void DatagramChannel::readBatch() {
  const int fd = socket_.native_handle();
  const std::size_t limit = options_.readBufferSize;
  int delivered = 0;
  for (int i = 0; i < options_.maxMessagesPerRead; ++i) {
    if (i > 0 && (!open_ || !isAutoRead())) break;  // a handler closed it or turned reading off
    if (!readBuf_) readBuf_ = alloc().buffer(limit);
    const auto target = readBuf_.writableBuffer();
    iovec iov{target.data(), std::min(target.size(), limit)};
    sockaddr_storage from{};
    msghdr mh{};
    mh.msg_name = &from;
    mh.msg_namelen = sizeof(from);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    // MSG_TRUNC: the result is the datagram's real length even when it did not fit.
    const ssize_t n = ::recvmsg(fd, &mh, MSG_TRUNC);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) break;
      const std::error_code ec = systemError(err);
      if (isIcmpError(err)) {  // about an earlier datagram to the peer: reading goes on
        pipeline().fireExceptionCaught(std::make_exception_ptr(
            std::system_error(ec, fmt::format("UDP {}: receive", localAddress_))));
        continue;
      }
      return closeWithError(ec);
    }
    Endpoint sender;
    if (mh.msg_namelen <= sender.capacity()) {
      std::memcpy(sender.data(), &from, mh.msg_namelen);
      sender.resize(mh.msg_namelen);
    }
    const auto size = static_cast<std::size_t>(n);
    if (size > iov.iov_len || (mh.msg_flags & MSG_TRUNC) != 0) {
      // The kernel kept only what fitted: drop it (readBuf_ is reused, nothing was committed).
      truncated_.fetch_add(1, std::memory_order_relaxed);
      pipeline().fireExceptionCaught(
          std::make_exception_ptr(DatagramTruncatedError(size, iov.iov_len, sender)));
      continue;
    }
    ByteBuf content = std::move(readBuf_);
    readBuf_ = ByteBuf();
    content.commitWrite(size);
    ++delivered;
    pipeline().fireChannelRead(Message(DatagramPacket(std::move(content), local_, sender)));
  }
  if (delivered > 0 && open_) pipeline().fireChannelReadComplete();
  if (open_ && isAutoRead() && !reading_) waitReadable();
}

// ------------------------------------------------------------------ writing

void DatagramChannel::doWrite(Message msg, WriteListener* listener) {
  if (!open_) {
    if (listener != nullptr) listener->operationComplete(ChannelErrc::closed);
    return;
  }
  AnyByteBuf content;
  Endpoint recipient;
  bool toPeer = true;
  if (msg.is<DatagramPacket>()) {
    DatagramPacket p = msg.take<DatagramPacket>();
    toPeer = p.toConnectedPeer();
    recipient = p.recipient;
    content = std::move(p.content);
  } else if (msg.is<ByteBuf>()) {
    content = msg.take<ByteBuf>();
  } else if (msg.is<AnyByteBuf>()) {
    content = msg.take<AnyByteBuf>();
  } else if (msg.is<CompositeByteBuf>()) {
    content = msg.take<CompositeByteBuf>();
  } else {
    throw MessageTypeError(
        fmt::format("DatagramChannel writes DatagramPacket (and, to its connected peer, ByteBuf, "
                    "CompositeByteBuf, AnyByteBuf), not {}: put an encoder for it in the pipeline",
                    typeName(msg.type())));
  }
  const std::size_t n = netbuf::readableBytes(content);
  unflushed_.push_back({std::move(content), recipient, toPeer, n, listener});
  addPending(n);
}

void DatagramChannel::doFlush() {
  // All or nothing: an allocation that failed half-way would leave moved-from writes, still
  // naming their listeners, in unflushed_.
  flushed_.appendFrom(unflushed_);
  // A flush from a listener or handler called by writeFlushed() only queues: the loop there goes
  // on with it. While waiting for the socket, the wait's completion sends it.
  if (!inWrite_ && !waitingWrite_) writeFlushed();
}

int DatagramChannel::sendOne(QueuedDatagram& d) {
  if (auto* c = std::get_if<CompositeByteBuf>(&d.content);
      c != nullptr && c->readableBuffers().size() > kMaxIovecs) {
    d.content = toContiguous(std::move(d.content));  // rare: more pieces than one sendmsg takes
  }
  iovec single{};
  msghdr mh{};
  if (auto* b = std::get_if<ByteBuf>(&d.content)) {
    const auto piece = b->readableBuffer();
    single = iovec{const_cast<void*>(piece.data()), piece.size()};
    mh.msg_iov = &single;
    mh.msg_iovlen = piece.size() > 0 ? 1 : 0;
  } else {
    const auto pieces = std::get<CompositeByteBuf>(d.content).readableBuffers();
    iov_.clear();
    for (const auto& piece : pieces) {
      if (piece.size() > 0) iov_.push_back(iovec{const_cast<void*>(piece.data()), piece.size()});
    }
    mh.msg_iov = iov_.data();
    mh.msg_iovlen = iov_.size();
  }
  if (!d.toPeer) {
    mh.msg_name = d.recipient.data();
    mh.msg_namelen = static_cast<socklen_t>(d.recipient.size());
  }
  for (;;) {
    if (::sendmsg(socket_.native_handle(), &mh, MSG_NOSIGNAL) >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

void DatagramChannel::writeFlushed() {
  if (!open_) return;
  inWrite_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{inWrite_};
  for (int sent = 0; !flushed_.empty(); ++sent) {
    if (sent == kMaxMessagesPerWrite) {
      // Long enough on this channel: let the loop run other work, then go on.
      std::shared_ptr<DatagramChannel> self =
          std::static_pointer_cast<DatagramChannel>(weak_from_this().lock());
      if (self == nullptr) return;  // being destroyed: nothing could own the channel until then
      waitingWrite_ = true;
      boost::asio::post(eventLoop().context(), [self = std::move(self)] {
        self->waitingWrite_ = false;
        self->writeFlushed();
      });
      return;
    }
    const int err = sendOne(flushed_.front());
    if (err == EAGAIN || err == EWOULDBLOCK) {
      waitWritable();
      return;
    }
    QueuedDatagram done = std::move(flushed_.front());
    flushed_.pop_front();
    done.content = AnyByteBuf();  // released before the listener runs
    std::error_code ec;
    if (err != 0) {
      ec = systemError(err);
      failedSends_.fetch_add(1, std::memory_order_relaxed);
    }
    if (done.listener != nullptr) done.listener->operationComplete(ec);
    removePending(done.bytes);  // may fire channelWritabilityChanged
    if (!open_) return;         // a listener or handler closed the channel
  }
  afterDrained();
}

void DatagramChannel::waitWritable() {
  std::shared_ptr<DatagramChannel> self =
      std::static_pointer_cast<DatagramChannel>(weak_from_this().lock());
  if (self == nullptr) return;  // being destroyed: nothing could own the channel until then
  waitingWrite_ = true;
  socket_.async_wait(Socket::wait_write,
                     [self = std::move(self)](const boost::system::error_code& ec) {
                       self->waitingWrite_ = false;
                       if (!self->open_) return;
                       if (ec) {
                         if (ec == boost::asio::error::operation_aborted) return;
                         return self->closeWithError(systemError(ec.value()));
                       }
                       self->writeFlushed();
                     });
}

void DatagramChannel::afterDrained() {
  if (!open_ || !flushed_.empty()) return;
  if (closeWhenDrained_ && unflushed_.empty()) doClose();
}

void DatagramChannel::closeGracefully() {
  runOnLoop([this] {
    if (!open_) return;
    closeWhenDrained_ = true;
    doFlush();
    if (!inWrite_ && !waitingWrite_) afterDrained();  // nothing was queued: closes now
  });
}

// ------------------------------------------------------------------ closing

void DatagramChannel::onUnhandledException(std::exception_ptr error) noexcept {
  logException("unhandled exception", error, "the channel stays open");
}

void DatagramChannel::closeWithError(const std::error_code& ec) {
  pipeline().fireExceptionCaught(
      std::make_exception_ptr(std::system_error(ec, fmt::format("UDP {}", localAddress_))));
  doClose();
}

void DatagramChannel::doClose() {
  if (!open_) return;
  CloseGuard guard = beginClose();
  boost::system::error_code ignored;
  socket_.close(ignored);
  readBuf_ = ByteBuf();
  failWrites(flushed_, [](const QueuedDatagram& d) { return d.bytes; });
  failWrites(unflushed_, [](const QueuedDatagram& d) { return d.bytes; });
  endClose();
}

}  // namespace netbuf
