#include "io_uring_loop.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <netbuf/transport/transport.hpp>

namespace netbuf::detail {

namespace {

[[noreturn]] void unavailable(const char* what, int err) {
  throw TransportUnavailableError(
      fmt::format("io_uring transport unavailable: {}: {}", what, std::strerror(err)));
}

}  // namespace

IoUringLoop::IoUringLoop(boost::asio::io_context& ctx, ByteBufAllocator& alloc)
    : watch_(ctx), alloc_(&alloc) {
  io_uring_params params{};
  // The completion ring is twice the submission ring (the default), and clamped rather than
  // refused where the kernel limits it.
  // COOP_TASKRUN: the kernel does not interrupt the loop thread for each completion (an IPI and
  // a pass through the signal path each time); completions are processed at its next system
  // call, which comes at the latest when it submits or sleeps (epoll_wait still wakes for them).
  params.flags = IORING_SETUP_CLAMP | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  int rc = io_uring_queue_init_params(kEntries, &ring_, &params);
  if (rc == -EINVAL) {  // before Linux 5.19
    params = io_uring_params{};
    params.flags = IORING_SETUP_CLAMP;
    rc = io_uring_queue_init_params(kEntries, &ring_, &params);
  }
  if (rc < 0) unavailable("io_uring_queue_init", -rc);
  // The buffer ring: its entries live in memory shared with the kernel, page aligned.
  bufRingBytes_ = sizeof(io_uring_buf) * kBufferCount;
  void* mem =
      ::mmap(nullptr, bufRingBytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) {
    const int err = errno;
    io_uring_queue_exit(&ring_);
    unavailable("mmap of the buffer ring", err);
  }
  bufRing_ = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(bufRing_);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(bufRing_);
  reg.ring_entries = kBufferCount;
  reg.bgid = kBufferGroup;
  if (const int regRc = io_uring_register_buf_ring(&ring_, &reg, 0); regRc < 0) {
    ::munmap(bufRing_, bufRingBytes_);
    io_uring_queue_exit(&ring_);
    unavailable("io_uring_register_buf_ring (provided buffer rings need Linux 5.19)", -regRc);
  }
  slots_.resize(kBufferCount);
  try {
    for (unsigned bid = 0; bid < kBufferCount; ++bid) refill(bid);
    publishBuffers();
    watch_.assign(ring_.ring_fd);
  } catch (...) {
    if (watch_.is_open()) watch_.release();
    slots_.clear();
    io_uring_unregister_buf_ring(&ring_, kBufferGroup);
    ::munmap(bufRing_, bufRingBytes_);
    io_uring_queue_exit(&ring_);
    throw;
  }
}

IoUringLoop::~IoUringLoop() {
  // The loop thread has stopped: no completion will be reaped again. Exiting the ring has the
  // kernel cancel what is in flight; the requests' remaining work would run as the loop thread's
  // task work, and that thread has exited, so nothing of it touches the buffers and the memory
  // the ops point at, which may go next.
  if (watch_.is_open()) watch_.release();  // the fd is the ring's, closed by queue_exit
  io_uring_queue_exit(&ring_);
  // The owners the ops in flight still hold go now; taken out of every op first, since releasing
  // one may destroy another op (the channel holding both).
  std::vector<std::shared_ptr<void>> keeps;
  while (head_ != nullptr) {
    RingOp* op = head_;
    unlink(*op);
    keeps.push_back(std::move(op->keep_));
  }
  keeps.clear();
  slots_.clear();  // back to the pool
  ::munmap(bufRing_, bufRingBytes_);
}

void IoUringLoop::link(RingOp& op, std::shared_ptr<void> keep) noexcept {
  op.keep_ = std::move(keep);
  op.prev_ = nullptr;
  op.next_ = head_;
  if (head_ != nullptr) head_->prev_ = &op;
  head_ = &op;
  op.linked_ = true;
}

void IoUringLoop::unlink(RingOp& op) noexcept {
  if (!cancelLater_.empty()) std::erase(cancelLater_, &op);  // it may go once unlinked
  if (op.prev_ != nullptr) {
    op.prev_->next_ = op.next_;
  } else {
    head_ = op.next_;
  }
  if (op.next_ != nullptr) op.next_->prev_ = op.prev_;
  op.prev_ = op.next_ = nullptr;
  op.linked_ = false;
}

io_uring_sqe* IoUringLoop::prepare(RingOp& op, std::shared_ptr<void> keep) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    submit();
    sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) throw std::bad_alloc();  // the kernel took none: cannot happen
  }
  link(op, std::move(keep));
  io_uring_sqe_set_data(sqe, &op);
  return sqe;
}

