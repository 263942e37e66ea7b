// HttpClient (http_client.hpp): the connection pools and the per-connection handler. All state is
// touched on the client's loop only; start(), cancellation and close() hop there.

#include <algorithm>
#include <boost/asio/error.hpp>
#include <deque>
#include <future>
#include <netbuf/codec/http/http_client_codec.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/codec/http/http_object_aggregator.hpp>
#include <netbuf/http/http_client.hpp>
#include <netbuf/tls/ssl_error.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <netbuf/tls/ssl_handshake_completion_event.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace netbuf {

namespace {

class HttpClientCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "netbuf.http_client"; }
  std::string message(int ev) const override {
    switch (static_cast<HttpClientErrc>(ev)) {
      case HttpClientErrc::invalidUrl:
        return "not an http(s)://host[:port][/path] URL";
      case HttpClientErrc::malformedResponse:
        return "malformed HTTP response";
      case HttpClientErrc::responseTooLarge:
        return "response content over the limit";
      case HttpClientErrc::timedOut:
        return "no response within the request timeout";
      case HttpClientErrc::tooManyRedirects:
        return "too many redirects";
      case HttpClientErrc::clientClosed:
        return "the client was closed";
    }
    return "unknown HTTP client error";
  }
};

}  // namespace

const std::error_category& httpClientCategory() noexcept {
  static const HttpClientCategory category;
  return category;
}

namespace detail {

struct HttpClientRequest {
  std::uint64_t id = 0;
  FullHttpRequest request;  // until it is written
  HttpUrl url;
  HttpMethod method;
  HttpHeaders headers;  // a copy, for a redirect that repeats the request
  ByteBuf body;         // a shared duplicate, for 307/308
  HttpClient::Completion done;
  ScheduledTask timer;
  int redirects = 0;
};
using RequestPtr = std::unique_ptr<HttpClientRequest>;

struct HttpClientConn {
  std::string key;
  std::shared_ptr<SocketChannel> channel;
  std::deque<RequestPtr> inFlight;
  ScheduledTask idleTimer;
  bool reusable = true;  // no response or request said "close"
  ErrorCode closeError;  // what the requests still in flight fail with when it closes
};

struct HttpClientPool {
  std::vector<std::shared_ptr<HttpClientConn>> conns;
  std::deque<RequestPtr> waiting;
  std::size_t connecting = 0;
};

struct HttpClientState : std::enable_shared_from_this<HttpClientState> {
  HttpClientState(EventLoopGroup& g, HttpClient::Options o)
      : group(&g), loop(&g.next()), options(std::move(o)) {}

  EventLoopGroup* group;
  EventLoop* loop;
  HttpClient::Options options;
  std::unordered_map<std::string, HttpClientPool> pools;  // loop only
  bool closed = false;                                    // loop only
  std::shared_ptr<SslContext> defaultTls;  // loop only: made for the first https URL without tls
  std::atomic<std::uint64_t> nextId{1};
  std::atomic<std::size_t> open{0};
  std::atomic<std::uint64_t> made{0};

