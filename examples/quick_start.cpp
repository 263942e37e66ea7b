// The README's quick start, compiled and run so the README stays true.
#include <fmt/format.h>
#include <netbuf/netbuf.hpp>

int main() {
  using namespace netbuf;
  ByteBuf buf = Unpooled::buffer(64);       // default allocator (the pool), grows on demand
  buf.writeShort(0x0102).writeIntLE(7);     // big-endian by default, ...LE for little-endian
  std::size_t n = buf.writeUtf8(u"héllo");  // UTF-16 -> UTF-8 straight into buffer memory
  buf.writeMedium(-2);                      // 24-bit, sign-extended on read

  ByteBuf frame = buf.retainedSlice(0, 6);  // shares storage: refCnt() == 2
  fmt::print("{}\n{:x}\n", buf, frame);     // one-line summary, then a Netty-style hex dump

  int16_t a = buf.readShort();         // 0x0102
  int32_t b = buf.readIntLE();         // 7
  std::string text = buf.readUtf8(n);  // "héllo"
  int32_t c = buf.readMedium();        // -2
  fmt::print("{} {} {} {}\n", a, b, text, c);
  try {
    buf.readByte();                           // nothing left to read
  } catch (const IndexOutOfBoundsError& e) {  // every error is a netbuf::Error
    fmt::print("{}\n", e.what());             // names the index, the length and the bound
  }
}  // last handle gone: storage freed exactly once
