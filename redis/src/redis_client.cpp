// RedisClient (redis_client.hpp): the connection, its FIFO of commands waiting for replies and the
// pipeline handler that decodes them. Every piece of state is touched on the client's loop only;
// start(), connect, cancellation, setPushHandler() and close() hop there. The atomics are
// read-only views for other threads.
//
// Invariants (loop thread):
//  - conn is the current connection (null when none); its inFlight holds, in the order written,
//    every command written on it whose reply has not come: replies pop its front. An entry whose
//    `done` is empty was cancelled or timed out (its reply is discarded when it comes) or belongs
//    to the handshake.
//  - waiting holds the commands issued while the connection is being made or is doing its
//    handshake, in order; they are written when it becomes ready (phase Ready), never before.
//  - A connection that failed is detached (conn reset, its inFlight failed) at once; the handler
//    of a detached connection delivers nothing more.

#include <algorithm>
#include <boost/asio/error.hpp>
#include <deque>
#include <future>
#include <limits>
#include <netbuf/codec/redis/redis_protocol_error.hpp>
#include <netbuf/codec/redis/redis_reply_decoder.hpp>
#include <netbuf/codec/redis/resp_writer.hpp>
#include <netbuf/redis/redis_client.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <string>
#include <vector>

namespace netbuf {

namespace {

class RedisClientCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "netbuf.redis_client"; }
  std::string message(int ev) const override {
    switch (static_cast<RedisClientErrc>(ev)) {
      case RedisClientErrc::notConnected:
        return "not connected to a Redis server";
      case RedisClientErrc::connectionClosed:
        return "the connection closed before the reply came";
      case RedisClientErrc::protocolError:
        return "the server's reply is not valid RESP";
      case RedisClientErrc::timedOut:
        return "no reply in time (the command timeout, or the connect timeout for the handshake)";
      case RedisClientErrc::clientClosed:
        return "the client was closed";
      case RedisClientErrc::handshakeFailed:
        return "the connection handshake (HELLO, AUTH, SELECT) got an error reply";
      case RedisClientErrc::pubsubNeedsResp3:
        return "Pub/Sub commands need a RESP3 connection";
      case RedisClientErrc::emptyCommand:
        return "a command needs at least a name";
    }
    return "unknown Redis client error";
  }
};