  // ---- all below on the loop
  void submit(RequestPtr req);
  void dispatch(HttpClientPool& pool, const std::string& key);
  void connect(HttpClientPool& pool, const std::string& key, const HttpUrl& url);
  void send(const std::shared_ptr<HttpClientConn>& conn, RequestPtr req);
  void onResponse(const std::shared_ptr<HttpClientConn>& conn, FullHttpResponse res);
  void onError(const std::shared_ptr<HttpClientConn>& conn, ErrorCode ec);
  void onClosed(const std::shared_ptr<HttpClientConn>& conn);
  void closeSoon(const std::shared_ptr<HttpClientConn>& conn);
  void cancel(std::uint64_t id, bool sentToo);
  void closeAll();
  static void complete(RequestPtr req, ErrorCode ec, FullHttpResponse res = {}) {
    req->timer.cancel();
    HttpClient::Completion done = std::move(req->done);
    req.reset();
    done(ec, std::move(res));
  }
};

namespace {

/// Connections are shared by the requests of one scheme, host and port: an http and an https
/// connection to the same host and port are different connections.
std::string poolKey(const HttpUrl& u) {
  return u.scheme + "://" + u.host + ":" + std::to_string(u.port);
}

bool isRedirect(std::uint16_t code) {
  return code == 301 || code == 302 || code == 303 || code == 307 || code == 308;
}

/// Another handle on a request body, for a redirect that repeats it. A request without a body
/// holds an empty ByteBuf, whose retainedDuplicate() throws (EmptyBufferError).
ByteBuf shareBody(const ByteBuf& body) {
  return body.isReadable() ? body.retainedDuplicate() : ByteBuf();
}

bool keepsAlive(const HttpResponse& res) {
  const HttpHeaders& h = res.headers();
  if (h.containsValue(HttpHeaderNames::kConnection, "close")) return false;
  if (res.protocolVersion() == HttpVersion::HTTP_1_1) return true;
  return h.containsValue(HttpHeaderNames::kConnection, "keep-alive");
}

/// One connection's pipeline stage: HttpClientCodec and an aggregator; responses go to the state.
class HttpClientHandler : public ChannelHandler {
 public:
  HttpClientHandler(std::weak_ptr<HttpClientState> state, std::shared_ptr<HttpClientConn> conn,
                    const HttpClient::Options& o)
      : state_(std::move(state)),
        conn_(std::move(conn)),
        codec_(o.decoder),
        aggregator_(o.maxContentLength) {}

  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if (msg.is<ByteBuf>()) {
      codec_.channelRead(msg.take<ByteBuf>(), objects_, [&](std::exception_ptr e) { fail(e); });
    } else if (msg.is<AnyByteBuf>()) {
      codec_.channelRead(msg.take<AnyByteBuf>(), objects_, [&](std::exception_ptr e) { fail(e); });
    } else {
      return ctx.fireChannelRead(std::move(msg));
    }
    deliver();
  }

  void channelReadComplete(ChannelHandlerContext& ctx) override {
    codec_.channelReadComplete();
    ctx.fireChannelReadComplete();
  }

  void channelInactive(ChannelHandlerContext& ctx) override {
    // A close-delimited response ends here (its LastHttpContent comes out now).
    codec_.channelInactive(objects_, [&](std::exception_ptr e) { fail(e); });
    deliver();
    if (auto s = state_.lock()) s->onClosed(conn_);
    // The connection is over: break the cycle conn -> channel -> pipeline -> this handler ->
    // conn, which otherwise keeps all of it (and the buffers the codec and aggregator hold) alive
    // for ever, also when the client is gone already.
    conn_->channel.reset();
    ctx.fireChannelInactive();
  }

  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr) override { ctx.close(); }

  void userEventTriggered(ChannelHandlerContext& ctx, Message event) override {
    // A failed TLS handshake: SslHandler closes the channel next, and the requests on it fail
    // with the reason (an unknown CA, a host name mismatch...) rather than a bare "closed".
    if (event.is<SslHandshakeCompletionEvent>()) {
      const auto& done = event.as<SslHandshakeCompletionEvent>();
      if (done.error && !conn_->closeError) conn_->closeError = done.error;
    }
    ctx.fireUserEventTriggered(std::move(event));
  }

  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override {
    if (!msg.is<HttpObject>()) return ctx.write(std::move(msg), listener);
    bytes_.clear();
    codec_.write(msg.take<HttpObject>(), bytes_);
    for (std::size_t i = 0; i < bytes_.size(); ++i) {
      ctx.write(std::move(bytes_[i]), i + 1 == bytes_.size() ? listener : nullptr);
    }
    bytes_.clear();
  }

  MessageTypes inboundIn() const noexcept override { return kByteMessages; }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes outboundIn() const noexcept override { return typesOf<HttpObject>(); }
  MessageTypes outboundOut() const noexcept override { return typesOf<AnyByteBuf>(); }

 private:
  void fail(std::exception_ptr e) {
    ErrorCode ec = make_error_code(HttpClientErrc::malformedResponse);
    try {
      std::rethrow_exception(e);
    } catch (const HttpDecoderError& x) {
      if (x.status() == 413) ec = make_error_code(HttpClientErrc::responseTooLarge);
      // The connection closed inside a head or a body: not a malformed response but a cut one,
      // ChannelErrc::closed as documented (and as when it closes before any byte of it).
      if (x.rule() == "premature-end-of-stream") ec = make_error_code(ChannelErrc::closed);
    } catch (...) {
    }
    failed_ = true;
    if (auto s = state_.lock()) s->onError(conn_, ec);
  }

