#include <netbuf/transport/chunked_generator.hpp>

#include <utility>

namespace netbuf {

ChunkedGenerator::ChunkedGenerator(Generate generate, std::int64_t length)
    : generate_(std::move(generate)), length_(length < 0 ? -1 : length) {
  if (!generate_ || length_ == 0) close();
}

ByteBuf ChunkedGenerator::readChunk(ByteBufAllocator& alloc) {
  if (ended_) return ByteBuf();
  std::optional<ByteBuf> chunk = generate_(alloc);
  if (!chunk) {
    close();
    return ByteBuf();
  }
  progress_ += static_cast<std::int64_t>(chunk->readableBytes());
  if (length_ >= 0 && progress_ >= length_) close();
  return std::move(*chunk);
}

void ChunkedGenerator::close() {
  ended_ = true;
  generate_ = nullptr;  // what the function captured goes now
}

}  // namespace netbuf