bool equalsUpper(std::string_view s, std::string_view upper) noexcept {
  if (s.size() != upper.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

using Clock = std::chrono::steady_clock;
constexpr Clock::time_point kNever = Clock::time_point::max();

}  // namespace

const std::error_category& redisClientCategory() noexcept {
  static const RedisClientCategory category;
  return category;
}

std::string_view redisErrorCode(const RespValue& value) noexcept {
  if (!value.isError()) return {};
  const std::string_view text = value.payload();
  return text.substr(0, std::min(text.find(' '), text.size()));
}

namespace detail {

RedisPreparedCommand RedisPreparedCommand::prepare(std::span<const std::string_view> args) {
  RedisPreparedCommand p;
  if (args.empty()) return p;
  std::size_t bound = 16;
  for (std::string_view a : args) bound += a.size() + 24;
  p.bytes = ByteBufAllocator::defaultAllocator().buffer(bound);
  RespWriter(p.bytes).command(args);

  const std::string_view name = args[0];
  if (equalsUpper(name, "HELLO")) {
    // HELLO with no version leaves the protocol as it is; only 2 and 3 are valid versions.
    if (args.size() >= 2 && (args[1] == "2" || args[1] == "3")) {
      p.kind = Kind::Hello;
      p.helloProtocol = args[1] == "3" ? RespProtocol::Resp3 : RespProtocol::Resp2;
    }
  } else if (equalsUpper(name, "RESET")) {
    p.kind = Kind::Reset;
  } else {
    // The push kind that confirms each channel of the command, as Redis spells it.
    static constexpr std::string_view kPubSub[][2] = {
        {"SUBSCRIBE", "subscribe"},       {"PSUBSCRIBE", "psubscribe"},
        {"SSUBSCRIBE", "ssubscribe"},     {"UNSUBSCRIBE", "unsubscribe"},
        {"PUNSUBSCRIBE", "punsubscribe"}, {"SUNSUBSCRIBE", "sunsubscribe"},
    };
    for (const auto& entry : kPubSub) {
      if (!equalsUpper(name, entry[0])) continue;
      p.kind = Kind::Subscribe;
      p.pushKind = entry[1];
      // One confirmation per channel named; the argument-less UNSUBSCRIBEs get at least one
      // (one per channel still subscribed, or one saying there is none): the first is taken.
      p.confirmations = std::max<std::size_t>(args.size() - 1, 1);
      break;
    }
  }
  return p;
}

/// One command: issued, then waiting or in flight.
struct RedisClientCmd {
  std::uint64_t id = 0;
  RedisPreparedCommand cmd;      // its bytes until written
  RedisClient::Completion done;  // empty: nobody waits (cancelled, timed out, handshake)
  Clock::time_point deadline = kNever;
  bool handshake = false;
};

struct RedisClientConn {
  std::shared_ptr<SocketChannel> channel;
  std::deque<RedisClientCmd> inFlight;
  std::size_t handshakeLeft = 0;  // handshake replies still to come
  // The protocol the server will speak once it has run the commands written so far (a HELLO 3
  // written switches it): what a Pub/Sub command is checked against.
  RespProtocol sentProtocol = RespProtocol::Resp2;
  bool detached = false;  // failed or closed: its handler delivers nothing more
};

struct RedisClientState : std::enable_shared_from_this<RedisClientState> {
  enum class Phase : std::uint8_t { Idle, Connecting, Handshaking, Ready, Closed };

  RedisClientState(EventLoopGroup& g, EventLoop& l, RedisClient::Options o)
      : group(&g), loop(&l), options(std::move(o)), host(options.host), port(options.port) {}

  EventLoopGroup* group;
  EventLoop* loop;
  RedisClient::Options options;

  // ---- loop only
  std::string host;
  unsigned short port;
  Phase phase = Phase::Idle;
  std::shared_ptr<RedisClientConn> conn;
  std::shared_ptr<ConnectAttempt> attempt;
  std::deque<RedisClientCmd> waiting;
  std::vector<RedisClient::ConnectCompletion> connectWaiters;
  RedisClient::PushHandler pushHandler;
  bool flushScheduled = false;
  ScheduledTask timer;
  bool timerArmed = false;

  // ---- any thread (written on the loop, or counted by start())
  std::atomic<std::uint64_t> nextId{1};
  std::atomic<std::size_t> pending{0};
  std::atomic<std::uint64_t> made{0};
  std::atomic<bool> connected{false};
  std::atomic<RespProtocol> protocol{RespProtocol::Resp2};

  // ---- all below on the loop
  void submit(RedisClientCmd c);
  void requestConnect(std::string h, unsigned short p, bool setAddress,
                      RedisClient::ConnectCompletion done);
  void startConnect();
  void onConnected(const std::shared_ptr<RedisClientConn>& c, ErrorCode ec,
                   std::shared_ptr<SocketChannel> ch);
  void sendHandshake();
  void becomeReady();
  void write(RedisClientCmd c);
  void scheduleFlush();
  void onReply(const std::shared_ptr<RedisClientConn>& c, RedisReply reply);
  void onPush(RedisReply reply);
  void failConnection(const std::shared_ptr<RedisClientConn>& c, ErrorCode ec);
  void detach(const std::shared_ptr<RedisClientConn>& c, ErrorCode ec);
  void failWaiting(ErrorCode ec);
  void cancel(std::uint64_t id, bool sentToo);
  void armTimer();
  void expire();
  void closeAll();

  void complete(RedisClientCmd& c, ErrorCode ec, RedisReply reply = {}) {
    if (!c.done) return;
    RedisClient::Completion done = std::move(c.done);
    c.done = nullptr;
    pending.fetch_sub(1, std::memory_order_relaxed);
    done(ec, std::move(reply));
  }
  Clock::time_point deadlineFromNow() const {
    return options.commandTimeout.count() > 0 ? loop->now() + options.commandTimeout : kNever;
  }
  /// The handshake's replies are due within connectTimeout (commandTimeout when that is shorter),
  /// with or without a command timeout: a peer that accepts and never answers must not hold
  /// connect() and the commands waiting for the connection forever.
  Clock::time_point handshakeDeadlineFromNow() const {
    std::chrono::milliseconds limit = options.connectTimeout;
    if (options.commandTimeout.count() > 0 &&
        (limit.count() <= 0 || options.commandTimeout < limit)) {
      limit = options.commandTimeout;
    }
    return limit.count() > 0 ? loop->now() + limit : kNever;
  }
};

namespace {

/// The pipeline stage of one connection: bytes to RedisReplies, handed to the state.
class RedisClientHandler final : public ChannelHandler {
 public:
  RedisClientHandler(std::weak_ptr<RedisClientState> state, std::shared_ptr<RedisClientConn> conn,
                     const RedisDecoderOptions& decoder, ByteBufAllocator& alloc)
      : state_(std::move(state)), conn_(std::move(conn)), decoder_(decoder, alloc) {}

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    bool failed = false;
    auto onError = [&](std::exception_ptr) { failed = true; };
    if (msg.is<ByteBuf>()) {
      decoder_.channelRead(msg.take<ByteBuf>(), replies_, onError);
    } else if (msg.is<AnyByteBuf>()) {
      decoder_.channelRead(msg.take<AnyByteBuf>(), replies_, onError);
    } else if (msg.is<CompositeByteBuf>()) {
      decoder_.channelRead(msg.take<CompositeByteBuf>(), replies_, onError);
    } else {
      return ctx.fireChannelRead(std::move(msg));
    }
    // Taken out first: a completion may close the connection, whose channelInactive runs while
    // this loop is still going, and whatever a completion causes must not find this batch in
    // replies_. The vector goes back afterwards, so that its capacity serves the next read.
    std::vector<RedisReply> replies;
    replies.swap(replies_);
    for (RedisReply& r : replies) {
      if (conn_->detached) return;
      if (auto s = state_.lock()) s->onReply(conn_, std::move(r));
    }
    replies.clear();
    if (replies_.capacity() < replies.capacity()) replies_.swap(replies);
    // The replies before the bad bytes were good: delivered first, then the connection fails.
    if (failed && !conn_->detached) {
      if (auto s = state_.lock()) s->failConnection(conn_, RedisClientErrc::protocolError);
    }
  }

  void channelReadComplete(ChannelHandlerContext& ctx) override {
    decoder_.channelReadComplete();
    ctx.fireChannelReadComplete();
  }

  void channelInactive(ChannelHandlerContext& ctx) override {
    if (!conn_->detached) {
      if (auto s = state_.lock()) s->detach(conn_, RedisClientErrc::connectionClosed);
    }
    // Break the cycle conn -> channel -> pipeline -> this handler -> conn.
    conn_->channel.reset();
    ctx.fireChannelInactive();
  }

  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr) override { ctx.close(); }

  MessageTypes inboundIn() const noexcept override { return kByteMessages; }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

 private:
  std::weak_ptr<RedisClientState> state_;
  std::shared_ptr<RedisClientConn> conn_;
  RedisReplyDecoder decoder_;
  std::vector<RedisReply> replies_;
};

/// Closes a channel from a fresh loop task: not from inside its own handler's read, where the
/// close would run channelInactive re-entrantly.
void closeSoon(EventLoop& loop, const std::shared_ptr<SocketChannel>& ch) {
  if (ch == nullptr) return;
  loop.execute([ch] { ch->close(); });
}

/// A handshake command (the client's own: nobody waits for its reply).
RedisClientCmd handshakeCommand(std::span<const std::string_view> args,
                                Clock::time_point deadline) {
  RedisClientCmd c;
  c.cmd = RedisPreparedCommand::prepare(args);
  c.handshake = true;
  c.deadline = deadline;
  return c;
}

}  // namespace

