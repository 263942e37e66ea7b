// EchoLoad (see echo_load.hpp for the model and the guarantees).

#include "echo_load.hpp"

#include "cpu_time.hpp"

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <netbuf/tls/ssl_handshake_completion_event.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/channel_handler_context.hpp>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <thread>
#include <utility>

#include <unistd.h>

namespace netbuf::tools {

// ---------------------------------------------------------------------------------------------
// EchoLoad

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kHeaderBytes = 8;
// Pattern bytes compared for every message up to this size; larger ones check only the first
// kCheapCheckBytes bytes of their pattern.
constexpr std::size_t kFullCheckLimit = 1024;
constexpr std::size_t kCheapCheckBytes = 64;
// A batched write holds at most this many bytes of messages (at least one message).
constexpr std::size_t kMaxBatchBytes = std::size_t{4} << 20;

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}
/// The time point of a nowNs() value, for waits.
Clock::time_point timeAt(std::int64_t ns) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

std::uint8_t patternByte(std::size_t offset) {
  return static_cast<std::uint8_t>((offset * 131u + 17u) ^ (offset >> 8));
}

void storeLe64(std::uint8_t* p, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) p[k] = static_cast<std::uint8_t>(v >> (8 * k));
}

std::uint64_t loadLe64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v |= std::uint64_t{p[k]} << (8 * k);
  return v;
}

