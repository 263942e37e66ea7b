#include <netbuf/codec/http/http_response_decoder.hpp>

#include <netbuf/codec/decoder_runner.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/http_split_checks.hpp"

// The response decoder shares the request decoder's state machine (its rules are tested in
// http_request_decoder_test.cpp); these cases cover what differs for responses: status lines, and
// framing that depends on the request answered (RFC 9112 §6.3). Facts from Netty's
// HttpResponseDecoderTest are ported where they apply.

using namespace netbuf;
using netbuf::test::checkHttpSplits;
using netbuf::test::HttpTranscript;

namespace {

using namespace std::string_literals;

/// A fresh response decoder told the methods of the requests sent, in order.
auto responses(std::vector<HttpMethod> methods = {}, HttpDecoderOptions o = {}) {
  return [methods, o] {
    HttpResponseDecoder d(o);
    for (const HttpMethod& m : methods) d.pushRequestMethod(m);
    return d;
  };
}

const std::string kOk = "HTTP/1.1 200 OK\r\n";  // 17 bytes

void checkFails(const std::string& input, const std::string& error, HttpTranscript before = {},
                HttpDecoderOptions o = {}) {
  CAPTURE(input);
  before.push_back(error);
  checkHttpSplits(responses({}, o), input, before);
}

}  // namespace

TEST_CASE("HttpResponseDecoder: a response with Content-Length") {
  checkHttpSplits(responses(), kOk + "Content-Length: 5\r\n\r\nhello",
                  {"HTTP/1.1 200 OK | Content-Length: 5", "body: hello"});
  DecoderRunner<HttpResponseDecoder> run;
  run.feed(kOk + "Content-Length: 5\r\nServer: x\r\n\r\nhello");
  REQUIRE(run.messages().size() == 2);
  const auto& r = std::get<HttpResponse>(run.messages()[0]);
  CHECK(r.status().code() == 200);
  CHECK(r.status().reasonPhrase() == "OK");
  CHECK(r.status() == HttpResponseStatus::OK);
  CHECK(r.protocolVersion() == HttpVersion::HTTP_1_1);
  CHECK(r.headers().get("server") == "x");
  CHECK(std::get<LastHttpContent>(run.messages()[1]).content().readableStringView() == "hello");
  // Netty's testResponseWithContentLengthFragmented: the content in pieces.
  DecoderRunner<HttpResponseDecoder> pieces;
  pieces.feed(kOk + "Content-Length: 10\r\n\r\n").feed("0123").feed("456").feed("789");
  REQUIRE(pieces.messages().size() == 4);
  CHECK(std::holds_alternative<HttpContent>(pieces.messages()[1]));
  CHECK(std::holds_alternative<LastHttpContent>(pieces.messages()[3]));
}

TEST_CASE("HttpResponseDecoder: reason phrases, empty or missing") {
  // Netty's testStatusWithoutReasonPhrase: "HTTP/1.1 200\r\n" (no SP) is accepted.
  checkHttpSplits(responses(), "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
                  {"HTTP/1.1 200  | Content-Length: 0", "body: "});
  checkHttpSplits(responses(), "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n",
                  {"HTTP/1.1 200  | Content-Length: 0", "body: "});
  checkHttpSplits(responses(), "HTTP/1.1 404 Not  Found\there\r\nContent-Length: 0\r\n\r\n",
                  {"HTTP/1.1 404 Not  Found\there | Content-Length: 0", "body: "});
  checkHttpSplits(responses(), "HTTP/1.1 200 d\xc3\xa9j\xc3\xa0\r\nContent-Length: 0\r\n\r\n",
                  {"HTTP/1.1 200 d\xc3\xa9j\xc3\xa0 | Content-Length: 0", "body: "});
  // Any three digits from 100, registered or not.
  checkHttpSplits(responses(), "HTTP/1.0 599 Custom\r\nContent-Length: 0\r\n\r\n",
                  {"HTTP/1.0 599 Custom | Content-Length: 0", "body: "});
  DecoderRunner<HttpResponseDecoder> run;
  run.feed("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n");
  REQUIRE(run.messages().size() == 2);
  const auto& r = std::get<HttpResponse>(run.messages()[0]);
  CHECK(r.status().code() == 404);
  CHECK(r.status().reasonPhrase().empty());
}

