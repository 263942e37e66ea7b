#pragma once
// The building blocks of netbuf's asynchronous operations: every one is an Asio initiating
// function (boost::asio::async_initiate), so a callback, use_awaitable, use_future, deferred or
// any other completion token works with it. What they share:
//
//  - HandlerCompletion: the completion handler and the executor it must run on (its associated
//    executor, or the operation's default: the channel's loop), with work counted on that executor
//    while the operation is pending (Asio's rule, so that an io_context the handler belongs to does
//    not run out of work). dispatch() runs the handler at once when its executor allows it (we are
//    on its thread); post() always queues it, for a completion that happens while the initiating
//    function is still on the stack (Asio forbids invoking a handler from there).
//  - allocateOp / OpDeleter: an operation's state is allocated with the handler's associated
//    allocator, Asio's thread-local recycling allocator by default, so the common path costs no
//    malloc after warm-up; the state is freed before the handler runs (Asio's rule, which lets the
//    handler start the next operation in the memory just released).
//  - Cancellation: an operation that can be cancelled installs a handler in the completion
//    handler's associated cancellation slot (asio::bind_cancellation_slot, or what a coroutine or
//    parallel group binds). As Asio's own operations do, it leaves the handler there when it
//    completes (the slot belongs to the caller's executor; clearing it from the loop would race
//    with an emission there): a cancellation handler holds only weak references and an identity,
//    hops to the operation's loop, and does nothing when it finds the operation completed.
//  - A completion handler that throws when it is run inline (dispatched on the loop, from inside
//    the transport's own code) has its exception caught and reported on stderr, as the loop does
//    for the tasks it runs; the transport's state stays consistent.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <netbuf/transport/error_code.hpp>
#include <tuple>
#include <type_traits>
#include <utility>

namespace netbuf {

class EventLoopExecutor;

namespace detail {

/// A handler bound to the arguments it completes with (what is dispatched or posted).
template <class Handler, class... Args>
class BoundHandler {
 public:
  template <class H, class... A>
  explicit BoundHandler(H&& h, A&&... args)
      : handler_(std::forward<H>(h)), args_(std::forward<A>(args)...) {}
  void operator()() { std::apply(std::move(handler_), std::move(args_)); }

  using allocator_type = boost::asio::associated_allocator_t<Handler>;
  allocator_type get_allocator() const noexcept {
    return boost::asio::get_associated_allocator(handler_);
  }

 private:
  Handler handler_;
  std::tuple<Args...> args_;
};

/// Reports an exception a completion handler threw (or its executor's submission) on stderr.
inline void reportHandlerFailure(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    std::fprintf(stderr, "netbuf: a completion handler threw: %s\n", x.what());
  } catch (...) {
    std::fprintf(stderr, "netbuf: a completion handler threw a non-standard exception\n");
  }
}

/// The EventLoopExecutor an executor is, or wraps (any_io_executor), or nullptr. (A template, so
/// that EventLoopExecutor need only be complete where a completion is instantiated.)
template <class Executor>
auto eventLoopOf(const Executor& ex) noexcept {
  using Loop = EventLoopExecutor;
  if constexpr (std::is_same_v<Executor, Loop>) {
    return &ex;
  } else if constexpr (std::is_same_v<Executor, boost::asio::any_io_executor>) {
    return ex.template target<Loop>();
  } else {
    return static_cast<const Loop*>(nullptr);
  }
}

/// See the header comment. Move-only; dispatch()/post() consume it.
template <class Handler, class DefaultExecutor>
class HandlerCompletion {
 public:
  using executor_type = boost::asio::associated_executor_t<Handler, DefaultExecutor>;
  using work_executor_type = std::decay_t<decltype(boost::asio::prefer(
      std::declval<const executor_type&>(), boost::asio::execution::outstanding_work.tracked))>;

