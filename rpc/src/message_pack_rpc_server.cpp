#include <netbuf/rpc/message_pack_rpc_server.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
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

namespace {
/// bytes must be exactly one MessagePack value (what a method wrote as its result or error);
/// throws std::runtime_error naming the method otherwise.
void checkOneValue(std::span<const std::byte> bytes, std::string_view method) {
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

std::string internalError(std::string_view what) {
  std::string s = fmt::format("InternalError: {}", what);
  // The text goes out as a MessagePack str: keep it valid UTF-8 whatever the exception said.
  for (char& c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) c = '?';
  }
  return s;
}
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
  ChannelHandlerContext* ctx;           // null once detached
  RpcServerHandler* handler = nullptr;  // null once detached
  bool open = true;                     // false after channelInactive / a protocol error
  bool inRead = false;  // inside channelRead..channelReadComplete (or a resume): flushed there
  bool flushScheduled = false;
  bool pendingFlush = false;
  std::size_t callsInFlight = 0;  // async calls started and not yet seen completed here

  // ---- any thread, under mutex
  std::mutex mutex;
  bool attached = true;  // false once the handler left the pipeline: replies are dropped
  bool drainScheduled = false;
  std::vector<ByteBuf> queue;        // replies completed on other threads, oldest first
  std::size_t completedOffLoop = 0;  // calls completed on other threads since the last drain

  bool onLoop() const noexcept { return std::this_thread::get_id() == loopThread; }

  /// An async call was completed (any thread): buf is its response, or an invalid ByteBuf for a
  /// notification (nothing to send). The call stops counting against maxConcurrentCalls once the
  /// loop has seen it complete.
  void complete(ByteBuf buf) {
    if (onLoop()) {
      callDone(1);  // first: counted even if the write below throws
      if (buf.isValid()) writeOnLoop(std::move(buf));
      return;
    }
    std::lock_guard<std::mutex> g(mutex);
    if (!attached) return;  // the connection is gone: nobody to answer
    if (buf.isValid()) queue.push_back(std::move(buf));
    ++completedOffLoop;
    if (drainScheduled) return;
    drainScheduled = true;
    try {
      executor->execute([self = shared_from_this()] { self->drain(); });
    } catch (const RejectedExecutionError&) {
      queue.clear();  // the loop has shut down: the channel is closed
      drainScheduled = false;
    } catch (...) {
      // Out of memory: the reply stays queued and the next completion schedules the drain; if
      // this was the connection's last call it waits there (and holds its slot) until then.
      drainScheduled = false;
      throw;
    }
  }

  /// Loop thread: n calls completed; may let a paused handler go on (defined after the handler).
  void callDone(std::size_t n);

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
    std::size_t completed = 0;
    {
      std::lock_guard<std::mutex> g(mutex);
      bufs.swap(queue);
      completed = std::exchange(completedOffLoop, 0);
      drainScheduled = false;
    }
    callDone(completed);
    if (ctx == nullptr || !open) return;
    for (ByteBuf& b : bufs) ctx->write(std::move(b));
    if (!inRead)
      ctx->flush();
    else
      pendingFlush = true;
  }

  void detach() {
    ctx = nullptr;
    handler = nullptr;
    open = false;
    std::lock_guard<std::mutex> g(mutex);
    attached = false;
    queue.clear();
  }
};

// ---------------------------------------------------------------------------------------------

// Backpressure. A peer that sends requests without reading the responses must not make the
// server buffer without bound, so requests are processed only while the "gate" is open: the
// channel is writable (its queued bytes are under the high water mark) and fewer than
// maxConcurrentCalls async calls are in flight. Requests that arrive while it is closed (the rest
// of the current read's batch, and at most the read already in progress) wait in deferred_, in
// order, and autoRead is turned off so no more are read. They are processed when the gate opens
// again (channelWritabilityChanged, or an async call completing), and reading resumes once none
// is left. Sync responses are written out of batch_ whenever it passes kBatchWriteThreshold, so
// the channel's writability reflects them in the middle of a batch.
class RpcServerHandler final : public ChannelHandler {
 public:
  static constexpr std::size_t kBatchWriteThreshold = 16 * 1024;

  explicit RpcServerHandler(std::shared_ptr<RpcServerState> state) : state_(std::move(state)) {}

