// HttpServer (http_server.hpp): routing, the per-connection handler, graceful shutdown.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <deque>
#include <mutex>
#include <netbuf/buffer/illegal_argument_error.hpp>
#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/codec/http/detail/http_object_encoder.hpp>
#include <netbuf/codec/http/http_date.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/codec/http/http_object_aggregator.hpp>
#include <netbuf/codec/http/http_request_decoder.hpp>
#include <netbuf/http/detail/static_files.hpp>
#include <netbuf/http/http_server.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <netbuf/transport/channel_group.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <netbuf/transport/idle_state_handler.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <thread>
#include <vector>

namespace netbuf {

namespace asio = boost::asio;

namespace detail {

struct HttpRoute {
  HttpMethod::Id method;
  std::string extensionMethod;  // for HttpMethod::Id::Other
  std::string path;             // without the trailing "*" of a prefix route
  bool prefix = false;
  HttpServer::Handler handler;
  HttpServer::AsyncHandler async;
  std::filesystem::path filesRoot;   // a staticFiles() route when not empty
  HttpServer::StreamFactory stream;  // a routeStreaming() route when set
};

struct HttpServerState {
  explicit HttpServerState(HttpServer::Options o) : options(std::move(o)) {}

  HttpServer::Options options;
  std::vector<HttpRoute> routes;
  HttpServer::Handler fallback;
  bool hasStreamingRoutes = false;  // set before serving, read by the loops
  std::atomic<bool> frozen{false};
  std::atomic<bool> draining{false};
  ChannelGroup connections{"http-connections"};
  std::mutex serversMutex;
  // Not owned: a listener holds this state (its child handler installs it), so owning it here
  // would make a cycle that outlives everything (and a listener must not outlive its group).
  std::vector<std::weak_ptr<ServerChannel>> servers;

  std::atomic<std::uint64_t> connectionCount{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> badRequests{0};
  std::atomic<std::uint64_t> notFound{0};
  std::atomic<std::uint64_t> handlerErrors{0};
  std::atomic<std::uint64_t> idleClosed{0};
  std::atomic<std::uint64_t> headTimeouts{0};
};

namespace {

/// Closes after queued writes have gone out (a socket); other channels close at once.
void closeAfterWrites(Channel& ch) {
  if (auto* s = dynamic_cast<SocketChannel*>(&ch)) {
    s->closeGracefully();
  } else {
    ch.close();
  }
}

/// The answer to a handler that failed.
FullHttpResponse internalError() {
  return HttpServer::text(HttpResponseStatus::INTERNAL_SERVER_ERROR, "Internal Server Error\n");
}

bool methodMatches(const HttpRoute& r, const HttpMethod& m) {
  if (r.method != m.id()) return false;
  return r.method != HttpMethod::Id::Other || r.extensionMethod == m.name();
}

bool pathMatches(const HttpRoute& r, std::string_view path) {
  if (!r.prefix) return path == r.path;
  return path.size() >= r.path.size() && path.substr(0, r.path.size()) == r.path;
}

/// Whether the connection stays open after answering req (RFC 9112 §9.3).
bool isKeepAlive(const HttpRequest& req) {
  const HttpHeaders& h = req.headers();
  if (h.containsValue(HttpHeaderNames::kConnection, "close")) return false;
  if (req.protocolVersion() == HttpVersion::HTTP_1_1) return true;
  return h.containsValue(HttpHeaderNames::kConnection, "keep-alive");
}

/// The fields the server adds to every response, formatted into a buffer the connection reuses
/// and written straight into the encoded head: the response itself is not modified (adding them
/// to its HttpHeaders would allocate its text store for every response).
class ServerHeaders {
 public:
  explicit ServerHeaders(const HttpServer::Options& o) : serverName_(o.serverName) {}
  /// The extra field lines for res (valid until the next call); sets res's version to the
  /// request's and removes a connection field the handler set when the server decides.
  std::string_view apply(FullHttpResponse& res, bool keepAlive, HttpVersion requestVersion) {
    HttpHeaders& h = res.headers();
    lines_.clear();
    if (!h.contains(HttpHeaderNames::kDate)) {
      lines_.append("date: ").append(HttpDate::current()).append("\r\n");
    }
    if (!serverName_.empty() && !h.contains(HttpHeaderNames::kServer)) {
      lines_.append("server: ").append(serverName_).append("\r\n");
    }
    if (!keepAlive) {
      h.remove(HttpHeaderNames::kConnection);
      lines_.append("connection: close\r\n");
    } else if (requestVersion == HttpVersion::HTTP_1_0) {
      h.remove(HttpHeaderNames::kConnection);
      lines_.append("connection: keep-alive\r\n");
    }
    if (requestVersion == HttpVersion::HTTP_1_0) res.setProtocolVersion(HttpVersion::HTTP_1_0);
    return lines_;
  }

