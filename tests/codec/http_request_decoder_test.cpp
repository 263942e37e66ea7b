#include <netbuf/codec/http/http_request_decoder.hpp>

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/http/http_header_names.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "support/http_split_checks.hpp"

// Every rule the decoder enforces (each rule() name of a fail() call in
// codec/src/http/http_object_decoder.cpp) is checked with its exact input, its exact stream offset
// and status, at every way of splitting the input into reads. Facts from Netty's
// HttpRequestDecoderTest are ported where they apply (strictness is RFC 9112's, not Netty's).

using namespace netbuf;
using netbuf::test::checkHttpSplits;
using netbuf::test::decodeHttp;
using netbuf::test::HttpTranscript;

namespace {

using namespace std::string_literals;

auto requests(HttpDecoderOptions o = {}) {
  return [o] { return HttpRequestDecoder(o); };
}

// The request line and Host field most cases start with: 16 and 9 bytes.
const std::string kLine = "GET / HTTP/1.1\r\n";
const std::string kHost = "Host: a\r\n";
const std::string kGetHead = "GET / HTTP/1.1 | Host: a";
// A chunked POST head: 56 bytes, so its body starts at offset 56.
const std::string kChunkedHead = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
const std::string kChunkedLine = "POST / HTTP/1.1 | Host: a | Transfer-Encoding: chunked";

/// input fails with `error` (after the transcript `before`), however it is split.
void checkFails(const std::string& input, const std::string& error, HttpTranscript before = {},
                HttpDecoderOptions o = {}) {
  CAPTURE(input);
  before.push_back(error);
  checkHttpSplits(requests(o), input, before);
}

/// The first error of input decoded in one read (for value() and the message).
HttpDecoderError firstError(std::string_view input, HttpDecoderOptions o = {}) {
  DecoderRunner<HttpRequestDecoder> run(o);
  run.feed(input).finish();
  REQUIRE_FALSE(run.errors().empty());
  try {
    run.rethrowError(0);
  } catch (const HttpDecoderError& e) {
    return e;
  }
  FAIL("not an HttpDecoderError");
  return HttpDecoderError("", 0, 0, "");
}

}  // namespace

// ---------------------------------------------------------------- valid requests

TEST_CASE("HttpRequestDecoder: a simple GET is a head and an empty LastHttpContent") {
  checkHttpSplits(requests(), kLine + kHost + "\r\n", {kGetHead, "body: "});
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(kLine + kHost + "\r\n");
  REQUIRE(run.messages().size() == 2);
  const auto& r = std::get<HttpRequest>(run.messages()[0]);
  CHECK(r.method() == HttpMethod::GET);
  CHECK(r.uri() == "/");
  CHECK(r.protocolVersion() == HttpVersion::HTTP_1_1);
  CHECK(r.headers().size() == 1);
  const auto& last = std::get<LastHttpContent>(run.messages()[1]);
  CHECK(last.content().readableBytes() == 0);
  CHECK_FALSE(last.hasTrailingHeaders());
  CHECK_FALSE(run.decoder().isDiscarding());
  CHECK(run.decoder().actualReadableBytes() == 0);
}

TEST_CASE("HttpRequestDecoder: pipelined requests in one buffer come out in order") {
  // Netty's testMessagesSplitBetweenMultipleBuffers, with a body and a stray CRLF between
  // requests (RFC 9112 §2.2 lets a server skip it).
  const std::string input = kLine + kHost + "\r\n" +
                            "POST /p HTTP/1.1\r\nHost: b\r\nContent-Length: 3\r\n\r\nabc\r\n" +
                            "GET /x?y=1 HTTP/1.1\r\nHost: c\r\n\r\n";
  checkHttpSplits(requests(), input,
                  {kGetHead, "body: ", "POST /p HTTP/1.1 | Host: b | Content-Length: 3",
                   "body: abc", "GET /x?y=1 HTTP/1.1 | Host: c", "body: "});
}

TEST_CASE("HttpRequestDecoder: leading empty lines are skipped") {
  checkHttpSplits(requests(), "\r\n\r\n" + kLine + kHost + "\r\n", {kGetHead, "body: "});
  // With bare LF allowed, lone LFs too.
  checkHttpSplits(requests(HttpDecoderOptions().setAllowBareLf(true)),
                  "\n\r\n" + kLine + kHost + "\r\n", {kGetHead, "body: "});
  // Empty lines alone (a keep-alive client sending CRLF) decode to nothing.
  checkHttpSplits(requests(), "\r\n\r\n\r\n", {});
}

TEST_CASE("HttpRequestDecoder: HTTP/1.0 needs no Host") {
  checkHttpSplits(requests(), "GET /old HTTP/1.0\r\n\r\n", {"GET /old HTTP/1.0", "body: "});
  checkHttpSplits(requests(), "GET /old HTTP/1.0\r\nHost: h\r\n\r\n",
                  {"GET /old HTTP/1.0 | Host: h", "body: "});
}

TEST_CASE("HttpRequestDecoder: an HTTP/1.x minor version above 1 is handled as HTTP/1.1") {
  checkHttpSplits(requests(), "GET / HTTP/1.2\r\nHost: a\r\n\r\n", {kGetHead, "body: "});
  checkFails("GET / HTTP/1.9\r\n\r\n", "!400 missing-host @0");
}

