#pragma once
// SocketChannel: a TCP connection with a pipeline, on one EventLoop (Netty's NioSocketChannel).
//
// Reading: one async_read_some at a time into a buffer from the channel's allocator, sized
// adaptively (Netty's AdaptiveRecvByteBufAllocator: a read that fills the buffer grows the next one
// fourfold in the size table, two short reads in a row shrink it one step, between minReadSize and
// maxReadSize). Each read is fired as channelRead(ByteBuf) then channelReadComplete. With autoRead
// off, no new read is started until it is turned back on.
//
// Writing: write() queues (ByteBuf, CompositeByteBuf or AnyByteBuf; anything else fails the write:
// put an encoder in the pipeline), flush() hands everything queued to the socket as gather writes:
// up to kMaxIovecs buffers (composites count their components) in one async_write_some, no copy.
// A write's WriteListener is notified when its last byte has been written, or with an error when
// the channel closes first; listeners are the caller's objects, so writes allocate nothing for
// their completion.
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
// Lifetime: channels are held by std::shared_ptr. While open, a started channel is owned by its
// loop (its shutdown hook holds one), and pending socket operations hold one too, so a channel
// lives until it is closed and its operations have completed, whoever else lets go; the loop's
// reference is released by a later loop task, never inside the close. All methods run on the
// channel's loop thread (use executor().execute() from elsewhere).

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/event_loop.hpp>
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

class SocketChannel final : public Channel, public std::enable_shared_from_this<SocketChannel> {
 public:
  static constexpr std::size_t kMaxIovecs = 1024;  // IOV_MAX on Linux

  /// Called once the channel is registered, before channelActive: builds the pipeline.
  using Initializer = std::function<void(SocketChannel&)>;

  /// Wraps a connected socket (opened on loop's io_context). start() must then be called on the
  /// loop thread: it applies the options, runs init, fires channelActive and starts reading.
  static std::shared_ptr<SocketChannel> create(EventLoop& loop, boost::asio::ip::tcp::socket socket,
                                               const ChannelOptions& options);
  void start(const Initializer& init);
  ~SocketChannel() override;

  EventLoop& eventLoop() noexcept { return *loop_; }
  ChannelExecutor& executor() noexcept override { return *loop_; }
  /// isOpen() and isActive() may be asked from any thread.
  bool isOpen() const noexcept override { return open_.load(std::memory_order_acquire); }
  bool isActive() const noexcept override {
    return open_.load(std::memory_order_acquire) && active_.load(std::memory_order_acquire);
  }
  bool isWritable() const noexcept override { return writable_; }
  std::string localAddress() const override;
  std::string remoteAddress() const override;
  boost::asio::ip::tcp::endpoint localEndpoint() const;
  boost::asio::ip::tcp::endpoint remoteEndpoint() const;

  /// Flushes what is queued and closes once it has been written (what graceful shutdown does).
  void closeGracefully();
  /// Half-close: flushes what is queued, then shuts the socket's write side down.
  void shutdownOutput();
  bool isOutputShutdown() const noexcept { return outputShutdown_; }
  /// Runs fn once the channel has closed (at once if it already has).
  void addCloseListener(std::function<void()> fn);

  /// Bytes written but not yet handed to the socket (what the water marks compare).
  std::size_t pendingWriteBytes() const noexcept { return pendingBytes_; }
  /// The size the next read's buffer will have.
  std::size_t nextReadSize() const noexcept { return readSizes_[readSizeIndex_]; }

 private:
  struct QueuedWrite {
    AnyByteBuf buf;
    std::size_t remaining;  // bytes of buf still to write
    WriteListener* listener;
  };

  SocketChannel(EventLoop& loop, boost::asio::ip::tcp::socket socket,
                const ChannelOptions& options);

  void doWrite(Message msg, WriteListener* listener) override;
  void doFlush() override;
  void doClose() override;

  /// setAutoRead(true) starts a read if none is pending; off stops after the pending one.
  void onAutoReadChanged() override;
  void startRead();
  void onRead(const boost::system::error_code& ec, std::size_t n, ByteBuf buf);
  void recordReadSize(std::size_t n) noexcept;
  void startWrite();
  void onWritten(const boost::system::error_code& ec, std::size_t n);
  void addPending(std::size_t n);
  void removePending(std::size_t n);
  void closeWithError(const boost::system::error_code& ec);

  EventLoop* loop_;
  boost::asio::ip::tcp::socket socket_;
  ChannelOptions options_;
  std::vector<std::size_t> readSizes_;  // Netty's size table, clamped to [min, max]
  std::size_t readSizeIndex_ = 0;
  bool decreaseNow_ = false;
  std::deque<QueuedWrite> unflushed_;
  std::deque<QueuedWrite> flushed_;
  std::vector<boost::asio::const_buffer> iov_;  // reused gather list
  std::vector<std::function<void()>> closeListeners_;
  std::size_t pendingBytes_ = 0;
  std::atomic<bool> open_{true};
  std::atomic<bool> active_{false};
  bool reading_ = false;
  bool writing_ = false;
  bool writable_ = true;
  bool outputShutdown_ = false;
  bool shutdownOutputPending_ = false;
  bool closeWhenDrained_ = false;
  std::uint64_t shutdownHook_ = 0;  // on loop_, while open
};

}  // namespace netbuf