  void deliver() {
    // Taken out first: a response's completion may close the channel, whose channelInactive
    // delivers again (re-entering here) before this loop ends.
    std::vector<HttpObject> objects;
    objects.swap(objects_);
    for (HttpObject& o : objects) {
      if (failed_) break;
      std::vector<HttpObject> full;
      aggregator_.channelRead(std::move(o), full, [&](std::exception_ptr e) { fail(e); });
      for (HttpObject& f : full) {
        if (auto* res = std::get_if<FullHttpResponse>(&f)) {
          if (auto s = state_.lock()) s->onResponse(conn_, std::move(*res));
        }
      }
    }
  }

  std::weak_ptr<HttpClientState> state_;
  std::shared_ptr<HttpClientConn> conn_;
  HttpClientCodec codec_;
  HttpObjectAggregator aggregator_;
  std::vector<HttpObject> objects_;
  std::vector<AnyByteBuf> bytes_;
  bool failed_ = false;
};

}  // namespace

void HttpClientState::submit(RequestPtr req) {
  if (closed) return complete(std::move(req), make_error_code(HttpClientErrc::clientClosed));
  if (req->url.isHttps() && !options.tls && !defaultTls) {
    try {
      defaultTls = SslContext::forClient();
    } catch (const SslError& e) {
      // The system's trusted roots do not load: no https request can be verified.
      return complete(std::move(req), make_error_code(e.code()));
    }
  }
  const std::string key = poolKey(req->url);
  HttpClientPool& pool = pools[key];
  pool.waiting.push_back(std::move(req));
  dispatch(pool, key);
}

void HttpClientState::dispatch(HttpClientPool& pool, const std::string& key) {
  while (!pool.waiting.empty()) {
    std::shared_ptr<HttpClientConn> free;
    for (const auto& c : pool.conns) {
      if (!c->reusable || !c->channel->isActive()) continue;
      const std::size_t depth = options.pipelining ? options.maxPipelineDepth : 1;
      if (c->inFlight.size() < std::max<std::size_t>(depth, 1)) {
        if (free == nullptr || c->inFlight.size() < free->inFlight.size()) free = c;
      }
    }
    if (free != nullptr) {
      RequestPtr req = std::move(pool.waiting.front());
      pool.waiting.pop_front();
      send(free, std::move(req));
      continue;
    }
    // No connection free: open one when the host has room (a request waiting for each).
    const std::size_t busy = pool.conns.size() + pool.connecting;
    const std::size_t maxOpen = std::max<std::size_t>(options.maxConnectionsPerHost, 1);
    if (busy < maxOpen && pool.connecting < pool.waiting.size()) {
      connect(pool, key, pool.waiting.front()->url);
      continue;
    }
    return;
  }
}

void HttpClientState::connect(HttpClientPool& pool, const std::string& key, const HttpUrl& url) {
  ++pool.connecting;
  auto conn = std::make_shared<HttpClientConn>();
  conn->key = key;
  ConnectConfig config;
  config.group = group;
  config.options = options.channel;
  config.timeout = options.connectTimeout;
  std::weak_ptr<HttpClientState> weak = weak_from_this();
  std::shared_ptr<SslContext> tls;
  if (url.isHttps()) tls = options.tls ? options.tls : defaultTls;
  config.handler = [weak, conn, o = options, tls, host = url.host,
                    port = url.port](SocketChannel& ch) {
    // The URL's host is what the server's certificate must name (and the SNI sent).
    if (tls) ch.pipeline().addLast("tls", tls->newHandler(host, port));
    ch.pipeline().addLast("http-client", std::make_unique<HttpClientHandler>(weak, conn, o));
  };
  ConnectDone done = [weak, conn, key](ErrorCode ec, std::shared_ptr<SocketChannel> ch, bool) {
    auto self = weak.lock();
    if (self == nullptr) {
      if (ch) ch->close();
      return;
    }
    auto run = [self, conn, key, ec, ch] {
      HttpClientPool& p = self->pools[key];
      --p.connecting;
      if (ec || self->closed) {
        if (ch) ch->close();
        // One waiting request pays for the failed attempt; the others try again.
        if (!p.waiting.empty()) {
          RequestPtr req = std::move(p.waiting.front());
          p.waiting.pop_front();
          complete(std::move(req),
                   ec ? ec : ErrorCode(make_error_code(HttpClientErrc::clientClosed)));
        }
        if (!self->closed) self->dispatch(p, key);
        return;
      }
      conn->channel = ch;
      self->open.fetch_add(1, std::memory_order_relaxed);
      self->made.fetch_add(1, std::memory_order_relaxed);
      p.conns.push_back(conn);
      self->dispatch(p, key);
    };
    if (self->loop->inEventLoop()) {
      run();
    } else {
      self->loop->execute(run);
    }
  };
  makeTcpConnect(config, *loop, url.host, url.port, std::move(done))->start();
}

