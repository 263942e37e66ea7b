#include <netbuf/codec/json/json_decoder.hpp>
// (first include: proves the header is self-contained)
#include <netbuf/codec/json/json_encoder.hpp>
#include <netbuf/codec/json/json_writer.hpp>

#include <algorithm>
#include <string>

namespace netbuf {

JsonDecoder::JsonDecoder(const JsonDecoderOptions& options, Cumulator cumulator,
                         ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc),
      framer_(options.maxObjectLength, options.streamArrayElements, options.maxDepth, cumulator,
              alloc),
      parser_(options.parse) {}

void JsonDecoder::rethrowFramingError(const CodecError& e, std::uint64_t offset) {
  // The framer's message names its (cumulation-relative) offset: name the stream offset instead.
  std::string what = e.what();
  const std::string from = "at stream offset " + std::to_string(e.offset());
  const std::string to = "at stream offset " + std::to_string(offset);
  if (const auto at = what.find(from); at != std::string::npos) {
    what.replace(at, from.size(), to);
  } else {
    what += " (" + to + ")";
  }
  if (dynamic_cast<const TooLongFrameError*>(&e) != nullptr)
    throw TooLongFrameError(what, offset, e.value(), e.limit());
  if (dynamic_cast<const CorruptedFrameError*>(&e) != nullptr)
    throw CorruptedFrameError(what, offset, e.value(), e.limit());
  throw DecoderError(what, offset, e.value(), e.limit());
}

void JsonDecoder::parseFrame(AnyByteBuf frame, std::uint64_t offset, std::vector<Document>& out) {
  ByteBuf buf = toContiguous(std::move(frame));
  Document doc;
  try {
    parser_.parse(std::move(buf), doc);
  } catch (const JsonError& e) {
    throw e.rebased(offset);
  }
  out.push_back(std::move(doc));
}

void JsonEncoder::encode(const Document& doc, ByteBuf& out) {
  const std::size_t before = out.writerIndex();
  json::write(doc.root(), out, options_);
  hint_ = std::max<std::size_t>(out.writerIndex() - before, 64);
}

}  // namespace netbuf
