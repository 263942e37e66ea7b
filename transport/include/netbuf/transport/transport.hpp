#pragma once
// Transport: how an EventLoopGroup's loops do their socket I/O, chosen once, where the group is
// made (Netty's choice between its NIO, epoll and io_uring transports). Channels, the pipeline,
// bootstraps, timers, execute/schedule, graceful shutdown and the completion-token operations are
// the same on both; only the system calls underneath differ.
//
//   Asio     every socket operation through the loop's Boost.Asio io_context (epoll): a read is
//            recv until EAGAIN, then epoll_wait; a flush is a sendmsg, directly.
//   IoUring  TCP and Unix stream sockets through one io_uring per loop (liburing): a multishot
//            accept per listener, a multishot receive per channel into a provided buffer ring
//            filled from the pooled allocator (the received ByteBuf is the ring's buffer, no copy),
//            one sendmsg submission per flush, and all submissions of a loop turn in one
//            io_uring_enter. Timers, tasks, UDP and anything else made on the loop's io_context
//            stay on Asio; the ring's descriptor is watched by the same epoll, so a loop sleeps
//            in one place. Needs Linux 6.0 or later (multishot receive, buffer rings).
//   Auto     IoUring where the system allows it, otherwise Asio (with one line on stderr).
//   Default  what NETBUF_TRANSPORT names (asio, io_uring or auto), Asio when it is unset: the
//            choice of EventLoopGroup(n), read when the group is made, so that a program, or a
//            test suite, runs on either transport unchanged.
//
// When the kernel, a seccomp filter, kernel.io_uring_disabled or RLIMIT_MEMLOCK refuses io_uring
// or a feature it needs, making a group with Transport::IoUring throws TransportUnavailableError,
// saying which; ioUringSupport() tells beforehand.

#include <netbuf/buffer/error.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace netbuf {

enum class Transport { Asio, IoUring, Auto, Default };

/// "asio", "io_uring", "auto", "default".
std::string_view transportName(Transport t) noexcept;
/// The inverse of transportName ("iouring" and "io-uring" too); nullopt for anything else.
std::optional<Transport> parseTransport(std::string_view name) noexcept;

/// Whether this process may use the IoUring transport, and if not, why. Probed once (a ring, a
/// buffer ring and a multishot receive on a socket pair), then cached. Any thread.
struct IoUringSupport {
  bool available = false;
  std::string reason;  ///< empty when available
};
const IoUringSupport& ioUringSupport();

/// Resolves Default (NETBUF_TRANSPORT) and Auto (probing; one line on stderr when it falls back)
/// to Asio or IoUring. Throws TransportUnavailableError for IoUring (asked for directly, or by
/// NETBUF_TRANSPORT=io_uring) when ioUringSupport() says no, and IllegalArgumentError for a
/// NETBUF_TRANSPORT that names no transport.
Transport resolveTransport(Transport requested);

namespace detail {
/// True when requested is Auto, or Default with NETBUF_TRANSPORT=auto: a ring refused later
/// (per loop) falls back to Asio too.
bool autoRequested(Transport requested) noexcept;
}  // namespace detail

/// A transport this system does not allow (see the header comment).
class TransportUnavailableError : public Error {
 public:
  using Error::Error;
};

}  // namespace netbuf