std::size_t roundUpPow2(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

struct Worker;

/// One client connection; lives on (and, once the run starts, is only touched by) its worker's
/// thread. Plain TCP: an Asio socket. TLS: a netbuf channel whose pipeline is an SslHandler and
/// an EchoLoadHandler; the connection is the WriteListener of its writes.
struct Conn final : WriteListener {
  Worker* worker;
  tcp::socket socket;
  // W' = min(W, batch limit) message images, written in place: only sequence numbers change.
  std::unique_ptr<std::uint8_t[]> sendBuf;
  std::size_t batchMessages = 0;
  std::unique_ptr<std::uint8_t[]> recvBuf;  // plain TCP only
  std::size_t recvCap = 0;
  // TLS: after sendBuf, so that the channel (whose SslHandler may still hold a view of sendBuf)
  // goes first. The handshake's outcome goes to run(), which waits for it before the clock starts.
  std::shared_ptr<SocketChannel> channel;
  std::promise<ErrorCode> handshake;
  std::future<ErrorCode> handshakeDone = handshake.get_future();
  std::unique_ptr<std::int64_t[]> sendTimes;  // ring, indexed by sequence & timeMask
  std::size_t timeMask = 0;
  std::uint64_t nextSendSeq = 0;
  std::uint64_t nextRecvSeq = 0;
  std::size_t owed = 0;       // messages to send as soon as no write is in flight
  std::size_t msgOffset = 0;  // bytes of the current reply received so far
  std::uint8_t header[kHeaderBytes] = {};
  bool writing = false;
  bool closed = false;

  Conn(Worker& w, asio::io_context& ioc) : worker(&w), socket(ioc) {}
  /// TLS: a write (startWrite's) went out, or failed.
  void operationComplete(std::error_code ec) noexcept override;
};

struct Worker {
  /// Plain TCP: an io_context of the worker's own, run by its thread. TLS (with a loop): one
  /// EventLoop of a group of the worker's own, whose thread runs the worker; the worker's thread
  /// only starts it there and waits for the end.
  explicit Worker(bool onLoop)
      // Asio whatever NETBUF_TRANSPORT says: the client is the constant of a benchmark whose
      // rows differ by their server (bench echo's netbuf and netbuf-io_uring rows).
      : group(onLoop ? std::make_unique<EventLoopGroup>(1, Transport::Asio) : nullptr),
        ownIoc(onLoop ? nullptr : std::make_unique<asio::io_context>(1)),
        loop(onLoop ? &group->loop(0) : nullptr),
        ioc(onLoop ? loop->context() : *ownIoc),
        timer(ioc) {}
  ~Worker() { shutdownLoop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  std::unique_ptr<EventLoopGroup> group;
  std::unique_ptr<asio::io_context> ownIoc;
  EventLoop* loop;
  asio::io_context& ioc;
  asio::steady_timer timer;
  std::vector<std::unique_ptr<Conn>> conns;
  std::size_t alive = 0;
  bool started = false;  // loop only (TLS): start() ran; events before it are the handshake's
  bool stopping = false;
  // TLS: finish() tells the worker's thread, waiting in runOnLoop(), that the run is over.
  std::mutex finishedMutex;
  std::condition_variable finishedChanged;
  bool finished = false;
  // Read-only during the run.
  const std::uint8_t* pattern = nullptr;  // the message image (pattern bytes, header zero)
  std::size_t messageSize = 0;
  std::size_t window = 0;
  std::size_t checkLimit = 0;  // message offsets [8, checkLimit) are compared
  std::int64_t windowStart = 0, windowEnd = 0;
  const std::atomic<bool>* stopRequested = nullptr;
  const std::atomic<bool>* abortRequested = nullptr;  // the progress callback threw
  // Shared progress counters (relaxed; see EchoLoad::messagesCompleted()).
  std::atomic<std::uint64_t>* completed = nullptr;
  std::atomic<std::uint64_t>* failures = nullptr;
  // Statistics of this thread.
  LatencyHistogram histogram;
  std::uint64_t messages = 0;
  std::uint64_t errors = 0;
  std::uint64_t mismatches = 0;
  std::string firstError;

  void start();
  /// TLS: runs start() on the loop and waits until finish() has run there.
  void runOnLoop();
  /// TLS: closes what is left and stops the loop (its thread joined). Idempotent.
  void shutdownLoop();
  void tick();
  void finish();
  void startWrite(Conn& c);
  void startRead(Conn& c);
  void onRead(Conn& c, std::size_t n);
  /// Checks and counts n echoed bytes; false when they failed the connection (a mismatch).
  bool consume(Conn& c, const std::uint8_t* p, std::size_t n);
  /// After the bytes of a read: the messages owed go out (when no write is in flight).
  void afterRead(Conn& c);
  void onWritten(Conn& c, std::error_code ec);
  void close(Conn& c);
  void fail(Conn& c, const std::string& what, bool mismatch);
  void countError(const std::string& what);
};

void Conn::operationComplete(std::error_code ec) noexcept { worker->onWritten(*this, ec); }

/// TLS: a connection's handler, after its SslHandler. Before the worker starts it only reports
/// the handshake's outcome (Conn::handshake, which run() waits for on its own thread: nothing
/// else of the connection or the worker is touched here until then); from then on it hands the
/// plaintext echoed back to the worker.
class EchoLoadHandler final : public ChannelHandler {
 public:
  EchoLoadHandler(Worker& w, Conn& c) : worker_(w), conn_(c) {}

  void userEventTriggered(ChannelHandlerContext& ctx, Message event) override {
    if (event.is<SslHandshakeCompletionEvent>()) {
      report(ErrorCode(event.as<SslHandshakeCompletionEvent>().error));
    }
    ctx.fireUserEventTriggered(std::move(event));
  }
  void channelRead(ChannelHandlerContext&, Message msg) override {
    if (!worker_.started || conn_.closed || !msg.is<ByteBuf>()) return;
    const ByteBuf bytes = msg.take<ByteBuf>();
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.readPtr());
    if (worker_.consume(conn_, p, bytes.readableBytes())) worker_.afterRead(conn_);
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    report(ErrorCode(ChannelErrc::closed));  // (closed before the handshake ended)
    if (worker_.started) worker_.fail(conn_, "read: server closed", false);
    ctx.fireChannelInactive();
  }
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr e) override {
    if (!worker_.started) return ctx.close();
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      worker_.fail(conn_, std::string("handler: ") + x.what(), false);
    } catch (...) {
      worker_.fail(conn_, "handler: unknown exception", false);
    }
  }

  MessageTypes inboundIn() const noexcept override { return typesOf<ByteBuf>(); }

 private:
  void report(ErrorCode ec) {
    if (reported_) return;
    reported_ = true;
    conn_.handshake.set_value(ec);
  }

  Worker& worker_;
  Conn& conn_;
  bool reported_ = false;
};