TEST_CASE("HttpResponseDecoder: malformed status lines") {
  checkFails("HTTP/1.1\r\n\r\n", "!400 malformed-status-line @0");
  checkFails("HTTP/1.1\t200 OK\r\n\r\n", "!400 malformed-status-line @0");
  checkFails("HTTP/1.1 20 OK\r\n\r\n", "!400 malformed-status-code @9");
  checkFails("HTTP/1.1  200 OK\r\n\r\n", "!400 malformed-status-code @9");
  checkFails("HTTP/1.1 2000 OK\r\n\r\n", "!400 malformed-status-code @9");
  checkFails("HTTP/1.1 200OK\r\n\r\n", "!400 malformed-status-code @9");
  checkFails("HTTP/1.1 099 Low\r\n\r\n", "!400 malformed-status-code @9");
  checkFails("HTTP/1.1 abc OK\r\n\r\n", "!400 malformed-status-code @9");
  checkFails("http/1.1 200 OK\r\n\r\n", "!400 malformed-version @0");
  checkFails("HTTP/2.0 200 OK\r\n\r\n", "!505 version-not-supported @0");
  checkFails("HTTP/1.1 200 O\x01K\r\n\r\n", "!400 control-character @14");
  checkFails("HTTP/1.1 200 O\rK\r\n\r\n", "!400 bare-cr @14");
  checkFails("HTTP/1.1 200 OK\n\r\n", "!400 bare-lf @15");
  const auto o = HttpDecoderOptions().setMaxInitialLineLength(16);
  checkFails("HTTP/1.1 200 Long reason\r\n\r\n", "!400 status-line-too-long @0 limit=16", {}, o);
  checkFails("HTTP/1.1 200 Long reason without end", "!400 status-line-too-long @0 limit=16", {},
             o);
}

TEST_CASE("HttpResponseDecoder: responses to HEAD have no content, whatever their fields say") {
  const std::string input = kOk + "Content-Length: 5\r\n\r\n" + kOk +
                            "Transfer-Encoding: chunked\r\n\r\n" + kOk +
                            "Content-Length: 2\r\n\r\nhi";
  checkHttpSplits(responses({HttpMethod::HEAD, HttpMethod::HEAD, HttpMethod::GET}), input,
                  {"HTTP/1.1 200 OK | Content-Length: 5",
                   "body: ", "HTTP/1.1 200 OK | Transfer-Encoding: chunked",
                   "body: ", "HTTP/1.1 200 OK | Content-Length: 2", "body: hi"});
  // Without the method, the first response's "content" is read as content (GET is assumed), and
  // the next status line becomes its bytes.
  checkHttpSplits(
      responses(), kOk + "Content-Length: 5\r\n\r\n" + kOk + "\r\n",
      {"HTTP/1.1 200 OK | Content-Length: 5", "body: HTTP/", "!400 malformed-status-line @43"});
}

TEST_CASE("HttpResponseDecoder: 1xx responses, then the final response to the same request") {
  const std::string input =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" +
      kOk + "Content-Length: 2\r\n\r\nhi";
  checkHttpSplits(
      responses({HttpMethod::PUT}), input,
      {"HTTP/1.1 100 Continue", "body: ", "HTTP/1.1 103 Early Hints | Link: </s.css>; rel=preload",
       "body: ", "HTTP/1.1 200 OK | Content-Length: 2", "body: hi"});
  // A 1xx leaves the request's method for its final response: HEAD still applies after 100.
  checkHttpSplits(responses({HttpMethod::HEAD, HttpMethod::GET}),
                  "HTTP/1.1 100 Continue\r\n\r\n" + kOk + "Content-Length: 5\r\n\r\n" + kOk +
                      "Content-Length: 1\r\n\r\nx",
                  {"HTTP/1.1 100 Continue", "body: ", "HTTP/1.1 200 OK | Content-Length: 5",
                   "body: ", "HTTP/1.1 200 OK | Content-Length: 1", "body: x"});
}

TEST_CASE("HttpResponseDecoder: 204 and 304 have no content") {
  checkHttpSplits(responses(),
                  "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"
                  "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n" +
                      kOk + "Content-Length: 1\r\n\r\nx",
                  {"HTTP/1.1 204 No Content | Content-Length: 5",
                   "body: ", "HTTP/1.1 304 Not Modified | Transfer-Encoding: chunked",
                   "body: ", "HTTP/1.1 200 OK | Content-Length: 1", "body: x"});
}

