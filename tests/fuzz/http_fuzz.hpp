#pragma once
// The checks shared by the HTTP decoder fuzz targets (http_request_fuzz.cpp,
// http_response_fuzz.cpp). One input is decoded several times, whole and in reads cut at
// fuzzer-chosen points; every run must give the same transcript (support/http_transcript.hpp:
// heads, joined content, errors with status, rule, offset and limit). Checked after every read:
//  - no exception other than an HttpDecoderError is reported, none escapes;
//  - the bytes the decoder buffers never exceed what its limits allow (a start line, a header
//    section, a chunk-size line: the limits plus their line ends), however large the reads;
//  - after an error the decoder is discarding, buffers nothing and emits nothing more;
//  - messages come in order (a head, its parts, its LastHttpContent) and hold only what the
//    decoder may let through (token methods and names, valid values and targets, no empty part).
//
// Input layout: [options] [cut] [read-size seed] (responses: [methods]) [stream...]

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/http/detail/http_scan.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_object.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "support/http_transcript.hpp"

namespace netbuf::fuzz {

/// The options byte: leniencies in the low bits, small limits (so that the fuzzer reaches them)
/// in bit 3.
inline HttpDecoderOptions httpOptions(std::uint8_t b) {
  HttpDecoderOptions o;
  o.allowObsFold = (b & 1) != 0;
  o.allowBareLf = (b & 2) != 0;
  o.allowContentLengthWithTransferEncoding = (b & 4) != 0;
  if ((b & 8) != 0) {
    o.maxInitialLineLength = 24 + (b >> 4);
    o.maxHeaderSize = 48 + (b >> 4) * 4;
    o.maxHeaderCount = 1 + (b >> 6);
    o.maxContentLength = 40 + (b >> 4);
    o.maxChunkSize = 16;
    o.maxChunkLineLength = 12 + (b >> 5);
  }
  return o;
}

/// The most a decoder with these options may buffer between reads: a start line and a header
/// section not yet ended (each cut off once longer than its limit, allowing for the line ends),
/// or a chunk-size line.
inline std::size_t httpBufferBound(const HttpDecoderOptions& o) {
  const std::size_t head = o.maxInitialLineLength + 2 + o.maxHeaderSize + 2;
  const std::size_t chunkLine = o.maxChunkLineLength + 1;
  return head > chunkLine ? head : chunkLine;
}

inline bool isTargetText(std::string_view s) {
  return !s.empty() && detail::http_scan::findTargetEnd(s.data(), s.size()) == s.size();
}

inline void checkFields(const HttpHeaders& h) {
  h.forEach([](std::string_view n, std::string_view v) {
    check(http_util::isToken(n), "a field name that is not a token");
    check(http_util::isValidFieldValue(v), "a field value with a control character");
    check(
        v.empty() || (v.front() != ' ' && v.front() != '\t' && v.back() != ' ' && v.back() != '\t'),
        "a field value with surrounding whitespace");
  });
}

/// Decodes stream in reads cut at cuts with make()'s decoder, checking the per-read invariants;
/// returns the transcript.
template <class Make>
test::HttpTranscript runHttp(Make&& make, const HttpDecoderOptions& o, std::string_view stream,
                             const std::vector<std::size_t>& cuts) {
  DecoderRunner<decltype(make())> run(make());
  const std::size_t bound = httpBufferBound(o);
  std::size_t seenErrors = 0;
  std::size_t messagesAtError = 0;
  auto afterStep = [&] {
    check(run.decoder().actualReadableBytes() <= bound, "the decoder buffered beyond its limits");
    if (seenErrors == 0 && !run.errors().empty()) {
      seenErrors = run.errors().size();
      messagesAtError = run.messages().size();
      check(seenErrors == 1, "more than one error");
      check(run.decoder().isDiscarding(), "not discarding after an error");
    }
    if (seenErrors != 0) {
      check(run.errors().size() == seenErrors, "an error after an error");
      check(run.messages().size() == messagesAtError, "a message after an error");
      check(run.decoder().actualReadableBytes() == 0, "bytes kept after an error");
    }
  };
  try {
    std::size_t from = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
      const std::size_t to = i < cuts.size() ? cuts[i] : stream.size();
      run.feed(stream.substr(from, to - from));
      from = to;
      afterStep();
    }
    run.finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception: %s\n", e.what());
    fail("an exception escaped the decoder");
  }
  check(run.decoder().actualReadableBytes() == 0, "cumulation kept after channelInactive");
  check(run.errors().size() <= 1, "more than one error");
  if (!run.errors().empty()) {
    check(run.errors()[0].messagesBefore == run.messages().size(), "a message after an error");
    try {
      std::rethrow_exception(run.errors()[0].error);
    } catch (const HttpDecoderError& e) {
      const auto s = e.status();
      check(s == 400 || s == 413 || s == 414 || s == 431 || s == 501 || s == 505,
            "an unexpected status");
      check(!e.rule().empty(), "an error without a rule");
      check(e.offset() <= stream.size(), "an error offset past the stream");
    } catch (...) {
      fail("an error that is not an HttpDecoderError");
    }
  }
  // Message order and contents.
  bool inMessage = false;
  bool rawAfter = false;  // responses: 101 or 2xx (to CONNECT) may be followed by raw bytes
  for (const HttpObject& m : run.messages()) {
    if (const auto* r = std::get_if<HttpRequest>(&m)) {
      check(!inMessage, "a head inside a message");
      check(http_util::isToken(r->method().name()), "a method that is not a token");
      check(isTargetText(r->uri()), "an invalid request target");
      checkFields(r->headers());
      inMessage = true;
      rawAfter = false;
    } else if (const auto* s = std::get_if<HttpResponse>(&m)) {
      check(!inMessage, "a head inside a message");
      check(s->status().code() >= 100 && s->status().code() <= 999, "a status out of range");
      check(http_util::isValidFieldValue(s->status().reasonPhrase()), "an invalid reason phrase");
      checkFields(s->headers());
      inMessage = true;
      rawAfter = s->status().code() == 101 || s->status().codeClass() == 2;
    } else if (const auto* c = std::get_if<HttpContent>(&m)) {
      check(inMessage || rawAfter, "content outside a message");
      check(c->content().isReadable(), "an empty HttpContent");
    } else if (const auto* l = std::get_if<LastHttpContent>(&m)) {
      check(inMessage, "a LastHttpContent outside a message");
      if (l->trailers() != nullptr) checkFields(*l->trailers());
      inMessage = false;
    } else {
      fail("a full message from a decoder");
    }
  }
  return test::httpTranscriptOf(run);
}