void IoUringLoop::cancel(RingOp& op) noexcept {
  if (!op.linked_) return;
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    submit();
    sqe = io_uring_get_sqe(&ring_);
  }
  if (sqe == nullptr) {
    // The kernel took nothing (its completion ring is full): asked again at the next submit.
    // The op stays linked (and its owner alive) until its completion, so the pointer stays good.
    try {
      cancelLater_.push_back(&op);
    } catch (...) {
    }
    return;
  }
  io_uring_prep_cancel(sqe, &op, 0);
  io_uring_sqe_set_data64(sqe, 0);  // its own completion is ignored
}

void IoUringLoop::submit() noexcept {
  while (!cancelLater_.empty()) {
    RingOp* op = cancelLater_.back();
    if (op->linked_) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) break;
      io_uring_prep_cancel(sqe, op, 0);
      io_uring_sqe_set_data64(sqe, 0);
    }
    cancelLater_.pop_back();
  }
  if (io_uring_sq_ready(&ring_) == 0) return;
  ++submits_;
  for (;;) {
    const int rc = io_uring_submit(&ring_);
    // EINTR: again. EBUSY/EAGAIN: the completion ring is full (overflowing): the caller's reap()
    // makes room and the remaining entries go with the next submit.
    if (rc == -EINTR) continue;
    return;
  }
}

std::size_t IoUringLoop::reap() {
  std::size_t n = 0;
  if (!missing_.empty()) {
    auto retry = std::move(missing_);
    missing_.clear();
    for (unsigned bid : retry) refill(bid);
    publishBuffers();
  }
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
    auto* op = static_cast<RingOp*>(io_uring_cqe_get_data(cqe));
    const int res = cqe->res;
    const unsigned flags = cqe->flags;
    io_uring_cqe_seen(&ring_, cqe);  // the slot is free before the op runs (it may submit)
    ++n;
    if (op == nullptr) continue;  // a cancellation's own completion
    if (flags & IORING_CQE_F_MORE) {
      op->complete(res, flags);
    } else {
      // The last completion of this submission: the op is free to be armed again inside
      // complete(), and its owner stays alive until complete() has returned.
      unlink(*op);
      std::shared_ptr<void> keep = std::move(op->keep_);
      op->complete(res, flags);
    }
  }
  if (added_ != 0) publishBuffers();
  completions_ += n;
  return n;
}

ByteBuf IoUringLoop::takeBuffer(unsigned bid, std::size_t n) {
  ByteBuf buf = std::move(slots_.at(bid));
  refill(bid);
  buf.commitWrite(n);
  return buf;
}

void IoUringLoop::refill(unsigned bid) {
  try {
    slots_[bid] = alloc_->buffer(kBufferSize, kBufferSize);
  } catch (...) {
    missing_.push_back(bid);  // the ring works with one buffer fewer until the pool recovers
    return;
  }
  auto w = slots_[bid].writableBuffer();
  io_uring_buf_ring_add(bufRing_, w.data(), static_cast<unsigned>(w.size()),
                        static_cast<unsigned short>(bid), io_uring_buf_ring_mask(kBufferCount),
                        static_cast<int>(added_));
  ++added_;
}

void IoUringLoop::publishBuffers() noexcept {
  io_uring_buf_ring_advance(bufRing_, static_cast<int>(added_));
  added_ = 0;
}

void IoUringLoop::armWatch() {
  // Completes when the completion ring is not empty; run_one() returns then and the loop reaps.
  // Armed only before the loop sleeps (with the ring empty), never from its own completion: the
  // descriptor stays readable until the loop has reaped, so an io_context::poll() that re-armed
  // it there would find it ready again at once, and never return.
  if (watchArmed_) return;
  watch_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                    [this](const boost::system::error_code&) { watchArmed_ = false; });
  watchArmed_ = true;  // once armed: a wait that failed to start is tried again next time
}

}  // namespace netbuf::detail
