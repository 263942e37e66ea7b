// RedisServer (redis_server.hpp): the per-connection handler, shard routing, expiry sweeps and
// graceful shutdown.

#include <netbuf/redis/redis_server.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <exception>
#include <mutex>
#include <netbuf/buffer/illegal_argument_error.hpp>
#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/codec/redis/redis_command.hpp>
#include <netbuf/codec/redis/redis_protocol_error.hpp>
#include <netbuf/codec/redis/redis_reply_decoder.hpp>
#include <netbuf/codec/redis/redis_request_decoder.hpp>
#include <netbuf/codec/redis/resp_writer.hpp>
#include <netbuf/redis/redis_keyspace.hpp>
#include <netbuf/redis/redis_session.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel_group.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/idle_state_handler.hpp>
#include <netbuf/transport/rejected_execution_error.hpp>
#include <thread>
#include <utility>
#include <vector>

namespace netbuf {

namespace {

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), Redis Cluster's key hash (crc16.c).
constexpr std::array<std::uint16_t, 256> makeCrc16Table() {
  std::array<std::uint16_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) {
    unsigned crc = i << 8;
    for (int b = 0; b < 8; ++b) crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
    t[i] = static_cast<std::uint16_t>(crc & 0xffff);
  }
  return t;
}
constexpr std::array<std::uint16_t, 256> kCrc16Table = makeCrc16Table();

std::uint16_t crc16(std::string_view s) noexcept {
  std::uint16_t crc = 0;
  for (char c : s) {
    crc = static_cast<std::uint16_t>(
        (crc << 8) ^ kCrc16Table[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xff]);
  }
  return crc;
}

constexpr std::chrono::milliseconds kSweepPeriod{100};
/// One sweep goes on while it finds a full budget of expired keys, for at most this long (Redis's
/// slow cycle takes up to 25% of a 100 ms period; a shard here shares its loop with connections).
constexpr std::chrono::microseconds kSweepTimeLimit{2000};

}  // namespace

namespace detail {

/// One keyspace and the loop that owns it (touched only on that loop's thread).
struct RedisShard {
  std::unique_ptr<RedisKeyspace> keyspace;
  EventLoop* loop = nullptr;
};

struct RedisServerState {
  explicit RedisServerState(RedisServer::Options o) : options(std::move(o)) {}

  RedisServer::Options options;
  // Set once by the first bind (before any listener exists), read-only afterwards: connections and
  // tasks on every loop read them without locks.
  std::vector<RedisShard> shards;
  EventLoopGroup* group = nullptr;
  // Commands the sharded path treats specially (their specs, compared by address).
  const RedisCommandSpec* mget = nullptr;
  const RedisCommandSpec* mset = nullptr;
  const RedisCommandSpec* del = nullptr;
  const RedisCommandSpec* unlink = nullptr;
  const RedisCommandSpec* exists = nullptr;
  const RedisCommandSpec* touch = nullptr;
  const RedisCommandSpec* dbsize = nullptr;
  const RedisCommandSpec* keys = nullptr;
  const RedisCommandSpec* flushall = nullptr;
  const RedisCommandSpec* flushdb = nullptr;

  std::mutex bindMutex;  // shards/group set up, servers
  // Not owned: a listener holds this state (its child handler installs it), so owning it here
  // would make a cycle (and a listener must not outlive its group).
  std::vector<std::weak_ptr<ServerChannel>> servers;
  ChannelGroup connections{"redis-connections"};
  std::atomic<unsigned short> port{0};
  std::atomic<bool> draining{false};
  std::atomic<bool> sweeping{true};

  std::atomic<std::uint64_t> nextClientId{1};
  std::atomic<std::size_t> openClients{0};
  std::atomic<std::uint64_t> connectionCount{0};
  std::atomic<std::uint64_t> commands{0};
  std::atomic<std::uint64_t> protocolErrors{0};
  std::atomic<std::uint64_t> rejectedClients{0};
  std::atomic<std::uint64_t> idleClosed{0};
  std::atomic<std::uint64_t> crossShard{0};

