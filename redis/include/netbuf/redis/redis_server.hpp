#pragma once
// RedisServer: an in-memory Redis server (RedisKeyspace) speaking RESP2 and RESP3 on netbuf's
// transport, for redis-cli, redis-benchmark and every Redis client library.
//
//     RedisServer::Options o;
//     o.host = "127.0.0.1";
//     o.port = 6379;                       // 0: any free port (port() says which)
//     o.threads = 4;                       // loops, and keyspace shards (see Threads below)
//     RedisServer server(o);
//     server.start();                      // the server's own loops
//     ...
//     server.shutdownGracefully(5s);
//
// or, like HttpServer, on loops of the caller's (one keyspace shard per loop of the group):
//
//     EventLoopGroup group(4);
//     RedisServer server;
//     auto channel = server.bind(group, "127.0.0.1", 6379);
//
// Per connection, one handler ("redis-server", behind "redis-idle" when Options::idleTimeout is
// set, and behind "tls", an SslHandler, when Options::tls is) drives a RedisRequestDecoder directly
// (no pipeline hop per command) and keeps the connection's RedisSession. Each read is one batch:
// the commands decoded from it run in order and all their replies go into one output buffer,
// written and flushed once when the read ends. Each reply is written in the protocol the session
// has when its command runs, so a HELLO 3 in the middle of a pipeline switches the replies that
// follow it. Like redis-server:
//  - a RedisProtocolError answers "-ERR <what()>\r\n" after the replies to the commands before it,
//    and the connection closes once that is written;
//  - a command that sets session.closeAfterReply (QUIT) is the batch's last: the commands after
//    it are not run, and the connection closes once its reply is written;
//  - Options::maxClients: a connection over the limit is answered "-ERR max number of clients
//    reached\r\n" and closed;
//  - Options::idleTimeout (Redis's `timeout`): a connection with no traffic for that long closes;
//  - every 100 ms each loop runs RedisKeyspace::sweepExpired() on its shard (Redis's active
//    expire cycle; keys also expire lazily when touched).
// Backpressure: while the channel is not writable (the peer does not read its replies) or too many
// replies wait for other shards, the connection stops reading.
//
// Threads and shards. With one loop (Options::threads == 1, or a group of one) there is one
// keyspace and every command runs inline on the connection's loop, exactly as in redis-server:
// no command is looked up for routing, nothing is posted. With N > 1 loops there are N keyspaces,
// shard i owned by loop i and touched only on loop i's thread (no locks around a keyspace).
// Connections are spread over the loops round robin. A key belongs to shard
// keyHashSlot(key) % N, where keyHashSlot is Redis Cluster's CRC16 slot (0..16383) of the key's
// hash tag: the part between the first '{' and the next '}' when that part is not empty, else the
// whole key. Each command's keys are found from RedisKeyspace::findCommand()'s spec (firstKey,
// lastKey, step); then:
//  - keyless commands (PING, ECHO, HELLO, CLIENT, CONFIG, COMMAND, QUIT, SELECT, INFO...) and
//    commands whose keys all belong to the connection's own shard run inline;
//  - a command whose keys all belong to one other shard is posted to that shard's loop, which
//    runs it and posts the reply bytes back;
//  - MGET, MSET, DEL, UNLINK and EXISTS (and TOUCH, should the keyspace gain it) whose keys span
//    shards are split into one sub-command per shard and the replies combined (MGET's values in the
//    order of its keys, the integers summed, MSET's +OK once every part has answered); DBSIZE sums
//    every shard's count, KEYS concatenates every shard's matches (shard by shard), FLUSHALL and
//    FLUSHDB flush every shard;
//  - any other command whose keys span shards (MSETNX, and RENAME, SMOVE, LMOVE... should the
//    keyspace gain them) is refused with Redis Cluster's "-CROSSSLOT Keys in request don't hash
//    to the same slot": give its keys one hash tag ({user1}:a, {user1}:b) to keep them on one
//    shard.
// A connection numbers its replies (a FIFO of reply slots): a reply that another shard produces
// fills its slot whenever it comes back, and slots are written strictly in command order, so a
// pipelined client sees its replies in the order of its commands. Each connection posts the
// commands of one read to a given shard as one task, and that shard answers them with one task.
//
// How sharding differs from redis-server's single thread: redis-server runs one command at a
// time, so every command is atomic and all clients observe one total order of commands. Here a
// command on one shard is still atomic and the commands of one connection still run in its order
// (every key lives on one shard, and a connection's commands for a shard reach it in order, in
// FIFO tasks), but (1) a command split over shards is not atomic: another connection can observe
// an MSET half applied, an MGET or DBSIZE or KEYS can combine values and counts taken at slightly
// different moments on different shards, and a FLUSHALL empties the shards one after another;
// (2) commands of different connections on different shards have no common order: two clients
// writing keys of two shards may see each other's writes in different orders, where redis-server
// would give both one order (Redis Cluster has the same property across its nodes); (3) commands
// whose keys span shards other than the split ones above fail with -CROSSSLOT, as in Redis
// Cluster, instead of running; (4) keyless commands other than DBSIZE, KEYS, FLUSHALL and FLUSHDB
// run on the connection's own shard only, so one that reported on the data (INFO keyspace,
// RANDOMKEY, SCAN, should the keyspace gain them) would see that shard alone.
//
// Threading: start(), bind(), shutdownGracefully() and the destructor from any thread but a loop
// of the server's; stats(), port() and options() from any thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <netbuf/codec/redis/redis_decoder_options.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/server_channel.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace netbuf {