  void handlerAdded(ChannelHandlerContext& ctx) override {
    conn_ = std::make_shared<RpcConnection>(state_, ctx);
    conn_->handler = this;
    RpcServerState::bump(state_->connections);
  }
  void handlerRemoved(ChannelHandlerContext& ctx) override {
    // Removed from a live channel while paused: give reading back (nothing else would), after
    // detaching, so that a throwing read start cannot leave calls pointing at this handler.
    const bool restore = paused_ && ctx.channel().isOpen();
    paused_ = false;
    deferred_.clear();
    // (Safe from every removal path: the pipeline keeps removed contexts alive while one is
    // open, its own teardown included.)
    if (conn_) {
      try {
        sendWaiting(ctx);
      } catch (...) {  // as below: nobody to report to
      }
      conn_->detach();
    }
    if (restore) {
      try {
        ctx.channel().setAutoRead(autoReadBeforePause_);
      } catch (...) {  // nothing to report to: the handler is leaving the pipeline
      }
    }
  }

  /// Loop thread: an async call completed; a handler paused at the call limit goes on later (not
  /// from inside the reply, which may itself run inside a method call).
  void onCallDone() {
    if (!paused_ || resumeScheduled_) return;
    resumeScheduled_ = true;
    try {
      conn_->executor->execute([conn = conn_] {
        if (conn->handler == nullptr || conn->ctx == nullptr) return;
        // Not inside a pipeline event: a method that removes this handler meanwhile must not
        // destroy it under processDeferred, so the scope keeps it until the task ends.
        ChannelPipeline::EventScope scope(conn->ctx->pipeline());
        RpcServerHandler& h = *conn->handler;
        h.resumeScheduled_ = false;
        try {
          h.processDeferred(*conn->ctx);
        } catch (...) {  // no pipeline around this task to report it: close like a read would
          // (unless a method removed the handler meanwhile: then there is nobody to close for)
          if (conn->handler == &h && conn->ctx != nullptr)
            h.protocolError(*conn->ctx, std::current_exception());
        }
      });
    } catch (const RejectedExecutionError&) {
      resumeScheduled_ = false;  // the loop has shut down: the channel is closing
    } catch (...) {
      // Could not schedule the resume (out of memory): close rather than stay paused for good.
      resumeScheduled_ = false;
      if (conn_->ctx != nullptr) protocolError(*conn_->ctx, std::current_exception());
    }
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
    if (m.type() == RpcMessageType::Response) {
      return protocolError(ctx, std::make_exception_ptr(MessagePackRpcError(fmt::format(
                                    "the server received a Response (msgid {})", m.msgid()))));
    }
    if (!deferred_.empty() || !gateOpen(ctx)) {
      deferred_.push_back(std::move(m));
      pause(ctx);
      // Off again if another handler turned reading on meanwhile: what waits stays bounded.
      if (ctx.channel().isAutoRead()) ctx.channel().setAutoRead(false);
      return;
    }
    dispatch(ctx, std::move(m));
    if (removedByMethod(ctx)) return;
    writeBatchIfLarge(ctx);
  }

  void channelReadComplete(ChannelHandlerContext& ctx) override {
    conn_->inRead = false;
    writeBatch(ctx);
    conn_->flushNow();
    ctx.fireChannelReadComplete();
  }

