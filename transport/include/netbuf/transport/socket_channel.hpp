#pragma once
// SocketChannel: a stream socket connection with a pipeline, on one EventLoop (Netty's
// NioSocketChannel, and its domain-socket sibling): TCP over IPv4/IPv6, or a Unix domain stream
// socket. Both are the same class; only the addresses and the TCP options differ.
//
// Reading: one async_read_some at a time into a buffer from the channel's allocator, sized
// adaptively (Netty's AdaptiveRecvByteBufAllocator: a read that fills the buffer grows the next one
// fourfold in the size table, two short reads in a row shrink it one step, between minReadSize and
// maxReadSize). Each read is fired as channelRead(ByteBuf) then channelReadComplete. With autoRead
// off, no new read is started until it is turned back on.
//
// Writing: write() queues (ByteBuf, CompositeByteBuf or AnyByteBuf; anything else fails the write
// with ChannelErrc::unsupportedMessageType and a MessageTypeError naming the type: put an encoder
// in the pipeline). flush() writes at once, as Netty's does: when no earlier write is waiting for
// the socket, it hands everything queued to the socket in non-blocking gather writes (up to
// kMaxIovecs buffers per sendmsg, called directly: Asio's own gather write stops at 64 buffers;
// composites count their components; no copy), and only when the socket's buffer is full does it
// wait for the socket to become writable and go on from there. So a flush in the middle of a long
// task on the loop sends its bytes then, not when the task ends. A write's WriteListener is
// notified when its last byte has been handed to the socket (possibly before flush() returns), or
// with ChannelErrc::closedBeforeWritten when the channel closes first; listeners are the caller's
// objects, so writes allocate nothing for their completion. One flush makes at most kWriteSpinCount
// sendmsg calls, then yields to the loop's other work and goes on in a later loop turn (Netty's
// writeSpinCount).
//
// Backpressure: bytes written but not yet on the socket are counted; above the high water mark
// (default 64 KiB) isWritable() turns false and channelWritabilityChanged fires; below the low
// water mark (default 32 KiB) it turns true again and fires again.
//
// Closing: close() (or a read error, EOF, a peer reset) closes the socket, fails queued writes,
// fires channelInactive once and runs the close listeners. closeGracefully() (run for every open
// channel when its group shuts down gracefully) first lets the queued writes go out.
// shutdownOutput() half-closes: queued writes are flushed first, then the write side is shut down;
// reading goes on.
//
// On the IoUring transport (transport.hpp) the same channel does its I/O through its loop's ring:
// reading is one multishot receive into the loop's provided buffers (each completion is one
// channelRead of the ring's buffer as it is, no copy; those buffers come from the default pooled
// allocator whatever options.allocator says, 16 KiB each; nextReadSize() is that size and
// minReadSize/initialReadSize/maxReadSize do not apply). A flush is one sendmsg submission,
// handed to the kernel at the end of the loop turn (while it is in flight further flushes queue):
// the kernel reads the buffers then, not inside flush(), so memory written out must not be reused
// before the write's listener has been told (a wrapped, unowned buffer especially). File regions
// still go out with sendfile. autoRead off cancels the receive; data that arrives before the
// cancellation takes is kept and delivered once autoRead is on again. A close submits what is
// prepared first, so data flushed before it goes out as on Asio, and the listeners of a send in
// flight then hear how much of it did. Everything else (options, water marks, half-close,
// threading) is as described here.
//
// Threading: handlers run on the channel's loop. write, flush, writeAndFlush, close,
// closeGracefully, shutdownOutput, setAutoRead, close(token) and waitClosed may be called from any
// thread (Channel's rule: handed to the loop in the caller's order); isOpen, isActive, isWritable,
// isOutputShutdown, pendingWriteBytes and the addresses from any thread too.
// nextReadSize() and the pipeline belong to the loop.
//
// Lifetime (EventLoopChannel's): channels are held by std::shared_ptr. While open, a started
// channel is owned by its loop, and pending socket operations hold one too, so a channel lives
// until it is closed and its operations have completed, whoever else lets go; it is destroyed on
// its loop.