  std::size_t shardOf(std::string_view key) const noexcept {
    return RedisServer::keyHashSlot(key) % shards.size();
  }
};

namespace {

/// A command (or part of a split one) sent to another shard, and where its reply goes.
struct RemoteOp {
  RedisCommand command;
  std::uint64_t seq;      // the connection's reply slot
  std::uint32_t part;     // the part of a split command (0 otherwise)
  RespProtocol protocol;  // the session's protocol when the command was read
};

/// A remote shard's replies to one batch of RemoteOps: all written into one buffer, each reply
/// the bytes [begin, end) of it.
struct RemoteReplies {
  struct Reply {
    std::uint64_t seq;
    std::uint32_t part;
    std::uint32_t begin;
    std::uint32_t end;
  };
  ByteBuf bytes;
  std::vector<Reply> replies;
};

/// How the replies of a split command's parts become its reply.
enum class CombineKind : std::uint8_t {
  MGet,    // values, in the order of the command's keys
  Sum,     // integers summed (DEL, UNLINK, EXISTS, TOUCH, DBSIZE)
  AllOk,   // the first part's reply once all have answered (MSET, FLUSHALL, FLUSHDB)
  Concat,  // arrays concatenated (KEYS)
};

struct Combine {
  CombineKind kind;
  RespProtocol protocol;
  std::vector<ByteBuf> parts;
  // MGet: for each key of the command, its part and its index in that part's array.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> order;
};

void executeFailed(ByteBuf& out, std::size_t mark, RespProtocol protocol, std::string_view what) {
  out.writerIndex(mark);
  std::string text = "ERR internal error: ";
  for (char c : what) text.push_back(c == '\r' || c == '\n' ? ' ' : c);
  RespWriter(out, protocol).simpleError(text);
}

void closeAfterWrites(Channel& ch) {
  if (auto* s = dynamic_cast<SocketChannel*>(&ch)) {
    s->closeGracefully();
  } else {
    ch.close();
  }
}

/// Runs cmd on ks into out. A command that throws (a keyspace bug, memory exhausted) must not cut
/// the connection's replies short or leave half a reply in out: what it wrote is taken back and
/// it is answered with an error, like any failed command.
inline void execute(RedisKeyspace& ks, const RedisCommand& cmd, ByteBuf& out,
                    RedisSession& session) {
  const std::size_t mark = out.writerIndex();
  try {
    RespWriter w(out, session.protocol);
    ks.execute(cmd, w, session);
  } catch (const std::exception& e) {
    executeFailed(out, mark, session.protocol, e.what());
  }
}

bool arityOk(const RedisCommandSpec& spec, std::size_t argc) noexcept {
  return spec.arity >= 0 ? argc == static_cast<std::size_t>(spec.arity)
                         : argc >= static_cast<std::size_t>(-spec.arity);
}

}  // namespace

/// One connection (see redis_server.hpp). Loop thread only, except where a task says otherwise.
class RedisConnection final : public ChannelHandler {
 public:
  /// The shutdown's request to finish and close.
  struct DrainEvent {};

  RedisConnection(std::shared_ptr<RedisServerState> state, EventLoop& loop, ByteBufAllocator& alloc)
      : state_(std::move(state)),
        decoder_(state_->options.decoder, alloc),
        shard_(loop.index()),
        keyspace_(state_->shards[shard_].keyspace.get()),
        sharded_(state_->shards.size() > 1),
        self_(std::make_shared<RedisConnection*>(this)) {
    if (sharded_) outbox_.resize(state_->shards.size());
  }
  /// A reply from another shard that arrives after the handler is gone finds *self_ == nullptr.
  ~RedisConnection() override { *self_ = nullptr; }

  void handlerAdded(ChannelHandlerContext& ctx) override { ctx_ = &ctx; }

  void channelActive(ChannelHandlerContext& ctx) override {
    registerConnection(ctx);
    ctx.fireChannelActive();
  }

  void channelInactive(ChannelHandlerContext& ctx) override {
    alive_ = false;
    if (counted_) {
      counted_ = false;
      state_->openClients.fetch_sub(1, std::memory_order_relaxed);
    }
    ctx.fireChannelInactive();
  }

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    // A socket reads ByteBufs; handlers in front (TLS...) may hand composites on.
    if (msg.is<ByteBuf>()) [[likely]] {
      if (closing_) return;  // after QUIT, a protocol error or the drain nothing more is read
      decoder_.channelRead(msg.take<ByteBuf>(), commands_, ErrorSink{this});
    } else if (msg.is<CompositeByteBuf>() || msg.is<AnyByteBuf>()) {
      if (closing_) return;
      if (msg.is<AnyByteBuf>()) {
        decoder_.channelRead(msg.take<AnyByteBuf>(), commands_, ErrorSink{this});
      } else {
        decoder_.channelRead(msg.take<CompositeByteBuf>(), commands_, ErrorSink{this});
      }
    } else {
      return ctx.fireChannelRead(std::move(msg));
    }
    std::uint64_t ran = 0;
    if (!sharded_) [[likely]] {
      // While paused (see runInlineBatch) a read already under way only adds to the held ones.
      if (!paused_) ran = runInlineBatch(ctx);
    } else {
      for (RedisCommand& cmd : commands_) {
        ++ran;
        route(ctx, cmd);
        if (session_.closeAfterReply) {
          closing_ = true;
          break;
        }
      }
      postOutbox();
    }
    if (!paused_) {
      commands_.clear();
      next_ = 0;
    }
    if (ran != 0) state_->commands.fetch_add(ran, std::memory_order_relaxed);
    answerProtocolError(ctx);
  }

