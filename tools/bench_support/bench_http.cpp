// The HTTP parser workloads (bench_http.hpp).

#include "bench_http.hpp"

#include <chrono>
#include <netbuf/codec/http/http_request_decoder.hpp>
#include <stdexcept>

#ifdef NETBUF_HAVE_HTTP_PARSER
#include <http_parser.h>
#endif

namespace netbuf::bench {

std::vector<HttpWorkload> httpWorkloads() {
  std::vector<HttpWorkload> w;
  w.push_back({"browser GET 703 B",
               "GET /wp-content/uploads/2010/03/hello-kitty-darth-vader-pink.jpg HTTP/1.1\r\n"
               "Host: www.kittyhell.com\r\n"
               "User-Agent: Mozilla/5.0 (Macintosh; U; Intel Mac OS X 10.6; ja-JP-mac; "
               "rv:1.9.2.3) Gecko/20100401 Firefox/3.6.3 Pathtraq/0.9\r\n"
               "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
               "Accept-Language: ja,en-us;q=0.7,en;q=0.3\r\n"
               "Accept-Encoding: gzip,deflate\r\n"
               "Accept-Charset: Shift_JIS,utf-8;q=0.7,*;q=0.7\r\n"
               "Keep-Alive: 115\r\n"
               "Connection: keep-alive\r\n"
               "Cookie: wp_ozh_wsa_visits=2; wp_ozh_wsa_visit_lasttime=xxxxxxxxxx; "
               "__utma=xxxxxxxxx.xxxxxxxxxx.xxxxxxxxxx.xxxxxxxxxx.xxxxxxxxxx.x; "
               "__utmz=xxxxxxxxx.xxxxxxxxxx.x.x.utmccn=(referral)|utmcsr=reader.livedoor.com|"
               "utmcct=/reader/|utmcmd=referral\r\n"
               "\r\n",
               2});
  std::string post =
      "POST /api/v1/upload HTTP/1.1\r\n"
      "Host: api.example.com\r\n"
      "User-Agent: netbuf-bench/1.0\r\n"
      "Accept: application/json\r\n"
      "Content-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n"
      "Trailer: X-Checksum\r\n"
      "\r\n";
  for (int c = 0; c < 4; ++c) {
    std::string chunk = "{\"seq\":" + std::to_string(c) + ",\"data\":\"";
    chunk.append(480 - chunk.size(), 'a' + static_cast<char>(c));
    chunk += "\"}\n";
    char size[16];
    std::snprintf(size, sizeof size, "%zx", chunk.size());
    post += size;
    post += ";ext=1\r\n" + chunk + "\r\n";
  }
  post += "0\r\nX-Checksum: 1234abcd\r\n\r\n";
  w.push_back({"chunked POST " + std::to_string(post.size()) + " B", post, 6});
  return w;
}

namespace {

class NetbufRunner final : public HttpParseRunner {
 public:
  explicit NetbufRunner(const HttpWorkload& w)
      : source_(ByteBufAllocator::defaultAllocator().buffer(w.bytes.size())),
        expected_(w.objects),
        name_(w.name) {
    source_.writeBytes(w.bytes);
    out_.reserve(16);
  }
  void parseOnce() override {
    decoder_.channelRead(source_.retainedDuplicate(), out_);
    if (out_.size() != expected_) throw std::runtime_error("netbuf: unexpected decode of " + name_);
    out_.clear();
  }

 private:
  ByteBuf source_;
  HttpRequestDecoder decoder_;
  std::vector<HttpObject> out_;
  std::size_t expected_;
  std::string name_;
};

template <class Runner>
double timeRunner(Runner& r, std::size_t iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < iterations; ++i) r.parseOnce();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::unique_ptr<HttpParseRunner> netbufRunner(const HttpWorkload& w) {
  return std::make_unique<NetbufRunner>(w);
}

double timeNetbufParse(const HttpWorkload& w, std::size_t iterations) {
  NetbufRunner r(w);
  return timeRunner(r, iterations);
}

#ifdef NETBUF_HAVE_HTTP_PARSER
namespace {

struct View {
  const char* p;
  std::size_t n;
};
struct Parsed {
  View url{};
  View names[64];
  View values[64];
  View body[64];
  int fields = 0;
  int bodies = 0;
  bool complete = false;
};

int onUrl(http_parser* p, const char* at, std::size_t n) {
  static_cast<Parsed*>(p->data)->url = {at, n};
  return 0;
}
int onField(http_parser* p, const char* at, std::size_t n) {
  auto* r = static_cast<Parsed*>(p->data);
  r->names[r->fields & 63] = {at, n};
  return 0;
}
int onValue(http_parser* p, const char* at, std::size_t n) {
  auto* r = static_cast<Parsed*>(p->data);
  r->values[r->fields++ & 63] = {at, n};
  return 0;
}
int onBody(http_parser* p, const char* at, std::size_t n) {
  auto* r = static_cast<Parsed*>(p->data);
  r->body[r->bodies++ & 63] = {at, n};
  return 0;
}
int onComplete(http_parser* p) {
  static_cast<Parsed*>(p->data)->complete = true;
  return 0;
}

class HttpParserRunner final : public HttpParseRunner {
 public:
  explicit HttpParserRunner(const HttpWorkload& w) : bytes_(w.bytes), name_(w.name) {
    settings_.on_url = onUrl;
    settings_.on_header_field = onField;
    settings_.on_header_value = onValue;
    settings_.on_body = onBody;
    settings_.on_message_complete = onComplete;
  }
  void parseOnce() override {
    http_parser_init(&parser_, HTTP_REQUEST);
    parser_.data = &parsed_;
    parsed_.fields = 0;
    parsed_.bodies = 0;
    parsed_.complete = false;
    const std::size_t n = http_parser_execute(&parser_, &settings_, bytes_.data(), bytes_.size());
    if (n != bytes_.size() || !parsed_.complete) {
      throw std::runtime_error("http-parser: unexpected parse of " + name_);
    }
  }

 private:
  std::string bytes_;
  std::string name_;
  http_parser_settings settings_{};
  http_parser parser_{};
  Parsed parsed_;
};

}  // namespace

std::unique_ptr<HttpParseRunner> httpParserRunner(const HttpWorkload& w) {
  return std::make_unique<HttpParserRunner>(w);
}

double timeHttpParser(const HttpWorkload& w, std::size_t iterations) {
  HttpParserRunner r(w);
  return timeRunner(r, iterations);
}

bool hasHttpParser() noexcept { return true; }
#else
std::unique_ptr<HttpParseRunner> httpParserRunner(const HttpWorkload&) { return nullptr; }
double timeHttpParser(const HttpWorkload&, std::size_t) { return 0; }
bool hasHttpParser() noexcept { return false; }
#endif

}  // namespace netbuf::bench