  HandlerCompletion(Handler handler, const DefaultExecutor& defaultExecutor)
      : handler_(std::move(handler)),
        executor_(
            boost::asio::prefer(boost::asio::get_associated_executor(handler_, defaultExecutor),
                                boost::asio::execution::outstanding_work.tracked)) {}
  HandlerCompletion(HandlerCompletion&&) = default;

  Handler& handler() noexcept { return handler_; }

  /// Runs the handler with args on its executor: at once where the executor allows it.
  template <class... Args>
  void dispatch(Args&&... args) && noexcept {
    try {
      // The common case, a handler whose executor is the loop we are on (a callback, or a
      // coroutine running on the channel's loop): run it here, as dispatch would, without the
      // type-erased executor's wrapping of the handler.
      if (auto* loop = eventLoopOf(executor_); loop != nullptr && loop->runningInThisThread()) {
        // (Arguments passed as dispatch would: decayed copies, as rvalues.)
        if (!loop->isStopped())
          std::move(handler_)(std::decay_t<Args>(std::forward<Args>(args))...);
        return;
      }
      boost::asio::dispatch(executor_, BoundHandler<Handler, std::decay_t<Args>...>(
                                           std::move(handler_), std::forward<Args>(args)...));
    } catch (...) {
      reportHandlerFailure(std::current_exception());
    }
  }
  /// Queues the handler with args on its executor (never inline).
  template <class... Args>
  void post(Args&&... args) && noexcept {
    try {
      boost::asio::post(executor_, BoundHandler<Handler, std::decay_t<Args>...>(
                                       std::move(handler_), std::forward<Args>(args)...));
    } catch (...) {
      reportHandlerFailure(std::current_exception());
    }
  }

 private:
  Handler handler_;
  work_executor_type executor_;
};

/// A completion held where only a copyable std::function fits (a close listener, a connect
/// attempt's report): it is completed once, by complete(), post() or dispatch(); destroyed without
/// that, it destroys the handler unrun. complete() posts while the initiating function has not
/// called initiated() yet (it may be completing on that function's own stack) and dispatches
/// after; a post where a dispatch would have done is harmless, so the flag needs no more than an
/// atomic.
template <class Handler, class Executor>
class SharedCompletion {
 public:
  SharedCompletion(Handler handler, const Executor& ex)
      : state_(std::make_shared<State>(std::move(handler), ex)) {}
  template <class... Args>
  void complete(Args&&... args) const {
    if (state_->initiating.load(std::memory_order_acquire))
      post(std::forward<Args>(args)...);
    else
      dispatch(std::forward<Args>(args)...);
  }
  template <class... Args>
  void post(Args&&... args) const {
    std::move(state_->completion).post(std::forward<Args>(args)...);
  }
  template <class... Args>
  void dispatch(Args&&... args) const {
    std::move(state_->completion).dispatch(std::forward<Args>(args)...);
  }
  /// The initiating function is about to return: complete() may dispatch from now on.
  void initiated() const noexcept { state_->initiating.store(false, std::memory_order_release); }

