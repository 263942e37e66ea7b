// Fuzzing of the fixed-length / line / delimiter frame decoders, differential in two ways:
//  - the same reads go through the Merge and the Composite cumulator: the transcripts
//    (test::Transcript: frames as byte strings, errors with kind, offset, value and limit) must be
//    identical;
//  - a trivially correct model computes the transcript from the whole stream at once (split at
//    the earliest delimiter, too-long frames replaced by their error); the decoders must agree
//    with it however the stream was split into reads (with failFast the error's value depends on
//    the split and is only checked to lie in its range).
// Also checked after every read: frames respect their limits, stripped frames hold no delimiter,
// the cumulation stays bounded (maxLength + largest read + longest delimiter), and no exception
// other than a CodecError escapes.
//
// Input layout: [kind] [maxLength] [flags] [read-size limit] [rng seed]
//               (delimiter decoder only: [count] then per delimiter [length] [bytes...])
//               [stream...]
#include <netbuf/codec/delimiter_based_frame_decoder.hpp>
#include <netbuf/codec/fixed_length_frame_decoder.hpp>
#include <netbuf/codec/line_based_frame_decoder.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <netbuf/codec/decoder_runner.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_input.hpp"
#include "support/decoder_transcript.hpp"

namespace {

using netbuf::CodecError;
using netbuf::Cumulator;
using netbuf::DecoderRunner;
using netbuf::fuzz::check;
using netbuf::fuzz::fail;
using netbuf::test::Transcript;

using Input = netbuf::fuzz::FuzzInput;

struct Params {
  int kind = 0;  // 0 fixed, 1 line, 2 delimiter
  std::size_t max = 1;
  bool strip = true;
  bool failFast = false;
  std::vector<std::string> delims;
  std::size_t longestDelim = 0;
};

/// What a decoder gave: its transcript, and where in it the errors are.
struct Decoded {
  Transcript transcript;
  std::vector<std::size_t> errorAt;  ///< the transcript index of each error, ascending
};

/// Feeds the reads to a decoder, checking the per-read invariants, and returns what it gave.
template <class Decoder>
Decoded run(Decoder decoder, const Params& prm, std::string_view stream,
            const std::vector<std::size_t>& reads) {
  DecoderRunner<Decoder> r(std::move(decoder));
  std::size_t at = 0;
  std::size_t largestRead = 0;
  try {
    for (std::size_t len : reads) {
      r.feed(stream.substr(at, len));
      at += len;
      largestRead = std::max(largestRead, len);
      check(r.decoder().actualReadableBytes() <= prm.max + largestRead + prm.longestDelim,
            "cumulation not bounded");
    }
    r.finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception: %s\n", e.what());
    fail("an exception escaped the decoder");
  }
  check(r.decoder().actualReadableBytes() == 0, "cumulation kept after channelInactive");
  Decoded d{netbuf::test::transcriptOf(r), {}};
  for (std::size_t k = 0; k < r.errors().size(); ++k) {
    d.errorAt.push_back(r.errors()[k].messagesBefore + k);
    try {
      r.rethrowError(k);
    } catch (const netbuf::TooLongFrameError& x) {
      check(x.limit() == prm.max && x.value() > prm.max, "error fields");
    } catch (...) {
      fail("an error other than TooLongFrameError reached the error handler");
    }
  }
  return d;
}

Decoded runKind(const Params& prm, Cumulator c, std::string_view stream,
                const std::vector<std::size_t>& reads) {
  switch (prm.kind) {
    case 0:
      return run(netbuf::FixedLengthFrameDecoder(prm.max, c), prm, stream, reads);
    case 1:
      return run(netbuf::LineBasedFrameDecoder(prm.max, prm.strip, prm.failFast, c), prm, stream,
                 reads);
    default:
      return run(
          netbuf::DelimiterBasedFrameDecoder(prm.max, prm.strip, prm.failFast, prm.delims, c), prm,
          stream, reads);
  }
}

// ------------------------------------------------------------------ the models (whole stream)
Transcript modelFixed(const Params& prm, std::string_view s) {
  Transcript t;
  for (std::size_t i = 0; i + prm.max <= s.size(); i += prm.max)
    t.emplace_back(s.substr(i, prm.max));
  return t;
}

std::string tooLong(std::uint64_t offset, std::uint64_t value, std::size_t max) {
  return netbuf::test::errorLine("TooLong", offset, value, max);
}

Transcript modelLine(const Params& prm, std::string_view s) {
  Transcript t;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t lf = s.find('\n', pos);
    if (lf == std::string_view::npos) break;
    const bool crlf = lf > pos && s[lf - 1] == '\r';
    const std::size_t len = lf - pos - (crlf ? 1 : 0);
    if (len > prm.max) {
      t.push_back(tooLong(pos, len, prm.max));
    } else {
      t.emplace_back(s.substr(pos, prm.strip ? len : lf + 1 - pos));
    }
    pos = lf + 1;
  }
  // An unterminated tail: reported only by failFast, once more than max bytes (a trailing CR
  // aside) are known.
  std::size_t tail = s.size() - pos;
  if (tail > 0 && s.back() == '\r') --tail;
  if (prm.failFast && tail > prm.max) t.push_back(tooLong(pos, tail, prm.max));
  return t;
}

