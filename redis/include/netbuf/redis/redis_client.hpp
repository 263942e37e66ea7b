#pragma once
// RedisClient: one connection to a Redis server on netbuf's transport, every command an Asio
// operation, pipelined.
//
//     EventLoopGroup group(1);
//     RedisClient client(group);
//     client.connect("127.0.0.1", 6379, [](ErrorCode ec) { ... });
//     client.command([](ErrorCode ec, RedisReply r) { ... }, "SET", "k", 42);
//     RedisReply r = co_await client.command(asio::use_awaitable, "GET", "k");
//
// Completion: void(ErrorCode, RedisReply) for commands, void(ErrorCode) for connect(), through any
// completion token (a callback, use_awaitable, use_future, deferred). A reply of any type
// completes with no error, server error replies included (reply.isError(); redisErrorCode() gives
// "ERR", "WRONGTYPE"...). Errors are the transport's (connection refused...), asio::error::
// operation_aborted (cancelled) or RedisClientErrc (redis_client_errc.hpp).
//
// Arguments: any mix of string-like values (std::string_view, std::string, const char*) and
// integers (formatted in decimal), or a span of views. They are encoded into a buffer before the
// initiating function returns: the caller's memory is not used afterwards.
//
// Pipelining: a command is written as soon as the connection is ready, without waiting for the
// replies of earlier ones; commands issued in the same turn of the client's loop go out in one
// flush (one gather write). Redis answers in order, so replies are matched to commands first in,
// first out.
//
// Connection: connect() opens it (and completes once the handshake is done); with
// Options::autoConnect a command issued while there is none opens one to the last address
// connect() named, or Options::host and port ("lazy connect"), also after the server closed the
// previous one. Commands issued while it is being made wait and go out once it is ready. On each
// new connection the client first sends the handshake Options ask for and waits for its replies:
// HELLO 3 (Options::protocol Resp3, with AUTH and SETNAME in it), or AUTH, then SELECT; an error
// reply fails the connection (RedisClientErrc::handshakeFailed), and so does no reply within
// Options::connectTimeout (commandTimeout when that is shorter), counted from the handshake's
// start (RedisClientErrc::timedOut). State set by commands (SELECT, CLIENT TRACKING,
// subscriptions) is not restored on a new connection.
//
// RESP3: Options::protocol = Resp3, or a HELLO 3 of the caller's (hello(token, 3)), switches the
// connection. Push messages (RespType::Push: Pub/Sub messages, CLIENT TRACKING invalidations) are
// not replies to a command: they go to the push handler (setPushHandler), in the order they came.
// The Pub/Sub commands (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs) are answered by
// push messages only, one per channel: those confirmations go to the push handler too, and the
// command completes with a Null reply once the server has confirmed every channel it names (the
// argument-less UNSUBSCRIBEs: on the first confirmation), or with its error reply. On a RESP2
// connection they fail with RedisClientErrc::pubsubNeedsResp3 (RESP2 sends Pub/Sub messages as
// ordinary replies, which would match no command).
//
// Cancellation: a bound cancellation slot completes the command with operation_aborted at once.
// Terminal and partial cancellation work at any time: a command already written stays in the
// FIFO and its reply, when it comes, is discarded. Total cancellation (which promises no side
// effect) only takes a command not yet written. Options::commandTimeout fails a command the same
// way (RedisClientErrc::timedOut) when its reply has not come in time after it was issued; the
// connection stays up.
//
// Threading: the connection lives on one loop of the group (picked at construction). Every member
// function may be called from any thread; the work hops to the loop. Completions run on the
// handler's associated executor, by default that loop; the push handler runs on the loop. close()
// and the destructor fail what is pending (RedisClientErrc::clientClosed) and close the
// connection; the group must outlive the client.

#include <array>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <charconv>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/redis/redis_decoder_options.hpp>
#include <netbuf/codec/redis/redis_reply.hpp>
#include <netbuf/codec/redis/resp_type.hpp>
#include <netbuf/redis/redis_client_errc.hpp>
#include <netbuf/transport/detail/async_op.hpp>
#include <netbuf/transport/error_code.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/event_loop_executor.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace netbuf {

