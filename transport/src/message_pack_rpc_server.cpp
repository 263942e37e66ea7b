#include <netbuf/transport/message_pack_rpc_server.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <mutex>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace netbuf {
namespace detail {

namespace {
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};
}  // namespace

struct RpcMethodEntry {
  MessagePackRpcServer::Method sync;
  MessagePackRpcServer::AsyncMethod async;
  std::optional<std::uint32_t> arity;
};

struct RpcServerState {
  MessagePackRpcServer::Options options;
  std::unordered_map<std::string, RpcMethodEntry, StringHash, std::equal_to<>> methods;
  MessagePackRpcServer::ProtocolErrorHandler onProtocolError;
  std::atomic<bool> frozen{false};
  std::atomic<std::uint64_t> connections{0}, requests{0}, notifications{0}, errorResponses{0},
      unknownMethods{0}, unknownNotifications{0}, droppedCalls{0}, protocolErrors{0};

  static void bump(std::atomic<std::uint64_t>& c) noexcept {
    c.fetch_add(1, std::memory_order_relaxed);
  }
};

/// What an RpcCall holds: the connection's side that replies go through. Created by the handler
/// (on the channel's thread); the handler detaches it when it leaves the pipeline.
struct RpcConnection : std::enable_shared_from_this<RpcConnection> {
  RpcConnection(std::shared_ptr<RpcServerState> s, ChannelHandlerContext& c)
      : state(std::move(s)),
        executor(&c.channel().executor()),
        alloc(&c.alloc()),
        loopThread(std::this_thread::get_id()),
        ctx(&c) {}

  const std::shared_ptr<RpcServerState> state;
  ChannelExecutor* const executor;  // outlives the channel for socket channels (its EventLoop)
  ByteBufAllocator* const alloc;
  const std::thread::id loopThread;

  // ---- channel thread only
  ChannelHandlerContext* ctx;  // null once detached
  bool open = true;            // false after channelInactive / a protocol error
  bool inRead = false;         // inside channelRead..channelReadComplete: flushed there
  bool flushScheduled = false;
  bool pendingFlush = false;

  // ---- any thread, under mutex
  std::mutex mutex;
  bool attached = true;  // false once the handler left the pipeline: replies are dropped
  bool drainScheduled = false;
  std::vector<ByteBuf> queue;  // replies completed on other threads, oldest first

  bool onLoop() const noexcept { return std::this_thread::get_id() == loopThread; }

  /// Writes a complete response (any thread).
  void send(ByteBuf buf) {
    if (onLoop()) {
      writeOnLoop(std::move(buf));
      return;
    }
    std::lock_guard<std::mutex> g(mutex);
    if (!attached) return;  // the connection is gone: nobody to answer
    queue.push_back(std::move(buf));
    if (drainScheduled) return;
    drainScheduled = true;
    try {
      executor->execute([self = shared_from_this()] { self->drain(); });
    } catch (const RejectedExecutionError&) {
      queue.clear();  // the loop has shut down: the channel is closed
      drainScheduled = false;
    }
  }

  void writeOnLoop(ByteBuf buf) {
    if (ctx == nullptr || !open) return;
    ctx->write(std::move(buf));
    pendingFlush = true;
    if (inRead || flushScheduled) return;  // channelReadComplete or the scheduled task flushes
    flushScheduled = true;
    executor->execute([self = shared_from_this()] {
      self->flushScheduled = false;
      self->flushNow();
    });
  }

  void flushNow() {
    if (!pendingFlush) return;
    pendingFlush = false;
    if (ctx != nullptr && open) ctx->flush();
  }

  void drain() {
    std::vector<ByteBuf> bufs;
    {
      std::lock_guard<std::mutex> g(mutex);
      bufs.swap(queue);
      drainScheduled = false;
    }
    if (ctx == nullptr || !open) return;
    for (ByteBuf& b : bufs) ctx->write(std::move(b));
    if (!inRead)
      ctx->flush();
    else
      pendingFlush = true;
  }

  void detach() {
    ctx = nullptr;
    open = false;
    std::lock_guard<std::mutex> g(mutex);
    attached = false;
    queue.clear();
  }
};

// ---------------------------------------------------------------------------------------------

class RpcServerHandler final : public ChannelHandler {
 public:
  explicit RpcServerHandler(std::shared_ptr<RpcServerState> state) : state_(std::move(state)) {}

