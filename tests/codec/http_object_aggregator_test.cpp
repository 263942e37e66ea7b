#include <netbuf/codec/http/http_object_aggregator.hpp>

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/http/http_request_decoder.hpp>
#include <netbuf/codec/http/http_response_decoder.hpp>

#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/http_split_checks.hpp"

// The aggregator behind a decoder: one-piece content kept as the received slice, several pieces
// copied, the content limit (declared and counted), Expect handling (RFC 9110 §10.1.1), and the
// discarding of the rest of a refused message.

using namespace netbuf;
using netbuf::test::HttpTranscriber;
using netbuf::test::HttpTranscript;

namespace {

/// Decodes bytes (split at cuts) with D, passes every message through agg, returns the transcript
/// of what agg produced and the messages themselves.
template <class D = HttpRequestDecoder>
HttpTranscript aggregate(HttpObjectAggregator& agg, std::string_view bytes,
                         const std::vector<std::size_t>& cuts = {},
                         std::vector<HttpObject>* kept = nullptr) {
  DecoderRunner<D> run;
  run.feedSplitAt(bytes, cuts).finish();
  HttpTranscriber tr;
  std::vector<HttpObject> out;
  for (HttpObject& m : run.messages()) {
    const std::size_t before = out.size();
    agg.channelRead(std::move(m), out, [&](std::exception_ptr e) { tr.error(e); });
    for (std::size_t i = before; i < out.size(); ++i) tr.add(out[i]);
  }
  for (std::size_t e = 0; e < run.errors().size(); ++e) tr.error(run.errors()[e].error);
  if (kept != nullptr) *kept = std::move(out);
  return tr.take();
}

const std::string kPost5 = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
const std::string kPost5Line = "full POST /p HTTP/1.1 | Host: a | Content-Length: 5 || body: hello";
const std::string kGet = "GET /g HTTP/1.1\r\nHost: a\r\n\r\n";
const std::string kGetLine = "full GET /g HTTP/1.1 | Host: a || body: ";

}  // namespace

TEST_CASE("HttpObjectAggregator: content in one piece is the received slice (zero copy)") {
  HttpObjectAggregator agg(1024);
  ByteBuf in = ByteBufAllocator::defaultAllocator().buffer(kPost5.size());
  in.writeBytes(kPost5);
  const std::byte* begin = in.readPtr();
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(std::move(in));
  std::vector<HttpObject> out;
  for (HttpObject& m : run.messages()) agg.channelRead(std::move(m), out);
  REQUIRE(out.size() == 1);
  const auto& full = std::get<FullHttpRequest>(out[0]);
  CHECK(full.method() == HttpMethod::POST);
  CHECK(full.uri() == "/p");
  CHECK(full.content().readableStringView() == "hello");
  CHECK(full.content().readPtr() == begin + kPost5.size() - 5);
  CHECK(full.trailers() == nullptr);
}

TEST_CASE("HttpObjectAggregator: content in several pieces is copied into one buffer") {
  for (std::size_t cut = 1; cut < kPost5.size(); ++cut) {
    CAPTURE(cut);
    HttpObjectAggregator agg(1024);
    CHECK(aggregate(agg, kPost5, {cut, cut + 1 < kPost5.size() ? cut + 1 : cut}) ==
          HttpTranscript{kPost5Line});
  }
  HttpObjectAggregator agg(1024);
  std::vector<HttpObject> kept;
  CHECK(aggregate(agg, kPost5, {kPost5.size() - 3, kPost5.size() - 1}, &kept) ==
        HttpTranscript{kPost5Line});
  const auto& full = std::get<FullHttpRequest>(kept[0]);
  CHECK(full.content().readableBytes() == 5);
  // Chunked, with trailers moved into the full message; several messages in a row.
  const std::string chunked =
      "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n4\r\ndefg\r\n0\r\nT: 1\r\n\r\n";
  HttpObjectAggregator agg2(1024);
  CHECK(aggregate(agg2, chunked + kGet + kPost5) ==
        HttpTranscript{"full POST /c HTTP/1.1 | Host: a | Transfer-Encoding: chunked || "
                       "body: abcdefg | trailer: T: 1",
                       kGetLine, kPost5Line});
}