 private:
  std::string serverName_;
  std::string lines_;
};

}  // namespace

/// One connection's request handling (see http_server.hpp). Loop thread only.
class HttpServerHandler : public ChannelHandler {
 public:
  explicit HttpServerHandler(std::shared_ptr<HttpServerState> state)
      : state_(std::move(state)),
        aggregator_(state_->options.maxContentLength),
        headers_(state_->options),
        self_(std::make_shared<HttpServerHandler*>(this)) {}
  /// A coroutine that completes after the handler is gone finds *self_ == nullptr.
  ~HttpServerHandler() override {
    *self_ = nullptr;
    headTimer_.cancel();
  }

  void handlerAdded(ChannelHandlerContext& ctx) override {
    ctx_ = &ctx;
    aggregator_.setContinueHandler([this] { sendContinue(*ctx_); });
    // Installed on a channel already active (EmbeddedChannel): no channelActive will come.
    if (ctx.channel().isActive()) registerConnection(ctx);
  }

  void channelActive(ChannelHandlerContext& ctx) override {
    registerConnection(ctx);
    ctx.fireChannelActive();
  }

  void channelInactive(ChannelHandlerContext& ctx) override {
    alive_ = false;
    headTimer_.cancel();
    ctx.fireChannelInactive();
  }

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if (!msg.is<HttpObject>()) return ctx.fireChannelRead(std::move(msg));
    if (closing_) return;  // after a response that ends the connection, nothing more is read
    HttpObject obj = msg.take<HttpObject>();
    if (auto* head = std::get_if<HttpRequest>(&obj)) {
      ++heads_;
      inMessage_ = true;
      if (const HttpRoute* r = streamingRoute(*head)) return startStream(ctx, *r, std::move(*head));
    } else if (std::holds_alternative<LastHttpContent>(obj)) {
      inMessage_ = false;
    }
    if (stream_ || streamFailed_) return continueStream(ctx, std::move(obj));
    out_.clear();
    try {
      aggregator_.channelRead(std::move(obj), out_);
    } catch (const HttpDecoderError& e) {
      return refuse(ctx, e);
    }
    for (HttpObject& o : out_) {
      if (auto* req = std::get_if<FullHttpRequest>(&o)) handle(ctx, std::move(*req));
      if (closing_) break;
    }
    out_.clear();
    // Responses held behind a coroutine count too: a peer that keeps sending requests behind a
    // slow one must not make them pile up without bound.
    if (!pending_.empty()) updateAutoRead(ctx);
  }

  void channelReadComplete(ChannelHandlerContext& ctx) override {
    flushBatch(ctx);
    ctx.fireChannelReadComplete();
  }

  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const HttpDecoderError& e) {
      refuse(ctx, e);
    } catch (...) {
      closing_ = true;  // the close flushes the decoder into channelRead: read nothing more
      ctx.close();
    }
  }

  void userEventTriggered(ChannelHandlerContext& ctx, Message event) override {
    if (event.is<IdleStateEvent>()) {
      if (pending_.empty()) {
        state_->idleClosed.fetch_add(1, std::memory_order_relaxed);
        ctx.close();
      }
      return;
    }
    if (event.is<DrainEvent>()) {
      drain(ctx);
      return;
    }
    ctx.fireUserEventTriggered(std::move(event));
  }

