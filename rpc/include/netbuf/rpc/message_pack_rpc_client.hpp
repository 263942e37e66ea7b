#pragma once
// MessagePackRpcClient: a MessagePack-RPC client over one TCP connection (docs/rpc.md).
//
//     EventLoopGroup group(1);
//     MessagePackRpcClient client(group, "127.0.0.1", port);     // connects (blocking)
//     client.call("add", [](MessagePackWriter& w) { w.packArrayHeader(2).packInt(1).packInt(2); },
//                 [](RpcResult r) { if (r.ok()) use(r.value.asInt64()); });   // on the loop
//     RpcResult r = client.callSync("echo", doc.array({doc.str("hi")}));      // blocks
//     client.notify("log", ...);
//
// Pipelining: any number of calls may be outstanding; each gets the next msgid (uint32, wrapping
// 0xffffffff -> 0; Options::firstMsgid sets where it starts) and responses are matched by msgid,
// in whatever order they arrive. Requests are encoded on the calling thread; calls from other
// threads are queued and written by the loop in batches, calls on the loop are written at once
// and flushed once per loop turn.
//
// Results (RpcResult), always delivered exactly once to the callback, on the client's loop:
//   Ok              value = the result (a view into doc, which owns the received frame)
//   Error           value = the error value the server sent (any value, usually a str)
//   Timeout         no response within the call's timeout (default Options::callTimeout; zero
//                   disables); a response arriving later is ignored (counted: lateResponses())
//   ConnectionLost  the connection closed (peer, error, protocol error, close()) before the
//                   response: EVERY pending call fails so; calls made after that fail at once
// If the loop has shut down, the callback runs on the calling thread with ConnectionLost. If it
// stops while a call is still queued for it or pending (a shutdown whose timeout cut the wait
// drops queued tasks), the callback runs with ConnectionLost when the dropped task or the client's
// state is destroyed (when the group, or the client, goes away), on the destroying thread; such
// a late callback must not use the client. A callback must not throw (an exception is caught and
// reported on stderr).
// callSync blocks the calling thread (IllegalStateError on the client's loop thread: it would
// never see the response) until the result is there, or returns ConnectionLost once the loop has
// stopped for good (EventLoop::isTerminated; checked every 50 ms while waiting).
//
// Protocol errors (malformed MessagePack, a value that is not an RPC message, a request from the
// server) close the connection (pending calls: ConnectionLost, message naming the error).
// Notifications from the server are ignored (counted: notificationsReceived()).
//
// Lifetime and threading: every member function may be called from any thread. The destructor
// closes the connection; pending calls then complete with ConnectionLost on the loop (so
// callbacks may run after the client object is gone: they must not capture it by reference
// unless it outlives them). The EventLoopGroup must outlive the client.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_rpc.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <netbuf/codec/value.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace netbuf {

struct RpcResult {
  enum class Status : std::uint8_t { Ok, Error, Timeout, ConnectionLost };

  Status status = Status::ConnectionLost;
  std::uint32_t msgid = 0;
  /// Owns the response frame (Ok, Error); empty otherwise.
  Document doc;
  /// The result (Ok) or the error value (Error); Nil otherwise.
  Value value;
  /// Timeout / ConnectionLost: what happened; empty otherwise.
  std::string message;

  bool ok() const noexcept { return status == Status::Ok; }
  /// "Ok", "Error: <error value>", "Timeout: ...", "ConnectionLost: ..." (for logs and tests).
  std::string describe() const;
};

std::string_view rpcStatusName(RpcResult::Status status) noexcept;

using RpcCallback = std::function<void(RpcResult result)>;

namespace detail {
struct RpcClientState;
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

  /// Connects to host:port on one loop of group (blocking: not from a loop thread). Throws
  /// std::system_error when the connection cannot be made.
  MessagePackRpcClient(EventLoopGroup& group, const std::string& host, unsigned short port);
  MessagePackRpcClient(EventLoopGroup& group, const std::string& host, unsigned short port,
                       const Options& options);
  ~MessagePackRpcClient();
  MessagePackRpcClient(const MessagePackRpcClient&) = delete;
  MessagePackRpcClient& operator=(const MessagePackRpcClient&) = delete;

  /// Sends [0, msgid, method, params]; done(result) runs once on the loop. timeout: this call's
  /// (nullopt: Options::callTimeout; zero: none). params must be an Array (EncoderError, thrown
  /// here, before anything is sent). Returns the call's msgid (the result carries it too).
  std::uint32_t call(std::string_view method, const Value& params, RpcCallback done,
                     std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  /// params as a list: client.call("add", {Value::integer(1), Value::integer(2)}, done).
  std::uint32_t call(std::string_view method, std::initializer_list<Value> params, RpcCallback done,
                     std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    return call(method, listOf(params), std::move(done), timeout);
  }
  /// params written by fn (one array; nothing: []).
  template <RpcValueWriter F>
  std::uint32_t call(std::string_view method, F&& params, RpcCallback done,
                     std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    ByteBuf buf = newBuffer();
    const std::uint32_t id = nextMsgid();
    {
      MessagePackWriter w(buf);
      writeRpcRequest(w, id, method, params);
    }
    submit(id, std::move(buf), std::move(done), timeout);
    return id;
  }

  /// Blocks until the result is there (or the loop has stopped for good: ConnectionLost).
  /// IllegalStateError on the client's loop thread.
  RpcResult callSync(std::string_view method, const Value& params,
                     std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  RpcResult callSync(std::string_view method, std::initializer_list<Value> params,
                     std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    return callSync(method, listOf(params), timeout);
  }
  template <RpcValueWriter F>
  RpcResult callSync(std::string_view method, F&& params,
                     std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    SyncWaiter waiter = syncWaiter();
    const std::uint32_t id = call(method, std::forward<F>(params), waiter.callback, timeout);
    return waitFor(waiter, id);
  }

  /// Sends [2, method, params] (no response). Dropped silently when the connection is closed.
  void notify(std::string_view method, const Value& params);
  void notify(std::string_view method, std::initializer_list<Value> params) {
    notify(method, listOf(params));
  }
  template <RpcValueWriter F>
  void notify(std::string_view method, F&& params) {
    ByteBuf buf = newBuffer();
    {
      MessagePackWriter w(buf);
      writeRpcNotification(w, method, params);
    }
    submitNotification(std::move(buf));
  }

  /// Closes the connection (pending calls: ConnectionLost). Idempotent; any thread.
  void close();
  bool isConnected() const noexcept;
  /// Calls sent and not yet completed.
  std::size_t pendingCalls() const noexcept;
  /// Responses that matched no pending call (late after a timeout, or unknown msgids).
  std::uint64_t lateResponses() const noexcept;
  std::uint64_t notificationsReceived() const noexcept;
  EventLoop& eventLoop() noexcept;
  SocketChannel& channel() noexcept;

 private:
  struct SyncWaiter {
    struct Slot;
    std::shared_ptr<Slot> slot;
    RpcCallback callback;
  };
  static Value listOf(std::initializer_list<Value> params) {
    return Value::arrayView(std::span<const Value>(params.begin(), params.size()));
  }
  ByteBuf newBuffer();
  std::uint32_t nextMsgid() noexcept;
  void submit(std::uint32_t msgid, ByteBuf request, RpcCallback done,
              std::optional<std::chrono::milliseconds> timeout);
  void submitNotification(ByteBuf notification);
  SyncWaiter syncWaiter();
  RpcResult waitFor(SyncWaiter& waiter, std::uint32_t msgid);

  std::shared_ptr<detail::RpcClientState> state_;
};

}  // namespace netbuf
