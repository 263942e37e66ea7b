#pragma once
// doctest checks that an HTTP decoder's transcript (http_transcript.hpp) does not depend on how
// its input is split into reads: the input whole, split in two at every byte position, one byte at
// a time, and in random splits (the seed is CAPTUREd, so a failure prints it) must all give the
// expected transcript. The HTTP decoders always use the Merge cumulator, so there is one
// cumulator to try, not two as in split_checks.hpp.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <string_view>
#include <vector>

#include "support/http_transcript.hpp"
#include "support/split_checks.hpp"
#include "support/transcript_printing.hpp"  // doctest prints std::vector<std::string> in full

namespace netbuf::test {

/// The transcript of make() (a fresh decoder) fed input split at cuts, then (finish) told that the
/// stream ended. maxBuffered, when given, receives the decoder's largest cumulation after a read.
template <class Make>
HttpTranscript decodeHttpSplit(Make&& make, std::string_view input,
                               const std::vector<std::size_t>& cuts, bool finish = true,
                               std::size_t* maxBuffered = nullptr) {
  DecoderRunner<decltype(make())> run(make());
  run.feedSplitAt(input, cuts);
  if (finish) run.finish();
  if (maxBuffered != nullptr) *maxBuffered = run.maxBuffered();
  return httpTranscriptOf(run);
}

/// The transcript of the input in one read.
template <class Make>
HttpTranscript decodeHttp(Make&& make, std::string_view input, bool finish = true) {
  return decodeHttpSplit(make, input, {}, finish);
}

/// Requires the expected transcript for every way of splitting input (checkMergeSplits).
template <class Make>
void checkHttpSplits(Make&& make, std::string_view input, const HttpTranscript& expected,
                     bool finish = true) {
  checkMergeSplits(
      [&](const std::vector<std::size_t>& cuts) {
        return decodeHttpSplit(make, input, cuts, finish);
      },
      input.size(), expected);
}

}  // namespace netbuf::test
