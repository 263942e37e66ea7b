#include <netbuf/codec/http/http_response_encoder.hpp>

#include <netbuf/codec/http/http_header_names.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Exact bytes: status lines, the automatic Content-Length, responses that never have content
// (HEAD, 1xx, 204, 304), chunked framing with trailers, zero copy above 4096 bytes, misuse.

using namespace netbuf;

namespace {

ByteBuf bytes(std::string_view s) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(s.size());
  b.writeBytes(s);
  return b;
}

std::vector<std::string> encode(HttpResponseEncoder& e, HttpObject msg) {
  std::vector<AnyByteBuf> out;
  e.write(std::move(msg), out);
  std::vector<std::string> s;
  for (const AnyByteBuf& b : out) s.push_back(readableBytesToString(b));
  return s;
}

using Bufs = std::vector<std::string>;

}  // namespace

TEST_CASE("HttpResponseEncoder: a FullHttpResponse gets content-length") {
  HttpResponseEncoder e;
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::OK, bytes("hi"))) ==
        Bufs{"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi"});
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::NOT_FOUND)) ==
        Bufs{"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"});
  FullHttpResponse r(HttpResponseStatus(299, "Custom Thing"), bytes("x"), HttpVersion::HTTP_1_0);
  r.headers().add("Server", "netbuf");
  CHECK(encode(e, std::move(r)) ==
        Bufs{"HTTP/1.0 299 Custom Thing\r\nServer: netbuf\r\ncontent-length: 1\r\n\r\nx"});
  // An empty reason phrase: "HTTP/1.1 200 " (the SP stays, RFC 9112 §4).
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus(200, ""))) ==
        Bufs{"HTTP/1.1 200 \r\ncontent-length: 0\r\n\r\n"});
  // Framing headers set by the handler are kept, not repeated.
  FullHttpResponse own(HttpResponseStatus::OK, bytes("abc"));
  own.headers().set(HttpHeaderNames::kContentLength, std::uint64_t{3});
  CHECK(encode(e, std::move(own)) == Bufs{"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc"});
}

TEST_CASE("HttpResponseEncoder: 1xx, 204 and 304 go out without content") {
  HttpResponseEncoder e;
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::CONTINUE)) ==
        Bufs{"HTTP/1.1 100 Continue\r\n\r\n"});
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::NO_CONTENT, bytes("dropped"))) ==
        Bufs{"HTTP/1.1 204 No Content\r\n\r\n"});
  FullHttpResponse nm(HttpResponseStatus::NOT_MODIFIED, bytes("dropped"));
  nm.headers().add("ETag", "\"x\"");
  CHECK(encode(e, std::move(nm)) == Bufs{"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"});
  // Streamed: the head, then nothing for its parts.
  HttpResponse head(HttpResponseStatus::NO_CONTENT);
  head.headers().add("Transfer-Encoding", "chunked");
  CHECK(encode(e, std::move(head)) ==
        Bufs{"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"});
  CHECK(encode(e, HttpContent(bytes("x"))) == Bufs{});
  CHECK(encode(e, LastHttpContent(bytes("y"))) == Bufs{});
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::OK)) ==
        Bufs{"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"});
}

TEST_CASE("HttpResponseEncoder: responses to HEAD keep their headers, lose their content") {
  HttpResponseEncoder e;
  e.pushRequestMethod(HttpMethod::HEAD);
  e.pushRequestMethod(HttpMethod::GET);
  e.pushRequestMethod(HttpMethod::HEAD);
  // The Content-Length is that of the response a GET would have had (RFC 9110 §9.3.2).
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::OK, bytes("hello"))) ==
        Bufs{"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"});
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::OK, bytes("hello"))) ==
        Bufs{"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"});
  // A 1xx leaves the HEAD in place for the final response.
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::CONTINUE)) ==
        Bufs{"HTTP/1.1 100 Continue\r\n\r\n"});
  HttpResponse chunked(HttpResponseStatus::OK);
  chunked.headers().add("Transfer-Encoding", "chunked");
  CHECK(encode(e, std::move(chunked)) ==
        Bufs{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"});
  CHECK(encode(e, HttpContent(bytes("abc"))) == Bufs{});
  CHECK(encode(e, LastHttpContent()) == Bufs{});
  // No method left: content goes out.
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::OK, bytes("x"))) ==
        Bufs{"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx"});
}