// An error outside any one connection (a handler that threw): counted like a socket error.
void Worker::countError(const std::string& what) {
  ++errors;
  failures->fetch_add(1, std::memory_order_relaxed);
  if (firstError.empty()) firstError = what;
}

/// TLS: connects c on w's loop (SslHandler for options.host and port, then EchoLoadHandler).
ErrorCode connectTls(Worker& w, Conn& c, const EchoLoadOptions& options) {
  Worker* worker = &w;
  Conn* conn = &c;
  try {
    c.channel =
        Bootstrap()
            .group(*w.group)
            .connectTimeout(std::chrono::seconds(10))
            .handler([worker, conn, tls = options.tls, host = options.host,
                      port = options.port](SocketChannel& ch) {
              ch.pipeline().addLast("tls", tls->newHandler(host, port));
              ch.pipeline().addLast("echo-load", std::make_unique<EchoLoadHandler>(*worker, *conn));
            })
            .connect(options.host, options.port, asio::use_future)
            .get();
  } catch (const boost::system::system_error& e) {
    return e.code();
  }
  return {};
}

void Worker::start() {
  started = true;
  for (auto& c : conns) {
    if (c->closed) continue;
    c->owed = window;
    startWrite(*c);
    startRead(*c);
  }
  tick();
}

// Wakes every 20 ms (or at the window's end, if sooner) to see whether the run is over.
void Worker::tick() {
  const std::int64_t now = nowNs();
  if (now >= windowEnd || stopRequested->load(std::memory_order_relaxed) ||
      abortRequested->load(std::memory_order_relaxed) || alive == 0) {
    finish();
    return;
  }
  const std::int64_t wait = std::min<std::int64_t>(windowEnd - now, 20'000'000);
  timer.expires_after(std::chrono::nanoseconds(wait));
  timer.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) tick();
  });
}

void Worker::runOnLoop() {
  loop->execute([this] {
    try {
      start();
    } catch (const std::exception& e) {
      countError(std::string("start: ") + e.what());
      finish();
    }
  });
  std::unique_lock<std::mutex> lock(finishedMutex);
  finishedChanged.wait(lock, [this] { return finished; });
}

void Worker::shutdownLoop() {
  if (group == nullptr || group->loop(0).isTerminated()) return;
  group->shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
}

void Worker::finish() {
  stopping = true;
  timer.cancel();
  for (auto& c : conns) {
    if (c->closed) continue;
    c->closed = true;
    close(*c);
  }
  alive = 0;
  if (loop != nullptr) {
    {
      const std::lock_guard<std::mutex> lock(finishedMutex);
      finished = true;
    }
    finishedChanged.notify_all();
  }
}

void Worker::close(Conn& c) {
  if (c.channel) {
    c.channel->close();
  } else {
    boost::system::error_code ignored;
    c.socket.close(ignored);
  }
}

void Worker::fail(Conn& c, const std::string& what, bool mismatch) {
  if (c.closed) return;
  if (!stopping) {
    ++(mismatch ? mismatches : errors);
    failures->fetch_add(1, std::memory_order_relaxed);
    if (firstError.empty()) firstError = what;
  }
  c.closed = true;
  close(c);
  if (--alive == 0) finish();  // nothing left to measure: end the run now
}

