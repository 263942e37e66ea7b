#include <fmt/format.h>
#include <liburing.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netbuf/buffer/illegal_argument_error.hpp>
#include <netbuf/transport/transport.hpp>

namespace netbuf {

std::string_view transportName(Transport t) noexcept {
  switch (t) {
    case Transport::Asio:
      return "asio";
    case Transport::IoUring:
      return "io_uring";
    case Transport::Auto:
      return "auto";
    case Transport::Default:
      return "default";
  }
  return "?";
}

std::optional<Transport> parseTransport(std::string_view name) noexcept {
  if (name == "asio") return Transport::Asio;
  if (name == "io_uring" || name == "iouring" || name == "io-uring") return Transport::IoUring;
  if (name == "auto") return Transport::Auto;
  if (name == "default") return Transport::Default;
  return std::nullopt;
}

namespace {

std::string sysReason(const char* what, int err) {
  return fmt::format("{}: {}", what, std::strerror(err));
}

/// What the IoUring transport needs, tried for real: a ring, a provided buffer ring, and a
/// multishot receive that stays armed after a completion.
IoUringSupport probe() {
  IoUringSupport s;
  io_uring ring{};
  if (const int rc = io_uring_queue_init(8, &ring, 0); rc < 0) {
    s.reason = sysReason(
        "io_uring_setup (refused by the kernel, a seccomp filter or kernel.io_uring_disabled)",
        -rc);
    return s;
  }
  const std::size_t bytes = sizeof(io_uring_buf) * 8;
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  int fds[2] = {-1, -1};
  auto done = [&] {
    if (fds[0] >= 0) ::close(fds[0]);
    if (fds[1] >= 0) ::close(fds[1]);
    io_uring_queue_exit(&ring);  // before the buffer ring's memory goes
    if (mem != MAP_FAILED) ::munmap(mem, bytes);
    return s;
  };
  if (mem == MAP_FAILED) {
    s.reason = sysReason("mmap", errno);
    return done();
  }
  auto* br = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(br);
  reg.ring_entries = 8;
  reg.bgid = 0;
  if (const int rc = io_uring_register_buf_ring(&ring, &reg, 0); rc < 0) {
    s.reason = sysReason("io_uring_register_buf_ring (provided buffer rings need Linux 5.19)", -rc);
    return done();
  }
  static char bufs[8][64];
  for (int i = 0; i < 8; ++i)
    io_uring_buf_ring_add(br, bufs[i], sizeof bufs[i], static_cast<unsigned short>(i),
                          io_uring_buf_ring_mask(8), i);
  io_uring_buf_ring_advance(br, 8);
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    s.reason = sysReason("socketpair", errno);
    return done();
  }
  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  io_uring_prep_recv_multishot(sqe, fds[0], nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = 0;
  if (::write(fds[1], "x", 1) != 1) {
    s.reason = sysReason("write", errno);
    return done();
  }
  io_uring_cqe* cqe = nullptr;
  if (const int rc = io_uring_submit_and_wait(&ring, 1); rc < 0) {
    s.reason = sysReason("io_uring_enter", -rc);
    return done();
  }
  if (io_uring_peek_cqe(&ring, &cqe) != 0 || cqe == nullptr) {
    s.reason = "io_uring: no completion for a multishot receive";
    return done();
  }
  if (cqe->res < 0) {
    s.reason = sysReason("multishot receive (needs Linux 6.0)", -cqe->res);
  } else if (!(cqe->flags & IORING_CQE_F_MORE) || !(cqe->flags & IORING_CQE_F_BUFFER)) {
    s.reason = "io_uring: the receive did not stay armed (multishot receive needs Linux 6.0)";
  } else {
    s.available = true;
  }
  io_uring_cqe_seen(&ring, cqe);
  return done();
}

}  // namespace

const IoUringSupport& ioUringSupport() {
  static const IoUringSupport support = probe();
  return support;
}

namespace detail {
bool autoRequested(Transport requested) noexcept {
  if (requested == Transport::Auto) return true;
  if (requested != Transport::Default) return false;
  const char* env = std::getenv("NETBUF_TRANSPORT");
  return env != nullptr && parseTransport(env) == Transport::Auto;
}
}  // namespace detail

Transport resolveTransport(Transport requested) {
  if (requested == Transport::Default) {
    const char* env = std::getenv("NETBUF_TRANSPORT");
    if (env == nullptr || *env == '\0') return Transport::Asio;
    const auto parsed = parseTransport(env);
    if (!parsed || *parsed == Transport::Default) {
      throw IllegalArgumentError(
          fmt::format("NETBUF_TRANSPORT={}: expected asio, io_uring or auto", env));
    }
    requested = *parsed;
  }
  if (requested == Transport::Asio) return Transport::Asio;
  const IoUringSupport& s = ioUringSupport();
  if (s.available) return Transport::IoUring;
  if (requested == Transport::IoUring)
    throw TransportUnavailableError("io_uring transport unavailable: " + s.reason);
  static const bool logged = [&] {
    std::fprintf(stderr, "netbuf: io_uring unavailable (%s): using the Asio transport\n",
                 s.reason.c_str());
    return true;
  }();
  (void)logged;
  return Transport::Asio;
}

}  // namespace netbuf
