#pragma once
// JsonEncoder: a pipeline encoder from Documents to JSON text. It writes
// json::write(doc.root(), out, options) (json_writer.hpp) into one buffer per Document, sized by
// the previous document's size; EncoderError for what JSON cannot express.
//
// Threads: as every encoder, one channel, one thread.

#include <cstddef>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_write_options.hpp>
#include <netbuf/codec/message_to_byte_encoder.hpp>

namespace netbuf {

class JsonEncoder : public MessageToByteEncoder<JsonEncoder, Document> {
 public:
  explicit JsonEncoder(const JsonWriteOptions& options = {},
                       ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : MessageToByteEncoder(alloc), options_(options) {}

  const JsonWriteOptions& options() const noexcept { return options_; }

  /// Appends doc.root()'s JSON to out. Throws EncoderError.
  void encode(const Document& doc, ByteBuf& out);
  /// The previous document's size (a first guess for the next one).
  std::size_t sizeHint(const Document&) const noexcept { return hint_; }

 private:
  JsonWriteOptions options_;
  std::size_t hint_ = kDefaultSizeHint;
};

}  // namespace netbuf