TEST_CASE("HttpResponseEncoder: a chunked response with trailers") {
  HttpResponseEncoder e;
  HttpResponse head(HttpResponseStatus::OK);
  head.headers().add("Transfer-Encoding", "chunked").add("Trailer", "X-Checksum");
  CHECK(encode(e, std::move(head)) ==
        Bufs{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n"});
  CHECK(encode(e, HttpContent(bytes("Wiki"))) == Bufs{"4\r\nWiki\r\n"});
  CHECK(encode(e, HttpContent(bytes(""))) == Bufs{});
  CHECK(encode(e, HttpContent(bytes("pedia in chunks"))) == Bufs{"f\r\npedia in chunks\r\n"});
  HttpHeaders t;
  t.add("X-Checksum", "42").add("X-More", "yes");
  CHECK(encode(e, LastHttpContent(ByteBuf(), std::move(t))) ==
        Bufs{"0\r\nX-Checksum: 42\r\nX-More: yes\r\n\r\n"});
  // A FullHttpResponse declared chunked is one chunk and the last chunk.
  FullHttpResponse full(HttpResponseStatus::OK, bytes("body"));
  full.headers().add("Transfer-Encoding", "chunked");
  full.trailingHeaders().add("T", "1");
  CHECK(
      encode(e, std::move(full)) ==
      Bufs{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\nT: 1\r\n\r\n"});
}

TEST_CASE("HttpResponseEncoder: content above 4096 bytes is a second buffer sharing memory") {
  HttpResponseEncoder e;
  const std::string big(10000, 'q');
  ByteBuf content = bytes(big);
  const std::byte* at = content.readPtr();
  std::vector<AnyByteBuf> out;
  e.write(FullHttpResponse(HttpResponseStatus::OK, std::move(content)), out);
  REQUIRE(out.size() == 2);
  CHECK(readableBytesToString(out[0]) == "HTTP/1.1 200 OK\r\ncontent-length: 10000\r\n\r\n");
  CHECK(std::get<ByteBuf>(out[1]).readPtr() == at);
  CHECK(readableBytesToString(out[1]) == big);
  // Up to 4096 bytes: copied behind the head, one buffer (one iovec).
  out.clear();
  e.write(FullHttpResponse(HttpResponseStatus::OK, bytes(std::string(4096, 'r'))), out);
  REQUIRE(out.size() == 1);
  CHECK(readableBytes(out[0]) == 41 + 4096);
}

TEST_CASE("HttpResponseEncoder: appendResponse writes whole responses into one buffer") {
  ByteBuf dst = ByteBufAllocator::defaultAllocator().buffer(64);
  FullHttpResponse a(HttpResponseStatus::OK, bytes("one"));
  FullHttpResponse b(HttpResponseStatus::OK, bytes("two"));
  FullHttpResponse c(HttpResponseStatus::OK, bytes("three"));
  c.headers().add("Transfer-Encoding", "chunked");
  FullHttpResponse d(HttpResponseStatus::NOT_MODIFIED, bytes("none"));
  detail::HttpObjectEncoder::appendResponse(dst, a, false);
  detail::HttpObjectEncoder::appendResponse(dst, b, true);
  detail::HttpObjectEncoder::appendResponse(dst, c, false);
  detail::HttpObjectEncoder::appendResponse(dst, d, false);
  CHECK(dst.readableStringView() ==
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\none"
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n"
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nthree\r\n0\r\n\r\n"
        "HTTP/1.1 304 Not Modified\r\n\r\n");
  FullHttpResponse bad(HttpResponseStatus(200, "OK\r\nSet-Cookie: x=1"));
  CHECK_THROWS_AS(detail::HttpObjectEncoder::appendResponse(dst, bad, false), EncoderError);
}

TEST_CASE("HttpResponseEncoder: misuse is an EncoderError") {
  HttpResponseEncoder e;
  std::vector<AnyByteBuf> out;
  CHECK_THROWS_AS(e.write(HttpContent(bytes("x")), out), EncoderError);
  CHECK_THROWS_AS(e.write(LastHttpContent(), out), EncoderError);
  CHECK_THROWS_AS(e.write(FullHttpRequest(HttpMethod::GET, "/"), out), EncoderError);
  CHECK_THROWS_AS(e.write(HttpRequest(HttpMethod::GET, "/"), out), EncoderError);
  e.write(HttpResponse(HttpResponseStatus::OK), out);
  CHECK_THROWS_AS(e.write(HttpResponse(HttpResponseStatus::OK), out), EncoderError);
  e.write(LastHttpContent(), out);
  // A reason phrase that would split the response (RFC 9112 §4: no CR, LF or other controls).
  for (std::string_view reason :
       {std::string_view("OK\r\nSet-Cookie: x=1"), std::string_view("OK\n"),
        std::string_view("O\0K", 3), std::string_view("\x7f")}) {
    CAPTURE(reason);
    CHECK_THROWS_AS(e.write(FullHttpResponse(HttpResponseStatus(200, reason)), out), EncoderError);
  }
  CHECK_THROWS_AS(e.write(FullHttpResponse(HttpResponseStatus(1000, "Big")), out), EncoderError);
  CHECK_THROWS_AS(e.write(FullHttpResponse(HttpResponseStatus(99, "Small")), out), EncoderError);
  // A refused response takes no request method from the queue.
  e.pushRequestMethod(HttpMethod::HEAD);
  CHECK_THROWS_AS(e.write(FullHttpResponse(HttpResponseStatus(200, "\r\n")), out), EncoderError);
  CHECK(encode(e, FullHttpResponse(HttpResponseStatus::OK, bytes("x"))) ==
        Bufs{"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n"});
}
