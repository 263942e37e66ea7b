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

// Failed CHECKs print transcripts in full instead of "{?}".
template <>
struct doctest::StringMaker<std::vector<std::string>> {
  static doctest::String convert(const std::vector<std::string>& v) {
    std::string s = "{";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i != 0) s += ", ";
      s += fmt::format("{:?}", v[i]);
    }
    s += "}";
    return doctest::String(s.c_str());
  }
};

namespace netbuf::testing {

/// Bytes from a list of values (for binary test input).
inline std::string bin(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

/// text in a new buffer from the default allocator, as a message for an encoder.
inline AnyByteBuf payload(std::string_view text) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(text.size());
  b.writeBytes(text);
  return AnyByteBuf(std::in_place_type<ByteBuf>, std::move(b));
}

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

/// A failFast error's value is the part of the frame seen when the error fired, which depends on
/// how the input was split: masks it ("!TooLongFrameError@0=*/16") so the rest can be compared.
inline Transcript maskErrorValues(Transcript t) {
  for (std::string& s : t) {
    if (s.empty() || s[0] != '!') continue;
    const auto eq = s.find('=');
    const auto slash = s.find('/', eq);
    if (eq != std::string::npos && slash != std::string::npos)
      s = s.substr(0, eq + 1) + "*" + s.substr(slash);  // (not replace(): g++ 12 -Wrestrict)
  }
  return t;
}

/// Requires the same transcript (after `view`) for every way of splitting input, with both
/// cumulators: whole, split at every byte position, one byte at a time, and 20 seeded random
/// splits. make(Cumulator) returns a fresh decoder.
template <class Make, class View>
void checkAllSplitsWith(Make&& make, std::string_view input, const Transcript& expected,
                        bool finish, View view) {
  const Transcript want = view(expected);
  for (Cumulator c : {Cumulator::Merge, Cumulator::Composite}) {
    CAPTURE(static_cast<int>(c));
    CHECK(view(decodeSplit(make, c, input, {}, finish)) == want);
    for (std::size_t cut = 1; cut < input.size(); ++cut) {
      CAPTURE(cut);
      CHECK(view(decodeSplit(make, c, input, {cut}, finish)) == want);
    }
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < input.size(); ++i) every.push_back(i);
    CHECK(view(decodeSplit(make, c, input, every, finish)) == want);
    const unsigned seed = std::random_device{}();
    CAPTURE(seed);
    std::mt19937 rng(seed);
    for (int round = 0; round < 20; ++round) {
      std::vector<std::size_t> cuts;
      for (std::size_t at = 0; at < input.size();) {
        at += 1 + rng() % 7;
        if (at < input.size()) cuts.push_back(at);
      }
      CHECK(view(decodeSplit(make, c, input, cuts, finish)) == want);
    }
  }
}

/// checkAllSplitsWith, comparing transcripts exactly.
template <class Make>
void checkAllSplits(Make&& make, std::string_view input, const Transcript& expected,
                    bool finish = true) {
  checkAllSplitsWith(make, input, expected, finish, [](Transcript t) { return t; });
}

/// checkAllSplitsWith, ignoring error values (for failFast decoders).
template <class Make>
void checkAllSplitsIgnoringErrorValues(Make&& make, std::string_view input,
                                       const Transcript& expected, bool finish = true) {
  checkAllSplitsWith(make, input, expected, finish, maskErrorValues);
}

}  // namespace netbuf::testing
