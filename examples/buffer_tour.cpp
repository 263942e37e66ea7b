// A tour of netbuf's ByteBuf: run it and read the output next to this file.
//
//   build/release/examples/buffer_tour
//
// Each section prints a heading, does one thing with a buffer and shows the bytes.

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <netbuf/netbuf.hpp>
#include <string>
#include <string_view>

namespace {

using netbuf::ByteBuf;
using netbuf::Unpooled;

void heading(std::string_view title) { fmt::print("\n== {} ==\n", title); }

// Builds a length-prefixed frame: a 4-byte big-endian length, then the payload.
void writeFrame(ByteBuf& out, std::string_view payload) {
  out.writeInt(static_cast<std::int32_t>(payload.size()));
  out.writeBytes(payload);
}

// Returns the next frame's payload, or an empty handle if the frame is not complete yet.
ByteBuf readFrame(ByteBuf& in) {
  if (!in.isReadable(4)) return {};
  const auto length = static_cast<std::size_t>(in.getUnsignedInt(in.readerIndex()));
  if (!in.isReadable(4 + length)) return {};
  in.skipBytes(4);
  return in.readRetainedSlice(length);  // zero copy: shares the memory of `in`
}

}  // namespace

int main() {
  heading("Three ways to make a buffer");
  ByteBuf heap = Unpooled::buffer(16);  // empty, capacity 16, grows on demand
  ByteBuf wrapped = Unpooled::wrappedBuffer(std::string("owned, not copied"));
  ByteBuf copied = Unpooled::copiedBuffer(std::string_view("a private copy"));
  fmt::print("heap:    {}\nwrapped: {}\ncopied:  {}\n", heap, wrapped, copied);
  fmt::print("wrapped reads back as \"{}\"\n", wrapped.readableStringView());

  heading("Byte order: the same int, big-endian (default) and little-endian");
  heap.writeInt(0x01020304);
  heap.writeIntLE(0x01020304);
  fmt::print("writeInt(0x01020304)   -> {}\n", heap.hexDump(0, 4));
  fmt::print("writeIntLE(0x01020304) -> {}\n", heap.hexDump(4, 4));
  const std::int32_t big = heap.readInt();  // read in order: fmt's arguments have no fixed order
  const std::int32_t little = heap.readIntLE();
  fmt::print("readInt() = {:#010x}, readIntLE() = {:#010x}\n", big, little);

  heading("Shorts, mediums (24-bit), longs, floats and doubles");
  heap.clear();
  heap.writeShort(-2).writeMedium(0x800001).writeLong(1234567890123LL);
  heap.writeFloat(1.5F).writeDoubleLE(-0.25);
  fmt::print("{} bytes written; the buffer grew: {}\n", heap.readableBytes(), heap);
  fmt::print("{:x}\n", heap);
  fmt::print("readShort    = {}\n", heap.readShort());
  fmt::print("readMedium   = {} (0x800001 sign-extended)\n", heap.readMedium());
  fmt::print("readLong     = {}\n", heap.readLong());
  fmt::print("readFloat    = {}\n", heap.readFloat());
  fmt::print("readDoubleLE = {}\n", heap.readDoubleLE());

  heading("A length-prefixed message, built and parsed back");
  ByteBuf wire = Unpooled::buffer();
  writeFrame(wire, "hello");
  writeFrame(wire, "netbuf");
  wire.writeShort(9);  // the start of a third frame, not complete yet
  fmt::print("{}\n", wire.prettyHexDump());
  while (ByteBuf frame = readFrame(wire)) {
    fmt::print("frame: \"{}\"  ({})\n", frame.readableStringView(), frame);
  }
  fmt::print("left over: {} bytes, waiting for the rest of the next frame\n", wire.readableBytes());

  heading("Sharing: retainedSlice and reference counts");
  ByteBuf original = Unpooled::copiedBuffer(std::string_view("GET /index.html HTTP/1.1"));
  fmt::print("refCnt before: {}\n", original.refCnt());
  {
    ByteBuf path = original.retainedSlice(4, 11);
    fmt::print("slice \"{}\"; refCnt now: {} (both handles share one storage)\n",
               path.readableStringView(), original.refCnt());
    path.setByte(0, '_');  // a slice writes through to the shared memory
    fmt::print("after path.setByte(0, '_'): original reads \"{}\"\n",
               original.readableStringView());
  }
  fmt::print("slice destroyed; refCnt: {}\n", original.refCnt());

  ByteBuf method = original.readRetainedSlice(3);
  original = ByteBuf();  // drop the original handle: the storage stays alive for the slice
  fmt::print("original dropped ({}); slice still reads \"{}\": {}\n", original,
             method.readableStringView(), method);

  heading("Views: slice() costs nothing and touches no count");
  ByteBuf text = Unpooled::copiedBuffer(std::string_view("key=value"));
  netbuf::ByteBufView view = text.slice();
  const std::size_t eq = view.bytesBefore(std::byte{'='});
  fmt::print("key \"{}\", value \"{}\", refCnt {}\n", view.slice(0, eq).readableStringView(),
             view.slice(eq + 1, view.size() - eq - 1).readableStringView(), text.refCnt());

  heading("Errors name the index, the length and the bounds");
  ByteBuf readOnly = text.asReadOnly();
  try {
    readOnly.writeByte('!');
  } catch (const netbuf::ReadOnlyBufferError& e) {
    fmt::print("ReadOnlyBufferError: {}\n", e.what());
  }
  try {
    text.readerIndex(6);
    text.readInt();  // only 3 bytes left
  } catch (const netbuf::IndexOutOfBoundsError& e) {
    fmt::print("IndexOutOfBoundsError: {}\n", e.what());
  }

  heading("Text: UTF-16 in, UTF-8 out");
  ByteBuf utf8 = Unpooled::buffer();
  const std::u16string_view greeting = u"Grüße, 世界 \U0001F600";
  const std::size_t n = utf8.writeUtf8(greeting);
  fmt::print("writeUtf8 wrote {} bytes for {} UTF-16 units:\n{}\n", n, greeting.size(),
             utf8.prettyHexDump());
  fmt::print("read back: {}\n", utf8.readUtf8(n));

  heading("Composite: a header and a payload as one buffer, without copying");
  ByteBuf payload = Unpooled::copiedBuffer(std::string_view("payload bytes"));
  ByteBuf header = Unpooled::buffer(8);
  header.writeShort(0x0101).writeInt(static_cast<std::int32_t>(payload.readableBytes()));
  netbuf::CompositeByteBuf frame;
  frame.addComponent(true, std::move(header)).addComponent(true, payload.retainedSlice());
  fmt::print("{}\npayload refCnt {} (shared, not copied)\n", frame, payload.refCnt());
  const std::int16_t version = frame.readShort();  // (locals: argument order is unspecified)
  const std::int32_t length = frame.readInt();
  const std::string body = frame.readUtf8(frame.readableBytes());
  fmt::print("version {:#06x}, length {}, body \"{}\" (header and body are different components)\n",
             version, length, body);
  std::size_t pieces = 0;
  frame.readerIndex(0);
  for (boost::asio::const_buffer b : frame.readableBuffers()) pieces += b.size() != 0 ? 1 : 0;
  fmt::print("one gather write: {} buffers, no copy\n", pieces);

  fmt::print("\nDone. See docs/ for the buffer model and the ownership rules.\n");
  return 0;
}
