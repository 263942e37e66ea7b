// EventLoopExecutor: an EventLoop as an Asio standard executor (dispatch at once on the loop, post
// queued FIFO with execute(), timers and coroutines on the loop's io_context, work dropped once
// the loop has shut down) and EventLoopGroup::shutdownGracefully with a completion token. Run
// under ThreadSanitizer ("threaded").
#include <netbuf/transport/event_loop_executor.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <netbuf/transport/event_loop.hpp>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;

static_assert(asio::execution::is_executor<EventLoopExecutor>::value);
static_assert(std::is_same_v<EventLoop::executor_type, EventLoopExecutor>);

TEST_CASE("EventLoopExecutor: dispatch runs at once on the loop, post after what is queued") {
  EventLoopGroup group(1);
  EventLoop& loop = group.loop(0);
  EventLoopExecutor ex = loop.get_executor();
  CHECK(&ex.loop() == &loop);
  CHECK_FALSE(ex.runningInThisThread());
  CHECK(&asio::query(ex, asio::execution::context) == &loop.context());
  CHECK(asio::query(ex, asio::execution::blocking) == asio::execution::blocking.possibly);
  CHECK(asio::query(asio::require(ex, asio::execution::blocking.never),
                    asio::execution::blocking) == asio::execution::blocking.never);
  CHECK(ex == loop.get_executor());
  CHECK(ex != asio::require(ex, asio::execution::blocking.never));

  std::vector<int> order;  // touched on the loop only
  std::promise<std::vector<int>> done;
  loop.execute([&] {
    CHECK(ex.runningInThisThread());
    loop.execute([&order] { order.push_back(3); });        // queued
    asio::post(ex, [&order] { order.push_back(4); });      // queued after it (FIFO)
    asio::dispatch(ex, [&order] { order.push_back(1); });  // on the loop: at once
    order.push_back(2);
    loop.execute([&order, &done] { done.set_value(order); });
  });
  CHECK(done.get_future().get() == std::vector<int>{1, 2, 3, 4});

  // From another thread, dispatch queues too.
  std::promise<bool> onLoop;
  asio::dispatch(ex, [&] { onLoop.set_value(loop.inEventLoop()); });
  CHECK(onLoop.get_future().get());
  group.shutdownGracefully(0ms, 5s);
}

namespace {
asio::awaitable<int> waitThenAdd(int a, int b) {
  asio::steady_timer timer(co_await asio::this_coro::executor, 20ms);
  co_await timer.async_wait(asio::use_awaitable);
  co_return a + b;
}
}  // namespace

TEST_CASE("EventLoopExecutor: coroutines and timers on the loop, through any_io_executor too") {
  EventLoopGroup group(2);
  const auto start = std::chrono::steady_clock::now();
  auto sum = asio::co_spawn(group.loop(1).get_executor(), waitThenAdd(20, 22), asio::use_future);
  CHECK(sum.get() == 42);
  CHECK(std::chrono::steady_clock::now() - start >= 20ms);
  asio::any_io_executor any = group.loop(0).get_executor();
  std::promise<std::size_t> where;
  asio::post(any, [&] {
    EventLoop* current = group.currentLoop();
    where.set_value(current == nullptr ? 99 : current->index());
  });
  CHECK(where.get_future().get() == 0);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("EventLoopExecutor: work counts for a graceful shutdown; once shut down it is dropped") {
  auto group = std::make_unique<EventLoopGroup>(1);
  EventLoopExecutor ex = group->loop(0).get_executor();
  // Posted work is pending work: a graceful shutdown waits for it.
  std::atomic<bool> ran{false};
  asio::post(ex, [&] {
    std::this_thread::sleep_for(50ms);
    ran = true;
  });
  group->shutdownGracefully(0ms, 5s);
  CHECK(ran.load());
  // After the shutdown: destroyed unrun, no exception for the caller.
  struct Probe {
    std::atomic<int>* destroyed;
    std::atomic<int>* runs;
    bool armed = true;
    Probe(std::atomic<int>* d, std::atomic<int>* r) : destroyed(d), runs(r) {}
    Probe(Probe&& o) noexcept
        : destroyed(o.destroyed), runs(o.runs), armed(std::exchange(o.armed, false)) {}
    ~Probe() {
      if (armed) ++*destroyed;
    }
    void operator()() { ++*runs; }
  };
  std::atomic<int> destroyed{0}, runs{0};
  CHECK_NOTHROW(asio::post(ex, Probe(&destroyed, &runs)));
  CHECK_NOTHROW(asio::dispatch(ex, Probe(&destroyed, &runs)));
  CHECK(runs == 0);
  CHECK(destroyed == 2);
}

TEST_CASE("EventLoopGroup::shutdownGracefully with a completion token") {
  SUBCASE("use_future from the main thread") {
    EventLoopGroup group(2);
    std::atomic<int> ran{0};
    group.loop(1).execute([&] {
      std::this_thread::sleep_for(30ms);
      ++ran;
    });
    auto f = group.shutdownGracefully(0ms, 5s, asio::use_future);
    CHECK_NOTHROW(f.get());
    CHECK(group.isTerminated());
    CHECK(ran == 1);
  }
  SUBCASE("a callback started from one of the group's own loops") {
    EventLoopGroup group(2);
    std::promise<std::pair<bool, bool>> done;
    group.loop(0).execute([&] {
      // A loop thread may start it (the blocking form would join itself): it runs elsewhere.
      group.shutdownGracefully(0ms, 5s, [&](ErrorCode ec) {
        done.set_value({!ec, group.isTerminated() && group.currentLoop() == nullptr});
      });
    });
    CHECK(done.get_future().get() == std::pair<bool, bool>{true, true});
    CHECK_THROWS_AS(group.loop(0).execute([] {}), RejectedExecutionError);
  }
  SUBCASE("twice: the second completes once the first has") {
    EventLoopGroup group(1);
    auto a = group.shutdownGracefully(0ms, 5s, asio::use_future);
    auto b = group.shutdownGracefully(0ms, 5s, asio::use_future);
    a.get();
    b.get();
    CHECK(group.isTerminated());
  }
}
