#pragma once
// IoUringLoop: the io_uring of one EventLoop on the IoUring transport (transport.hpp).
//
//  - Submissions: the loop's channels prepare SQEs (prepare()) while they run; EventLoop::runRing
//    submits them all with one io_uring_enter per loop turn (submit()). Each SQE's user_data is
//    its RingOp (or 0 for a cancellation, whose completion is ignored).
//  - Completions: reap() takes every CQE there is from the shared completion ring (no system
//    call) and calls its op's complete(). The ring's descriptor is watched by the loop's
//    io_context (its epoll), so the loop sleeps in one place, io_context::run_one(), for ring
//    completions, Asio timers and tasks from other threads alike.
//  - Ownership: an op in flight holds its owner (a channel, an acceptor) through keep; the loop
//    links ops in flight so that its destruction (the group's teardown, when no completion will
//    come) can drop those references. An op's last completion (no IORING_CQE_F_MORE) unlinks it
//    and releases keep once complete() has returned.
//  - The provided buffer ring: bufferCount buffers of bufferSize bytes from the pooled allocator,
//    shared by every multishot receive on the loop (buffer group 0). A receive's CQE names the
//    buffer it filled; takeBuffer() hands that ByteBuf to the channel as it is (no copy) and puts
//    a fresh one from the pool in its slot at once, so the ring never waits for a pipeline to
//    release what it was given; the released buffer goes back to the pool, which refills the
//    ring.
//
// Threading: everything on the loop's thread, except the constructor and destructor (the group's
// thread, before the loop thread starts and after it has been joined).

#include <liburing.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <vector>

namespace netbuf::detail {

/// An operation in flight on a ring (an SQE's user_data points at it).
class RingOp {
 public:
  /// A completion (loop thread). more: IORING_CQE_F_MORE, another completion of the same
  /// submission follows (a multishot operation goes on).
  virtual void complete(int res, unsigned flags) = 0;
  bool inFlight() const noexcept { return linked_; }

 protected:
  RingOp() = default;
  virtual ~RingOp() = default;
  RingOp(const RingOp&) = delete;
  RingOp& operator=(const RingOp&) = delete;

 private:
  friend class IoUringLoop;
  RingOp* prev_ = nullptr;
  RingOp* next_ = nullptr;
  bool linked_ = false;
  std::shared_ptr<void> keep_;  // the op's owner, while in flight
};

class IoUringLoop {
 public:
  static constexpr unsigned kEntries = 1024;     // submission queue (the CQ is twice that)
  static constexpr unsigned kBufferCount = 256;  // provided buffers per loop (a power of two)
  static constexpr std::size_t kBufferSize = 16 * 1024;
  static constexpr unsigned short kBufferGroup = 0;

  /// Sets the ring up (throws TransportUnavailableError when the system refuses it).
  IoUringLoop(boost::asio::io_context& ctx, ByteBufAllocator& alloc);
  ~IoUringLoop();
  IoUringLoop(const IoUringLoop&) = delete;
  IoUringLoop& operator=(const IoUringLoop&) = delete;

  /// An SQE for op (user_data set), which is in flight from now on and holds keep until its last
  /// completion. Never null: a full submission queue is submitted first.
  io_uring_sqe* prepare(RingOp& op, std::shared_ptr<void> keep);
  /// Asks the kernel to cancel op (its completions end with -ECANCELED, or normally if it was
  /// already finishing). Nothing when op is not in flight.
  void cancel(RingOp& op) noexcept;

  /// Submits what was prepared (one io_uring_enter; none when nothing was).
  void submit() noexcept;
  /// Runs the completions there are (no system call). Returns how many.
  std::size_t reap();
  bool hasCompletions() const noexcept { return io_uring_cq_ready(&ring_) != 0; }
  /// Prepared entries (or cancellations) the kernel has not taken yet: the loop must not sleep.
  bool hasUnsubmitted() const noexcept {
    return io_uring_sq_ready(&ring_) != 0 || !cancelLater_.empty();
  }
  /// Before the loop sleeps: has the io_context's epoll watch the ring for the next completion.
  void armWatch();

  /// The buffer a receive filled (bid from its CQE's flags), with n bytes readable; its slot gets
  /// a fresh buffer.
  ByteBuf takeBuffer(unsigned bid, std::size_t n);

  /// Completions reaped and io_uring_enter calls made, for tests and benchmarks.
  std::uint64_t completions() const noexcept { return completions_; }
  std::uint64_t submits() const noexcept { return submits_; }

 private:
  void link(RingOp& op, std::shared_ptr<void> keep) noexcept;
  void unlink(RingOp& op) noexcept;
  /// Puts a fresh pooled buffer in slot bid; a slot left empty (the pool failed) is retried later.
  void refill(unsigned bid);
  void publishBuffers() noexcept;

  io_uring ring_{};
  boost::asio::posix::stream_descriptor watch_;  // the ring's fd, on the io_context's epoll
  ByteBufAllocator* alloc_;
  io_uring_buf_ring* bufRing_ = nullptr;
  std::size_t bufRingBytes_ = 0;
  std::vector<ByteBuf> slots_;     // indexed by buffer id
  std::vector<unsigned> missing_;  // slots the pool could not fill
  unsigned added_ = 0;             // buffers added since the last publishBuffers()
  RingOp* head_ = nullptr;         // ops in flight
  bool watchArmed_ = false;
  std::vector<RingOp*> cancelLater_;  // cancellations no SQE could be had for (linked ops)
  std::uint64_t completions_ = 0;
  std::uint64_t submits_ = 0;
};

}  // namespace netbuf::detail
