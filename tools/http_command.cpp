// `netbuf serve http`: the demo HTTP/1.1 server (HttpServer).
//
//   GET  /          "Hello, World!" (text/plain)
//   POST /echo      the request body, with the request's content-type
//   GET  /files/REL DIR/REL when --root DIR is given (HttpServer::staticFiles: sendfile)
//   anything else   404

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <netbuf/netbuf.hpp>
#include <string>

#include "commands.hpp"
#include "stop_signals.hpp"

namespace netbuf::tools {

int runServeHttp(const ParsedOptions& options) {
  const std::string host = options.text("--host");
  const std::uint16_t port = options.port("--port");
  const std::size_t threads = options.count("--threads", 1, 1024);
  HttpServer::Options opt;
  opt.maxContentLength = options.bytes("--max-content-length");
  std::optional<std::filesystem::path> root;
  if (options.given("--root")) {
    root = options.text("--root");
    if (!std::filesystem::is_directory(*root)) options.invalid("--root", "a directory");
  }

  const sigset_t signals = blockStopSignals();  // before the loops' threads exist

  HttpServer server(opt);
  server
      .route(HttpMethod::GET, "/",
             [](FullHttpRequest&) {
               return HttpServer::text(HttpResponseStatus::OK, "Hello, World!", "text/plain");
             })
      .route(HttpMethod::POST, "/echo", [](FullHttpRequest& req) {
        FullHttpResponse res(HttpResponseStatus::OK, std::move(req.content()));
        res.headers().add(HttpHeaderNames::kContentType,
                          req.headers().get(HttpHeaderNames::kContentType,
                                            HttpHeaderValues::kApplicationOctetStream));
        return res;
      });
  if (root) server.staticFiles("/files/", *root);
  EventLoopGroup group(threads);
  auto channel = server.bind(group, host, port);
  printListening(host, channel->port());

  const char* sig = waitForStopSignal(signals);
  server.shutdownGracefully(std::chrono::seconds(5));
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
  const HttpServerStats s = server.stats();
  std::printf("stopped (%s); %llu connection(s), %llu request(s), %llu refused, %llu not found\n",
              sig, static_cast<unsigned long long>(s.connections),
              static_cast<unsigned long long>(s.requests),
              static_cast<unsigned long long>(s.badRequests),
              static_cast<unsigned long long>(s.notFound));
  return kExitOk;
}

namespace {

/// Runs one request with HttpClient and prints the body (stdout or --output), the status line and
/// errors on stderr. Exit 0 for a 2xx response.
int runRequest(const ParsedOptions& options, HttpMethod method, ByteBuf body) {
  const std::string url = options.text("URL");
  EventLoopGroup group(1);
  int code = kExitFailure;
  {
    HttpClient::Options opt;
    opt.requestTimeout = std::chrono::milliseconds(
        static_cast<std::int64_t>(options.seconds("--timeout") * 1000));
    opt.followRedirects = options.flag("--location");
    HttpClient client(group, opt);
    FullHttpRequest req(method, "/", std::move(body));
    if (method == HttpMethod::POST) {
      req.headers().add(HttpHeaderNames::kContentType, options.text("--content-type"));
    }
    std::promise<std::pair<ErrorCode, FullHttpResponse>> result;
    client.request(std::move(req), url, [&result](ErrorCode e, FullHttpResponse r) {
      result.set_value({e, std::move(r)});
    });
    auto [ec, res] = result.get_future().get();
    if (ec) {
      std::fprintf(stderr, "netbuf http: %s: %s\n", url.c_str(), ec.message().c_str());
    } else {
      std::fprintf(stderr, "%s %u %s\n", std::string(res.protocolVersion().text()).c_str(),
                   static_cast<unsigned>(res.status().code()),
                   std::string(res.status().reasonPhrase()).c_str());
      const ByteBuf& content = res.content();
      const auto* data = reinterpret_cast<const char*>(content.readPtr());
      const char* outName = options.given("-o") ? "-o" : "--output";
      if (options.given(outName)) {
        std::ofstream out(options.text(outName), std::ios::binary);
        out.write(data, static_cast<std::streamsize>(content.readableBytes()));
        if (!out) {
          std::fprintf(stderr, "netbuf http: cannot write %s\n", options.text(outName).c_str());
          return kExitFailure;
        }
      } else {
        std::fwrite(data, 1, content.readableBytes(), stdout);
        std::fflush(stdout);
      }
      if (res.status().codeClass() == 2) code = kExitOk;
    }
  }
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(2));
  return code;
}

}  // namespace

int runHttpGet(const ParsedOptions& options) {
  return runRequest(options, HttpMethod::GET, ByteBuf());
}

int runHttpPost(const ParsedOptions& options) {
  std::string data = options.text("--data");
  std::string bytes;
  if (!data.empty() && data.front() == '@') {
    std::ifstream in(data.substr(1), std::ios::binary);
    if (!in) throw UsageError("--data: cannot read " + data.substr(1));
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    bytes = std::move(data);
  }
  return runRequest(options, HttpMethod::POST, Unpooled::wrappedBuffer(std::move(bytes)));
}

}  // namespace netbuf::tools
