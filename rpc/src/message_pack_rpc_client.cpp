#include <netbuf/rpc/message_pack_rpc_client.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <mutex>
#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_encoder.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <utility>
#include <vector>

#include "detail/deadline_heap.hpp"
#include "detail/pending_call_table.hpp"

namespace netbuf {

// ------------------------------------------------------------------ RpcErrc

namespace {

class RpcCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "netbuf.rpc"; }
  std::string message(int value) const override {
    switch (static_cast<RpcErrc>(value)) {
      case RpcErrc::errorResponse:
        return "the server answered the call with an error";
      case RpcErrc::timedOut:
        return "no response within the call's timeout";
      case RpcErrc::connectionLost:
        return "the connection closed before the response";
      case RpcErrc::msgidInUse:
        return "the call's msgid is still in use by a pending call";
    }
    return "unknown netbuf.rpc error";
  }
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<RpcErrc>(value)) {
      case RpcErrc::errorResponse:
        return std::errc::protocol_error;
      case RpcErrc::timedOut:
        return std::errc::timed_out;
      case RpcErrc::connectionLost:
        return std::errc::connection_aborted;
      case RpcErrc::msgidInUse:
        return std::errc::resource_unavailable_try_again;
    }
    return {value, *this};
  }
};

}  // namespace

const std::error_category& rpcCategory() noexcept {
  static const RpcCategory category;
  return category;
}

std::string RpcResult::describe(const ErrorCode& ec) const {
  if (!ec) return "Ok";
  if (ec == RpcErrc::errorResponse)
    return fmt::format("Error: {}", message.empty() ? value.toDebugString() : message);
  if (message.empty()) return ec.message();
  return fmt::format("{}: {}", ec.message(), message);
}

namespace detail {

namespace {

using Clock = std::chrono::steady_clock;

RpcResult failure(std::uint32_t msgid, std::string message) {
  RpcResult r;
  r.msgid = msgid;
  r.message = std::move(message);
  return r;
}

}  // namespace

struct RpcClientState : std::enable_shared_from_this<RpcClientState> {
  MessagePackRpcClient::Options options;
  ByteBufAllocator* alloc = nullptr;
  EventLoop* loop = nullptr;               // set with channel, before the client is handed out
  std::shared_ptr<SocketChannel> channel;  // set once connected, before any submission
  std::atomic<std::uint32_t> nextMsgid{0};
  std::atomic<std::size_t> pendingCount{0};
  std::atomic<std::uint64_t> late{0};
  std::atomic<std::uint64_t> notifications{0};
  std::atomic<bool> connected{false};

  // ---- loop thread only
  PendingCallTable pending;
  DeadlineHeap deadlines;
  ScheduledTask timer;
  Clock::time_point timerDue = Clock::time_point::max();
  bool open = true;
  bool flushScheduled = false;
  std::string closeReason;

  // ---- any thread, under mutex: submissions from other threads
  std::mutex mutex;
  std::vector<RpcSubmission> queue;
  std::vector<RpcSubmission> draining;  // the loop's swap partner: both keep their capacity
  bool drainScheduled = false;

  /// Calls still pending when the state goes away (its loop stopped before the connection closed,
  /// so nothing failed them) and submissions a dropped drain task left queued complete now, as a
  /// closed connection completes them; their handlers go to their executors (one that has stopped
  /// destroys them unrun).
  ~RpcClientState() {
    failTable("the event loop shut down before the response", true);
    for (RpcSubmission& s : queue) failSubmission(s, "the event loop dropped the call", true);
  }

  /// Hands a submission to the loop (any thread).
  void submit(RpcSubmission sub) {
    if (loop->inEventLoop()) {
      startOnLoop(sub);
      return;
    }
    {
      std::lock_guard<std::mutex> g(mutex);
      queue.push_back(std::move(sub));
      if (drainScheduled) return;
      drainScheduled = true;
    }
    try {
      loop->execute([self = shared_from_this()] { self->drain(); });
    } catch (const RejectedExecutionError&) {
      // The loop has shut down: fail what is queued here, on the calling thread.
      failQueued(ChannelErrc::rejected, "the event loop has shut down");
    } catch (...) {
      // The task could not be queued (out of memory): nothing would drain the queue.
      failQueued(RpcErrc::connectionLost, "the call could not be handed to the event loop");
    }
  }