TEST_CASE("HttpResponseDecoder: 101 switches to raw bytes") {
  // Netty's testWebSocketResponseWithDataFollowing: the bytes after the head are the new
  // protocol's, passed on undecoded as HttpContent, never as an HTTP message.
  const std::string input =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
      "\x81\x05hello HTTP/1.1 200 OK\r\n\r\n";
  checkHttpSplits(responses(), input,
                  {"HTTP/1.1 101 Switching Protocols | Upgrade: websocket | Connection: Upgrade",
                   "body: ", "partial: \x81\x05hello HTTP/1.1 200 OK\r\n\r\n"});
  // Nothing after the head: nothing more, and the end of stream is not premature.
  checkHttpSplits(responses(), "HTTP/1.1 101 Switching Protocols\r\n\r\n",
                  {"HTTP/1.1 101 Switching Protocols", "body: "});
}

TEST_CASE("HttpResponseDecoder: a 2xx to CONNECT switches to raw bytes, another status does not") {
  const std::string tunnel = "HTTP/1.1 200 Connection Established\r\n\r\n\x16\x03\x01 tls bytes";
  checkHttpSplits(
      responses({HttpMethod::CONNECT}), tunnel,
      {"HTTP/1.1 200 Connection Established", "body: ", "partial: \x16\x03\x01 tls bytes"});
  // Even with Content-Length (a 2xx to CONNECT has no content).
  checkHttpSplits(responses({HttpMethod::CONNECT}),
                  "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nraw",
                  {"HTTP/1.1 200 OK | Content-Length: 3", "body: ", "partial: raw"});
  checkHttpSplits(responses({HttpMethod::CONNECT, HttpMethod::GET}),
                  "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 4\r\n\r\nauth" +
                      kOk + "Content-Length: 0\r\n\r\n",
                  {"HTTP/1.1 407 Proxy Authentication Required | Content-Length: 4", "body: auth",
                   "HTTP/1.1 200 OK | Content-Length: 0", "body: "});
}

TEST_CASE("HttpResponseDecoder: a close-delimited body ends at channelInactive") {
  // Netty's testClosureWithoutContentLength1/2 and testLastResponseWithoutContentLengthHeader.
  checkHttpSplits(responses(), kOk + "Server: x\r\n\r\nhello world",
                  {"HTTP/1.1 200 OK | Server: x", "body: hello world"});
  // Netty's testLastResponseWithEmptyHeaderAndEmptyContent.
  checkHttpSplits(responses(), kOk + "\r\n", {"HTTP/1.1 200 OK", "body: "});
  checkHttpSplits(responses(), "HTTP/1.0 200 OK\r\n\r\nold", {"HTTP/1.0 200 OK", "body: old"});
  // Before the end of stream the content has no end.
  checkHttpSplits(responses(), kOk + "\r\nabc", {"HTTP/1.1 200 OK", "partial: abc"}, false);
  DecoderRunner<HttpResponseDecoder> run;
  run.feed(kOk + "\r\nabc");
  REQUIRE(run.messages().size() == 2);
  CHECK(std::holds_alternative<HttpContent>(run.messages()[1]));
  run.finish();
  REQUIRE(run.messages().size() == 3);
  CHECK(std::holds_alternative<LastHttpContent>(run.messages()[2]));
  CHECK(run.errors().empty());
  // A final coding other than chunked: content until close (RFC 9112 §6.3 item 4), coding kept.
  checkHttpSplits(responses(), kOk + "Transfer-Encoding: gzip\r\n\r\nzzz",
                  {"HTTP/1.1 200 OK | Transfer-Encoding: gzip", "body: zzz"});
  checkHttpSplits(responses(), kOk + "Transfer-Encoding: chunked, foo\r\n\r\nzzz",
                  {"HTTP/1.1 200 OK | Transfer-Encoding: chunked, foo", "body: zzz"});
}

