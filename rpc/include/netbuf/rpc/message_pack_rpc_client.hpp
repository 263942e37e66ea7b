#pragma once
// MessagePackRpcClient: a MessagePack-RPC client over one TCP connection (docs/rpc.md). Every
// operation is an Asio initiating function: a callback, asio::use_awaitable, use_future, deferred
// or any other completion token works with it.
//
//     EventLoopGroup group(1);
//     auto client = co_await MessagePackRpcClient::connect(group, "127.0.0.1", port,
//                                                          asio::use_awaitable);
//     RpcResult r = co_await client.call("add", {Value::integer(1), Value::integer(2)},
//                                        asio::use_awaitable);             // r.value.asInt64()
//     client.call("echo", [](MessagePackWriter& w) { w.packArrayHeader(1).packStr("hi"); },
//                 [](ErrorCode ec, RpcResult r) { ... });                   // a callback
//     RpcResult r = client.call("add", params, asio::use_future).get();    // blocking
//
// Pipelining: any number of calls may be outstanding; each gets the next msgid (uint32, wrapping
// 0xffffffff -> 0; Options::firstMsgid sets where it starts) and responses are matched by msgid,
// in whatever order they arrive. Requests are encoded on the calling thread when call() is made;
// calls from other threads are queued and written by the loop in batches, calls on the loop are
// written at once and flushed once per loop turn.
//
// Completion: call() completes once with void(ErrorCode, RpcResult):
//   success                   the response's result: r.value (a view into r.doc, which owns the
//                             received frame)
//   RpcErrc::errorResponse    the server answered with an error: r.value is the error value it
//                             sent (any value, usually a str), r.doc owns it
//   RpcErrc::timedOut         no response within the call's timeout (Options::callTimeout, or the
//                             call's own; zero: none); a response arriving later is ignored
//                             (counted: lateResponses())
//   RpcErrc::connectionLost   the connection closed (peer, error, protocol error, close()) before
//                             the response: every pending call fails so, and calls made after
//                             that fail at once; r.message says why
//   RpcErrc::msgidInUse       2^32 calls later, the msgid of a call still pending came round
//   asio::error::operation_aborted   cancelled through the handler's cancellation slot (for
//                             example a parallel group or an awaitable operator): the call stops
//                             waiting; its response, if one comes, is ignored (counted late)
//   ChannelErrc::rejected     the client's loop has shut down (seen by a handler with an executor
//                             of its own; one bound to the stopped loop is destroyed unrun)
// With use_awaitable or use_future an error is thrown as boost::system::system_error; to see
// r.value of an errorResponse there, use asio::as_tuple or asio::redirect_error.
// The handler runs on its associated executor, by default the client's loop, never inside
// call(). A handler on a loop that has stopped is destroyed unrun (as an io_context's are).
//
// notify() sends [2, method, params] and completes with void(ErrorCode) once the notification's
// bytes are handed to the socket (ChannelErrc::closed when the connection is gone).
//
// Protocol errors (malformed MessagePack, a value that is not an RPC message, a request from the
// server) close the connection (pending calls: connectionLost, message naming the error).
// Notifications from the server are ignored (counted: notificationsReceived()).
//
// Cost: a call allocates its request buffer from the pool and its state with the completion
// handler's allocator (Asio's recycling allocator unless the handler has its own): after warm-up
// no malloc per call. Pending calls are found by msgid in an open-addressed table and time out
// through a binary heap of deadlines, both reused.
//
// Lifetime and threading: every member function may be called from any thread. A client is
// movable; a default-constructed (or moved-from) client is not connected (its operations throw
// IllegalStateError). The destructor closes the connection; pending calls then complete with
// connectionLost on the loop (so handlers may run after the client object is gone: they must not
// capture it by reference unless it outlives them). The EventLoopGroup must outlive the client.

#include <atomic>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_rpc.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <netbuf/codec/value.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/detail/async_op.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace netbuf {

/// Why a call failed (category "netbuf.rpc"); each also compares equal to the closest portable
/// condition: errorResponse -> std::errc::protocol_error, timedOut -> std::errc::timed_out,
/// connectionLost -> std::errc::connection_aborted, msgidInUse ->
/// std::errc::resource_unavailable_try_again.
enum class RpcErrc : int {
  errorResponse = 1,
  timedOut,
  connectionLost,
  msgidInUse,
};

const std::error_category& rpcCategory() noexcept;

inline std::error_code make_error_code(RpcErrc e) noexcept {
  return {static_cast<int>(e), rpcCategory()};
}

}  // namespace netbuf

template <>
struct std::is_error_code_enum<netbuf::RpcErrc> : std::true_type {};

