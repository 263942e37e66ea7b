#pragma once
// ReceiveQueue<T> and Channel::receive<T>(): a channel's decoded inbound messages consumed from a
// coroutine (or any completion token), for protocol code that reads better as a sequence than as
// callbacks.
//
//     // in the initializer: decoders, then the queue at the tail
//     ch.pipeline()
//         .addLast("frames", std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(4096))
//         .addLast("strings", std::make_unique<DecoderChannelHandler<StringDecoder>>())
//         .addLast("queue", std::make_unique<ReceiveQueue<std::string>>(64));
//     coSpawn(ch.shared_from_this(), session(ch.shared_from_this()));
//
//     asio::awaitable<void> session(std::shared_ptr<SocketChannel> ch) {
//       for (;;) {
//         std::string line = co_await ch->receive<std::string>(asio::use_awaitable);
//         co_await ch->writeAndFlush(line + "\n", asio::use_awaitable);
//       }   // ends with boost::system::system_error(asio::error::eof) when the peer closes
//     }
//
// The queue takes every inbound message of type T that reaches it (messages of other types pass
// on to the tail). receive<T>(token) completes with void(ErrorCode, T):
//   - the next message in arrival order (at once, posted, when one is queued);
//   - once the queue is empty and the channel has closed: asio::error::eof when it closed
//     normally (the peer's EOF or reset, a close()), ChannelErrc::exceptionCaught when an
//     exception went through the pipeline and closed it (exception() holds it; it goes on to the
//     tail, which logs it), the error of the socket when the exception was a std::system_error;
//   - asio::error::operation_aborted when cancelled through the handler's cancellation slot (the
//     next message then waits for the next receive), or when the queue is removed;
//   - asio::error::already_started when another receive is pending (one at a time, as a socket's
//     reads); ChannelErrc::noReceiveQueue when the pipeline has no ReceiveQueue<T>;
//     ChannelErrc::rejected when the channel's loop has shut down (seen by a handler with an
//     executor of its own, such as use_future's; one bound to the stopped loop is destroyed
//     unrun).
// On an error T is default-constructed: T must be default-constructible and movable.
//
// Backpressure: when capacity messages are queued, the queue turns the channel's auto-read off,
// so no more bytes are read and the peer's sends back up into the kernel and then the peer; it
// turns auto-read on again once a receive has brought the queue down to half its capacity. A read
// already in progress finishes first: the queue holds at most capacity plus the messages decoded
// from one read (bounded by the channel's maxReadSize). A handler that turns auto-read off itself
// should not sit behind the queue.
//
// Threading: the queue lives on the channel's loop. receive() may be called from any thread
// (from another one, it is handed to the loop); its handler runs on its associated executor, by
// default the channel's loop, at once when a message arrives for a pending receive whose executor
// is the loop (no extra loop turn per message).

#include <atomic>
#include <boost/asio/async_result.hpp>
#include <boost/asio/error.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/detail/async_op.hpp>
#include <netbuf/transport/detail/ring_queue.hpp>
#include <netbuf/transport/rejected_execution_error.hpp>
#include <system_error>
#include <type_traits>
#include <utility>

namespace netbuf {

namespace detail {

/// The id of the next receive (process-wide): what a cancellation names its receive by.
inline std::atomic<std::uint64_t> nextReceiveId{1};

/// What Channel knows of its ReceiveQueue, whatever its T.
class ReceiveQueueBase : public ChannelHandler {
 public:
  /// Destroys the pending receive's handler without running it (Channel::dropPendingReceive).
  virtual void dropWaiter() noexcept = 0;
};

/// A pending receive: completes once (and frees itself), or is destroyed unrun.
template <class T>
class ReceiveWaiter {
 public:
  /// post: the completion happens inside the initiating call (never run the handler there).
  virtual void complete(ErrorCode ec, T value, bool post) noexcept = 0;
  /// Frees the receive and destroys its handler without running it.
  virtual void destroy() noexcept = 0;
  std::uint64_t id = nextReceiveId.fetch_add(1, std::memory_order_relaxed);

 protected:
  ~ReceiveWaiter() = default;
};

template <class T>
struct InitiateReceive;

}  // namespace detail

template <class T>
class ReceiveQueue final : public detail::ReceiveQueueBase {
  static_assert(std::is_default_constructible_v<T> && std::is_move_constructible_v<T>,
                "ReceiveQueue<T>: T must be default-constructible and movable");

 public:
  static constexpr std::size_t kDefaultCapacity = 64;

