#include <netbuf/buffer/any_byte_buf.hpp>

namespace netbuf {

std::string readableBytesToString(const AnyByteBuf& b) {
  return visitBuf(b, [](const auto& buf) {
    std::string s(buf.readableBytes(), '\0');
    buf.getBytes(buf.readerIndex(), s.data(), s.size());
    return s;
  });
}

ByteBuf toContiguous(AnyByteBuf&& b) {
  if (auto* buf = std::get_if<ByteBuf>(&b)) return std::move(*buf);
  return std::get<CompositeByteBuf>(b).copy();
}

}  // namespace netbuf