TEST_CASE("HttpRequestDecoder: registered and extension methods") {
  for (const char* m :
       {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}) {
    CAPTURE(m);
    DecoderRunner<HttpRequestDecoder> run;
    run.feed(std::string(m) + " / HTTP/1.1\r\nHost: a\r\n\r\n");
    REQUIRE(run.messages().size() == 2);
    const HttpMethod method = std::get<HttpRequest>(run.messages()[0]).method();
    CHECK_FALSE(method.isExtension());
    CHECK(method.name() == m);
  }
  // Any token is a method; methods are case-sensitive, so "get" is an extension method.
  for (const char* m : {"PURGE", "get", "M-SEARCH", "X!#$%&'*+-.^_`|~9"}) {
    CAPTURE(m);
    DecoderRunner<HttpRequestDecoder> run;
    run.feed(std::string(m) + " * HTTP/1.1\r\nHost: a\r\n\r\n");
    REQUIRE(run.messages().size() == 2);
    const auto& r = std::get<HttpRequest>(run.messages()[0]);
    CHECK(r.method().isExtension());
    CHECK(r.method().name() == m);
    CHECK(r.uri() == "*");
  }
  checkHttpSplits(requests(), "PURGE /cache HTTP/1.1\r\nHost: a\r\n\r\n",
                  {"PURGE /cache HTTP/1.1 | Host: a", "body: "});
}