namespace netbuf {

/// What a call completes with, beside its ErrorCode (see the header comment).
struct RpcResult {
  std::uint32_t msgid = 0;
  /// Owns the response frame (success, errorResponse); empty otherwise.
  Document doc;
  /// The result (success) or the error value (errorResponse); Nil otherwise.
  Value value;
  /// Any other failure: what happened (why the connection was lost...); empty otherwise.
  std::string message;

  /// "Ok", "Error: <error value>", or "<ec's message>: <message>" (for logs and tests).
  std::string describe(const ErrorCode& ec) const;
};

class MessagePackRpcClient;

namespace detail {
struct RpcClientState;

/// A call waiting for its response (the operation's state; rpc client source has the table and
/// heap that hold it).
class RpcPendingCall {
 public:
  /// Completes the call once and frees it; post: inside the initiating call.
  virtual void complete(ErrorCode ec, RpcResult result, bool post) noexcept = 0;

  std::uint32_t msgid = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::size_t heapIndex = SIZE_MAX;  // position in the deadline heap, SIZE_MAX: not in it

 protected:
  ~RpcPendingCall() = default;
};

/// A call or a notification handed to the client's state (rpc client source).
struct RpcSubmission {
  ByteBuf request;
  RpcPendingCall* call = nullptr;    // nullptr: a notification
  WriteListener* written = nullptr;  // a notification's completion, or nullptr
  std::optional<std::chrono::milliseconds> timeout;
};

/// Hands a submission to the state's loop (any thread). When the call completes at once (the
/// connection is gone, the loop refused it), it completes with post = true.
void submitRpc(const std::shared_ptr<RpcClientState>& state, RpcSubmission sub);
/// The loop the state's connection is on (the completions' default executor).
EventLoop& rpcLoop(const RpcClientState& state) noexcept;
/// A cancellation of a pending call (any thread: a loop task).
void cancelRpc(const std::weak_ptr<RpcClientState>& state, std::uint32_t msgid,
               const RpcPendingCall* call);

template <class Handler>
class RpcCallOp final : public RpcPendingCall {
 public:
  template <class H>
  RpcCallOp(H&& handler, const EventLoopExecutor& ex) : completion_(std::forward<H>(handler), ex) {}
  Handler& handler() noexcept { return completion_.handler(); }

  void complete(ErrorCode ec, RpcResult result, bool post) noexcept override {
    finishOp(this, completion_, post, ec, std::move(result));
  }

 private:
  HandlerCompletion<Handler, EventLoopExecutor> completion_;
};

/// Cancels a pending call by msgid and identity, on the client's loop. It may run after the call
/// completed (the slot keeps it, as Asio's own operations leave theirs): it only compares `call`,
/// never dereferences it.
struct RpcCallCanceller {
  RpcCallCanceller(std::weak_ptr<RpcClientState> s, std::uint32_t id, const RpcPendingCall* c)
      : state(std::move(s)), msgid(id), call(c) {}
  std::weak_ptr<RpcClientState> state;
  std::uint32_t msgid;
  const RpcPendingCall* call;
  void operator()(boost::asio::cancellation_type_t type) const {
    // The request may have been sent (a side effect): total cancellation is not honoured.
    if (cancelsWithSideEffects(type)) cancelRpc(state, msgid, call);
  }
};

/// A notification's completion: the WriteListener of its write.
template <class Handler>
class RpcNotifyOp final : public WriteListener {
 public:
  template <class H>
  RpcNotifyOp(H&& handler, const EventLoopExecutor& ex)
      : completion_(std::forward<H>(handler), ex) {}
  bool post = false;  // completed inside the initiating call: post the handler
  void operationComplete(std::error_code ec) noexcept override {
    finishOp(this, completion_, post, ErrorCode(ec));
  }

 private:
  HandlerCompletion<Handler, EventLoopExecutor> completion_;
};

}  // namespace detail

class MessagePackRpcClient {
 public:
  struct Options {
    /// Default per-call timeout; zero: calls never time out.
    std::chrono::milliseconds callTimeout{30000};
    std::chrono::milliseconds connectTimeout{10000};
    /// The msgid of the first call (tests of the wrap-around start near 0xffffffff).
    std::uint32_t firstMsgid = 0;
    ChannelOptions channel;
    MessagePackReadOptions read;
  };

  /// Connects to host:port on the next loop of group; completes with
  /// void(ErrorCode, MessagePackRpcClient): the connected client, or the connect's error
  /// (Bootstrap::connect's: connection_refused, timed_out after Options::connectTimeout,
  /// operation_aborted when cancelled...) and a client that is not connected. The handler runs on
  /// its associated executor, by default the connection's loop.
  template <class Token>
  static auto connect(EventLoopGroup& group, std::string host, unsigned short port,
                      const Options& options, Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode, MessagePackRpcClient)>(
        InitiateConnect{&group, options}, token, std::move(host), port);
  }
  template <class Token>
  static auto connect(EventLoopGroup& group, std::string host, unsigned short port, Token&& token) {
    return connect(group, std::move(host), port, Options{}, std::forward<Token>(token));
  }

