#pragma once
// The internals of a ServerChannel: one State per acceptor (held by the acceptor's pending
// operation and by the ServerChannel), and the Shared part every acceptor of one server holds.

#include <atomic>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/server_channel.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <vector>

#include "endpoint_format.hpp"
#include "io_uring_loop.hpp"

namespace netbuf {

struct ServerChannel::Shared {
  EventLoop* serverLoop = nullptr;  // runs the ServerChannel's pipeline
  std::weak_ptr<ServerChannel> server;
  ChannelOptions childOptions;
  SocketChannel::Initializer childHandler;
  bool hasHandler = false;  // ServerBootstrap::handler was set: children pass the pipeline
  std::string address;      // for error messages
  std::string unixPath;     // a Unix socket's path (removed once every acceptor closed), or ""
  std::atomic<std::size_t> openAcceptors{0};
  // Set once, when openAcceptors reaches 0; the listeners waiting for it (ServerChannel::
  // addCloseListener), run then.
  std::mutex closedMutex;
  bool closed = false;
  std::vector<std::function<void()>> closeListeners;

  /// Starts an accepted channel on its own loop with the child handler.
  void startChild(std::shared_ptr<SocketChannel> ch);
  /// The last acceptor closed (on its loop): the path goes, and the server's loop fires
  /// channelInactive and runs the close listeners.
  void allClosed(const std::shared_ptr<Shared>& self);
  /// Marks the server closed and runs the close listeners (once).
  void runCloseListeners();
};

struct ServerChannel::State : std::enable_shared_from_this<ServerChannel::State> {
  using Acceptor = boost::asio::basic_socket_acceptor<boost::asio::generic::stream_protocol>;

  State(EventLoopGroup& g, EventLoop& l, std::shared_ptr<Shared> s)
      : group(&g), loop(&l), acceptor(l.context()), shared(std::move(s)) {
    ringAccept.state = this;
  }

  EventLoopGroup* group;
  EventLoop* loop;    // the acceptor's
  Acceptor acceptor;  // touched on loop only, once accepting has started
  std::shared_ptr<Shared> shared;
  bool ownLoopChildren = false;  // acceptor per loop: children stay on this loop
  // Loop thread only.
  bool accepting = false;          // an async_accept is pending
  bool paused = false;             // the server's autoRead is off
  bool closeDone = false;          // the acceptor was closed and counted out
  std::uint64_t shutdownHook = 0;  // on loop, while accepting
  std::atomic<std::size_t> accepted{0};
  std::atomic<bool> closed{false};
  std::mutex childrenMutex;  // children are registered from every loop
  std::vector<std::weak_ptr<SocketChannel>> children;

  void acceptNext();
  void onAccept(const boost::system::error_code& ec, SocketChannel::Socket socket,
                EventLoop& child);
  /// An accept failed (EMFILE and friends): reported, and tried again shortly, not in a spin.
  void acceptFailed(int err);
  /// A new connection's channel: to the server's pipeline or straight to its child handler.
  void acceptedChannel(std::shared_ptr<SocketChannel> ch);

  // The IoUring transport: one multishot accept on the acceptor's descriptor, armed while
  // accepting, cancelled when paused or closed.
  struct RingAccept final : detail::RingOp {
    State* state = nullptr;
    void complete(int res, unsigned flags) override { state->onRingAccept(res, flags); }
  };
  RingAccept ringAccept;
  void onRingAccept(int res, unsigned flags);
  /// An accept error or a failed child: to the server's pipeline (on the server's loop).
  void reportError(std::exception_ptr error);
  /// Closes the acceptor and counts it out (once). Loop thread, or once the loop has terminated.
  void closeOnLoop();
  /// closeOnLoop() on the loop. From a thread that is not one of the group's loops it waits for
  /// it (so that the caller knows accepting has stopped); from a loop thread it only hands it over
  /// (a loop must never wait for another).
  void closeFromAnyThread();
};

}  // namespace netbuf
