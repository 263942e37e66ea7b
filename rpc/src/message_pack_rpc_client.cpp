#include <netbuf/rpc/message_pack_rpc_client.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_encoder.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace netbuf {

std::string_view rpcStatusName(RpcResult::Status status) noexcept {
  switch (status) {
    case RpcResult::Status::Ok:
      return "Ok";
    case RpcResult::Status::Error:
      return "Error";
    case RpcResult::Status::Timeout:
      return "Timeout";
    case RpcResult::Status::ConnectionLost:
      return "ConnectionLost";
  }
  return "?";
}

std::string RpcResult::describe() const {
  switch (status) {
    case Status::Ok:
      return "Ok";
    case Status::Error:
      return fmt::format("Error: {}", message.empty() ? value.toDebugString() : message);
    default:
      return fmt::format("{}: {}", rpcStatusName(status), message);
  }
}

namespace detail {

namespace {
using Clock = std::chrono::steady_clock;

RpcResult failure(RpcResult::Status status, std::uint32_t msgid, std::string message) {
  RpcResult r;
  r.status = status;
  r.msgid = msgid;
  r.message = std::move(message);
  return r;
}

void deliver(RpcCallback& cb, RpcResult r) noexcept {
  try {
    cb(std::move(r));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netbuf rpc client: a call's callback threw: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "netbuf rpc client: a call's callback threw\n");
  }
}
/// Drop action of an UnlosableTask that runs the task itself.
struct RunOnDrop {};

/// A loop task that must not be lost. The loop calls it as usual; when the loop shuts down with
/// the task still queued (a shutdown whose timeout cut the wait), the task is destroyed without
/// running, and the destructor then calls `drop` instead (or the task itself, for RunOnDrop), on
/// the destroying thread. Exactly one of the two runs, once. That keeps the client's promise that
/// every call's callback runs exactly once.
template <class Fn, class Drop = RunOnDrop>
class UnlosableTask {
 public:
  UnlosableTask(Fn fn, Drop drop) : fn_(std::move(fn)), drop_(std::move(drop)) {}
  explicit UnlosableTask(Fn fn) : fn_(std::move(fn)) {}
  UnlosableTask(UnlosableTask&& o) noexcept
      : fn_(std::move(o.fn_)), drop_(std::move(o.drop_)), armed_(std::exchange(o.armed_, false)) {}
  UnlosableTask(const UnlosableTask&) = delete;
  UnlosableTask& operator=(const UnlosableTask&) = delete;
  UnlosableTask& operator=(UnlosableTask&&) = delete;
  ~UnlosableTask() {
    if (!armed_) return;
    if constexpr (std::is_same_v<Drop, RunOnDrop>)
      fn_();
    else
      drop_();
  }
  void operator()() {
    armed_ = false;
    fn_();
  }
  /// For a task the loop refused (still the caller's): its drop is handled there.
  void disarm() noexcept { armed_ = false; }

 private:
  Fn fn_;
  [[no_unique_address]] Drop drop_;  // empty for RunOnDrop
  bool armed_ = true;
};

}  // namespace

struct RpcClientState : std::enable_shared_from_this<RpcClientState> {
  MessagePackRpcClient::Options options;
  ByteBufAllocator* alloc = nullptr;
  EventLoop* loop = nullptr;
  std::shared_ptr<SocketChannel> channel;  // set once connected, before any submission
  std::atomic<std::uint32_t> nextMsgid{0};
  std::atomic<std::size_t> pendingCount{0};
  std::atomic<std::uint64_t> late{0};
  std::atomic<std::uint64_t> notifications{0};
  std::atomic<bool> connected{false};

  // ---- loop thread only
  struct Pending {
    RpcCallback cb;
    Clock::time_point deadline;  // max(): none
  };
  std::unordered_map<std::uint32_t, Pending> pending;
  std::set<std::pair<Clock::time_point, std::uint32_t>> deadlines;
  ScheduledTask timer;
  Clock::time_point timerDue = Clock::time_point::max();
  bool open = true;
  bool flushScheduled = false;
  std::string closeReason;