  /// Runs commands_ from next_ on inline (one shard), replies into the batch. When a batch
  /// written early leaves the channel unwritable (replies far larger than the requests: GETs of
  /// large values), the rest is held (paused_) and reading stops until the peer has read enough
  /// (channelWritabilityChanged resumes): one read's replies take at most the write buffer's high
  /// water mark plus one batch, however much its commands ask for. Returns the number run.
  std::uint64_t runInlineBatch(ChannelHandlerContext& ctx) {
    std::uint64_t ran = 0;
    while (next_ < commands_.size()) {
      ++ran;
      execute(*keyspace_, commands_[next_++], batch(ctx), session_);
      if (session_.closeAfterReply) [[unlikely]] {
        closing_ = true;
        break;
      }
      if (batch_.readableBytes() >= kBatchBytes) [[unlikely]] {
        writeBatch(ctx);
        if (!ctx.channel().isWritable() && next_ < commands_.size()) {
          paused_ = true;
          ctx.channel().setAutoRead(false);
          break;
        }
      }
    }
    return ran;
  }

  /// After the replies to every command read before it: Redis's answer to bad input.
  void answerProtocolError(ChannelHandlerContext& ctx) {
    if (paused_) return;
    if (!protocolError_.empty()) {
      if (!closing_) {
        // Redis answers the commands before the bad bytes, then this, then closes.
        state_->protocolErrors.fetch_add(1, std::memory_order_relaxed);
        closing_ = true;
        ByteBuf& out = replyTarget(ctx);
        out.writeBytes(std::string_view("-ERR "));
        out.writeBytes(std::string_view(protocolError_));
        out.writeBytes(std::string_view("\r\n"));
      }
      protocolError_.clear();
    }
  }