TEST_CASE("HttpRequestDecoder: request targets in every form, obs-text allowed") {
  checkHttpSplits(requests(), "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                  {"CONNECT example.com:443 HTTP/1.1 | Host: example.com:443", "body: "});
  checkHttpSplits(requests(), "GET http://h/p?q#f HTTP/1.1\r\nHost: h\r\n\r\n",
                  {"GET http://h/p?q#f HTTP/1.1 | Host: h", "body: "});
  checkHttpSplits(requests(), "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
                  {"OPTIONS * HTTP/1.1 | Host: h", "body: "});
  // Bytes above 0x7f are not control characters: passed on undecoded.
  checkHttpSplits(requests(), "GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n",
                  {"GET /\xc3\xa9 HTTP/1.1 | Host: a", "body: "});
  // A target longer than a vector register (the scan's vector path).
  const std::string longTarget = "/" + std::string(100, 'p');
  checkHttpSplits(requests(), "GET " + longTarget + " HTTP/1.1\r\nHost: a\r\n\r\n",
                  {"GET " + longTarget + " HTTP/1.1 | Host: a", "body: "});
}

TEST_CASE("HttpRequestDecoder: header lookup ignores case; getAll keeps every value in order") {
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(kLine + kHost +
           "X-Multi: 1\r\nx-multi: 2\r\nX-MULTI: 3\r\nContent-Type: text/plain\r\n\r\n");
  REQUIRE(run.messages().size() == 2);
  const HttpHeaders& h = std::get<HttpRequest>(run.messages()[0]).headers();
  CHECK(h.get("HOST") == "a");
  CHECK(h.get("host") == "a");
  CHECK(h.get(HttpHeaderNames::kContentType) == "text/plain");
  CHECK(h.getAll("x-multi") == std::vector<std::string_view>{"1", "2", "3"});
  CHECK(h.count("X-Multi") == 3);
  CHECK_FALSE(h.get("x-missing").has_value());
  // Names keep the case they arrived in.
  CHECK(h.name(2) == "x-multi");
}

TEST_CASE("HttpRequestDecoder: field values lose surrounding whitespace, keep inner whitespace") {
  // Netty's testEmptyHeaderValue and the trailing-whitespace cases.
  checkHttpSplits(requests(), kLine + kHost + "Test-Key: \r\nA:\tx  y \t\r\nB:\r\n\r\n",
                  {kGetHead + " | Test-Key:  | A: x  y | B: ", "body: "});
  // Values may hold obs-text and HTAB.
  checkHttpSplits(requests(), kLine + kHost + "A: caf\xc3\xa9\tx\r\n\r\n",
                  {kGetHead + " | A: caf\xc3\xa9\tx", "body: "});
}

TEST_CASE("HttpRequestDecoder: a Content-Length body") {
  checkHttpSplits(requests(),
                  "POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world",
                  {"POST /f HTTP/1.1 | Host: a | Content-Length: 11", "body: hello world"});
  // Content-Length: 0 is no content; leading zeros are digits.
  checkHttpSplits(requests(), "POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
                  {"POST /f HTTP/1.1 | Host: a | Content-Length: 0", "body: "});
  checkHttpSplits(requests(), "POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 003\r\n\r\nabc",
                  {"POST /f HTTP/1.1 | Host: a | Content-Length: 003", "body: abc"});
  // Content arrives as HttpContent per read, the last part in the LastHttpContent.
  DecoderRunner<HttpRequestDecoder> run;
  run.feed("POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc").feed("defg").feed("hij");
  REQUIRE(run.messages().size() == 4);
  CHECK(std::get<HttpContent>(run.messages()[1]).content().readableStringView() == "abc");
  CHECK(std::get<HttpContent>(run.messages()[2]).content().readableStringView() == "defg");
  CHECK(std::get<LastHttpContent>(run.messages()[3]).content().readableStringView() == "hij");
}

TEST_CASE("HttpRequestDecoder: identical Content-Length values are accepted (RFC 9110 §8.6)") {
  // Netty refuses these; RFC 9110 lets a recipient accept a list of identical values.
  checkHttpSplits(
      requests(),
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
      {"POST / HTTP/1.1 | Host: a | Content-Length: 5 | Content-Length: 5", "body: hello"});
  checkHttpSplits(requests(), "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5 ,5\r\n\r\nhello",
                  {"POST / HTTP/1.1 | Host: a | Content-Length: 5, 5 ,5", "body: hello"});
}

TEST_CASE("HttpRequestDecoder: chunked body with extensions and trailers") {
  const std::string input = kChunkedHead +
                            "5;name=value\r\nhello\r\n6 ; a=b;c\r\n world\r\n"
                            "A\r\n0123456789\r\n0;last\r\nTrailer-A: 1\r\ntrailer-b:  2 \r\n\r\n";
  checkHttpSplits(requests(), input,
                  {kChunkedLine,
                   "body: hello world0123456789 | trailer: Trailer-A: 1 | trailer: trailer-b: 2"});
  // The trailers are in the LastHttpContent; each chunk's data is its own HttpContent.
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(input);
  REQUIRE(run.messages().size() == 5);
  CHECK(std::get<HttpContent>(run.messages()[1]).content().readableStringView() == "hello");
  CHECK(std::get<HttpContent>(run.messages()[2]).content().readableStringView() == " world");
  const auto& last = std::get<LastHttpContent>(run.messages()[4]);
  CHECK(last.content().readableBytes() == 0);
  REQUIRE(last.hasTrailingHeaders());
  CHECK(last.trailers()->get("trailer-a") == "1");
  CHECK(last.trailers()->get("Trailer-B") == "2");
  // Upper-case hex and leading zeros in chunk sizes.
  checkHttpSplits(requests(), kChunkedHead + "00B\r\nhello world\r\n000\r\n\r\n",
                  {kChunkedLine, "body: hello world"});
  // No chunk but the last one, no trailers.
  checkHttpSplits(requests(), kChunkedHead + "0\r\n\r\n", {kChunkedLine, "body: "});
  // Transfer codings before chunked are passed on (the content stays coded).
  checkHttpSplits(requests(),
                  "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n"
                  "2\r\nxy\r\n0\r\n\r\n",
                  {"POST / HTTP/1.1 | Host: a | Transfer-Encoding: gzip, CHUNKED", "body: xy"});
}

TEST_CASE("HttpRequestDecoder: content is a slice of the bytes received (zero copy)") {
  const std::string input = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
  ByteBuf in = ByteBufAllocator::defaultAllocator().buffer(input.size());
  in.writeBytes(input);
  const std::byte* begin = in.readPtr();
  const std::byte* end = begin + input.size();
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(std::move(in));
  REQUIRE(run.messages().size() == 2);
  const ByteBuf& content = std::get<LastHttpContent>(run.messages()[1]).content();
  CHECK(content.readableStringView() == "hello");
  CHECK(content.readPtr() >= begin);
  CHECK(content.readPtr() + 5 <= end);
  // The head's fields view the same memory (its backing is a retained slice of it).
  const HttpHeaders& h = std::get<HttpRequest>(run.messages()[0]).headers();
  const auto* host = reinterpret_cast<const std::byte*>(h.get("host")->data());
  CHECK(host >= begin);
  CHECK(host < end);

  // Chunk data too.
  const std::string chunked = kChunkedHead + "5\r\nhello\r\n0\r\n\r\n";
  ByteBuf in2 = ByteBufAllocator::defaultAllocator().buffer(chunked.size());
  in2.writeBytes(chunked);
  const std::byte* begin2 = in2.readPtr();
  DecoderRunner<HttpRequestDecoder> run2;
  run2.feed(std::move(in2));
  REQUIRE(run2.messages().size() == 3);
  CHECK(std::get<HttpContent>(run2.messages()[1]).content().readPtr() == begin2 + 59);
}

TEST_CASE("HttpRequestDecoder: messages outlive the decoder and its cumulation") {
  HttpRequestDecoder::Output out;
  {
    HttpRequestDecoder d;
    d.channelRead(ByteBuf(Unpooled::copiedBuffer(std::string_view(
                      "PURGE /k HTTP/1.1\r\nHost: z\r\nContent-Length: 2\r\n\r\nok"))),
                  out);
  }
  REQUIRE(out.size() == 2);
  const auto& r = std::get<HttpRequest>(out[0]);
  CHECK(r.method().name() == "PURGE");
  CHECK(r.uri() == "/k");
  CHECK(r.headers().get("host") == "z");
  CHECK(std::get<LastHttpContent>(out[1]).content().readableStringView() == "ok");
}

TEST_CASE("HttpRequestDecoder: HTTP/1.0 with Transfer-Encoding closes after the request") {
  // RFC 9112 §6.1: the framing is faulty; the request is read as chunked, "connection: close" is
  // added, and what follows it is discarded.
  const std::string input =
      "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + kLine + kHost +
      "\r\n";
  checkHttpSplits(
      requests(), input,
      {"POST / HTTP/1.0 | Transfer-Encoding: chunked | connection: close", "body: abc"});
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(input);
  CHECK(run.decoder().isDiscarding());
  CHECK(run.errors().empty());
  CHECK(std::get<HttpRequest>(run.messages()[0]).headers().containsValue("Connection", "close"));
}

TEST_CASE("HttpRequestDecoder: bare LF is accepted with allowBareLf") {
  // Netty's testDecodeWholeRequestAtOnceLFDelimiters and ...MixedDelimiters.
  const auto lenient = requests(HttpDecoderOptions().setAllowBareLf(true));
  checkHttpSplits(lenient, "GET / HTTP/1.1\nHost: a\n\n", {kGetHead, "body: "});
  checkHttpSplits(lenient, "GET / HTTP/1.1\r\nHost: a\n\r\n", {kGetHead, "body: "});
  checkHttpSplits(lenient,
                  "POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n3\nabc\n0\nT: 1\n\n",
                  {kChunkedLine, "body: abc | trailer: T: 1"});
  // A bare CR stays refused.
  checkFails("GET / HTTP/1.1\nHost: a\rb\n\n", "!400 bare-cr @22", {},
             HttpDecoderOptions().setAllowBareLf(true));
}

TEST_CASE("HttpRequestDecoder: Expect: 100-continue heads come out before their content") {
  // Netty's test100Continue: the head is decoded at once, so a server can answer 100.
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(
      "PUT /file HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: "
      "1048576000\r\n\r\n");
  REQUIRE(run.messages().size() == 1);
  CHECK(std::get<HttpRequest>(run.messages()[0]).headers().get("expect") == "100-continue");
  CHECK(run.errors().empty());
}

// ---------------------------------------------------------------- one case per rule

TEST_CASE("HttpRequestDecoder: bare-cr") {
  checkFails(kLine + "Host: a\rb\r\n\r\n", "!400 bare-cr @23");
  checkFails(kLine + "Host: a\r\r\n\r\n", "!400 bare-cr @23");           // CR CR LF
  checkFails(kLine + "Ho\rst: a\r\n\r\n", "!400 bare-cr @18");           // in a name
  checkFails("\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", "!400 bare-cr @0");  // before the request
  checkFails("\r\n\rX", "!400 bare-cr @2");
  checkFails(kChunkedHead + "5;a=\rb\r\nhello\r\n0\r\n\r\n", "!400 bare-cr @60", {kChunkedLine});
}

TEST_CASE("HttpRequestDecoder: bare-lf") {
  checkFails("GET / HTTP/1.1\nHost: a\r\n\r\n", "!400 bare-lf @14");
  checkFails(kLine + "Host: a\n\r\n", "!400 bare-lf @23");
  checkFails(kLine + kHost + "\n", "!400 bare-lf @25");  // the empty line
  checkFails("\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "!400 bare-lf @0");
  checkFails(kChunkedHead + "5\nhello\r\n0\r\n\r\n", "!400 bare-lf @57", {kChunkedLine});
  checkFails(kChunkedHead + "0\r\nT: 1\n\r\n", "!400 bare-lf @63", {kChunkedLine});
}

TEST_CASE("HttpRequestDecoder: obs-fold refused, or unfolded when allowed") {
  checkFails(kLine + kHost + "X: b\r\n c\r\n\r\n", "!400 obs-fold @31");
  // Netty's testWhitespaceBeforeTransferEncoding / testLeadingWhitespaceInFirstHeaderName: a
  // first field line starting with whitespace is refused even when folding is allowed (there is
  // nothing to continue).
  checkFails(kLine + " Host: a\r\n\r\n", "!400 obs-fold @16");
  checkFails(kLine + "\tTransfer-Encoding: chunked\r\nHost: a\r\n\r\n", "!400 obs-fold @16", {},
             HttpDecoderOptions().setAllowObsFold(true));
  // Allowed: each fold becomes one SP (Netty's testMultiLineHeader).
  const auto folding = requests(HttpDecoderOptions().setAllowObsFold(true));
  checkHttpSplits(folding, kLine + kHost + "X: b\r\n c\r\n\t \td  \r\nY: e\r\n\r\n",
                  {kGetHead + " | X: b c d | Y: e", "body: "});
  checkHttpSplits(folding, kLine + kHost + "X:\r\n c\r\n\r\n", {kGetHead + " | X: c", "body: "});
  // A folded framing field is read unfolded.
  checkHttpSplits(folding, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n 3\r\n\r\nabc",
                  {"POST / HTTP/1.1 | Host: a | Content-Length: 3", "body: abc"});
  // A control character in the continuation is still refused.
  checkFails(kLine + kHost + "X: b\r\n c\x01\r\n\r\n", "!400 control-character @33", {},
             HttpDecoderOptions().setAllowObsFold(true));
  // Folding in trailers too.
  checkHttpSplits(folding, kChunkedHead + "0\r\nT: 1\r\n 2\r\n\r\n",
                  {kChunkedLine, "body:  | trailer: T: 1 2"});
}

TEST_CASE("HttpRequestDecoder: whitespace-before-colon") {
  // Netty's testWhitespace / testWhitespaceInTransferEncoding: "Transfer-Encoding : chunked" must
  // not be read as a framing field by one server and ignored by another (smuggling).
  checkFails(kLine + "Host : a\r\n\r\n", "!400 whitespace-before-colon @20");
  checkFails(kLine + "Host\t: a\r\n\r\n", "!400 whitespace-before-colon @20");
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
             "!400 whitespace-before-colon @43");
  // A space inside a name is the same fault.
  checkFails(kLine + "Ho st: a\r\n\r\n", "!400 whitespace-before-colon @18");
}

TEST_CASE("HttpRequestDecoder: missing-colon") {
  checkFails(kLine + kHost + "Foo\r\n\r\n", "!400 missing-colon @25");
  checkFails(kLine + "Host\r\n\r\n", "!400 missing-colon @16");
}

TEST_CASE("HttpRequestDecoder: empty-field-name") {
  checkFails(kLine + kHost + ": x\r\n\r\n", "!400 empty-field-name @25");
}

TEST_CASE("HttpRequestDecoder: invalid-field-name") {
  checkFails(kLine + "Ho(st: a\r\n\r\n", "!400 invalid-field-name @18");
  checkFails(kLine + "H\xc3\xa9: a\r\nHost: a\r\n\r\n", "!400 invalid-field-name @17");
  // Netty's testHeaderNameStartsWithControlChar* and testHeaderNameEndsWithControlChar*.
  for (char c : {'\x1c', '\x1d', '\x1e', '\x1f', '\x0c', '\x00', '\x7f'}) {
    CAPTURE(static_cast<int>(c));
    checkFails(kLine + std::string(1, c) + "Host: a\r\n\r\n", "!400 invalid-field-name @16");
    checkFails(kLine + "Host" + std::string(1, c) + ": a\r\n\r\n", "!400 invalid-field-name @20");
  }
}

TEST_CASE("HttpRequestDecoder: control-character") {
  checkFails(kLine + "Host: a\0b\r\n\r\n"s, "!400 control-character @23");
  checkFails(kLine + "Host: a\x7f\r\n\r\n", "!400 control-character @23");
  checkFails(kLine + "Host: a\x01\r\n\r\n", "!400 control-character @23");
  // Netty's testContentLengthAndTransferEncodingHeadersWithVerticalTab.
  checkFails(kLine + kHost + "Transfer-Encoding:\x0b chunked\r\n\r\n",
             "!400 control-character @43");
  checkFails(kLine + kHost +
                 "Content-Length: \x0b"
                 "1\r\n\r\n",
             "!400 control-character @41");
  // In a value longer than a vector register (the vectorised scan), at every position.
  for (std::size_t at : {0U, 15U, 16U, 31U, 32U, 40U, 63U}) {
    CAPTURE(at);
    std::string value(64, 'v');
    value[at] = '\0';
    DecoderRunner<HttpRequestDecoder> run;
    run.feed(kLine + kHost + "X: " + value + "\r\n\r\n");
    REQUIRE(run.errors().size() == 1);
    CHECK(netbuf::test::httpError(run.errors()[0].error) ==
          "!400 control-character @" + std::to_string(28 + at));
  }
  // In a chunk extension.
  checkFails(kChunkedHead + "5;a=\x01\r\nhello\r\n0\r\n\r\n", "!400 control-character @60",
             {kChunkedLine});
  // In the request line, a NUL or another control byte ends the method or target: refused as
  // those (see invalid-method, invalid-request-target).
  checkFails("GET /a\0 HTTP/1.1\r\nHost: a\r\n\r\n"s, "!400 invalid-request-target @6");
  checkFails("G\0T / HTTP/1.1\r\nHost: a\r\n\r\n"s, "!400 invalid-method @1");
}

TEST_CASE("HttpRequestDecoder: invalid-method") {
  checkFails("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", "!400 invalid-method @1");
  checkFails("GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", "!400 invalid-method @3");
  checkFails("\x01GET / HTTP/1.1\r\nHost: a\r\n\r\n", "!400 invalid-method @0");
  // A TLS ClientHello sent to a plain-text port.
  checkFails("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n"s, "!400 invalid-method @0");
}

TEST_CASE("HttpRequestDecoder: invalid-request-target") {
  checkFails("GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", "!400 invalid-request-target @6");
  checkFails("GET /a\x7f HTTP/1.1\r\nHost: a\r\n\r\n", "!400 invalid-request-target @6");
}

TEST_CASE("HttpRequestDecoder: malformed-request-line") {
  checkFails("GET /\r\n\r\n", "!400 malformed-request-line @4");
  checkFails("GET\r\n\r\n", "!400 malformed-request-line @0");
  checkFails("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "!400 malformed-request-line @4");
  checkFails(" GET / HTTP/1.1\r\nHost: a\r\n\r\n", "!400 malformed-request-line @0");
  checkFails("\r\n\r\nGET /\r\n\r\n", "!400 malformed-request-line @8");
}

TEST_CASE("HttpRequestDecoder: malformed-version") {
  checkFails("GET / HTTP/1.1x\r\nHost: a\r\n\r\n", "!400 malformed-version @6");
  checkFails("GET / http/1.1\r\nHost: a\r\n\r\n", "!400 malformed-version @6");
  checkFails("GET / HTTP/11\r\nHost: a\r\n\r\n", "!400 malformed-version @6");
  checkFails("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", "!400 malformed-version @6");
  checkFails("GET / \r\n\r\n", "!400 malformed-version @6");
  checkFails("GET / HTTP/1.10\r\nHost: a\r\n\r\n", "!400 malformed-version @6");
}

TEST_CASE("HttpRequestDecoder: version-not-supported (505)") {
  checkFails("GET / HTTP/2.0\r\nHost: a\r\n\r\n", "!505 version-not-supported @6");
  checkFails("GET / HTTP/0.9\r\n\r\n", "!505 version-not-supported @6");
  CHECK(firstError("GET / HTTP/3.0\r\n\r\n").status() == 505);
}

TEST_CASE("HttpRequestDecoder: missing-host") {
  checkFails(kLine + "\r\n", "!400 missing-host @0");
  checkFails("\r\n\r\n" + kLine + "X: y\r\n\r\n", "!400 missing-host @4");
  // After a good request, the offset is the second head's.
  checkFails(kLine + kHost + "\r\n" + kLine + "\r\n", "!400 missing-host @27",
             {kGetHead, "body: "});
}

TEST_CASE("HttpRequestDecoder: repeated-host") {
  checkFails(kLine + kHost + "host: b\r\n\r\n", "!400 repeated-host @0");
  checkFails("GET / HTTP/1.0\r\n" + kHost + kHost + "\r\n", "!400 repeated-host @0");
}

TEST_CASE("HttpRequestDecoder: invalid-content-length") {
  for (const char* v : {"abc", "+5", "-1", "5x", "0x5", "1 2", "5,", ",5", "5,,5", "",
                        "99999999999999999999", "18446744073709551616"}) {
    CAPTURE(v);
    checkFails("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + std::string(v) + "\r\n\r\n",
               "!400 invalid-content-length @0");
  }
  // The largest 64-bit value parses (and is then over the content limit).
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551615\r\n\r\n",
             "!413 content-too-large @0 limit=1073741824");
}

TEST_CASE("HttpRequestDecoder: differing-content-length") {
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
             "!400 differing-content-length @0");
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\nhello!",
             "!400 differing-content-length @0");
  checkFails(
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 00\r\n"
      "Content-Length: 1\r\n\r\nx",
      "!400 differing-content-length @0");
}