void RedisClientState::submit(RedisClientCmd c) {
  if (phase == Phase::Closed) return complete(c, RedisClientErrc::clientClosed);
  if (!c.cmd.bytes) return complete(c, RedisClientErrc::emptyCommand);
  c.deadline = deadlineFromNow();
  switch (phase) {
    case Phase::Ready:
      write(std::move(c));
      break;
    case Phase::Idle:
      if (!options.autoConnect || host.empty()) {
        return complete(c, RedisClientErrc::notConnected);
      }
      waiting.push_back(std::move(c));
      startConnect();
      break;
    case Phase::Connecting:
    case Phase::Handshaking:
      waiting.push_back(std::move(c));
      break;
    case Phase::Closed:
      break;
  }
  armTimer();
}

void RedisClientState::requestConnect(std::string h, unsigned short p, bool setAddress,
                                      RedisClient::ConnectCompletion done) {
  if (phase == Phase::Closed) return done(RedisClientErrc::clientClosed);
  if (phase == Phase::Ready) return done(ErrorCode());
  if (phase == Phase::Idle) {
    if (setAddress) {
      host = std::move(h);
      port = p;
    }
    if (host.empty()) return done(RedisClientErrc::notConnected);
    connectWaiters.push_back(std::move(done));
    startConnect();
    return;
  }
  connectWaiters.push_back(std::move(done));
}

