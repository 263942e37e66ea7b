#pragma once
// Channel: one connection (or a socketless stand-in) and its pipeline (Netty's Channel).
//
// User code writes through the channel (write/flush/writeAndFlush/close enter the pipeline at its
// tail); the transport feeds reads and state changes in at the head. A concrete channel (a TCP
// socket channel, EmbeddedChannel) implements the head's side: what a write, a flush and a close
// do, and which executor runs the channel's handlers.
//
// Attributes: typed per-channel values, keyed by AttributeKey<T> objects (compare by identity):
//     static const AttributeKey<int> kUserId{"userId"};
//     channel.attr(kUserId) = 42;
//
// Threading (Netty's rule): a channel's handlers run on its executor's thread (its event loop),
// one event at a time. The outbound operations below -- write, writeAndFlush, flush, close,
// setAutoRead -- may be called from ANY thread: on the loop they run at once; from another thread
// they are handed to the loop as one task each, run in the order each calling thread made them
// (the loop's queue is FIFO), and a WriteListener given with such a write is notified on the loop.
// When the loop has shut down, such a write fails its listener with ChannelErrc::rejected (the
// message is released) and the other operations do nothing. isOpen, isActive, isWritable,
// isAutoRead, the addresses and attr/findAttr may be asked from any thread. The pipeline itself
// (adding, removing, looking up handlers, firing inbound events) belongs to the loop: from another
// thread those calls throw IllegalStateError (run them with executor().execute()).
//
// Ownership: a channel whose operations may be called from other threads is held by a
// std::shared_ptr (SocketChannel always is): a task handed to the loop holds the channel until it
// has run. A channel used only on its loop (EmbeddedChannel) may live anywhere.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/channel_executor.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <netbuf/transport/detail/async_op.hpp>
#include <netbuf/transport/message.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace netbuf {

/// A typed attribute key; keys are compared by address, the name is for humans.
template <class T>
struct AttributeKey {
  const char* name;
};

class Channel;

namespace detail {
/// An outbound operation handed to a channel's loop from another thread: a write (and flush), a
/// flush or a close, entering at the pipeline's tail or at one handler context. It holds the
/// channel until it has run; destroying it without running it fails the write's listener with
/// ChannelErrc::rejected (a loop that shut down drops its queued tasks) and releases the message.
struct OutboundTask {
  enum class Kind : std::uint8_t { Write, WriteAndFlush, Flush, Close };

  OutboundTask(std::shared_ptr<Channel> ch, ChannelHandlerContext* ctx, std::uint64_t ctxId, Kind k,
               Message m, WriteListener* l) noexcept
      : channel(std::move(ch)),
        context(ctx),
        contextId(ctxId),
        kind(k),
        msg(std::move(m)),
        listener(l) {}
  OutboundTask(OutboundTask&& o) noexcept
      : channel(std::move(o.channel)),
        context(o.context),
        contextId(o.contextId),
        kind(o.kind),
        msg(std::move(o.msg)),
        listener(std::exchange(o.listener, nullptr)) {}
  OutboundTask& operator=(OutboundTask&&) = delete;
  ~OutboundTask();

  void operator()();

  std::shared_ptr<Channel> channel;
  ChannelHandlerContext* context;  // nullptr: the pipeline's tail
  std::uint64_t contextId;         // context's id when it was handed over (see run())
  Kind kind;
  Message msg;
  WriteListener* listener;  // notified exactly once (run, or rejected), then nulled
};
}  // namespace detail

template <class T>
class ReceiveQueue;

namespace detail {
class ReceiveQueueBase;
class ChannelExecutorAdapter;
template <class T>
struct InitiateReceive;
template <class Handler>
class WriteOp;
/// The initiation of Channel::write/writeAndFlush with a completion token.
struct InitiateWrite {
  Channel* channel;
  bool flush;
  template <class Handler>
  void operator()(Handler&& handler, Message msg) const;
};
}  // namespace detail

class Channel : public std::enable_shared_from_this<Channel> {
 public:
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  virtual ~Channel();

  /// Loop thread only (see the header comment).
  ChannelPipeline& pipeline() noexcept { return pipeline_; }
  ByteBufAllocator& alloc() const noexcept { return *alloc_; }
  /// The executor that runs the channel's handlers (its event loop).
  ChannelExecutor& executor() const noexcept { return *executor_; }
  /// True on the channel's loop thread, where operations run at once.
  bool inEventLoop() const noexcept {
    return detail::tCurrentExecutor == executor_ || inEventLoopSlow();
  }