TEST_CASE("HttpResponseDecoder: chunked with trailers") {
  const std::string input = kOk +
                            "Transfer-Encoding: chunked\r\n\r\n"
                            "4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
                            "0\r\nExpires: never\r\nX-Sum: 1\r\n\r\n";
  checkHttpSplits(
      responses(), input,
      {"HTTP/1.1 200 OK | Transfer-Encoding: chunked",
       "body: Wikipedia in\r\n\r\nchunks. | trailer: Expires: never | trailer: X-Sum: 1"});
  // Netty's testTrailerWithEmptyLineInSeparateBuffer: covered by the splits above; and a second
  // response after it.
  checkHttpSplits(
      responses(), input + kOk + "Content-Length: 1\r\n\r\n!",
      {"HTTP/1.1 200 OK | Transfer-Encoding: chunked",
       "body: Wikipedia in\r\n\r\nchunks. | trailer: Expires: never | trailer: X-Sum: 1",
       "HTTP/1.1 200 OK | Content-Length: 1", "body: !"});
}

TEST_CASE("HttpResponseDecoder: a stream that closes early") {
  // Netty's testConnectionClosedBeforeHeadersReceived.
  checkFails(kOk, "!400 premature-end-of-stream @17");
  // Netty's testPrematureClosureWithChunkedEncoding1 and 2.
  checkFails(kOk + "Transfer-Encoding: chunked\r\n\r\n", "!400 premature-end-of-stream @47",
             {"HTTP/1.1 200 OK | Transfer-Encoding: chunked"});
  checkFails(kOk + "Transfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n",
             "!400 premature-end-of-stream @60",
             {"HTTP/1.1 200 OK | Transfer-Encoding: chunked", "partial: 12345678"});
  checkFails(kOk + "Content-Length: 9\r\n\r\n1234", "!400 premature-end-of-stream @42",
             {"HTTP/1.1 200 OK | Content-Length: 9", "partial: 1234"});
}

TEST_CASE("HttpResponseDecoder: garbage") {
  // Netty's testGarbageHeaders, testGarbageChunk and garbage after a complete response.
  checkFails(kOk + "Content-Length: 0\r\nNot a header\r\n\r\n", "!400 whitespace-before-colon @39");
  checkFails(kOk + "Transfer-Encoding: chunked\r\n\r\nNOT HEX\r\n", "!400 invalid-chunk-size @47",
             {"HTTP/1.1 200 OK | Transfer-Encoding: chunked"});
  checkFails(kOk + "Content-Length: 2\r\n\r\nhiGARBAGE\r\n", "!400 malformed-status-line @40",
             {"HTTP/1.1 200 OK | Content-Length: 2", "body: hi"});
  checkFails(kOk + "Content-Length: 2\r\n\r\nhiHTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
             "!400 invalid-content-length @40",
             {"HTTP/1.1 200 OK | Content-Length: 2", "body: hi"});
}

TEST_CASE("HttpResponseDecoder: framing rules shared with requests") {
  checkFails(kOk + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nxy",
             "!400 differing-content-length @0");
  checkFails(kOk + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             "!400 content-length-with-transfer-encoding @0");
  checkFails(kOk + "Transfer-Encoding: chunked, chunked\r\n\r\n", "!400 chunked-twice @0");
  checkFails(kOk + "Content-Length: 9\r\n\r\n", "!413 content-too-large @0 limit=8", {},
             HttpDecoderOptions().setMaxContentLength(8));
  // Allowed: chunked framing, Content-Length removed, connection closed after.
  checkHttpSplits(
      responses({}, HttpDecoderOptions().setAllowContentLengthWithTransferEncoding(true)),
      kOk + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n" + kOk +
          "\r\n",
      {"HTTP/1.1 200 OK | Transfer-Encoding: chunked | connection: close", "body: x"});
  // No Host rule for responses; obs-fold and bare LF leniencies apply.
  checkHttpSplits(responses({}, HttpDecoderOptions().setAllowObsFold(true).setAllowBareLf(true)),
                  "HTTP/1.1 200 OK\nX: a\n b\nContent-Length: 1\n\n!",
                  {"HTTP/1.1 200 OK | X: a b | Content-Length: 1", "body: !"});
}

TEST_CASE("HttpResponseDecoder: after an error everything is discarded") {
  DecoderRunner<HttpResponseDecoder> run;
  run.feed("HTTP/1.1 2x0 OK\r\n\r\n" + kOk + "Content-Length: 0\r\n\r\n");
  REQUIRE(run.errors().size() == 1);
  CHECK(run.decoder().isDiscarding());
  run.feed(kOk + "Content-Length: 0\r\n\r\n").finish();
  CHECK(run.messages().empty());
  CHECK(run.errors().size() == 1);
}