TEST_CASE("HttpObjectAggregator: 413 by Content-Length, then the next message") {
  HttpObjectAggregator agg(4);
  CHECK(aggregate(agg, kPost5 + kGet) ==
        HttpTranscript{"!413 content-too-large @- limit=4", kGetLine});
  // At the limit exactly.
  HttpObjectAggregator five(5);
  CHECK(aggregate(five, kPost5) == HttpTranscript{kPost5Line});
}

TEST_CASE("HttpObjectAggregator: 413 by counted chunks discards the rest of the message") {
  const std::string chunked =
      "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n3\r\ndef\r\n3\r\nghi\r\n0\r\n\r\n";
  HttpObjectAggregator agg(5);
  CHECK(aggregate(agg, chunked + kGet) ==
        HttpTranscript{"!413 content-too-large @- limit=5", kGetLine});
  HttpObjectAggregator nine(9);
  CHECK(aggregate(nine, chunked) ==
        HttpTranscript{
            "full POST /c HTTP/1.1 | Host: a | Transfer-Encoding: chunked || body: abcdefghi"});
  // The error carries the size seen.
  HttpObjectAggregator small(5);
  std::vector<HttpObject> out;
  DecoderRunner<HttpRequestDecoder> run;
  run.feed(chunked);
  std::uint64_t value = 0;
  for (HttpObject& m : run.messages()) {
    small.channelRead(std::move(m), out, [&](std::exception_ptr e) {
      try {
        std::rethrow_exception(e);
      } catch (const HttpDecoderError& x) {
        value = x.value();
        CHECK(x.status() == 413);
        CHECK(x.isTooLong());
      }
    });
  }
  CHECK(value == 6);
}

TEST_CASE("HttpObjectAggregator: Expect: 100-continue calls the continue handler first") {
  HttpObjectAggregator agg(1024);
  int continues = 0;
  agg.setContinueHandler([&] { ++continues; });
  // The head arrives alone: the handler runs before any content is there.
  DecoderRunner<HttpRequestDecoder> run;
  run.feed("PUT /f HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n");
  std::vector<HttpObject> out;
  for (HttpObject& m : run.messages()) agg.channelRead(std::move(m), out);
  CHECK(continues == 1);
  CHECK(out.empty());
  run.messages().clear();
  run.feed("abc");
  for (HttpObject& m : run.messages()) agg.channelRead(std::move(m), out);
  REQUIRE(out.size() == 1);
  CHECK(std::get<FullHttpRequest>(out[0]).content().readableStringView() == "abc");
  CHECK(continues == 1);
  // Without a handler it is accepted all the same.
  HttpObjectAggregator quiet(1024);
  CHECK(
      aggregate(
          quiet,
          "PUT /f HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx") ==
      HttpTranscript{
          "full PUT /f HTTP/1.1 | Host: a | Expect: 100-continue | Content-Length: 1 || body: x"});
}

TEST_CASE("HttpObjectAggregator: Expect: 100-continue with too large a body is 413 at once") {
  HttpObjectAggregator agg(4);
  int continues = 0;
  agg.setContinueHandler([&] { ++continues; });
  CHECK(aggregate(agg,
                  "PUT /f HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
                  "hello" +
                      kGet) == HttpTranscript{"!413 content-too-large @- limit=4", kGetLine});
  CHECK(continues == 0);
}

TEST_CASE("HttpObjectAggregator: a Content-Length list of equal values is judged by its value") {
  // "5, 5" is one length (the decoder accepts identical values): too large is 413 at once, with
  // no 100 Continue that would invite the body.
  HttpObjectAggregator agg(4);
  int continues = 0;
  agg.setContinueHandler([&] { ++continues; });
  CHECK(aggregate(agg,
                  "PUT /f HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5, "
                  "5\r\n\r\nhello" +
                      kGet) == HttpTranscript{"!413 content-too-large @- limit=4", kGetLine});
  CHECK(continues == 0);
}