  virtual bool isOpen() const noexcept = 0;
  virtual bool isActive() const noexcept = 0;
  /// False while the bytes queued for writing exceed the high water mark (see the concrete
  /// channel); handlers stop producing until channelWritabilityChanged says otherwise.
  virtual bool isWritable() const noexcept { return true; }
  /// Whether the channel reads on its own (Netty's ChannelConfig.isAutoRead). A handler turns it
  /// off to stop taking input it cannot process yet (backpressure) and back on when it can.
  bool isAutoRead() const noexcept { return autoRead_.load(std::memory_order_relaxed); }
  /// A SocketChannel stops reading after the pending read when turned off and starts a read when
  /// turned on; channels fed by hand (EmbeddedChannel) only record the flag. Any thread (from
  /// another thread the change is made on the loop, so isAutoRead() shows it a little later).
  void setAutoRead(bool on);
  virtual std::string localAddress() const = 0;
  virtual std::string remoteAddress() const = 0;

  /// The channel's loop as an Asio executor: the default executor of the completion handlers of
  /// the channel's operations, and what a coroutine serving the channel is spawned on. Channels
  /// on an EventLoop return its EventLoopExecutor. The default, for other executors
  /// (EmbeddedChannel), dispatches at once on the executor's thread and posts with execute();
  /// its execution context is an io_context that never runs, so an Asio I/O object made from it
  /// (a timer) never completes.
  virtual boost::asio::any_io_executor get_executor() const;

  // ---- outbound, through the whole pipeline (any thread; see the header comment)
  //
  // write(msg, token) and writeAndFlush(msg, token) complete, with ErrorCode (void(ErrorCode)),
  // once the message's last byte has been handed to the socket, or with the error that failed it
  // (ChannelErrc::closed, closedBeforeWritten, unsupportedMessageType, writeFailed, rejected, or a
  // handler's own, such as writeTimeout). token is any Asio completion token (a callback,
  // use_awaitable, use_future, deferred...); the handler runs on its associated executor, by
  // default the channel's loop, never inside the call that started the write. A write only
  // completes once flushed. token may also be a WriteListener* (or nullptr): the pipeline's own
  // allocation-free listener, notified on the loop as soon as the write completes, possibly
  // before the call returns; the call then returns nothing.
  template <class T, class Token>
  auto write(T&& msg, Token&& token) {
    return outbound<false>(std::forward<T>(msg), std::forward<Token>(token));
  }
  /// write(msg) with no one to tell: a failure is counted and logged by the channel only.
  template <class T>
  void write(T&& msg) {
    writeNow(Message(std::forward<T>(msg)), nullptr, false);
  }
  void flush() {
    if (inEventLoop()) [[likely]] {
      pipeline_.flushFromTail();
    } else {
      submitOutbound(nullptr, 0, detail::OutboundTask::Kind::Flush, Message(), nullptr);
    }
  }
  /// write() then flush(); from another thread, one task for both.
  template <class T, class Token>
  auto writeAndFlush(T&& msg, Token&& token) {
    return outbound<true>(std::forward<T>(msg), std::forward<Token>(token));
  }
  template <class T>
  void writeAndFlush(T&& msg) {
    writeNow(Message(std::forward<T>(msg)), nullptr, true);
  }
  void close() {
    if (inEventLoop()) [[likely]] {
      pipeline_.closeFromTail();
    } else {
      submitOutbound(nullptr, 0, detail::OutboundTask::Kind::Close, Message(), nullptr);
    }
  }

  /// The next inbound message of type T from the ReceiveQueue<T> at the tail of the pipeline, as
  /// void(ErrorCode, T) through any Asio completion token (receive_queue.hpp has the rules):
  ///     std::string line = co_await ch->receive<std::string>(asio::use_awaitable);
  /// Any thread.
  template <class T, class Token>
  auto receive(Token&& token);

  /// Destroys, without running it, the handler of a receive<T>() pending on this channel (loop
  /// thread; the group's destructor, for a channel whose loop has stopped: see EventLoopChannel).
  void dropPendingReceive() noexcept;

  /// The attribute for key, default-constructed on first use. The lookup (and the creation) may
  /// happen on any thread; the value is the caller's to synchronise when several threads use it
  /// (make T an atomic type, or touch it on the loop only). The reference stays valid as long as
  /// the channel.
  template <class T>
  T& attr(const AttributeKey<T>& key) {
    std::lock_guard<std::mutex> lock(attrsMutex_);
    for (auto& a : attrs_) {
      if (a.key == &key) return static_cast<Attr<T>&>(*a.value).value;
    }
    attrs_.push_back({&key, std::make_unique<Attr<T>>()});
    return static_cast<Attr<T>&>(*attrs_.back().value).value;
  }
  /// The attribute for key, or nullptr when it was never set. Any thread, as attr().
  template <class T>
  T* findAttr(const AttributeKey<T>& key) noexcept {
    std::lock_guard<std::mutex> lock(attrsMutex_);
    for (auto& a : attrs_) {
      if (a.key == &key) return &static_cast<Attr<T>&>(*a.value).value;
    }
    return nullptr;
  }

