#include <fmt/format.h>

#include <netbuf/netbuf.hpp>

int main() {
  netbuf::ByteBuf buf = netbuf::Unpooled::buffer(16);
  buf.writeInt(42);
  buf.writeUtf8(u"ok");
  fmt::print("consumer ok: {}\n", buf.hexDump(0, 4));
  return buf.readInt() == 42 && buf.readUtf8(2) == "ok" ? 0 : 1;
}
