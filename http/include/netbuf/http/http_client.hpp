#pragma once
// HttpClient: an HTTP/1.1 client on netbuf's transport, every request an Asio operation.
//
//     EventLoopGroup group(1);
//     HttpClient client(group);
//     FullHttpResponse res = co_await client.get("http://127.0.0.1:8080/", asio::use_awaitable);
//     client.post(url, body, "application/json", [](ErrorCode ec, FullHttpResponse res) { ... });
//
// Completion: void(ErrorCode, FullHttpResponse), any completion token (a callback,
// use_awaitable, use_future, deferred). A response of any status completes with no error (check
// res.status()); errors are the transport's (connection refused...), ChannelErrc::closed (the
// connection closed before the whole response came), HttpClientErrc, or, for https, the SslErrc
// that failed the TLS handshake (unknownCa, hostnameMismatch, certificateExpired...). A bound
// cancellation slot cancels the request with operation_aborted: terminal and partial cancellation
// at any time (a request already sent closes its connection, which cannot be reused with a response
// half read), total cancellation only while the request waits for a connection (nothing was sent).
//
// HTTPS: an https:// URL (port 443 by default) connects with an SslHandler at the head of the
// connection's pipeline, made by Options::tls (a client SslContext) for the URL's host and port:
// the server's certificate must chain to the context's trusted roots and name that host. Without
// Options::tls the client makes one SslContext::forClient() (the system's trusted roots,
// verification on) the first time it needs one, and uses it for every https host after.
//
// Connections: a pool per scheme, host and port, with keep-alive (a connection whose response
// allowed it goes back to the pool; idle ones are closed after Options::idleTimeout), at most
// Options::maxConnectionsPerHost open per host (more requests wait for one), and, with
// Options::pipelining, up to Options::maxPipelineDepth requests in flight per connection.
// Responses may be chunked, Content-Length framed or close-delimited; a response to HEAD has no
// body. Redirects are not followed unless Options::followRedirects (301, 302, 303, 307, 308 with
// a Location; 303 and a POST's 301/302 become a GET without body).
//
// Threading: the client's connections live on one loop of the group (picked at construction);
// requests may start on any thread; the completion runs on the handler's associated executor, by
// default that loop. close() and the destructor fail what is pending (HttpClientErrc::
// clientClosed) and close the connections; the group must outlive the client.

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <netbuf/http/http_client_errc.hpp>
#include <netbuf/http/http_url.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/transport/detail/async_op.hpp>
#include <netbuf/transport/error_code.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/event_loop_executor.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <string_view>

namespace netbuf {

namespace detail {
struct HttpClientState;
}  // namespace detail

class HttpClient {
 public:
  struct Options {
    HttpDecoderOptions decoder;                 ///< response limits
    std::uint64_t maxContentLength = 64 << 20;  ///< aggregated response body
    std::chrono::milliseconds connectTimeout{10'000};
    std::chrono::milliseconds requestTimeout{30'000};  ///< 0: none
    std::chrono::milliseconds idleTimeout{60'000};     ///< pooled connections; 0: never
    std::size_t maxConnectionsPerHost = 8;             ///< 0 is taken as 1
    bool pipelining = false;
    std::size_t maxPipelineDepth = 16;
    bool followRedirects = false;
    int maxRedirects = 5;
    std::string userAgent = "netbuf";  ///< empty: no user-agent field
    ChannelOptions channel;
    /// The client SslContext of https connections (SslContext::forClient: whom to trust, client
    /// certificates, ALPN...). nullptr: a default SslContext::forClient(), made once per client.
    std::shared_ptr<SslContext> tls;
  };
  using Completion = std::function<void(ErrorCode, FullHttpResponse)>;

  explicit HttpClient(EventLoopGroup& group);
  HttpClient(EventLoopGroup& group, Options options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Sends request to url's host and port with url's target as the request target (the request's
  /// own uri is replaced); "host" (and "user-agent") are added when absent.
  template <class Token>
  auto request(FullHttpRequest request, std::string_view url, Token&& token) {
    return boost::asio::async_initiate<Token, void(ErrorCode, FullHttpResponse)>(
        Initiate{state_}, token, std::move(request), std::string(url));
  }
  template <class Token>
  auto get(std::string_view url, Token&& token) {
    return request(FullHttpRequest(HttpMethod::GET, "/"), url, std::forward<Token>(token));
  }
  template <class Token>
  auto head(std::string_view url, Token&& token) {
    return request(FullHttpRequest(HttpMethod::HEAD, "/"), url, std::forward<Token>(token));
  }
  template <class Token>
  auto post(std::string_view url, ByteBuf body, std::string_view contentType, Token&& token) {
    FullHttpRequest req(HttpMethod::POST, "/", std::move(body));
    if (!contentType.empty()) req.headers().add("content-type", contentType);
    return request(std::move(req), url, std::forward<Token>(token));
  }

  /// Fails the pending requests (HttpClientErrc::clientClosed) and closes every connection.
  /// Idempotent; any thread but the client's loop may wait for it (it does).
  void close();
  /// Connections open now (idle and busy), all hosts. Any thread.
  std::size_t openConnections() const noexcept;
  /// Connections made since construction (a measure of reuse). Any thread.
  std::uint64_t connectionsMade() const noexcept;
  EventLoop& eventLoop() const noexcept;
  const Options& options() const noexcept;

 private:
  struct Initiate {
    std::shared_ptr<detail::HttpClientState> state;
    template <class Handler>
    void operator()(Handler&& handler, FullHttpRequest req, std::string url) const {
      auto slot = boost::asio::get_associated_cancellation_slot(handler);
      detail::SharedCompletion<std::decay_t<Handler>, EventLoopExecutor> completion(
          std::forward<Handler>(handler), loopExecutor(*state));
      const std::uint64_t id = start(state, std::move(req), std::move(url),
                                     [completion](ErrorCode ec, FullHttpResponse res) {
                                       completion.complete(ec, std::move(res));
                                     });
      if (slot.is_connected()) {
        slot.template emplace<Canceller>(Canceller{state, id});
      }
      completion.initiated();
    }
  };
  struct Canceller {
    std::weak_ptr<detail::HttpClientState> state;
    std::uint64_t id;
    void operator()(boost::asio::cancellation_type type) const;
  };

  static EventLoopExecutor loopExecutor(detail::HttpClientState& state) noexcept;
  /// Queues the request on the client's loop; returns its id (for cancellation).
  static std::uint64_t start(const std::shared_ptr<detail::HttpClientState>& state,
                             FullHttpRequest req, std::string url, Completion done);

  std::shared_ptr<detail::HttpClientState> state_;
};

}  // namespace netbuf
