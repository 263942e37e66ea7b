#pragma once
// Options of the JSON writers: JsonWriter (Value trees) and JsonStreamWriter (a sequence of calls)
// write the same text for the same options.
#include <cstddef>

namespace netbuf {

struct JsonWriteOptions {
  /// Newlines and indentation (indent spaces per level; ": " between key and value).
  bool pretty = false;
  int indent = 2;
  /// Non-ASCII characters as \uxxxx escapes.
  bool escapeNonAscii = false;
  /// RFC 8785 output (overrides pretty and escapeNonAscii).
  bool canonical = false;
  /// Bin/Ext/Timestamp as tagged objects instead of an EncoderError; Float32 as {"$float32": x}.
  bool extendedTypes = false;
  /// Most arrays/maps open at once (the top-level one is depth 1).
  std::size_t maxDepth = 512;
};

}  // namespace netbuf