/// The cut points of the runs: one fuzzer-chosen split, and reads of 1 to 16 bytes from a small
/// generator seeded by the input.
inline std::vector<std::size_t> oneCut(std::string_view stream, std::uint8_t at) {
  if (stream.size() < 2) return {};
  return {1 + (static_cast<std::size_t>(at) * (stream.size() - 1)) / 256};
}
inline std::vector<std::size_t> smallReads(std::string_view stream, std::uint8_t seed) {
  std::vector<std::size_t> cuts;
  std::uint32_t x = seed * 2654435761U + 1;
  for (std::size_t at = 0;;) {
    x = x * 1103515245U + 12345U;
    at += 1 + ((x >> 16) & 15);
    if (at >= stream.size()) break;
    cuts.push_back(at);
  }
  return cuts;
}

/// Runs the decoder over stream whole, cut once, and in small reads; the transcripts must agree.
template <class Make>
void checkHttpStream(Make&& make, const HttpDecoderOptions& o, std::string_view stream,
                     std::uint8_t cut, std::uint8_t seed) {
  const test::HttpTranscript whole = runHttp(make, o, stream, {});
  const test::HttpTranscript split = runHttp(make, o, stream, oneCut(stream, cut));
  if (split != whole) {
    std::fprintf(stderr, "whole: %s\nsplit: %s\n", test::toString(whole).c_str(),
                 test::toString(split).c_str());
    fail("a split changed the transcript");
  }
  if (stream.size() <= 4096) {
    const test::HttpTranscript small = runHttp(make, o, stream, smallReads(stream, seed));
    if (small != whole) {
      std::fprintf(stderr, "whole: %s\nsmall: %s\n", test::toString(whole).c_str(),
                   test::toString(small).c_str());
      fail("small reads changed the transcript");
    }
  }
}

}  // namespace netbuf::fuzz
