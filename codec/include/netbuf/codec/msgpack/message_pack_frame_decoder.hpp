#pragma once
// MessagePackFrameDecoder: one MessagePack value per frame. A MessageToMessageDecoder<...,
// AnyByteBuf, Document> for protocols that frame their messages themselves (a length prefix, a
// varint, a delimiter), the way Netty's ProtobufDecoder runs after ProtobufVarint32FrameDecoder:
//
//   LengthFieldBasedFrameDecoder(ByteOrder::big, 1 << 20, 0, 4, 0, 4)  ->  MessagePackFrameDecoder
//
// Use it instead of MessagePackDecoder (message_pack_codec.hpp) whenever a frame decoder runs
// before it. MessagePackDecoder is a byte-stream decoder: it cumulates whatever it receives, so
// after a frame decoder it would treat the frames as one stream (frames `92 01` and `03` would
// decode as ONE value, [1, 3]) and never notice a frame that holds a partial value or two values.
// This decoder keeps nothing between frames: each frame must hold exactly one complete value.
//
// Decoding: msgpack::decode over the frame's readable bytes into a new Document. Zero copy: a
// ByteBuf frame is handed to the Document (Document::keepAlive), so Str, Bin and Ext values view
// the frame's memory and keep it alive; a CompositeByteBuf frame (a frame that straddled reads of a
// Composite cumulation) is first made contiguous with toContiguous, its one copy. All the checks of
// msgpack::decode apply, with MessagePackReadOptions (the same defaults as MessagePackDecoder), so
// a frame longer than maxMessageSize fails by those limits: MessageSizeLimit when its value is that
// long, else the trailing-bytes error below.
//
// Errors. Every one is a CodecError, so a pipeline routes it to the error handler
// (MessageToMessageDecoder), the frame is dropped (its buffer released) and decoding continues with
// the next frame:
//  - CorruptedFrameError when a frame is not exactly one value; what() names the problem:
//     - empty frame (no readable bytes): offset() = the stream offset the frame starts at;
//     - truncated value (the frame ends inside the value; msgpack's Truncated): offset() = the
//       stream offset of the item that does not fit (or of the frame's end when an element is
//       missing altogether), as msgpack::decode reports it;
//     - trailing bytes after the value (msgpack's TrailingBytes): offset() = the stream offset of
//       the first trailing byte.
//    value() is the frame's length in bytes, limit() is kNone.
//  - MessagePackError for everything else (ReservedByte, InvalidUtf8, InvalidTimestamp,
//    DuplicateKey, DepthLimit and the length/size limits), with its code, value() and limit(), and
//    its offset rebased onto the stream. Unlike in MessagePackDecoder, ReservedByte and DepthLimit
//    leave nothing corrupted: the frames delimit the values, so only that frame is lost.
//
// Offsets: the decoder counts the readable bytes of every frame it receives (bytesReceived()),
// failed ones included, and reports offset = (bytes of the frames before this one) + (offset inside
// this frame). These are offsets in the concatenation of the frames this decoder received, not in
// the socket's byte stream: bytes the frame decoder stripped (length prefixes) are not counted.
//
// Ownership and threading: the decoder holds only its options and the byte count; each Document
// owns (keeps alive) its frame. One channel, one thread, as every decoder.
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/message_to_message_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_error.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <vector>

namespace netbuf {

class MessagePackFrameDecoder
    : public MessageToMessageDecoder<MessagePackFrameDecoder, AnyByteBuf, Document> {
 public:
  explicit MessagePackFrameDecoder(const MessagePackReadOptions& options = {}) noexcept
      : options_(options) {}

  const MessagePackReadOptions& options() const noexcept { return options_; }
  /// Readable bytes of all frames received so far: the stream offset of the next frame.
  std::uint64_t bytesReceived() const noexcept { return received_; }

  /// The framework hook: decodes frame (exactly one value) and appends its Document to out.
  /// Throws CorruptedFrameError or MessagePackError (see the header comment); out is then
  /// unchanged.
  void decode(AnyByteBuf frame, std::vector<Document>& out);

 private:
  MessagePackReadOptions options_;
  std::uint64_t received_ = 0;
};

}  // namespace netbuf
