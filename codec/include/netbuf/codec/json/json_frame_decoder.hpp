#pragma once
// JsonFrameDecoder: one JSON text per frame. A MessageToMessageDecoder<..., AnyByteBuf, Document>
// for protocols that frame their messages themselves (a length prefix, a delimiter such as '\n' in
// JSON Lines, a varint), the way Netty's ProtobufDecoder runs after its varint frame decoder:
//
//   LineBasedFrameDecoder(1 << 20)  ->  JsonFrameDecoder
//
// Use it instead of JsonDecoder (json_codec.hpp) whenever a frame decoder runs before it.
// JsonDecoder is a byte-stream decoder: it cumulates whatever it receives and finds values by
// bracket counting, so after a frame decoder it would treat the frames as one stream (frames `[1,`
// and `2]` would decode as ONE value, [1,2]). This decoder keeps nothing between frames: each frame
// must hold exactly one JSON text (RFC 8259: one value, optionally surrounded by whitespace). Any
// value is accepted at the top level, scalars included ("42", "\"ok\""), unlike JsonDecoder, whose
// framer only starts values at '{' or '['.
//
// Decoding: JsonParser::parse over the frame's readable bytes into a new Document, with the
// decoder's JsonParseOptions (the same defaults as JsonDecoder's parser); the parser's scratch is
// reused from frame to frame. Zero copy: a ByteBuf frame is handed to the Document
// (Document::keepAlive), so strings without escapes view the frame's memory and keep it alive; a
// CompositeByteBuf frame (a frame that straddled reads of a Composite cumulation) is first made
// contiguous with toContiguous, its one copy. A frame longer than maxDocumentSize is rejected by
// that limit (JsonError DocumentSizeLimit).
//
// Errors. Every one is a CodecError, so a pipeline routes it to the error handler
// (MessageToMessageDecoder), the frame is dropped (its buffer released) and decoding continues with
// the next frame:
//  - CorruptedFrameError when a frame is not exactly one JSON text; what() names the problem (and
//    the line and column inside the frame):
//     - empty frame (no readable bytes, or whitespace only): offset() = the stream offset the
//       frame starts at;
//     - truncated value (the frame ends inside the value; the parser's UnexpectedEnd): offset() =
//       the stream offset just past the frame's last byte, where the value would go on;
//     - trailing content after the value (the parser's TrailingContent): offset() = the stream
//       offset of the first byte after the value that is not whitespace.
//    value() is the frame's length in bytes, limit() is kNone.
//  - JsonError for everything else (Syntax, InvalidUtf8, InvalidEscape, LoneSurrogate, the limits,
//    NumberOutOfRange, ExtendedType), rebased onto the stream (JsonError::rebased): offset() is the
//    stream offset, line() and column() count within the frame.
//
// Offsets: the decoder counts the readable bytes of every frame it receives (bytesReceived()),
// failed ones included, and reports offset = (bytes of the frames before this one) + (offset inside
// this frame). These are offsets in the concatenation of the frames this decoder received, not in
// the socket's byte stream: bytes the frame decoder stripped (length prefixes, delimiters) are not
// counted.
//
// Ownership and threading: the decoder holds its parser (options and scratch) and the byte count;
// each Document owns (keeps alive) its frame. One channel, one thread, as every decoder.
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/message_to_message_decoder.hpp>
#include <vector>

namespace netbuf {

class JsonFrameDecoder : public MessageToMessageDecoder<JsonFrameDecoder, AnyByteBuf, Document> {
 public:
  explicit JsonFrameDecoder(const JsonParseOptions& options = {}) : parser_(options) {}

  const JsonParseOptions& options() const noexcept { return parser_.options(); }
  /// Readable bytes of all frames received so far: the stream offset of the next frame.
  std::uint64_t bytesReceived() const noexcept { return received_; }

  /// The framework hook: parses frame (exactly one JSON text) and appends its Document to out.
  /// Throws CorruptedFrameError or JsonError (see the header comment); out is then unchanged.
  void decode(AnyByteBuf frame, std::vector<Document>& out);

 private:
  JsonParser parser_;
  std::uint64_t received_ = 0;
};

}  // namespace netbuf