  // ---- any thread, under mutex: submissions from other threads
  struct Submission {
    std::uint32_t msgid;
    ByteBuf buf;
    RpcCallback cb;  // empty: a notification
    std::optional<std::chrono::milliseconds> timeout;
  };
  std::mutex mutex;
  std::vector<Submission> queue;
  bool drainScheduled = false;

  /// Hands a submission to the loop (any thread).
  void submit(Submission sub) {
    if (loop->inEventLoop()) {
      startOnLoop(std::move(sub));
      return;
    }
    {
      std::lock_guard<std::mutex> g(mutex);
      queue.push_back(std::move(sub));
      if (drainScheduled) return;
      drainScheduled = true;
    }
    // Scheduled outside the lock: a task destroyed on the way (the loop failing to allocate its
    // queue node) fails the queue from its destructor, which takes the lock.
    auto self = shared_from_this();
    UnlosableTask task(
        [self] { self->drain(); },
        [self] { self->failQueued("the event loop dropped the task sending the call"); });
    try {
      loop->execute(std::move(task));  // admission is checked before the task is moved from
    } catch (const RejectedExecutionError&) {
      // The loop has shut down: fail what is queued here, on the calling thread.
      task.disarm();
      failQueued("the event loop has shut down");
    }
  }

  /// Fails every queued submission with ConnectionLost (any thread).
  void failQueued(const std::string& why) {
    std::vector<Submission> subs;
    {
      std::lock_guard<std::mutex> g(mutex);
      subs.swap(queue);
      drainScheduled = false;
    }
    for (Submission& s : subs) {
      if (s.cb) deliver(s.cb, failure(RpcResult::Status::ConnectionLost, s.msgid, why));
    }
  }

  /// Pending calls left when the state goes away (its loop stopped before the connection closed,
  /// so nothing failed them) complete now, as a shutdown would have completed them.
  ~RpcClientState() {
    for (auto& [id, p] : pending)
      deliver(p.cb, failure(RpcResult::Status::ConnectionLost, id,
                            "the event loop shut down before the response"));
  }

  void drain() {
    std::vector<Submission> subs;
    {
      std::lock_guard<std::mutex> g(mutex);
      subs.swap(queue);
      drainScheduled = false;
    }
    bool wrote = false;
    for (Submission& s : subs) wrote = registerCall(s) || wrote;
    if (wrote && open) channel->flush();
  }

  void startOnLoop(Submission sub) {
    if (!registerCall(sub)) return;
    if (flushScheduled) return;
    flushScheduled = true;
    loop->execute([self = shared_from_this()] {
      self->flushScheduled = false;
      if (self->open) self->channel->flush();
    });
  }

  /// Completes a call from a later task of the loop (inline when the loop no longer runs tasks).
  void deliverLater(RpcCallback cb, RpcResult r) {
    // Run or dropped, the task delivers exactly once (dropped: on the destroying thread).
    UnlosableTask task(
        [cb = std::move(cb), r = std::move(r)]() mutable { deliver(cb, std::move(r)); });
    try {
      loop->execute(std::move(task));  // admission is checked before the task is moved from
    } catch (const RejectedExecutionError&) {
      task();
    }
  }

  /// Records a call as pending and writes it (unflushed); false when nothing was written.
  bool registerCall(Submission& s) {
    if (!open) {
      // Delivered from a later loop task, not from inside call(): a callback that calls again
      // on a lost connection (a load generator refilling its window) must not recurse.
      if (s.cb)
        deliverLater(std::move(s.cb),
                     failure(RpcResult::Status::ConnectionLost, s.msgid,
                             closeReason.empty() ? "connection closed" : closeReason));
      return false;
    }
    if (s.cb) {
      if (pending.contains(s.msgid)) [[unlikely]] {
        // 2^32 calls later and the old one still pending: refuse the new one (its callback is
        // still ours: checked before it is moved into the table).
        deliverLater(std::move(s.cb),
                     failure(RpcResult::Status::Error, s.msgid,
                             fmt::format("msgid {} is still in use by a pending call", s.msgid)));
        return false;
      }
      const std::chrono::milliseconds t = s.timeout.value_or(options.callTimeout);
      // A timeout of 0 or less means none; one too large for the clock is none as well (adding
      // it to now() would overflow).
      const Clock::time_point now = Clock::now();
      const Clock::time_point deadline =
          t.count() <= 0 || t > std::chrono::duration_cast<std::chrono::milliseconds>(
                                    Clock::time_point::max() - now)
              ? Clock::time_point::max()
              : now + t;
      pending.try_emplace(s.msgid, Pending{std::move(s.cb), deadline});
      pendingCount.fetch_add(1, std::memory_order_relaxed);
      if (deadline != Clock::time_point::max()) {
        deadlines.emplace(deadline, s.msgid);
        armTimer();
      }
    }
    channel->write(std::move(s.buf));
    return true;
  }

