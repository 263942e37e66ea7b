#pragma once
// SocketChannel::RingIo: what a SocketChannel on the IoUring transport keeps beside the common
// state: the descriptor (owned: closed with the RingIo, or by the channel's close), its two
// operations (the multishot receive; the one write in flight: a sendmsg, or a poll for
// writability before a file region's sendfile) and what that write's kernel side points at.

#include <sys/socket.h>
#include <unistd.h>

#include <netbuf/transport/socket_channel.hpp>
#include <utility>

#include "io_uring_loop.hpp"

namespace netbuf {

struct SocketChannel::RingIo {
  struct Recv final : detail::RingOp {
    SocketChannel* ch;
    explicit Recv(SocketChannel* c) : ch(c) {}
    void complete(int res, unsigned flags) override { ch->onRingRead(res, flags); }
  };
  struct Send final : detail::RingOp {
    SocketChannel* ch;
    explicit Send(SocketChannel* c) : ch(c) {}
    void complete(int res, unsigned) override { ch->onRingSent(res); }
  };

  RingIo(SocketChannel& ch, detail::IoUringLoop& l, int f)
      : loop(&l), fd(f), recv(&ch), send(&ch) {}
  ~RingIo() {
    if (fd >= 0) ::close(fd);
  }
  RingIo(const RingIo&) = delete;
  RingIo& operator=(const RingIo&) = delete;

  detail::IoUringLoop* loop;
  int fd;
  Recv recv;
  Send send;
  bool sendIsPoll = false;  // the write in flight waits for writability (a file region is next)
  bool stopping = false;    // the receive is being cancelled (autoRead off)
  // What arrived while autoRead was off (before the cancellation took): delivered, in order,
  // once it is on again, so that autoRead off bounds what the pipeline is given as on Asio. eof:
  // the peer's end of stream came after them.
  detail::RingQueue<ByteBuf> stash;
  bool eof = false;
  bool drainPosted = false;
  msghdr msg{};  // the sendmsg in flight's header (its iovecs: the channel's iov_)
  // The writes a sendmsg in flight still points at after the channel closed (their listeners
  // have been told): the kernel may read them until the cancelled send completes.
  detail::RingQueue<QueuedWrite> inFlight;
};

}  // namespace netbuf