TEST_CASE("HttpRequestDecoder: content-length-with-transfer-encoding") {
  // Netty's testContentLengthHeaderAndChunked (Netty removes Content-Length; netbuf refuses by
  // default: the classic request-smuggling shape).
  const std::string input =
      "POST / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\nContent-Length: 5\r\n"
      "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
      kLine + kHost + "\r\n";
  checkFails(input, "!400 content-length-with-transfer-encoding @0");
  // Order does not matter.
  checkFails(
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n"
      "\r\n0\r\n\r\n",
      "!400 content-length-with-transfer-encoding @0");
  // Allowed: framed by Transfer-Encoding alone, Content-Length removed, "connection: close"
  // added, what follows discarded.
  const auto lenient =
      requests(HttpDecoderOptions().setAllowContentLengthWithTransferEncoding(true));
  checkHttpSplits(lenient, input,
                  {"POST / HTTP/1.1 | Host: example.com | Connection: close | "
                   "Transfer-Encoding: chunked | connection: close",
                   "body: hello"});
  DecoderRunner<HttpRequestDecoder> run(
      HttpDecoderOptions().setAllowContentLengthWithTransferEncoding(true));
  run.feed(input);
  CHECK(run.errors().empty());
  CHECK(run.decoder().isDiscarding());
  CHECK_FALSE(std::get<HttpRequest>(run.messages()[0]).headers().contains("content-length"));
}

