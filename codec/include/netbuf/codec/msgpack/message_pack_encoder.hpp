#pragma once
// MessagePackEncoder: a pipeline encoder from Documents to MessagePack (a
// MessageToByteEncoder<MessagePackEncoder, Document>). It writes doc.root() with MessagePackWriter
// (canonical when configured).
//
// Ownership and threading: as every encoder (one channel, one thread).

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/message_to_byte_encoder.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>

namespace netbuf {

class MessagePackEncoder : public MessageToByteEncoder<MessagePackEncoder, Document> {
 public:
  explicit MessagePackEncoder(const MessagePackWriteOptions& options = {},
                              ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : MessageToByteEncoder(alloc), options_(options) {}
  void encode(const Document& doc, ByteBuf& out) {
    MessagePackWriter w(out, options_);
    w.pack(doc.root());
  }

 private:
  MessagePackWriteOptions options_;
};

}  // namespace netbuf