/// True when s[p, end) is a proper prefix of d.
bool partialAt(std::string_view s, std::size_t p, const std::string& d) {
  return s.size() - p < d.size() && d.compare(0, s.size() - p, s.substr(p)) == 0;
}

Transcript modelDelimiter(const Params& prm, std::string_view s) {
  Transcript t;
  std::size_t pos = 0;
  bool atEnd = false;  // decodeLast's phase: the first error ends the stream
  for (;;) {
    std::size_t best = std::string_view::npos, bi = 0;
    for (std::size_t i = 0; i < prm.delims.size(); ++i) {
      const std::size_t q = s.find(prm.delims[i], pos);
      if (q != std::string_view::npos && q < best) {
        best = q;
        bi = i;
      }
    }
    // Earliest position from which a delimiter could still be completed by more bytes.
    // (Only the last longestDelim - 1 positions can hold a proper prefix.)
    const std::size_t tailStart =
        std::max(pos, s.size() + 1 - std::min(s.size() + 1, prm.longestDelim));
    std::size_t partial = s.size();
    for (std::size_t p = tailStart; p < s.size() && partial == s.size(); ++p)
      for (const std::string& d : prm.delims)
        if (partialAt(s, p, d)) {
          partial = p;
          break;
        }
    if (best == std::string_view::npos) {
      if (prm.failFast && partial - pos > prm.max)
        t.push_back(tooLong(pos, partial - pos, prm.max));
      break;
    }
    // A match that a delimiter still incomplete at the end of the stream would beat waits for
    // decodeLast, which takes it and everything after it (its first error ends the stream). While
    // waiting, the frame is known to reach at least the earliest such delimiter's start: if that
    // already makes it too long, it is being discarded (and failFast reported it then).
    bool discardedWhileWaiting = false;
    if (!atEnd) {
      std::size_t waitFrom = s.size();
      for (std::size_t p = tailStart; p <= best && waitFrom == s.size(); ++p)
        for (std::size_t i = 0; i < prm.delims.size(); ++i)
          if ((p < best || i < bi) && partialAt(s, p, prm.delims[i])) {
            waitFrom = p;
            break;
          }
      if (waitFrom != s.size()) {
        atEnd = true;
        discardedWhileWaiting = waitFrom - pos > prm.max;
      }
    }
    const std::size_t len = best - pos;
    const std::size_t dl = prm.delims[bi].size();
    if (len > prm.max) {
      t.push_back(tooLong(pos, len, prm.max));
      if (atEnd && !(prm.failFast && discardedWhileWaiting)) break;
    } else {
      t.emplace_back(s.substr(pos, prm.strip ? len : len + dl));
    }
    pos = best + dl;
  }
  return t;
}

