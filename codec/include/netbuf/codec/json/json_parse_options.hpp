#pragma once
// Options of the JSON readers: JsonParser (the Document parser) and JsonReader (the pull reader)
// take the same limits, so that a document one accepts the other accepts too.
#include <cstddef>

namespace netbuf {

/// Options of JsonParser / json::parse. Defaults are safe for untrusted input.
struct JsonParseOptions {
  /// Most arrays/objects open at once (the top-level container is depth 1).
  std::size_t maxDepth = 512;
  /// Most bytes of input (the whole text, whitespace included).
  std::size_t maxDocumentSize = std::size_t{64} * 1024 * 1024;
  /// Most bytes of one string or key after unescaping.
  std::size_t maxStringLength = std::size_t{16} * 1024 * 1024;
  /// Most characters of one number token (sign, digits, '.', exponent).
  std::size_t maxNumberLength = 4096;
  /// Integers outside [INT64_MIN, UINT64_MAX]: true -> nearest Float64, false -> NumberOutOfRange.
  bool bigIntegersAsDouble = true;
  /// A \u escape of an unpaired surrogate: false -> LoneSurrogate error, true -> replaced by
  /// U+FFFD (so that every Str stays valid UTF-8).
  bool allowLoneSurrogates = false;
  /// Map the tagged objects {"$bin"}, {"$ext"}, {"$timestamp"}, {"$float32"} to Bin, Ext,
  /// Timestamp and Float32.
  bool extendedTypes = false;
};

}  // namespace netbuf