  /// Fails every queued submission (any thread); its handlers are posted.
  void failQueued(ErrorCode ec, const std::string& why) {
    std::vector<RpcSubmission> subs;
    {
      std::lock_guard<std::mutex> g(mutex);
      subs.swap(queue);
      drainScheduled = false;
    }
    for (RpcSubmission& s : subs) {
      if (s.call != nullptr) {
        s.call->complete(ec, failure(s.call->msgid, why), true);
      } else if (s.written != nullptr) {
        s.written->operationComplete(ec);
      }
    }
  }

  void drain() {
    {
      std::lock_guard<std::mutex> g(mutex);
      draining.swap(queue);
      drainScheduled = false;
    }
    bool wrote = false;
    for (RpcSubmission& s : draining) wrote = registerCall(s, false) || wrote;
    draining.clear();
    if (wrote && open) channel->flush();
  }

  void startOnLoop(RpcSubmission& sub) {
    if (!registerCall(sub, true)) return;
    if (flushScheduled) return;
    flushScheduled = true;
    try {
      loop->execute([self = shared_from_this()] {
        self->flushScheduled = false;
        if (self->open) self->channel->flush();
      });
    } catch (const RejectedExecutionError&) {
      flushScheduled = false;
      channel->flush();
    }
  }

  void failSubmission(RpcSubmission& s, const std::string& why, bool inInitiation) {
    if (s.call != nullptr) {
      s.call->complete(RpcErrc::connectionLost, failure(s.call->msgid, why), inInitiation);
    } else if (s.written != nullptr) {
      s.written->operationComplete(ChannelErrc::closed);
    }
  }

  /// Records a call as pending and writes its request (unflushed); false when nothing was
  /// written. inInitiation: on the loop, inside call() (a completion now is posted).
  bool registerCall(RpcSubmission& s, bool inInitiation) {
    if (!open) {
      failSubmission(s, closeReason.empty() ? "connection closed" : closeReason, inInitiation);
      return false;
    }
    if (RpcPendingCall* call = s.call) {
      if (!pending.insert(call)) [[unlikely]] {
        // 2^32 calls later and the old one still pending: refuse the new one.
        call->complete(
            RpcErrc::msgidInUse,
            failure(call->msgid,
                    fmt::format("msgid {} is still in use by a pending call", call->msgid)),
            inInitiation);
        return false;
      }
      pendingCount.fetch_add(1, std::memory_order_relaxed);
      const std::chrono::milliseconds t = s.timeout.value_or(options.callTimeout);
      // A timeout of 0 or less means none; one too large for the clock is none as well (adding
      // it to now() would overflow).
      const Clock::time_point now = Clock::now();
      if (t.count() > 0 && t <= std::chrono::duration_cast<std::chrono::milliseconds>(
                                    Clock::time_point::max() - now)) {
        call->deadline = now + t;
        deadlines.push(call);
        armTimer();
      }
      channel->write(std::move(s.request));
    } else {
      channel->write(std::move(s.request), s.written);
    }
    return true;
  }

  /// Takes a pending call out of the table and the heap (loop thread).
  void forget(RpcPendingCall* call) {
    pending.erase(call->msgid);
    if (call->heapIndex != SIZE_MAX) deadlines.erase(call);
    pendingCount.fetch_sub(1, std::memory_order_relaxed);
  }

  void armTimer() {
    if (deadlines.empty()) return;
    const Clock::time_point due = deadlines.top()->deadline;
    if (timerDue <= due) return;  // armed for an earlier (or the same) deadline
    timer.cancel();
    timerDue = due;
    std::weak_ptr<RpcClientState> weak = weak_from_this();
    try {
      timer = loop->schedule(due - Clock::now(), [weak] {
        if (auto s = weak.lock()) s->onTimer();
      });
    } catch (const RejectedExecutionError&) {
      timerDue = Clock::time_point::max();
    }
  }

  void onTimer() {
    timerDue = Clock::time_point::max();
    const Clock::time_point now = Clock::now();
    while (!deadlines.empty() && deadlines.top()->deadline <= now) {
      RpcPendingCall* call = deadlines.top();
      forget(call);
      call->complete(RpcErrc::timedOut,
                     failure(call->msgid, "no response within the call's timeout"), false);
    }
    armTimer();
  }

