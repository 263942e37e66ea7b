#pragma once
// Helpers shared by the frame-decoder fuzz targets: failing loudly (abort, so libFuzzer keeps the
// input), and describing codec errors as comparable transcript lines.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <netbuf/codec/codec_errors.hpp>
#include <string>

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

}  // namespace netbuf::fuzz