  void channelReadComplete(ChannelHandlerContext& ctx) override {
    flushBatch(ctx);
    decoder_.channelReadComplete();
    if (sharded_ && !slots_.empty()) updateAutoRead(ctx);
    ctx.fireChannelReadComplete();
  }

  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr) override {
    closing_ = true;
    ctx.close();
  }

  void userEventTriggered(ChannelHandlerContext& ctx, Message event) override {
    if (event.is<IdleStateEvent>()) {
      // Redis's timeout counts a client waiting for nothing as idle; one still owed replies from
      // other shards is not.
      if (slots_.empty()) {
        state_->idleClosed.fetch_add(1, std::memory_order_relaxed);
        closing_ = true;
        ctx.close();
      }
      return;
    }
    if (event.is<DrainEvent>()) {
      // Between reads every command read has its reply in the batch or in a slot: the
      // connection closes once those are out (flushBatch, or the last remote reply).
      closing_ = true;
      flushBatch(ctx);
      return;
    }
    ctx.fireUserEventTriggered(std::move(event));
  }

  void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
    if (paused_ && ctx.channel().isWritable() && !closed_) {
      paused_ = false;
      const std::uint64_t ran = runInlineBatch(ctx);
      if (!paused_) {
        commands_.clear();
        next_ = 0;
      }
      state_->commands.fetch_add(ran, std::memory_order_relaxed);
      answerProtocolError(ctx);
      flushBatch(ctx);
    }
    updateAutoRead(ctx);
    ctx.fireChannelWritabilityChanged();
  }

  MessageTypes inboundIn() const noexcept override { return kByteMessages; }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

 private:
  /// The decoder's error handler: keeps the first error's text (the decoder discards the rest of
  /// the stream after one).
  struct ErrorSink {
    RedisConnection* self;
    void operator()(std::exception_ptr e) const {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& err) {
        if (self->protocolError_.empty()) self->protocolError_ = err.what();
      }
    }
  };

  /// A reply slot: replies are written in slot order (see redis_server.hpp). A slot is ready
  /// when `waiting` is 0; an open slot collects the replies of inline commands read behind a
  /// slot still waiting.
  struct Slot {
    ByteBuf bytes;
    std::uint32_t waiting = 0;
    bool open = false;
    std::unique_ptr<Combine> combine;
  };

  static constexpr std::size_t kBatchBytes = 64 * 1024;
  /// Replies waiting for other shards past which the connection stops reading.
  static constexpr std::size_t kMaxSlots = 1024;

  void registerConnection(ChannelHandlerContext& ctx) {
    if (registered_) return;
    registered_ = true;
    Channel& ch = ctx.channel();
    state_->connectionCount.fetch_add(1, std::memory_order_relaxed);
    session_.id = state_->nextClientId.fetch_add(1, std::memory_order_relaxed);
    session_.peerAddress = ch.remoteAddress();
    session_.localAddress = ch.localAddress();
    const std::size_t open = state_->openClients.fetch_add(1, std::memory_order_relaxed) + 1;
    counted_ = true;
    if (auto ch2 = ch.weak_from_this().lock()) state_->connections.add(std::move(ch2));
    if (state_->draining.load(std::memory_order_relaxed)) {  // accepted as the server stopped
      closing_ = true;
      flushBatch(ctx);
      return;
    }
    const auto& max = state_->options.maxClients;
    if (max && open > *max) {
      state_->rejectedClients.fetch_add(1, std::memory_order_relaxed);
      closing_ = true;
      batch(ctx).writeBytes(std::string_view("-ERR max number of clients reached\r\n"));
      flushBatch(ctx);
    }
  }

  // ---- the reply batch

  ByteBuf& batch(ChannelHandlerContext& ctx) {
    if (!batch_) [[unlikely]]
      batch_ = ctx.alloc().buffer(batchHint_);
    return batch_;
  }

  /// Hands a large batch to the channel early (no flush: still one flush per read).
  void writeBatch(ChannelHandlerContext& ctx) {
    ctx.write(std::move(batch_));
    batch_ = ByteBuf();
    written_ = true;
  }

  void flushBatch(ChannelHandlerContext& ctx) {
    if (batch_) {
      const std::size_t n = batch_.readableBytes();
      if (n != 0) {
        // The next batch starts at about this one's size (growing a buffer copies it).
        batchHint_ = std::clamp<std::size_t>(n, 256, kBatchBytes);
        if (!written_) {  // the common case: one write and its flush, one pass down the pipeline
          ctx.writeAndFlush(std::move(batch_));
          batch_ = ByteBuf();
          written_ = false;
        } else {
          writeBatch(ctx);
        }
      } else {
        batch_ = ByteBuf();  // an empty batch goes back to the allocator now
      }
    }
    if (written_) {
      written_ = false;
      ctx.flush();
    }
    if (closing_ && slots_.empty() && !paused_ && !closed_) {
      closed_ = true;
      closeAfterWrites(ctx.channel());
    }
  }

  /// Where the reply of a command run now goes: the batch when no reply is waiting for another
  /// shard, else an open slot at the back.
  ByteBuf& replyTarget(ChannelHandlerContext& ctx) {
    if (slots_.empty()) return batch(ctx);
    if (!slots_.back().open) {
      Slot s;
      s.bytes = ctx.alloc().buffer(256);
      s.open = true;
      slots_.push_back(std::move(s));
    }
    return slots_.back().bytes;
  }

  /// A new slot waiting for `parts` replies; returns its sequence number.
  std::uint64_t newSlot(std::uint32_t parts, std::unique_ptr<Combine> combine = nullptr) {
    Slot s;
    s.waiting = parts;
    s.combine = std::move(combine);
    slots_.push_back(std::move(s));
    return headSeq_ + slots_.size() - 1;
  }

  // ---- routing (N > 1 shards)

  void runInline(ChannelHandlerContext& ctx, const RedisCommand& cmd) {
    execute(*keyspace_, cmd, replyTarget(ctx), session_);
  }

  void route(ChannelHandlerContext& ctx, RedisCommand& cmd) {
    const RedisCommandSpec* spec = RedisKeyspace::findCommand(cmd.name());
    // Unknown commands and wrong arities get the keyspace's own error, inline.
    if (spec == nullptr || !arityOk(*spec, cmd.size())) return runInline(ctx, cmd);
    if (spec->firstKey <= 0) {
      if (spec == state_->dbsize) return splitEveryShard(ctx, cmd, CombineKind::Sum, true);
      if (spec == state_->keys) return splitEveryShard(ctx, cmd, CombineKind::Concat, false);
      if (spec == state_->flushall || spec == state_->flushdb)
        return splitEveryShard(ctx, cmd, CombineKind::AllOk, false);
      return runInline(ctx, cmd);
    }
    const std::size_t argc = cmd.size();
    const std::size_t first = static_cast<std::size_t>(spec->firstKey);
    if (first >= argc) return runInline(ctx, cmd);
    const std::size_t last =
        spec->lastKey < 0
            ? argc - std::min<std::size_t>(argc, static_cast<std::size_t>(-spec->lastKey))
            : std::min<std::size_t>(static_cast<std::size_t>(spec->lastKey), argc - 1);
    const std::size_t step = spec->step > 0 ? static_cast<std::size_t>(spec->step) : 1;
    // Key-value lists cut short (MSET a 1 b) pass the arity check but not the keyspace's own:
    // run them where the keyspace refuses them whole, never split into parts that would apply.
    if (spec->lastKey < 0 && (argc - first) % step != 0) return runInline(ctx, cmd);
    const std::size_t target = state_->shardOf(cmd[first]);
    bool oneShard = true;
    for (std::size_t i = first + step; i <= last; i += step) {
      if (state_->shardOf(cmd[i]) != target) {
        oneShard = false;
        break;
      }
    }
    if (oneShard) {
      if (target == shard_) return runInline(ctx, cmd);
      state_->crossShard.fetch_add(1, std::memory_order_relaxed);
      const std::uint64_t seq = newSlot(1);
      outbox_[target].push_back(RemoteOp{std::move(cmd), seq, 0, session_.protocol});
      return;
    }
    CombineKind kind;
    if (spec == state_->mget) {
      kind = CombineKind::MGet;
    } else if (spec == state_->mset) {
      kind = CombineKind::AllOk;
    } else if (spec == state_->del || spec == state_->unlink || spec == state_->exists ||
               spec == state_->touch) {
      kind = CombineKind::Sum;
    } else {
      RespWriter w(replyTarget(ctx), session_.protocol);
      w.simpleError("CROSSSLOT Keys in request don't hash to the same slot");
      return;
    }
    splitKeys(ctx, cmd, kind, first, last, step);
  }

  /// Splits a multi-key command into one sub-command per shard its keys belong to: each takes the
  /// name, then the `step` arguments starting at each of its keys, in the command's order.
  void splitKeys(ChannelHandlerContext& ctx, const RedisCommand& cmd, CombineKind kind,
                 std::size_t first, std::size_t last, std::size_t step) {
    state_->crossShard.fetch_add(1, std::memory_order_relaxed);
    const std::size_t n = state_->shards.size();
    std::vector<std::vector<std::string_view>> args(n);
    auto combine = std::make_unique<Combine>();
    combine->kind = kind;
    combine->protocol = session_.protocol;
    std::vector<std::uint32_t> partOfShard(n, UINT32_MAX);
    std::vector<std::size_t> shardOfPart;
    for (std::size_t i = first; i <= last; i += step) {
      const std::size_t s = state_->shardOf(cmd[i]);
      if (partOfShard[s] == UINT32_MAX) {
        partOfShard[s] = static_cast<std::uint32_t>(shardOfPart.size());
        shardOfPart.push_back(s);
        args[s].push_back(cmd.name());
      }
      if (kind == CombineKind::MGet) {
        combine->order.emplace_back(partOfShard[s], static_cast<std::uint32_t>(args[s].size() - 1));
      }
      for (std::size_t j = i; j < i + step && j < cmd.size(); ++j) args[s].push_back(cmd[j]);
    }
    std::vector<RedisCommand> parts;
    parts.reserve(shardOfPart.size());
    for (std::size_t s : shardOfPart) parts.push_back(RedisCommand::copyOf(args[s]));
    dispatchParts(ctx, std::move(combine), std::move(parts), shardOfPart);
  }

  /// A command every shard runs (DBSIZE, KEYS, FLUSHALL, FLUSHDB), combined by kind.
  void splitEveryShard(ChannelHandlerContext& ctx, const RedisCommand& cmd, CombineKind kind,
                       bool nameOnly) {
    state_->crossShard.fetch_add(1, std::memory_order_relaxed);
    const std::size_t n = state_->shards.size();
    auto combine = std::make_unique<Combine>();
    combine->kind = kind;
    combine->protocol = session_.protocol;
    std::vector<RedisCommand> parts;
    std::vector<std::size_t> shardOfPart;
    const std::span<const std::string_view> args = nameOnly ? cmd.args().first(1) : cmd.args();
    for (std::size_t s = 0; s < n; ++s) {
      parts.push_back(RedisCommand::copyOf(args));
      shardOfPart.push_back(s);
    }
    dispatchParts(ctx, std::move(combine), std::move(parts), shardOfPart);
  }

  /// Runs the parts for this shard now and queues the others; the slot completes when all have
  /// answered.
  void dispatchParts(ChannelHandlerContext& ctx, std::unique_ptr<Combine> combine,
                     std::vector<RedisCommand> parts, const std::vector<std::size_t>& shardOfPart) {
    combine->parts.resize(parts.size());
    const RespProtocol protocol = combine->protocol;
    const std::uint64_t seq = newSlot(static_cast<std::uint32_t>(parts.size()), std::move(combine));
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const std::size_t s = shardOfPart[p];
      if (s == shard_) {
        ByteBuf out = ctx.alloc().buffer(64);
        RedisSession session;
        session.protocol = protocol;
        session.id = session_.id;
        execute(*keyspace_, parts[p], out, session);
        completePart(ctx, seq, static_cast<std::uint32_t>(p), std::move(out));
      } else {
        outbox_[s].push_back(
            RemoteOp{std::move(parts[p]), seq, static_cast<std::uint32_t>(p), protocol});
      }
    }
  }

  /// Sends each shard its queued commands of this read, as one task; the shard answers with one.
  void postOutbox() {
    for (std::size_t s = 0; s < outbox_.size(); ++s) {
      if (outbox_[s].empty()) continue;
      std::vector<RemoteOp> ops = std::move(outbox_[s]);
      outbox_[s] = std::vector<RemoteOp>();
      EventLoop* home = state_->shards[shard_].loop;
      try {
        state_->shards[s].loop->execute(
            [state = state_, s, ops = std::move(ops), home, self = self_]() mutable {
              runRemote(*state, s, std::move(ops), *home, std::move(self));
            });
      } catch (const RejectedExecutionError&) {
        // The shard's loop has shut down: so is this connection's; its replies will not come.
      }
    }
  }

  /// On shard s's loop: runs ops and posts their replies home.
  static void runRemote(RedisServerState& state, std::size_t s, std::vector<RemoteOp> ops,
                        EventLoop& home, std::shared_ptr<RedisConnection*> self) {
    RedisKeyspace& ks = *state.shards[s].keyspace;
    RemoteReplies r;
    r.bytes = ByteBufAllocator::defaultAllocator().buffer(64 * ops.size());
    r.replies.reserve(ops.size());
    RedisSession session;
    for (RemoteOp& op : ops) {
      session.protocol = op.protocol;
      const auto begin = static_cast<std::uint32_t>(r.bytes.writerIndex());
      execute(ks, op.command, r.bytes, session);
      r.replies.push_back(
          {op.seq, op.part, begin, static_cast<std::uint32_t>(r.bytes.writerIndex())});
    }
    ops.clear();  // the commands' input slices are released here, before the replies go home
    try {
      home.execute([self = std::move(self), r = std::move(r)]() mutable {
        if (RedisConnection* c = *self) c->onRemoteReplies(r);
      });
    } catch (const RejectedExecutionError&) {
      // The connection's loop has shut down: nobody waits for these replies.
    }
  }

  /// On the connection's loop: fills the slots and writes those now ready, in order.
  void onRemoteReplies(RemoteReplies& r) {
    if (!alive_) return;
    ChannelHandlerContext& ctx = *ctx_;
    for (const RemoteReplies::Reply& rep : r.replies) {
      completePart(ctx, rep.seq, rep.part, r.bytes.retainedSlice(rep.begin, rep.end - rep.begin));
    }
    flushBatch(ctx);
    updateAutoRead(ctx);
  }

  void completePart(ChannelHandlerContext& ctx, std::uint64_t seq, std::uint32_t part,
                    ByteBuf bytes) {
    Slot& slot = slots_[static_cast<std::size_t>(seq - headSeq_)];
    if (slot.combine) {
      slot.combine->parts[part] = std::move(bytes);
      if (--slot.waiting == 0) {
        slot.bytes = ctx.alloc().buffer(256);
        try {
          combineParts(*slot.combine, slot.bytes);
        } catch (const std::exception& e) {
          // Like a command that throws (execute()): the slot still gets exactly one reply, so
          // the replies behind it are not held back forever.
          executeFailed(slot.bytes, 0, slot.combine->protocol, e.what());
        }
        slot.combine.reset();
      }
    } else {
      slot.bytes = std::move(bytes);
      --slot.waiting;
    }
    releaseReady(ctx);
  }

  /// Moves the ready slots at the front into the batch.
  void releaseReady(ChannelHandlerContext& ctx) {
    while (!slots_.empty() && slots_.front().waiting == 0) {
      Slot& s = slots_.front();
      // Copied: replies are small, and one buffer makes one iovec (a slice of a remote
      // shard's buffer could not be appended to in place).
      if (s.bytes && s.bytes.isReadable()) batch(ctx).writeBytes(s.bytes);
      slots_.pop_front();
      ++headSeq_;
      if (batch_ && batch_.readableBytes() >= kBatchBytes) writeBatch(ctx);
    }
  }

  static inline const RedisDecoderOptions kOwnReplies = RedisDecoderOptions()
                                                            .setMaxBulkLength(UINT64_MAX)
                                                            .setMaxMultibulkLength(UINT64_MAX)
                                                            .setMaxMessageBytes(UINT64_MAX);

  /// Writes a split command's reply from its parts' replies.
  static void combineParts(Combine& c, ByteBuf& out) {
    RespWriter w(out, c.protocol);
    std::vector<RedisReply> replies;
    replies.reserve(c.parts.size());
    for (ByteBuf& p : c.parts) {
      // The parts are this server's own replies: no limit of a peer's input applies to them.
      replies.push_back(RedisReplyDecoder::decodeOne(std::move(p), kOwnReplies));
      if (replies.back().isError()) {
        w.value(replies.back().root());  // the first part that failed answers for the command
        return;
      }
    }
    switch (c.kind) {
      case CombineKind::MGet:
        w.arrayHeader(c.order.size());
        for (const auto& [part, index] : c.order) w.value(replies[part].root()[index]);
        break;
      case CombineKind::Sum: {
        std::int64_t sum = 0;
        for (const RedisReply& r : replies) sum += r.root().asInteger();
        w.integer(sum);
        break;
      }
      case CombineKind::AllOk:
        w.value(replies.front().root());
        break;
      case CombineKind::Concat: {
        std::size_t n = 0;
        for (const RedisReply& r : replies) n += r.root().size();
        w.arrayHeader(n);
        for (const RedisReply& r : replies) {
          for (const RespValue& v : r.root().elements()) w.value(v);
        }
        break;
      }
    }
  }

  void updateAutoRead(ChannelHandlerContext& ctx) {
    const bool want = ctx.channel().isWritable() && slots_.size() < kMaxSlots && !paused_;
    if (want != ctx.channel().isAutoRead()) ctx.channel().setAutoRead(want);
  }

  std::shared_ptr<RedisServerState> state_;
  RedisRequestDecoder decoder_;
  const std::size_t shard_;
  RedisKeyspace* keyspace_;
  const bool sharded_;
  RedisSession session_;
  ChannelHandlerContext* ctx_ = nullptr;
  std::vector<RedisCommand> commands_;  // one read's commands (storage reused)
  std::size_t next_ = 0;                // commands_[next_...] have not run yet
  bool paused_ = false;                 // they wait for the channel to be writable
  ByteBuf batch_;                       // replies not yet written
  std::size_t batchHint_ = 512;
  std::string protocolError_;                  // the read's protocol error, if any
  std::deque<Slot> slots_;                     // replies behind one that waits for another shard
  std::uint64_t headSeq_ = 0;                  // sequence number of slots_.front()
  std::vector<std::vector<RemoteOp>> outbox_;  // per shard: this read's commands for it
  bool closing_ = false;  // nothing more is read; close once the replies are out
  bool closed_ = false;
  bool written_ = false;  // bytes written since the last flush
  bool alive_ = true;
  bool registered_ = false;
  bool counted_ = false;                    // in state_->openClients
  std::shared_ptr<RedisConnection*> self_;  // see the destructor
};

}  // namespace detail