void Worker::startWrite(Conn& c) {
  const std::size_t k = std::min(c.owed, c.batchMessages);
  const std::int64_t now = nowNs();
  for (std::size_t i = 0; i < k; ++i) {
    const std::uint64_t seq = c.nextSendSeq + i;
    storeLe64(c.sendBuf.get() + i * messageSize, seq);
    c.sendTimes[seq & c.timeMask] = now;
  }
  c.nextSendSeq += k;
  c.owed -= k;
  c.writing = true;
  if (c.channel) {
    // No copy: sendBuf is not written again until this write has completed (onWritten).
    c.channel->writeAndFlush(
        Unpooled::wrappedUnownedBuffer(std::span<const std::byte>(
            reinterpret_cast<const std::byte*>(c.sendBuf.get()), k * messageSize)),
        static_cast<WriteListener*>(&c));
    return;
  }
  Conn* conn = &c;
  asio::async_write(c.socket, asio::buffer(c.sendBuf.get(), k * messageSize),
                    [this, conn](const boost::system::error_code& ec, std::size_t) {
                      if (conn->closed) return;
                      conn->writing = false;
                      if (ec) {
                        fail(*conn, "write: " + ec.message(), false);
                        return;
                      }
                      if (conn->owed > 0) startWrite(*conn);
                    });
}

void Worker::onWritten(Conn& c, std::error_code ec) {
  if (c.closed) return;
  c.writing = false;
  if (ec) {
    fail(c, "write: " + ec.message(), false);
    return;
  }
  if (c.owed > 0) startWrite(c);
}

void Worker::startRead(Conn& c) {
  if (c.channel) return;  // TLS: the channel reads by itself (EchoLoadHandler)
  Conn* conn = &c;
  c.socket.async_read_some(asio::buffer(c.recvBuf.get(), c.recvCap),
                           [this, conn](const boost::system::error_code& ec, std::size_t n) {
                             if (conn->closed) return;
                             if (ec) {
                               fail(*conn,
                                    ec == asio::error::eof ? std::string("read: server closed")
                                                           : "read: " + ec.message(),
                                    false);
                               return;
                             }
                             onRead(*conn, n);
                           });
}

void Worker::onRead(Conn& c, std::size_t n) {
  if (!consume(c, c.recvBuf.get(), n)) return;
  afterRead(c);
  startRead(c);
}

bool Worker::consume(Conn& c, const std::uint8_t* p, std::size_t n) {
  const std::int64_t now = nowNs();
  const bool inWindow = now >= windowStart && now < windowEnd;
  const std::uint8_t* const end = p + n;
  std::uint64_t done = 0;  // whole messages this read completed
  while (p < end) {
    const std::size_t take = std::min(static_cast<std::size_t>(end - p), messageSize - c.msgOffset);
    // Sequence number bytes.
    if (c.msgOffset < kHeaderBytes) {
      const std::size_t h = std::min(take, kHeaderBytes - c.msgOffset);
      std::memcpy(c.header + c.msgOffset, p, h);
    }
    // Pattern bytes within the checked range.
    const std::size_t from = std::max(c.msgOffset, kHeaderBytes);
    const std::size_t to = std::min(c.msgOffset + take, checkLimit);
    if (from < to && std::memcmp(p + (from - c.msgOffset), pattern + from, to - from) != 0) {
      char what[96];
      std::snprintf(what, sizeof what, "mismatch: message %llu differs in bytes [%zu, %zu)",
                    static_cast<unsigned long long>(c.nextRecvSeq), from, to);
      fail(c, what, true);
      return false;
    }
    c.msgOffset += take;
    p += take;
    if (c.msgOffset < messageSize) break;
    // A whole message is back.
    c.msgOffset = 0;
    const std::uint64_t seq = loadLe64(c.header);
    if (seq != c.nextRecvSeq || seq >= c.nextSendSeq) {
      char what[96];
      std::snprintf(what, sizeof what, "mismatch: sequence number %llu where %llu was expected",
                    static_cast<unsigned long long>(seq),
                    static_cast<unsigned long long>(c.nextRecvSeq));
      fail(c, what, true);
      return false;
    }
    if (inWindow) {
      const std::int64_t latency = now - c.sendTimes[seq & c.timeMask];
      histogram.record(static_cast<std::uint64_t>(std::max<std::int64_t>(latency, 0)));
      ++messages;
    }
    ++c.nextRecvSeq;
    ++c.owed;
    ++done;
  }
  // One shared-counter update per read (a batch of messages), for progress reports.
  if (done != 0) completed->fetch_add(done, std::memory_order_relaxed);
  return true;
}