  void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
    if (ctx.channel().isWritable()) processDeferred(ctx);
    ctx.fireChannelWritabilityChanged();
  }

  void channelInactive(ChannelHandlerContext& ctx) override {
    conn_->open = false;
    batch_.reset();
    deferred_.clear();
    ctx.fireChannelInactive();
  }

  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override {
    protocolError(ctx, std::move(error));
  }

  MessageTypes inboundIn() const noexcept override { return typesOf<Document>(); }

 private:
  bool gateOpen(ChannelHandlerContext& ctx) const noexcept {
    return ctx.channel().isWritable() && conn_->callsInFlight < state_->options.maxConcurrentCalls;
  }

  void pause(ChannelHandlerContext& ctx) {
    if (paused_) return;
    paused_ = true;
    autoReadBeforePause_ = ctx.channel().isAutoRead();
    ctx.channel().setAutoRead(false);
  }

  /// Processes deferred requests while the gate is open; resumes reading when none is left.
  void processDeferred(ChannelHandlerContext& ctx) {
    if (processing_ || !paused_) return;
    const bool wasInRead = conn_->inRead;
    // Whatever a dispatch throws (it is reported by the caller), the flags go back.
    struct Restore {
      RpcServerHandler& h;
      bool inRead;
      ~Restore() {
        h.processing_ = false;
        h.conn_->inRead = inRead;
      }
    } restore{*this, wasInRead};
    // Loops again when the channel became writable while the last pass flushed (a writability
    // event arriving during a pass is ignored there: processing_ is set).
    do {
      processing_ = true;
      conn_->inRead = true;  // replies made meanwhile are flushed below, once
      while (!deferred_.empty() && conn_->open && gateOpen(ctx)) {
        RpcMessage m = std::move(deferred_.front());
        deferred_.pop_front();
        dispatch(ctx, std::move(m));
        if (removedByMethod(ctx)) return;
        writeBatchIfLarge(ctx);
      }
      conn_->inRead = wasInRead;
      if (!wasInRead) {
        writeBatch(ctx);
        conn_->flushNow();
      }
      processing_ = false;
    } while (!deferred_.empty() && conn_->open && gateOpen(ctx));
    if (deferred_.empty() && conn_->open) {
      paused_ = false;
      ctx.channel().setAutoRead(autoReadBeforePause_);
    }
  }

  /// True when the method just run removed this handler from the pipeline (its context stays
  /// usable until the event or resume task ends): its response, written into the batch after
  /// the removal, is sent now, since no readComplete reaches this handler any more; requests
  /// still waiting were dropped with the handler.
  bool removedByMethod(ChannelHandlerContext& ctx) {
    if (conn_->handler == this) return false;
    sendWaiting(ctx);
    return true;
  }

  /// On removal, when no later readComplete or flush task will reach this handler: the batched
  /// responses (unless a method is running: then the batch holds its response half written, and
  /// removedByMethod sends it when the method returns) and whatever was written but not flushed
  /// go out through ctx now.
  void sendWaiting(ChannelHandlerContext& ctx) {
    if (!ctx.channel().isOpen()) return;
    if (!dispatching_) writeBatch(ctx);
    if (conn_->pendingFlush) {
      conn_->pendingFlush = false;
      ctx.flush();
    }
  }

  void dispatch(ChannelHandlerContext& ctx, RpcMessage m) {
    // While a method runs, the batch may hold its response half written.
    struct Dispatching {
      bool& flag;
      bool before;
      explicit Dispatching(bool& f) : flag(f), before(std::exchange(f, true)) {}
      ~Dispatching() { flag = before; }
    } dispatching{dispatching_};
    if (m.type() == RpcMessageType::Request) {
      RpcServerState::bump(state_->requests);
      handleRequest(ctx, std::move(m));
    } else {
      RpcServerState::bump(state_->notifications);
      handleNotification(std::move(m));
    }
  }

  void writeBatch(ChannelHandlerContext& ctx) {
    if (batch_.isValid() && batch_.isReadable()) {
      ctx.write(std::move(batch_));
      conn_->pendingFlush = true;
    }
    batch_.reset();
  }
  void writeBatchIfLarge(ChannelHandlerContext& ctx) {
    if (batch_.isValid() && batch_.readableBytes() >= kBatchWriteThreshold) writeBatch(ctx);
  }

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
        checkOneValue(out.readableSpan().subspan(start + before - out.readerIndex()), m.method());
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
  ByteBuf batch_;                    // sync responses not yet written to the channel
  std::deque<RpcMessage> deferred_;  // requests received while the gate was closed, in order
  bool paused_ = false;              // deferred_ is (or was just) non-empty; autoRead is off
  bool autoReadBeforePause_ = true;  // what setAutoRead goes back to
  bool processing_ = false;          // inside processDeferred (no re-entry)
  bool dispatching_ = false;         // inside dispatch (a method may be running)
  bool resumeScheduled_ = false;
};