namespace {

void installConnection(const std::shared_ptr<detail::RedisServerState>& state, SocketChannel& ch) {
  if (state->options.tls) ch.pipeline().addFirst("tls", state->options.tls->newHandler());
  const auto idle = state->options.idleTimeout;
  if (idle.count() > 0) {
    ch.pipeline().addLast("redis-idle",
                          std::make_unique<IdleStateHandler>(
                              std::chrono::nanoseconds(0), std::chrono::nanoseconds(0),
                              std::chrono::duration_cast<std::chrono::nanoseconds>(idle)));
  }
  ch.pipeline().addLast(
      "redis-server", std::make_unique<detail::RedisConnection>(state, ch.eventLoop(), ch.alloc()));
}

/// Every kSweepPeriod on shard i's loop: removes expired keys, until the server stops sweeping.
void scheduleSweep(const std::shared_ptr<detail::RedisServerState>& state, std::size_t i) {
  try {
    state->shards[i].loop->schedule(kSweepPeriod, [state, i] {
      if (!state->sweeping.load(std::memory_order_relaxed)) return;
      RedisKeyspace& ks = *state->shards[i].keyspace;
      constexpr std::size_t kBudget = 200;
      const auto until = std::chrono::steady_clock::now() + kSweepTimeLimit;
      while (ks.sweepExpired(kBudget) == kBudget && std::chrono::steady_clock::now() < until) {
      }
      scheduleSweep(state, i);
    });
  } catch (const RejectedExecutionError&) {
    // The loop has shut down: no more sweeps.
  }
}

}  // namespace

