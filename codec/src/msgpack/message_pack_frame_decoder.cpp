#include <netbuf/codec/msgpack/message_pack_frame_decoder.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace netbuf {

namespace {

[[noreturn]] void throwNotOneValue(const MessagePackError& e, std::uint64_t frameStart,
                                   std::size_t frameLength) {
  if (e.code() == MessagePackErrc::Truncated) {
    // msgpack's Truncated carries what the item needs (value) and what the input had left (limit).
    throw CorruptedFrameError(
        fmt::format("CorruptedFrameError: truncated MessagePack value: the {}-byte frame at stream "
                    "offset {} ends inside it (the item at stream offset {} needs {} bytes, {} "
                    "left)",
                    frameLength, frameStart, e.offset(), e.value(), e.limit()),
        e.offset(), frameLength);
  }
  throw CorruptedFrameError(
      fmt::format("CorruptedFrameError: {} trailing bytes after the MessagePack value at stream "
                  "offset {} (the {}-byte frame at stream offset {} must hold exactly one value)",
                  frameStart + frameLength - e.offset(), e.offset(), frameLength, frameStart),
      e.offset(), frameLength);
}

}  // namespace

void MessagePackFrameDecoder::decode(AnyByteBuf frame, std::vector<Document>& out) {
  const std::uint64_t start = received_;
  const std::size_t length = readableBytes(frame);
  received_ += length;  // counted first: a failed frame still moves the stream on
  if (length == 0) {
    throw CorruptedFrameError(
        fmt::format("CorruptedFrameError: empty frame at stream offset {} (a MessagePack frame "
                    "must hold exactly one value)",
                    start),
        start, 0);
  }
  // As MessagePackDecoder: the tree needs at most 16 arena bytes per input byte, so small messages
  // get a small first block.
  Document doc(std::min(Document::kDefaultFirstBlock, length * 16 + 64));
  try {
    msgpack::decode(toContiguous(std::move(frame)), doc, options_, start);
  } catch (const MessagePackError& e) {
    if (e.code() == MessagePackErrc::Truncated || e.code() == MessagePackErrc::TrailingBytes)
      throwNotOneValue(e, start, length);
    throw;
  }
  out.push_back(std::move(doc));
}

}  // namespace netbuf