void HttpClientState::send(const std::shared_ptr<HttpClientConn>& conn, RequestPtr req) {
  conn->idleTimer.cancel();
  FullHttpRequest& r = req->request;
  r.setUri(req->url.target);
  HttpHeaders& h = r.headers();
  if (!h.contains(HttpHeaderNames::kHost)) h.add(HttpHeaderNames::kHost, req->url.authority());
  if (!options.userAgent.empty() && !h.contains(HttpHeaderNames::kUserAgent)) {
    h.add(HttpHeaderNames::kUserAgent, options.userAgent);
  }
  if (h.containsValue(HttpHeaderNames::kConnection, "close")) conn->reusable = false;
  if (options.requestTimeout.count() > 0) {
    std::weak_ptr<HttpClientState> weak = weak_from_this();
    std::weak_ptr<HttpClientConn> weakConn = conn;
    req->timer = loop->schedule(options.requestTimeout, [weak, weakConn] {
      auto self = weak.lock();
      auto c = weakConn.lock();
      if (self == nullptr || c == nullptr || c->inFlight.empty()) return;
      self->onError(c, make_error_code(HttpClientErrc::timedOut));
    });
  }
  HttpObject msg(std::move(r));
  conn->inFlight.push_back(std::move(req));
  conn->channel->writeAndFlush(std::move(msg));
}

void HttpClientState::onResponse(const std::shared_ptr<HttpClientConn>& conn,
                                 FullHttpResponse res) {
  // An interim response (100 Continue, 103 Early Hints...) comes before the final one to the same
  // request (RFC 9110 15.2) and answers nothing. (101 ends HTTP/1.1 on the connection: final.)
  const std::uint16_t status = res.status().code();
  if (status >= 100 && status < 200 && status != 101) return;
  if (conn->inFlight.empty()) {  // a response nobody asked for: the peer is confused
    conn->reusable = false;
    closeSoon(conn);
    return;
  }
  RequestPtr req = std::move(conn->inFlight.front());
  conn->inFlight.pop_front();
  if (!keepsAlive(res)) conn->reusable = false;

  const std::string key = conn->key;
  // 101, or a 2xx to CONNECT: the connection now carries another protocol (the decoder passes its
  // bytes through raw). It can serve no other request: closed, whatever is queued on it fails.
  const bool switched =
      status == 101 || (req->method.id() == HttpMethod::Id::Connect && status / 100 == 2);
  if (switched) {
    conn->reusable = false;
    closeSoon(conn);
  } else if (!conn->reusable && conn->inFlight.empty()) {
    closeSoon(conn);
  }

  const std::uint16_t code = status;
  const auto location = res.headers().get(HttpHeaderNames::kLocation);
  if (options.followRedirects && isRedirect(code) && location) {
    if (req->redirects >= options.maxRedirects) {
      complete(std::move(req), make_error_code(HttpClientErrc::tooManyRedirects));
    } else if (auto next = req->url.resolve(*location)) {
      req->timer.cancel();
      const bool toGet =
          code == 303 || ((code == 301 || code == 302) && req->method.id() == HttpMethod::Id::Post);
      auto again = std::make_unique<HttpClientRequest>();
      again->id = req->id;
      again->url = *next;
      again->method = toGet ? HttpMethod::GET : req->method;
      again->done = std::move(req->done);
      again->redirects = req->redirects + 1;
      again->request =
          FullHttpRequest(again->method, next->target, toGet ? ByteBuf() : shareBody(req->body));
      // Credentials go only to the scheme, host and port they were given for (as curl, Go and
      // requests do): a redirect elsewhere would hand them to whoever the Location names, or send
      // them in clear after an https -> http redirect.
      const bool sameOrigin = next->scheme == req->url.scheme && next->host == req->url.host &&
                              next->port == req->url.port;
      req->headers.forEach([&](std::string_view n, std::string_view v) {
        if (http_util::equalsIgnoreCase(n, HttpHeaderNames::kHost)) return;
        if (!sameOrigin && (http_util::equalsIgnoreCase(n, "authorization") ||
                            http_util::equalsIgnoreCase(n, "proxy-authorization") ||
                            http_util::equalsIgnoreCase(n, "cookie"))) {
          return;
        }
        if (toGet && (http_util::equalsIgnoreCase(n, HttpHeaderNames::kContentLength) ||
                      http_util::equalsIgnoreCase(n, HttpHeaderNames::kContentType) ||
                      http_util::equalsIgnoreCase(n, HttpHeaderNames::kTransferEncoding))) {
          return;
        }
        again->request.headers().add(n, v);
      });
      again->headers = again->request.headers().copy();
      if (!toGet) again->body = shareBody(req->body);
      submit(std::move(again));
    } else {
      complete(std::move(req), {}, std::move(res));
    }
  } else {
    complete(std::move(req), {}, std::move(res));
  }
  if (conn->reusable && conn->inFlight.empty() && conn->channel && conn->channel->isActive() &&
      options.idleTimeout.count() > 0) {
    std::weak_ptr<HttpClientConn> weakConn = conn;
    conn->idleTimer = loop->schedule(options.idleTimeout, [weakConn] {
      auto c = weakConn.lock();
      if (c == nullptr || !c->inFlight.empty()) return;
      if (std::shared_ptr<SocketChannel> ch = c->channel) ch->close();
    });
  }
  auto it = pools.find(key);
  if (it != pools.end()) dispatch(it->second, key);
}

