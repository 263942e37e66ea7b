#pragma once
// Outcomes of RedisClient commands for tests: started with a callback, waited for with a bound
// (a command that never completes fails the test, it never hangs), with a few readers of replies.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <memory>
#include <netbuf/redis/redis_client.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace netbuf::test {

struct RedisOutcome {
  ErrorCode ec;
  RedisReply reply;
  bool onClientLoop = false;  ///< the completion ran on the client's loop thread

  /// The reply's string (simple, bulk, verbatim, error), or a description of another type.
  std::string text() const {
    const RespValue& v = reply.root();
    switch (v.type()) {
      case RespType::SimpleString:
      case RespType::SimpleError:
      case RespType::BulkString:
      case RespType::BulkError:
      case RespType::VerbatimString:
      case RespType::BigNumber:
        return std::string(v.asString());
      case RespType::Integer:
        return std::to_string(v.asInteger());
      case RespType::Null:
        return "<null>";
      default:
        return std::string("<") + std::string(respTypeName(v.type())) + ">";
    }
  }
};

/// Starts a command with a callback; the future is its outcome.
template <class Client, class... Args>
std::future<RedisOutcome> launch(Client& client, const Args&... args) {
  auto p = std::make_shared<std::promise<RedisOutcome>>();
  std::future<RedisOutcome> f = p->get_future();
  client.command(
      [p](ErrorCode ec, RedisReply r) {
        p->set_value(RedisOutcome{ec, std::move(r), false});
      },
      args...);
  return f;
}

/// The same on a RedisClient, noting whether the completion ran on its loop.
template <class... Args>
std::future<RedisOutcome> launchOnLoop(RedisClient& client, const Args&... args) {
  auto p = std::make_shared<std::promise<RedisOutcome>>();
  std::future<RedisOutcome> f = p->get_future();
  EventLoop* loop = &client.eventLoop();
  client.command(
      [p, loop](ErrorCode ec, RedisReply r) {
        p->set_value(RedisOutcome{ec, std::move(r), loop->inEventLoop()});
      },
      args...);
  return f;
}

/// The outcome, REQUIREd within 10 s.
inline RedisOutcome await(std::future<RedisOutcome>& f) {
  using namespace std::chrono_literals;
  REQUIRE_MESSAGE(f.wait_for(10s) == std::future_status::ready, "the command never completed");
  return f.get();
}

/// A command's outcome (waited for).
template <class Client, class... Args>
RedisOutcome call(Client& client, const Args&... args) {
  std::future<RedisOutcome> f = launch(client, args...);
  return await(f);
}

/// A command's outcome, REQUIREd to be without ErrorCode.
template <class Client, class... Args>
RedisOutcome ok(Client& client, const Args&... args) {
  RedisOutcome o = call(client, args...);
  INFO("error: " << o.ec.message());
  REQUIRE_FALSE(o.ec);
  return o;
}

/// connect() waited for (10 s).
inline ErrorCode connectNow(RedisClient& client, std::string_view host, unsigned short port) {
  using namespace std::chrono_literals;
  auto p = std::make_shared<std::promise<ErrorCode>>();
  auto f = p->get_future();
  client.connect(host, port, [p](ErrorCode ec) { p->set_value(ec); });
  REQUIRE_MESSAGE(f.wait_for(10s) == std::future_status::ready, "connect never completed");
  return f.get();
}

}  // namespace netbuf::test