TEST_CASE("HttpRequestDecoder: unknown-transfer-coding (501)") {
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: foo, chunked\r\n\r\n0\r\n\r\n",
             "!501 unknown-transfer-coding @0");
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n",
             "!501 unknown-transfer-coding @0");
  CHECK(firstError("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: x\r\n\r\n").status() == 501);
}

TEST_CASE("HttpRequestDecoder: final-coding-not-chunked") {
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
             "!400 final-coding-not-chunked @0");
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
             "!400 final-coding-not-chunked @0");
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n",
             "!400 final-coding-not-chunked @0");
  checkFails(
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
      "!400 final-coding-not-chunked @0");
}

TEST_CASE("HttpRequestDecoder: chunked-twice") {
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
             "!400 chunked-twice @0");
  checkFails(
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
      "Transfer-Encoding: chunked\r\n\r\n",
      "!400 chunked-twice @0");
}

TEST_CASE("HttpRequestDecoder: invalid-chunk-size") {
  checkFails(kChunkedHead + "x\r\n", "!400 invalid-chunk-size @56", {kChunkedLine});
  checkFails(kChunkedHead + "5 x\r\nhello\r\n0\r\n\r\n", "!400 invalid-chunk-size @58",
             {kChunkedLine});
  checkFails(kChunkedHead + "\r\n", "!400 invalid-chunk-size @56", {kChunkedLine});
  checkFails(kChunkedHead + ";ext\r\n", "!400 invalid-chunk-size @56", {kChunkedLine});
  checkFails(kChunkedHead + "-5\r\n", "!400 invalid-chunk-size @56", {kChunkedLine});
  checkFails(kChunkedHead + " 5\r\n", "!400 invalid-chunk-size @56", {kChunkedLine});
  checkFails(kChunkedHead + "0x5\r\n", "!400 invalid-chunk-size @57", {kChunkedLine});
  // After a good chunk, at the second size line.
  checkFails(kChunkedHead + "3\r\nabc\r\ng\r\n", "!400 invalid-chunk-size @64",
             {kChunkedLine, "partial: abc"});
  // Whitespace before the extension is BWS, allowed.
  checkHttpSplits(requests(), kChunkedHead + "3 \t;x\r\nabc\r\n0\r\n\r\n",
                  {kChunkedLine, "body: abc"});
}