 protected:
  explicit Channel(ChannelExecutor& executor,
                   ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : alloc_(&alloc), executor_(&executor), pipeline_(*this) {}

  /// Called on the loop after setAutoRead() changed the flag (or set it again).
  virtual void onAutoReadChanged() {}
  /// Sets the flag alone (for constructors: no hook, no thread check).
  void setAutoReadFlag(bool on) noexcept;

  /// The head's side of the outbound operations (Netty's Channel.Unsafe). Loop thread.
  virtual void doWrite(Message msg, WriteListener* listener) = 0;
  virtual void doFlush() = 0;
  virtual void doClose() = 0;
  /// A message that reached the tail unhandled (after the pipeline counted it). Default: released.
  virtual void onUnhandledMessage(Message msg) noexcept;
  /// An exception that reached the tail. Default: logged to stderr with the channel's addresses,
  /// then the channel is closed.
  virtual void onUnhandledException(std::exception_ptr error) noexcept;
  /// A write that threw (a MessageTypeError at the socket, an encoder's EncoderError) after its
  /// listener heard of it. Default: logged to stderr with the channel's addresses; the channel
  /// stays open (the caller decides, as Netty's failed promise leaves it to the listener).
  virtual void onWriteFailure(std::exception_ptr error) noexcept;
  /// Writes "netbuf: <what> on channel L -> R: <the exception's message> (<consequence>)" to
  /// stderr (what the defaults above and the other channels' overrides log).
  void logException(const char* what, const std::exception_ptr& error,
                    const char* consequence) const noexcept;

  /// Hands an outbound task to the loop (the off-loop path of write/flush/close). Throws
  /// RejectedExecutionError when the loop has shut down (the task is then left untouched). The
  /// default wraps the task for executor().execute(); a channel on an EventLoop posts it as is.
  virtual void submit(detail::OutboundTask& task);

  /// Removes every handler now (concrete channels call it from their destructors, while the
  /// channel's own members are still alive for handlerRemoved()). From here on the pipeline may
  /// be used from the destroying thread: nothing else can reach the channel any more.
  void destroyPipeline() noexcept;

 private:
  friend class ChannelPipeline;
  friend class ChannelHandlerContext;
  friend struct detail::OutboundTask;

  struct AttrBase {
    virtual ~AttrBase() = default;
  };
  template <class T>
  struct Attr : AttrBase {
    T value{};
  };
  struct AttrEntry {
    const void* key;
    std::unique_ptr<AttrBase> value;
  };

  bool inEventLoopSlow() const noexcept;
  /// IllegalStateError: an operation off the loop on a channel no std::shared_ptr holds.
  [[noreturn]] static void throwNotShared();

  /// The write paths: with a listener (or none) at once, else an operation per token.
  void writeNow(Message msg, WriteListener* listener, bool flush) {
    if (inEventLoop()) [[likely]] {
      pipeline_.writeFromTail(std::move(msg), listener);
      if (flush) pipeline_.flushFromTail();
    } else {
      submitOutbound(
          nullptr, 0,
          flush ? detail::OutboundTask::Kind::WriteAndFlush : detail::OutboundTask::Kind::Write,
          std::move(msg), listener);
    }
  }
  template <bool Flush, class T, class Token>
  auto outbound(T&& msg, Token&& token) {
    if constexpr (std::is_convertible_v<Token, WriteListener*>) {
      writeNow(Message(std::forward<T>(msg)), static_cast<WriteListener*>(token), Flush);
    } else {
      return boost::asio::async_initiate<Token, void(ErrorCode)>(
          detail::InitiateWrite{this, Flush}, token, Message(std::forward<T>(msg)));
    }
  }
  template <class Handler>
  friend class detail::WriteOp;
  friend struct detail::InitiateWrite;
  template <class T>
  friend class ReceiveQueue;
  template <class T>
  friend struct detail::InitiateReceive;
  /// The off-loop path: wraps the operation in an OutboundTask and submit()s it; a rejected write
  /// fails its listener with ChannelErrc::rejected here (and releases msg).
  void submitOutbound(ChannelHandlerContext* ctx, std::uint64_t ctxId,
                      detail::OutboundTask::Kind kind, Message msg, WriteListener* listener);

  friend class detail::ChannelExecutorAdapter;
  boost::asio::io_context& idleContext();

  ByteBufAllocator* alloc_;
  ChannelExecutor* executor_;
  std::unique_ptr<boost::asio::io_context> idleContext_;  // made by the first idleContext()
  detail::ReceiveQueueBase* receiveQueue_ = nullptr;  // the pipeline's ReceiveQueue (loop thread)
  std::mutex idleContextMutex_;
  std::atomic<bool> autoRead_{true};
  bool destroying_ = false;  // set by destroyPipeline(): the destroying thread owns the channel
  ChannelPipeline pipeline_;
  std::mutex attrsMutex_;
  std::vector<AttrEntry> attrs_;
};

namespace detail {

/// Channel::get_executor()'s default (see there).
class ChannelExecutorAdapter {
 public:
  explicit ChannelExecutorAdapter(Channel& ch, bool never = false) noexcept
      : ch_(&ch), never_(never) {}
  template <class F>
  void execute(F&& f) const {
    if (!never_ && ch_->executor().inEventLoop()) {
      static_cast<F&&>(f)();
      return;
    }
    // ChannelExecutor takes a copyable std::function: a move-only f is held by a shared_ptr.
    auto held = std::make_shared<std::decay_t<F>>(std::forward<F>(f));
    ch_->executor().execute([held] { (*held)(); });
  }
  ChannelExecutorAdapter require(boost::asio::execution::blocking_t::possibly_t) const noexcept {
    return ChannelExecutorAdapter(*ch_, false);
  }
  ChannelExecutorAdapter require(boost::asio::execution::blocking_t::never_t) const noexcept {
    return ChannelExecutorAdapter(*ch_, true);
  }
  boost::asio::execution::blocking_t query(boost::asio::execution::blocking_t) const noexcept {
    return never_ ? boost::asio::execution::blocking_t(boost::asio::execution::blocking.never)
                  : boost::asio::execution::blocking_t(boost::asio::execution::blocking.possibly);
  }
  boost::asio::io_context& query(boost::asio::execution::context_t) const {
    return ch_->idleContext();
  }
  friend bool operator==(const ChannelExecutorAdapter& a,
                         const ChannelExecutorAdapter& b) noexcept {
    return a.ch_ == b.ch_ && a.never_ == b.never_;
  }
  friend bool operator!=(const ChannelExecutorAdapter& a,
                         const ChannelExecutorAdapter& b) noexcept {
    return !(a == b);
  }

