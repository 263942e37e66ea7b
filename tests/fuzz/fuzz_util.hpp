#pragma once
// Helpers shared by the frame-decoder fuzz targets: failing loudly (abort, so libFuzzer keeps the
// input), and describing codec errors as comparable transcript lines.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <netbuf/codec/codec_errors.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf::fuzz {

constexpr std::uint64_t kNone = CodecError::kNone;

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}

inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

inline std::string num(std::uint64_t v) {
  return v == kNone ? std::string("-") : std::to_string(v);
}

/// "!TooLong@12=70000/65536": an error as a transcript line.
inline std::string errorLine(const char* kind, std::uint64_t offset, std::uint64_t value,
                             std::uint64_t limit) {
  return std::string("!") + kind + "@" + num(offset) + "=" + num(value) + "/" + num(limit);
}

/// The transcript line of a TooLongFrameError or CorruptedFrameError; any other kind fails.
inline std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const TooLongFrameError& x) {
    return errorLine("TooLong", x.offset(), x.value(), x.limit());
  } catch (const CorruptedFrameError& x) {
    return errorLine("Corrupted", x.offset(), x.value(), x.limit());
  } catch (const CodecError&) {
    fail("unexpected CodecError kind");
  }
}

/// The stream part of a fuzz input and where to cut it into reads: cutCount read lengths (1..256)
/// are taken from data[at...], the rest of the input is the stream.
struct FuzzReads {
  std::string_view stream;
  std::vector<std::size_t> cuts;
};
inline FuzzReads splitReads(const std::uint8_t* data, std::size_t size, std::size_t at,
                            std::size_t cutCount) {
  std::vector<std::size_t> steps;
  for (; cutCount > 0 && at < size; --cutCount) steps.push_back(data[at++] + 1U);
  FuzzReads r{std::string_view(reinterpret_cast<const char*>(data) + at, size - at), {}};
  std::size_t pos = 0;
  for (std::size_t step : steps) {
    pos += step;
    if (pos >= r.stream.size()) break;
    r.cuts.push_back(pos);
  }
  return r;
}

}  // namespace netbuf::fuzz