TEST_CASE("HttpRequestDecoder: chunk-size-too-long, and sizes never wrap") {
  // 17 hex digits do not fit 64 bits.
  checkFails(kChunkedHead + "10000000000000000\r\n", "!400 chunk-size-too-long @56",
             {kChunkedLine});
  checkFails(kChunkedHead + "00000000000000001\r\n", "!400 chunk-size-too-long @56",
             {kChunkedLine});
  // Netty once read "100000004" into an int, which wrapped to 4: here it is 0x100000004 bytes and
  // over maxChunkSize (413), not a 4-byte chunk whose "data" smuggles a request.
  const std::string smuggle =
      kChunkedHead + "100000004\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n0\r\n\r\n";
  checkFails(smuggle, "!413 chunk-too-large @56 limit=16777216", {kChunkedLine});
  CHECK(firstError(smuggle).value() == 0x100000004ULL);
  // With limits above it, every following byte is chunk data.
  const auto big =
      requests(HttpDecoderOptions().setMaxChunkSize(1ULL << 40).setMaxContentLength(1ULL << 40));
  checkHttpSplits(big, kChunkedHead + "100000004\r\nabcd\r\n0\r\n\r\n",
                  {kChunkedLine, "partial: abcd\r\n0\r\n\r\n", "!400 premature-end-of-stream @78"});
  // 16 digits are fine.
  checkFails(kChunkedHead + "ffffffffffffffff\r\n", "!413 chunk-too-large @56 limit=16777216",
             {kChunkedLine});
}

TEST_CASE("HttpRequestDecoder: chunk-too-large (413)") {
  const auto o = HttpDecoderOptions().setMaxChunkSize(4);
  checkFails(kChunkedHead + "5\r\nhello\r\n0\r\n\r\n", "!413 chunk-too-large @56 limit=4",
             {kChunkedLine}, o);
  checkHttpSplits(requests(o), kChunkedHead + "4\r\nhell\r\n1\r\no\r\n0\r\n\r\n",
                  {kChunkedLine, "body: hello"});
  CHECK(firstError(kChunkedHead + "5\r\n", o).value() == 5);
}

TEST_CASE("HttpRequestDecoder: content-too-large (413) by Content-Length and by chunks") {
  const auto o = HttpDecoderOptions().setMaxContentLength(6);
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\n1234567",
             "!413 content-too-large @0 limit=6", {}, o);
  checkHttpSplits(requests(o), "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n123456",
                  {"POST / HTTP/1.1 | Host: a | Content-Length: 6", "body: 123456"});
  checkFails(kChunkedHead + "5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n",
             "!413 content-too-large @66 limit=6", {kChunkedLine, "partial: hello"}, o);
  CHECK(firstError(kChunkedHead + "5\r\nhello\r\n5\r\nworld\r\n", o).value() == 10);
  checkHttpSplits(requests(o), kChunkedHead + "5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n",
                  {kChunkedLine, "body: hello!"});
}

TEST_CASE("HttpRequestDecoder: chunk-without-crlf") {
  checkFails(kChunkedHead + "5\r\nhelloX\r\n0\r\n\r\n", "!400 chunk-without-crlf @64",
             {kChunkedLine, "partial: hello"});
  checkFails(kChunkedHead + "5\r\nhello\rX", "!400 chunk-without-crlf @64",
             {kChunkedLine, "partial: hello"});
  // A bare LF after the data, unless allowed.
  checkFails(kChunkedHead + "5\r\nhello\n0\r\n\r\n", "!400 chunk-without-crlf @64",
             {kChunkedLine, "partial: hello"});
  checkHttpSplits(requests(HttpDecoderOptions().setAllowBareLf(true)),
                  kChunkedHead + "5\r\nhello\n0\r\n\r\n", {kChunkedLine, "body: hello"});
  // A chunk longer than its size says.
  checkFails(kChunkedHead + "3\r\nhello\r\n0\r\n\r\n", "!400 chunk-without-crlf @62",
             {kChunkedLine, "partial: hel"});
}

