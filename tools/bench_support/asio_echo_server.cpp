// AsioEchoServer (see asio_echo_server.hpp for the design).

#include "asio_echo_server.hpp"

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace netbuf::tools {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr std::size_t kInitialRead = std::size_t{16} << 10;
constexpr std::size_t kMaxRead = std::size_t{1} << 20;
constexpr std::size_t kPendingHighWater = std::size_t{4} << 20;

/// A growable byte array without the zero-filling of std::vector::resize.
struct Bytes {
  std::unique_ptr<char[]> data;
  std::size_t cap = 0;
  std::size_t len = 0;

  /// Makes room for `extra` more bytes after len, keeping the contents.
  void reserveMore(std::size_t extra) {
    if (cap - len >= extra) return;
    std::size_t n = std::max<std::size_t>(cap * 2, kInitialRead);
    while (n - len < extra) n *= 2;
    auto bigger = std::make_unique_for_overwrite<char[]>(n);
    if (len != 0) std::memcpy(bigger.get(), data.get(), len);
    data = std::move(bigger);
    cap = n;
  }
  void append(const char* p, std::size_t n) {
    reserveMore(n);
    std::memcpy(data.get() + len, p, n);
    len += n;
  }
};

/// One echo connection. Owned by the handlers in flight (shared_ptr); touched only by the thread
/// of its socket's io_context.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<AsioEchoServer::Stats> stats)
      : socket_(std::move(socket)), stats_(std::move(stats)) {
    stats_->open.fetch_add(1, std::memory_order_relaxed);
  }
  ~Session() { stats_->open.fetch_sub(1, std::memory_order_relaxed); }

  void start() { read(); }

 private:
  void read() {
    reading_ = true;
    in_.len = 0;
    in_.reserveMore(readSize_);
    socket_.async_read_some(asio::buffer(in_.data.get(), in_.cap),
                            [self = shared_from_this()](const boost::system::error_code& ec,
                                                        std::size_t n) { self->onRead(ec, n); });
  }

  void onRead(const boost::system::error_code& ec, std::size_t n) {
    reading_ = false;
    if (closed_) return;
    if (ec) {
      // EOF: echo what is still queued, then half-close; any other error: drop the connection.
      if (ec != asio::error::eof) {
        close();
        return;
      }
      readClosed_ = true;
      if (!writing_) finishIfDone();
      return;
    }
    in_.len = n;
    if (n == in_.cap && readSize_ < kMaxRead) readSize_ = std::min(readSize_ * 2, kMaxRead);
    if (!writing_) {
      std::swap(in_, out_);  // echo the bytes where they were read: no copy
      write();
    } else {
      pending_.append(in_.data.get(), n);
    }
    if (pending_.len < kPendingHighWater) read();
  }

  void write() {
    writing_ = true;
    asio::async_write(socket_, asio::buffer(out_.data.get(), out_.len),
                      [self = shared_from_this()](const boost::system::error_code& ec,
                                                  std::size_t n) { self->onWrite(ec, n); });
  }

  void onWrite(const boost::system::error_code& ec, std::size_t n) {
    writing_ = false;
    stats_->bytesEchoed.fetch_add(n, std::memory_order_relaxed);
    if (closed_) return;
    if (ec) {
      close();
      return;
    }
    out_.len = 0;
    if (pending_.len != 0) {
      std::swap(pending_, out_);  // everything read meanwhile goes out in one write
      write();
    } else if (readClosed_) {
      finishIfDone();
      return;
    }
    if (!reading_ && !readClosed_ && pending_.len < kPendingHighWater) read();
  }

  void finishIfDone() {
    if (pending_.len != 0) {
      std::swap(pending_, out_);
      write();
      return;
    }
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
  }

  void close() {
    closed_ = true;
    readClosed_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  tcp::socket socket_;
  std::shared_ptr<AsioEchoServer::Stats> stats_;
  Bytes in_, out_, pending_;
  std::size_t readSize_ = kInitialRead;
  bool reading_ = false;
  bool writing_ = false;
  bool readClosed_ = false;  // EOF seen (or closed): no more reads
  bool closed_ = false;      // socket closed after an error
};

/// One io_context and the thread that runs it.
struct Loop {
  asio::io_context ioc{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard{ioc.get_executor()};
  std::thread thread;
};

}  // namespace

struct AsioEchoServer::Impl {
  std::vector<std::unique_ptr<Loop>> loops;
  std::unique_ptr<tcp::acceptor> acceptor;    // on loops[0]
  std::unique_ptr<asio::steady_timer> retry;  // backs off after accept errors (EMFILE...)
  std::shared_ptr<Stats> stats;
  std::size_t next = 0;  // round robin over loops; touched by loop 0 only

  void accept() {
    Loop& target = *loops[next];
    next = (next + 1) % loops.size();
    acceptor->async_accept(target.ioc,
                           [this](const boost::system::error_code& ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !acceptor->is_open())
                               return;
                             if (ec) {
                               // Out of descriptors or the like: try again shortly rather than
                               // spin.
                               retry->expires_after(std::chrono::milliseconds(10));
                               retry->async_wait([this](const boost::system::error_code& e) {
                                 if (!e) accept();
                               });
                               return;
                             }
                             stats->accepted.fetch_add(1, std::memory_order_relaxed);
                             boost::system::error_code ignored;
                             socket.set_option(tcp::no_delay(true), ignored);
                             // Start the session on its own loop's thread.
                             auto executor = socket.get_executor();
                             auto session = std::make_shared<Session>(std::move(socket), stats);
                             asio::dispatch(executor, [s = std::move(session)] { s->start(); });
                             accept();
                           });
  }
};

