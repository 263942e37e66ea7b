#pragma once
// RedisKeyspace: an in-memory Redis database (one shard of one, or of several when a RedisServer
// runs N loops): strings, lists, sets, hashes and sorted sets with expiry, and the commands that
// read and change them, answering with the bytes redis-server 7.0 answers (errors included) in
// the session's protocol.
//
//   RedisKeyspace db;
//   RedisSession session;
//   ByteBuf out = alloc.buffer(256);
//   RespWriter w(out, session.protocol);
//   db.execute(command, w, session);            // SET k v  ->  +OK\r\n
//
// Expiry: lazily on every access to a key, plus sweepExpired() (the server calls it every 100 ms,
// Redis's active-expire cycle) which samples keys with a deadline and removes the expired ones.
// Time is the steady clock in milliseconds (nowMs()); tests may set a clock of their own.
//
// Threading: not thread-safe. One keyspace belongs to one loop; a RedisServer with N loops holds N
// keyspaces and routes each key to its shard (see redis_server.hpp).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <netbuf/codec/redis/redis_command.hpp>
#include <netbuf/codec/redis/resp_writer.hpp>
#include <netbuf/redis/redis_session.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf {

/// What a command is, for routing (Redis's COMMAND INFO fields): arity (negative: at least -n
/// arguments including the name), the first key's index, the last key's index (-1: the last
/// argument) and the step between keys; firstKey 0 for a command with no key.
struct RedisCommandSpec {
  std::string_view name;  // lower case, as COMMAND reports it
  int arity = 0;
  int firstKey = 0;
  int lastKey = 0;
  int step = 0;
  /// Whether the command writes (COMMAND's "write" flag).
  bool write = false;
  /// COMMAND's flags and ACL categories, space-separated ("write denyoom fast",
  /// "@write @string @fast").
  std::string_view flags;
  std::string_view categories;
};

class RedisKeyspace {
 public:
  using Clock = std::function<std::int64_t()>;  // milliseconds

  RedisKeyspace();
  ~RedisKeyspace();
  RedisKeyspace(const RedisKeyspace&) = delete;
  RedisKeyspace& operator=(const RedisKeyspace&) = delete;

  /// Runs cmd and writes its reply (one RESP value) through out, as redis-server 7.0 would for a
  /// client of session.protocol; HELLO changes session.protocol (and the caller should give the
  /// writer the new one for the following replies). Unknown commands, wrong arity, wrong types
  /// and bad numbers are error replies, not exceptions.
  void execute(const RedisCommand& cmd, RespWriter& out, RedisSession& session);

  /// The spec of a command by name (any case), or nullptr for an unknown command.
  static const RedisCommandSpec* findCommand(std::string_view name) noexcept;
  /// Every command the keyspace implements (COMMAND, COMMAND COUNT).
  static std::span<const RedisCommandSpec> commands() noexcept;

  // ---- typed access (used by a sharded server to combine multi-key commands, and by tests) ----
  /// Number of keys (DBSIZE); expired keys not yet swept may be counted, as in Redis.
  std::size_t size() const noexcept;
  /// Removes every key (FLUSHALL).
  void clear();
  /// Appends the names of the live keys matching a glob pattern (KEYS's stringmatch rules).
  void keys(std::string_view pattern, std::vector<std::string>& out);
  /// Removes up to `budget` expired keys; returns how many were removed.
  std::size_t sweepExpired(std::size_t budget = 200);

  /// The clock in milliseconds; the default is std::chrono::steady_clock.
  void setClock(Clock clock);
  std::int64_t nowMs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace netbuf
