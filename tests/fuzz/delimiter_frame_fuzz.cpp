// Fuzzing of the fixed-length / line / delimiter frame decoders, differential in two ways:
//  - the same reads go through the Merge and the Composite cumulator: the transcripts (frames as
//    byte strings, errors as kind + offset + value + limit) must be identical;
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

#include "fuzz_input.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

using netbuf::AnyByteBuf;
using netbuf::CodecError;
using netbuf::Cumulator;

using Input = netbuf::fuzz::FuzzInput;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "delimiter_frame_fuzz: %s\n", what);
  std::abort();
}

void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

struct Entry {
  bool error = false;
  std::string frame;  // frame bytes, or the error kind
  std::uint64_t offset = 0, value = 0, limit = 0;
  bool operator==(const Entry&) const = default;
};
using Transcript = std::vector<Entry>;

Entry errorEntry(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const netbuf::TooLongFrameError& x) {
    return {true, "TooLongFrameError", x.offset(), x.value(), x.limit()};
  } catch (const CodecError& x) {
    return {true, "CodecError", x.offset(), x.value(), x.limit()};
  } catch (...) {
    fail("a non-CodecError reached the error handler");
  }
}

struct Params {
  int kind = 0;  // 0 fixed, 1 line, 2 delimiter
  std::size_t max = 1;
  bool strip = true;
  bool failFast = false;
  std::vector<std::string> delims;
  std::size_t longestDelim = 0;
};

/// Feeds the reads to a decoder, checking the per-read invariants, and returns its transcript.
template <class Decoder>
Transcript run(Decoder decoder, const Params& prm, std::string_view stream,
               const std::vector<std::size_t>& reads) {
  Transcript t;
  std::vector<AnyByteBuf> out;
  std::size_t taken = 0;
  auto onError = [&](std::exception_ptr e) {
    for (; taken < out.size(); ++taken)
      t.push_back({false, netbuf::readableBytesToString(out[taken])});
    t.push_back(errorEntry(e));
  };
  std::size_t at = 0;
  std::size_t largestRead = 0;
  try {
    for (std::size_t len : reads) {
      netbuf::ByteBuf b = netbuf::ByteBufAllocator::defaultAllocator().buffer(len);
      b.writeBytes(stream.substr(at, len));
      at += len;
      largestRead = std::max(largestRead, len);
      decoder.channelRead(std::move(b), out, onError);
      decoder.channelReadComplete();
      check(decoder.actualReadableBytes() <= prm.max + largestRead + prm.longestDelim,
            "cumulation not bounded");
    }
    decoder.channelInactive(out, onError);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception: %s\n", e.what());
    fail("an exception escaped the decoder");
  }
  for (; taken < out.size(); ++taken)
    t.push_back({false, netbuf::readableBytesToString(out[taken])});
  check(decoder.actualReadableBytes() == 0, "cumulation kept after channelInactive");
  return t;
}

Transcript runKind(const Params& prm, Cumulator c, std::string_view stream,
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
    t.push_back({false, std::string(s.substr(i, prm.max))});
  return t;
}

Entry tooLong(std::uint64_t offset, std::uint64_t value, std::size_t max) {
  return {true, "TooLongFrameError", offset, value, max};
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
      t.push_back({false, std::string(s.substr(pos, prm.strip ? len : lf + 1 - pos))});
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
      t.push_back({false, std::string(s.substr(pos, prm.strip ? len : len + dl))});
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

/// Prints a transcript (for diagnosing a failed check; run the crashing input directly).
void dump(const char* title, const Transcript& t) {
  std::fprintf(stderr, "%s:\n", title);
  for (const Entry& e : t) {
    if (e.error) {
      std::fprintf(stderr, "  !%s@%llu=%llu/%llu\n", e.frame.c_str(),
                   static_cast<unsigned long long>(e.offset),
                   static_cast<unsigned long long>(e.value),
                   static_cast<unsigned long long>(e.limit));
    } else {
      std::fprintf(stderr, "  \"%s\"\n", printable(e.frame).c_str());
    }
  }
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

  const Transcript merge = runKind(prm, Cumulator::Merge, stream, reads);
  const Transcript composite = runKind(prm, Cumulator::Composite, stream, reads);
  check(merge == composite, "Merge and Composite cumulators disagree");

  // Per-frame limits.
  for (const Entry& e : merge) {
    if (e.error) {
      check(e.limit == prm.max && e.value > prm.max, "error fields");
      continue;
    }
    const std::string& f = e.frame;
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

  // Against the model.
  const Transcript model = prm.kind == 0   ? modelFixed(prm, stream)
                           : prm.kind == 1 ? modelLine(prm, stream)
                                           : modelDelimiter(prm, stream);
  bool same = model.size() == merge.size();
  for (std::size_t i = 0; same && i < model.size(); ++i) {
    const Entry& m = model[i];
    const Entry& d = merge[i];
    same =
        m.error == d.error && m.frame == d.frame && m.offset == d.offset && m.limit == d.limit &&
        (!m.error || (prm.failFast ? d.value > prm.max && d.value <= m.value : d.value == m.value));
  }
  if (!same) {
    std::fprintf(stderr, "kind %d max %zu strip %d failFast %d stream \"%s\"\n", prm.kind, prm.max,
                 prm.strip, prm.failFast, printable(stream).c_str());
    for (const std::string& d : prm.delims)
      std::fprintf(stderr, "delimiter \"%s\"\n", printable(d).c_str());
    for (std::size_t r : reads) std::fprintf(stderr, "read %zu\n", r);
    dump("decoder", merge);
    dump("model", model);
    fail("transcript differs from the model");
  }
  return 0;
}
