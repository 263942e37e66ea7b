#pragma once
// MessagePackRpcServer: a MessagePack-RPC server as a pipeline handler (docs/rpc.md).
//
//     MessagePackRpcServer rpc;
//     rpc.method("add", [](std::span<const Value> p, MessagePackWriter& result) {
//          result.packInt(p[0].asInt64() + p[1].asInt64());
//        }, 2)                                                   // arity 2
//        .asyncMethod("slow", [](RpcCall call) {                 // reply later, from any thread
//          std::thread([c = std::move(call)]() mutable { c.reply(Value::boolean(true));
//          }).detach();
//        });
//     EventLoopGroup group(4);
//     auto server = rpc.bind(group, "127.0.0.1", 0);            // or rpc.install(pipeline)
//
// Pipeline: install() adds "msgpack-decoder" (MessagePackDecoder: one Document per value),
// "msgpack-encoder" (MessagePackEncoder, so other handlers may write Documents) and "rpc" (this
// server's handler, which takes Documents and writes encoded ByteBufs).
//
// Methods (registered before the first handler is made; later registration is an
// IllegalStateError, so the registry is read without locks by every loop):
//  - synchronous: fn(params, resultWriter) writes ONE value as the result (nothing: nil) or
//    throws RpcError(value or message) -> error response with that value; any other
//    std::exception -> error "InternalError: <what>". A result of more than one value is caught
//    (the bytes are checked) and answered "InternalError: ..." instead of corrupting the stream.
//  - asynchronous: fn(RpcCall) gets a move-only call object and may complete it later, from any
//    thread: reply(...) / replyError(...) encode on the calling thread and hand the bytes to the
//    channel's loop (replies from other threads are queued and written in batches).
//  - arity: optional exact number of params; a request with another count is answered
//    "ArgumentError: <method> takes N params, got M" without calling the method.
// Error conventions (error values are str):
//    "NoMethodError: <method>"               no such method
//    "ArgumentError: <method> takes N params, got M"
//    "NoReplyError: <method> dropped its call without replying"   an RpcCall destroyed unanswered
//    "InternalError: <what>"                 a method threw something other than RpcError
//    RpcError's value                        a method threw RpcError
// Notifications run the method like requests but never get a response (results and errors are
// discarded; an async call's reply is a no-op). Notifications for unknown methods or with a wrong
// arity are counted (stats().unknownNotifications) and otherwise ignored.
// Responses may go out in another order than the requests came (async methods); clients match by
// msgid. Sync responses produced while reading are written into one buffer per read batch (written
// out every 16 KiB) and flushed at channelReadComplete; replies completed outside a read are
// flushed once per batch.
//
// Backpressure: a client that pipelines requests but does not read the responses cannot make the
// server buffer without bound. Requests are processed only while the channel is writable (its
// queued responses are under the write high water mark) and the connection has fewer than
// Options::maxConcurrentCalls async calls in flight; otherwise the server turns the channel's
// autoRead off and keeps what was already read (at most one read's worth) until the responses
// drain or calls complete, then goes on in order and reads again.
//
// Protocol errors: malformed MessagePack (the decoder's MessagePackError), a value that is not an
// RPC message (MessagePackRpcError), or a Response sent to the server: the connection is closed
// without answering anything (the msgid may not be known, and a peer that breaks framing cannot
// be trusted to parse more), counted in stats().protocolErrors and reported to onProtocolError's
// callback if one is set (nothing is logged otherwise).
//
// RpcCall: holds the request (its Document: params are views into the received frame) and a
// ref-counted handle on the connection (not the channel itself: a reply after the channel closed
// is dropped silently). Completing twice is an IllegalStateError; a call destroyed without being
// completed answers "NoReplyError: ..." so the client never hangs. A call may be completed and
// destroyed on any thread. executor() is the channel's executor (for schedule()).
//
// Threading: handlers run on their channel's loop; the server object and its stats may be used
// from any thread; it must outlive nothing (handlers share its registry), but the methods'
// captures must stay valid while channels run.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_encoder.hpp>
#include <netbuf/codec/msgpack/message_pack_rpc.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_executor.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace netbuf {

namespace detail {
struct RpcConnection;
struct RpcServerState;
class RpcServerHandler;
}  // namespace detail

/// An asynchronous call's completion handle (see the header comment). Move-only.
class RpcCall {
 public:
  RpcCall(RpcCall&& other) noexcept;
  RpcCall& operator=(RpcCall&& other) noexcept;
  RpcCall(const RpcCall&) = delete;
  RpcCall& operator=(const RpcCall&) = delete;
  /// Answers "NoReplyError: ..." when the call was not completed (requests only).
  ~RpcCall();

  // The request's parts. A moved-from call has none: IllegalStateError.
  std::uint32_t msgid() const { return message().msgid(); }
  std::string_view method() const { return message().method(); }
  std::span<const Value> params() const { return message().params(); }
  /// The received message (its Document owns what params() views).
  const RpcMessage& message() const {
    if (!msg_) throwMovedFrom();
    return *msg_;
  }
  bool isNotification() const noexcept;
  bool isCompleted() const noexcept { return completed_; }
  /// The channel's executor (an EventLoop for socket channels): schedule work on it from the loop
  /// thread. Valid as long as the channel's executor lives.
  ChannelExecutor& executor() const;