namespace detail {
struct RedisClientState;

/// A command's encoded bytes and what the client must know about it to match its replies.
struct RedisPreparedCommand {
  enum class Kind : std::uint8_t {
    Plain,
    Hello,      // HELLO n: a success switches the connection to RESP n
    Reset,      // RESET: a success switches it back to RESP2
    Subscribe,  // a Pub/Sub (un)subscription: answered by push confirmations
  };
  ByteBuf bytes;  // empty for an empty command
  Kind kind = Kind::Plain;
  RespProtocol helloProtocol = RespProtocol::Resp2;  // Kind::Hello
  std::string_view pushKind;      // Kind::Subscribe: "subscribe", "punsubscribe"... (static text)
  std::size_t confirmations = 0;  // Kind::Subscribe: pushes that answer it (1 for no channel)

  /// Encodes args (the name first) as a RESP request and classifies it.
  static RedisPreparedCommand prepare(std::span<const std::string_view> args);
};

/// An argument command() formats: text, or an integer (bool and characters excluded).
template <class T>
concept RedisArgument = std::convertible_to<const T&, std::string_view> ||
    (std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char> &&
     !std::same_as<T, wchar_t> && !std::same_as<T, char8_t> && !std::same_as<T, char16_t> &&
     !std::same_as<T, char32_t>);

/// Room for the longest integer's decimal text (a sign and 20 digits).
inline constexpr std::size_t kRedisIntegerChars = 24;

template <class T>
std::string_view redisArgumentView(const T& arg, char* scratch) noexcept {
  if constexpr (std::convertible_to<const T&, std::string_view>) {
    return std::string_view(arg);
  } else {
    const auto r = std::to_chars(scratch, scratch + kRedisIntegerChars, arg);
    return std::string_view(scratch, static_cast<std::size_t>(r.ptr - scratch));
  }
}
}  // namespace detail

class RedisClient {
 public:
  struct Options {
    /// Where a command issued with no connection connects (autoConnect) when connect() named no
    /// address yet; empty: nowhere.
    std::string host;
    unsigned short port = 6379;
    /// Open a connection for a command issued while there is none (see the header comment).
    bool autoConnect = true;
    /// Resp3: HELLO 3 is the first command of every connection.
    RespProtocol protocol = RespProtocol::Resp2;
    /// AUTH on every connection (in HELLO with Resp3); username empty: the default user.
    std::string username;
    std::string password;
    /// CLIENT SETNAME on every connection (in HELLO with Resp3); empty: none.
    std::string clientName;
    /// SELECT on every connection when not 0.
    int database = 0;
    /// The TCP connect's limit (asio::error::timed_out), then, counted afresh, the handshake's
    /// (RedisClientErrc::timedOut; see the header comment).
    std::chrono::milliseconds connectTimeout{10'000};
    /// A command without a reply this long after it was issued fails with timedOut; 0: none.
    /// Bounds the handshake too when shorter than connectTimeout.
    std::chrono::milliseconds commandTimeout{0};
    RedisDecoderOptions decoder;  ///< reply limits
    ChannelOptions channel;
  };
  using Completion = std::function<void(ErrorCode, RedisReply)>;
  using ConnectCompletion = std::function<void(ErrorCode)>;
  using PushHandler = std::function<void(RedisReply)>;

  explicit RedisClient(EventLoopGroup& group);
  RedisClient(EventLoopGroup& group, Options options);
  /// The connection lives on `loop` (one of group's).
  RedisClient(EventLoopGroup& group, EventLoop& loop, Options options);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  /// Connects to host:port (remembered for later automatic connections) and completes once the
  /// handshake is done. With a connection already open or being made, completes when that one is
  /// ready (its address unchanged).
  template <class Token>
  auto connect(std::string_view host, unsigned short port, Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(InitiateConnect{state_}, token,
                                                               std::string(host), port, true);
  }
  /// The same to Options::host and port (or the last address connect() named).
  template <class Token>
  auto connect(Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode)>(InitiateConnect{state_}, token,
                                                               std::string(), 0, false);
  }

