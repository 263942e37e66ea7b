// `netbuf serve http`: the demo HTTP/1.1 server (HttpServer).
//
//   GET  /          "Hello, World!" (text/plain)
//   POST /echo      the request body, with the request's content-type
//   GET  /files/REL DIR/REL when --root DIR is given (HttpServer::staticFiles: sendfile)
//   anything else   404

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <netbuf/netbuf.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <string>

#include "bench_http.hpp"
#include "commands.hpp"
#include "stop_signals.hpp"
#include "tls_options.hpp"
#include "transport_options.hpp"

namespace netbuf::tools {

int runServeHttp(const ParsedOptions& options) {
  const std::string host = options.text("--host");
  const std::uint16_t port = options.port("--port");
  const std::size_t threads = options.count("--threads", 1, 1024);
  const Transport transport = serverTransport(options);
  HttpServer::Options opt;
  opt.maxContentLength = options.bytes("--max-content-length");
  // ALPN: a client that offers protocols (curl, browsers) learns it speaks HTTP/1.1 here.
  opt.tls = serverTlsContext(options, {"http/1.1"});
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
  EventLoopGroup group(threads, transport);
  auto channel = server.bind(group, host, port);
  printListening(host, channel->port());
  printTransport(group.transport());

  const char* sig = waitForStopSignal(signals);
  server.shutdownGracefully(std::chrono::seconds(5));
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
  const HttpServerStats s = server.stats();
  std::printf(
      "stopped (%s); %llu connection(s), %llu request(s), %llu refused, %llu not found\n", sig,
      static_cast<unsigned long long>(s.connections), static_cast<unsigned long long>(s.requests),
      static_cast<unsigned long long>(s.badRequests), static_cast<unsigned long long>(s.notFound));
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
    opt.requestTimeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(options.seconds("--timeout") * 1000));
    opt.followRedirects = options.flag("--location");
    const std::optional<HttpUrl> parsed = HttpUrl::parse(url);
    if ((parsed && parsed->isHttps()) || options.given("--cacert") || options.flag("--insecure")) {
      opt.tls = clientTlsContext(options);
    }
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

int runBenchHttp(const ParsedOptions& options) {
  const double seconds = options.seconds("--seconds", 3600, true);
  const bool json = options.flag("--json");
  const auto workloads = bench::httpWorkloads();
  constexpr int kRounds = 7;
  // Alternating rounds (netbuf, http-parser, then the other way round), each side timed for an
  // equal share of the budget; medians of the per-round ns/request.
  const double share = seconds / (kRounds * 2.0 * static_cast<double>(workloads.size()));
  std::string rows;
  if (!json) {
    std::printf(
        "HTTP request parsing: head and field views (and body slices), one request per "
        "call\n(%d alternating rounds; medians; ratio = http-parser time / netbuf time)"
        "\n\n",
        kRounds);
    std::printf("%-24s %12s %10s %14s %10s %8s\n", "workload", "netbuf ns", "GB/s",
                "http-parser ns", "GB/s", "ratio");
  }
  for (const auto& w : workloads) {
    // Calibrate: iterations for `share` seconds of netbuf parsing.
    const double probe = bench::timeNetbufParse(w, 2000) / 2000;
    const auto iters = static_cast<std::size_t>(std::max(1000.0, share * 1e9 / probe));
    std::vector<double> ours;
    std::vector<double> theirs;
    for (int r = 0; r < kRounds; ++r) {
      if (r % 2 == 0) {
        ours.push_back(bench::timeNetbufParse(w, iters) / static_cast<double>(iters));
        if (bench::hasHttpParser())
          theirs.push_back(bench::timeHttpParser(w, iters) / static_cast<double>(iters));
      } else {
        if (bench::hasHttpParser())
          theirs.push_back(bench::timeHttpParser(w, iters) / static_cast<double>(iters));
        ours.push_back(bench::timeNetbufParse(w, iters) / static_cast<double>(iters));
      }
    }
    auto median = [](std::vector<double> v) {
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double a = median(ours);
    const double b = median(theirs);
    const double bytes = static_cast<double>(w.bytes.size());
    if (json) {
      rows += fmt::format(
          "{}{{\"workload\":\"{}\",\"bytes\":{},\"netbuf_ns\":{:.1f},\"http_parser_ns\":{:.1f},"
          "\"ratio\":{:.3f}}}",
          rows.empty() ? "" : ",", w.name, w.bytes.size(), a, b, b > 0 ? b / a : 0.0);
    } else if (b > 0) {
      std::printf("%-24s %12.1f %10.2f %14.1f %10.2f %8.2f\n", w.name.c_str(), a, bytes / a, b,
                  bytes / b, b / a);
    } else {
      std::printf("%-24s %12.1f %10.2f %14s %10s %8s\n", w.name.c_str(), a, bytes / a, "-", "-",
                  "-");
    }
  }
  if (json) std::printf("{\"http_parse\":[%s]}\n", rows.c_str());
  if (!bench::hasHttpParser() && !json) {
    std::printf("\nhttp-parser was not found at build time (libhttp-parser-dev): no baseline.\n");
  }
  return kExitOk;
}

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
