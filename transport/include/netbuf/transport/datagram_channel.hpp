#pragma once
// DatagramChannel: a UDP socket with a pipeline, on one EventLoop (Netty's NioDatagramChannel).
//
//     EventLoopGroup group;
//     auto ch = DatagramChannel::bind(group, "127.0.0.1", 0, [](DatagramChannel& c) {
//       c.pipeline().addLast("echo", std::make_unique<EchoHandler>());
//     });
//     unsigned short port = ch->localPort();
//
// Creation: bind() opens and binds the socket on the calling thread (throwing std::system_error
// when it cannot), then starts the channel on a loop of the group: runs init (which builds the
// pipeline), fires channelActive and starts reading. It returns once the channel has started, so
// the channel is active (unless init closed it) and init has run when bind returns. Called from a
// thread that is not one of the group's loops, it takes group.next() and waits for that loop to
// start the channel; called from one of the group's loop threads, it puts the channel on that
// loop and starts it there at once (waiting for another loop from a loop thread could deadlock).
// An exception thrown by init closes the channel and is rethrown by bind().
//
// Reading: when the socket becomes readable, the channel receives up to maxMessagesPerRead
// datagrams with non-blocking recvmsg (Netty's maxMessagesPerRead, default 16: the datagrams
// already waiting are taken in one loop turn), fires each as channelRead(DatagramPacket{content,
// recipient = localEndpoint(), sender = the peer}), then fires channelReadComplete once for the
// batch, and waits for readability again. Each datagram is read into a buffer of readBufferSize
// bytes (default 2048, Netty's default for datagrams) from the channel's allocator.
// A datagram larger than that buffer is truncated by the kernel (recvmsg reports MSG_TRUNC): the
// channel DROPS it (a partial datagram is no datagram), counts it (truncatedDatagrams()) and fires
// exceptionCaught(DatagramTruncatedError) naming its size, the limit and the sender; reading goes
// on. With autoRead off, no datagram is read (they wait in the socket's buffer, where the kernel
// drops what does not fit) until it is turned back on.
//
// Writing: write() queues, flush() sends what is queued at once with non-blocking sendmsg, one
// datagram per message, and waits for the socket to be writable only when its buffer is full
// (EAGAIN). Messages:
//   - DatagramPacket: content to its recipient (an unspecified recipient: the connected peer);
//   - ByteBuf, CompositeByteBuf, AnyByteBuf: to the connected peer (connect());
//   - anything else fails the write with ChannelErrc::unsupportedMessageType and a
//     MessageTypeError naming the type (put an encoder in the pipeline).
// A composite goes out as ONE datagram, its components gathered by sendmsg's iovecs (never split,
// never copied unless it has more than kMaxIovecs components). UDP semantics for errors: a send
// that fails (EMSGSIZE for a datagram too large, ECONNREFUSED on a connected socket whose peer has
// no listener, EDESTADDRREQ for a buffer on an unconnected channel, EACCES for a broadcast
// without the broadcast option...) fails that write's listener with the system error
// (std::system_category()), is counted (failedSends()), and the channel stays open and goes on
// with the next datagram. A listener hears success once the kernel has taken the datagram (UDP
// never says whether it arrived). At most kMaxMessagesPerWrite datagrams are sent per loop turn;
// the rest goes on in a later turn.
//
// Errors while reading: an ICMP error reported on a connected socket (ECONNREFUSED: nobody
// listens at the peer; EHOSTUNREACH, ENETUNREACH...) is fired as exceptionCaught(std::system_error)
// and reading goes on; any other receive error is fired and closes the channel. An exception that
// reaches the tail of the pipeline (a handler's, a truncated datagram, a write of an unsupported
// type) is logged on stderr with the channel's address and does NOT close the channel: one socket
// serves every peer, and one peer's bad datagram must not stop the others (as ServerChannel does).
//
// Backpressure: bytes written but not yet handed to the socket are counted; above the high water
// mark (default 64 KiB) isWritable() turns false and channelWritabilityChanged fires; below the
// low water mark (default 32 KiB) it turns true again (as SocketChannel).
//
// Closing: close() closes the socket, fails queued writes with ChannelErrc::closedBeforeWritten,
// fires channelInactive once and runs the close listeners. closeGracefully() (run for every open
// channel when its group shuts down gracefully) first lets the queued writes go out.
//
// Threading: handlers run on the channel's loop. write, flush, writeAndFlush, close,
// closeGracefully, connect, setAutoRead, close(token) and waitClosed may be called from any thread
// (Channel's rule: handed to the loop in the caller's order); isOpen, isActive, isWritable,
// isConnected, the addresses and endpoints and the counters from any thread too.
//
// Lifetime (as SocketChannel): channels are held by std::shared_ptr. While open, a started channel
// is owned by its loop (its shutdown hook holds one), and a pending socket operation holds one
// too, so the channel lives until it is closed and its operations have completed, whoever else
// lets go; the loop's reference is released by a later loop task, never inside the close. A
// channel that user code holds must be released before its group is destroyed.

