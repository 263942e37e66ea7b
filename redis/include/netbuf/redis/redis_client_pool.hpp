#pragma once
// RedisClientPool: N RedisClients to one server, each command sent on the one with the fewest
// commands pending (ties taken in turn), for throughput beyond one connection's pipeline: the
// connections are spread over the group's loops, so their I/O and decoding run in parallel.
//
//     RedisClientPool pool(group, 4, options);   // options.host / port: where to connect
//     RedisReply r = co_await pool.command(asio::use_awaitable, "GET", "k");
//
// Why a pool beside the client rather than inside it: a RedisClient is one connection, one FIFO,
// and the connection's state is the caller's to rely on (SELECT, MULTI/EXEC, WATCH, CLIENT
// TRACKING, subscriptions, the order of two commands). A pool gives none of that: two commands
// may go out on different connections and run in any order. Commands that need it go to one
// client (pool.client(i), or a RedisClient of its own).
//
// Connections open lazily, on the first command each client gets (Options::autoConnect, with
// Options::host set), or all at once with connect(). Completion, cancellation and threading are
// RedisClient's (redis_client.hpp). The group must outlive the pool.

#include <atomic>
#include <boost/asio/async_result.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <netbuf/redis/redis_client.hpp>
#include <vector>

namespace netbuf {

class RedisClientPool {
 public:
  /// `connections` clients (0 is taken as 1), on the group's loops in turn.
  RedisClientPool(EventLoopGroup& group, std::size_t connections, RedisClient::Options options);
  ~RedisClientPool();
  RedisClientPool(const RedisClientPool&) = delete;
  RedisClientPool& operator=(const RedisClientPool&) = delete;

  /// Connects every client to Options::host and port; completes once all are ready, with the
  /// first error any of them met (on the first client's loop by default).
  template <class Token>
  auto connect(Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(InitiateConnect{this}, token);
  }

  /// RedisClient::command on the least busy client.
  template <class Token, detail::RedisArgument... Args>
  requires(sizeof...(Args) > 0) auto command(Token&& token, const Args&... args) {
    return pick().command(std::forward<Token>(token), args...);
  }
  template <class Token>
  auto command(Token&& token, std::span<const std::string_view> args) {
    return pick().command(std::forward<Token>(token), args);
  }

  /// The client with the fewest commands pending (ties in turn). Any thread.
  RedisClient& pick() noexcept;
  RedisClient& client(std::size_t i) { return *clients_.at(i); }
  std::size_t size() const noexcept { return clients_.size(); }

  /// Sets every client's push handler (each calls it on its own loop: it must be thread-safe).
  void setPushHandler(const RedisClient::PushHandler& handler);
  /// Closes every client (RedisClient::close()).
  void close();
  /// Commands pending on all clients. Any thread.
  std::size_t pendingCommands() const noexcept;

 private:
  struct InitiateConnect {
    RedisClientPool* pool;
    template <class Handler>
    void operator()(Handler&& handler) const {
      detail::SharedCompletion<std::decay_t<Handler>, EventLoopExecutor> completion(
          std::forward<Handler>(handler), pool->clients_.front()->eventLoop().get_executor());
      pool->connectAll([completion](ErrorCode ec) { completion.complete(ec); });
      completion.initiated();
    }
  };
  void connectAll(RedisClient::ConnectCompletion done);

  std::vector<std::unique_ptr<RedisClient>> clients_;
  std::atomic<std::size_t> next_{0};
};

}  // namespace netbuf