  void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
    updateAutoRead(ctx);
    ctx.fireChannelWritabilityChanged();
  }

  MessageTypes inboundIn() const noexcept override { return typesOf<HttpObject>(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundOut() const noexcept override { return MessageTypes::passThrough(); }

  /// The shutdown's request to finish and close.
  struct DrainEvent {};

 private:
  void handle(ChannelHandlerContext& ctx, FullHttpRequest req) {
    const bool keepAlive = isKeepAlive(req) && !state_->draining.load(std::memory_order_relaxed);
    const HttpMethod method = req.method();
    const bool head = method.id() == HttpMethod::Id::Head;
    const HttpVersion version = req.protocolVersion();
    if (!keepAlive) closing_ = true;

    std::string_view path = req.uri();
    path = path.substr(0, path.find('?'));
    const HttpRoute* route = nullptr;
    bool pathKnown = false;
    for (const HttpRoute& r : state_->routes) {
      if (!pathMatches(r, path)) continue;
      pathKnown = true;
      // A streaming route took its requests at their head: here it only makes the path known
      // (its method then appears in a 405's Allow; it serves no HEAD).
      if (r.stream) continue;
      if (methodMatches(r, method) ||
          (head && r.method == HttpMethod::Id::Get && route == nullptr)) {
        route = &r;
        if (methodMatches(r, method)) break;
      }
    }
    if (route == nullptr) {
      FullHttpResponse res = pathKnown ? methodNotAllowed(path) : notFound(req);
      state_->notFound.fetch_add(1, std::memory_order_relaxed);
      return respond(ctx, std::move(res), keepAlive, head, version, nextSlot());
    }
    state_->requests.fetch_add(1, std::memory_order_relaxed);
    if (!route->filesRoot.empty()) {
      StaticFileAnswer a = serveFile(req, route->filesRoot, path.substr(route->path.size()));
      return respond(ctx, std::move(a.response), keepAlive, head, version, nextSlot(),
                     std::move(a.file));
    }
    if (route->handler) {
      FullHttpResponse res;
      try {
        res = route->handler(req);
      } catch (...) {  // anything: a non-std exception must not unwind into the pipeline
        state_->handlerErrors.fetch_add(1, std::memory_order_relaxed);
        res = internalError();
      }
      return respond(ctx, std::move(res), keepAlive, head, version, nextSlot());
    }
    // A coroutine: its response takes the next slot, written when every earlier one is.
    const std::uint64_t slot = nextSlot();
    pending_.push_back(Pending{slot, ByteBuf(), false});
    updateAutoRead(ctx);
    asio::co_spawn(
        ctx.channel().get_executor(),
        [fn = route->async, r = std::move(req)]() mutable -> asio::awaitable<FullHttpResponse> {
          co_return co_await fn(std::move(r));
        },
        [weak = self_, slot, keepAlive, head, version](std::exception_ptr e, FullHttpResponse res) {
          HttpServerHandler* self = *weak;
          if (self == nullptr || !self->alive_) return;
          if (e) {
            self->state_->handlerErrors.fetch_add(1, std::memory_order_relaxed);
            res = internalError();
          }
          self->respond(*self->ctx_, std::move(res), keepAlive, head, version, slot);
          self->flushBatch(*self->ctx_);
          self->updateAutoRead(*self->ctx_);
        });
  }

  std::uint64_t nextSlot() noexcept { return nextSlot_++; }

  /// "100 Continue", before the body is read: the client is waiting for it to send it. An interim
  /// response belongs to its request, so it goes out after the responses to earlier (pipelined)
  /// ones: at once behind the batch, or in a slot of its own behind a coroutine still running.
  void sendContinue(ChannelHandlerContext& ctx) {
    constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    if (pending_.empty()) {
      batch(ctx).writeBytes(kContinue);
      flushBatch(ctx);
    } else {
      ByteBuf b = ctx.alloc().buffer(kContinue.size());
      b.writeBytes(kContinue);
      pending_.push_back(Pending{nextSlot(), std::move(b), true});
    }
  }

  // ---- streaming routes: the parts go to an HttpStreamHandler, not to the aggregator

  /// The routeStreaming() route for this head (method and path), or nullptr.
  const HttpRoute* streamingRoute(const HttpRequest& head) const {
    if (!state_->hasStreamingRoutes) return nullptr;  // no second walk of the routes per request
    std::string_view path = head.uri();
    path = path.substr(0, path.find('?'));
    const HttpMethod method = head.method();
    for (const HttpRoute& r : state_->routes) {
      if (r.stream && pathMatches(r, path) && methodMatches(r, method)) return &r;
    }
    return nullptr;
  }

  void startStream(ChannelHandlerContext& ctx, const HttpRoute& route, HttpRequest head) {
    streamKeepAlive_ = isKeepAlive(head) && !state_->draining.load(std::memory_order_relaxed);
    streamVersion_ = head.protocolVersion();
    // closing_ is set only when the response goes out: the parts still to come must be read.
    state_->requests.fetch_add(1, std::memory_order_relaxed);
    if (const auto expect = head.headers().get(HttpHeaderNames::kExpect);
        expect && head.protocolVersion() == HttpVersion::HTTP_1_1) {
      if (!http_util::equalsIgnoreCase(*expect, HttpHeaderValues::kContinue)) {
        streamFailed_ = true;
        streamStatus_ = HttpResponseStatus::EXPECTATION_FAILED;
        streamKeepAlive_ = false;  // the client may send the body anyway: close after it
        return;
      }
      sendContinue(ctx);
    }
    try {
      stream_ = route.stream();
      if (!stream_) throw IllegalStateError("HttpServer: a stream factory returned nothing");
      stream_->onHead(head);
    } catch (...) {
      failStream();
    }
  }

  void continueStream(ChannelHandlerContext& ctx, HttpObject obj) {
    if (auto* part = std::get_if<HttpContent>(&obj)) {
      if (!stream_) return;  // failed: skipped until the last part
      try {
        stream_->onContent(std::move(part->content()));
      } catch (...) {
        failStream();
      }
      return;
    }
    auto* last = std::get_if<LastHttpContent>(&obj);
    if (last == nullptr) return;
    FullHttpResponse res;
    if (stream_) {
      try {
        if (last->content().isReadable()) stream_->onContent(std::move(last->content()));
        res = stream_->onEnd(last->trailers());
      } catch (...) {
        failStream();
      }
    }
    if (streamFailed_) {
      res = streamStatus_.code() == 417
                ? HttpServer::text(HttpResponseStatus::EXPECTATION_FAILED, "Expectation Failed\n")
                : internalError();
    }
    stream_.reset();
    streamFailed_ = false;
    streamStatus_ = HttpResponseStatus::OK;
    if (!streamKeepAlive_) closing_ = true;
    respond(ctx, std::move(res), streamKeepAlive_, false, streamVersion_, nextSlot());
    if (!pending_.empty()) updateAutoRead(ctx);
  }

  void failStream() {
    if (streamStatus_.code() != 417) {
      state_->handlerErrors.fetch_add(1, std::memory_order_relaxed);
      streamStatus_ = HttpResponseStatus::INTERNAL_SERVER_ERROR;
    }
    stream_.reset();
    streamFailed_ = true;
  }

  /// Counts the connection and adds it to those shutdownGracefully() drains (once).
  void registerConnection(ChannelHandlerContext& ctx) {
    if (registered_) return;
    registered_ = true;
    scheduleHeadCheck(ctx);
    state_->connectionCount.fetch_add(1, std::memory_order_relaxed);
    // A channel no shared_ptr owns (an EmbeddedChannel on a test's stack) cannot be held.
    if (auto ch = ctx.channel().weak_from_this().lock()) state_->connections.add(std::move(ch));
  }

  /// The request-head timeout (Options::requestHeadTimeout): a periodic check, not a timer per
  /// request (that would cost an allocation and a timer-queue insertion per request). A
  /// connection that starts no request head during a whole period while it owes no response and
  /// is between messages is closed: an idle keep-alive connection, or a peer trickling a head
  /// slower than the idle timeout (slow loris). A head therefore has between one and two periods.
  void scheduleHeadCheck(ChannelHandlerContext& ctx) {
    const auto period = state_->options.requestHeadTimeout;
    if (period.count() <= 0) return;
    headTimer_ = ctx.channel().executor().schedule(period, [weak = self_] {
      HttpServerHandler* self = *weak;
      if (self == nullptr || !self->alive_) return;
      self->checkHead();
    });
  }

  void checkHead() {
    if (heads_ == headsAtCheck_ && !inMessage_ && pending_.empty() && !closing_) {
      state_->headTimeouts.fetch_add(1, std::memory_order_relaxed);
      closing_ = true;
      ctx_->close();
      return;
    }
    headsAtCheck_ = heads_;
    scheduleHeadCheck(*ctx_);
  }

  FullHttpResponse notFound(FullHttpRequest& req) {
    if (state_->fallback) {
      try {
        return state_->fallback(req);
      } catch (...) {  // like a route's handler: a 500, not an exception into the pipeline
        state_->handlerErrors.fetch_add(1, std::memory_order_relaxed);
        return internalError();
      }
    }
    return HttpServer::text(HttpResponseStatus::NOT_FOUND, "Not Found\n");
  }

  FullHttpResponse methodNotAllowed(std::string_view path) {
    FullHttpResponse res =
        HttpServer::text(HttpResponseStatus::METHOD_NOT_ALLOWED, "Method Not Allowed\n");
    std::string allow;
    for (const HttpRoute& r : state_->routes) {
      if (!pathMatches(r, path)) continue;
      if (!allow.empty()) allow += ", ";
      allow += r.method == HttpMethod::Id::Other ? std::string_view(r.extensionMethod)
                                                 : HttpMethod::of(r.method).name();
    }
    res.headers().add(HttpHeaderNames::kAllow, allow);
    return res;
  }

  /// Encodes a response into its slot: straight into the batch when every earlier response is
  /// out, else held until they are. file: the body, sent after the head with sendfile.
  void respond(ChannelHandlerContext& ctx, FullHttpResponse res, bool keepAlive, bool head,
               HttpVersion version, std::uint64_t slot, FileRegion file = {}) {
    // Draining: the last response the connection owes says that the connection ends.
    if (draining_ && slot + 1 == nextSlot_) keepAlive = false;
    const std::string_view extra = headers_.apply(res, keepAlive, version);
    if (!keepAlive) closeAfterFlush_ = true;
    if (pending_.empty() || pending_.front().slot == slot) {
      encode(batch(ctx), res, head, extra, file);
      emitFile(ctx, std::move(file));
      if (!pending_.empty()) pending_.pop_front();
    } else {
      // Behind a coroutine still running: held in its slot (a synchronous response gets a new
      // slot at the back; slots are numbered in request order).
      ByteBuf bytes = ctx.alloc().buffer(256 + res.content().readableBytes());
      encode(bytes, res, head, extra, file);
      auto it = std::find_if(pending_.begin(), pending_.end(),
                             [slot](const Pending& p) { return p.slot == slot; });
      if (it == pending_.end()) {
        pending_.push_back(Pending{slot, std::move(bytes), true, std::move(file)});
      } else {
        it->bytes = std::move(bytes);
        it->file = std::move(file);
        it->ready = true;
      }
    }
    // Release the ready responses now at the front, in order.
    while (!pending_.empty() && pending_.front().ready) {
      batch(ctx).writeBytes(pending_.front().bytes);
      emitFile(ctx, std::move(pending_.front().file));
      pending_.pop_front();
    }
    maybeWriteBatch(ctx);
  }

  /// Appends the encoded response to dst; a response the encoder refuses (a reason phrase with
  /// CR LF, a status out of range: it would split the stream) becomes a 500, and its file is
  /// dropped. The encoder checks the head before writing anything, so dst is intact then.
  void encode(ByteBuf& dst, const FullHttpResponse& res, bool head, std::string_view extra,
              FileRegion& file) {
    try {
      HttpObjectEncoder::appendResponse(dst, res, head, extra);
    } catch (const EncoderError&) {
      state_->handlerErrors.fetch_add(1, std::memory_order_relaxed);
      file = FileRegion();
      HttpObjectEncoder::appendResponse(dst, internalError(), head, extra);
    }
  }

  /// A file body follows the bytes batched so far: both are written, in order.
  void emitFile(ChannelHandlerContext& ctx, FileRegion file) {
    if (!file.isValid()) return;
    ctx.write(std::move(batch_));
    batch_ = ByteBuf();
    ctx.write(std::move(file));
    written_ = true;
  }

  ByteBuf& batch(ChannelHandlerContext& ctx) {
    if (!batch_) batch_ = ctx.alloc().buffer(kBatchBytes);
    return batch_;
  }

  /// Hands a large batch to the channel early (bounded memory), without flushing.
  void maybeWriteBatch(ChannelHandlerContext& ctx) {
    if (batch_ && batch_.readableBytes() >= kBatchBytes) {
      ctx.write(std::move(batch_));
      batch_ = ByteBuf();
      written_ = true;
    }
  }

  void flushBatch(ChannelHandlerContext& ctx) {
    if (batch_ && batch_.isReadable()) {
      ctx.write(std::move(batch_));
      written_ = true;
    }
    batch_ = ByteBuf();
    if (written_) {
      ctx.flush();
      written_ = false;
    }
    if ((closeAfterFlush_ || draining_) && pending_.empty()) {
      closeAfterFlush_ = false;
      closeAfterWrites(ctx.channel());
    }
  }

  void refuse(ChannelHandlerContext& ctx, const HttpDecoderError& e) {
    // After a response that ends the connection (or the drain) nothing more is answered: an error
    // in the bytes that follow (or at the end of the stream, as the close flushes the decoder)
    // would add a response after "connection: close".
    if (closing_) return;
    state_->badRequests.fetch_add(1, std::memory_order_relaxed);
    closing_ = true;
    FullHttpResponse res =
        HttpServer::text(HttpResponseStatus::valueOf(e.status()), fmt::format("{}\n", e.what()));
    respond(ctx, std::move(res), false, false, HttpVersion::HTTP_1_1, nextSlot());
    flushBatch(ctx);
  }

  void drain(ChannelHandlerContext& ctx) {
    draining_ = true;
    closing_ = true;
    if (pending_.empty()) flushBatch(ctx);
  }

  void updateAutoRead(ChannelHandlerContext& ctx) {
    const bool want =
        pending_.size() < state_->options.maxPendingResponses && ctx.channel().isWritable();
    if (want != ctx.channel().isAutoRead()) ctx.channel().setAutoRead(want);
  }

  static constexpr std::size_t kBatchBytes = 16 * 1024;

  struct Pending {
    std::uint64_t slot;
    ByteBuf bytes;  // the encoded response once ready
    bool ready;
    FileRegion file = {};  // its file body, if any
  };

  std::shared_ptr<HttpServerState> state_;
  HttpObjectAggregator aggregator_;
  ServerHeaders headers_;
  ChannelHandlerContext* ctx_ = nullptr;
  std::vector<HttpObject> out_;
  ByteBuf batch_;
  std::deque<Pending> pending_;
  std::uint64_t nextSlot_ = 0;
  bool closing_ = false;          // no more requests are read on this connection
  bool closeAfterFlush_ = false;  // a response said "connection: close"
  bool draining_ = false;         // the server is shutting down
  bool written_ = false;          // bytes written since the last flush
  bool alive_ = true;
  bool registered_ = false;  // counted and in state_->connections
  bool inMessage_ = false;   // a request head arrived, its LastHttpContent not yet
  std::unique_ptr<HttpStreamHandler> stream_;  // the streaming request in progress
  bool streamFailed_ = false;  // it failed: its parts are skipped, answered at its end
  bool streamKeepAlive_ = true;
  HttpVersion streamVersion_;
  HttpResponseStatus streamStatus_ = HttpResponseStatus::OK;
  std::uint64_t heads_ = 0;  // request heads received
  std::uint64_t headsAtCheck_ = 0;
  ScheduledTask headTimer_;
  std::shared_ptr<HttpServerHandler*> self_;  // see the destructor
};

}  // namespace detail