void RpcConnection::callDone(std::size_t n) {
  callsInFlight -= std::min(n, callsInFlight);
  if (handler != nullptr && n > 0) handler->onCallDone();
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// RpcCall

RpcCall::RpcCall(std::shared_ptr<detail::RpcConnection> conn, RpcMessage msg)
    : conn_(std::move(conn)), msg_(std::make_unique<RpcMessage>(std::move(msg))) {
  ++conn_->callsInFlight;  // made on the loop thread, by the handler
}

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
  if (completed_ || !conn_ || !msg_) return;
  if (!isNotification()) {
    detail::RpcServerState::bump(conn_->state->droppedCalls);
    try {
      replyError(fmt::format("NoReplyError: {} dropped its call without replying", method()));
      return;
    } catch (...) {
      // Destructors must not throw; the client's timeout is the last resort. The call still
      // stops counting against maxConcurrentCalls below.
    }
  }
  if (completed_) return;  // replyError got as far as handing the call over
  try {
    conn_->complete(ByteBuf());  // nothing (more) to answer, but no longer in flight
  } catch (...) {
  }
}

void RpcCall::throwMovedFrom() {
  throw IllegalStateError("RpcCall was moved from: it has no request any more");
}

bool RpcCall::isNotification() const noexcept {
  return msg_ && msg_->type() == RpcMessageType::Notification;
}

ChannelExecutor& RpcCall::executor() const {
  if (!conn_) throwMovedFrom();
  return *conn_->executor;
}

ByteBuf RpcCall::beginReply() {
  if (completed_ || !conn_ || !msg_) {
    throw IllegalStateError(
        msg_ ? fmt::format("RpcCall {} (msgid {}) was already completed", method(), msgid())
             : std::string("RpcCall was moved from"));
  }
  return conn_->alloc->buffer(64);
}

void RpcCall::finishReply(ByteBuf buf, bool isError) {
  completed_ = true;
  if (isNotification()) {
    buf.reset();  // discarded: nobody asked (and no error response is counted)
  } else if (isError) {
    detail::RpcServerState::bump(conn_->state->errorResponses);
  }
  conn_->complete(std::move(buf));
}

void RpcCall::finishWrittenReply(ByteBuf buf, std::size_t valueStart, bool isError) {
  const std::size_t end = buf.readableBytes() - (isError ? 1 : 0);  // an error ends with nil
  // An error of nil would read as success: refused like an empty one, the call left open.
  if (isError && end - valueStart == 1 && buf.readableSpan()[valueStart] == std::byte{0xc0})
      [[unlikely]]
    detail::throwRpcEmptyError();
  try {
    detail::checkOneValue(buf.readableSpan().subspan(valueStart, end - valueStart), method());
  } catch (const std::exception& e) {
    buf.clear();
    MessagePackWriter w(buf);
    writeRpcError(w, msgid(), detail::internalError(e.what()));
    isError = true;
  }
  finishReply(std::move(buf), isError);
}

template <class Write>
void RpcCall::replyWith(bool isError, Write&& write) {
  ByteBuf buf = beginReply();
  {
    MessagePackWriter w(buf);
    write(w);
  }
  finishReply(std::move(buf), isError);
}

void RpcCall::reply(const Value& result) {
  replyWith(false, [&](MessagePackWriter& w) { writeRpcResult(w, msgid(), result); });
}

void RpcCall::replyError(const Value& error) {
  replyWith(true, [&](MessagePackWriter& w) { writeRpcError(w, msgid(), error); });
}

void RpcCall::replyError(std::string_view message) {
  replyWith(true, [&](MessagePackWriter& w) { writeRpcError(w, msgid(), message); });
}

void RpcCall::replyError(const RpcError& error) {
  replyWith(true, [&](MessagePackWriter& w) { writeRpcError(w, msgid(), error); });
}

// ---------------------------------------------------------------------------------------------
// MessagePackRpcServer

MessagePackRpcServer::MessagePackRpcServer() : MessagePackRpcServer(Options{}) {}

MessagePackRpcServer::MessagePackRpcServer(const Options& options)
    : state_(std::make_shared<detail::RpcServerState>()) {
  if (options.maxConcurrentCalls == 0) {
    throw IllegalArgumentError("MessagePackRpcServer: maxConcurrentCalls must be at least 1");
  }
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

std::shared_ptr<ServerChannel> MessagePackRpcServer::bind(EventLoopGroup& group,
                                                          const std::string& host,
                                                          unsigned short port,
                                                          const ChannelOptions& options) {
  state_->frozen.store(true, std::memory_order_release);  // before any loop reads the registry
  return ServerBootstrap()
      .group(group)
      .childOptions(options)
      .childHandler([state = state_](SocketChannel& ch) { installWith(state, ch.pipeline()); })
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