#include <sys/uio.h>

#include <atomic>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/detail/ring_queue.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/event_loop_channel.hpp>
#include <netbuf/transport/file_region.hpp>
#include <string>
#include <system_error>
#include <vector>

namespace netbuf {

/// Options of a TCP channel (ServerBootstrap::childOptions, Bootstrap::options).
struct ChannelOptions {
  bool tcpNoDelay = true;
  bool keepAlive = false;
  int sendBufferSize = 0;     ///< SO_SNDBUF; 0 keeps the system default
  int receiveBufferSize = 0;  ///< SO_RCVBUF; 0 keeps the system default
  std::size_t writeBufferHighWaterMark = 64 * 1024;
  std::size_t writeBufferLowWaterMark = 32 * 1024;
  bool autoRead = true;
  std::size_t minReadSize = 64;
  std::size_t initialReadSize = 2048;
  std::size_t maxReadSize = 65536;
  ByteBufAllocator* allocator = nullptr;  ///< nullptr: the default allocator
};

class SocketChannel final : public EventLoopChannel {
 public:
  static constexpr std::size_t kMaxIovecs = 1024;  // IOV_MAX on Linux
  /// sendmsg calls one flush makes before it lets the loop run other work (Netty's default).
  static constexpr int kWriteSpinCount = 16;

  using Socket = boost::asio::generic::stream_protocol::socket;
  /// Called once the channel is registered, before channelActive: builds the pipeline.
  using Initializer = std::function<void(SocketChannel&)>;

  /// Wraps a connected socket (opened on loop's io_context). start() must then be called on the
  /// loop thread: it applies the options, runs init, fires channelActive and starts reading.
  static std::shared_ptr<SocketChannel> create(EventLoop& loop, Socket socket,
                                               const ChannelOptions& options);
  static std::shared_ptr<SocketChannel> create(EventLoop& loop, boost::asio::ip::tcp::socket socket,
                                               const ChannelOptions& options) {
    return create(loop, Socket(std::move(socket)), options);
  }
  static std::shared_ptr<SocketChannel> create(EventLoop& loop,
                                               boost::asio::local::stream_protocol::socket socket,
                                               const ChannelOptions& options) {
    return create(loop, Socket(std::move(socket)), options);
  }
  /// Adopts a connected stream socket's descriptor (TCP or Unix domain; the channel closes it),
  /// as accept or connect would have handed it over; then start() as for the others.
  static std::shared_ptr<SocketChannel> create(EventLoop& loop, int fd,
                                               const ChannelOptions& options);
  /// Applies the options, runs init, fires channelActive and starts reading (loop thread). When
  /// the loop is shutting down the channel is closed instead (init does not run); when init
  /// throws, the channel is closed and the exception goes on to the caller.
  void start(const Initializer& init);
  ~SocketChannel() override;

  std::shared_ptr<SocketChannel> shared_from_this() {
    return std::static_pointer_cast<SocketChannel>(Channel::shared_from_this());
  }

  /// "127.0.0.1:8080", "[::1]:8080", or a Unix socket's path ("@name" for an abstract one,
  /// "(unnamed)" for an unbound client end). Taken when the channel is made: any thread.
  std::string localAddress() const override { return localAddress_; }
  std::string remoteAddress() const override { return remoteAddress_; }
  /// True for a Unix domain socket.
  bool isDomainSocket() const noexcept { return domain_; }
  /// The TCP endpoints (a default endpoint for a Unix domain socket).
  boost::asio::ip::tcp::endpoint localEndpoint() const noexcept { return localTcp_; }
  boost::asio::ip::tcp::endpoint remoteEndpoint() const noexcept { return remoteTcp_; }

  void closeGracefully() override;
  /// Half-close: flushes what is queued, then shuts the socket's write side down.
  void shutdownOutput();
  bool isOutputShutdown() const noexcept { return outputShutdown_.load(std::memory_order_acquire); }

  /// The size the next read's buffer will have (loop thread).
  std::size_t nextReadSize() const noexcept;

 private:
  friend class EventLoopChannel;  // make()