  void cancel(std::uint32_t msgid, const RpcPendingCall* expected) {
    RpcPendingCall* call = pending.find(msgid);
    if (call == nullptr || call != expected) return;  // completed meanwhile
    forget(call);
    call->complete(boost::asio::error::operation_aborted, failure(msgid, "the call was cancelled"),
                   false);
  }

  void complete(RpcMessage m) {
    RpcPendingCall* call = pending.find(m.msgid());
    if (call == nullptr) {
      late.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    forget(call);
    RpcResult r;
    r.msgid = m.msgid();
    ErrorCode ec;
    if (m.isError()) {
      ec = RpcErrc::errorResponse;
      r.value = m.error();
    } else {
      r.value = m.result();
    }
    r.doc = m.takeDocument();  // the values stay valid: the Document's memory does not move
    call->complete(ec, std::move(r), false);
  }

  /// Completes every pending call with connectionLost.
  void failTable(const std::string& why, bool post) {
    deadlines.clear();
    // Taken out first, in one sweep: a handler run inline may call again (and fail at once).
    std::vector<RpcPendingCall*> calls = pending.takeAll();
    pendingCount.fetch_sub(calls.size(), std::memory_order_relaxed);
    for (RpcPendingCall* call : calls) {
      call->heapIndex = SIZE_MAX;
      call->complete(RpcErrc::connectionLost, failure(call->msgid, why), post);
    }
  }

  void failAll(const std::string& why) {
    open = false;
    connected.store(false, std::memory_order_release);
    if (closeReason.empty()) closeReason = why;
    timer.cancel();
    timerDue = Clock::time_point::max();
    failTable(closeReason, false);
  }
};

void submitRpc(const std::shared_ptr<RpcClientState>& state, RpcSubmission sub) {
  state->submit(std::move(sub));
}

EventLoop& rpcLoop(const RpcClientState& state) noexcept { return *state.loop; }

void cancelRpc(const std::weak_ptr<RpcClientState>& weak, std::uint32_t msgid,
               const RpcPendingCall* call) {
  auto state = weak.lock();
  if (state == nullptr) return;
  // Always a later loop task: completing here would clear the cancellation slot from inside its
  // own handler.
  try {
    state->loop->execute([state, msgid, call] { state->cancel(msgid, call); });
  } catch (const RejectedExecutionError&) {
  }
}

/// The client's pipeline handler: Documents in, responses matched to pending calls.
class RpcClientHandler final : public ChannelHandler {
 public:
  explicit RpcClientHandler(std::weak_ptr<RpcClientState> state) : state_(std::move(state)) {}

  void channelActive(ChannelHandlerContext& ctx) override {
    if (auto s = state_.lock()) s->connected.store(true, std::memory_order_release);
    ctx.fireChannelActive();
  }

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if (!msg.is<Document>()) return ctx.fireChannelRead(std::move(msg));
    auto s = state_.lock();
    if (!s || !s->open) return;
    std::optional<RpcMessage> m;
    try {
      m.emplace(RpcMessage::parse(msg.take<Document>()));
    } catch (const MessagePackRpcError& e) {
      return protocolError(ctx, *s, e.what());
    }
    switch (m->type()) {
      case RpcMessageType::Response:
        s->complete(std::move(*m));
        break;
      case RpcMessageType::Notification:
        s->notifications.fetch_add(1, std::memory_order_relaxed);
        break;
      case RpcMessageType::Request:
        protocolError(
            ctx, *s,
            fmt::format("the server sent a Request ({}); this client serves none", m->method()));
        break;
    }
  }

  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override {
    auto s = state_.lock();
    std::string what = "unknown error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    if (s) return protocolError(ctx, *s, what);
    ctx.close();
  }

  void channelInactive(ChannelHandlerContext& ctx) override {
    if (auto s = state_.lock()) s->failAll("connection closed");
    ctx.fireChannelInactive();
  }

  MessageTypes inboundIn() const noexcept override { return typesOf<Document>(); }

 private:
  static void protocolError(ChannelHandlerContext& ctx, RpcClientState& s,
                            const std::string& what) {
    if (s.closeReason.empty()) s.closeReason = fmt::format("protocol error: {}", what);
    s.open = false;
    ctx.close();
  }