  /// A client that is not connected.
  MessagePackRpcClient() noexcept = default;
  MessagePackRpcClient(MessagePackRpcClient&&) noexcept = default;
  MessagePackRpcClient& operator=(MessagePackRpcClient&& other) noexcept;
  ~MessagePackRpcClient();
  MessagePackRpcClient(const MessagePackRpcClient&) = delete;
  MessagePackRpcClient& operator=(const MessagePackRpcClient&) = delete;

  /// Sends [0, msgid, method, params] and completes as the header comment says. params must be
  /// an Array (EncoderError, thrown here, before anything is sent).
  template <class Token>
  auto call(std::string_view method, const Value& params, Token&& token) {
    return startCall(encodeCall(method, params), std::nullopt, std::forward<Token>(token));
  }
  /// With this call's timeout (zero: none) instead of Options::callTimeout.
  template <class Token>
  auto call(std::string_view method, const Value& params, std::chrono::milliseconds timeout,
            Token&& token) {
    return startCall(encodeCall(method, params), timeout, std::forward<Token>(token));
  }
  /// params as a list: client.call("add", {Value::integer(1), Value::integer(2)}, token).
  template <class Token>
  auto call(std::string_view method, std::initializer_list<Value> params, Token&& token) {
    return startCall(encodeCall(method, listOf(params)), std::nullopt, std::forward<Token>(token));
  }
  template <class Token>
  auto call(std::string_view method, std::initializer_list<Value> params,
            std::chrono::milliseconds timeout, Token&& token) {
    return startCall(encodeCall(method, listOf(params)), timeout, std::forward<Token>(token));
  }
  /// params written by fn (one array; nothing: []).
  template <RpcValueWriter F, class Token>
  auto call(std::string_view method, F&& params, Token&& token) {
    return startCall(encodeCall(method, std::forward<F>(params)), std::nullopt,
                     std::forward<Token>(token));
  }
  template <RpcValueWriter F, class Token>
  auto call(std::string_view method, F&& params, std::chrono::milliseconds timeout, Token&& token) {
    return startCall(encodeCall(method, std::forward<F>(params)), timeout,
                     std::forward<Token>(token));
  }

  /// Sends [2, method, params] (no response); completes with void(ErrorCode) once its bytes are
  /// handed to the socket (ChannelErrc::closed when the connection is gone).
  template <class Token>
  auto notify(std::string_view method, const Value& params, Token&& token) {
    return startNotify(encodeNotify(method, params), std::forward<Token>(token));
  }
  template <class Token>
  auto notify(std::string_view method, std::initializer_list<Value> params, Token&& token) {
    return startNotify(encodeNotify(method, listOf(params)), std::forward<Token>(token));
  }
  template <RpcValueWriter F, class Token>
  auto notify(std::string_view method, F&& params, Token&& token) {
    return startNotify(encodeNotify(method, std::forward<F>(params)), std::forward<Token>(token));
  }

  /// Closes the connection (pending calls: connectionLost). Idempotent; any thread.
  void close();
  bool isConnected() const noexcept;
  /// Calls sent and not yet completed.
  std::size_t pendingCalls() const noexcept;
  /// Responses that matched no pending call (late after a timeout or a cancellation, or unknown
  /// msgids).
  std::uint64_t lateResponses() const noexcept;
  std::uint64_t notificationsReceived() const noexcept;
  EventLoop& eventLoop();
  SocketChannel& channel();

 private:
  struct Encoded {
    std::uint32_t msgid;
    ByteBuf request;
  };

  struct InitiateConnect {
    EventLoopGroup* group;
    Options options;
    template <class Handler>
    void operator()(Handler&& handler, std::string host, unsigned short port) const;
  };

  struct InitiateCall {
    std::shared_ptr<detail::RpcClientState> state;
    template <class Handler>
    void operator()(Handler&& handler, Encoded encoded,
                    std::optional<std::chrono::milliseconds> timeout) const {
      using Op = detail::RpcCallOp<std::decay_t<Handler>>;
      auto alloc = detail::handlerAllocator(handler);
      Op* op = detail::allocateOp<Op>(alloc, std::forward<Handler>(handler),
                                      detail::rpcLoop(*state).get_executor());
      detail::OpGuard<Op, decltype(alloc)> guard(op, alloc);
      op->msgid = encoded.msgid;
      // Installed before the call is handed over: a cancellation posts to the loop, where it
      // finds the call pending or not.
      detail::installCanceller<detail::RpcCallCanceller>(
          op->handler(), std::weak_ptr<detail::RpcClientState>(state), encoded.msgid, op);
      detail::submitRpc(state, {std::move(encoded.request), guard.release(), nullptr, timeout});
    }
  };

