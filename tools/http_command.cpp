// `netbuf serve http`: the demo HTTP/1.1 server (HttpServer).
//
//   GET  /          "Hello, World!" (text/plain)
//   POST /echo      the request body, with the request's content-type
//   GET  /files/REL DIR/REL when --root DIR is given (read into memory; see docs/http.md)
//   anything else   404

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <netbuf/netbuf.hpp>
#include <string>

#include "commands.hpp"
#include "stop_signals.hpp"

namespace netbuf::tools {

namespace {

/// The file under root that rel names, or nothing when rel would leave root (after
/// percent-decoding and normalising) or names no regular file.
std::optional<std::filesystem::path> resolveUnder(const std::filesystem::path& root,
                                                  std::string_view rel) {
  std::string decoded;
  for (std::size_t i = 0; i < rel.size(); ++i) {
    if (rel[i] == '%') {
      if (i + 2 >= rel.size()) return std::nullopt;
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      const int hi = hex(rel[i + 1]);
      const int lo = hex(rel[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      decoded.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      decoded.push_back(rel[i]);
    }
  }
  if (decoded.find('\0') != std::string::npos) return std::nullopt;
  // Reject any ".." segment outright, and anything whose normal form leaves the root.
  const std::filesystem::path relPath = std::filesystem::path(decoded).lexically_normal();
  if (relPath.is_absolute()) return std::nullopt;
  for (const auto& part : relPath) {
    if (part == "..") return std::nullopt;
  }
  std::error_code ec;
  const std::filesystem::path full = std::filesystem::weakly_canonical(root / relPath, ec);
  if (ec) return std::nullopt;
  const std::filesystem::path canonicalRoot = std::filesystem::weakly_canonical(root, ec);
  if (ec) return std::nullopt;
  auto [r, f] = std::mismatch(canonicalRoot.begin(), canonicalRoot.end(), full.begin(), full.end());
  if (r != canonicalRoot.end()) return std::nullopt;
  if (!std::filesystem::is_regular_file(full, ec)) return std::nullopt;
  return full;
}

}  // namespace

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
  if (root) {
    server.route(HttpMethod::GET, "/files/*", [root = *root](FullHttpRequest& req) {
      std::string_view path = req.uri();
      path = path.substr(0, path.find('?'));
      const auto file = resolveUnder(root, path.substr(std::string_view("/files/").size()));
      if (!file) return HttpServer::text(HttpResponseStatus::NOT_FOUND, "Not Found\n");
      std::ifstream in(*file, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      FullHttpResponse res(HttpResponseStatus::OK, Unpooled::wrappedBuffer(std::move(bytes)));
      res.headers().add(HttpHeaderNames::kContentType, HttpHeaderValues::kApplicationOctetStream);
      return res;
    });
  }
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