void RedisClientState::startConnect() {
  phase = Phase::Connecting;
  auto c = std::make_shared<RedisClientConn>();
  ConnectConfig config;
  config.group = group;
  config.options = options.channel;
  config.timeout = options.connectTimeout;
  std::weak_ptr<RedisClientState> weak = weak_from_this();
  ByteBufAllocator* alloc =
      options.channel.allocator ? options.channel.allocator : &ByteBufAllocator::defaultAllocator();
  config.handler = [weak, c, decoder = options.decoder, alloc](SocketChannel& ch) {
    ch.pipeline().addLast("redis-client",
                          std::make_unique<RedisClientHandler>(weak, c, decoder, *alloc));
  };
  ConnectDone done = [weak, c](ErrorCode ec, std::shared_ptr<SocketChannel> ch, bool onCaller) {
    auto self = weak.lock();
    if (self == nullptr || onCaller) {
      // The client is gone, or its loop refused the attempt (it has shut down: nothing of the
      // client runs any more).
      if (ch) ch->close();
      return;
    }
    self->onConnected(c, ec, std::move(ch));
  };
  attempt = makeTcpConnect(config, *loop, host, port, std::move(done));
  attempt->start();
}

void RedisClientState::onConnected(const std::shared_ptr<RedisClientConn>& c, ErrorCode ec,
                                   std::shared_ptr<SocketChannel> ch) {
  attempt.reset();
  if (phase != Phase::Connecting) {  // close() ran meanwhile
    if (ch) ch->close();
    return;
  }
  if (!ec && (ch == nullptr || !ch->isActive())) ec = RedisClientErrc::connectionClosed;
  if (ec) {
    if (ch) ch->close();
    phase = Phase::Idle;
    failWaiting(ec);
    return;
  }
  c->channel = std::move(ch);
  conn = c;
  made.fetch_add(1, std::memory_order_relaxed);
  phase = Phase::Handshaking;
  sendHandshake();
}

void RedisClientState::sendHandshake() {
  const Clock::time_point deadline = handshakeDeadlineFromNow();
  const std::string db = std::to_string(options.database);
  std::vector<RedisClientCmd> cmds;
  if (options.protocol == RespProtocol::Resp3) {
    std::vector<std::string_view> hello = {"HELLO", "3"};
    if (!options.password.empty()) {
      hello.insert(hello.end(), {"AUTH",
                                 options.username.empty() ? std::string_view("default")
                                                          : std::string_view(options.username),
                                 options.password});
    }
    if (!options.clientName.empty()) hello.insert(hello.end(), {"SETNAME", options.clientName});
    cmds.push_back(handshakeCommand(hello, deadline));
    cmds.back().cmd.kind = RedisPreparedCommand::Kind::Hello;
    cmds.back().cmd.helloProtocol = RespProtocol::Resp3;
  } else {
    if (!options.password.empty()) {
      std::vector<std::string_view> auth = {"AUTH"};
      if (!options.username.empty()) auth.push_back(options.username);
      auth.push_back(options.password);
      cmds.push_back(handshakeCommand(auth, deadline));
    }
    if (!options.clientName.empty()) {
      const std::string_view setname[] = {"CLIENT", "SETNAME", options.clientName};
      cmds.push_back(handshakeCommand(setname, deadline));
    }
  }
  if (options.database != 0) {
    const std::string_view select[] = {"SELECT", db};
    cmds.push_back(handshakeCommand(select, deadline));
  }
  if (cmds.empty()) return becomeReady();
  conn->handshakeLeft = cmds.size();
  for (RedisClientCmd& c : cmds) write(std::move(c));
  // The timer may be armed for a later deadline (a waiting command's): armed again for this one.
  if (timerArmed) {
    timer.cancel();
    timerArmed = false;
  }
  armTimer();
}