namespace {

void installWith(const std::shared_ptr<detail::HttpServerState>& state, ChannelPipeline& pipeline) {
  state->frozen.store(true, std::memory_order_release);
  const auto idle = state->options.idleTimeout;
  if (idle.count() > 0) {
    pipeline.addLast("http-idle", std::make_unique<IdleStateHandler>(
                                      std::chrono::nanoseconds(0), std::chrono::nanoseconds(0),
                                      std::chrono::duration_cast<std::chrono::nanoseconds>(idle)));
  }
  pipeline
      .addLast("http-decoder",
               std::make_unique<DecoderChannelHandler<HttpRequestDecoder>>(state->options.decoder))
      .addLast("http-server", std::make_unique<detail::HttpServerHandler>(state));
}

}  // namespace

HttpServer::HttpServer() : HttpServer(Options()) {}
HttpServer::HttpServer(Options options)
    : state_(std::make_shared<detail::HttpServerState>(std::move(options))) {}
HttpServer::~HttpServer() = default;

HttpServer& HttpServer::addRoute(HttpMethod method, std::string path, Handler fn,
                                 AsyncHandler async) {
  if (state_->frozen.load(std::memory_order_acquire)) {
    throw IllegalStateError("HttpServer: routes are registered before serving starts");
  }
  detail::HttpRoute r;
  r.method = method.id();
  if (method.isExtension()) r.extensionMethod = std::string(method.name());
  if (path.size() >= 2 && path.substr(path.size() - 2) == "/*") {
    r.prefix = true;
    path.pop_back();
  }
  r.path = std::move(path);
  r.handler = std::move(fn);
  r.async = std::move(async);
  state_->routes.push_back(std::move(r));
  return *this;
}