TEST_CASE("HttpRequestDecoder: chunk-line-too-long") {
  const auto o = HttpDecoderOptions().setMaxChunkLineLength(8);
  checkFails(kChunkedHead + "5;abcdefgh\r\nhello\r\n0\r\n\r\n",
             "!400 chunk-line-too-long @56 limit=8", {kChunkedLine}, o);
  // A line that has not ended is cut off as soon as it is too long.
  checkFails(kChunkedHead + "5;abcdefghijklmnopqrstuvwxyz", "!400 chunk-line-too-long @56 limit=8",
             {kChunkedLine}, o);
  checkHttpSplits(requests(o), kChunkedHead + "5;abcdef\r\nhello\r\n0\r\n\r\n",
                  {kChunkedLine, "body: hello"});
  // An endless size line is never buffered beyond the limit plus one read.
  DecoderRunner<HttpRequestDecoder> run(o);
  run.feed(kChunkedHead);
  for (int i = 0; i < 100; ++i) run.feed("0000000");
  CHECK(run.errors().size() == 1);
  CHECK(run.maxBuffered() <= 8 + 1 + 7);
}

TEST_CASE("HttpRequestDecoder: request-line-too-long (414)") {
  const auto o = HttpDecoderOptions().setMaxInitialLineLength(16);
  checkFails("GET /0123456789ab HTTP/1.1\r\nHost: a\r\n\r\n",
             "!414 request-line-too-long @0 limit=16", {}, o);
  // Exactly the limit is fine (the CRLF does not count).
  checkHttpSplits(requests(o), "GET /23 HTTP/1.1\r\nHost: a\r\n\r\n",
                  {"GET /23 HTTP/1.1 | Host: a", "body: "});
  checkFails("GET /234 HTTP/1.1\r\nHost: a\r\n\r\n", "!414 request-line-too-long @0 limit=16", {},
             o);
  CHECK(firstError("GET /234 HTTP/1.1\r\n", o).value() == 17);
  CHECK(firstError("GET /234 HTTP/1.1\r\n", o).isTooLong());
  // After leading CRLFs and after a request: the offset is the line's.
  checkFails("\r\n" + kLine + kHost + "\r\nGET /0123456789ab HTTP/1.1\r\n",
             "!414 request-line-too-long @29 limit=16", {kGetHead, "body: "}, o);
}

TEST_CASE("HttpRequestDecoder: a huge request line without CRLF stays bounded") {
  // Netty's testOversizedRequest: a peer sending an endless request line must not make the
  // decoder buffer it; it is cut off once longer than the limit (+1 for a CR).
  DecoderRunner<HttpRequestDecoder> run;
  run.feed("GET /");
  const std::string piece(1000, 'a');
  for (int i = 0; i < 1000; ++i) run.feed(piece);
  CHECK(run.maxBuffered() <= 4096 + 1 + 1000);
  REQUIRE(run.errors().size() == 1);
  CHECK(netbuf::test::httpError(run.errors()[0].error) ==
        "!414 request-line-too-long @0 limit=4096");
  CHECK(run.decoder().isDiscarding());
  CHECK(run.decoder().actualReadableBytes() == 0);
  run.feed(" HTTP/1.1\r\nHost: a\r\n\r\n").finish();
  CHECK(run.messages().empty());
  CHECK(run.errors().size() == 1);
}

TEST_CASE("HttpRequestDecoder: header-section-too-large (431)") {
  const auto o = HttpDecoderOptions().setMaxHeaderSize(20);
  checkFails(kLine + kHost + "X-Long: 0123456789\r\n\r\n",
             "!431 header-section-too-large @16 limit=20", {}, o);
  CHECK(firstError(kLine + kHost + "X-Long: 0123456789\r\n\r\n", o).value() == 29);
  // Exactly the limit (field lines with their CRLFs, not the empty line) is fine.
  checkHttpSplits(requests(o), kLine + kHost + "X-Long: 0\r\n\r\n",
                  {kGetHead + " | X-Long: 0", "body: "});
  // A section that has not ended is cut off as soon as it is too long.
  checkFails(kLine + kHost + "X-Long: 0123456789abcdefghijklmnopqrstuvwxyz",
             "!431 header-section-too-large @16 limit=20", {}, o);
  // The section being too large is found before a fault inside the line that overflows it, so
  // that the error does not depend on how the line arrived.
  checkFails(kLine + kHost + "X-Long\x01: 0123456789abcdefghij\r\n\r\n",
             "!431 header-section-too-large @16 limit=20", {}, o);
  CHECK(firstError(kLine + kHost + "X-Long\x01: 0123456789abcdefghij\r\n\r\n", o).status() == 431);
  // A huge header section in pieces stays bounded.
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(kLine);
  for (int i = 0; i < 1000; ++i) run.feed("X-Field: 0123456789abcdefghij\r\n");
  CHECK(run.errors().size() == 1);
  CHECK(run.maxBuffered() <= 16 + 8192 + 2 + 31);
}

TEST_CASE("HttpRequestDecoder: too-many-fields (431)") {
  const auto o = HttpDecoderOptions().setMaxHeaderCount(2);
  checkFails(kLine + kHost + "A: 1\r\nB: 2\r\n\r\n", "!431 too-many-fields @31 limit=2", {}, o);
  CHECK(firstError(kLine + kHost + "A: 1\r\nB: 2\r\n\r\n", o).value() == 3);
  checkHttpSplits(requests(o), kLine + kHost + "A: 1\r\n\r\n", {kGetHead + " | A: 1", "body: "});
}