RedisServer::RedisServer() : RedisServer(Options()) {}
RedisServer::RedisServer(Options options)
    : state_(std::make_shared<detail::RedisServerState>(std::move(options))) {
  auto& s = *state_;
  s.mget = RedisKeyspace::findCommand("mget");
  s.mset = RedisKeyspace::findCommand("mset");
  s.del = RedisKeyspace::findCommand("del");
  s.unlink = RedisKeyspace::findCommand("unlink");
  s.exists = RedisKeyspace::findCommand("exists");
  s.touch = RedisKeyspace::findCommand("touch");
  s.dbsize = RedisKeyspace::findCommand("dbsize");
  s.keys = RedisKeyspace::findCommand("keys");
  s.flushall = RedisKeyspace::findCommand("flushall");
  s.flushdb = RedisKeyspace::findCommand("flushdb");
}

RedisServer::~RedisServer() {
  try {
    shutdownGracefully(std::chrono::milliseconds(0));
  } catch (...) {  // a destructor must not throw; the loops are stopped regardless below
  }
  ownListener_.reset();
  ownGroup_.reset();
}

void RedisServer::start() {
  if (ownGroup_) throw IllegalStateError("RedisServer::start: already started");
  {
    // Shards made by an earlier bind() belong to the caller's group and its connections: start()
    // must neither replace them nor, failing, clear them.
    std::lock_guard<std::mutex> lock(state_->bindMutex);
    if (state_->group != nullptr) {
      throw IllegalStateError("RedisServer::start: the server is bound to a group already");
    }
  }
  if (state_->options.threads == 0) {
    throw IllegalArgumentError("RedisServer::start: Options::threads must be at least 1");
  }
  auto group = std::make_unique<EventLoopGroup>(state_->options.threads);
  try {
    ownListener_ = bind(*group, state_->options.host, state_->options.port);
  } catch (...) {
    group->shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
    // The shards belonged to that group: a later start() makes new ones.
    std::lock_guard<std::mutex> lock(state_->bindMutex);
    state_->group = nullptr;
    state_->shards.clear();
    throw;
  }
  ownGroup_ = std::move(group);
}