  /// capacity: queued messages at which reading stops (at least 1; IllegalArgumentError for 0).
  explicit ReceiveQueue(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {
    if (capacity == 0) throw IllegalArgumentError("ReceiveQueue: capacity must be at least 1");
  }
  ~ReceiveQueue() override { abandonWaiter(boost::asio::error::operation_aborted, true); }

  std::size_t capacity() const noexcept { return capacity_; }
  /// Messages queued now (loop thread).
  std::size_t size() const noexcept { return queue_.size(); }
  /// True while the queue holds auto-read off (loop thread).
  bool isPaused() const noexcept { return paused_; }
  /// The exception that went through the pipeline and closed the channel, or null (loop thread).
  std::exception_ptr exception() const noexcept { return exception_; }

  // ---- ChannelHandler
  void handlerAdded(ChannelHandlerContext& ctx) override {
    ctx_ = &ctx;
    ctx.channel().receiveQueue_ = this;
  }
  void handlerRemoved(ChannelHandlerContext& ctx) override {
    if (ctx.channel().receiveQueue_ == this) ctx.channel().receiveQueue_ = nullptr;
    queue_.clear();
    if (paused_) {
      paused_ = false;
      ctx.channel().setAutoRead(true);
    }
    // Posted: the handler must not run inside the pipeline change (nor a channel's destruction).
    abandonWaiter(boost::asio::error::operation_aborted, true);
    ctx_ = nullptr;
  }
  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if (!msg.is<T>()) return ctx.fireChannelRead(std::move(msg));
    T value = msg.take<T>();
    if (waiter_ != nullptr) {
      std::exchange(waiter_, nullptr)->complete(ErrorCode(), std::move(value), false);
      return;
    }
    queue_.push_back(std::move(value));
    if (queue_.size() >= capacity_ && !paused_) {
      paused_ = true;
      ctx.channel().setAutoRead(false);
    }
  }
  void channelReadComplete(ChannelHandlerContext&) override {}
  void channelInactive(ChannelHandlerContext& ctx) override {
    ended_ = true;
    if (queue_.empty()) abandonWaiter(endError(), false);
    ctx.fireChannelInactive();
  }
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override {
    if (exception_ == nullptr) {
      exception_ = error;
      errorCode_ = codeOf(error);
    }
    ctx.fireExceptionCaught(std::move(error));  // the tail logs it and closes the channel
    ctx.close();
  }
  MessageTypes inboundIn() const noexcept override { return typesOf<T>(); }
  MessageTypes inboundOut() const noexcept override { return {}; }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

 private:
  template <class U>
  friend struct detail::InitiateReceive;

  /// A receive on the loop: a queued message, the end, or wait.
  void attach(detail::ReceiveWaiter<T>* w, bool inInitiation) {
    if (!queue_.empty()) {
      T value = std::move(queue_.front());
      queue_.pop_front();
      if (paused_ && queue_.size() <= capacity_ / 2) {
        paused_ = false;
        ctx_->channel().setAutoRead(true);
      }
      return w->complete(ErrorCode(), std::move(value), inInitiation);
    }
    if (ended_) return w->complete(endError(), T(), inInitiation);
    if (waiter_ != nullptr)
      return w->complete(boost::asio::error::already_started, T(), inInitiation);
    waiter_ = w;
  }
  /// A cancellation (a loop task): the pending receive it was for, if still pending.
  void cancel(std::uint64_t id) {
    if (waiter_ != nullptr && waiter_->id == id)
      std::exchange(waiter_, nullptr)->complete(boost::asio::error::operation_aborted, T(), false);
  }
  void dropWaiter() noexcept override {
    if (waiter_ != nullptr) std::exchange(waiter_, nullptr)->destroy();
  }
  void abandonWaiter(ErrorCode ec, bool post) noexcept {
    if (waiter_ != nullptr) std::exchange(waiter_, nullptr)->complete(ec, T(), post);
  }
  ErrorCode endError() const noexcept {
    return exception_ != nullptr ? errorCode_ : ErrorCode(boost::asio::error::eof);
  }
  static ErrorCode codeOf(const std::exception_ptr& e) noexcept {
    try {
      std::rethrow_exception(e);
    } catch (const boost::system::system_error& x) {
      return x.code();
    } catch (const std::system_error& x) {
      return x.code();
    } catch (...) {
    }
    return ChannelErrc::exceptionCaught;
  }

  std::size_t capacity_;
  detail::RingQueue<T> queue_;  // storage kept: no allocation per message
  ChannelHandlerContext* ctx_ = nullptr;
  detail::ReceiveWaiter<T>* waiter_ = nullptr;
  // Lives as long as the queue: a cancellation of a channel that no shared_ptr owns (an
  // EmbeddedChannel) checks it before it touches the channel.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
  std::exception_ptr exception_;
  ErrorCode errorCode_;
  bool paused_ = false;
  bool ended_ = false;
};

namespace detail {

template <class T, class Handler>
class ReceiveOp final : public ReceiveWaiter<T> {
 public:
  template <class H>
  ReceiveOp(H&& handler, const boost::asio::any_io_executor& ex)
      : completion_(std::forward<H>(handler), ex) {}
  Handler& handler() noexcept { return completion_.handler(); }