void Worker::afterRead(Conn& c) {
  if (!c.writing && c.owed > 0) startWrite(c);
}

}  // namespace

std::string EchoLoadOptions::validate() const {
  if (port == 0) return "port must be given (1-65535)";
  if (connections < 1 || connections > 10000) return "connections must be in [1, 10000]";
  if (messageSize < kHeaderBytes || messageSize > (std::size_t{64} << 20))
    return "message size must be in [8, 64 MiB] (the first 8 bytes carry a sequence number)";
  if (window < 1 || window > 65536) return "window must be in [1, 65536]";
  if (!(durationSeconds > 0) || durationSeconds > 86400) return "duration must be in (0, 86400]";
  if (!(warmupSeconds >= 0) || warmupSeconds > 3600) return "warmup must be in [0, 3600]";
  if (threads < 1 || threads > 256) return "threads must be in [1, 256]";
  if (serverPid < 0) return "server pid must be a process id (or 0 for none)";
  if (serverPid != 0 && serverCpuClock) return "give a server pid or a server CPU clock, not both";
  if (onProgress && !(progressIntervalSeconds >= 0.01 && progressIntervalSeconds <= 60))
    return "progress interval must be in [0.01, 60] seconds";
  return {};
}

EchoLoad::EchoLoad(EchoLoadOptions options) : options_(std::move(options)) {}