TEST_CASE("HttpRequestDecoder: trailer limits") {
  // Trailer sections have the header section's limits.
  const auto count = HttpDecoderOptions().setMaxHeaderCount(2);
  checkFails(kChunkedHead + "0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", "!431 too-many-fields @71 limit=2",
             {kChunkedLine}, count);
  checkHttpSplits(requests(count), kChunkedHead + "0\r\nA: 1\r\nB: 2\r\n\r\n",
                  {kChunkedLine, "body:  | trailer: A: 1 | trailer: B: 2"});
  const auto size = HttpDecoderOptions().setMaxHeaderSize(40);
  checkFails(kChunkedHead + "0\r\nA: 0123456789012345678901234567890123456789\r\n\r\n",
             "!431 trailer-section-too-large @59 limit=40", {kChunkedLine}, size);
  checkFails(kChunkedHead + "0\r\nA: 0123456789012345678901234567890123456789",
             "!431 trailer-section-too-large @59 limit=40", {kChunkedLine}, size);
  // Trailer fields are checked as header fields are.
  checkFails(kChunkedHead + "0\r\nA : 1\r\n\r\n", "!400 whitespace-before-colon @60",
             {kChunkedLine});
  checkFails(kChunkedHead + "0\r\n A: 1\r\n\r\n", "!400 obs-fold @59", {kChunkedLine});
  checkFails(kChunkedHead + "0\r\nA: \x01\r\n\r\n", "!400 control-character @62", {kChunkedLine});
}

TEST_CASE("HttpRequestDecoder: premature-end-of-stream at channelInactive") {
  checkFails(kLine + kHost, "!400 premature-end-of-stream @25");
  checkFails("GET / HT", "!400 premature-end-of-stream @8");
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhello",
             "!400 premature-end-of-stream @53",
             {"POST / HTTP/1.1 | Host: a | Content-Length: 10", "partial: hello"});
  checkFails("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n",
             "!400 premature-end-of-stream @48",
             {"POST / HTTP/1.1 | Host: a | Content-Length: 10"});
  checkFails(kChunkedHead + "5\r\nhel", "!400 premature-end-of-stream @62",
             {kChunkedLine, "partial: hel"});
  checkFails(kChunkedHead + "5\r\nhello\r", "!400 premature-end-of-stream @65",
             {kChunkedLine, "partial: hello"});
  checkFails(kChunkedHead + "5", "!400 premature-end-of-stream @57", {kChunkedLine});
  checkFails(kChunkedHead + "0\r\nT: 1\r\n", "!400 premature-end-of-stream @65", {kChunkedLine});
  // Between messages the end of stream is normal, even after a stray CR.
  checkHttpSplits(requests(), kLine + kHost + "\r\n\r", {kGetHead, "body: "});
  checkHttpSplits(requests(), "", {});
}

TEST_CASE("HttpRequestDecoder: after an error everything is discarded") {
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(kLine + kHost + "\r\n" + "GET / HTTP/1.1\nHost: a\r\n\r\n" + kLine + kHost + "\r\n");
  REQUIRE(run.errors().size() == 1);
  CHECK(run.errors()[0].messagesBefore == 2);
  CHECK(run.decoder().isDiscarding());
  CHECK(run.decoder().actualReadableBytes() == 0);
  run.feed(kLine + kHost + "\r\n");
  CHECK(run.messages().size() == 2);
  CHECK(run.errors().size() == 1);
  CHECK(run.decoder().actualReadableBytes() == 0);
  run.finish();
  CHECK(run.errors().size() == 1);  // no premature end reported while discarding
  // The error is a DecoderError carrying the offset, status and rule.
  CHECK_THROWS_AS(run.rethrowError(0), DecoderError);
  const HttpDecoderError e = firstError("GET / HTTP/1.1\nHost: a\r\n\r\n");
  CHECK(e.offset() == 14);
  CHECK(e.status() == 400);
  CHECK(e.rule() == "bare-lf");
  CHECK_FALSE(e.isTooLong());
  CHECK(std::string_view(e.what()).find("bare-lf") != std::string_view::npos);
}

TEST_CASE("HttpRequestDecoder: the two-argument channelRead throws HttpDecoderError") {
  HttpRequestDecoder d;
  HttpRequestDecoder::Output out;
  CHECK_THROWS_AS(
      d.channelRead(ByteBuf(Unpooled::copiedBuffer(std::string_view("GET / HTTP/9.0\r\n"))), out),
      HttpDecoderError);
  CHECK(d.isDiscarding());
}

TEST_CASE("HttpRequestDecoder: a limit is found before the syntax of the line that breaks it") {
  // A line too long is refused for its length whether it arrived whole or in pieces: the partial
  // line cannot be parsed yet, so the whole one must not be either (found by the fuzz target).
  checkFails("GET /0123456789abc HTTP/1.1\nHost: a\r\n\r\n",
             "!414 request-line-too-long @0 limit=16", {},
             HttpDecoderOptions().setMaxInitialLineLength(16));
  checkFails(
      "GET /0123\x01"
      "56789abc HTTP/1.1\r\n",
      "!414 request-line-too-long @0 limit=16", {},
      HttpDecoderOptions().setMaxInitialLineLength(16));
  checkFails(kLine + kHost + "X-Long: 0123456789abcdefghij\n\r\n",
             "!431 header-section-too-large @16 limit=20", {},
             HttpDecoderOptions().setMaxHeaderSize(20));
  checkFails(kChunkedHead + "5;abcdefghijk\nhello\r\n", "!400 chunk-line-too-long @56 limit=8",
             {kChunkedLine}, HttpDecoderOptions().setMaxChunkLineLength(8));
  checkFails(kChunkedHead +
                 "5;abc\x01"
                 "efghijk\r\nhello\r\n",
             "!400 chunk-line-too-long @56 limit=8", {kChunkedLine},
             HttpDecoderOptions().setMaxChunkLineLength(8));
}