  void handlerAdded(ChannelHandlerContext& ctx) override {
    conn_ = std::make_shared<RpcConnection>(state_, ctx);
    RpcServerState::bump(state_->connections);
  }
  void handlerRemoved(ChannelHandlerContext&) override {
    if (conn_) conn_->detach();
  }

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if (!msg.is<Document>()) return ctx.fireChannelRead(std::move(msg));
    if (!conn_->open) return;  // closing after a protocol error: drop the rest
    conn_->inRead = true;
    std::optional<RpcMessage> parsed;
    try {
      parsed.emplace(RpcMessage::parse(msg.take<Document>()));
    } catch (const MessagePackRpcError&) {
      protocolError(ctx, std::current_exception());
      return;
    }
    RpcMessage& m = *parsed;
    switch (m.type()) {
      case RpcMessageType::Request:
        RpcServerState::bump(state_->requests);
        handleRequest(ctx, std::move(m));
        break;
      case RpcMessageType::Notification:
        RpcServerState::bump(state_->notifications);
        handleNotification(std::move(m));
        break;
      case RpcMessageType::Response:
        protocolError(ctx, std::make_exception_ptr(MessagePackRpcError(fmt::format(
                               "the server received a Response (msgid {})", m.msgid()))));
        break;
    }
  }

  void channelReadComplete(ChannelHandlerContext& ctx) override {
    conn_->inRead = false;
    if (batch_.isValid() && batch_.isReadable()) {
      ctx.write(std::move(batch_));
      conn_->pendingFlush = true;
    }
    batch_.reset();
    conn_->flushNow();
    ctx.fireChannelReadComplete();
  }

  void channelInactive(ChannelHandlerContext& ctx) override {
    conn_->open = false;
    batch_.reset();
    ctx.fireChannelInactive();
  }

  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override {
    protocolError(ctx, std::move(error));
  }

  MessageTypes inboundIn() const noexcept override { return typesOf<Document>(); }

 private:
  const RpcMethodEntry* find(std::string_view method) const {
    auto it = state_->methods.find(method);
    return it == state_->methods.end() ? nullptr : &it->second;
  }

  ByteBuf& batch(ChannelHandlerContext& ctx) {
    if (!batch_.isValid()) batch_ = ctx.alloc().buffer(512);
    return batch_;
  }

  void writeError(ChannelHandlerContext& ctx, std::uint32_t msgid, std::string_view text) {
    MessagePackWriter w(batch(ctx));
    writeRpcError(w, msgid, text);
    RpcServerState::bump(state_->errorResponses);
  }

  void handleRequest(ChannelHandlerContext& ctx, RpcMessage m) {
    const RpcMethodEntry* e = find(m.method());
    if (e == nullptr) {
      RpcServerState::bump(state_->unknownMethods);
      return writeError(ctx, m.msgid(), fmt::format("NoMethodError: {}", m.method()));
    }
    if (e->arity && *e->arity != m.params().size()) {
      return writeError(ctx, m.msgid(),
                        fmt::format("ArgumentError: {} takes {} params, got {}", m.method(),
                                    *e->arity, m.params().size()));
    }
    if (e->async) {
      // An exception from the method destroys the call it was given, which then answers
      // NoReplyError: nothing else to do (and the connection stays open).
      try {
        e->async(RpcCall(conn_, std::move(m)));
      } catch (...) {  // whatever was thrown (not only std::exception)
      }
      return;
    }
    runSync(ctx, *e, m);
  }

  void runSync(ChannelHandlerContext& ctx, const RpcMethodEntry& e, const RpcMessage& m) {
    ByteBuf& out = batch(ctx);
    const std::size_t start = out.writerIndex();
    try {
      {
        MessagePackWriter w(out);
        writeRpcResultHead(w, m.msgid());
        const std::size_t before = w.bytesWritten();
        e.sync(m.params(), w);
        if (w.bytesWritten() == before) w.packNil();
        checkOneValue(out, start + before, m.method());
      }
      return;
    } catch (const RpcError& err) {
      out.writerIndex(start);
      MessagePackWriter w(out);
      writeRpcError(w, m.msgid(), err);
    } catch (const std::exception& err) {
      out.writerIndex(start);
      MessagePackWriter w(out);
      writeRpcError(w, m.msgid(), internalError(err.what()));
    } catch (...) {  // a method may throw anything: still an InternalError answer, not a close
      out.writerIndex(start);
      MessagePackWriter w(out);
      writeRpcError(w, m.msgid(), internalError("a method threw a non-std::exception"));
    }
    RpcServerState::bump(state_->errorResponses);
  }

  /// The result must be exactly one MessagePack value: bytes [resultStart, writerIndex).
  static void checkOneValue(const ByteBuf& out, std::size_t resultStart, std::string_view method) {
    const auto bytes = out.readableSpan().subspan(resultStart - out.readerIndex());
    // A structural check only: the server's own read limits are for untrusted input, not for
    // what its methods write (an echo of a large blob is legitimate).
    MessagePackReadOptions unlimited;
    unlimited.limits.maxContainerLength = SIZE_MAX;
    unlimited.limits.maxStrLength = unlimited.limits.maxBinLength = SIZE_MAX;
    unlimited.limits.maxExtLength = unlimited.limits.maxMessageSize = SIZE_MAX;
    unlimited.limits.maxDepth = 65536;  // skip() is iterative: depth costs heap, not stack
    MessagePackReader r(bytes, unlimited);
    try {
      r.skip();
    } catch (const MessagePackError& e) {
      throw std::runtime_error(
          fmt::format("{} wrote an invalid result ({})", method, std::string(e.what())));
    }
    if (!r.atEnd())
      throw std::runtime_error(fmt::format("{} wrote more than one result value", method));
  }

  static std::string internalError(std::string_view what) {
    std::string s = fmt::format("InternalError: {}", what);
    // The text goes out as a MessagePack str: keep it valid UTF-8 whatever the exception said.
    for (char& c : s) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
    return s;
  }

  void handleNotification(RpcMessage m) {
    const RpcMethodEntry* e = find(m.method());
    if (e == nullptr || (e->arity && *e->arity != m.params().size())) {
      RpcServerState::bump(state_->unknownNotifications);
      return;
    }
    if (e->async) {
      try {
        e->async(RpcCall(conn_, std::move(m)));
      } catch (...) {
        // A notification has nobody to tell.
      }
      return;
    }
    ByteBuf scratch = conn_->alloc->buffer(64);
    MessagePackWriter w(scratch);
    try {
      e->sync(m.params(), w);
    } catch (...) {
      // A notification has nobody to tell.
    }
  }

  void protocolError(ChannelHandlerContext& ctx, std::exception_ptr error) {
    if (!conn_->open) return;
    conn_->open = false;
    RpcServerState::bump(state_->protocolErrors);
    batch_.reset();  // answer nothing
    if (state_->onProtocolError) {
      try {
        state_->onProtocolError(ctx.channel(), error);
      } catch (...) {
      }
    }
    ctx.close();
  }

  std::shared_ptr<RpcServerState> state_;
  std::shared_ptr<RpcConnection> conn_;
  ByteBuf batch_;  // sync responses of the current read batch
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// RpcCall