std::shared_ptr<ServerChannel> RedisServer::bind(EventLoopGroup& group, const std::string& host,
                                                 unsigned short port) {
  auto& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.bindMutex);
    if (s.group != nullptr && s.group != &group) {
      throw IllegalStateError("RedisServer::bind: every bind must use the same EventLoopGroup");
    }
    if (s.draining.load(std::memory_order_relaxed)) {
      throw IllegalStateError("RedisServer::bind: the server has shut down");
    }
    if (s.group == nullptr) {
      s.group = &group;
      s.shards.resize(group.size());
      for (std::size_t i = 0; i < group.size(); ++i) {
        s.shards[i].keyspace = std::make_unique<RedisKeyspace>();
        s.shards[i].loop = &group.loop(i);
      }
      for (std::size_t i = 0; i < group.size(); ++i) scheduleSweep(state_, i);
    }
  }
  auto server =
      ServerBootstrap()
          .group(group)
          .childOptions(s.options.channel)
          .childHandler([state = state_](SocketChannel& ch) { installConnection(state, ch); })
          .bind(host, port);
  std::lock_guard<std::mutex> lock(s.bindMutex);
  s.servers.push_back(server);
  unsigned short none = 0;
  s.port.compare_exchange_strong(none, server->port(), std::memory_order_relaxed);
  return server;
}

