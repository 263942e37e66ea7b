#pragma once
// The checks shared by the Redis decoder fuzz targets (redis_request_fuzz.cpp,
// redis_reply_fuzz.cpp). One input is decoded several times, whole and in reads cut at
// fuzzer-chosen points; every run must give the same transcript (support/redis_transcript.hpp:
// commands or replies, errors with kind, offset, value and limit). Checked after every read:
//  - no exception other than a RedisProtocolError is reported, none escapes;
//  - the decoder buffers no more than one request or reply may take (maxMessageBytes) plus one
//    line not yet ended (maxInlineSize and its CR), however large the reads;
//  - after an error the decoder is discarding, buffers nothing and emits nothing more.
//
// Input layout: [options] [cut] [read-size seed] [stream...]

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/redis/redis_decoder_options.hpp>
#include <netbuf/codec/redis/redis_protocol_error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "support/redis_transcript.hpp"

namespace netbuf::fuzz {

/// The options byte: inline commands in bit 0, small limits (so that the fuzzer reaches them) in
/// bit 1, their sizes in the high bits.
inline RedisDecoderOptions redisOptions(std::uint8_t b) {
  RedisDecoderOptions o;
  o.allowInline = (b & 1) == 0;
  if ((b & 2) != 0) {
    o.maxInlineSize = 4 + (b >> 5);
    o.maxBulkLength = 8 + ((b >> 4) & 3) * 8;
    o.maxMultibulkLength = 2 + ((b >> 2) & 3);
    o.maxNestingDepth = 1 + ((b >> 3) & 7);
    o.maxMessageBytes = 40 + (b >> 2) * 2;
  }
  return o;
}

/// What a decoder may buffer between reads (see the header comment).
inline std::size_t redisBufferBound(const RedisDecoderOptions& o) {
  return static_cast<std::size_t>(o.maxMessageBytes) + o.maxInlineSize + 2;
}

/// Decodes stream in reads cut at cuts with make()'s decoder, checking the per-read invariants;
/// returns the transcript. check(run) runs once at the end, for target-specific checks.
template <class Make, class Check>
test::Transcript runRedis(Make&& make, const RedisDecoderOptions& o, std::string_view stream,
                          const std::vector<std::size_t>& cuts, Check&& checkMessages) {
  DecoderRunner<decltype(make())> run(make());
  const std::size_t bound = redisBufferBound(o);
  auto afterStep = [&] {
    check(run.decoder().actualReadableBytes() <= bound, "the decoder buffered beyond its limits");
    if (run.errors().empty()) return;
    check(run.errors().size() == 1, "more than one error");
    check(run.decoder().isDiscarding(), "not discarding after an error");
    check(run.messages().size() == run.errors()[0].messagesBefore, "a message after an error");
    check(run.decoder().actualReadableBytes() == 0, "bytes kept after an error");
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
    } catch (const RedisProtocolError& e) {
      check(e.offset() <= stream.size(), "an error offset past the stream");
      check(std::string_view(e.what()).substr(0, 16) == "Protocol error: ",
            "an error text not in Redis's form");
    } catch (...) {
      fail("an error that is not a RedisProtocolError");
    }
  }
  checkMessages(run);
  return test::redisTranscriptOf(run);
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

/// Runs the decoder over stream whole, cut once, and in small reads (and byte by byte when
/// short); the transcripts must agree.
template <class Make, class Check>
void checkRedisStream(Make&& make, const RedisDecoderOptions& o, std::string_view stream,
                      std::uint8_t cut, std::uint8_t seed, Check&& checkMessages) {
  const test::Transcript whole = runRedis(make, o, stream, {}, checkMessages);
  auto same = [&](const std::vector<std::size_t>& cuts, const char* what) {
    const test::Transcript other = runRedis(make, o, stream, cuts, checkMessages);
    if (other != whole) {
      std::fprintf(stderr, "whole: %s\n%s: %s\n", test::toString(whole).c_str(), what,
                   test::toString(other).c_str());
      fail("a split changed the transcript");
    }
  };
  same(oneCut(stream, cut), "split");
  if (stream.size() <= 4096) same(smallReads(stream, seed), "small reads");
  if (stream.size() <= 256) {
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < stream.size(); ++i) every.push_back(i);
    same(every, "byte by byte");
  }
}

}  // namespace netbuf::fuzz