  struct InitiateNotify {
    std::shared_ptr<detail::RpcClientState> state;
    template <class Handler>
    void operator()(Handler&& handler, ByteBuf request) const {
      using Op = detail::RpcNotifyOp<std::decay_t<Handler>>;
      auto alloc = detail::handlerAllocator(handler);
      Op* op = detail::allocateOp<Op>(alloc, std::forward<Handler>(handler),
                                      detail::rpcLoop(*state).get_executor());
      // The write completes on the loop, after this call handed it over (or inside it): post.
      op->post = true;
      detail::submitRpc(state, {std::move(request), nullptr, op, std::nullopt});
    }
  };

  explicit MessagePackRpcClient(std::shared_ptr<detail::RpcClientState> state) noexcept
      : state_(std::move(state)) {}

  static Value listOf(std::initializer_list<Value> params) {
    return Value::arrayView(std::span<const Value>(params.begin(), params.size()));
  }
  const std::shared_ptr<detail::RpcClientState>& checkedState() const;
  ByteBuf newBuffer() const;
  std::uint32_t nextMsgid() const noexcept;

  Encoded encodeCall(std::string_view method, const Value& params) const;
  template <RpcValueWriter F>
  Encoded encodeCall(std::string_view method, F&& params) const {
    ByteBuf buf = newBuffer();
    const std::uint32_t id = nextMsgid();
    {
      MessagePackWriter w(buf);
      writeRpcRequest(w, id, method, params);
    }
    return {id, std::move(buf)};
  }
  ByteBuf encodeNotify(std::string_view method, const Value& params) const;
  template <RpcValueWriter F>
  ByteBuf encodeNotify(std::string_view method, F&& params) const {
    ByteBuf buf = newBuffer();
    {
      MessagePackWriter w(buf);
      writeRpcNotification(w, method, params);
    }
    return buf;
  }

  template <class Token>
  auto startCall(Encoded encoded, std::optional<std::chrono::milliseconds> timeout, Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode, RpcResult)>(
        InitiateCall{state_}, token, std::move(encoded), timeout);
  }
  template <class Token>
  auto startNotify(ByteBuf request, Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(InitiateNotify{state_}, token,
                                                               std::move(request));
  }

  /// The connection's state, shared with its loop's tasks and handlers; null: not connected.
  std::shared_ptr<detail::RpcClientState> state_;
};

namespace detail {
/// A new client state for group's loop `loop` (its connection is attached by attachRpcChannel).
std::shared_ptr<RpcClientState> makeRpcClientState(const MessagePackRpcClient::Options& options);
/// The channel initializer of a client connection (decoder, encoder, the client's handler).
SocketChannel::Initializer rpcClientInitializer(const std::shared_ptr<RpcClientState>& state,
                                                const MessagePackReadOptions& read);
/// Records the connected channel in the state (on the channel's loop, from the connect).
void attachRpcChannel(const std::shared_ptr<RpcClientState>& state,
                      std::shared_ptr<SocketChannel> channel);
}  // namespace detail

template <class Handler>
void MessagePackRpcClient::InitiateConnect::operator()(Handler&& handler, std::string host,
                                                       unsigned short port) const {
  std::shared_ptr<detail::RpcClientState> state = detail::makeRpcClientState(options);
  detail::ConnectConfig config;
  config.group = group;
  config.options = options.channel;
  config.handler = detail::rpcClientInitializer(state, options.read);
  config.timeout = options.connectTimeout;
  EventLoop& loop = group->next();
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  detail::SharedCompletion<std::decay_t<Handler>, EventLoopExecutor> completion(
      std::forward<Handler>(handler), loop.get_executor());
  detail::ConnectDone done = [completion, state](ErrorCode ec, std::shared_ptr<SocketChannel> ch,
                                                 bool onCaller) {
    MessagePackRpcClient client;
    if (!ec) {
      detail::attachRpcChannel(state, std::move(ch));
      client = MessagePackRpcClient(state);
    }
    if (onCaller)
      completion.post(ec, std::move(client));
    else
      completion.dispatch(ec, std::move(client));
  };
  auto attempt = detail::makeTcpConnect(config, loop, std::move(host), port, std::move(done));
  if (slot.is_connected())
    slot.template emplace<detail::InitiateConnect<false>::Canceller>(
        detail::InitiateConnect<false>::Canceller{attempt});
  attempt->start();
}

}  // namespace netbuf