EchoLoadResult EchoLoad::run() {
  if (std::string why = options_.validate(); !why.empty()) throw std::invalid_argument(why);
  const EchoLoadOptions& o = options_;
  EchoLoadResult result;
  result.connectionsRequested = o.connections;
  completed_.store(0, std::memory_order_relaxed);
  failures_.store(0, std::memory_order_relaxed);
  std::atomic<bool> abortRequested{false};

  // Resolve once.
  tcp::resolver::results_type endpoints;
  {
    asio::io_context resolveContext;
    tcp::resolver resolver(resolveContext);
    boost::system::error_code ec;
    endpoints = resolver.resolve(o.host, std::to_string(o.port), ec);
    if (ec) {
      result.errors = o.connections;
      result.firstError = "resolve " + o.host + ": " + ec.message();
      return result;
    }
  }

  // The message image, shared read-only by every connection.
  const std::size_t n = o.messageSize;
  std::vector<std::uint8_t> pattern(n);
  for (std::size_t k = kHeaderBytes; k < n; ++k) pattern[k] = patternByte(k);
  const std::size_t batch = std::max<std::size_t>(1, std::min(o.window, kMaxBatchBytes / n));
  const std::size_t recvCap =
      n <= kFullCheckLimit ? (std::size_t{64} << 10) : (std::size_t{256} << 10);

  const std::size_t nWorkers = std::min(o.threads, o.connections);
  std::vector<std::unique_ptr<Worker>> workers;
  for (std::size_t w = 0; w < nWorkers; ++w) {
    auto worker = std::make_unique<Worker>(o.tls != nullptr);
    worker->pattern = pattern.data();
    worker->messageSize = n;
    worker->window = o.window;
    worker->checkLimit = n <= kFullCheckLimit ? n : std::min(n, kHeaderBytes + kCheapCheckBytes);
    worker->stopRequested = &stopRequested_;
    worker->abortRequested = &abortRequested;
    worker->completed = &completed_;
    worker->failures = &failures_;
    workers.push_back(std::move(worker));
  }

  // Connect every connection (blocking, before the clock starts); TLS connections end their
  // handshakes before it starts too (below).
  for (std::size_t i = 0; i < o.connections; ++i) {
    Worker& w = *workers[i % nWorkers];
    auto c = std::make_unique<Conn>(w, w.ioc);
    boost::system::error_code ec;
    if (o.tls) {
      ec = connectTls(w, *c, o);
    } else {
      asio::connect(c->socket, endpoints, ec);
      if (!ec) c->socket.set_option(tcp::no_delay(true), ec);
    }
    if (ec) {
      w.countError("connect: " + ec.message());
      c->closed = true;
      w.conns.push_back(std::move(c));
      continue;
    }
    c->batchMessages = batch;
    c->sendBuf = std::make_unique<std::uint8_t[]>(batch * n);
    for (std::size_t m = 0; m < batch; ++m)
      std::memcpy(c->sendBuf.get() + m * n, pattern.data(), n);
    if (!o.tls) {
      c->recvCap = recvCap;
      c->recvBuf = std::make_unique<std::uint8_t[]>(recvCap);
    }
    const std::size_t ring = roundUpPow2(o.window);
    c->sendTimes = std::make_unique<std::int64_t[]>(ring);
    c->timeMask = ring - 1;
    if (!o.tls) {
      ++w.alive;
      ++result.connectionsOpened;
    }
    w.conns.push_back(std::move(c));
  }
  if (o.tls) {
    // The handshakes ran meanwhile; a connection counts as opened once its handshake succeeded.
    // (The handler's SslHandler fails a handshake after its timeout, so this wait is a backstop.)
    for (auto& wp : workers) {
      for (auto& c : wp->conns) {
        if (c->closed) continue;
        const ErrorCode ec =
            c->handshakeDone.wait_for(std::chrono::seconds(60)) == std::future_status::ready
                ? c->handshakeDone.get()
                : ErrorCode(asio::error::timed_out);
        if (ec) {
          wp->countError("TLS handshake: " + ec.message());
          c->closed = true;
          c->channel->close();
          continue;
        }
        ++wp->alive;
        ++result.connectionsOpened;
      }
    }
  }

  const std::int64_t start = nowNs();
  const auto warmupNs = static_cast<std::int64_t>(o.warmupSeconds * 1e9);
  const auto durationNs = static_cast<std::int64_t>(o.durationSeconds * 1e9);
  const std::int64_t windowStart = start + warmupNs;
  const std::int64_t windowEnd = windowStart + durationNs;

  // The connection threads count themselves out here, so a progress reporter waiting for its next
  // tick wakes as soon as the run ends (early included).
  std::mutex runningMutex;
  std::condition_variable runningChanged;
  std::size_t running = nWorkers;

  std::vector<std::thread> threads;
  threads.reserve(nWorkers);
  for (auto& wp : workers) {
    Worker* w = wp.get();
    w->windowStart = windowStart;
    w->windowEnd = windowEnd;
    threads.emplace_back([w, &runningMutex, &runningChanged, &running] {
      if (w->loop != nullptr) {
        w->runOnLoop();  // TLS: the worker runs on its loop; exceptions stay there
        {
          const std::lock_guard<std::mutex> lock(runningMutex);
          --running;
        }
        runningChanged.notify_all();
        return;
      }
      // No exception leaves the thread: a failing handler is reported and the loop goes on.
      try {
        w->start();
      } catch (const std::exception& e) {
        w->countError(std::string("start: ") + e.what());
        w->finish();
      }
      for (;;) {
        try {
          w->ioc.run();
          break;
        } catch (const std::exception& e) {
          w->countError(std::string("handler: ") + e.what());
        }
      }
      {
        const std::lock_guard<std::mutex> lock(runningMutex);
        --running;
      }
      runningChanged.notify_all();
    });
  }

  // CPU accounting: this process's and the server's CPU time read at the window's start and at its
  // end (or when the run ends, if sooner), by a thread of its own that sleeps in between.
  const auto sampleCpu = [&] {
    std::unique_lock<std::mutex> lock(runningMutex);
    const auto ended = [&running] { return running == 0; };
    if (runningChanged.wait_until(lock, timeAt(windowStart), ended)) return;  // no window
    lock.unlock();
    const auto serverCpu = [&o] {
      if (o.serverCpuClock) return o.serverCpuClock();
      return o.serverPid != 0 ? processCpuSeconds(o.serverPid) : -1.0;
    };
    const double client0 = processCpuSeconds(static_cast<int>(getpid()));
    const double server0 = serverCpu();
    lock.lock();
    runningChanged.wait_until(lock, timeAt(windowEnd), ended);
    lock.unlock();
    const double client1 = processCpuSeconds(static_cast<int>(getpid()));
    const double server1 = serverCpu();
    if (client0 >= 0 && client1 >= client0) result.clientCpuSeconds = client1 - client0;
    if (server0 >= 0 && server1 >= server0) result.serverCpuSeconds = server1 - server0;
  };
  // The CPU figures are extras: a sampler that cannot be started, or a clock that throws, leaves
  // them unmeasured (-1) rather than ending the run (or the process: nothing may leave a thread).
  std::thread cpuSampler;
  try {
    cpuSampler = std::thread([&sampleCpu] {
      try {
        sampleCpu();
      } catch (...) {
      }
    });
  } catch (...) {
  }

  // Progress: sample the shared counters every interval until the threads are done.
  std::exception_ptr progressError;
  std::int64_t lastReportAt = start;
  std::uint64_t lastReportMessages = 0;
  const auto report = [&](std::int64_t at, bool last) {
    EchoLoadProgress p;
    const std::uint64_t m = completed_.load(std::memory_order_relaxed);
    p.elapsedSeconds = static_cast<double>(at - start) / 1e9;
    p.totalSeconds = static_cast<double>(windowEnd - start) / 1e9;
    p.warmingUp = lastReportAt < windowStart;  // the interval began in the warmup
    p.last = last;
    p.messages = m;
    p.intervalSeconds = static_cast<double>(at - lastReportAt) / 1e9;
    if (p.intervalSeconds > 0 && m >= lastReportMessages) {
      p.messagesPerSecond = static_cast<double>(m - lastReportMessages) / p.intervalSeconds;
      p.megabytesPerSecond = p.messagesPerSecond * static_cast<double>(n) / 1e6;
    }
    p.errors = failures_.load(std::memory_order_relaxed);
    lastReportAt = at;
    lastReportMessages = m;
    o.onProgress(p);
  };
  if (o.onProgress) {
    const auto intervalNs =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(o.progressIntervalSeconds * 1e9));
    std::int64_t next = start + intervalNs;
    std::unique_lock<std::mutex> lock(runningMutex);
    for (;;) {
      if (runningChanged.wait_until(lock, timeAt(next), [&running] { return running == 0; })) break;
      const std::int64_t now = nowNs();
      if (now < next) continue;  // woke early: wait for the tick
      // Late (a descheduled reporter): the next tick comes no sooner than half an interval on,
      // never as a burst of catch-up reports.
      next = std::max(next + intervalNs, now + intervalNs / 2);
      // From the window's end on, the threads are finishing: the last report follows.
      if (now >= windowEnd || progressError) continue;
      lock.unlock();
      try {
        report(now, false);
      } catch (...) {
        progressError = std::current_exception();
        abortRequested.store(true, std::memory_order_relaxed);
      }
      lock.lock();
    }
  }
  for (auto& t : threads) t.join();
  const std::int64_t finished = nowNs();
  // TLS: nothing runs on the workers' loops any more from here on (their threads are joined).
  for (auto& w : workers) w->shutdownLoop();
  if (cpuSampler.joinable()) cpuSampler.join();
  if (o.onProgress && !progressError) {
    try {
      report(finished, true);
    } catch (...) {
      progressError = std::current_exception();
    }
  }
  if (progressError) std::rethrow_exception(progressError);

  LatencyHistogram all;
  for (auto& w : workers) {
    all.merge(w->histogram);
    result.messages += w->messages;
    result.errors += w->errors;
    result.mismatches += w->mismatches;
    if (result.firstError.empty()) result.firstError = w->firstError;
  }
  workers.clear();  // closes the sockets before their io_contexts go

  const std::int64_t measured = std::min(finished, windowEnd) - windowStart;
  result.seconds = measured > 0 ? static_cast<double>(measured) / 1e9 : 0.0;
  result.bytes = result.messages * n;
  if (result.seconds > 0) {
    result.messagesPerSecond = static_cast<double>(result.messages) / result.seconds;
    result.megabytesPerSecond = static_cast<double>(result.bytes) / result.seconds / 1e6;
  }
  result.p50Ns = all.percentile(0.50);
  result.p99Ns = all.percentile(0.99);
  result.p999Ns = all.percentile(0.999);
  result.maxNs = all.max();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Output

