#pragma once
// Shared helpers for the codec tests: a transcript of what a decoder produced (frames and errors in
// stream order), and a checker that feeds the same input whole, split at every byte position, one
// byte at a time and in seeded random splits, with both cumulators, and requires the same
// transcript every time.

#include <doctest/doctest.h>

#include <fmt/format.h>
#include <cstdint>
#include <exception>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/decoder_runner.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf::testing {

/// "TooLongFrameError@12=70000/65536": kind, offset, value, limit (kNone printed as '-').
inline std::string describeError(const std::exception_ptr& e) {
  auto num = [](std::uint64_t v) {
    return v == CodecError::kNone ? std::string("-") : std::to_string(v);
  };
  auto fields = [&](const char* kind, const CodecError& x) {
    return fmt::format("{}@{}={}/{}", kind, num(x.offset()), num(x.value()), num(x.limit()));
  };
  try {
    std::rethrow_exception(e);
  } catch (const TooLongFrameError& x) {
    return fields("TooLongFrameError", x);
  } catch (const CorruptedFrameError& x) {
    return fields("CorruptedFrameError", x);
  } catch (const DecoderError& x) {
    return fields("DecoderError", x);
  } catch (const CodecError& x) {
    return fields("CodecError", x);
  } catch (const std::exception& x) {
    return fmt::format("other:{}", x.what());
  }
}

/// What a decoder produced, in order: "abc" for a frame, "!TooLongFrameError@..." for an error.
using Transcript = std::vector<std::string>;

template <class T>
std::string describeMessage(const T& m) {
  if constexpr (std::is_same_v<T, AnyByteBuf>) {
    return readableBytesToString(m);
  } else {
    return std::string(m);
  }
}

template <class Decoder>
Transcript transcriptOf(DecoderRunner<Decoder>& run) {
  Transcript t;
  std::size_t e = 0;
  auto& msgs = run.messages();
  for (std::size_t i = 0; i <= msgs.size(); ++i) {
    while (e < run.errors().size() && run.errors()[e].messagesBefore == i)
      t.push_back(fmt::format("!{}", describeError(run.errors()[e++].error)));
    if (i < msgs.size()) t.push_back(describeMessage(msgs[i]));
  }
  return t;
}

/// Runs make(cumulator) over input split at the given cuts, then finishes the stream.
template <class Make>
Transcript decodeSplit(Make&& make, Cumulator cumulator, std::string_view input,
                       const std::vector<std::size_t>& cuts, bool finish = true) {
  DecoderRunner<decltype(make(cumulator))> run(make(cumulator));
  run.feedSplitAt(input, cuts);
  if (finish) run.finish();
  return transcriptOf(run);
}

/// Requires the same transcript for every way of splitting input, with both cumulators.
/// make(Cumulator) returns a fresh decoder.
template <class Make>
void checkAllSplits(Make&& make, std::string_view input, const Transcript& expected,
                    bool finish = true) {
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    CHECK(decodeSplit(make, c, input, {}, finish) == expected);
    for (std::size_t cut = 1; cut < input.size(); ++cut) {
      CAPTURE(cut);
      CHECK(decodeSplit(make, c, input, {cut}, finish) == expected);
    }
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < input.size(); ++i) every.push_back(i);
    CHECK(decodeSplit(make, c, input, every, finish) == expected);
    const unsigned seed = std::random_device{}();
    CAPTURE(seed);
    std::mt19937 rng(seed);
    for (int round = 0; round < 20; ++round) {
      std::vector<std::size_t> cuts;
      for (std::size_t at = 0; at < input.size();) {
        at += 1 + rng() % 7;
        if (at < input.size()) cuts.push_back(at);
      }
      CHECK(decodeSplit(make, c, input, cuts, finish) == expected);
    }
  }
}

}  // namespace netbuf::testing