TEST_CASE("HttpObjectAggregator: any other expectation is 417; HTTP/1.0 expectations ignored") {
  HttpObjectAggregator agg(1024);
  int continues = 0;
  agg.setContinueHandler([&] { ++continues; });
  CHECK(
      aggregate(agg,
                "PUT /f HTTP/1.1\r\nHost: a\r\nExpect: something-else\r\nContent-Length: 5\r\n\r\n"
                "hello" +
                    kGet) == HttpTranscript{"!417 unsupported-expectation @-", kGetLine});
  CHECK(continues == 0);
  CHECK(
      aggregate(agg, "PUT /f HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx") ==
      HttpTranscript{"full PUT /f HTTP/1.0 | Expect: 100-continue | Content-Length: 1 || body: x"});
  CHECK(continues == 0);
}

TEST_CASE("HttpObjectAggregator: responses, and full messages passing through") {
  HttpObjectAggregator agg(1024);
  CHECK(aggregate<HttpResponseDecoder>(
            agg,
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            "2\r\nok\r\n0\r\nX: y\r\n\r\nHTTP/1.1 200 OK\r\n\r\nuntil close") ==
        HttpTranscript{
            "full HTTP/1.1 100 Continue || body: ",
            "full HTTP/1.1 200 OK | Transfer-Encoding: chunked || body: ok | trailer: X: y",
            "full HTTP/1.1 200 OK || body: until close"});
  std::vector<HttpObject> out;
  agg.channelRead(FullHttpRequest(HttpMethod::GET, "/full"), out);
  agg.channelRead(FullHttpResponse(HttpResponseStatus::OK), out);
  REQUIRE(out.size() == 2);
  CHECK(std::get<FullHttpRequest>(out[0]).uri() == "/full");
  CHECK(std::holds_alternative<FullHttpResponse>(out[1]));
  // Stray content outside a message is dropped.
  agg.channelRead(HttpContent(), out);
  agg.channelRead(LastHttpContent(), out);
  CHECK(out.size() == 2);
  CHECK(agg.maxContentLength() == 1024);
  agg.setMaxContentLength(1);
  CHECK(agg.maxContentLength() == 1);
}

TEST_CASE("HttpObjectAggregator: a response is limited by the content it carries") {
  // The response to HEAD and a 304 declare a Content-Length they do not carry: not refused.
  HttpObjectAggregator agg(4);
  std::vector<HttpObject> out;
  DecoderRunner<HttpResponseDecoder> run;
  run.decoder().pushRequestMethod(HttpMethod::HEAD);
  run.feed(
      "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n"
      "HTTP/1.1 304 Not Modified\r\nContent-Length: 1000000\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n0123");
  HttpTranscriber tr;
  for (HttpObject& m : run.messages()) {
    const std::size_t before = out.size();
    agg.channelRead(std::move(m), out, [&](std::exception_ptr e) { tr.error(e); });
    for (std::size_t i = before; i < out.size(); ++i) tr.add(out[i]);
  }
  CHECK(tr.take() ==
        HttpTranscript{"full HTTP/1.1 200 OK | Content-Length: 1000000 || body: ",
                       "full HTTP/1.1 304 Not Modified | Content-Length: 1000000 || body: "});
  // Content that arrives is counted: the fifth byte is over the limit.
  run.messages().clear();
  run.feed("4");
  std::vector<std::string> errors;
  for (HttpObject& m : run.messages()) {
    agg.channelRead(std::move(m), out,
                    [&](std::exception_ptr e) { errors.push_back(netbuf::test::httpError(e)); });
  }
  CHECK(errors == std::vector<std::string>{"!413 content-too-large @- limit=4"});
  CHECK(out.size() == 2);
}
