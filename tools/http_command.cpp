// `netbuf serve http`: the demo HTTP/1.1 server (HttpServer).
//
//   GET  /          "Hello, World!" (text/plain)
//   POST /echo      the request body, with the request's content-type
//   GET  /files/REL DIR/REL when --root DIR is given (HttpServer::staticFiles: sendfile)
//   anything else   404

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
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

}  // namespace netbuf::tools