  void armTimer() {
    if (deadlines.empty()) return;
    const Clock::time_point due = deadlines.begin()->first;
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
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
      const std::uint32_t id = deadlines.begin()->second;
      deadlines.erase(deadlines.begin());
      auto it = pending.find(id);
      if (it == pending.end()) continue;
      RpcCallback cb = std::move(it->second.cb);
      pending.erase(it);
      pendingCount.fetch_sub(1, std::memory_order_relaxed);
      deliver(cb, failure(RpcResult::Status::Timeout, id, "no response within the call's timeout"));
    }
    armTimer();
  }

  void complete(RpcMessage m) {
    auto it = pending.find(m.msgid());
    if (it == pending.end()) {
      late.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    RpcCallback cb = std::move(it->second.cb);
    if (it->second.deadline != Clock::time_point::max())
      deadlines.erase({it->second.deadline, m.msgid()});
    pending.erase(it);
    pendingCount.fetch_sub(1, std::memory_order_relaxed);
    RpcResult r;
    r.msgid = m.msgid();
    if (m.isError()) {
      r.status = RpcResult::Status::Error;
      r.value = m.error();
    } else {
      r.status = RpcResult::Status::Ok;
      r.value = m.result();
    }
    r.doc = m.takeDocument();  // the values stay valid: the Document's memory does not move
    deliver(cb, std::move(r));
  }

  void failAll(const std::string& why) {
    open = false;
    connected.store(false, std::memory_order_release);
    if (closeReason.empty()) closeReason = why;
    timer.cancel();
    timerDue = Clock::time_point::max();
    deadlines.clear();
    auto calls = std::move(pending);
    pending.clear();
    pendingCount.fetch_sub(calls.size(), std::memory_order_relaxed);
    for (auto& [id, p] : calls)
      deliver(p.cb, failure(RpcResult::Status::ConnectionLost, id, closeReason));
  }
};

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

}  // namespace detail

// ---------------------------------------------------------------------------------------------

struct MessagePackRpcClient::SyncWaiter::Slot {
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<RpcResult> result;
};

MessagePackRpcClient::MessagePackRpcClient(EventLoopGroup& group, const std::string& host,
                                           unsigned short port)
    : MessagePackRpcClient(group, host, port, Options{}) {}

MessagePackRpcClient::MessagePackRpcClient(EventLoopGroup& group, const std::string& host,
                                           unsigned short port, const Options& options)
    : state_(std::make_shared<detail::RpcClientState>()) {
  state_->options = options;
  state_->alloc = options.channel.allocator != nullptr ? options.channel.allocator
                                                       : &ByteBufAllocator::defaultAllocator();
  state_->nextMsgid.store(options.firstMsgid, std::memory_order_relaxed);
  std::weak_ptr<detail::RpcClientState> weak = state_;
  const MessagePackReadOptions read = options.read;
  auto ch = Bootstrap()
                .group(group)
                .options(options.channel)
                .connectTimeout(options.connectTimeout)
                .handler([weak, read](SocketChannel& c) {
                  c.pipeline()
                      .addLast("msgpack-decoder",
                               std::make_unique<DecoderChannelHandler<MessagePackDecoder>>(read))
                      .addLast("msgpack-encoder",
                               std::make_unique<EncoderChannelHandler<MessagePackEncoder>>())
                      .addLast("rpc", std::make_unique<detail::RpcClientHandler>(weak));
                })
                .connect(host, port);
  state_->loop = &ch->eventLoop();
  state_->channel = std::move(ch);
}

MessagePackRpcClient::~MessagePackRpcClient() { close(); }