std::string printable(std::string_view s) {
  std::string o;
  for (unsigned char ch : s) {
    if (ch >= 32 && ch < 127 && ch != '\\') {
      o += static_cast<char>(ch);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      o += buf;
    }
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in{data, size};
  Params prm;
  prm.kind = in.byte() % 3;
  prm.max = 1 + in.byte() % 64;
  const std::uint8_t flags = in.byte();
  prm.strip = (flags & 1) != 0;
  prm.failFast = (flags & 2) != 0;
  const std::size_t readLimit = 1 + in.byte() % 32;
  std::uint32_t rng = 0x9e3779b9u ^ in.byte();
  if (prm.kind == 2) {
    const std::size_t count = 1 + in.byte() % 3;
    for (std::size_t i = 0; i < count; ++i) {
      std::string d(1 + in.byte() % 3, '\0');
      for (char& ch : d) ch = static_cast<char>(in.byte());
      prm.delims.push_back(d);
      prm.longestDelim = std::max(prm.longestDelim, d.size());
    }
  } else if (prm.kind == 1) {
    prm.longestDelim = 2;
  }
  const std::string_view stream(reinterpret_cast<const char*>(in.p), in.n);
  if (stream.size() > 4096) return 0;

  std::vector<std::size_t> reads;
  for (std::size_t at = 0; at < stream.size();) {
    rng = rng * 1664525u + 1013904223u;
    const std::size_t len = std::min<std::size_t>(1 + (rng >> 16) % readLimit, stream.size() - at);
    reads.push_back(len);
    at += len;
  }

  const Decoded merge = runKind(prm, Cumulator::Merge, stream, reads);
  const Decoded composite = runKind(prm, Cumulator::Composite, stream, reads);
  check(merge.transcript == composite.transcript, "Merge and Composite cumulators disagree");

  // Per-frame limits (the errors' fields were checked by run()).
  std::size_t nextError = 0;
  for (std::size_t i = 0; i < merge.transcript.size(); ++i) {
    if (nextError < merge.errorAt.size() && merge.errorAt[nextError] == i) {
      ++nextError;
      continue;
    }
    const std::string& f = merge.transcript[i];
    if (prm.kind == 0) {
      check(f.size() == prm.max, "fixed frame length");
    } else if (prm.kind == 1) {
      const std::size_t body =
          prm.strip ? f.size() : f.size() - (f.size() >= 2 && f[f.size() - 2] == '\r' ? 2 : 1);
      check(body <= prm.max, "line too long");
      check(f.find('\n') == (prm.strip ? std::string::npos : f.size() - 1), "line delimiters");
    } else {
      check(f.size() <= prm.max + (prm.strip ? 0 : prm.longestDelim), "frame too long");
      if (prm.strip) {
        for (const std::string& d : prm.delims)
          check(f.find(d) == std::string::npos, "stripped frame holds a delimiter");
      }
    }
  }

  // Against the model. With failFast an error's value is the part of the frame seen when it fired:
  // it must lie in (max, the model's value], and the rest of the line must match.
  const Transcript expected = prm.kind == 0   ? modelFixed(prm, stream)
                              : prm.kind == 1 ? modelLine(prm, stream)
                                              : modelDelimiter(prm, stream);
  Transcript model = expected;
  Transcript got = merge.transcript;
  bool same = model.size() == got.size();
  if (same && prm.failFast) {
    for (std::size_t i : merge.errorAt) {
      const auto want = netbuf::test::errorValue(model[i]);
      const auto value = netbuf::test::errorValue(got[i]);
      same = same && want && value && *value > prm.max && *value <= *want;
      model[i] = netbuf::test::maskErrorValues({model[i]})[0];
      got[i] = netbuf::test::maskErrorValues({got[i]})[0];
    }
  }
  if (!same || model != got) {
    std::fprintf(stderr, "kind %d max %zu strip %d failFast %d stream \"%s\"\n", prm.kind, prm.max,
                 prm.strip, prm.failFast, printable(stream).c_str());
    for (const std::string& d : prm.delims)
      std::fprintf(stderr, "delimiter \"%s\"\n", printable(d).c_str());
    for (std::size_t r : reads) std::fprintf(stderr, "read %zu\n", r);
    std::fprintf(stderr, "decoder: %s\nmodel:   %s\n",
                 netbuf::test::toString(merge.transcript).c_str(),
                 netbuf::test::toString(expected).c_str());
    fail("transcript differs from the model");
  }
  return 0;
}
