#pragma once
// doctest checks that a decoder's transcript (decoder_transcript.hpp) does not depend on how its
// input is split into reads: the same input whole, split at every byte position, one byte at a
// time, in fixed-seed and in freshly seeded random splits (the seed is CAPTUREd), with both
// cumulators, must give the same transcript every time.

#include <doctest/doctest.h>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/decoder_runner.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "support/transcript_printing.hpp"

namespace netbuf::test {

/// The transcript of make(cumulator), a fresh decoder, fed input split at `cuts` and then, when
/// finish is set, told that the stream ended.
template <class Make, class Describe = DescribeMessage>
Transcript decodeSplit(Make&& make, Cumulator cumulator, std::string_view input,
                       const std::vector<std::size_t>& cuts, bool finish = true,
                       Describe describe = {}) {
  DecoderRunner<decltype(make(cumulator))> run(make(cumulator));
  run.feedSplitAt(input, cuts);
  if (finish) run.finish();
  return transcriptOf(run, describe);
}

/// Requires view(transcript) == view(expected) for every way of splitting input, with both
/// cumulators: whole, split at every byte position, one byte at a time, 10 random splits from a
/// fixed seed and 20 from a fresh one. make(Cumulator) returns a fresh decoder; describe renders
/// its messages.
template <class Make, class View, class Describe = DescribeMessage>
void checkAllSplitsWith(Make&& make, std::string_view input, const Transcript& expected,
                        bool finish, View view, Describe describe = {}) {
  const Transcript want = view(expected);
  auto decode = [&](Cumulator c, const std::vector<std::size_t>& cuts) {
    return view(decodeSplit(make, c, input, cuts, finish, describe));
  };
  auto randomCuts = [&](std::mt19937& rng, unsigned maxStep) {
    std::vector<std::size_t> cuts;
    for (std::size_t at = 0; at < input.size();) {
      at += 1 + rng() % maxStep;
      if (at < input.size()) cuts.push_back(at);
    }
    return cuts;
  };
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    CHECK(decode(c, {}) == want);
    for (std::size_t cut = 1; cut < input.size(); ++cut) {
      CAPTURE(cut);
      CHECK(decode(c, {cut}) == want);
    }
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < input.size(); ++i) every.push_back(i);
    CHECK(decode(c, every) == want);
    std::mt19937 fixed(12345);
    for (int round = 0; round < 10; ++round) CHECK(decode(c, randomCuts(fixed, 5)) == want);
    const unsigned seed = std::random_device{}();
    CAPTURE(seed);
    std::mt19937 rng(seed);
    for (int round = 0; round < 20; ++round) CHECK(decode(c, randomCuts(rng, 7)) == want);
  }
}

/// checkAllSplitsWith, comparing transcripts exactly.
template <class Make, class Describe = DescribeMessage>
void checkAllSplits(Make&& make, std::string_view input, const Transcript& expected,
                    bool finish = true, Describe describe = {}) {
  checkAllSplitsWith(
      make, input, expected, finish, [](Transcript t) { return t; }, describe);
}

/// checkAllSplitsWith, ignoring error values (for failFast decoders).
template <class Make, class Describe = DescribeMessage>
void checkAllSplitsIgnoringErrorValues(Make&& make, std::string_view input,
                                       const Transcript& expected, bool finish = true,
                                       Describe describe = {}) {
  checkAllSplitsWith(make, input, expected, finish, maskErrorValues, describe);
}

/// Requires decode(cuts) == expected for every way of splitting an input of `size` bytes into
/// reads, for decoders that have one cumulator (Merge): whole, split at each position (every
/// 7th above 3000 bytes: the checks are quadratic), one byte at a time (up to everyByteUpTo
/// bytes), and 20 freshly seeded random splits (the seed is CAPTUREd).
template <class Decode, class T>
void checkMergeSplits(Decode&& decode, std::size_t size, const T& expected,
                      std::size_t everyByteUpTo = SIZE_MAX) {
  CHECK(decode(std::vector<std::size_t>{}) == expected);
  const std::size_t stride = size > 3000 ? 7 : 1;
  for (std::size_t cut = 1; cut < size; cut += stride) {
    CAPTURE(cut);
    CHECK(decode(std::vector<std::size_t>{cut}) == expected);
  }
  if (size <= everyByteUpTo) {
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < size; ++i) every.push_back(i);
    CHECK(decode(every) == expected);
  }
  const unsigned seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::size_t> cuts;
    for (std::size_t at = 0; at < size;) {
      at += 1 + rng() % 9;
      if (at < size) cuts.push_back(at);
    }
    CHECK(decode(cuts) == expected);
  }
}

}  // namespace netbuf::test
