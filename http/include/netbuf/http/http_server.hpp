#pragma once
// HttpServer: an HTTP/1.1 server on netbuf's transport, routing requests by method and path to
// plain functions or coroutines.
//
//     HttpServer server;
//     server.route(HttpMethod::GET, "/", [](FullHttpRequest&) {
//              return HttpServer::text(HttpResponseStatus::OK, "Hello, World!");
//            })
//         .route(HttpMethod::POST, "/echo", [](FullHttpRequest& req) {
//              FullHttpResponse res(HttpResponseStatus::OK, std::move(req.content()));
//              return res;
//            })
//         .route(HttpMethod::GET, "/slow/*",                        // a prefix route
//                [](FullHttpRequest req) -> asio::awaitable<FullHttpResponse> { ... co_await ...
//                });
//     EventLoopGroup group(4);
//     auto channel = server.bind(group, "127.0.0.1", 8080);
//     ...
//     server.shutdownGracefully(5s);   // stops accepting, answers the requests already read
//
// Routing: the path is the request target up to '?'. routeStreaming() routes hand the content to
// an HttpStreamHandler part by part instead of aggregating it. A route's path matches exactly, or,
// when it ends with "/*", matches every path under that prefix. No route for the path: 404; a route
// for the path but not the method: 405 with Allow. HEAD is answered by the GET route with the body
// left out (the response keeps its Content-Length). A handler that throws gets a 500.
//
// Per connection (pipeline "http-idle", "http-decoder", "http-server"; with Options::tls, bind()
// puts "tls", an SslHandler, in front of them: HTTPS):
//  - requests are aggregated (HttpObjectAggregator, Options::maxContentLength; "Expect:
//    100-continue" is answered "100 Continue" before the body is read, or 413 / 417);
//  - keep-alive follows HTTP/1.0 and 1.1 rules (Connection: close / keep-alive); a response to a
//    request that ends the connection carries "connection: close" and the connection closes once
//    it is written;
//  - pipelining: responses go out in request order, also when coroutines finish out of order;
//    responses produced while reading go into one buffer, written with one flush per read batch;
//  - every response gets "date" (cached, refreshed once a second) and "content-length" when the
//    handler set no framing;
//  - a malformed request (HttpDecoderError) is answered with its status (400, 413, 414, 431, 501,
//    505) and "connection: close", and the connection closes;
//  - a connection idle (no read, no write) for Options::idleTimeout is closed; one that starts no
//    request head for Options::requestHeadTimeout (checked once per period: one to two periods)
//    while it owes no response is closed too, which ends a slow-loris peer that trickles bytes
//    fast enough to never be idle;
//  - backpressure: while Options::maxPendingResponses responses wait for coroutines, or the
//    channel is not writable, the connection stops reading.
//
// Threading: handlers run on their connection's loop; a coroutine handler runs there too. The
// routes are registered before bind()/install() (later registration is an IllegalStateError) and
// read without locks by every loop. The server object must outlive its channels' use of it only
// through shared state: it may be destroyed while connections run (they keep the routes alive).

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/server_channel.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace netbuf {

namespace detail {
struct HttpServerState;
}  // namespace detail

/// A streaming route's handler for one request (HttpServer::routeStreaming): it sees the head,
/// then the content part by part as it arrives (retained slices of the received bytes, no
/// aggregation and no Options::maxContentLength: the decoder's limits still apply), then answers
/// at the end. Made per request by the route's factory; runs on the connection's loop. An
/// exception from any method is answered with 500 once the request's last part has arrived (the
/// rest of its content is skipped).
class HttpStreamHandler {
 public:
  virtual ~HttpStreamHandler() = default;
  /// The request's head, before any content (an "Expect: 100-continue" was answered already).
  virtual void onHead(const HttpRequest& head) { (void)head; }
  /// One part of the content, in order.
  virtual void onContent(ByteBuf content) = 0;
  /// The end of the request (trailers: those of a chunked request, or nullptr); the response.
  virtual FullHttpResponse onEnd(const HttpHeaders* trailers) = 0;
};

/// Counters of one server (all its connections).
struct HttpServerStats {
  std::uint64_t connections = 0;    ///< connections served
  std::uint64_t requests = 0;       ///< requests answered by a route (any status)
  std::uint64_t badRequests = 0;    ///< requests refused by the decoder or aggregator
  std::uint64_t notFound = 0;       ///< 404 and 405 answers
  std::uint64_t handlerErrors = 0;  ///< handlers that threw (answered 500)
  std::uint64_t idleClosed = 0;     ///< connections closed by the idle timeout
  std::uint64_t headTimeouts = 0;   ///< connections closed by the request-head timeout
};

class HttpServer {
 public:
  /// A synchronous handler: returns the response.
  using Handler = std::function<FullHttpResponse(FullHttpRequest& request)>;
  /// A coroutine handler: runs on the connection's loop.
  using AsyncHandler =
      std::function<boost::asio::awaitable<FullHttpResponse>(FullHttpRequest request)>;

  struct Options {
    HttpDecoderOptions decoder;                     ///< request limits
    std::uint64_t maxContentLength = 1 << 20;       ///< aggregated body limit (413)
    std::chrono::milliseconds idleTimeout{60'000};  ///< 0: never
    /// A connection must start each request head within one to two of these periods, counted
    /// from its start or its previous request (keep-alive idle time included); 0: never.
    std::chrono::milliseconds requestHeadTimeout{30'000};
    std::size_t maxPendingResponses = 64;  ///< coroutine responses in flight
    std::string serverName;                ///< "server" field when not empty
    /// A server SslContext (SslContext::forServer): bind()'s connections run TLS, each with
    /// tls->newHandler() at the head of its pipeline (give the context alpnProtocols
    /// {"http/1.1"} to answer clients that offer ALPN). nullptr: plain HTTP. install() leaves it
    /// to the caller.
    std::shared_ptr<SslContext> tls;
  };

  HttpServer();
  explicit HttpServer(Options options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Registers a route (see Routing). fn is a Handler or an AsyncHandler (a callable returning
  /// asio::awaitable<FullHttpResponse>). IllegalStateError once serving has started.
  template <class F>
  HttpServer& route(HttpMethod method, std::string path, F&& fn) {
    if constexpr (std::is_invocable_r_v<boost::asio::awaitable<FullHttpResponse>, F&,
                                        FullHttpRequest>) {
      return addRoute(method, std::move(path), Handler(), AsyncHandler(std::forward<F>(fn)));
    } else {
      return addRoute(method, std::move(path), Handler(std::forward<F>(fn)), AsyncHandler());
    }
  }
  /// Serves the files under root for GET and HEAD of prefix + "REL" (prefix ends with '/'): the
  /// file is sent with sendfile (FileRegion, no copy through user space), with its content-type
  /// by extension, last-modified, If-Modified-Since (304) and one byte Range (206, 416).
  /// Percent-encoded paths are decoded and no path, encoded or not, leaves root ("..", absolute
  /// paths, symlinks pointing outside: 404). root must be an existing directory
  /// (IllegalArgumentError otherwise).
  HttpServer& staticFiles(std::string prefix, const std::filesystem::path& root);
  /// A route whose requests are not aggregated (uploads larger than memory should hold): factory
  /// makes an HttpStreamHandler for each request (see there). Matches the method exactly (no HEAD
  /// through GET); an "Expect: 100-continue" is answered at once (other expectations: 417).
  using StreamFactory = std::function<std::unique_ptr<HttpStreamHandler>()>;
  HttpServer& routeStreaming(HttpMethod method, std::string path, StreamFactory factory);
  /// The handler for paths no route matches (default: 404 "Not Found").
  HttpServer& fallback(Handler fn);

  /// Adds the server's handlers to a channel's pipeline (EmbeddedChannel in tests).
  void install(ChannelPipeline& pipeline);
  /// Listens on host:port (0: any free port) on group's loops. Keep the returned channel: the
  /// server holds its listeners weakly (each listener's child handler holds the server's state).
  [[nodiscard]] std::shared_ptr<ServerChannel> bind(
      EventLoopGroup& group, const std::string& host, unsigned short port,
      const ChannelOptions& options = ChannelOptions());
  /// Stops accepting (closes the channels bind() returned), lets every connection answer the
  /// requests it has read whole, coroutines included (the last response says "connection:
  /// close"), then closes it. A request whose content is still arriving is cut off unanswered.
  /// Returns false when connections were still open after timeout (they are closed then).
  /// Any thread but a loop's.
  bool shutdownGracefully(std::chrono::milliseconds timeout);

  HttpServerStats stats() const noexcept;
  const Options& options() const noexcept;

  /// A response with a text body and its content-type ("text/plain; charset=utf-8").
  static FullHttpResponse text(HttpResponseStatus status, std::string_view body,
                               std::string_view contentType = "text/plain; charset=utf-8");

 private:
  HttpServer& addRoute(HttpMethod method, std::string path, Handler fn, AsyncHandler async);

  std::shared_ptr<detail::HttpServerState> state_;
};

}  // namespace netbuf