void MessagePackRpcClient::close() {
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

bool MessagePackRpcClient::isConnected() const noexcept {
  return state_->connected.load(std::memory_order_acquire);
}
std::size_t MessagePackRpcClient::pendingCalls() const noexcept {
  return state_->pendingCount.load(std::memory_order_relaxed);
}
std::uint64_t MessagePackRpcClient::lateResponses() const noexcept {
  return state_->late.load(std::memory_order_relaxed);
}
std::uint64_t MessagePackRpcClient::notificationsReceived() const noexcept {
  return state_->notifications.load(std::memory_order_relaxed);
}
EventLoop& MessagePackRpcClient::eventLoop() noexcept { return *state_->loop; }
SocketChannel& MessagePackRpcClient::channel() noexcept { return *state_->channel; }

ByteBuf MessagePackRpcClient::newBuffer() { return state_->alloc->buffer(128); }

std::uint32_t MessagePackRpcClient::nextMsgid() noexcept {
  return state_->nextMsgid.fetch_add(1, std::memory_order_relaxed);  // wraps modulo 2^32
}

void MessagePackRpcClient::submit(std::uint32_t msgid, ByteBuf request, RpcCallback done,
                                  std::optional<std::chrono::milliseconds> timeout) {
  if (!done) throw IllegalArgumentError("MessagePackRpcClient::call: empty callback");
  state_->submit({msgid, std::move(request), std::move(done), timeout});
}

void MessagePackRpcClient::submitNotification(ByteBuf notification) {
  state_->submit({0, std::move(notification), {}, std::nullopt});
}

std::uint32_t MessagePackRpcClient::call(std::string_view method, const Value& params,
                                         RpcCallback done,
                                         std::optional<std::chrono::milliseconds> timeout) {
  ByteBuf buf = newBuffer();
  const std::uint32_t id = nextMsgid();
  {
    MessagePackWriter w(buf);
    writeRpcRequest(w, id, method, params);
  }
  submit(id, std::move(buf), std::move(done), timeout);
  return id;
}

void MessagePackRpcClient::notify(std::string_view method, const Value& params) {
  ByteBuf buf = newBuffer();
  {
    MessagePackWriter w(buf);
    writeRpcNotification(w, method, params);
  }
  submitNotification(std::move(buf));
}

MessagePackRpcClient::SyncWaiter MessagePackRpcClient::syncWaiter() {
  if (state_->loop->inEventLoop())
    throw IllegalStateError(
        "MessagePackRpcClient::callSync called on the client's own loop thread (it would wait "
        "for itself); use call() with a callback there");
  SyncWaiter w;
  w.slot = std::make_shared<SyncWaiter::Slot>();
  w.callback = [slot = w.slot](RpcResult r) {
    std::lock_guard<std::mutex> g(slot->mutex);
    slot->result.emplace(std::move(r));
    slot->cv.notify_all();
  };
  return w;
}

RpcResult MessagePackRpcClient::waitFor(SyncWaiter& waiter, std::uint32_t msgid) {
  std::unique_lock<std::mutex> g(waiter.slot->mutex);
  for (;;) {
    if (waiter.slot->cv.wait_for(g, std::chrono::milliseconds(50),
                                 [&] { return waiter.slot->result.has_value(); }))
      return std::move(*waiter.slot->result);
    // A loop that has stopped runs nothing more, so the result can no longer come from it (a
    // shutdown whose timeout cut the wait drops queued tasks; their callbacks run only when the
    // group is destroyed, which may be after this thread is joined). Checked after the wait, so
    // a result delivered before the loop stopped has been seen.
    if (state_->loop->isTerminated()) {
      if (waiter.slot->result.has_value()) return std::move(*waiter.slot->result);
      return detail::failure(RpcResult::Status::ConnectionLost, msgid,
                             "the event loop shut down before the call completed");
    }
  }
}

RpcResult MessagePackRpcClient::callSync(std::string_view method, const Value& params,
                                         std::optional<std::chrono::milliseconds> timeout) {
  SyncWaiter waiter = syncWaiter();
  const std::uint32_t id = call(method, params, waiter.callback, timeout);
  return waitFor(waiter, id);
}

}  // namespace netbuf