 private:
  Channel* ch_;
  bool never_;
};

}  // namespace detail

inline boost::asio::any_io_executor Channel::get_executor() const {
  return detail::ChannelExecutorAdapter(const_cast<Channel&>(*this));
}

namespace detail {

/// A token write: the WriteListener the pipeline notifies, holding the completion handler. Its
/// memory comes from the handler's allocator and is freed before the handler runs.
template <class Handler>
class WriteOp final : public WriteListener {
 public:
  template <class H>
  WriteOp(H&& handler, const boost::asio::any_io_executor& executor)
      : completion_(std::forward<H>(handler), executor) {}

  /// Set while the initiating call is on the stack (loop thread): a completion then is posted.
  bool* completedDuringInitiation = nullptr;
  /// The write was handed over from another thread: a completion off the channel's loop (a
  /// loop that refused the write, on the calling thread) is posted; one on the loop, which cannot
  /// be inside the initiating call, is dispatched.
  const ChannelExecutor* handedOverTo = nullptr;

  void operationComplete(std::error_code ec) noexcept override {
    const bool post = completedDuringInitiation != nullptr ||
                      (handedOverTo != nullptr && detail::tCurrentExecutor != handedOverTo);
    if (completedDuringInitiation != nullptr) *completedDuringInitiation = true;
    finishOp(this, completion_, post, ErrorCode(ec));
  }

 private:
  HandlerCompletion<Handler, boost::asio::any_io_executor> completion_;
};

template <class Handler>
void InitiateWrite::operator()(Handler&& handler, Message msg) const {
  using Op = WriteOp<std::decay_t<Handler>>;
  const bool onLoop = channel->inEventLoop();
  // What the off-loop write would throw, checked before anything is allocated.
  if (!onLoop && channel->weak_from_this().expired()) channel->throwNotShared();
  auto alloc = handlerAllocator(handler);
  Op* op = allocateOp<Op>(alloc, std::forward<Handler>(handler), channel->get_executor());
  if (onLoop) {
    bool completed = false;
    op->completedDuringInitiation = &completed;
    channel->writeNow(std::move(msg), op, flush);
    if (!completed) op->completedDuringInitiation = nullptr;  // still pending: op is alive
  } else {
    op->handedOverTo = &channel->executor();
    channel->writeNow(std::move(msg), op, flush);  // op may complete on the loop from here on
  }
}

}  // namespace detail

}  // namespace netbuf

// ReceiveQueue completes Channel::receive<T>().
#include <netbuf/transport/receive_queue.hpp>