RpcCall::RpcCall(std::shared_ptr<detail::RpcConnection> conn, RpcMessage msg)
    : conn_(std::move(conn)), msg_(std::make_unique<RpcMessage>(std::move(msg))) {}

RpcCall::RpcCall(RpcCall&& other) noexcept
    : conn_(std::move(other.conn_)),
      msg_(std::move(other.msg_)),
      completed_(std::exchange(other.completed_, true)) {}

RpcCall& RpcCall::operator=(RpcCall&& other) noexcept {
  if (this != &other) {
    this->~RpcCall();
    new (this) RpcCall(std::move(other));
  }
  return *this;
}

RpcCall::~RpcCall() {
  if (completed_ || !conn_ || !msg_ || isNotification()) return;
  detail::RpcServerState::bump(conn_->state->droppedCalls);
  try {
    replyError(fmt::format("NoReplyError: {} dropped its call without replying", method()));
  } catch (...) {
    // Destructors must not throw; the client's timeout is the last resort.
  }
}

bool RpcCall::isNotification() const noexcept {
  return msg_ && msg_->type() == RpcMessageType::Notification;
}

ChannelExecutor& RpcCall::executor() const noexcept { return *conn_->executor; }

ByteBuf RpcCall::beginReply() {
  if (completed_ || !conn_ || !msg_) {
    throw IllegalStateError(
        msg_ ? fmt::format("RpcCall {} (msgid {}) was already completed", method(), msgid())
             : std::string("RpcCall was moved from"));
  }
  return conn_->alloc->buffer(64);
}

void RpcCall::finishReply(ByteBuf buf) {
  completed_ = true;
  if (isNotification()) return;
  conn_->send(std::move(buf));
}

void RpcCall::reply(const Value& result) {
  ByteBuf buf = beginReply();
  {
    MessagePackWriter w(buf);
    writeRpcResult(w, msgid(), result);
  }
  finishReply(std::move(buf));
}

