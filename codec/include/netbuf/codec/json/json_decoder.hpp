#pragma once
// JsonDecoder: a pipeline decoder from bytes to one Document per top-level JSON value.
//
//   DecoderRunner<JsonDecoder> run;                      // or in a pipeline via DecoderHandler
//   run.feed(R"({"a":1} [2,3])").finish();
//   run.messages()[1].root()[0].asUInt64();              // 2
//
// JsonDecoder frames the stream with a JsonObjectDecoder (same parameters and behaviour: top-level
// objects and arrays, or with streamArrayElements the elements of a top-level array; junk between
// values is a CorruptedFrameError and is skipped; limits maxObjectLength/maxDepth; an incomplete
// value at end of stream is dropped silently), then parses each frame with a JsonParser into a
// Document. Zero copy: the frame is a retained slice of the cumulation and the Document keeps it
// alive (Document::keepAlive), its unescaped strings viewing it; a frame that straddles the
// components of a Composite cumulation is first copied into one buffer (toContiguous). Because
// Documents hold slices, the Merge cumulator cannot compact memory a live Document still uses: it
// moves on to a fresh buffer instead (see byte_to_message_decoder.hpp).
//
// Errors, all reported through the ByteToMessageDecoder error path after the offending value was
// consumed, so decoding continues with the next value:
//  - framing errors: JsonObjectDecoder's TooLongFrameError / CorruptedFrameError, offsets in the
//    stream;
//  - parse errors: the JsonError of JsonParser (json_parser.hpp, json_error.hpp) rebased onto the
//  stream: offset()
//    = the value's first byte's stream offset + the offset inside the value; line()/column() are
//    counted within the value.
// Note: JsonObjectDecoder only starts values at '{' or '['; a top-level scalar ("42") is junk.
//
// Threads: as every decoder, one channel, one thread.

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_error.hpp>
#include <netbuf/codec/json/json_parse_options.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/json_object_decoder.hpp>
#include <vector>

namespace netbuf {

struct JsonDecoderOptions {
  /// JsonObjectDecoder's parameters (framing).
  std::size_t maxObjectLength = JsonObjectDecoder::kDefaultMaxObjectLength;
  bool streamArrayElements = false;
  std::size_t maxDepth = JsonObjectDecoder::kDefaultMaxDepth;
  /// The parser's options (its maxDepth counts from the frame's own top level).
  JsonParseOptions parse;
};

class JsonDecoder : public ByteToMessageDecoder<JsonDecoder, Document> {
 public:
  /// Throws IllegalArgumentError when maxObjectLength or maxDepth is 0.
  explicit JsonDecoder(const JsonDecoderOptions& options = {},
                       Cumulator cumulator = Cumulator::Merge,
                       ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  const JsonParseOptions& parseOptions() const noexcept { return parser_.options(); }
  const JsonObjectDecoder& framer() const noexcept { return framer_; }

  template <class Buf>
  void decode(Buf& in, std::vector<Document>& out) {
    // The framer runs directly on this decoder's cumulation (its own cumulation stays unused): it
    // consumes at most one value per call and throws after consuming what it reports. Its error
    // offsets are then indices into `in` (its own stream counters never move), rebased here.
    try {
      framer_.decode(in, frames_);
    } catch (const CodecError& e) {
      rethrowFramingError(e, streamOffset(static_cast<std::size_t>(e.offset())));
    }
    if (frames_.empty()) return;
    AnyByteBuf frame = std::move(frames_.front());
    frames_.clear();
    const std::size_t start = frameStart(in, frame);
    parseFrame(std::move(frame), streamOffset(start), out);
  }

  /// End of stream (the decode loop has already emitted every complete value): an incomplete
  /// value is dropped, as JsonObjectDecoder does.
  template <class Buf>
  void decodeLast(Buf& in, std::vector<Document>&) {
    framer_.decodeLast(in, frames_);
    frames_.clear();
  }

 private:
  /// Index in `in` of the first byte of `frame`, which the framer just consumed. The frame ends at
  /// readerIndex, unless it was an array element: then a separator (',' or the closing bracket)
  /// and the whitespace before it follow it.
  template <class Buf>
  std::size_t frameStart(const Buf& in, const AnyByteBuf& frame) const {
    const std::size_t end = in.readerIndex();
    const std::size_t len = readableBytes(frame);
    if (!framer_.isStreamArrayElements()) return end - len;
    // Stream mode: a top-level object is emitted whole (ends at readerIndex); an element is not.
    const std::uint8_t firstByte = getUnsignedByte(frame, readerIndex(frame));
    if (firstByte == '{' && end >= len && sameBytes(in, end - len, frame)) return end - len;
    std::size_t e = end - 1;  // the separator
    while (e > 0 && isWs(in.getUnsignedByte(e - 1))) --e;
    return e - len;
  }
  template <class Buf>
  static bool sameBytes(const Buf& in, std::size_t at, const AnyByteBuf& frame) {
    return visitBuf(frame, [&](const auto& b) {
      const std::size_t n = b.readableBytes();
      for (std::size_t i = 0; i < n; ++i) {
        if (in.getUnsignedByte(at + i) != b.getUnsignedByte(b.readerIndex() + i)) return false;
      }
      return true;
    });
  }
  static constexpr bool isWs(std::uint8_t c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
  }

  [[noreturn]] static void rethrowFramingError(const CodecError& e, std::uint64_t offset);
  void parseFrame(AnyByteBuf frame, std::uint64_t offset, std::vector<Document>& out);

  JsonObjectDecoder framer_;
  JsonParser parser_;
  std::vector<AnyByteBuf> frames_;  // the framer's output (0 or 1 frame per call)
};

}  // namespace netbuf
