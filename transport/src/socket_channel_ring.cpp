// SocketChannel on the IoUring transport: reading, writing and closing through the loop's ring
// (socket_channel.hpp describes the behaviour; detail/io_uring_loop.hpp the ring).

#include <sys/socket.h>

#include <poll.h>
#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <netbuf/transport/socket_channel.hpp>

#include "detail/io_uring_loop.hpp"
#include "detail/socket_channel_ring.hpp"

namespace netbuf {

namespace {

boost::system::error_code systemError(int err) {
  return boost::system::error_code(err, boost::system::system_category());
}

/// Clears a flag when the scope ends (inWrite_: a flush from a listener only queues meanwhile).
struct FlagScope {
  bool& flag;
  explicit FlagScope(bool& f) : flag(f) { flag = true; }
  ~FlagScope() { flag = false; }
};

}  // namespace

// ------------------------------------------------------------------ reading

void SocketChannel::ringStartRead() {
  RingIo& r = *ring_;
  auto self = weak_from_this().lock();
  if (self == nullptr || r.fd < 0 || r.eof) return;  // being destroyed, closed, or at its end
  io_uring_sqe* sqe = r.loop->prepare(r.recv, std::move(self));
  io_uring_prep_recv_multishot(sqe, r.fd, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = detail::IoUringLoop::kBufferGroup;
  reading_ = true;
  r.stopping = false;
}

void SocketChannel::ringStopRead() {
  RingIo& r = *ring_;
  if (!r.recv.inFlight() || r.stopping) return;
  r.stopping = true;
  r.loop->cancel(r.recv);
}

void SocketChannel::onRingRead(int res, unsigned flags) {
  RingIo& r = *ring_;
  const bool more = (flags & IORING_CQE_F_MORE) != 0;
  if (!more) {
    reading_ = false;
    r.stopping = false;
  }
  if (res > 0) {
    if (!(flags & IORING_CQE_F_BUFFER)) {
      if (open_) closeWithError(systemError(EIO));  // a receive without a buffer: cannot happen
      return;
    }
    ByteBuf buf =
        r.loop->takeBuffer(flags >> IORING_CQE_BUFFER_SHIFT, static_cast<std::size_t>(res));
    if (!open_) return;  // closed meanwhile: the buffer goes back to the pool
    if (!isAutoRead() || !r.stash.empty()) {
      r.stash.push_back(std::move(buf));  // after the cancellation was asked for: kept
      return;
    }
    pipeline().fireChannelRead(Message(std::move(buf)));
    pipeline().fireChannelReadComplete();
    if (!open_) return;
  } else if (res == 0) {
    if (!open_) return;
    if (!isAutoRead() || !r.stash.empty()) {
      r.eof = true;  // after what is kept
      return;
    }
    closeWithError(boost::asio::error::eof);
    return;
  } else if (res != -ENOBUFS && res != -ECANCELED) {
    // ENOBUFS: every provided buffer was taken before the loop refilled them; armed again below
    // (the ring has been refilled by then). ECANCELED: autoRead went off, or the channel closed.
    if (open_) closeWithError(systemError(-res));
    return;
  }
  if (!more && open_ && active_ && isAutoRead() && !reading_ && r.stash.empty()) ringStartRead();
}

void SocketChannel::ringDrainStash() {
  RingIo& r = *ring_;
  bool delivered = false;
  while (open_ && isAutoRead() && !r.stash.empty()) {
    ByteBuf buf = std::move(r.stash.front());
    r.stash.pop_front();
    delivered = true;
    pipeline().fireChannelRead(Message(std::move(buf)));
  }
  if (delivered && open_) pipeline().fireChannelReadComplete();
  if (!open_ || !isAutoRead() || !r.stash.empty()) return;
  if (r.eof) return closeWithError(boost::asio::error::eof);
  if (active_ && !reading_) ringStartRead();
}

// ------------------------------------------------------------------ writing

void SocketChannel::ringWriteFlushed() {
  RingIo& r = *ring_;
  if (!open_ || r.send.inFlight()) return;
  FlagScope writing(inWrite_);
  for (int spin = 0;; ++spin) {
    if (!completeEmptyWrites()) return;
    if (flushed_.empty()) break;
    if (flushed_.front().file.isValid()) {
      // File regions go out with sendfile, as on Asio; after kWriteSpinCount calls the loop's
      // other work goes first (a large region to a fast peer would hold the loop until EAGAIN).
      if (spin >= kWriteSpinCount) return yieldWrite();
      const FileSend sent = sendFileChunk();
      if (sent == FileSend::Full) return ringWaitWritable();
      if (sent == FileSend::Closed) return;
      continue;
    }
    auto self = weak_from_this().lock();
    if (self == nullptr) return;  // being destroyed: nothing could own the channel until then
    fillIovecs();
    r.msg = msghdr{};
    r.msg.msg_iov = iov_.data();
    r.msg.msg_iovlen = iov_.size();
    io_uring_sqe* sqe = r.loop->prepare(r.send, std::move(self));
    // MSG_NOSIGNAL: a peer that went away is EPIPE here, never a SIGPIPE for the process.
    io_uring_prep_sendmsg(sqe, r.fd, &r.msg, MSG_NOSIGNAL);
    r.sendIsPoll = false;
    waitingWrite_ = true;  // further flushes queue until this one completes
    return;
  }
  afterDrained();
}

void SocketChannel::ringWaitWritable() {
  RingIo& r = *ring_;
  auto self = weak_from_this().lock();
  if (self == nullptr) return;  // being destroyed: nothing could own the channel until then
  io_uring_sqe* sqe = r.loop->prepare(r.send, std::move(self));
  io_uring_prep_poll_add(sqe, r.fd, POLLOUT);
  r.sendIsPoll = true;
  waitingWrite_ = true;
}

void SocketChannel::onRingSent(int res) {
  RingIo& r = *ring_;
  waitingWrite_ = false;
  ringSettleInFlight(res);  // the channel closed while this send was in flight
  if (!open_) return;
  if (res < 0) {
    if (res == -EINTR) return ringWriteFlushed();
    // The socket is non-blocking (for sendfile), and the kernel may hand its EAGAIN back rather
    // than wait: poll for writability, then send again.
    if (res == -EAGAIN) return ringWaitWritable();
    if (res == -ECANCELED) return;
    return closeWithError(systemError(-res));
  }
  if (!r.sendIsPoll) {
    FlagScope writing(inWrite_);
    consumeWritten(static_cast<std::size_t>(res));
    if (!open_) return;
  }
  ringWriteFlushed();  // what was flushed meanwhile, or a pending half-close or graceful close
}

// ------------------------------------------------------------------ closing

void SocketChannel::ringClose() noexcept {
  RingIo& r = *ring_;
  r.stash.clear();
  if (r.send.inFlight()) {
    // The kernel may still read what the sendmsg in flight points at, until its completion: those
    // writes keep their buffers, and their listeners hear how many bytes went out, then.
    r.inFlight = std::move(flushed_);
    flushed_.clear();
    for (auto& w : r.inFlight) dropPending(w.remaining);
  }
  // Everything prepared goes to the kernel before the descriptor is closed: a flush is written at
  // once on Asio, before a close that follows it, and here its sendmsg (or a receive just armed
  // again) may not be submitted yet; an operation submitted after the close would name a
  // descriptor number that another socket may have by then. The kernel sends what the socket
  // takes now; the cancellations then end what waits.
  r.loop->submit();
  r.loop->cancel(r.recv);
  r.loop->cancel(r.send);
  r.loop->submit();
  if (r.fd >= 0) {
    ::close(r.fd);  // the operations in flight hold the socket until they complete
    r.fd = -1;
  }
}

void SocketChannel::ringSettleInFlight(int res) noexcept {
  RingIo& r = *ring_;
  if (r.inFlight.empty()) return;
  std::size_t sent = res > 0 && !r.sendIsPoll ? static_cast<std::size_t>(res) : 0;
  detail::RingQueue<QueuedWrite> writes = std::move(r.inFlight);
  r.inFlight.clear();
  for (auto& w : writes) {
    const std::size_t take = std::min(sent, w.remaining);
    sent -= take;
    w.remaining -= take;
    if (WriteListener* l = std::exchange(w.listener, nullptr)) {
      l->operationComplete(w.remaining == 0 ? ErrorCode()
                                            : ErrorCode(ChannelErrc::closedBeforeWritten));
    }
  }
}

}  // namespace netbuf
