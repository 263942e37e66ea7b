#pragma once
// ServerChannel: a listening socket with a pipeline of its own (Netty's ServerSocketChannel), made
// by ServerBootstrap::bind or bindUnix.
//
// Its pipeline (ServerBootstrap::handler builds it) sees the server's life, on the server's loop:
//   channelActive             once listening
//   channelRead(Child)        each accepted connection, as a std::shared_ptr<SocketChannel> not yet
//                             started; a handler that passes it on lets it be started (the tail
//                             starts it on its own loop with the child handler); one that does not
//                             drops it (the connection is closed), e.g. a connection limit
//   exceptionCaught           an accept error (EMFILE...): logged at the tail, accepting goes on
//                             10 ms later; the server does not close
//   channelInactive           once every acceptor is closed
// setAutoRead(false) stops accepting after the pending accept (a server under load can shed
// connections to the kernel's backlog); setAutoRead(true) resumes. write() fails (a server channel
// accepts, it does not write); close() stops accepting.
//
// Acceptors: by default one, on one loop of the group, handing each accepted socket to the next
// loop (round robin). With ServerBootstrap::acceptorPerLoop(true), one SO_REUSEPORT acceptor per
// loop, each keeping its connections on its own loop; the pipeline still runs on the first
// acceptor's loop (when a handler() is set, the other acceptors' connections pass through it
// there).
//
// Threading: close(), setAutoRead() and the queries may be called from any thread; waitClosed()
// completes once the server has stopped accepting (close(), or the group's graceful shutdown):
//     server->waitClosed(asio::use_future).wait();   // a server's main: until the group shuts down
//
// Ownership and lifetime: bind returns a std::shared_ptr. Dropping the last reference stops
// accepting (at once, waiting for the acceptors' loops, when it is dropped on a thread that is not
// one of the group's; handed to them from a loop thread) and the channel is then destroyed on its
// loop; accepted channels stay open (closeChildren() closes them) and are owned by their loops.
// A ServerChannel must not outlive its EventLoopGroup: release it (or let shutdownGracefully close
// it, then release it) before the group is destroyed, since its acceptors belong to the group's
// io_contexts. A Unix domain socket's path is removed when the server stops accepting.

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <vector>

namespace netbuf {

class ServerChannel final : public Channel {
 public:
  /// Builds the server channel's pipeline (ServerBootstrap::handler), on its loop, before
  /// channelActive.
  using Initializer = std::function<void(ServerChannel&)>;
  /// An accepted connection, as channelRead delivers it.
  using Child = std::shared_ptr<SocketChannel>;

  ~ServerChannel() override;
  ServerChannel(const ServerChannel&) = delete;
  ServerChannel& operator=(const ServerChannel&) = delete;

  std::shared_ptr<ServerChannel> shared_from_this() {
    return std::static_pointer_cast<ServerChannel>(Channel::shared_from_this());
  }

  /// The loop running the server channel's pipeline.
  EventLoop& eventLoop() const noexcept { return *loop_; }
  boost::asio::any_io_executor get_executor() const override { return loop_->get_executor(); }
  /// True until the server stops accepting.
  bool isOpen() const noexcept override { return open_.load(std::memory_order_acquire); }
  bool isActive() const noexcept override { return isOpen(); }
  /// "127.0.0.1:8080", "[::]:8080" or the Unix socket's path.
  std::string localAddress() const override { return localAddress_; }
  /// A server channel has no peer: "".
  std::string remoteAddress() const override { return {}; }
  bool isDomainSocket() const noexcept { return domain_; }
  /// The TCP endpoint listened on (a default endpoint for a Unix domain socket).
  boost::asio::ip::tcp::endpoint localEndpoint() const noexcept { return localTcp_; }
  unsigned short port() const noexcept { return localTcp_.port(); }

  /// Completes (void(ErrorCode), always success) once every acceptor has closed; at once (posted)
  /// if they have. token is any Asio completion token; the handler runs on its associated
  /// executor, by default the server's loop. Any thread.
  template <class Token>
  auto waitClosed(Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(
        detail::InitiateWaitClosed<ServerChannel>{this, false}, token);
  }
  /// close() (stop accepting), completing as waitClosed does. Any thread.
  template <class Token>
  auto close(Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(
        detail::InitiateWaitClosed<ServerChannel>{this, true}, token);
  }
  using Channel::close;
  /// Closes every accepted channel that is still open (each on its own loop). Any thread.
  void closeChildren();
  /// Connections accepted so far / accepted and still open. Any thread.
  std::size_t acceptedCount() const noexcept;
  std::size_t openChildren() const;

  struct State;  // one per acceptor, shared with its pending operation

 private:
  friend class ServerBootstrap;
  struct Shared;
  /// The shared_ptr's deleter: the last reference dropped off the server's loop first stops
  /// accepting (waiting for it, from a thread that is not a loop), then hands the destruction to
  /// the loop, which may be running one of the pipeline's handlers.
  struct Deleter {
    void operator()(ServerChannel* s) const noexcept;
  };

  ServerChannel(EventLoop& loop, std::vector<std::shared_ptr<State>> states,
                std::shared_ptr<Shared> shared);
  /// Runs init, fires channelActive and starts accepting (on the server's loop).
  void start(const Initializer& init);
  /// An accepted connection, on the server's loop: through the pipeline.
  void onChild(Child child);
  /// Every acceptor closed (on the server's loop).
  void onAllClosed();
  /// Closes the acceptors now, waiting for their loops when not on them (destructor).
  void closeAcceptorsNow() noexcept;
  /// Runs fn once every acceptor has closed: at once (on this thread) if they have, else on the
  /// server's loop. Any thread.
  void addCloseListener(std::function<void()> fn);
  friend struct detail::InitiateWaitClosed<ServerChannel>;

  void doWrite(Message msg, WriteListener* listener) override;
  void doFlush() override {}
  void doClose() override;
  void onAutoReadChanged() override;
  void onUnhandledMessage(Message msg) noexcept override;
  void onUnhandledException(std::exception_ptr error) noexcept override;

  EventLoop* loop_;
  std::vector<std::shared_ptr<State>> states_;
  std::shared_ptr<Shared> shared_;
  std::string localAddress_;
  boost::asio::ip::tcp::endpoint localTcp_;
  bool domain_ = false;
  bool active_ = false;  // channelActive fired (loop thread)
  std::atomic<bool> open_{true};
};

}  // namespace netbuf