  std::weak_ptr<RpcClientState> state_;
};

std::shared_ptr<RpcClientState> makeRpcClientState(const MessagePackRpcClient::Options& options) {
  auto state = std::make_shared<RpcClientState>();
  state->options = options;
  state->alloc = options.channel.allocator != nullptr ? options.channel.allocator
                                                      : &ByteBufAllocator::defaultAllocator();
  state->nextMsgid.store(options.firstMsgid, std::memory_order_relaxed);
  return state;
}

SocketChannel::Initializer rpcClientInitializer(const std::shared_ptr<RpcClientState>& state,
                                                const MessagePackReadOptions& read) {
  std::weak_ptr<RpcClientState> weak = state;
  return [weak, read](SocketChannel& c) {
    c.pipeline()
        .addLast("msgpack-decoder",
                 std::make_unique<DecoderChannelHandler<MessagePackDecoder>>(read))
        .addLast("msgpack-encoder", std::make_unique<EncoderChannelHandler<MessagePackEncoder>>())
        .addLast("rpc", std::make_unique<RpcClientHandler>(weak));
  };
}

void attachRpcChannel(const std::shared_ptr<RpcClientState>& state,
                      std::shared_ptr<SocketChannel> channel) {
  state->loop = &channel->eventLoop();
  state->channel = std::move(channel);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------

MessagePackRpcClient& MessagePackRpcClient::operator=(MessagePackRpcClient&& other) noexcept {
  if (this != &other) {
    close();
    state_ = std::move(other.state_);
  }
  return *this;
}

MessagePackRpcClient::~MessagePackRpcClient() { close(); }

void MessagePackRpcClient::close() {
  if (state_ == nullptr) return;
  auto closeOnLoop = [s = state_] {
    if (s->open) s->channel->close();
    s->failAll("client closed");
  };
  if (state_->loop->inEventLoop()) {
    closeOnLoop();
    return;
  }
  try {
    state_->loop->execute(std::move(closeOnLoop));
  } catch (const RejectedExecutionError&) {
    // The loop has shut down: its channels are closed and their calls failed already.
  }
}

const std::shared_ptr<detail::RpcClientState>& MessagePackRpcClient::checkedState() const {
  if (state_ == nullptr)
    throw IllegalStateError(
        "MessagePackRpcClient: not connected (default-constructed or moved from)");
  return state_;
}

bool MessagePackRpcClient::isConnected() const noexcept {
  return state_ != nullptr && state_->connected.load(std::memory_order_acquire);
}
std::size_t MessagePackRpcClient::pendingCalls() const noexcept {
  return state_ == nullptr ? 0 : state_->pendingCount.load(std::memory_order_relaxed);
}
std::uint64_t MessagePackRpcClient::lateResponses() const noexcept {
  return state_ == nullptr ? 0 : state_->late.load(std::memory_order_relaxed);
}
std::uint64_t MessagePackRpcClient::notificationsReceived() const noexcept {
  return state_ == nullptr ? 0 : state_->notifications.load(std::memory_order_relaxed);
}
EventLoop& MessagePackRpcClient::eventLoop() { return *checkedState()->loop; }
SocketChannel& MessagePackRpcClient::channel() { return *checkedState()->channel; }

ByteBuf MessagePackRpcClient::newBuffer() const { return checkedState()->alloc->buffer(128); }

std::uint32_t MessagePackRpcClient::nextMsgid() const noexcept {
  return state_->nextMsgid.fetch_add(1, std::memory_order_relaxed);  // wraps modulo 2^32
}

MessagePackRpcClient::Encoded MessagePackRpcClient::encodeCall(std::string_view method,
                                                               const Value& params) const {
  ByteBuf buf = newBuffer();
  const std::uint32_t id = nextMsgid();
  {
    MessagePackWriter w(buf);
    writeRpcRequest(w, id, method, params);
  }
  return {id, std::move(buf)};
}

ByteBuf MessagePackRpcClient::encodeNotify(std::string_view method, const Value& params) const {
  ByteBuf buf = newBuffer();
  {
    MessagePackWriter w(buf);
    writeRpcNotification(w, method, params);
  }
  return buf;
}

}  // namespace netbuf