  struct QueuedWrite {
    AnyByteBuf buf;
    std::size_t remaining;  // bytes of buf (or file) still to write
    WriteListener* listener;
    FileRegion file = {};  // valid: this write is a file region (buf is empty)
  };

  /// The IoUring transport's part of the channel (socket_channel_ring.cpp).
  struct RingIo;

  SocketChannel(EventLoop& loop, Socket socket, const ChannelOptions& options);
  /// On a loop of the IoUring transport: the channel owns fd (never seen by Asio's epoll).
  SocketChannel(EventLoop& loop, int fd, const ChannelOptions& options);
  void init(int fd, const ChannelOptions& options);
  /// The socket's descriptor, whichever transport holds it.
  int nativeHandle() noexcept;

  void doWrite(Message msg, WriteListener* listener) override;
  void doFlush() override;
  void doClose() override;

  /// setAutoRead(true) starts a read if none is pending; off stops after the pending one.
  void onAutoReadChanged() override;
  void startRead();
  void onRead(const boost::system::error_code& ec, std::size_t n, ByteBuf buf);
  void recordReadSize(std::size_t n) noexcept;
  /// Writes what is flushed until the socket would block (then waits for it to be writable), the
  /// queue is empty, or kWriteSpinCount sendmsg calls were made (then goes on in a later loop
  /// turn).
  void writeFlushed();
  /// What follows a drained queue: a pending graceful close or output shutdown.
  void afterDrained();
  /// Accounts n bytes written: advances and completes the queued writes they cover.
  void consumeWritten(std::size_t n);
  /// Waits for the socket to take more (its buffer was full), then goes on with writeFlushed().
  void waitWritable();
  void closeWithError(const boost::system::error_code& ec);
  /// Completes the empty writes at the front of flushed_; false when a listener closed the channel.
  bool completeEmptyWrites();
  /// Lets the loop run other work, then goes on with writeFlushed() (a flush meanwhile queues).
  void yieldWrite();
  /// One sendfile of the file region at the front of flushed_, its bytes consumed. Full: the
  /// socket takes no more now; Closed: an error (or a listener) closed the channel.
  enum class FileSend { Sent, Full, Closed };
  FileSend sendFileChunk();
  /// The gather list for the buffers at the front of flushed_ (up to a file region).
  void fillIovecs();

  // The IoUring transport (socket_channel_ring.cpp).
  void ringStartRead();
  void ringStopRead();
  void onRingRead(int res, unsigned flags);
  /// Delivers what arrived while autoRead was off (then the end of stream, if it came).
  void ringDrainStash();
  void ringWriteFlushed();
  /// Polls the socket for writability (the write in flight), then ringWriteFlushed() again.
  void ringWaitWritable();
  void onRingSent(int res);
  void ringClose() noexcept;
  /// The writes a closed channel's sendmsg still pointed at: succeeded up to res bytes, the rest
  /// failed with closedBeforeWritten.
  void ringSettleInFlight(int res) noexcept;

  Socket socket_;
  ChannelOptions options_;
  std::string localAddress_;
  std::string remoteAddress_;
  boost::asio::ip::tcp::endpoint localTcp_;
  boost::asio::ip::tcp::endpoint remoteTcp_;
  bool domain_ = false;
  std::vector<std::size_t> readSizes_;  // Netty's size table, clamped to [min, max]
  std::size_t readSizeIndex_ = 0;
  bool decreaseNow_ = false;
  detail::RingQueue<QueuedWrite> unflushed_;  // storage kept: no allocation per write
  detail::RingQueue<QueuedWrite> flushed_;
  std::vector<iovec> iov_;  // reused gather list
  std::atomic<bool> outputShutdown_{false};
  bool reading_ = false;
  bool inWrite_ = false;       // writeFlushed() is on the stack: a nested flush only queues
  bool waitingWrite_ = false;  // a wait for writability (or a yield) is pending: flush only queues
  bool shutdownOutputPending_ = false;
  bool closeWhenDrained_ = false;
  std::unique_ptr<RingIo> ring_;  // on the IoUring transport only
};

}  // namespace netbuf