  void complete(ErrorCode ec, T value, bool post) noexcept override {
    finishOp(this, completion_, post, ec, std::move(value));
  }
  void destroy() noexcept override {
    auto alloc = handlerAllocator(completion_.handler());
    freeOp(this, alloc);
  }

 private:
  HandlerCompletion<Handler, boost::asio::any_io_executor> completion_;
};

template <class T>
struct InitiateReceive {
  Channel* channel;

  static ReceiveQueue<T>* queueOf(Channel& ch) noexcept {
    return dynamic_cast<ReceiveQueue<T>*>(ch.receiveQueue_);
  }
  static void attach(Channel& ch, ReceiveWaiter<T>* w, bool inInitiation) {
    if (ReceiveQueue<T>* q = queueOf(ch)) return q->attach(w, inInitiation);
    w->complete(ChannelErrc::noReceiveQueue, T(), inInitiation);
  }

  /// Cancels the receive it was installed for, by id, on the channel's loop. It may run after the
  /// receive completed, or after the channel or its queue went (the slot keeps it, as Asio's
  /// own operations leave theirs): it holds no pointer it dereferences unchecked.
  struct Canceller {
    Canceller(Channel& ch, std::weak_ptr<char> queueAlive, std::uint64_t receiveId)
        : shared(ch.weak_from_this()), raw(&ch), alive(std::move(queueAlive)), id(receiveId) {}
    std::weak_ptr<Channel> shared;  // a channel a shared_ptr owns (every loop's channel)
    Channel* raw;                   // otherwise (an EmbeddedChannel): valid while `alive` is
    std::weak_ptr<char> alive;
    std::uint64_t id;

    void operator()(boost::asio::cancellation_type_t type) const {
      if (!cancels(type)) return;
      const std::uint64_t receive = id;
      try {
        if (auto ch = shared.lock()) {
          Channel* c = ch.get();
          c->executor().execute([ch = std::move(ch), receive] {
            if (ReceiveQueue<T>* q = queueOf(*ch)) q->cancel(receive);
          });
        } else if (alive.lock() != nullptr) {  // a queue alive: its unshared channel is too
          raw->executor().execute([c = raw, a = alive, receive] {
            if (a.lock() == nullptr) return;
            if (ReceiveQueue<T>* q = queueOf(*c)) q->cancel(receive);
          });
        }
      } catch (...) {  // the loop has shut down: nothing runs the receive any more
      }
    }
  };

  /// A receive handed to the loop from another thread: completes its op with
  /// ChannelErrc::rejected if the task is dropped unrun (the loop stopped first).
  struct Handover {
    ReceiveWaiter<T>* op;
    explicit Handover(ReceiveWaiter<T>* w) noexcept : op(w) {}
    Handover(const Handover&) = delete;
    Handover& operator=(const Handover&) = delete;
    ~Handover() {
      if (op != nullptr) op->complete(ChannelErrc::rejected, T(), true);
    }
  };

  template <class Handler>
  void operator()(Handler&& handler) const {
    using Op = ReceiveOp<T, std::decay_t<Handler>>;
    const bool onLoop = channel->inEventLoop();
    std::shared_ptr<Channel> self;
    if (!onLoop) {
      self = channel->weak_from_this().lock();
      if (self == nullptr) {
        throw IllegalStateError(
            "Channel::receive was called off the channel's loop on a channel not held by a "
            "std::shared_ptr");
      }
    }
    auto alloc = handlerAllocator(handler);
    Op* op = allocateOp<Op>(alloc, std::forward<Handler>(handler), channel->get_executor());
    OpGuard<Op, decltype(alloc)> guard(op, alloc);
    // Installed here, on the caller's side of the slot, before the receive can complete.
    std::weak_ptr<char> queueAlive;
    if (ReceiveQueue<T>* q = onLoop ? queueOf(*channel) : nullptr) queueAlive = q->alive_;
    installCanceller<Canceller>(op->handler(), *channel, queueAlive, op->id);
    if (onLoop) {
      attach(*channel, guard.release(), true);
      return;
    }
    // Off the loop, the receive is handed to it.
    auto handover = std::make_shared<Handover>(guard.release());
    try {
      channel->executor().execute(
          [self, handover] { attach(*self, std::exchange(handover->op, nullptr), false); });
    } catch (const RejectedExecutionError&) {
      // handover's destructor completes the receive with ChannelErrc::rejected.
    }
  }
};

}  // namespace detail

inline void Channel::dropPendingReceive() noexcept {
  if (receiveQueue_ != nullptr) receiveQueue_->dropWaiter();
}

template <class T, class Token>
auto Channel::receive(Token&& token) {
  return boost::asio::async_initiate<Token, void(ErrorCode, T)>(detail::InitiateReceive<T>{this},
                                                                token);
}

}  // namespace netbuf