  /// [1, msgid, nil, result]. IllegalStateError when already completed.
  void reply(const Value& result);
  /// The result written by fn (one value; nothing: nil). If fn writes more than one value or an
  /// invalid one, the call is answered "InternalError: ..." instead (as for sync methods). If fn
  /// throws, the exception propagates and the call stays uncompleted.
  template <RpcValueWriter F>
  void reply(F&& fn) {
    ByteBuf buf = beginReply();
    std::size_t valueStart = 0;
    {
      MessagePackWriter w(buf);
      writeRpcResultHead(w, msgid());
      valueStart = w.bytesWritten();
      fn(w);
      if (w.bytesWritten() == valueStart) w.packNil();
    }
    finishWrittenReply(std::move(buf), valueStart, false);
  }
  /// [1, msgid, error, nil]; error must not be Nil.
  void replyError(const Value& error);
  /// The str message as the error.
  void replyError(std::string_view message);
  void replyError(const RpcError& error);
  /// The error value written by fn: exactly one value, not nil (EncoderError when fn writes
  /// nothing or only nil, and the call stays open; more than one value or an invalid one answers
  /// "InternalError: ..." instead).
  template <RpcValueWriter F>
  void replyError(F&& fn) {
    ByteBuf buf = beginReply();
    std::size_t valueStart = 0;
    {
      MessagePackWriter w(buf);
      writeRpcErrorHead(w, msgid());
      valueStart = w.bytesWritten();
      fn(w);
      if (w.bytesWritten() == valueStart) {
        detail::throwRpcEmptyError();
      }
      w.packNil();
    }
    finishWrittenReply(std::move(buf), valueStart, true);
  }

 private:
  friend class detail::RpcServerHandler;
  RpcCall(std::shared_ptr<detail::RpcConnection> conn, RpcMessage msg);
  [[noreturn]] static void throwMovedFrom();
  /// Checks the state and returns an empty buffer from the channel's allocator.
  ByteBuf beginReply();
  /// Marks the call completed and hands the bytes to the connection (dropped for notifications;
  /// an error response to a request is counted in stats().errorResponses).
  void finishReply(ByteBuf buf, bool isError);
  /// A reply whose message write(w) writes whole (defined and used in the .cpp only).
  template <class Write>
  void replyWith(bool isError, Write&& write);
  /// finishReply after checking that the bytes from valueStart (up to the final nil for an
  /// error) are exactly one value; otherwise answers an InternalError instead.
  void finishWrittenReply(ByteBuf buf, std::size_t valueStart, bool isError);

  std::shared_ptr<detail::RpcConnection> conn_;
  std::unique_ptr<RpcMessage> msg_;  // stable address: views stay valid when the call moves
  bool completed_ = false;
};

/// Counters of one server (all its connections), read with MessagePackRpcServer::stats().
struct RpcServerStats {
  std::uint64_t connections = 0;           ///< handlers created (connections served)
  std::uint64_t requests = 0;              ///< requests received
  std::uint64_t notifications = 0;         ///< notifications received
  std::uint64_t errorResponses = 0;        ///< error responses sent (every cause)
  std::uint64_t unknownMethods = 0;        ///< requests for unregistered methods
  std::uint64_t unknownNotifications = 0;  ///< notifications ignored (unknown method, arity)
  std::uint64_t droppedCalls = 0;          ///< RpcCalls destroyed without a reply
  std::uint64_t protocolErrors = 0;        ///< connections closed for a protocol error
};

class MessagePackRpcServer {
 public:
  using Method = std::function<void(std::span<const Value> params, MessagePackWriter& result)>;
  using AsyncMethod = std::function<void(RpcCall call)>;
  using ProtocolErrorHandler = std::function<void(Channel& channel, std::exception_ptr error)>;

  struct Options {
    /// Limits of the MessagePackDecoder that install() adds.
    MessagePackReadOptions read;
    /// Async calls (requests and notifications) one connection may have in flight (started and
    /// not yet completed). At the limit the server stops processing and reading that
    /// connection's requests until one completes (backpressure, not an error). 0 is an
    /// IllegalArgumentError.
    std::size_t maxConcurrentCalls = 1024;
  };

  MessagePackRpcServer();
  explicit MessagePackRpcServer(const Options& options);
  ~MessagePackRpcServer();
  MessagePackRpcServer(const MessagePackRpcServer&) = delete;
  MessagePackRpcServer& operator=(const MessagePackRpcServer&) = delete;

  /// Registers a synchronous method (replacing one of the same name). IllegalStateError once a
  /// handler has been made; IllegalArgumentError for an empty fn.
  MessagePackRpcServer& method(std::string name, Method fn,
                               std::optional<std::uint32_t> arity = std::nullopt);
  MessagePackRpcServer& asyncMethod(std::string name, AsyncMethod fn,
                                    std::optional<std::uint32_t> arity = std::nullopt);
  /// Called (on the channel's loop) before a connection is closed for a protocol error.
  MessagePackRpcServer& onProtocolError(ProtocolErrorHandler fn);

  /// A handler for one channel, taking Documents (put a MessagePackDecoder before it). Freezes
  /// the registry.
  std::unique_ptr<ChannelHandler> newHandler();
  /// Adds "msgpack-decoder", "msgpack-encoder" and "rpc" at the end of pipeline.
  void install(ChannelPipeline& pipeline);
  /// A ServerBootstrap on group whose channels are install()ed, bound to host:port (0: any free
  /// port). Throws std::system_error when the address cannot be bound.
  std::shared_ptr<ServerChannel> bind(EventLoopGroup& group, const std::string& host,
                                      unsigned short port, const ChannelOptions& options = {});

  RpcServerStats stats() const noexcept;

 private:
  std::shared_ptr<detail::RpcServerState> state_;
};

}  // namespace netbuf