#include <sys/uio.h>

#include <atomic>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/datagram_packet.hpp>
#include <netbuf/transport/detail/ring_queue.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/event_loop_channel.hpp>
#include <string>
#include <system_error>
#include <vector>

namespace netbuf {

/// Options of a DatagramChannel (DatagramChannel::bind).
struct DatagramChannelOptions {
  /// Bytes of each read's buffer: the largest datagram received whole (larger ones are dropped,
  /// see the header comment). 1 to DatagramChannel::kMaxDatagramSize.
  std::size_t readBufferSize = 2048;
  /// Datagrams read per readable event before channelReadComplete (Netty's maxMessagesPerRead).
  int maxMessagesPerRead = 16;
  int sendBufferSize = 0;     ///< SO_SNDBUF; 0 keeps the system default
  int receiveBufferSize = 0;  ///< SO_RCVBUF; 0 keeps the system default
  bool broadcast = false;     ///< SO_BROADCAST
  bool reuseAddress = false;  ///< SO_REUSEADDR (Netty's default for datagrams: off)
  std::size_t writeBufferHighWaterMark = 64 * 1024;
  std::size_t writeBufferLowWaterMark = 32 * 1024;
  bool autoRead = true;
  ByteBufAllocator* allocator = nullptr;  ///< nullptr: the default allocator
};

/// A received datagram larger than the read buffer (DatagramChannelOptions::readBufferSize): it
/// was dropped. Fired through exceptionCaught; the channel stays open.
class DatagramTruncatedError : public Error {
 public:
  DatagramTruncatedError(std::size_t size, std::size_t limit,
                         const boost::asio::ip::udp::endpoint& sender);
  /// The datagram's full size and the read buffer's size.
  std::size_t size() const noexcept { return size_; }
  std::size_t limit() const noexcept { return limit_; }
  const boost::asio::ip::udp::endpoint& sender() const noexcept { return sender_; }

 private:
  std::size_t size_;
  std::size_t limit_;
  boost::asio::ip::udp::endpoint sender_;
};

class DatagramChannel final : public EventLoopChannel {
 public:
  /// The largest UDP payload (IPv6 without jumbograms: 65535 - 8; IPv4's is 65507).
  static constexpr std::size_t kMaxDatagramSize = 65527;
  /// Components of a composite sent as is (IOV_MAX on Linux); more are copied into one buffer.
  static constexpr std::size_t kMaxIovecs = 1024;
  /// Datagrams one flush sends before it lets the loop run other work.
  static constexpr int kMaxMessagesPerWrite = 64;

  using Endpoint = boost::asio::ip::udp::endpoint;
  using Socket = boost::asio::ip::udp::socket;
  /// Called on the channel's loop before channelActive: builds the pipeline.
  using Initializer = std::function<void(DatagramChannel&)>;

  /// Binds a UDP socket to address:port (an IPv4 or IPv6 literal; port 0 picks a free port,
  /// localPort() says which) and starts it on a loop of group (see the header comment). Throws
  /// std::system_error when the address is invalid or the socket cannot be bound,
  /// IllegalArgumentError for invalid options, RejectedExecutionError when the group has shut
  /// down, and what init throws.
  static std::shared_ptr<DatagramChannel> bind(EventLoopGroup& group, const std::string& address,
                                               unsigned short port, Initializer init,
                                               const DatagramChannelOptions& options = {});
  ~DatagramChannel() override;

  std::shared_ptr<DatagramChannel> shared_from_this() {
    return std::static_pointer_cast<DatagramChannel>(Channel::shared_from_this());
  }

  /// True once connect() has fixed the peer.
  bool isConnected() const noexcept { return connected_.load(std::memory_order_acquire); }

  /// "127.0.0.1:5353", "[::1]:5353": the bound address (taken at bind).
  std::string localAddress() const override { return localAddress_; }
  /// The connected peer's address, "" while not connected.
  std::string remoteAddress() const override;
  Endpoint localEndpoint() const noexcept { return local_; }
  unsigned short localPort() const noexcept { return local_.port(); }
  /// The connected peer (a default endpoint while not connected).
  Endpoint remoteEndpoint() const;