void RedisClientState::becomeReady() {
  phase = Phase::Ready;
  connected.store(true, std::memory_order_relaxed);
  // Written in order; a completion run below (connect waiters) may issue more, which go out
  // after these.
  std::deque<RedisClientCmd> queued;
  queued.swap(waiting);
  for (RedisClientCmd& c : queued) {
    // A completion run by an earlier write (a refused Pub/Sub command) may have closed the client
    // or the connection: the rest then take the way of a new command.
    if (phase == Phase::Ready) {
      write(std::move(c));
    } else {
      submit(std::move(c));
    }
  }
  std::vector<RedisClient::ConnectCompletion> waiters;
  waiters.swap(connectWaiters);
  for (auto& w : waiters) w(ErrorCode());
  armTimer();
}

void RedisClientState::write(RedisClientCmd c) {
  if (c.cmd.kind == RedisPreparedCommand::Kind::Subscribe &&
      conn->sentProtocol != RespProtocol::Resp3) {
    return complete(c, RedisClientErrc::pubsubNeedsResp3);
  }
  if (c.cmd.kind == RedisPreparedCommand::Kind::Hello) conn->sentProtocol = c.cmd.helloProtocol;
  if (c.cmd.kind == RedisPreparedCommand::Kind::Reset) conn->sentProtocol = RespProtocol::Resp2;
  ByteBuf bytes = std::move(c.cmd.bytes);
  conn->inFlight.push_back(std::move(c));
  // Not flushed yet: the commands of this loop turn go out together.
  conn->channel->write(std::move(bytes));
  scheduleFlush();
}

void RedisClientState::scheduleFlush() {
  if (flushScheduled) return;
  flushScheduled = true;
  std::weak_ptr<RedisClientState> weak = weak_from_this();
  loop->execute([weak] {
    auto self = weak.lock();
    if (self == nullptr) return;
    self->flushScheduled = false;
    if (self->conn && self->conn->channel) self->conn->channel->flush();
  });
}

void RedisClientState::onReply(const std::shared_ptr<RedisClientConn>& c, RedisReply reply) {
  if (c != conn || c->detached) return;
  if (reply.isPush()) {
    // A Pub/Sub confirmation answers the command at the front when it is the one it confirms
    // (Redis runs commands in order: every earlier one has had its reply).
    const RespValue& root = reply.root();
    if (!c->inFlight.empty() && root.size() > 0) {
      RedisClientCmd& front = c->inFlight.front();
      const RespValue& kind = root[0];
      if (front.cmd.kind == RedisPreparedCommand::Kind::Subscribe &&
          (kind.type() == RespType::BulkString || kind.type() == RespType::SimpleString) &&
          kind.asString() == front.cmd.pushKind) {
        if (--front.cmd.confirmations == 0) {
          RedisClientCmd done = std::move(front);
          c->inFlight.pop_front();
          onPush(std::move(reply));
          complete(done, ErrorCode(), RedisReply());
          return;
        }
      }
    }
    return onPush(std::move(reply));
  }
  if (c->inFlight.empty()) {
    // A reply nobody asked for: the stream is out of step with the commands.
    return failConnection(c, RedisClientErrc::protocolError);
  }
  RedisClientCmd cmd = std::move(c->inFlight.front());
  c->inFlight.pop_front();
  if (!reply.isError()) {
    if (cmd.cmd.kind == RedisPreparedCommand::Kind::Hello) {
      protocol.store(cmd.cmd.helloProtocol, std::memory_order_relaxed);
    } else if (cmd.cmd.kind == RedisPreparedCommand::Kind::Reset) {
      protocol.store(RespProtocol::Resp2, std::memory_order_relaxed);
    }
  } else if (cmd.cmd.kind == RedisPreparedCommand::Kind::Hello) {
    // The switch did not happen: what was written after it speaks the old protocol.
    c->sentProtocol = protocol.load(std::memory_order_relaxed);
  }
  if (cmd.handshake) {
    if (reply.isError()) return failConnection(c, RedisClientErrc::handshakeFailed);
    if (--c->handshakeLeft == 0 && phase == Phase::Handshaking) becomeReady();
    return;
  }
  complete(cmd, ErrorCode(), std::move(reply));
}

void RedisClientState::onPush(RedisReply reply) {
  if (!pushHandler) return;
  // A copy: the handler may replace itself (setPushHandler on the loop) while it runs.
  RedisClient::PushHandler handler = pushHandler;
  try {
    handler(std::move(reply));
  } catch (...) {
    reportHandlerFailure(std::current_exception());
  }
}

void RedisClientState::failConnection(const std::shared_ptr<RedisClientConn>& c, ErrorCode ec) {
  if (c->detached) return;
  std::shared_ptr<SocketChannel> ch = c->channel;
  detach(c, ec);
  closeSoon(*loop, ch);
}

