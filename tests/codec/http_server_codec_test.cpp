#include <netbuf/codec/http/http_server_codec.hpp>

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/http/http_client_codec.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/http_split_checks.hpp"

// The server codec as a server uses it: requests decoded, responses encoded, each response paired
// with its request's method in order (a HEAD's response without content), and round trips with
// the client side's encoder.

using namespace netbuf;
using netbuf::test::checkHttpSplits;
using netbuf::test::HttpTranscript;

namespace {

ByteBuf bytes(std::string_view s) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(s.size());
  b.writeBytes(s);
  return b;
}

std::string joined(const std::vector<AnyByteBuf>& out) {
  std::string s;
  for (const AnyByteBuf& b : out) s += readableBytesToString(b);
  return s;
}

template <class Codec>
std::string write(Codec& c, HttpObject msg) {
  std::vector<AnyByteBuf> out;
  c.write(std::move(msg), out);
  return joined(out);
}

}  // namespace

TEST_CASE("HttpServerCodec: decodes requests like HttpRequestDecoder") {
  checkHttpSplits(
      [] { return HttpServerCodec(); },
      "GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi",
      {"GET / HTTP/1.1 | Host: a", "body: ", "POST /p HTTP/1.1 | Host: a | Content-Length: 2",
       "body: hi"});
  checkHttpSplits([] { return HttpServerCodec(HttpDecoderOptions().setMaxInitialLineLength(8)); },
                  "GET /long HTTP/1.1\r\n", {"!414 request-line-too-long @0 limit=8"});
  DecoderRunner<HttpServerCodec> run;
  run.feed("GET / HTTP/1.1\r\n");
  run.finish();
  REQUIRE(run.errors().size() == 1);
  CHECK(netbuf::test::httpError(run.errors()[0].error) == "!400 premature-end-of-stream @16");
  CHECK(run.decoder().decoder().options().maxInitialLineLength == 4096);
}

TEST_CASE("HttpServerCodec: the response to a pipelined HEAD has no content") {
  HttpServerCodec codec;
  HttpServerCodec::Output in;
  codec.channelRead(bytes("HEAD /a HTTP/1.1\r\nHost: h\r\n\r\n"
                          "GET /b HTTP/1.1\r\nHost: h\r\n\r\n"
                          "HEAD /c HTTP/1.1\r\nHost: h\r\n\r\n"),
                    in);
  codec.channelReadComplete();
  REQUIRE(in.size() == 6);
  for (int i = 0; i < 2; ++i) {
    CHECK(write(codec, FullHttpResponse(HttpResponseStatus::OK, bytes("hello"))) ==
          (i == 0 ? "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"
                  : "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"));
  }
  // Streamed, the third (HEAD) response's parts write nothing.
  HttpResponse head(HttpResponseStatus::OK);
  head.headers().add("Transfer-Encoding", "chunked");
  CHECK(write(codec, std::move(head)) == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  CHECK(write(codec, HttpContent(bytes("dropped"))).empty());
  CHECK(write(codec, LastHttpContent()).empty());
  // Requests arriving in pieces pair the same way.
  codec.channelRead(bytes("HEAD /d HTTP/1.1\r\nHo"), in);
  codec.channelRead(bytes("st: h\r\n\r\n"), in);
  CHECK(write(codec, FullHttpResponse(HttpResponseStatus::OK, bytes("x"))) ==
        "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n");
  // A 100 Continue keeps the pairing for the final response.
  codec.channelRead(bytes("HEAD /e HTTP/1.1\r\nHost: h\r\n\r\n"), in);
  CHECK(write(codec, FullHttpResponse(HttpResponseStatus::CONTINUE)) ==
        "HTTP/1.1 100 Continue\r\n\r\n");
  CHECK(write(codec, FullHttpResponse(HttpResponseStatus::OK, bytes("x"))) ==
        "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n");
}

TEST_CASE("HttpServerCodec: round trip with the client's encoder") {
  HttpClientCodec client;
  HttpServerCodec server;
  // A full request with content, a chunked streamed one with trailers, an extension method.
  std::string wire;
  FullHttpRequest post(HttpMethod::POST, "/form?x=1", bytes("a=1&b=2"));
  post.headers()
      .add("Host", "example.com")
      .add("Content-Type", "application/x-www-form-urlencoded");
  wire += write(client, std::move(post));
  HttpRequest up(HttpMethod::PUT, "/upload");
  up.headers().add("Host", "example.com").add("Transfer-Encoding", "chunked");
  wire += write(client, std::move(up));
  wire += write(client, HttpContent(bytes("part one,")));
  HttpHeaders t;
  t.add("X-Digest", "abc");
  wire += write(client, LastHttpContent(bytes(" part two"), std::move(t)));
  FullHttpRequest purge(HttpMethod::valueOf("PURGE"), "/cache");
  purge.headers().add("Host", "example.com");
  wire += write(client, std::move(purge));
  checkHttpSplits(
      [] { return HttpServerCodec(); }, wire,
      {"POST /form?x=1 HTTP/1.1 | Host: example.com | Content-Type: "
       "application/x-www-form-urlencoded | content-length: 7",
       "body: a=1&b=2", "PUT /upload HTTP/1.1 | Host: example.com | Transfer-Encoding: chunked",
       "body: part one, part two | trailer: X-Digest: abc",
       "PURGE /cache HTTP/1.1 | Host: example.com", "body: "});
  // Decoded requests re-encode to the same bytes (the encoder writes what the decoder read).
  DecoderRunner<HttpServerCodec> run;
  run.feed(wire);
  HttpRequestEncoder again;
  std::string reencoded;
  for (HttpObject& m : run.messages()) reencoded += write(again, std::move(m));
  CHECK(reencoded == wire);
}

TEST_CASE("HttpServerCodec: requests decoded before a rethrown error are still paired") {
  HttpServerCodec codec;
  HttpServerCodec::Output in;
  CHECK_THROWS_AS(
      codec.channelRead(bytes("HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/9.9\r\n\r\n"), in),
      HttpDecoderError);
  REQUIRE(in.size() == 2);
  CHECK(std::get<HttpRequest>(in[0]).method() == HttpMethod::HEAD);
  // The HEAD's response has no content.
  CHECK(write(codec, FullHttpResponse(HttpResponseStatus::OK, bytes("hello"))) ==
        "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n");
  // And the error's response (the server's answer before it closes) has its content.
  CHECK(
      write(codec, FullHttpResponse(HttpResponseStatus::HTTP_VERSION_NOT_SUPPORTED, bytes("x"))) ==
      "HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-length: 1\r\n\r\nx");
}