  /// Sends a command: its name, then its arguments (see the header comment).
  ///     client.command(token, "SET", key, 42);
  template <class Token, detail::RedisArgument... Args>
  requires(sizeof...(Args) > 0) auto command(Token&& token, const Args&... args) {
    char scratch[sizeof...(Args)][detail::kRedisIntegerChars];
    std::size_t i = 0;
    const std::array<std::string_view, sizeof...(Args)> views = {
        detail::redisArgumentView(args, scratch[i++])...};
    return command(std::forward<Token>(token), std::span<const std::string_view>(views));
  }
  /// Sends args as a command (args[0] is the name).
  template <class Token>
  auto command(Token&& token, std::span<const std::string_view> args) {
    return boost::asio::async_initiate<Token, void(ErrorCode, RedisReply)>(
        InitiateCommand{state_}, token, detail::RedisPreparedCommand::prepare(args));
  }
  /// HELLO protover: switches the connection to RESP protover (2 or 3); the reply is the server's
  /// description (a Map in RESP3).
  template <class Token>
  auto hello(Token&& token, int protover) {
    return command(std::forward<Token>(token), "HELLO", protover);
  }

  /// Receives the push messages (see the header comment), on the client's loop; an empty function
  /// drops them. Any thread: takes effect on the loop, before the commands issued after it.
  void setPushHandler(PushHandler handler);

  /// Fails what is pending (RedisClientErrc::clientClosed) and closes the connection; later
  /// commands fail the same way. Idempotent; from another thread it waits for the loop to do it.
  void close();

  /// Whether a connection is open and its handshake done. Any thread.
  bool isConnected() const noexcept;
  /// The protocol the connection speaks now (Resp2 until a HELLO 3 succeeded). Any thread.
  RespProtocol protocol() const noexcept;
  /// Commands issued and not completed yet. Any thread.
  std::size_t pendingCommands() const noexcept;
  /// Connections made since construction. Any thread.
  std::uint64_t connectionsMade() const noexcept;
  EventLoop& eventLoop() const noexcept;
  const Options& options() const noexcept;

 private:
  struct InitiateCommand {
    std::shared_ptr<detail::RedisClientState> state;
    template <class Handler>
    void operator()(Handler&& handler, detail::RedisPreparedCommand cmd) const {
      auto slot = boost::asio::get_associated_cancellation_slot(handler);
      detail::SharedCompletion<std::decay_t<Handler>, EventLoopExecutor> completion(
          std::forward<Handler>(handler), loopExecutor(*state));
      // The cancellation handler goes in before the command starts: once started, it may
      // complete on another thread (the handler's executor), where the caller may emit on the
      // slot or reuse it; the slot is not touched after start().
      const std::uint64_t id = reserveId(*state);
      if (slot.is_connected()) slot.template emplace<Canceller>(Canceller{state, id});
      try {
        start(state, id, std::move(cmd), [completion](ErrorCode ec, RedisReply reply) {
          completion.complete(ec, std::move(reply));
        });
      } catch (...) {
        if (slot.is_connected()) slot.clear();  // nothing was started
        throw;
      }
      completion.initiated();
    }
  };
  struct InitiateConnect {
    std::shared_ptr<detail::RedisClientState> state;
    template <class Handler>
    void operator()(Handler&& handler, std::string host, unsigned short port,
                    bool setAddress) const {
      detail::SharedCompletion<std::decay_t<Handler>, EventLoopExecutor> completion(
          std::forward<Handler>(handler), loopExecutor(*state));
      startConnect(state, std::move(host), port, setAddress,
                   [completion](ErrorCode ec) { completion.complete(ec); });
      completion.initiated();
    }
  };
  struct Canceller {
    std::weak_ptr<detail::RedisClientState> state;
    std::uint64_t id;
    void operator()(boost::asio::cancellation_type type) const;
  };

  static EventLoopExecutor loopExecutor(detail::RedisClientState& state) noexcept;
  /// A new command id (what a Canceller names).
  static std::uint64_t reserveId(detail::RedisClientState& state) noexcept;
  /// Queues the command, of id `id` (reserveId), on the client's loop.
  static void start(const std::shared_ptr<detail::RedisClientState>& state, std::uint64_t id,
                    detail::RedisPreparedCommand cmd, Completion done);
  static void startConnect(const std::shared_ptr<detail::RedisClientState>& state, std::string host,
                           unsigned short port, bool setAddress, ConnectCompletion done);

  std::shared_ptr<detail::RedisClientState> state_;
};

}  // namespace netbuf