namespace {

std::string sizeName(std::size_t n) {
  char buf[32];
  if (n >= 1024 && n % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zu KiB", n / 1024);
  else
    std::snprintf(buf, sizeof buf, "%zu B", n);
  return buf;
}

/// v rounded to `digits` decimals: JSON output keeps the precision the measurement has.
double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

/// 1234567 -> "1,234,567" (rounded to an integer).
std::string groupThousands(double v) {
  const auto whole = static_cast<unsigned long long>(std::llround(std::max(v, 0.0)));
  const std::string digits = std::to_string(whole);
  std::string out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k != 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

}  // namespace

std::string echoProgressLine(const EchoLoadProgress& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%5.1f s / %.1f s %15s msgs/s %10.1f MB/s   errors %llu%s",
                p.elapsedSeconds, p.totalSeconds, groupThousands(p.messagesPerSecond).c_str(),
                p.megabytesPerSecond, static_cast<unsigned long long>(p.errors),
                p.warmingUp ? "   (warmup)" : "");
  return buf;
}

std::string echoTableHeader() {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%5s %8s %6s %13s %9s %9s %9s %9s %9s %6s", "conns", "size",
                "window", "msgs/s", "MB/s", "p50 us", "p99 us", "p999 us", "max us", "errors");
  return buf;
}