 private:
  struct State {
    State(Handler h, const Executor& ex) : completion(std::move(h), ex) {}
    HandlerCompletion<Handler, Executor> completion;
    std::atomic<bool> initiating{true};
  };
  std::shared_ptr<State> state_;
};

/// The initiation of waitClosed(token) and close(token) on a Closable (EventLoopChannel,
/// ServerChannel): close() first when asked, then a close listener completes the handler.
template <class Closable>
struct InitiateWaitClosed {
  Closable* target;
  bool closeFirst;
  template <class Handler>
  void operator()(Handler&& handler) const {
    SharedCompletion<std::decay_t<Handler>, boost::asio::any_io_executor> completion(
        std::forward<Handler>(handler), target->get_executor());
    if (closeFirst) target->close();
    target->addCloseListener([completion] { completion.complete(ErrorCode()); });
    completion.initiated();
  }
};

/// The allocator an operation for Handler uses (see the header comment).
template <class Handler>
using HandlerAllocator =
    boost::asio::associated_allocator_t<Handler, boost::asio::recycling_allocator<void>>;

template <class Handler>
HandlerAllocator<Handler> handlerAllocator(const Handler& h) noexcept {
  return boost::asio::get_associated_allocator(h, boost::asio::recycling_allocator<void>());
}

/// Allocates and constructs an Op with alloc (rebound to Op); the caller frees it with freeOp.
template <class Op, class Alloc, class... Args>
Op* allocateOp(const Alloc& alloc, Args&&... args) {
  using Traits = typename std::allocator_traits<Alloc>::template rebind_traits<Op>;
  typename Traits::allocator_type a(alloc);
  Op* p = Traits::allocate(a, 1);
  try {
    return ::new (static_cast<void*>(p)) Op(std::forward<Args>(args)...);
  } catch (...) {
    Traits::deallocate(a, p, 1);
    throw;
  }
}

/// Destroys and frees an Op made by allocateOp with (a copy of) alloc.
template <class Op, class Alloc>
void freeOp(Op* op, const Alloc& alloc) noexcept {
  using Traits = typename std::allocator_traits<Alloc>::template rebind_traits<Op>;
  typename Traits::allocator_type a(alloc);
  op->~Op();
  Traits::deallocate(a, op, 1);
}

/// Completes an operation whose state op holds completion: moves the completion out, frees op
/// (before the handler runs, so the handler may start the next operation in that memory), then
/// posts the handler with args (post: inside the initiating call) or dispatches it.
template <class Op, class Handler, class Executor, class... Args>
void finishOp(Op* op, HandlerCompletion<Handler, Executor>& completion, bool post,
              Args&&... args) noexcept {
  auto alloc = handlerAllocator(completion.handler());
  auto moved = std::move(completion);
  freeOp(op, alloc);
  if (post)
    std::move(moved).post(std::forward<Args>(args)...);
  else
    std::move(moved).dispatch(std::forward<Args>(args)...);
}

/// Installs a cancellation handler (constructed from args) in handler's associated slot, when it
/// has one. True when installed.
template <class Canceller, class Handler, class... Args>
bool installCanceller(Handler& handler, Args&&... args) {
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  if (!slot.is_connected()) return false;
  slot.template emplace<Canceller>(std::forward<Args>(args)...);
  return true;
}

/// Whether an operation with no side effects yet (a connect, a receive) honours a cancellation
/// of this type: any of terminal, partial and total.
inline bool cancels(boost::asio::cancellation_type_t type) noexcept {
  return (type &
          (boost::asio::cancellation_type::terminal | boost::asio::cancellation_type::partial |
           boost::asio::cancellation_type::total)) != boost::asio::cancellation_type::none;
}

/// The same for an operation whose side effects may have happened (an RPC call whose request was
/// sent): terminal and partial only; total promises none.
inline bool cancelsWithSideEffects(boost::asio::cancellation_type_t type) noexcept {
  return (type & (boost::asio::cancellation_type::terminal |
                  boost::asio::cancellation_type::partial)) != boost::asio::cancellation_type::none;
}

/// Frees an Op made by allocateOp unless released: guards an operation between its allocation
/// and the moment something owns it.
template <class Op, class Alloc>
class OpGuard {
 public:
  OpGuard(Op* op, const Alloc& alloc) noexcept : op_(op), alloc_(alloc) {}
  OpGuard(const OpGuard&) = delete;
  OpGuard& operator=(const OpGuard&) = delete;
  ~OpGuard() {
    if (op_ != nullptr) freeOp(op_, alloc_);
  }
  Op* release() noexcept { return std::exchange(op_, nullptr); }

 private:
  Op* op_;
  Alloc alloc_;
};

}  // namespace detail
}  // namespace netbuf

// EventLoopExecutor completes eventLoopOf() for whoever includes this header.
#include <netbuf/transport/event_loop_executor.hpp>
