#pragma once
// LoopbackSocket: a raw TCP client socket on 127.0.0.1 for tests that speak a protocol byte by
// byte (a Redis or HTTP peer written by hand). Non-blocking underneath: every wait is a poll()
// with a deadline, so a server that never answers fails the test instead of hanging it.
#include <poll.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <string>
#include <string_view>

namespace netbuf::test {

class LoopbackSocket {
 public:
  using Clock = std::chrono::steady_clock;

  /// Connects to 127.0.0.1:port with TCP_NODELAY.
  explicit LoopbackSocket(unsigned short port) : sock_(io_) {
    sock_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    sock_.set_option(boost::asio::ip::tcp::no_delay(true));
    sock_.non_blocking(true);
  }

  /// Writes bytes until all are sent, the socket fails (the error is returned: the peer closed
  /// or reset) or the deadline passes (boost::asio::error::timed_out).
  boost::system::error_code sendAll(std::string_view bytes, Clock::time_point deadline) {
    while (!bytes.empty()) {
      boost::system::error_code ec;
      const std::size_t n = sock_.write_some(boost::asio::buffer(bytes.data(), bytes.size()), ec);
      if (ec == boost::asio::error::would_block) {
        if (!waitFor(POLLOUT, deadline)) return boost::asio::error::timed_out;
        continue;
      }
      if (ec) return ec;
      bytes.remove_prefix(n);
    }
    return {};
  }

  /// Appends what has arrived to buffer(), waiting until deadline for something; false on
  /// timeout. At EOF or a reset, sets closed() and returns true.
  bool fill(Clock::time_point deadline) {
    for (;;) {
      char tmp[65536];
      boost::system::error_code ec;
      const std::size_t n = sock_.read_some(boost::asio::buffer(tmp), ec);
      if (!ec) {
        buf_.append(tmp, n);
        return true;
      }
      if (ec == boost::asio::error::would_block) {
        if (!waitFor(POLLIN, deadline)) return false;
        continue;
      }
      eof_ = true;  // eof, connection_reset...
      return true;
    }
  }

  /// Whether the socket is ready for events (POLLIN, POLLOUT) before deadline.
  bool waitFor(short events, Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sock_.native_handle(), events, 0};
    return ::poll(&p, 1, static_cast<int>(left.count())) > 0;
  }

  /// Received bytes not consumed yet (callers erase what they take).
  std::string& buffer() noexcept { return buf_; }
  const std::string& buffer() const noexcept { return buf_; }
  /// Whether the peer closed (FIN or reset).
  bool closed() const noexcept { return eof_; }
  boost::asio::ip::tcp::socket& socket() noexcept { return sock_; }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket sock_;
  std::string buf_;
  bool eof_ = false;
};

}  // namespace netbuf::test
