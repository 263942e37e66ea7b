// Differential fuzzing of the buffer types (Envoy's habit): the input is read as a program of
// operations applied to a CompositeByteBuf, a ByteBuf, and a trivially correct model (a std::string
// of written bytes plus a reader index). After every step the readable bytes and indices of all
// three must agree, and an operation must throw in the buffers exactly when the model says it is
// out of bounds.
#include <netbuf/buffer/composite_byte_buf.hpp>

#include "fuzz_input.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using Input = netbuf::fuzz::FuzzInput;

std::size_t small(Input& in) { return in.byte() % 40; }

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "buffer_ops_fuzz: mismatch: %s\n", what);
  std::abort();
}

void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using netbuf::ByteBuf;
  using netbuf::CompositeByteBuf;
  Input in{data, size};
  CompositeByteBuf comp(netbuf::ByteBufAllocator::defaultAllocator(), 1 + in.byte() % 8);
  ByteBuf flat = netbuf::Unpooled::buffer(0, 4096);
  std::string model;  // written bytes; [reader, model.size()) is readable
  std::size_t reader = 0;
  int steps = 0;
  while (!in.empty() && ++steps < 2000) {
    const std::uint8_t op = in.byte() % 10;
    switch (op) {
      case 0: {  // append a component / write the same bytes
        std::string piece(small(in), '\0');
        for (char& ch : piece) ch = static_cast<char>(in.byte());
        if (model.size() + piece.size() > 4096) break;
        comp.addComponent(true, netbuf::Unpooled::copiedBuffer(piece));
        flat.writeBytes(std::string_view(piece));
        model += piece;
        break;
      }
      case 1: {  // writes of every width through the composite's own growth
        const std::uint8_t w = in.byte() % 4;
        const std::uint64_t v = in.byte() * 0x0101010101010101ULL;
        const std::size_t width = w == 0 ? 1 : w == 1 ? 2 : w == 2 ? 4 : 8;
        if (model.size() + width > 4096) break;
        std::string bytes(width, '\0');
        for (std::size_t k = 0; k < width; ++k) bytes[k] = static_cast<char>(v >> (8 * k));
        comp.writeBytes(std::string_view(bytes));
        flat.writeBytes(std::string_view(bytes));
        model += bytes;
        break;
      }
      case 2: {  // reads of every width; throws exactly when the model says so
        const std::size_t width = std::size_t{1} << (in.byte() % 4);
        const bool ok = model.size() - reader >= width;
        std::uint64_t a = 0, b = 0;
        bool threwA = false, threwB = false;
        try {
          a = width == 1   ? comp.readUnsignedByte()
              : width == 2 ? comp.readUnsignedShort()
              : width == 4 ? comp.readUnsignedInt()
                           : comp.readUnsignedLong();
        } catch (const netbuf::IndexOutOfBoundsError&) {
          threwA = true;
        }
        try {
          b = width == 1   ? flat.readUnsignedByte()
              : width == 2 ? flat.readUnsignedShort()
              : width == 4 ? flat.readUnsignedInt()
                           : flat.readUnsignedLong();
        } catch (const netbuf::IndexOutOfBoundsError&) {
          threwB = true;
        }
        check(threwA == !ok && threwB == !ok, "read bounds");
        check(a == b, "read value");
        if (ok) reader += width;
        break;
      }
      case 3: {  // absolute gets anywhere, including out of bounds
        const std::size_t i = in.byte();
        const bool ok = i + 4 <= model.size();
        bool threw = false;
        std::uint32_t a = 0;
        try {
          a = comp.getUnsignedIntLE(i);
        } catch (const netbuf::IndexOutOfBoundsError&) {
          threw = true;
        }
        // Past writerIndex the composite's capacity may still cover i; only judge written bytes.
        if (ok) {
          check(!threw && a == flat.getUnsignedIntLE(i), "get value");
        }
        break;
      }
      case 4: {  // sets straddling anything below writerIndex
        const std::size_t i = in.byte();
        const auto v = static_cast<std::int64_t>(in.byte() * 0x0102030405060708ULL);
        if (i + 8 > model.size()) break;
        comp.setLong(i, v);
        flat.setLong(i, v);
        for (int k = 0; k < 8; ++k) {
          model[i + static_cast<std::size_t>(k)] =
              static_cast<char>(static_cast<std::uint64_t>(v) >> (56 - 8 * k));
        }
        break;
      }
      case 5:
        comp.discardReadBytes();
        flat.discardReadBytes();
        model.erase(0, reader);
        reader = 0;
        break;
      case 6: {  // search
        const auto v = std::byte{static_cast<std::uint8_t>(in.byte() % 4)};
        const std::size_t expect = model.find(static_cast<char>(v), reader);
        const std::size_t got = comp.bytesBefore(v);
        check(got == (expect == std::string::npos ? CompositeByteBuf::npos : expect - reader),
              "bytesBefore");
        check(flat.bytesBefore(v) == got, "bytesBefore flat");
        break;
      }
      case 7:
        check(comp.hashCode() == flat.hashCode() && comp.equals(flat), "hash/equals");
        break;
      case 8:
        comp.consolidate();
        break;
      case 9: {  // skip
        const std::size_t n = std::min(small(in), model.size() - reader);
        comp.skipBytes(n);
        flat.skipBytes(n);
        reader += n;
        break;
      }
    }
    check(comp.readerIndex() == reader && flat.readerIndex() == reader, "readerIndex");
    check(comp.writerIndex() == model.size() && flat.writerIndex() == model.size(), "writerIndex");
    check(comp.numComponents() <= comp.maxNumComponents(), "maxNumComponents");
    std::string got(comp.readableBytes(), '\0');
    comp.getBytes(reader, got.data(), got.size());
    check(got == model.substr(reader), "composite bytes");
    check(flat.readableStringView() == std::string_view(model).substr(reader), "flat bytes");
  }
  return 0;
}