void HttpClientState::closeSoon(const std::shared_ptr<HttpClientConn>& conn) {
  // Not from inside the handler's own read: the close would run channelInactive re-entrantly.
  if (!conn->channel) return;
  std::shared_ptr<SocketChannel> ch = conn->channel;
  loop->execute([ch] { ch->close(); });
}

void HttpClientState::onError(const std::shared_ptr<HttpClientConn>& conn, ErrorCode ec) {
  // The front request gets the error; the others in flight fail as the connection closes.
  conn->reusable = false;
  if (!conn->inFlight.empty()) {
    RequestPtr req = std::move(conn->inFlight.front());
    conn->inFlight.pop_front();
    complete(std::move(req), ec);
  }
  closeSoon(conn);
}

void HttpClientState::onClosed(const std::shared_ptr<HttpClientConn>& conn) {
  conn->reusable = false;
  conn->idleTimer.cancel();
  const ErrorCode ec = conn->closeError ? conn->closeError : ErrorCode(ChannelErrc::closed);
  while (!conn->inFlight.empty()) {
    RequestPtr req = std::move(conn->inFlight.front());
    conn->inFlight.pop_front();
    complete(std::move(req), ec);
  }
  auto it = pools.find(conn->key);
  if (it == pools.end()) return;
  auto& conns = it->second.conns;
  const auto found = std::find(conns.begin(), conns.end(), conn);
  if (found != conns.end()) {
    conns.erase(found);
    open.fetch_sub(1, std::memory_order_relaxed);
  }
  if (!closed) dispatch(it->second, conn->key);
}

void HttpClientState::cancel(std::uint64_t id, bool sentToo) {
  for (auto& [key, pool] : pools) {
    for (auto it = pool.waiting.begin(); it != pool.waiting.end(); ++it) {
      if ((*it)->id != id) continue;
      RequestPtr req = std::move(*it);
      pool.waiting.erase(it);
      complete(std::move(req), boost::asio::error::operation_aborted);
      return;
    }
    if (!sentToo) continue;  // (a total cancellation leaves a request that went out alone)
    for (const auto& c : pool.conns) {
      for (auto it = c->inFlight.begin(); it != c->inFlight.end(); ++it) {
        if ((*it)->id != id) continue;
        // Its response may be half read: the connection cannot be reused.
        RequestPtr req = std::move(*it);
        c->inFlight.erase(it);
        c->reusable = false;
        // A copy: the close may run onClosed at once, which erases c and drops c->channel.
        std::shared_ptr<SocketChannel> ch = c->channel;
        ch->close();
        complete(std::move(req), boost::asio::error::operation_aborted);
        return;
      }
    }
  }
}

