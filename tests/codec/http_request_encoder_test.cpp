#include <netbuf/codec/http/http_request_encoder.hpp>

#include <netbuf/codec/http/http_header_names.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Exact bytes for every message type, the automatic Content-Length, chunked framing, the
// zero-copy path for large content, and misuse.

using namespace netbuf;

namespace {

ByteBuf bytes(std::string_view s) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(s.size());
  b.writeBytes(s);
  return b;
}

/// What encoding msg appended: one string per buffer.
std::vector<std::string> encode(HttpRequestEncoder& e, HttpObject msg) {
  std::vector<AnyByteBuf> out;
  e.write(std::move(msg), out);
  std::vector<std::string> s;
  for (const AnyByteBuf& b : out) s.push_back(readableBytesToString(b));
  return s;
}

using Bufs = std::vector<std::string>;

FullHttpRequest request(HttpMethod m, std::string_view uri, std::string_view content = {}) {
  FullHttpRequest r(m, uri, content.empty() ? ByteBuf() : bytes(content));
  r.headers().add("Host", "h");
  return r;
}

}  // namespace

TEST_CASE("HttpRequestEncoder: a FullHttpRequest without content") {
  HttpRequestEncoder e;
  CHECK(encode(e, request(HttpMethod::GET, "/x?y=1")) ==
        Bufs{"GET /x?y=1 HTTP/1.1\r\nHost: h\r\n\r\n"});
  CHECK(encode(e, request(HttpMethod::DELETE, "/r")) ==
        Bufs{"DELETE /r HTTP/1.1\r\nHost: h\r\n\r\n"});
  FullHttpRequest old(HttpMethod::HEAD, "/", {}, HttpVersion::HTTP_1_0);
  CHECK(encode(e, std::move(old)) == Bufs{"HEAD / HTTP/1.0\r\n\r\n"});
  // An extension method goes out by name.
  CHECK(encode(e, request(HttpMethod::valueOf("PURGE"), "*")) ==
        Bufs{"PURGE * HTTP/1.1\r\nHost: h\r\n\r\n"});
}