std::string echoTableRow(const EchoLoadOptions& o, const EchoLoadResult& r) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%5zu %8s %6zu %13.0f %9.1f %9.1f %9.1f %9.1f %9.1f %6llu",
                o.connections, sizeName(o.messageSize).c_str(), o.window, r.messagesPerSecond,
                r.megabytesPerSecond, us(r.p50Ns), us(r.p99Ns), us(r.p999Ns), us(r.maxNs),
                static_cast<unsigned long long>(r.errors + r.mismatches));
  return buf;
}

void writeEchoFields(JsonStreamWriter& w, const EchoLoadOptions& o, const EchoLoadResult& r) {
  const auto member = [&w](std::string_view name, auto value) {
    w.key(name);
    w.value(value);
  };
  member("connections", o.connections);
  member("size", o.messageSize);
  member("window", o.window);
  member("threads", std::min(o.threads, o.connections));
  member("seconds", rounded(r.seconds, 3));
  member("messages", r.messages);
  member("msgs_per_s", static_cast<std::uint64_t>(std::llround(r.messagesPerSecond)));
  member("mb_per_s", rounded(r.megabytesPerSecond, 2));
  member("p50_us", rounded(us(r.p50Ns), 2));
  member("p99_us", rounded(us(r.p99Ns), 2));
  member("p999_us", rounded(us(r.p999Ns), 2));
  member("max_us", rounded(us(r.maxNs), 2));
  member("connections_opened", r.connectionsOpened);
  member("mismatches", r.mismatches);
  member("errors", r.errors);
  if (r.clientCpuSeconds >= 0) member("client_cpu_s", rounded(r.clientCpuSeconds, 2));
  if (r.serverCpuSeconds >= 0) {
    member("server_cpu_s", rounded(r.serverCpuSeconds, 2));
    if (const double perMessage = r.serverCpuMicrosPerMessage(); perMessage >= 0)
      member("server_cpu_us_per_msg", rounded(perMessage, 4));
  }
  if (!r.firstError.empty()) member("first_error", std::string_view(r.firstError));
}

std::string echoJson(const EchoLoadOptions& o, const EchoLoadResult& r) {
  ByteBuf out = Unpooled::buffer(512);
  {
    JsonStreamWriter w(out);
    w.beginObject();
    writeEchoFields(w, o, r);
    w.endObject();
  }
  return std::string(out.readableStringView());
}

}  // namespace netbuf::tools