unsigned short RedisServer::port() const noexcept {
  return state_->port.load(std::memory_order_relaxed);
}

std::size_t RedisServer::shards() const noexcept {
  std::lock_guard<std::mutex> lock(state_->bindMutex);
  return state_->shards.size();
}

bool RedisServer::shutdownGracefully(std::chrono::milliseconds timeout) {
  auto& s = *state_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  s.draining.store(true, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(s.bindMutex);
    for (auto& w : s.servers) {
      if (auto server = w.lock()) server->close();
    }
    s.servers.clear();
  }
  for (const auto& ch : s.connections.channels()) {
    ch->executor().execute([ch] {
      if (ch->isOpen()) {
        ch->pipeline().fireUserEventTriggered(Message(detail::RedisConnection::DrainEvent{}));
      }
    });
  }
  while (!s.connections.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const bool drained = s.connections.empty();
  if (!drained) {
    for (const auto& ch : s.connections.channels()) ch->close();
  }
  s.sweeping.store(false, std::memory_order_relaxed);
  if (ownGroup_) {
    ownListener_.reset();  // a listener must not outlive its group
    const auto left = std::max(std::chrono::milliseconds(0),
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   deadline - std::chrono::steady_clock::now()));
    ownGroup_->shutdownGracefully(std::chrono::milliseconds(0),
                                  std::max(left, std::chrono::milliseconds(1000)));
  }
  return drained;
}

RedisServerStats RedisServer::stats() const noexcept {
  const auto& s = *state_;
  const auto r = [](const std::atomic<std::uint64_t>& c) {
    return c.load(std::memory_order_relaxed);
  };
  return RedisServerStats{r(s.connectionCount), r(s.commands),   r(s.protocolErrors),
                          r(s.rejectedClients), r(s.idleClosed), r(s.crossShard)};
}

const RedisServer::Options& RedisServer::options() const noexcept { return state_->options; }

unsigned RedisServer::keyHashSlot(std::string_view key) noexcept {
  // Redis Cluster's hash tag: the part between the first '{' and the next '}', if not empty.
  if (const std::size_t open = key.find('{'); open != std::string_view::npos) {
    const std::size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close != open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return crc16(key) & 16383u;
}

}  // namespace netbuf
