#include <netbuf/codec/http/http_client_codec.hpp>

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/http/http_server_codec.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/http_split_checks.hpp"

// The client codec: every request written tells the response decoder its method, so a response
// to HEAD is read without content and a 2xx to CONNECT switches to raw bytes; round trips through
// the server codec.

using namespace netbuf;
using netbuf::test::HttpTranscriber;
using netbuf::test::HttpTranscript;

namespace {

ByteBuf bytes(std::string_view s) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(s.size());
  b.writeBytes(s);
  return b;
}

template <class Codec>
std::string write(Codec& c, HttpObject msg) {
  std::vector<AnyByteBuf> out;
  c.write(std::move(msg), out);
  std::string s;
  for (const AnyByteBuf& b : out) s += readableBytesToString(b);
  return s;
}

FullHttpRequest request(HttpMethod m, std::string_view uri) {
  FullHttpRequest r(m, uri);
  r.headers().add("Host", "h");
  return r;
}

/// Feeds wire to the client in reads of `step` bytes, then ends the stream.
HttpTranscript readResponses(HttpClientCodec& client, std::string_view wire, std::size_t step) {
  HttpTranscriber tr;
  HttpClientCodec::Output out;
  auto onError = [&](std::exception_ptr e) {
    for (HttpObject& m : out) tr.add(m);
    out.clear();
    tr.error(e);
  };
  for (std::size_t i = 0; i < wire.size(); i += step) {
    client.channelRead(bytes(wire.substr(i, step)), out, onError);
    client.channelReadComplete();
  }
  client.channelInactive(out, onError);
  for (HttpObject& m : out) tr.add(m);
  return tr.take();
}

}  // namespace

TEST_CASE("HttpClientCodec: HEAD responses pair with their requests through pipelining") {
  for (std::size_t step : {1U, 3U, 1000U}) {
    CAPTURE(step);
    HttpClientCodec client;
    std::string sent;
    sent += write(client, request(HttpMethod::HEAD, "/a"));
    sent += write(client, request(HttpMethod::GET, "/b"));
    sent += write(client, request(HttpMethod::HEAD, "/c"));
    CHECK(sent ==
          "HEAD /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"
          "HEAD /c HTTP/1.1\r\nHost: h\r\n\r\n");
    const std::string wire =
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
        "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n";
    CHECK(readResponses(client, wire, step) ==
          HttpTranscript{"HTTP/1.1 200 OK | Content-Length: 5",
                         "body: ", "HTTP/1.1 200 OK | Content-Length: 5", "body: hello",
                         "HTTP/1.1 404 Not Found | Transfer-Encoding: chunked", "body: "});
  }
}

TEST_CASE("HttpClientCodec: a 2xx to CONNECT switches to raw bytes") {
  HttpClientCodec client;
  write(client, request(HttpMethod::CONNECT, "example.com:443"));
  CHECK(
      readResponses(client, "HTTP/1.1 200 Connection Established\r\n\r\n\x16\x03\x01 raw", 4) ==
      HttpTranscript{"HTTP/1.1 200 Connection Established", "body: ", "partial: \x16\x03\x01 raw"});
  // Streamed requests tell their method too.
  HttpClientCodec streamed;
  write(streamed, HttpRequest(HttpMethod::HEAD, "/"));
  write(streamed, LastHttpContent());
  CHECK(readResponses(streamed, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", 1000) ==
        HttpTranscript{"HTTP/1.1 200 OK | Content-Length: 3", "body: "});
}

TEST_CASE("HttpClientCodec: round trip through the server codec") {
  HttpClientCodec client;
  HttpServerCodec server;
  std::string wire;
  wire += write(client, request(HttpMethod::GET, "/1"));
  wire += write(client, request(HttpMethod::HEAD, "/2"));
  FullHttpRequest post = request(HttpMethod::POST, "/3");
  post.setContent(bytes("data"));
  wire += write(client, std::move(post));

  HttpServerCodec::Output requests;
  server.channelRead(bytes(wire), requests);
  REQUIRE(requests.size() == 6);
  CHECK(std::get<HttpRequest>(requests[4]).method() == HttpMethod::POST);
  CHECK(std::get<LastHttpContent>(requests[5]).content().readableStringView() == "data");

  std::string answers;
  FullHttpResponse ok(HttpResponseStatus::OK, bytes("one"));
  ok.headers().add("Server", "netbuf");
  answers += write(server, std::move(ok));
  answers += write(server, FullHttpResponse(HttpResponseStatus::OK, bytes("two")));  // HEAD
  HttpResponse chunked(HttpResponseStatus::CREATED);
  chunked.headers().add("Transfer-Encoding", "chunked");
  answers += write(server, std::move(chunked));
  answers += write(server, HttpContent(bytes("thr")));
  HttpHeaders t;
  t.add("X-T", "1");
  answers += write(server, LastHttpContent(bytes("ee"), std::move(t)));

  for (std::size_t step : {1U, 7U, 4096U}) {
    CAPTURE(step);
    HttpClientCodec c2;
    write(c2, request(HttpMethod::GET, "/1"));
    write(c2, request(HttpMethod::HEAD, "/2"));
    write(c2, request(HttpMethod::POST, "/3"));
    CHECK(readResponses(c2, answers, step) ==
          HttpTranscript{"HTTP/1.1 200 OK | Server: netbuf | content-length: 3", "body: one",
                         "HTTP/1.1 200 OK | content-length: 3",
                         "body: ", "HTTP/1.1 201 Created | Transfer-Encoding: chunked",
                         "body: three | trailer: X-T: 1"});
  }
  CHECK(client.decoder().options().maxHeaderSize == 8192);
}

TEST_CASE("HttpClientCodec: response errors and premature close") {
  HttpClientCodec client;
  write(client, request(HttpMethod::GET, "/"));
  CHECK(readResponses(client, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 4) ==
        HttpTranscript{"HTTP/1.1 200 OK | Content-Length: 10", "partial: short",
                       "!400 premature-end-of-stream @44"});
  HttpClientCodec other;
  CHECK(readResponses(other, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 1000) ==
        HttpTranscript{"HTTP/1.1 200 OK | Transfer-Encoding: chunked",
                       "!400 invalid-chunk-size @47"});
  // After the error, and before the end of stream, the rest is discarded.
  HttpClientCodec third;
  HttpClientCodec::Output out;
  third.channelRead(bytes("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"), out,
                    [](std::exception_ptr) {});
  CHECK(third.decoder().isDiscarding());
  third.channelRead(bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), out);
  CHECK(out.empty());
}

TEST_CASE("HttpClientCodec: a request the encoder refuses is not paired with a response") {
  HttpClientCodec client;
  std::vector<AnyByteBuf> out;
  client.write(HttpRequest(HttpMethod::GET, "/streamed"), out);
  // A HEAD written before the GET's last part is refused, so it is never sent...
  CHECK_THROWS_AS(client.write(request(HttpMethod::HEAD, "/refused"), out), EncoderError);
  client.write(LastHttpContent(), out);
  client.write(request(HttpMethod::GET, "/next"), out);
  // ...and the second response is read as the GET's, with its content.
  CHECK(readResponses(client,
                      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"
                      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb",
                      1000) == HttpTranscript{"HTTP/1.1 200 OK | Content-Length: 1", "body: a",
                                              "HTTP/1.1 200 OK | Content-Length: 1", "body: b"});
}