AsioEchoServer::AsioEchoServer(AsioEchoServerOptions options) : options_(std::move(options)) {}

AsioEchoServer::~AsioEchoServer() { stop(); }

bool AsioEchoServer::running() const {
  std::lock_guard lock(mutex_);
  return impl_ != nullptr;
}

void AsioEchoServer::start() {
  std::lock_guard lock(mutex_);
  if (impl_) throw std::logic_error("AsioEchoServer::start: already started");
  if (options_.threads < 1 || options_.threads > 1024)
    throw std::invalid_argument("AsioEchoServer: threads must be in [1, 1024]");
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options_.address, ec);
  if (ec)
    throw std::invalid_argument("AsioEchoServer: bad address '" + options_.address +
                                "': " + ec.message());

  auto impl = std::make_unique<Impl>();
  impl->stats = stats_;
  for (std::size_t k = 0; k < options_.threads; ++k)
    impl->loops.push_back(std::make_unique<Loop>());
  Loop& first = *impl->loops[0];
  impl->acceptor = std::make_unique<tcp::acceptor>(first.ioc);
  impl->retry = std::make_unique<asio::steady_timer>(first.ioc);
  const tcp::endpoint endpoint(address, options_.port);
  tcp::acceptor& acceptor = *impl->acceptor;
  acceptor.open(endpoint.protocol());  // these throw system_error, naming what failed
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  port_.store(acceptor.local_endpoint().port(), std::memory_order_release);

  impl->accept();
  Stats* stats = stats_.get();
  for (auto& loop : impl->loops) {
    asio::io_context* ioc = &loop->ioc;
    loop->thread = std::thread([ioc, stats] {
      stats->recordThisThread();
      for (;;) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          stats->handlerFailures.fetch_add(1, std::memory_order_relaxed);
          std::fprintf(stderr, "AsioEchoServer: handler failed: %s\n", e.what());
        } catch (...) {
          stats->handlerFailures.fetch_add(1, std::memory_order_relaxed);
          std::fprintf(stderr, "AsioEchoServer: handler failed\n");
        }
      }
    });
  }
  stats_->waitForThreads(impl->loops.size());  // so that cpuSeconds() covers every thread
  impl_ = std::move(impl);
}

void AsioEchoServer::stop() {
  std::lock_guard lock(mutex_);
  if (!impl_) return;
  for (auto& loop : impl_->loops) loop->ioc.stop();
  for (auto& loop : impl_->loops)
    if (loop->thread.joinable()) loop->thread.join();
  stats_->forgetThreads();
  // Nothing runs any more: close the listener, then destroy each io_context, which destroys the
  // handlers still queued and with them the sessions they own (closing their sockets).
  impl_->retry.reset();
  impl_->acceptor.reset();
  impl_->loops.clear();
  impl_.reset();
  port_.store(0, std::memory_order_release);
}

}  // namespace netbuf::tools