TEST_CASE("HttpRequestEncoder: content-length is added when the request has no framing") {
  HttpRequestEncoder e;
  CHECK(encode(e, request(HttpMethod::POST, "/p", "hello")) ==
        Bufs{"POST /p HTTP/1.1\r\nHost: h\r\ncontent-length: 5\r\n\r\nhello"});
  // POST, PUT and PATCH say "no content" with content-length: 0 (RFC 9110 §8.6).
  for (HttpMethod m : {HttpMethod::POST, HttpMethod::PUT, HttpMethod::PATCH}) {
    CAPTURE(m.name());
    CHECK(encode(e, request(m, "/")) ==
          Bufs{std::string(m.name()) + " / HTTP/1.1\r\nHost: h\r\ncontent-length: 0\r\n\r\n"});
  }
  // Other methods only when they carry content.
  CHECK(encode(e, request(HttpMethod::GET, "/", "q")) ==
        Bufs{"GET / HTTP/1.1\r\nHost: h\r\ncontent-length: 1\r\n\r\nq"});
  // A Content-Length already there is kept, not repeated.
  FullHttpRequest r = request(HttpMethod::POST, "/", "abc");
  r.headers().add("Content-Length", "3");
  CHECK(encode(e, std::move(r)) ==
        Bufs{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"});
}

TEST_CASE("HttpRequestEncoder: a FullHttpRequest with Transfer-Encoding: chunked is framed") {
  HttpRequestEncoder e;
  FullHttpRequest r = request(HttpMethod::POST, "/c", "abc");
  r.headers().add("Transfer-Encoding", "chunked");
  r.trailingHeaders().add("T", "1");
  CHECK(encode(e, std::move(r)) == Bufs{"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
                                        "chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n"});
  FullHttpRequest empty = request(HttpMethod::POST, "/c");
  empty.headers().add("Transfer-Encoding", "gzip, Chunked");
  CHECK(encode(e, std::move(empty)) ==
        Bufs{"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n0\r\n\r\n"});
}

TEST_CASE("HttpRequestEncoder: a streamed chunked request") {
  HttpRequestEncoder e;
  HttpRequest head(HttpMethod::POST, "/up");
  head.headers().add("Host", "h").add("Transfer-Encoding", "chunked");
  CHECK(encode(e, std::move(head)) ==
        Bufs{"POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"});
  CHECK(encode(e, HttpContent(bytes("hello"))) == Bufs{"5\r\nhello\r\n"});
  // An empty part writes nothing: an empty chunk would end the body.
  CHECK(encode(e, HttpContent(bytes(""))) == Bufs{});
  CHECK(encode(e, HttpContent()) == Bufs{});
  CHECK(encode(e, HttpContent(bytes(std::string(26, 'z')))) ==
        Bufs{"1a\r\n" + std::string(26, 'z') + "\r\n"});
  HttpHeaders trailers;
  trailers.add("X-Sum", "abc");
  CHECK(encode(e, LastHttpContent(bytes("!"), std::move(trailers))) ==
        Bufs{"1\r\n!\r\n0\r\nX-Sum: abc\r\n\r\n"});
  // The next request may follow.
  CHECK(encode(e, request(HttpMethod::GET, "/next")) ==
        Bufs{"GET /next HTTP/1.1\r\nHost: h\r\n\r\n"});
  // An empty last part is the last chunk alone.
  HttpRequest h2(HttpMethod::PUT, "/");
  h2.headers().add("transfer-encoding", "chunked");
  encode(e, std::move(h2));
  CHECK(encode(e, LastHttpContent()) == Bufs{"0\r\n\r\n"});
}

TEST_CASE("HttpRequestEncoder: a streamed request with Content-Length goes out as is") {
  HttpRequestEncoder e;
  HttpRequest head(HttpMethod::PUT, "/f");
  head.headers().add("Host", "h").add("Content-Length", "6");
  CHECK(encode(e, std::move(head)) ==
        Bufs{"PUT /f HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\n\r\n"});
  CHECK(encode(e, HttpContent(bytes("abc"))) == Bufs{"abc"});
  CHECK(encode(e, LastHttpContent(bytes("def"))) == Bufs{"def"});
  // Trailers cannot go out without chunked framing: dropped.
  HttpRequest h2(HttpMethod::GET, "/");
  encode(e, std::move(h2));
  HttpHeaders t;
  t.add("T", "1");
  CHECK(encode(e, LastHttpContent(ByteBuf(), std::move(t))) == Bufs{});
}

TEST_CASE("HttpRequestEncoder: content above 4096 bytes is a second buffer sharing memory") {
  HttpRequestEncoder e;
  const std::string big(5000, 'b');
  ByteBuf content = bytes(big);
  const std::byte* at = content.readPtr();
  FullHttpRequest r(HttpMethod::POST, "/big", std::move(content));
  std::vector<AnyByteBuf> out;
  e.write(std::move(r), out);
  REQUIRE(out.size() == 2);
  CHECK(readableBytesToString(out[0]) == "POST /big HTTP/1.1\r\ncontent-length: 5000\r\n\r\n");
  REQUIRE_FALSE(isComposite(out[1]));
  CHECK(std::get<ByteBuf>(out[1]).readPtr() == at);  // the same memory, not a copy
  CHECK(readableBytesToString(out[1]) == big);

  // 4096 bytes exactly are still copied behind the head: one buffer.
  out.clear();
  e.write(FullHttpRequest(HttpMethod::POST, "/", bytes(std::string(4096, 'c'))), out);
  CHECK(out.size() == 1);

  // Chunked: size line with the head, the data as is, then CRLF and the last chunk.
  HttpRequest head(HttpMethod::POST, "/s");
  head.headers().add("Transfer-Encoding", "chunked");
  out.clear();
  e.write(std::move(head), out);
  ByteBuf part = bytes(big);
  const std::byte* partAt = part.readPtr();
  e.write(HttpContent(std::move(part)), out);
  e.write(LastHttpContent(bytes(big)), out);
  REQUIRE(out.size() == 7);
  CHECK(readableBytesToString(out[1]) == "1388\r\n");
  CHECK(std::get<ByteBuf>(out[2]).readPtr() == partAt);
  CHECK(readableBytesToString(out[3]) == "\r\n");
  CHECK(readableBytesToString(out[4]) == "1388\r\n");
  CHECK(readableBytesToString(out[6]) == "\r\n0\r\n\r\n");

  // A streamed part that is not chunked goes out alone (no empty buffer before it).
  HttpRequest raw(HttpMethod::PUT, "/r");
  raw.headers().add("Content-Length", "10000");
  out.clear();
  e.write(std::move(raw), out);
  e.write(HttpContent(bytes(big)), out);
  e.write(LastHttpContent(bytes(big)), out);
  REQUIRE(out.size() == 3);
  for (const AnyByteBuf& b : out) CHECK(readableBytes(b) > 0);
}

TEST_CASE("HttpRequestEncoder: misuse is an EncoderError") {
  HttpRequestEncoder e;
  std::vector<AnyByteBuf> out;
  CHECK_THROWS_AS(e.write(HttpContent(bytes("x")), out), EncoderError);
  CHECK_THROWS_AS(e.write(LastHttpContent(), out), EncoderError);
  CHECK_THROWS_AS(e.write(FullHttpResponse(HttpResponseStatus::OK), out), EncoderError);
  CHECK_THROWS_AS(e.write(HttpResponse(HttpResponseStatus::OK), out), EncoderError);
  CHECK(out.empty());
  e.write(HttpRequest(HttpMethod::GET, "/"), out);
  CHECK_THROWS_AS(e.write(HttpRequest(HttpMethod::GET, "/"), out), EncoderError);
  CHECK_THROWS_AS(e.write(request(HttpMethod::GET, "/"), out), EncoderError);
  e.write(LastHttpContent(), out);
  // A target that would split the request, or none at all.
  for (std::string_view uri : {"/a\r\nX-Injected: 1", "/a b", "/a\tb", "", "/\x7f"}) {
    CAPTURE(uri);
    CHECK_THROWS_AS(e.write(request(HttpMethod::GET, uri), out), EncoderError);
  }
  CHECK_THROWS_AS(e.write(request(HttpMethod::valueOf("BAD METHOD"), "/"), out), EncoderError);
  // A refused head leaves the encoder between messages.
  out.clear();
  e.write(request(HttpMethod::GET, "/ok"), out);
  CHECK(out.size() == 1);
}