void RedisClientState::detach(const std::shared_ptr<RedisClientConn>& c, ErrorCode ec) {
  if (c->detached) return;
  c->detached = true;
  if (c != conn) return;
  conn.reset();
  connected.store(false, std::memory_order_relaxed);
  protocol.store(RespProtocol::Resp2, std::memory_order_relaxed);
  const bool handshaking = phase == Phase::Handshaking;
  if (phase != Phase::Closed) phase = Phase::Idle;
  // Out of the connection first: a completion below may issue commands (a new connection).
  std::deque<RedisClientCmd> inFlight;
  inFlight.swap(c->inFlight);
  for (RedisClientCmd& cmd : inFlight) complete(cmd, ec);
  // The commands waiting for this connection's handshake go with it.
  if (handshaking) failWaiting(ec);
}

void RedisClientState::failWaiting(ErrorCode ec) {
  std::deque<RedisClientCmd> queued;
  queued.swap(waiting);
  std::vector<RedisClient::ConnectCompletion> waiters;
  waiters.swap(connectWaiters);
  for (RedisClientCmd& c : queued) complete(c, ec);
  for (auto& w : waiters) w(ec);
}

void RedisClientState::cancel(std::uint64_t id, bool sentToo) {
  for (auto it = waiting.begin(); it != waiting.end(); ++it) {
    if (it->id != id) continue;
    RedisClientCmd c = std::move(*it);
    waiting.erase(it);
    return complete(c, boost::asio::error::operation_aborted);
  }
  if (!sentToo || conn == nullptr) return;
  for (RedisClientCmd& c : conn->inFlight) {
    if (c.id != id) continue;
    // Stays in the FIFO (its reply will come and is discarded): only the caller is told.
    return complete(c, boost::asio::error::operation_aborted);
  }
}

void RedisClientState::armTimer() {
  // Without a command timeout only a handshake has a deadline.
  if (timerArmed || (options.commandTimeout.count() <= 0 && phase != Phase::Handshaking)) return;
  // Deadlines grow along each queue (issue order): the earliest live one is near the front.
  Clock::time_point next = kNever;
  if (!waiting.empty()) next = waiting.front().deadline;
  if (conn) {
    for (const RedisClientCmd& c : conn->inFlight) {
      if (c.done || c.handshake) {
        next = std::min(next, c.deadline);
        break;
      }
    }
  }
  if (next == kNever) return;
  timerArmed = true;
  std::weak_ptr<RedisClientState> weak = weak_from_this();
  const auto delay = std::max(next - loop->now(), Clock::duration::zero());
  timer = loop->schedule(delay, [weak] {
    if (auto self = weak.lock()) {
      self->timerArmed = false;
      self->expire();
      self->armTimer();
    }
  });
}

void RedisClientState::expire() {
  const Clock::time_point now = loop->now();
  while (!waiting.empty() && waiting.front().deadline <= now) {
    RedisClientCmd c = std::move(waiting.front());
    waiting.pop_front();
    complete(c, RedisClientErrc::timedOut);
  }
  if (conn == nullptr) return;
  std::shared_ptr<RedisClientConn> c = conn;
  for (std::size_t i = 0; i < c->inFlight.size() && !c->detached; ++i) {
    RedisClientCmd& cmd = c->inFlight[i];
    if (cmd.deadline > now) break;
    if (cmd.handshake && cmd.deadline != kNever) {
      // A server that does not answer the handshake cannot be used.
      return failConnection(c, RedisClientErrc::timedOut);
    }
    // (A completion may issue a command, appending to inFlight: indices stay valid.)
    complete(cmd, RedisClientErrc::timedOut);
  }
}

void RedisClientState::closeAll() {
  // A completion run below may call close() again (or destroy the client): that nested call finds
  // the client closed and leaves the rest to this one.
  if (phase == Phase::Closed) return;
  phase = Phase::Closed;
  timer.cancel();
  if (attempt) attempt->cancel();
  failWaiting(RedisClientErrc::clientClosed);
  if (std::shared_ptr<RedisClientConn> c = conn) {
    std::shared_ptr<SocketChannel> ch = c->channel;
    detach(c, RedisClientErrc::clientClosed);
    if (ch) ch->close();
  }
  pushHandler = nullptr;
}

}  // namespace detail