namespace detail {
struct RedisServerState;
}  // namespace detail

/// Counters of one server (all its connections).
struct RedisServerStats {
  std::uint64_t connections = 0;         ///< connections accepted (over the limit included)
  std::uint64_t commands = 0;            ///< commands run (each counts once, split or not)
  std::uint64_t protocolErrors = 0;      ///< connections closed on a RedisProtocolError
  std::uint64_t rejectedClients = 0;     ///< connections refused by Options::maxClients
  std::uint64_t idleClosed = 0;          ///< connections closed by Options::idleTimeout
  std::uint64_t crossShardCommands = 0;  ///< commands run on, or split over, other shards
};

class RedisServer {
 public:
  struct Options {
    /// Where start() listens (an IPv4 or IPv6 literal) and on which port (0: any free port).
    std::string host = "127.0.0.1";
    unsigned short port = 6379;
    /// start()'s loops, one keyspace shard each (see Threads and shards); at least 1.
    std::size_t threads = 1;
    /// The request decoder's limits (Redis's proto-max-bulk-len, client-query-buffer-limit...).
    RedisDecoderOptions decoder;
    /// Redis's maxclients: connections open at once; nullopt: no limit.
    std::optional<std::size_t> maxClients;
    /// Redis's timeout: a connection with no traffic for this long is closed; 0: never.
    std::chrono::milliseconds idleTimeout{0};
    /// Options of the accepted sockets (TCP_NODELAY is on by default).
    ChannelOptions channel;
    /// A server SslContext (SslContext::forServer): every connection runs TLS, with
    /// tls->newHandler() at the head of its pipeline (redis-cli --tls). nullptr: plain TCP.
    std::shared_ptr<SslContext> tls;
  };

  RedisServer();
  explicit RedisServer(Options options);
  /// Shuts down what is still running (shutdownGracefully with no wait for connections).
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// Starts Options::threads loops of the server's own and listens on Options::host and
  /// Options::port. Throws std::system_error when the address cannot be bound,
  /// IllegalStateError when the server has started or bound already.
  void start();
  /// Listens on host:port (0: any free port) on group's loops, one keyspace shard per loop
  /// (Options::threads is not used). Keep the returned channel: the server holds its listeners
  /// weakly (each one's child handler holds the server's state). Several binds must use the same
  /// group (IllegalStateError otherwise, or after start()).
  [[nodiscard]] std::shared_ptr<ServerChannel> bind(EventLoopGroup& group, const std::string& host,
                                                    unsigned short port);

  /// The port the first listener is bound to (0 before start()/bind()).
  unsigned short port() const noexcept;
  /// The number of keyspace shards (the loops served; 0 before start()/bind()).
  std::size_t shards() const noexcept;

  /// Stops accepting, lets every connection write the replies to the commands it has read (those
  /// waiting for another shard included), then closes it; then stops the expiry sweeps and, after
  /// start(), the server's loops. Returns false when connections were still open after timeout
  /// (they are closed then). Idempotent. Any thread but a loop's.
  bool shutdownGracefully(std::chrono::milliseconds timeout);

  RedisServerStats stats() const noexcept;
  const Options& options() const noexcept;

  /// Redis Cluster's hash slot of a key (CRC16-CCITT/XMODEM of its hash tag, mod 16384).
  static unsigned keyHashSlot(std::string_view key) noexcept;

 private:
  std::shared_ptr<detail::RedisServerState> state_;
  std::unique_ptr<EventLoopGroup> ownGroup_;    // start()'s loops
  std::shared_ptr<ServerChannel> ownListener_;  // start()'s listener
};

}  // namespace netbuf