HttpServer& HttpServer::staticFiles(std::string prefix, const std::filesystem::path& root) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(root, ec);
  if (ec || !std::filesystem::is_directory(canonical)) {
    throw IllegalArgumentError("HttpServer::staticFiles: " + root.string() + " is not a directory");
  }
  if (prefix.empty() || prefix.back() != '/') prefix.push_back('/');
  addRoute(HttpMethod::GET, prefix + "*", Handler(), AsyncHandler());
  state_->routes.back().filesRoot = canonical;
  return *this;
}

HttpServer& HttpServer::routeStreaming(HttpMethod method, std::string path, StreamFactory factory) {
  if (!factory) throw IllegalArgumentError("HttpServer::routeStreaming: no factory");
  addRoute(method, std::move(path), Handler(), AsyncHandler());
  state_->routes.back().stream = std::move(factory);
  state_->hasStreamingRoutes = true;
  return *this;
}

HttpServer& HttpServer::fallback(Handler fn) {
  if (state_->frozen.load(std::memory_order_acquire)) {
    throw IllegalStateError("HttpServer: the fallback is set before serving starts");
  }
  state_->fallback = std::move(fn);
  return *this;
}

void HttpServer::install(ChannelPipeline& pipeline) { installWith(state_, pipeline); }

std::shared_ptr<ServerChannel> HttpServer::bind(EventLoopGroup& group, const std::string& host,
                                                unsigned short port,
                                                const ChannelOptions& options) {
  state_->frozen.store(true, std::memory_order_release);
  auto server = ServerBootstrap()
                    .group(group)
                    .childOptions(options)
                    .childHandler([state = state_](SocketChannel& ch) {
                      if (state->options.tls)
                        ch.pipeline().addFirst("tls", state->options.tls->newHandler());
                      installWith(state, ch.pipeline());
                    })
                    .bind(host, port);
  std::lock_guard<std::mutex> lock(state_->serversMutex);
  state_->servers.push_back(server);
  return server;
}