RedisClient::RedisClient(EventLoopGroup& group) : RedisClient(group, Options()) {}
RedisClient::RedisClient(EventLoopGroup& group, Options options)
    : RedisClient(group, group.next(), std::move(options)) {}
RedisClient::RedisClient(EventLoopGroup& group, EventLoop& loop, Options options)
    : state_(std::make_shared<detail::RedisClientState>(group, loop, std::move(options))) {}
RedisClient::~RedisClient() { close(); }

EventLoopExecutor RedisClient::loopExecutor(detail::RedisClientState& state) noexcept {
  return state.loop->get_executor();
}

std::uint64_t RedisClient::reserveId(detail::RedisClientState& state) noexcept {
  return state.nextId.fetch_add(1, std::memory_order_relaxed);
}

void RedisClient::start(const std::shared_ptr<detail::RedisClientState>& state, std::uint64_t id,
                        detail::RedisPreparedCommand cmd, Completion done) {
  detail::RedisClientCmd c;
  c.id = id;
  c.cmd = std::move(cmd);
  c.done = std::move(done);
  state->pending.fetch_add(1, std::memory_order_relaxed);
  if (state->loop->inEventLoop()) {
    state->submit(std::move(c));
    return;
  }
  std::weak_ptr<detail::RedisClientState> weak = state;
  try {
    state->loop->execute([weak, c = std::move(c)]() mutable {
      if (auto s = weak.lock()) {
        s->submit(std::move(c));
      } else if (c.done) {
        c.done(RedisClientErrc::clientClosed, RedisReply());
      }
    });
  } catch (...) {
    state->pending.fetch_sub(1, std::memory_order_relaxed);
    throw;
  }
}

void RedisClient::startConnect(const std::shared_ptr<detail::RedisClientState>& state,
                               std::string host, unsigned short port, bool setAddress,
                               ConnectCompletion done) {
  std::weak_ptr<detail::RedisClientState> weak = state;
  auto run = [weak, host = std::move(host), port, setAddress, done = std::move(done)]() mutable {
    if (auto s = weak.lock()) {
      s->requestConnect(std::move(host), port, setAddress, std::move(done));
    } else {
      done(RedisClientErrc::clientClosed);
    }
  };
  if (state->loop->inEventLoop()) {
    run();
  } else {
    state->loop->execute(std::move(run));
  }
}

void RedisClient::Canceller::operator()(boost::asio::cancellation_type type) const {
  if (!detail::cancels(type)) return;
  // A command already written may have run on the server: total cancellation (which promises no
  // side effect) takes only one still waiting for the connection (async_op.hpp's convention).
  const bool sentToo = detail::cancelsWithSideEffects(type);
  auto s = state.lock();
  if (s == nullptr) return;
  const std::uint64_t commandId = id;
  if (s->loop->inEventLoop()) return s->cancel(commandId, sentToo);
  std::weak_ptr<detail::RedisClientState> weak = s;
  s->loop->execute([weak, commandId, sentToo] {
    if (auto self = weak.lock()) self->cancel(commandId, sentToo);
  });
}

void RedisClient::setPushHandler(PushHandler handler) {
  auto s = state_;
  if (s->loop->inEventLoop()) {
    s->pushHandler = std::move(handler);
    return;
  }
  s->loop->execute(
      [s, handler = std::move(handler)]() mutable { s->pushHandler = std::move(handler); });
}

void RedisClient::close() {
  if (!state_) return;
  auto s = state_;
  if (s->loop->inEventLoop()) {
    s->closeAll();
    return;
  }
  std::promise<void> done;
  auto f = done.get_future();
  try {
    s->loop->execute([s, &done] {
      s->closeAll();
      done.set_value();
    });
  } catch (...) {
    return;  // the loop has shut down: nothing runs there any more
  }
  f.wait();
}

bool RedisClient::isConnected() const noexcept {
  return state_->connected.load(std::memory_order_relaxed);
}
RespProtocol RedisClient::protocol() const noexcept {
  return state_->protocol.load(std::memory_order_relaxed);
}
std::size_t RedisClient::pendingCommands() const noexcept {
  return state_->pending.load(std::memory_order_relaxed);
}
std::uint64_t RedisClient::connectionsMade() const noexcept {
  return state_->made.load(std::memory_order_relaxed);
}
EventLoop& RedisClient::eventLoop() const noexcept { return *state_->loop; }
const RedisClient::Options& RedisClient::options() const noexcept { return state_->options; }

}  // namespace netbuf