  /// Fixes the peer (Netty's DatagramChannel.connect, the socket's connect(2)): buffers written
  /// without a recipient go to it, and the kernel delivers only its datagrams. Completes with
  /// void(ErrorCode) once connected on the loop (the socket's error, ChannelErrc::closed, or
  /// ChannelErrc::rejected when the loop has shut down); token is any Asio completion token, the
  /// handler runs on its associated executor, by default the channel's loop. May be called again
  /// to change the peer.
  template <class Token>
  auto connect(const Endpoint& peer, Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(
        [this, peer](auto handler) {
          detail::SharedCompletion<decltype(handler), boost::asio::any_io_executor> completion(
              std::move(handler), get_executor());
          connectThen(peer,
                      [completion](std::error_code ec) { completion.complete(ErrorCode(ec)); });
          completion.initiated();
        },
        token);
  }
  /// Synchronous form (as Asio's socket.connect): on the channel's loop it connects at once; from
  /// a thread that is not a loop thread it waits for the loop. Throws std::system_error on
  /// failure, IllegalStateError when called from another loop's thread (use a token there).
  void connect(const Endpoint& peer);
  void connect(const std::string& address, unsigned short port);

  /// Flushes what is queued and closes once it has been sent (what graceful shutdown does).
  void closeGracefully() override;
  /// Received datagrams dropped because they were larger than readBufferSize.
  std::uint64_t truncatedDatagrams() const noexcept {
    return truncated_.load(std::memory_order_relaxed);
  }
  /// Writes whose sendmsg failed (their listeners got the error).
  std::uint64_t failedSends() const noexcept {
    return failedSends_.load(std::memory_order_relaxed);
  }
  /// The options the channel was bound with.
  const DatagramChannelOptions& options() const noexcept { return options_; }

 private:
  friend class EventLoopChannel;  // make()

  /// Connects on the loop, then done(error) there (or at once with ChannelErrc::rejected when the
  /// loop has shut down).
  void connectThen(const Endpoint& peer, std::function<void(std::error_code)> done);

  struct QueuedDatagram {
    AnyByteBuf content;
    Endpoint recipient;
    bool toPeer;  // no recipient: the connected peer
    std::size_t bytes;
    WriteListener* listener;
  };

  DatagramChannel(EventLoop& loop, Socket socket, const DatagramChannelOptions& options);
  /// Runs init, fires channelActive and starts reading (on the loop).
  void start(const Initializer& init);

  void doWrite(Message msg, WriteListener* listener) override;
  void doFlush() override;
  void doClose() override;
  void onAutoReadChanged() override;
  void onUnhandledException(std::exception_ptr error) noexcept override;

  void waitReadable();
  /// Reads up to maxMessagesPerRead datagrams, then channelReadComplete.
  void readBatch();
  /// Sends what is flushed until the socket would block, the queue is empty or
  /// kMaxMessagesPerWrite datagrams were sent.
  void writeFlushed();
  /// sendmsg of one datagram: 0 or an errno value.
  int sendOne(QueuedDatagram& d);
  void waitWritable();
  void afterDrained();
  void connectOnLoop(const Endpoint& peer, std::error_code& ec);
  void closeWithError(const std::error_code& ec);

  Socket socket_;
  DatagramChannelOptions options_;
  Endpoint local_;
  std::string localAddress_;
  mutable std::mutex peerMutex_;  // guards peer_ and remoteAddress_ (written on the loop)
  Endpoint peer_;
  std::string remoteAddress_;
  ByteBuf readBuf_;         // the next read's buffer (kept when a read found nothing)
  std::vector<iovec> iov_;  // reused gather list of a composite's send
  detail::RingQueue<QueuedDatagram> unflushed_;  // storage kept: no allocation per write
  detail::RingQueue<QueuedDatagram> flushed_;
  std::atomic<std::uint64_t> truncated_{0};
  std::atomic<std::uint64_t> failedSends_{0};
  std::atomic<bool> connected_{false};
  bool reading_ = false;       // a wait for readability is pending
  bool inWrite_ = false;       // writeFlushed() is on the stack: a nested flush only queues
  bool waitingWrite_ = false;  // a wait for writability (or a yield) is pending: flush only queues
  bool closeWhenDrained_ = false;
};

}  // namespace netbuf