void HttpClientState::closeAll() {
  // A completion run below may call close() again (or destroy the client): that nested call
  // finds the client closed and leaves the rest to this one.
  if (closed) return;
  closed = true;
  for (auto& [key, pool] : pools) {
    while (!pool.waiting.empty()) {
      RequestPtr req = std::move(pool.waiting.front());
      pool.waiting.pop_front();
      complete(std::move(req), make_error_code(HttpClientErrc::clientClosed));
    }
    const auto conns = pool.conns;  // onClosed edits the list
    for (const auto& c : conns) {
      c->closeError = make_error_code(HttpClientErrc::clientClosed);
      std::shared_ptr<SocketChannel> ch = c->channel;  // (onClosed drops c->channel)
      if (ch) ch->close();
    }
  }
}

}  // namespace detail

HttpClient::HttpClient(EventLoopGroup& group) : HttpClient(group, Options()) {}
HttpClient::HttpClient(EventLoopGroup& group, Options options)
    : state_(std::make_shared<detail::HttpClientState>(group, std::move(options))) {}
HttpClient::~HttpClient() { close(); }

EventLoopExecutor HttpClient::loopExecutor(detail::HttpClientState& state) noexcept {
  return state.loop->get_executor();
}

std::uint64_t HttpClient::start(const std::shared_ptr<detail::HttpClientState>& state,
                                FullHttpRequest req, std::string url, Completion done) {
  const std::uint64_t id = state->nextId.fetch_add(1, std::memory_order_relaxed);
  auto r = std::make_unique<detail::HttpClientRequest>();
  r->id = id;
  r->done = std::move(done);
  const auto parsed = HttpUrl::parse(url);
  if (!parsed) {
    // Completed on the loop like any other outcome (never inside this call).
    std::shared_ptr<detail::HttpClientRequest> shared(std::move(r));
    state->loop->execute([shared] {
      HttpClient::Completion d = std::move(shared->done);
      d(make_error_code(HttpClientErrc::invalidUrl), FullHttpResponse());
    });
    return id;
  }
  r->url = *parsed;
  r->method = req.method();
  r->headers = req.headers().copy();
  r->body = req.content().isReadable() ? req.content().retainedDuplicate() : ByteBuf();
  r->request = std::move(req);
  std::weak_ptr<detail::HttpClientState> weak = state;
  auto shared = std::make_shared<detail::RequestPtr>(std::move(r));
  state->loop->execute([weak, shared] {
    if (auto s = weak.lock()) {
      s->submit(std::move(*shared));
    } else if (*shared) {
      detail::HttpClientState::complete(std::move(*shared),
                                        make_error_code(HttpClientErrc::clientClosed));
    }
  });
  return id;
}

void HttpClient::Canceller::operator()(boost::asio::cancellation_type type) const {
  if (!detail::cancels(type)) return;
  // A request already written may have had its effect on the server: total cancellation (which
  // promises none) takes only one still waiting for a connection (async_op.hpp's convention).
  const bool sentToo = detail::cancelsWithSideEffects(type);
  auto s = state.lock();
  if (s == nullptr) return;
  const std::uint64_t requestId = id;
  std::weak_ptr<detail::HttpClientState> weak = s;
  s->loop->execute([weak, requestId, sentToo] {
    if (auto self = weak.lock()) self->cancel(requestId, sentToo);
  });
}

void HttpClient::close() {
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

std::size_t HttpClient::openConnections() const noexcept {
  return state_->open.load(std::memory_order_relaxed);
}
std::uint64_t HttpClient::connectionsMade() const noexcept {
  return state_->made.load(std::memory_order_relaxed);
}
EventLoop& HttpClient::eventLoop() const noexcept { return *state_->loop; }
const HttpClient::Options& HttpClient::options() const noexcept { return state_->options; }

}  // namespace netbuf