bool HttpServer::shutdownGracefully(std::chrono::milliseconds timeout) {
  state_->draining.store(true, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(state_->serversMutex);
    for (auto& w : state_->servers) {
      if (auto s = w.lock()) s->close();
    }
    state_->servers.clear();
  }
  for (const auto& ch : state_->connections.channels()) {
    ch->executor().execute([ch] {
      if (ch->isOpen()) {
        ch->pipeline().fireUserEventTriggered(Message(detail::HttpServerHandler::DrainEvent{}));
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!state_->connections.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (state_->connections.empty()) return true;
  for (const auto& ch : state_->connections.channels()) ch->close();
  return false;
}

HttpServerStats HttpServer::stats() const noexcept {
  const auto& s = *state_;
  const auto r = [](const std::atomic<std::uint64_t>& c) {
    return c.load(std::memory_order_relaxed);
  };
  return HttpServerStats{r(s.connectionCount), r(s.requests),   r(s.badRequests), r(s.notFound),
                         r(s.handlerErrors),   r(s.idleClosed), r(s.headTimeouts)};
}

const HttpServer::Options& HttpServer::options() const noexcept { return state_->options; }

FullHttpResponse HttpServer::text(HttpResponseStatus status, std::string_view body,
                                  std::string_view contentType) {
  ByteBuf content = ByteBufAllocator::defaultAllocator().buffer(body.size());
  content.writeBytes(body);
  FullHttpResponse res(status, std::move(content));
  res.headers().add(HttpHeaderNames::kContentType, contentType);
  return res;
}

}  // namespace netbuf
