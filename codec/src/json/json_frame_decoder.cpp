#include <netbuf/codec/json/json_frame_decoder.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

namespace netbuf {

namespace {

bool onlyWhitespace(std::string_view text) noexcept {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

[[noreturn]] void throwEmpty(std::uint64_t frameStart, std::size_t frameLength) {
  throw CorruptedFrameError(
      frameLength == 0
          ? fmt::format("CorruptedFrameError: empty frame at stream offset {} (a JSON frame must "
                        "hold exactly one value)",
                        frameStart)
          : fmt::format(
                "CorruptedFrameError: empty frame ({} bytes of whitespace) at stream offset "
                "{} (a JSON frame must hold exactly one value)",
                frameLength, frameStart),
      frameStart, frameLength);
}

/// UnexpectedEnd or TrailingContent (e: relative to the frame) as a CorruptedFrameError.
[[noreturn]] void throwNotOneValue(const JsonError& e, std::uint64_t frameStart,
                                   std::size_t frameLength) {
  const std::uint64_t at = frameStart + e.offset();
  const char* problem = e.code() == JsonErrorCode::UnexpectedEnd
                            ? "truncated JSON value: the frame ends inside it"
                            : "trailing content after the JSON value";
  throw CorruptedFrameError(
      fmt::format("CorruptedFrameError: {} ({}) at stream offset {} (line {}, column {} of the "
                  "{}-byte frame at stream offset {})",
                  problem, e.detail(), at, e.line(), e.column(), frameLength, frameStart),
      at, frameLength);
}

}  // namespace

void JsonFrameDecoder::decode(AnyByteBuf frame, std::vector<Document>& out) {
  const std::uint64_t start = received_;
  const std::size_t length = readableBytes(frame);
  received_ += length;  // counted first: a failed frame still moves the stream on
  if (length == 0) throwEmpty(start, 0);
  ByteBuf buf = toContiguous(std::move(frame));
  const std::string_view text = buf.readableStringView();
  Document doc;
  try {
    parser_.parse(text, doc);
  } catch (const JsonError& e) {
    if (e.code() == JsonErrorCode::UnexpectedEnd && onlyWhitespace(text)) throwEmpty(start, length);
    if (e.code() == JsonErrorCode::UnexpectedEnd || e.code() == JsonErrorCode::TrailingContent)
      throwNotOneValue(e, start, length);
    throw e.rebased(start);
  }
  doc.keepAlive(std::move(buf));  // the strings view it (as JsonParser::parse(ByteBuf) does)
  out.push_back(std::move(doc));
}

}  // namespace netbuf