void RpcCall::replyError(const Value& error) {
  ByteBuf buf = beginReply();
  {
    MessagePackWriter w(buf);
    writeRpcError(w, msgid(), error);
  }
  detail::RpcServerState::bump(conn_->state->errorResponses);
  finishReply(std::move(buf));
}

void RpcCall::replyError(std::string_view message) {
  ByteBuf buf = beginReply();
  {
    MessagePackWriter w(buf);
    writeRpcError(w, msgid(), message);
  }
  detail::RpcServerState::bump(conn_->state->errorResponses);
  finishReply(std::move(buf));
}

void RpcCall::replyError(const RpcError& error) {
  ByteBuf buf = beginReply();
  {
    MessagePackWriter w(buf);
    writeRpcError(w, msgid(), error);
  }
  detail::RpcServerState::bump(conn_->state->errorResponses);
  finishReply(std::move(buf));
}

// ---------------------------------------------------------------------------------------------
// MessagePackRpcServer

MessagePackRpcServer::MessagePackRpcServer() : MessagePackRpcServer(Options{}) {}

MessagePackRpcServer::MessagePackRpcServer(const Options& options)
    : state_(std::make_shared<detail::RpcServerState>()) {
  state_->options = options;
}

MessagePackRpcServer::~MessagePackRpcServer() = default;

namespace {
void checkMutable(const detail::RpcServerState& s) {
  if (s.frozen.load(std::memory_order_acquire))
    throw IllegalStateError(
        "MessagePackRpcServer: methods must be registered before the first handler is made");
}
}  // namespace

MessagePackRpcServer& MessagePackRpcServer::method(std::string name, Method fn,
                                                   std::optional<std::uint32_t> arity) {
  checkMutable(*state_);
  if (!fn) throw IllegalArgumentError(fmt::format("method '{}': empty function", name));
  state_->methods[std::move(name)] = detail::RpcMethodEntry{std::move(fn), {}, arity};
  return *this;
}

MessagePackRpcServer& MessagePackRpcServer::asyncMethod(std::string name, AsyncMethod fn,
                                                        std::optional<std::uint32_t> arity) {
  checkMutable(*state_);
  if (!fn) throw IllegalArgumentError(fmt::format("method '{}': empty function", name));
  state_->methods[std::move(name)] = detail::RpcMethodEntry{{}, std::move(fn), arity};
  return *this;
}

MessagePackRpcServer& MessagePackRpcServer::onProtocolError(ProtocolErrorHandler fn) {
  checkMutable(*state_);
  state_->onProtocolError = std::move(fn);
  return *this;
}

std::unique_ptr<ChannelHandler> MessagePackRpcServer::newHandler() {
  state_->frozen.store(true, std::memory_order_release);
  return std::make_unique<detail::RpcServerHandler>(state_);
}

namespace {
void installWith(const std::shared_ptr<detail::RpcServerState>& state, ChannelPipeline& pipeline) {
  state->frozen.store(true, std::memory_order_release);
  pipeline
      .addLast("msgpack-decoder",
               std::make_unique<DecoderChannelHandler<MessagePackDecoder>>(state->options.read))
      .addLast("msgpack-encoder", std::make_unique<EncoderChannelHandler<MessagePackEncoder>>())
      .addLast("rpc", std::make_unique<detail::RpcServerHandler>(state));
}
}  // namespace

void MessagePackRpcServer::install(ChannelPipeline& pipeline) { installWith(state_, pipeline); }

std::unique_ptr<ServerChannel> MessagePackRpcServer::bind(EventLoopGroup& group,
                                                          const std::string& host,
                                                          unsigned short port,
                                                          const ChannelOptions& options) {
  state_->frozen.store(true, std::memory_order_release);  // before any loop reads the registry
  return ServerBootstrap()
      .group(group)
      .childOptions(options)
      .childInitializer([state = state_](SocketChannel& ch) { installWith(state, ch.pipeline()); })
      .bind(host, port);
}

RpcServerStats MessagePackRpcServer::stats() const noexcept {
  const auto& s = *state_;
  const auto r = [](const std::atomic<std::uint64_t>& c) {
    return c.load(std::memory_order_relaxed);
  };
  return RpcServerStats{r(s.connections),    r(s.requests),       r(s.notifications),
                        r(s.errorResponses), r(s.unknownMethods), r(s.unknownNotifications),
                        r(s.droppedCalls),   r(s.protocolErrors)};
}

}  // namespace netbuf
