#include <netbuf/buffer/byte_buf.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <boost/asio/buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

using netbuf::ByteBuf;
using netbuf::ByteBufAllocator;
using netbuf::EmptyBufferError;
using netbuf::EnsureWritableResult;
using netbuf::IllegalArgumentError;
using netbuf::IndexOutOfBoundsError;
using netbuf::ReadOnlyBufferError;
using netbuf::StorageKind;
using netbuf::Unpooled;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// doctest stringifies operands through an ADL toString(), which netbuf::toString(StorageKind)
// (returning std::string_view) hijacks; compare kinds through their names instead.
std::string kindOf(StorageKind k) { return std::string(netbuf::toString(k)); }
std::string kindOf(const ByteBuf& b) { return kindOf(b.storageKind()); }

/// Tests that pin exact capacities use the unpooled allocator explicitly: the default allocator is
/// a pool, whose slots have spare room.
ByteBuf heapBuffer(std::size_t initial = ByteBufAllocator::kDefaultInitialCapacity,
                   std::size_t max = netbuf::kDefaultMaxCapacity) {
  return netbuf::UnpooledByteBufAllocator::instance().buffer(initial, max);
}

ByteBuf bufOf(std::initializer_list<int> bytes) {
  std::vector<std::byte> v;
  for (int b : bytes) v.push_back(static_cast<std::byte>(b));
  return Unpooled::copiedBuffer(std::span<const std::byte>(v));
}

std::vector<int> readable(const ByteBuf& b) {
  std::vector<int> out;
  for (std::byte x : b.readableSpan()) out.push_back(static_cast<int>(x));
  return out;
}

std::vector<int> range(const ByteBuf& b, std::size_t index, std::size_t length) {
  std::vector<int> out;
  for (std::size_t i = 0; i < length; ++i) out.push_back(b.getUnsignedByte(index + i));
  return out;
}

template <class F>
std::string messageOf(F&& f) {
  try {
    f();
  } catch (const netbuf::Error& e) {
    return e.what();
  }
  return "<no exception>";
}

/// Storage freed through a counting deleter: the number of frees and the pointer/size passed.
struct FreeLog {
  int frees = 0;
  void* lastData = nullptr;
  std::size_t lastSize = 0;
};

ByteBuf countedBuffer(FreeLog& log, std::size_t size, std::uint8_t fill = 0) {
  auto* mem = new std::byte[size == 0 ? 1 : size];
  std::memset(mem, fill, size == 0 ? 1 : size);
  return Unpooled::wrappedBuffer(mem, size, [&log](void* data, std::size_t n) {
    ++log.frees;
    log.lastData = data;
    log.lastSize = n;
    delete[] static_cast<std::byte*>(data);
  });
}

/// An allocator whose storage has slack (twice the requested size), like a pooled slot, and which
/// counts allocations and frees: proves that growth and copies come from a buffer's own allocator
/// and that growth into spare room does not reallocate. With `shortBlocks` it breaks
/// allocateStorage's promise instead: its blocks hold half the bytes asked for.
class SlackAllocator final : public ByteBufAllocator {
 public:
  int allocations = 0;
  int frees = 0;
  std::size_t lastRequest = 0;
  bool shortBlocks = false;

  bool isPooled() const noexcept override { return true; }
  netbuf::detail::Storage* allocateStorage(std::size_t minCapacity) override {
    const std::size_t size = shortBlocks ? minCapacity / 2 : minCapacity * 2;
    auto* block = new Block();
    block->owner = this;
    block->memory = std::make_unique<std::byte[]>(size + 1);
    block->kind = StorageKind::Pooled;
    block->data = block->memory.get();
    block->size = size;
    block->allocator = this;
    block->destroy = &destroyBlock;
    ++allocations;
    lastRequest = minCapacity;
    return block;
  }

 private:
  struct Block : netbuf::detail::Storage {
    SlackAllocator* owner = nullptr;
    std::unique_ptr<std::byte[]> memory;
  };
  static void destroyBlock(netbuf::detail::Storage* s) noexcept {
    auto* b = static_cast<Block*>(s);
    ++b->owner->frees;
    delete b;
  }
};

}  // namespace

// ================================================================== construction, indices

TEST_CASE("Unpooled::buffer: default and explicit capacities, invalid arguments") {
  ByteBuf d = Unpooled::buffer();
  CHECK(d.isValid());
  CHECK(static_cast<bool>(d));
  CHECK(d.capacity() == ByteBufAllocator::kDefaultInitialCapacity);
  CHECK(d.capacity() == 256);
  CHECK(d.maxCapacity() == netbuf::kDefaultMaxCapacity);
  CHECK(d.maxCapacity() == 0x7fffffffu);
  CHECK(d.readerIndex() == 0);
  CHECK(d.writerIndex() == 0);
  CHECK(d.refCnt() == 1);
  CHECK(kindOf(d) == kindOf(ByteBufAllocator::defaultAllocator().isPooled() ? StorageKind::Pooled
                                                                            : StorageKind::Heap));
  CHECK_FALSE(d.isReadOnly());
  CHECK(&d.alloc() == &ByteBufAllocator::defaultAllocator());
  CHECK_FALSE(netbuf::UnpooledByteBufAllocator::instance().isPooled());
  CHECK(kindOf(heapBuffer(1)) == kindOf(StorageKind::Heap));
  CHECK(&heapBuffer(1).alloc() == &netbuf::UnpooledByteBufAllocator::instance());

  ByteBuf z = Unpooled::buffer(0, 0);
  CHECK(z.capacity() == 0);
  CHECK(z.maxCapacity() == 0);
  CHECK_THROWS_AS(z.writeByte(1), IndexOutOfBoundsError);

  ByteBuf m = Unpooled::buffer(8, 8);
  CHECK(m.capacity() == 8);
  CHECK(m.maxCapacity() == 8);

  CHECK_THROWS_AS(Unpooled::buffer(9, 8), IllegalArgumentError);
  CHECK_THROWS_WITH_AS(Unpooled::buffer(9, 8),
                       doctest::Contains("initialCapacity: 9 (expected: 0 <= initialCapacity <= "
                                         "maxCapacity(8)"),
                       IllegalArgumentError);
  CHECK_THROWS_AS(Unpooled::buffer(0, netbuf::kMaxCapacityLimit + 1), IllegalArgumentError);
  ByteBuf big = Unpooled::buffer(0, netbuf::kMaxCapacityLimit);
  CHECK(big.maxCapacity() == netbuf::kMaxCapacityLimit);
}

TEST_CASE("toString and toString(StorageKind)") {
  ByteBuf b = heapBuffer(64);
  b.writeInt(1).writeByte(2);
  b.readByte();
  CHECK(b.toString() == "ByteBuf(heap, ridx: 1, widx: 5, cap: 64/2147483647, refCnt: 1)");
  ByteBuf ro = b.asReadOnly();
  CHECK(ro.toString() == "ByteBuf(heap, read-only, ridx: 1, widx: 5, cap: 64/64, refCnt: 2)");
  CHECK(ByteBuf().toString() == "ByteBuf(empty)");
  CHECK(std::string(netbuf::toString(StorageKind::Heap)) == "heap");
  CHECK(std::string(netbuf::toString(StorageKind::Pooled)) == "pooled");
  CHECK(std::string(netbuf::toString(StorageKind::Wrapped)) == "wrapped");
  CHECK(std::string(netbuf::toString(StorageKind::OwnedString)) == "owned-string");
  CHECK(std::string(netbuf::toString(StorageKind::OwnedVector)) == "owned-vector");
  CHECK(std::string(netbuf::toString(StorageKind::Unowned)) == "unowned");
}

TEST_CASE("readerIndex / writerIndex / setIndex: limits and messages") {
  ByteBuf b = heapBuffer(8, 16);
  b.writerIndex(8);  // == capacity
  CHECK(b.writerIndex() == 8);
  b.readerIndex(8);  // == writerIndex
  CHECK(b.readerIndex() == 8);
  CHECK(b.readableBytes() == 0);
  b.readerIndex(0);
  CHECK_THROWS_AS(b.writerIndex(9), IndexOutOfBoundsError);
  CHECK(messageOf([&] { b.writerIndex(9); }) ==
        "writerIndex: 9 (expected: readerIndex(0) <= writerIndex <= capacity(8)) in ByteBuf(heap, "
        "ridx: 0, widx: 8, cap: 8/16, refCnt: 1)");
  b.setIndex(3, 5);
  CHECK(b.readerIndex() == 3);
  CHECK(b.writerIndex() == 5);
  CHECK_THROWS_WITH_AS(b.writerIndex(2),
                       doctest::Contains("writerIndex: 2 (expected: readerIndex(3)"),
                       IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.readerIndex(6), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(b.readerIndex(6), doctest::Contains("readerIndex: index 6"),
                       IndexOutOfBoundsError);
  CHECK(messageOf([&] { b.readerIndex(6); }).find("<= 5") != std::string::npos);
  CHECK(b.readerIndex() == 3);
  CHECK(b.writerIndex() == 5);

  CHECK_THROWS_AS(b.setIndex(4, 3), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.setIndex(0, 9), IndexOutOfBoundsError);
  CHECK(messageOf([&] { b.setIndex(0, 9); })
            .starts_with("setIndex: readerIndex: 0, writerIndex: 9 (expected: 0 <= readerIndex <= "
                         "writerIndex <= capacity(8))"));
  CHECK_THROWS_AS(b.setIndex(static_cast<std::size_t>(-1), static_cast<std::size_t>(-1)),
                  IndexOutOfBoundsError);
  // setIndex may move the reader index past the old writer index in one step.
  b.setIndex(7, 8);
  CHECK(b.readerIndex() == 7);
  b.setIndex(0, 0);
  CHECK(b.writerIndex() == 0);
}

TEST_CASE("readable / writable queries") {
  ByteBuf b = heapBuffer(10, 20);
  CHECK_FALSE(b.isReadable());
  CHECK(b.isReadable(0));
  CHECK_FALSE(b.isReadable(1));
  CHECK(b.isWritable());
  CHECK(b.isWritable(10));
  CHECK_FALSE(b.isWritable(11));  // capacity, not maxCapacity
  CHECK(b.writableBytes() == 10);
  CHECK(b.maxWritableBytes() == 20);
  b.writeZero(10);
  CHECK_FALSE(b.isWritable());
  CHECK(b.isWritable(0));
  CHECK(b.isReadable(10));
  CHECK_FALSE(b.isReadable(11));
  CHECK(b.readableBytes() == 10);
  CHECK(b.writableBytes() == 0);
  CHECK(b.maxWritableBytes() == 10);
  b.skipBytes(4);
  CHECK(b.readableBytes() == 6);
  CHECK(b.isReadable(6));
}

TEST_CASE("mark/reset, clear, skipBytes") {
  ByteBuf b = heapBuffer(16);
  b.writeInt(0x01020304).writeInt(0x05060708);
  b.markReaderIndex();
  b.markWriterIndex();
  CHECK(b.readShort() == 0x0102);
  b.writeByte(9);
  CHECK(b.writerIndex() == 9);
  b.resetReaderIndex();
  CHECK(b.readerIndex() == 0);
  b.resetWriterIndex();
  CHECK(b.writerIndex() == 8);

  b.skipBytes(8);
  CHECK(b.readerIndex() == 8);
  CHECK_THROWS_AS(b.skipBytes(1), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(b.skipBytes(1), doctest::Contains("skipBytes: index 8, length 1"),
                       IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.skipBytes(static_cast<std::size_t>(-1)), IndexOutOfBoundsError);
  b.skipBytes(0);
  CHECK(b.readerIndex() == 8);

  // Reset to a mark that is now past the writer index fails and leaves the index alone.
  b.markReaderIndex();  // 8
  b.clear();
  CHECK(b.readerIndex() == 0);
  CHECK(b.writerIndex() == 0);
  CHECK(b.capacity() == 16);
  CHECK(b.getInt(0) == 0x01020304);  // clear keeps content
  CHECK_THROWS_AS(b.resetReaderIndex(), IndexOutOfBoundsError);
  CHECK(b.readerIndex() == 0);
  b.writerIndex(12);
  b.resetReaderIndex();
  CHECK(b.readerIndex() == 8);
  b.markWriterIndex();  // 12
  b.capacity(10);       // trims the writer index to 10; mark 12 is now past capacity
  CHECK_THROWS_AS(b.resetWriterIndex(), IndexOutOfBoundsError);
}

// ================================================================== primitives

namespace {

/// Writes with `write`, checks the bytes, reads back with `get` (absolute) and `read` (relative),
/// then `set`s at offset 3 of a fresh buffer filled with 0xEE and checks the neighbours.
template <class W, class G, class R, class S, class V>
void roundTrip(const char* name, W write, G get, R read, S set, V value,
               std::vector<int> expected) {
  CAPTURE(name);
  ByteBuf b = heapBuffer(1, 64);
  write(b, value);
  CHECK(b.writerIndex() == expected.size());
  CHECK(readable(b) == expected);
  CHECK(get(b, 0) == value);
  CHECK(read(b) == value);
  CHECK(b.readerIndex() == expected.size());
  CHECK_THROWS_AS(read(b), IndexOutOfBoundsError);
  CHECK(b.readerIndex() == expected.size());

  ByteBuf s = heapBuffer(16, 16);
  s.writeZero(16);
  s.setZero(0, 16);
  for (std::size_t i = 0; i < 16; ++i) s.setByte(i, static_cast<std::int8_t>(0xEE));
  set(s, 3, value);
  CHECK(s.readerIndex() == 0);
  CHECK(s.writerIndex() == 16);
  CHECK(range(s, 3, expected.size()) == expected);
  CHECK(s.getUnsignedByte(2) == 0xEE);
  CHECK(s.getUnsignedByte(3 + expected.size()) == 0xEE);
  CHECK(get(s, 3) == value);
  // Last valid index, and one past it.
  const std::size_t last = 16 - expected.size();
  set(s, last, value);
  CHECK(get(s, last) == value);
  CHECK_THROWS_AS(get(s, last + 1), IndexOutOfBoundsError);
  CHECK_THROWS_AS(set(s, last + 1, value), IndexOutOfBoundsError);
  CHECK(s.getUnsignedByte(15) == static_cast<unsigned>(expected.back()));
}

}  // namespace

#define NETBUF_RT(W, G, R, S, T, V, ...)                                                           \
  roundTrip(                                                                                       \
      #W, [](ByteBuf& b, T v) { b.W(v); }, [](const ByteBuf& b, std::size_t i) { return b.G(i); }, \
      [](ByteBuf& b) { return b.R(); }, [](ByteBuf& b, std::size_t i, T v) { b.S(i, v); },         \
      static_cast<T>(V), std::vector<int>{__VA_ARGS__})

TEST_CASE("every primitive, both byte orders, against hand-written byte patterns") {
  NETBUF_RT(writeBoolean, getBoolean, readBoolean, setBoolean, bool, true, 0x01);
  NETBUF_RT(writeBoolean, getBoolean, readBoolean, setBoolean, bool, false, 0x00);
  NETBUF_RT(writeByte, getByte, readByte, setByte, std::int8_t, -2, 0xFE);
  NETBUF_RT(writeByte, getUnsignedByte, readUnsignedByte, setByte, std::uint8_t, 0xFE, 0xFE);
  NETBUF_RT(writeShort, getShort, readShort, setShort, std::int16_t, 0x0102, 0x01, 0x02);
  NETBUF_RT(writeShort, getShort, readShort, setShort, std::int16_t, -2, 0xFF, 0xFE);
  NETBUF_RT(writeShortLE, getShortLE, readShortLE, setShortLE, std::int16_t, 0x0102, 0x02, 0x01);
  NETBUF_RT(writeShort, getUnsignedShort, readUnsignedShort, setShort, std::uint16_t, 0xFEDC, 0xFE,
            0xDC);
  NETBUF_RT(writeShortLE, getUnsignedShortLE, readUnsignedShortLE, setShortLE, std::uint16_t,
            0xFEDC, 0xDC, 0xFE);
  NETBUF_RT(writeMedium, getMedium, readMedium, setMedium, std::int32_t, 0x010203, 0x01, 0x02,
            0x03);
  NETBUF_RT(writeMediumLE, getMediumLE, readMediumLE, setMediumLE, std::int32_t, 0x010203, 0x03,
            0x02, 0x01);
  NETBUF_RT(writeMedium, getMedium, readMedium, setMedium, std::int32_t, -8388608, 0x80, 0x00,
            0x00);
  NETBUF_RT(writeMediumLE, getMediumLE, readMediumLE, setMediumLE, std::int32_t, -2, 0xFE, 0xFF,
            0xFF);
  NETBUF_RT(writeMedium, getUnsignedMedium, readUnsignedMedium, setMedium, std::uint32_t, 8388608,
            0x80, 0x00, 0x00);
  NETBUF_RT(writeMediumLE, getUnsignedMediumLE, readUnsignedMediumLE, setMediumLE, std::uint32_t,
            0xABCDEF, 0xEF, 0xCD, 0xAB);
  NETBUF_RT(writeInt, getInt, readInt, setInt, std::int32_t, 0x01020304, 0x01, 0x02, 0x03, 0x04);
  NETBUF_RT(writeIntLE, getIntLE, readIntLE, setIntLE, std::int32_t, 0x01020304, 0x04, 0x03, 0x02,
            0x01);
  NETBUF_RT(writeInt, getInt, readInt, setInt, std::int32_t,
            std::numeric_limits<std::int32_t>::min(), 0x80, 0x00, 0x00, 0x00);
  NETBUF_RT(writeInt, getUnsignedInt, readUnsignedInt, setInt, std::uint32_t, 0xF1F2F3F4u, 0xF1,
            0xF2, 0xF3, 0xF4);
  NETBUF_RT(writeIntLE, getUnsignedIntLE, readUnsignedIntLE, setIntLE, std::uint32_t, 0xF1F2F3F4u,
            0xF4, 0xF3, 0xF2, 0xF1);
  NETBUF_RT(writeLong, getLong, readLong, setLong, std::int64_t, 0x0102030405060708LL, 0x01, 0x02,
            0x03, 0x04, 0x05, 0x06, 0x07, 0x08);
  NETBUF_RT(writeLongLE, getLongLE, readLongLE, setLongLE, std::int64_t, 0x0102030405060708LL, 0x08,
            0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01);
  NETBUF_RT(writeLong, getLong, readLong, setLong, std::int64_t, -1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xFF, 0xFF, 0xFF);
  NETBUF_RT(writeLong, getUnsignedLong, readUnsignedLong, setLong, std::uint64_t,
            0x8000000000000001ULL, 0x80, 0, 0, 0, 0, 0, 0, 0x01);
  NETBUF_RT(writeLongLE, getUnsignedLongLE, readUnsignedLongLE, setLongLE, std::uint64_t,
            0x8000000000000001ULL, 0x01, 0, 0, 0, 0, 0, 0, 0x80);
  NETBUF_RT(writeFloat, getFloat, readFloat, setFloat, float, 1.5f, 0x3F, 0xC0, 0x00, 0x00);
  NETBUF_RT(writeFloatLE, getFloatLE, readFloatLE, setFloatLE, float, 1.5f, 0x00, 0x00, 0xC0, 0x3F);
  NETBUF_RT(writeFloat, getFloat, readFloat, setFloat, float, -0.25f, 0xBE, 0x80, 0x00, 0x00);
  NETBUF_RT(writeDouble, getDouble, readDouble, setDouble, double, -2.0, 0xC0, 0, 0, 0, 0, 0, 0, 0);
  NETBUF_RT(writeDoubleLE, getDoubleLE, readDoubleLE, setDoubleLE, double, 0.1, 0x9A, 0x99, 0x99,
            0x99, 0x99, 0x99, 0xB9, 0x3F);
  NETBUF_RT(writeDouble, getDouble, readDouble, setDouble, double, 0.1, 0x3F, 0xB9, 0x99, 0x99,
            0x99, 0x99, 0x99, 0x9A);
}
#undef NETBUF_RT

TEST_CASE("generic get<T>/set<T>/read<T>/write<T> on ByteBuf") {
  ByteBuf b = heapBuffer(16);
  b.write<std::uint16_t>(0xA1B2).writeLE<std::uint32_t>(0x01020304u).write<std::int8_t>(-1);
  CHECK(readable(b) == std::vector<int>{0xA1, 0xB2, 0x04, 0x03, 0x02, 0x01, 0xFF});
  CHECK(b.get<std::uint16_t>(0) == 0xA1B2);
  CHECK(b.getLE<std::uint16_t>(0) == 0xB2A1);
  CHECK(b.read<std::uint16_t>() == 0xA1B2);
  CHECK(b.readLE<std::uint32_t>() == 0x01020304u);
  CHECK(b.read<std::uint8_t>() == 0xFF);
  b.set<std::uint64_t>(8, 0x1122334455667788ULL);
  CHECK(b.getUnsignedByte(8) == 0x11);
  b.setLE<std::uint64_t>(8, 0x1122334455667788ULL);
  CHECK(b.getUnsignedByte(8) == 0x88);
  CHECK(b.getLE<std::uint64_t>(8) == 0x1122334455667788ULL);
}

TEST_CASE("medium: 24 bits on the wire, sign-extended on get, low bits stored on set") {
  ByteBuf b = bufOf({0x80, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  CHECK(b.getMedium(0) == -8388608);
  CHECK(b.getUnsignedMedium(0) == 8388608u);
  CHECK(b.getMedium(3) == 8388607);
  CHECK(b.getUnsignedMedium(3) == 0x7FFFFFu);
  CHECK(b.getMedium(6) == -1);
  CHECK(b.getUnsignedMedium(6) == 0xFFFFFFu);
  CHECK(b.getMediumLE(0) == 0x80);  // 00 00 80 -> 0x000080
  CHECK(b.getMediumLE(2) ==
        static_cast<std::int32_t>(0xFFFF7F00u));  // 00 7F FF -> 0xFF7F00, negative
  CHECK(b.getUnsignedMediumLE(2) == 0xFF7F00u);
  CHECK(b.readMedium() == -8388608);
  CHECK(b.readUnsignedMedium() == 0x7FFFFFu);
  CHECK(b.readMediumLE() == -1);
  CHECK_THROWS_AS(b.readMedium(), IndexOutOfBoundsError);

  ByteBuf w = heapBuffer(8);
  w.writeMedium(0x7F123456);  // the top byte is dropped
  w.writeMediumLE(-8388608);
  CHECK(readable(w) == std::vector<int>{0x12, 0x34, 0x56, 0x00, 0x00, 0x80});
  CHECK(w.readMedium() == 0x123456);
  CHECK(w.readMediumLE() == -8388608);
  w.setMedium(0, -1);
  CHECK(w.getUnsignedMedium(0) == 0xFFFFFFu);
  CHECK(w.getMedium(0) == -1);
}

TEST_CASE("float and double: bit patterns survive (NaN payload, -0, infinities, denormals)") {
  ByteBuf b = heapBuffer(64);
  const float nanPayload = std::bit_cast<float>(0x7FC00123u);
  const double dnanPayload = std::bit_cast<double>(0x7FF8000000000ABCull);
  b.writeFloat(nanPayload);
  b.writeFloatLE(-0.0f);
  b.writeFloat(std::numeric_limits<float>::infinity());
  b.writeFloat(std::numeric_limits<float>::denorm_min());
  b.writeDouble(dnanPayload);
  b.writeDoubleLE(-std::numeric_limits<double>::infinity());
  CHECK(b.getUnsignedInt(0) == 0x7FC00123u);
  CHECK(b.getUnsignedIntLE(4) == 0x80000000u);
  CHECK(b.getUnsignedInt(8) == 0x7F800000u);
  CHECK(b.getUnsignedInt(12) == 0x00000001u);
  CHECK(b.getUnsignedLong(16) == 0x7FF8000000000ABCull);
  CHECK(b.getUnsignedLongLE(24) == 0xFFF0000000000000ull);
  CHECK(std::bit_cast<std::uint32_t>(b.readFloat()) == 0x7FC00123u);
  CHECK(std::bit_cast<std::uint32_t>(b.readFloatLE()) == 0x80000000u);
  CHECK(b.readFloat() == std::numeric_limits<float>::infinity());
  CHECK(b.readFloat() == std::numeric_limits<float>::denorm_min());
  CHECK(std::bit_cast<std::uint64_t>(b.readDouble()) == 0x7FF8000000000ABCull);
  CHECK(b.readDoubleLE() == -std::numeric_limits<double>::infinity());
  // A float read in the other byte order is the byte-swapped pattern.
  b.setFloat(32, 1.0f);
  CHECK(std::bit_cast<std::uint32_t>(b.getFloatLE(32)) == 0x0000803Fu);
}

TEST_CASE("boolean: any non-zero byte reads true") {
  ByteBuf b = bufOf({0x00, 0x01, 0x02, 0x80, 0xFF});
  CHECK_FALSE(b.readBoolean());
  CHECK(b.readBoolean());
  CHECK(b.readBoolean());
  CHECK(b.getBoolean(3));
  CHECK(b.getBoolean(4));
}

TEST_CASE("get/set bounds: index 0, capacity, past capacity, huge indices; messages") {
  ByteBuf b = heapBuffer(8, 64);
  b.setLong(0, 1);  // the whole capacity, although nothing is readable
  CHECK(b.getLong(0) == 1);
  CHECK(b.writerIndex() == 0);
  CHECK(b.getByte(7) == 1);
  CHECK_THROWS_AS(b.getByte(8), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.getInt(5), IndexOutOfBoundsError);
  CHECK(messageOf([&] { (void)b.getInt(5); }) ==
        "get: index 5, length 4 out of bounds (expected index + length <= 8) in ByteBuf(heap, "
        "ridx: 0, widx: 0, cap: 8/64, refCnt: 1)");
  CHECK_THROWS_WITH_AS(b.setShort(7, 1),
                       doctest::Contains("set: index 7, length 2 out of bounds (expected index + "
                                         "length <= 8)"),
                       IndexOutOfBoundsError);
  CHECK(b.getByte(7) == 1);  // a failed set writes nothing
  // Index arithmetic never overflows.
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  CHECK_THROWS_AS(b.getLong(huge), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.getLong(huge - 3), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.setLong(huge - 7, 0), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.setBytes(1, std::span<const std::byte>(b.data(), 8)), IndexOutOfBoundsError);
  // get does not grow, set does not grow (only writes grow).
  CHECK(b.capacity() == 8);
  // Reads are bounded by writerIndex, not capacity.
  b.writerIndex(3);
  CHECK_THROWS_AS(b.readInt(), IndexOutOfBoundsError);
  CHECK(messageOf([&] {
          (void)b.readInt();
        }).starts_with("read: index 0, length 4 out of bounds (expected index + length <= 3)"));
  CHECK(b.readerIndex() == 0);
  // Zero-length operations at the very end are allowed.
  std::span<std::byte> none;
  b.getBytes(8, none);
  b.setBytes(8, std::span<const std::byte>());
  b.setZero(8, 0);
  CHECK_THROWS_AS(b.getBytes(9, none), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.setZero(9, 0), IndexOutOfBoundsError);
}

// ================================================================== growth

TEST_CASE("ByteBufAllocator::calculateNewCapacity: Netty's policy") {
  constexpr std::size_t max = netbuf::kDefaultMaxCapacity;
  CHECK(ByteBufAllocator::calculateNewCapacity(0, max) == 64);
  CHECK(ByteBufAllocator::calculateNewCapacity(1, max) == 64);
  CHECK(ByteBufAllocator::calculateNewCapacity(64, max) == 64);
  CHECK(ByteBufAllocator::calculateNewCapacity(65, max) == 128);
  CHECK(ByteBufAllocator::calculateNewCapacity(128, max) == 128);
  CHECK(ByteBufAllocator::calculateNewCapacity(129, max) == 256);
  CHECK(ByteBufAllocator::calculateNewCapacity(1000, max) == 1024);
  CHECK(ByteBufAllocator::calculateNewCapacity(1025, max) == 2048);
  CHECK(ByteBufAllocator::calculateNewCapacity(2 * kMiB + 1, max) == 4 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(4 * kMiB - 1, max) == 4 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(4 * kMiB, max) == 4 * kMiB);
  // Above the threshold: round down to a 4 MiB multiple, then add 4 MiB (Netty's exact formula,
  // so an exact multiple still gets a further step).
  CHECK(ByteBufAllocator::calculateNewCapacity(4 * kMiB + 1, max) == 8 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(8 * kMiB - 1, max) == 8 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(8 * kMiB, max) == 12 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(9 * kMiB, max) == 12 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(100 * kMiB + 5, max) == 104 * kMiB);
  // Capped at maxCapacity.
  CHECK(ByteBufAllocator::calculateNewCapacity(65, 100) == 100);
  CHECK(ByteBufAllocator::calculateNewCapacity(100, 100) == 100);
  CHECK(ByteBufAllocator::calculateNewCapacity(0, 10) == 10);
  CHECK(ByteBufAllocator::calculateNewCapacity(0, 0) == 0);
  CHECK(ByteBufAllocator::calculateNewCapacity(5 * kMiB, 6 * kMiB) == 6 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(6 * kMiB, 6 * kMiB) == 6 * kMiB);
  CHECK(ByteBufAllocator::calculateNewCapacity(max, max) == max);
  CHECK(ByteBufAllocator::calculateNewCapacity(max - 1, max) == max);
  CHECK(ByteBufAllocator::calculateNewCapacity(
            netbuf::kMaxCapacityLimit, netbuf::kMaxCapacityLimit) == netbuf::kMaxCapacityLimit);
  CHECK_THROWS_AS(ByteBufAllocator::calculateNewCapacity(11, 10), IllegalArgumentError);
  CHECK_THROWS_WITH_AS(ByteBufAllocator::calculateNewCapacity(11, 10),
                       "calculateNewCapacity: minNewCapacity: 11 (expected: not greater than "
                       "maxCapacity(10))",
                       IllegalArgumentError);
}

TEST_CASE("ensureWritable(n): grows by the policy, never past maxCapacity") {
  ByteBuf b = heapBuffer(0);
  b.writeByte(1);
  CHECK(b.capacity() == 64);
  b.writeZero(63);
  CHECK(b.capacity() == 64);
  b.writeByte(2);
  CHECK(b.capacity() == 128);
  CHECK(b.getByte(0) == 1);  // content survives reallocation
  CHECK(b.getByte(64) == 2);
  b.ensureWritable(0);
  CHECK(b.capacity() == 128);
  b.ensureWritable(63);
  CHECK(b.capacity() == 128);
  b.ensureWritable(64);  // writerIndex 65 + 64 = 129
  CHECK(b.capacity() == 256);
  CHECK(b.writerIndex() == 65);

  ByteBuf c = heapBuffer(10, 100);
  c.ensureWritable(90);
  CHECK(c.capacity() == 100);
  ByteBuf d = heapBuffer(10, 100);
  d.writeZero(10);
  CHECK_THROWS_AS(d.ensureWritable(91), IndexOutOfBoundsError);
  CHECK(messageOf([&] { d.ensureWritable(91); })
            .starts_with("ensureWritable: writerIndex(10) + minWritableBytes(91) exceeds "
                         "maxCapacity(100) in ByteBuf(heap, ridx: 0, widx: 10, cap: 10/100"));
  CHECK(d.capacity() == 10);
  CHECK_THROWS_AS(d.ensureWritable(std::numeric_limits<std::size_t>::max()), IndexOutOfBoundsError);
  d.ensureWritable(90);
  CHECK(d.capacity() == 100);
  d.writeZero(90);
  CHECK_THROWS_AS(d.writeByte(0), IndexOutOfBoundsError);
  CHECK_THROWS_AS(d.writeZero(1), IndexOutOfBoundsError);
  CHECK(d.writerIndex() == 100);
  d.writeZero(0);  // zero bytes fit even when full
}

TEST_CASE("ensureWritable(n, force): results 0..3") {
  ByteBuf b = heapBuffer(16, 100);
  CHECK(b.ensureWritable(16, false) == EnsureWritableResult::AlreadyWritable);
  CHECK(static_cast<int>(EnsureWritableResult::AlreadyWritable) == 0);
  CHECK(b.capacity() == 16);
  CHECK(b.ensureWritable(17, false) == EnsureWritableResult::Grew);
  CHECK(static_cast<int>(EnsureWritableResult::Grew) == 3);
  CHECK(b.capacity() == 64);
  b.writerIndex(64);
  CHECK(b.ensureWritable(37, false) == EnsureWritableResult::NotEnoughUnchanged);
  CHECK(static_cast<int>(EnsureWritableResult::NotEnoughUnchanged) == 1);
  CHECK(b.capacity() == 64);
  CHECK(b.ensureWritable(37, true) == EnsureWritableResult::GrewToMax);
  CHECK(static_cast<int>(EnsureWritableResult::GrewToMax) == 2);
  CHECK(b.capacity() == 100);
  CHECK(b.ensureWritable(37, true) == EnsureWritableResult::NotEnoughUnchanged);
  CHECK(b.capacity() == 100);
  CHECK(b.ensureWritable(36, true) == EnsureWritableResult::AlreadyWritable);
  CHECK(b.ensureWritable(36, false) == EnsureWritableResult::AlreadyWritable);
  // Exactly fitting in maxCapacity grows (3), not to max by force.
  ByteBuf c = heapBuffer(0, 100);
  CHECK(c.ensureWritable(100, false) == EnsureWritableResult::Grew);
  CHECK(c.capacity() == 100);
}

TEST_CASE("maxFastWritableBytes and growth into spare room; allocator of growth and copies") {
  ByteBuf h = heapBuffer(16);
  h.writeInt(1);
  CHECK(h.maxFastWritableBytes() == 12);
  CHECK(h.asReadOnly().maxFastWritableBytes() == 0);
  CHECK(ByteBuf().maxFastWritableBytes() == 0);

  SlackAllocator slack;
  CHECK(slack.isPooled());
  {
    ByteBuf b = slack.buffer(16, 1000);
    CHECK(slack.allocations == 1);
    CHECK(b.capacity() == 16);
    CHECK(kindOf(b) == kindOf(StorageKind::Pooled));
    CHECK(&b.alloc() == &slack);
    CHECK(b.maxFastWritableBytes() == 32);
    b.writeInt(0x11223344);
    CHECK(b.maxFastWritableBytes() == 28);
    const std::byte* before = b.data();
    b.ensureWritable(20);  // fits the spare room: no reallocation, capacity = w + fast
    CHECK(slack.allocations == 1);
    CHECK(b.data() == before);
    CHECK(b.capacity() == 32);
    CHECK(b.ensureWritable(28, false) == EnsureWritableResult::AlreadyWritable);
    b.ensureWritable(40);  // beyond the room: a new block from the same allocator, by policy
    CHECK(slack.allocations == 2);
    CHECK(slack.lastRequest == 64);
    CHECK(slack.frees == 1);
    CHECK(b.capacity() == 64);
    CHECK(b.getInt(0) == 0x11223344);
    // Derived handles never grow, so they have no spare room beyond their capacity.
    ByteBuf dup = b.retainedDuplicate();
    CHECK(dup.maxFastWritableBytes() == dup.writableBytes());
    CHECK(dup.maxCapacity() == dup.capacity());
    ByteBuf c = b.copy();
    CHECK(slack.allocations == 3);
    CHECK(&c.alloc() == &slack);
  }
  CHECK(slack.frees == 3);
  // zeroedBuffer from a custom allocator zeroes the capacity.
  {
    ByteBuf z = slack.zeroedBuffer(24, 24);
    for (std::size_t i = 0; i < 24; ++i) CHECK(z.getByte(i) == 0);
  }
  CHECK(slack.frees == 4);
}

TEST_CASE("capacity(n): grow, shrink with index trimming, limits") {
  ByteBuf b = heapBuffer(8, 32);
  b.writeLong(0x0102030405060708LL);
  b.readShort();
  b.capacity(32);
  CHECK(b.capacity() == 32);
  CHECK(b.readerIndex() == 2);
  CHECK(b.writerIndex() == 8);
  CHECK(b.getLong(0) == 0x0102030405060708LL);
  CHECK_THROWS_AS(b.capacity(33), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(b.capacity(33),
                       doctest::Contains("capacity: newCapacity 33 exceeds maxCapacity 32"),
                       IndexOutOfBoundsError);
  b.capacity(6);  // writerIndex trimmed to 6, readerIndex kept
  CHECK(b.capacity() == 6);
  CHECK(b.readerIndex() == 2);
  CHECK(b.writerIndex() == 6);
  CHECK(readable(b) == std::vector<int>{3, 4, 5, 6});
  b.capacity(1);  // readerIndex past the new capacity: both become 1
  CHECK(b.readerIndex() == 1);
  CHECK(b.writerIndex() == 1);
  CHECK(b.getByte(0) == 1);
  b.capacity(0);
  CHECK(b.capacity() == 0);
  CHECK(b.readerIndex() == 0);
  CHECK(b.writerIndex() == 0);
  b.capacity(0);  // same capacity: nothing to do
  b.writeByte(9);
  CHECK(b.capacity() == 32);  // policy: 64 capped at 32
}

// The fixed-size writes compare writerIndex + N with one limit that follows the capacity and is 0
// on read-only and empty handles: every way of changing those must move it.
TEST_CASE("fixed-size writes follow every change of capacity, read-only state and emptiness") {
  SUBCASE("shrinking then writing grows again, keeping the bytes") {
    ByteBuf b = heapBuffer(8, 64);
    b.writeLong(0x0102030405060708LL);
    b.capacity(4);
    CHECK(b.writerIndex() == 4);
    b.writeInt(0x0A0B0C0D);  // past the new capacity: must grow, not write past it
    CHECK(b.capacity() == 64);
    CHECK(readable(b) == std::vector<int>{1, 2, 3, 4, 10, 11, 12, 13});
  }
  SUBCASE("growing in place: writes reach the new capacity, one more reallocates") {
    SlackAllocator slack;  // blocks twice the size asked for: room to grow in place
    ByteBuf b = slack.buffer(6, 64);
    b.writeInt(1);
    b.capacity(12);  // inside the block's 12 bytes: no new block
    CHECK(slack.allocations == 1);
    const std::byte* before = b.data();
    b.writeLong(2);  // exactly up to the new capacity
    CHECK(b.capacity() == 12);
    CHECK(b.data() == before);
    CHECK(slack.allocations == 1);
    b.writeByte(3);  // one past the block: a new one
    CHECK(slack.allocations == 2);
    CHECK(b.capacity() > 12);
    CHECK(b.getInt(0) == 1);
    CHECK(b.getLong(4) == 2);
    CHECK(b.getByte(12) == 3);
  }
  SUBCASE("a fixed capacity stops the write that does not fit and leaves the index") {
    std::array<std::byte, 6> mem{};
    ByteBuf w = Unpooled::wrappedUnownedBuffer(std::span<std::byte>(mem));
    w.clear();
    w.writeInt(0x01020304);
    CHECK_THROWS_AS(w.writeInt(5), IndexOutOfBoundsError);
    CHECK(w.writerIndex() == 4);
    w.writeShort(0x0506);  // what still fits
    CHECK(w.writerIndex() == 6);
    CHECK_THROWS_AS(w.writeByte(7), IndexOutOfBoundsError);
    CHECK(mem[5] == std::byte{6});
  }
  SUBCASE("read-only handles refuse fixed-size writes with room left") {
    ByteBuf b = heapBuffer(16);
    ByteBuf ro = b.asReadOnly();
    CHECK(ro.writerIndex() == 0);  // all 16 bytes writable, if it were writable
    CHECK_THROWS_AS(ro.writeByte(1), ReadOnlyBufferError);
    CHECK_THROWS_AS(ro.writeLongLE(1), ReadOnlyBufferError);
    const std::array<std::byte, 4> cmem{};
    ByteBuf r = Unpooled::wrappedUnownedBuffer(std::span<const std::byte>(cmem));
    r.clear();
    CHECK_THROWS_AS(r.writeInt(1), ReadOnlyBufferError);
    CHECK_THROWS_AS(r.writeBoolean(true), ReadOnlyBufferError);
    CHECK(r.writerIndex() == 0);
  }
  SUBCASE("reset, move and move-assignment carry the limit with the storage") {
    ByteBuf b = heapBuffer(8, 8);
    b.writeInt(1);
    b.reset();
    CHECK_THROWS_AS(b.writeInt(1), EmptyBufferError);
    ByteBuf c = heapBuffer(8, 8);
    b = std::move(c);
    b.writeLong(7);  // c's full capacity, through b
    CHECK_THROWS_AS(b.writeByte(1), IndexOutOfBoundsError);
    CHECK_THROWS_AS(c.writeByte(1), EmptyBufferError);
    ByteBuf d(std::move(b));
    CHECK(d.readLong() == 7);
    CHECK_THROWS_AS(b.writeShort(1), EmptyBufferError);
  }
}

// ================================================================== discard

TEST_CASE("discardReadBytes moves the readable bytes to 0 and adjusts marks (Netty)") {
  ByteBuf b = heapBuffer(16);
  for (int i = 0; i < 10; ++i) b.writeByte(static_cast<std::int8_t>(i));
  b.skipBytes(4);
  b.markReaderIndex();  // 4
  b.markWriterIndex();  // 10
  b.discardReadBytes();
  CHECK(b.readerIndex() == 0);
  CHECK(b.writerIndex() == 6);
  CHECK(b.capacity() == 16);
  CHECK(readable(b) == std::vector<int>{4, 5, 6, 7, 8, 9});
  b.resetWriterIndex();
  CHECK(b.writerIndex() == 6);  // 10 - 4
  b.skipBytes(3);
  b.resetReaderIndex();
  CHECK(b.readerIndex() == 0);  // 4 - 4

  // Marks above the discarded prefix move down by it.
  b.readerIndex(3);
  b.markReaderIndex();  // 3
  b.readerIndex(2);
  b.discardReadBytes();  // decrement 2
  CHECK(readable(b) == std::vector<int>{6, 7, 8, 9});
  b.resetReaderIndex();
  CHECK(b.readerIndex() == 1);  // 3 - 2
  b.resetWriterIndex();
  CHECK(b.writerIndex() == 4);  // marked writer 6 - 2

  // Everything read: indices to 0, no copy needed; marks clamp at 0.
  b.readerIndex(4);
  b.markReaderIndex();
  b.discardReadBytes();
  CHECK(b.readerIndex() == 0);
  CHECK(b.writerIndex() == 0);
  b.resetReaderIndex();
  CHECK(b.readerIndex() == 0);
  b.resetWriterIndex();
  CHECK(b.writerIndex() == 0);  // marked writer 4 <= 4 -> 0

  // readerIndex 0: nothing happens.
  b.writeInt(7);
  b.discardReadBytes();
  CHECK(b.writerIndex() == 4);
  CHECK(b.readInt() == 7);
}

TEST_CASE("discardReadBytes: a writer mark below the reader mark never wraps around") {
  ByteBuf b = heapBuffer(16);
  b.markWriterIndex();  // 0
  b.writeZero(10);
  b.readerIndex(5);
  b.markReaderIndex();  // 5
  b.readerIndex(3);
  b.discardReadBytes();  // decrement 3: marked reader 2; marked writer 0 - 3 clamps to 0
  CHECK(b.writerIndex() == 7);
  // The marked writer must be 0 (clamped, a valid index after the discard), not 0 - 3 wrapped.
  CHECK_NOTHROW(b.resetWriterIndex());
  CHECK(b.writerIndex() == 0);
  const std::string msg = messageOf([&] { b.resetReaderIndex(); });
  CHECK(msg.find("18446744073709551") == std::string::npos);
}

TEST_CASE("discardSomeReadBytes: only when all bytes are read or past half the capacity") {
  ByteBuf b = heapBuffer(16, 16);
  b.writeZero(12);
  b.setByte(7, 77);
  b.readerIndex(7);  // < 16 / 2: kept
  b.markWriterIndex();
  b.discardSomeReadBytes();
  CHECK(b.readerIndex() == 7);
  CHECK(b.writerIndex() == 12);
  b.readerIndex(8);  // == half: discarded
  b.discardSomeReadBytes();
  CHECK(b.readerIndex() == 0);
  CHECK(b.writerIndex() == 4);
  b.resetWriterIndex();
  CHECK(b.writerIndex() == 4);  // 12 - 8
  b.readerIndex(1);             // small, but everything before... not all read: kept
  b.discardSomeReadBytes();
  CHECK(b.readerIndex() == 1);
  b.readerIndex(4);  // all read: discarded even below half
  b.discardSomeReadBytes();
  CHECK(b.readerIndex() == 0);
  CHECK(b.writerIndex() == 0);
  b.discardSomeReadBytes();  // readerIndex 0
  CHECK(b.writerIndex() == 0);
}

// ================================================================== sharing and ownership

TEST_CASE("refCnt accounting across every sharing operation") {
  ByteBuf b = heapBuffer(16);
  b.writeLong(42);
  CHECK(b.refCnt() == 1);
  {
    ByteBuf d = b.retainedDuplicate();
    CHECK(b.refCnt() == 2);
    CHECK(d.refCnt() == 2);
    ByteBuf s = b.retainedSlice();
    ByteBuf s2 = b.retainedSlice(0, 4);
    ByteBuf ro = b.asReadOnly();
    ByteBuf rs = b.readRetainedSlice(2);
    CHECK(b.refCnt() == 6);
    ByteBuf moved = std::move(s);  // moving transfers, does not count
    CHECK(b.refCnt() == 6);
    CHECK(s.refCnt() == 0);
    ByteBuf c = b.copy();  // deep copy: its own storage
    CHECK(c.refCnt() == 1);
    CHECK(b.refCnt() == 6);
    (void)b.slice();  // views touch no count
    (void)b.slice(0, 8);
    CHECK(b.refCnt() == 6);
    rs.reset();
    CHECK(b.refCnt() == 5);
    CHECK_FALSE(rs.isValid());
  }
  CHECK(b.refCnt() == 1);
}

TEST_CASE("retained slices and duplicates: indices, shared bytes, fixed capacity") {
  ByteBuf b = heapBuffer(16);
  b.writeInt(0x01020304).writeInt(0x05060708);
  b.readByte();

  ByteBuf s = b.retainedSlice();
  CHECK(s.readerIndex() == 0);
  CHECK(s.writerIndex() == 7);
  CHECK(s.capacity() == 7);
  CHECK(s.maxCapacity() == 7);
  CHECK(s.getByte(0) == 2);
  s.setByte(0, 99);
  CHECK(b.getByte(1) == 99);  // shared memory
  b.setByte(7, 88);
  CHECK(s.getByte(6) == 88);
  CHECK_THROWS_AS(s.getByte(7), IndexOutOfBoundsError);
  // A derived handle cannot grow.
  s.writerIndex(7);
  CHECK_THROWS_AS(s.writeByte(1), IndexOutOfBoundsError);
  CHECK(s.ensureWritable(1, true) == EnsureWritableResult::NotEnoughUnchanged);

  ByteBuf s2 = b.retainedSlice(4, 4);
  CHECK(readable(s2) == std::vector<int>{5, 6, 7, 88});
  ByteBuf tail = b.retainedSlice(16, 0);  // empty slice at the very end
  CHECK(tail.capacity() == 0);
  CHECK_THROWS_AS(b.retainedSlice(13, 4), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(b.retainedSlice(13, 4),
                       doctest::Contains("retainedSlice: index 13, length 4"),
                       IndexOutOfBoundsError);

  ByteBuf d = b.retainedDuplicate();
  CHECK(d.readerIndex() == 1);
  CHECK(d.writerIndex() == 8);
  CHECK(d.capacity() == 16);
  CHECK(d.maxCapacity() == 16);
  d.readByte();
  CHECK(b.readerIndex() == 1);  // own indices
  b.markReaderIndex();
  ByteBuf d2 = b.retainedDuplicate();
  d2.readerIndex(5);
  CHECK_NOTHROW(d2.resetReaderIndex());  // marks are not copied: reset goes to 0
  CHECK(d2.readerIndex() == 0);

  ByteBuf r = b.readRetainedSlice(3);
  CHECK(b.readerIndex() == 4);
  CHECK(readable(r) == std::vector<int>{99, 3, 4});
  CHECK_THROWS_AS(b.readRetainedSlice(5), IndexOutOfBoundsError);
  CHECK(b.readerIndex() == 4);
  ByteBuf r0 = b.readRetainedSlice(0);
  CHECK(r0.capacity() == 0);
  CHECK(b.readerIndex() == 4);
}

TEST_CASE("after the owner reallocates, shared handles keep the old bytes") {
  ByteBuf b = heapBuffer(4, 64);
  b.writeInt(0x0A0B0C0D);
  ByteBuf s = b.retainedSlice();
  CHECK(b.refCnt() == 2);
  b.writeByte(1);  // grows: b moves to new storage
  CHECK(b.refCnt() == 1);
  CHECK(s.refCnt() == 1);
  b.setByte(0, 0);
  CHECK(s.getByte(0) == 0x0A);  // no longer shared
  CHECK(s.getInt(0) == 0x0A0B0C0D);
}

TEST_CASE("storage is freed exactly once, when the last handle goes") {
  FreeLog log;
  ByteBuf keep;
  {
    ByteBuf b = countedBuffer(log, 8, 0x5A);
    CHECK(kindOf(b) == kindOf(StorageKind::Wrapped));
    CHECK(b.writerIndex() == 8);
    CHECK(b.capacity() == 8);
    CHECK(b.maxCapacity() == 8);
    void* data = const_cast<std::byte*>(b.data());
    keep = b.retainedSlice(2, 3);
    ByteBuf d = b.retainedDuplicate();
    ByteBuf ro = d.asReadOnly();
    CHECK(b.refCnt() == 4);
    log.lastData = data;
  }
  CHECK(log.frees == 0);  // the slice outlives the original handle
  CHECK(keep.refCnt() == 1);
  CHECK(keep.getUnsignedByte(0) == 0x5A);
  CHECK(keep.readableBytes() == 3);
  void* const expected = log.lastData;
  keep = ByteBuf();  // assigning over the last handle frees
  CHECK(log.frees == 1);
  CHECK(log.lastData == expected);
  CHECK(log.lastSize == 8);
  keep.reset();
  CHECK(log.frees == 1);

  // A wrapped buffer has a fixed capacity; shrinking it moves to fresh memory and releases the
  // wrapped storage at once (it was the last handle).
  FreeLog grow;
  {
    ByteBuf w = countedBuffer(grow, 4, 0x11);
    CHECK_THROWS_AS(w.writeByte(0x22), IndexOutOfBoundsError);
    CHECK(grow.frees == 0);
    w.capacity(2);
    CHECK(grow.frees == 1);
    CHECK(kindOf(w) != kindOf(StorageKind::Wrapped));
    CHECK(readable(w) == std::vector<int>{0x11, 0x11});
    CHECK(w.capacity() == 2);
  }
  CHECK(grow.frees == 1);
}

TEST_CASE("move assignment releases the old reference exactly once, self-move none") {
  FreeLog log;
  ByteBuf a = countedBuffer(log, 8, 0x33);
  ByteBuf b = a.retainedDuplicate();
  b.readerIndex(3);
  CHECK(a.refCnt() == 2);
  // Both hold the same storage: a's reference goes, b's moves into a.
  a = std::move(b);
  CHECK(a.refCnt() == 1);
  CHECK(a.readerIndex() == 3);
  CHECK_FALSE(b.isValid());
  CHECK(log.frees == 0);
  // Self-move, through a reference the compiler cannot see through: nothing released.
  ByteBuf* volatile self = &a;
  a = std::move(*self);
  CHECK(a.isValid());
  CHECK(a.refCnt() == 1);
  CHECK(a.readerIndex() == 3);
  CHECK(log.frees == 0);
  // Self-move of a handle holding reference credit keeps the credit.
  ByteBuf s1 = a.readRetainedSliceBatched(1);
  CHECK(a.refCnt() == 2);
  a = std::move(*self);
  CHECK(a.refCnt() == 2);
  ByteBuf s2 = a.readRetainedSliceBatched(1);  // from the credit kept through the self-move
  CHECK(a.refCnt() == 3);
  CHECK(s2.getUnsignedByte(0) == 0x33);
  // Assigning other storage over a handle with credit returns the credit with its reference.
  FreeLog other;
  a = countedBuffer(other, 4);
  CHECK(a.refCnt() == 1);
  CHECK(s1.refCnt() == 2);  // s1 and s2 only: a's credit went back
  CHECK(log.frees == 0);
  s1.reset();
  s2 = std::move(a);  // s2's reference was the last: freed here, once
  CHECK(log.frees == 1);
  CHECK(other.frees == 0);
  CHECK(s2.refCnt() == 1);
  s2 = ByteBuf();
  CHECK(other.frees == 1);
  CHECK(log.frees == 1);
}

TEST_CASE("wrappedBuffer(void*, size, deleter): argument checks and zero size") {
  CHECK_THROWS_AS(Unpooled::wrappedBuffer(nullptr, 4, {}), IllegalArgumentError);
  ByteBuf e = Unpooled::wrappedBuffer(nullptr, 0, {});
  CHECK(e.isValid());
  CHECK(e.capacity() == 0);
  int calls = 0;
  {
    std::array<std::byte, 4> mem{};
    ByteBuf w =
        Unpooled::wrappedBuffer(mem.data(), mem.size(), [&calls](void*, std::size_t) { ++calls; });
    w.setByte(0, 5);
    CHECK(mem[0] == std::byte{5});  // no copy
  }
  CHECK(calls == 1);
}

TEST_CASE("moved-from and default-constructed handles are empty") {
  ByteBuf b = heapBuffer(8);
  b.writeInt(5);
  ByteBuf to = std::move(b);
  CHECK(to.readInt() == 5);
  for (ByteBuf* e : {&b}) {
    ByteBuf& x = *e;
    CHECK_FALSE(x.isValid());
    CHECK_FALSE(static_cast<bool>(x));
    CHECK(x.readerIndex() == 0);
    CHECK(x.writerIndex() == 0);
    CHECK(x.capacity() == 0);
    CHECK(x.maxCapacity() == 0);
    CHECK(x.readableBytes() == 0);
    CHECK(x.writableBytes() == 0);
    CHECK(x.maxWritableBytes() == 0);
    CHECK(x.refCnt() == 0);
    CHECK(x.data() == nullptr);
    CHECK_FALSE(x.isReadOnly());
    CHECK(x.readableSpan().empty());
    CHECK(x.toString() == "ByteBuf(empty)");
    CHECK_THROWS_AS(x.getByte(0), EmptyBufferError);
    CHECK_THROWS_WITH_AS(x.getByte(0),
                         "get: ByteBuf handle is empty (default-constructed or moved-from)",
                         EmptyBufferError);
    CHECK_THROWS_AS(x.readByte(), EmptyBufferError);
    CHECK_THROWS_AS(x.setByte(0, 1), EmptyBufferError);
    CHECK_THROWS_AS(x.writeByte(1), EmptyBufferError);
    CHECK_THROWS_AS(x.writeLong(1), EmptyBufferError);
    CHECK_THROWS_AS(x.writeBytes("abc"), EmptyBufferError);
    CHECK_THROWS_AS(x.writeZero(1), EmptyBufferError);
    std::array<std::byte, 2> two{};
    CHECK_THROWS_AS(x.readBytes(two), EmptyBufferError);
    CHECK_THROWS_AS(x.getBytes(0, two), EmptyBufferError);
    CHECK_THROWS_AS(x.setBytes(0, std::span<const std::byte>(two)), EmptyBufferError);
    CHECK_THROWS_AS(x.skipBytes(1), EmptyBufferError);
    CHECK_THROWS_AS(x.readerIndex(1), EmptyBufferError);
    CHECK_THROWS_AS(x.writerIndex(1), EmptyBufferError);
    CHECK_THROWS_AS(x.setIndex(0, 1), EmptyBufferError);
    CHECK_THROWS_AS(x.capacity(16), EmptyBufferError);
    CHECK_THROWS_AS(x.ensureWritable(1), EmptyBufferError);
    CHECK_THROWS_AS(x.ensureWritable(1, true), EmptyBufferError);
    CHECK_THROWS_AS(x.retainedSlice(), EmptyBufferError);
    CHECK_THROWS_AS(x.retainedSlice(0, 0), EmptyBufferError);
    CHECK_THROWS_AS(x.readRetainedSlice(0), EmptyBufferError);
    CHECK_THROWS_AS(x.retainedDuplicate(), EmptyBufferError);
    CHECK_THROWS_AS(x.copy(), EmptyBufferError);
    CHECK_THROWS_AS(x.asReadOnly(), EmptyBufferError);
    CHECK_THROWS_AS(x.storageKind(), EmptyBufferError);
    CHECK_THROWS_AS(x.writableBuffer(), EmptyBufferError);
    CHECK_THROWS_AS(x.commitWrite(1), EmptyBufferError);
    CHECK_THROWS_AS(x.slice(0, 1), EmptyBufferError);
    CHECK_THROWS_AS(x.readSlice(1), EmptyBufferError);
    CHECK_THROWS_AS(x.readBytes(1), EmptyBufferError);
    CHECK(x.slice().size() == 0);
    CHECK(x.hexDump() == "");
    CHECK(x.indexOf(0, 10, std::byte{0}) == ByteBuf::npos);
    CHECK(x.bytesBefore(std::byte{0}) == ByteBuf::npos);
  }
  // Assignable (and usable again), self-move is harmless, destructible.
  b = heapBuffer(4);
  CHECK(b.isValid());
  b.writeInt(3);
  ByteBuf& alias = b;
  b = std::move(alias);
  CHECK(b.isValid());
  CHECK(b.readInt() == 3);
  ByteBuf d;
  ByteBuf d2(std::move(d));
  CHECK_FALSE(d2.isValid());
  d = std::move(d2);
  CHECK_FALSE(d.isValid());
  // Moving keeps indices and marks.
  ByteBuf m = heapBuffer(8);
  m.writeInt(1);
  m.readByte();
  m.markReaderIndex();
  m.readByte();
  ByteBuf m2 = std::move(m);
  CHECK(m2.readerIndex() == 2);
  m2.resetReaderIndex();
  CHECK(m2.readerIndex() == 1);
}

// ================================================================== read-only

TEST_CASE("read-only handles: every mutation throws ReadOnlyBufferError, reads work") {
  ByteBuf b = heapBuffer(16);
  b.writeLong(0x0102030405060708LL);
  ByteBuf ro = b.asReadOnly();
  CHECK(ro.isReadOnly());
  CHECK_FALSE(b.isReadOnly());
  CHECK(ro.refCnt() == 2);
  CHECK(ro.readerIndex() == 0);
  CHECK(ro.writerIndex() == 8);
  CHECK(ro.capacity() == 16);
  CHECK(ro.maxCapacity() == 16);
  CHECK_FALSE(ro.isWritable());
  CHECK_FALSE(ro.isWritable(1));
  CHECK_FALSE(ro.isWritable(0));
  CHECK(ro.maxFastWritableBytes() == 0);

  // Sharing: writes through the original are seen through the read-only handle.
  b.setByte(0, 0x7F);
  CHECK(ro.getByte(0) == 0x7F);
  b.setByte(0, 1);

  const std::array<std::byte, 2> two{std::byte{1}, std::byte{2}};
  ByteBuf other = bufOf({9, 9});
  CHECK_THROWS_WITH_AS(ro.setByte(0, 1),
                       doctest::Contains("set: buffer is read-only: ByteBuf(heap, read-only"),
                       ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setBoolean(0, true), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setShort(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setShortLE(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setMedium(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setMediumLE(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setInt(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setIntLE(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setLong(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setLongLE(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setFloat(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setFloatLE(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setDouble(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setDoubleLE(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.set<std::uint16_t>(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setLE<std::uint16_t>(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setByte(100, 1), ReadOnlyBufferError);  // read-only wins over bounds
  CHECK_THROWS_AS(ro.setBytes(0, std::span<const std::byte>(two)), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setBytes(0, two.data(), two.size()), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setBytes(0, std::string_view("ab")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setBytes(0, other, 0, 2), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setZero(0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.setZero(0, 0), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBoolean(true), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeByte(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeShort(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeShortLE(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeMedium(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeMediumLE(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeInt(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeIntLE(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeLong(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeLongLE(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeFloat(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeFloatLE(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeDouble(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeDoubleLE(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.write<std::int32_t>(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeLE<std::int32_t>(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBytes(std::span<const std::byte>(two)), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBytes(two.data(), two.size()), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBytes(std::string_view("ab")), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBytes(std::string_view()), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBytes(netbuf::ByteBufView(std::string_view("ab"))), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBytes(other), ReadOnlyBufferError);
  CHECK(other.readerIndex() == 0);  // the source is not consumed by a failed write
  CHECK_THROWS_AS(ro.writeBytes(other, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeBytes(other, 0, 2), ReadOnlyBufferError);
  CHECK(other.readerIndex() == 0);
  CHECK_THROWS_AS(ro.writeZero(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writeZero(0), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.capacity(32), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.capacity(16), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.capacity(4), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.ensureWritable(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.ensureWritable(0), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.ensureWritable(1, true), ReadOnlyBufferError);
  CHECK_THROWS_WITH_AS(ro.writableBuffer(),
                       doctest::Contains("writableBuffer: buffer is read-only"),
                       ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.writableBuffer(1), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.commitWrite(0), ReadOnlyBufferError);
  CHECK_THROWS_AS(ro.commitWrite(1), ReadOnlyBufferError);
  // A read-only handle as the *destination* of another buffer's transfer.
  CHECK_THROWS_AS(other.readBytes(ro, 1), ReadOnlyBufferError);
  CHECK(other.readerIndex() == 0);
  CHECK_THROWS_AS(other.getBytes(0, ro, 0, 1), ReadOnlyBufferError);
  CHECK_THROWS_AS(other.getBytes(0, ro, 1), ReadOnlyBufferError);
  CHECK(ro.getLong(0) == 0x0102030405060708LL);  // nothing was written
  CHECK(ro.writerIndex() == 8);
  CHECK(ro.capacity() == 16);

  // discardReadBytes with bytes to move.
  ro.readerIndex(2);
  CHECK_THROWS_AS(ro.discardReadBytes(), ReadOnlyBufferError);
  CHECK(ro.readerIndex() == 2);
  CHECK(ro.writerIndex() == 8);
  CHECK(b.getLong(0) == 0x0102030405060708LL);
  ro.setIndex(7, 8);  // discardSomeReadBytes: past half the capacity, bytes to move
  CHECK_THROWS_AS(ro.discardSomeReadBytes(), ReadOnlyBufferError);
  CHECK(ro.readerIndex() == 7);
  // ... and with everything read. Netty's read-only buffers throw here too; netbuf must not
  // silently reset the indices of a read-only handle in one case and throw in the other.
  ro.setIndex(8, 8);
  CHECK_THROWS_AS(ro.discardReadBytes(), ReadOnlyBufferError);
  CHECK(ro.readerIndex() == 8);
  CHECK(ro.writerIndex() == 8);
  ro.setIndex(8, 8);
  CHECK_THROWS_AS(ro.discardSomeReadBytes(), ReadOnlyBufferError);
  ro.setIndex(0, 8);

  // Reads, index moves and marks work.
  ro.readerIndex(0);
  CHECK(ro.readInt() == 0x01020304);
  ro.markReaderIndex();
  CHECK(ro.readInt() == 0x05060708);
  ro.resetReaderIndex();
  CHECK(ro.readerIndex() == 4);
  ro.writerIndex(6);
  CHECK(ro.readableBytes() == 2);
  ro.clear();
  CHECK(ro.writerIndex() == 0);

  // Derived handles of a read-only handle are read-only; copies are writable.
  ro.writerIndex(8);
  CHECK(ro.retainedSlice().isReadOnly());
  CHECK(ro.retainedSlice(0, 2).isReadOnly());
  CHECK(ro.retainedDuplicate().isReadOnly());
  CHECK(ro.readRetainedSlice(1).isReadOnly());
  CHECK(ro.asReadOnly().isReadOnly());
  ByteBuf c = ro.copy();
  CHECK_FALSE(c.isReadOnly());
  c.setByte(0, 42);
  CHECK(b.getByte(0) == 1);
  CHECK(ro.readBytes(2).isReadOnly() == false);
}

// ================================================================== copies and factories

TEST_CASE("copy is independent; copy(index, length) is checked") {
  ByteBuf b = bufOf({1, 2, 3, 4, 5});
  b.readByte();
  ByteBuf c = b.copy();
  CHECK(readable(c) == std::vector<int>{2, 3, 4, 5});
  CHECK(c.readerIndex() == 0);
  CHECK(c.capacity() == 4);
  CHECK(c.refCnt() == 1);
  CHECK(c.data() != b.data());
  c.setByte(0, 20);
  b.setByte(2, 30);
  CHECK(b.getByte(1) == 2);
  CHECK(c.getByte(1) == 3);
  c.writeByte(6);  // a copy can grow
  CHECK(c.readableBytes() == 5);

  ByteBuf c2 = b.copy(0, 5);
  CHECK(readable(c2) == std::vector<int>{1, 2, 30, 4, 5});
  ByteBuf c3 = b.copy(5, 0);
  CHECK(c3.readableBytes() == 0);
  CHECK_THROWS_AS(b.copy(3, 3), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(b.copy(3, 3), doctest::Contains("copy: index 3, length 3"),
                       IndexOutOfBoundsError);
  CHECK(readable(Unpooled::copiedBuffer(b)) == std::vector<int>{2, 30, 4, 5});
}

TEST_CASE("asReadOnly shares the bytes and the indices at the time of the call") {
  ByteBuf b = bufOf({1, 2, 3});
  b.readByte();
  ByteBuf ro = b.asReadOnly();
  CHECK(ro.readerIndex() == 1);
  CHECK(ro.writerIndex() == 3);
  CHECK(ro.data() == b.data());
  b.setByte(2, 9);
  CHECK(ro.getByte(2) == 9);
  b.readByte();
  CHECK(ro.readerIndex() == 1);  // own indices
}

TEST_CASE("wrappedBuffer(std::string&&): short (SSO) and long strings, no copy of long ones") {
  {
    std::string shortStr = "hi!";
    ByteBuf b = Unpooled::wrappedBuffer(std::move(shortStr));
    CHECK(kindOf(b) == kindOf(StorageKind::OwnedString));
    CHECK(b.readableStringView() == "hi!");
    CHECK(b.capacity() == 3);
    CHECK(b.maxCapacity() == 3);
    CHECK(b.writerIndex() == 3);
    b.setByte(0, 'H');
    CHECK(b.readableStringView() == "Hi!");
    ByteBuf s = b.retainedSlice(1, 2);
    b = ByteBuf();  // the slice keeps the string alive (ASan checks the SSO pointer)
    CHECK(s.readableStringView() == "i!");
  }
  {
    std::string longStr(1000, 'x');
    longStr[999] = 'y';
    const char* original = longStr.data();
    ByteBuf b = Unpooled::wrappedBuffer(std::move(longStr));
    CHECK(static_cast<const void*>(b.data()) == static_cast<const void*>(original));
    CHECK(b.readableBytes() == 1000);
    CHECK(b.getByte(999) == 'y');
    CHECK_THROWS_AS(b.writeByte('z'), IndexOutOfBoundsError);  // fixed capacity
    CHECK(b.maxCapacity() == 1000);
    ByteBuf c = b.copy();  // a copy keeps maxCapacity (as in Netty), in its own memory
    CHECK(c.maxCapacity() == 1000);
    CHECK(c.data() != b.data());
    c.setByte(999, 'z');
    CHECK(b.getByte(999) == 'y');
  }
  ByteBuf empty = Unpooled::wrappedBuffer(std::string());
  CHECK(empty.isValid());
  CHECK(empty.capacity() == 0);
}

TEST_CASE("wrappedBuffer(std::vector<std::byte>&&) takes the vector's memory") {
  std::vector<std::byte> v(100, std::byte{7});
  const std::byte* original = v.data();
  ByteBuf b = Unpooled::wrappedBuffer(std::move(v));
  CHECK(kindOf(b) == kindOf(StorageKind::OwnedVector));
  CHECK(b.data() == original);
  CHECK(b.readableBytes() == 100);
  CHECK(b.getByte(50) == 7);
  ByteBuf s = b.retainedSlice(10, 10);
  b.reset();
  CHECK(s.getByte(9) == 7);
  CHECK(s.data() == original + 10);
}

TEST_CASE("wrappedUnownedBuffer: writable spans write through, const memory is read-only") {
  std::array<std::byte, 8> mem{};
  {
    ByteBuf w = Unpooled::wrappedUnownedBuffer(std::span<std::byte>(mem));
    CHECK(kindOf(w) == kindOf(StorageKind::Unowned));
    CHECK_FALSE(w.isReadOnly());
    CHECK(w.writerIndex() == 8);
    CHECK(w.capacity() == 8);
    CHECK(w.maxCapacity() == 8);
    w.setInt(0, 0x01020304);
    CHECK(mem[0] == std::byte{1});
    CHECK(mem[3] == std::byte{4});
    w.clear();
    w.writeShortLE(0x0A0B);
    CHECK(mem[0] == std::byte{0x0B});
  }
  CHECK(mem[1] == std::byte{0x0A});  // the memory is not freed or changed by the last handle

  const std::array<std::byte, 4> cmem{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  ByteBuf r = Unpooled::wrappedUnownedBuffer(std::span<const std::byte>(cmem));
  CHECK(r.isReadOnly());
  CHECK(r.readInt() == 0x01020304);
  CHECK_THROWS_AS(r.setByte(0, 0), ReadOnlyBufferError);
  CHECK_THROWS_AS(r.writeByte(0), ReadOnlyBufferError);
  CHECK(r.retainedDuplicate().isReadOnly());

  const std::string text = "text";
  ByteBuf t = Unpooled::wrappedUnownedBuffer(std::string_view(text));
  CHECK(t.isReadOnly());
  CHECK(t.readableStringView() == "text");
  CHECK(static_cast<const void*>(t.data()) == static_cast<const void*>(text.data()));
}

TEST_CASE("copiedBuffer and zeroedBuffer") {
  std::string text = "abc";
  ByteBuf c = Unpooled::copiedBuffer(std::string_view(text));
  text[0] = 'X';
  CHECK(c.readableStringView() == "abc");
  CHECK(c.capacity() == 3);
  CHECK(kindOf(c) == kindOf(ByteBufAllocator::defaultAllocator().isPooled() ? StorageKind::Pooled
                                                                            : StorageKind::Heap));
  c.writeByte('d');  // copies can grow
  CHECK(c.readableStringView() == "abcd");
  ByteBuf e = Unpooled::copiedBuffer(std::string_view());
  CHECK(e.capacity() == 0);
  CHECK(e.readableBytes() == 0);

  // Dirty some heap memory first so that a non-zeroing allocator would likely show garbage.
  for (int i = 0; i < 4; ++i) {
    ByteBuf dirty = heapBuffer(4096);
    dirty.writeZero(4096);
    dirty.setZero(0, 4096);
    for (std::size_t j = 0; j < 4096; j += 8) dirty.setLong(j, -1);
  }
  ByteBuf z = Unpooled::zeroedBuffer(4096);
  CHECK(z.capacity() == 4096);
  CHECK(z.writerIndex() == 0);
  std::size_t nonZero = 0;
  for (std::size_t j = 0; j < 4096; ++j) nonZero += z.getByte(j) != 0 ? 1 : 0;
  CHECK(nonZero == 0);
  ByteBuf z0 = Unpooled::zeroedBuffer(0, 8);
  CHECK(z0.capacity() == 0);
  CHECK(z0.maxCapacity() == 8);
}

// ================================================================== bulk bytes

TEST_CASE("writeBytes from the buffer's own memory while the write forces growth") {
  ByteBuf b = heapBuffer(8, 1024);
  b.writeLong(0x0102030405060708LL);
  // src is the buffer's readable bytes; the write must reallocate, freeing the old memory.
  b.writeBytes(b.readableSpan());
  CHECK(b.readableBytes() == 16);
  CHECK(b.getLong(8) == 0x0102030405060708LL);
  b.writeBytes(b.readableSpan().subspan(4, 12));
  CHECK(b.readableBytes() == 28);
  CHECK(b.getInt(16) == 0x05060708);
  CHECK(b.getLong(20) == 0x0102030405060708LL);

  // The ByteBuf-source overloads, with *this as the source, also across growth.
  ByteBuf c = heapBuffer(4, 1024);
  c.writeInt(0x0A0B0C0D);
  c.writeBytes(c, 0, 4);
  CHECK(c.getInt(4) == 0x0A0B0C0D);
  c.getBytes(0, c, 8);  // appends c[0..8) to itself
  CHECK(c.readableBytes() == 16);
  CHECK(c.getLong(8) == c.getLong(0));
  c.readBytes(c, 16);  // reads all 16 and appends them
  CHECK(c.readerIndex() == 16);
  CHECK(c.writerIndex() == 32);
  CHECK(c.getLong(24) == c.getLong(0));
  c.readerIndex(0);
  c.writeBytes(c.readableSpan());  // 32 + 32: fills the 64 bytes exactly
  CHECK(c.capacity() == 64);
  c.writeBytes(c.readableSpan());  // 64 more: must grow while copying from the old memory
  CHECK(c.capacity() == 128);
  CHECK(c.writerIndex() == 128);
  for (std::size_t i = 0; i < 128; i += 4) CHECK(c.getInt(i) == 0x0A0B0C0D);
}

TEST_CASE("writeBytes(src, srcIndex, length) with *this overlapping the destination") {
  // No growth needed, but [srcIndex, srcIndex + length) overlaps [writerIndex, ...): the copy must
  // behave as memmove (Netty's setBytes on its own array is an arraycopy).
  ByteBuf b = heapBuffer(16, 16);
  b.writeInt(0x01020304);
  b.setInt(4, 0x05060708);  // bytes past writerIndex, inside capacity
  b.writeBytes(b, 2, 6);    // src [2, 8) -> dst [4, 10)
  CHECK(b.writerIndex() == 10);
  CHECK(b.hexDump(0, 10) == "01020304030405060708");

  ByteBuf c = heapBuffer(16, 16);
  c.writeInt(0x01020304);
  c.setInt(4, 0x05060708);
  c.getBytes(2, c, 6);  // same through getBytes(index, dst, length)
  CHECK(c.hexDump(0, 10) == "01020304030405060708");

  ByteBuf d = heapBuffer(16, 16);
  d.writeInt(0x01020304);
  d.setInt(4, 0x05060708);
  d.writeBytes(std::span<const std::byte>(d.data() + 2, 6));
  CHECK(d.hexDump(0, 10) == "01020304030405060708");
}

TEST_CASE("setBytes with overlapping source inside the buffer") {
  ByteBuf b = bufOf({1, 2, 3, 4, 5, 6, 7, 8});
  b.setBytes(2, b, 0, 6);
  CHECK(readable(b) == std::vector<int>{1, 2, 1, 2, 3, 4, 5, 6});
  b.setBytes(0, b.readableSpan().subspan(1));
  CHECK(readable(b) == std::vector<int>{2, 1, 2, 3, 4, 5, 6, 6});
}

TEST_CASE("readBytes variants") {
  ByteBuf b = bufOf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  std::array<std::byte, 3> three{};
  b.readBytes(three);
  CHECK(three[0] == std::byte{1});
  CHECK(three[2] == std::byte{3});
  CHECK(b.readerIndex() == 3);
  std::array<char, 2> raw{};
  b.readBytes(raw.data(), raw.size());
  CHECK(raw[1] == 5);
  b.readBytes(std::span<std::byte>());
  CHECK(b.readerIndex() == 5);

  ByteBuf dst = heapBuffer(2, 2);
  b.readBytes(dst);  // dst.writableBytes() == 2
  CHECK(readable(dst) == std::vector<int>{6, 7});
  CHECK(b.readerIndex() == 7);
  CHECK_FALSE(dst.isWritable());
  ByteBuf dst2 = heapBuffer(8, 8);
  CHECK_THROWS_AS(b.readBytes(dst2), IndexOutOfBoundsError);  // wants 8, only 3 readable
  CHECK(b.readerIndex() == 7);
  CHECK(dst2.writerIndex() == 0);

  ByteBuf grow = heapBuffer(0);
  b.readBytes(grow, 2);  // dst grows
  CHECK(readable(grow) == std::vector<int>{8, 9});
  CHECK(b.readerIndex() == 9);
  CHECK_THROWS_AS(b.readBytes(grow, 2), IndexOutOfBoundsError);
  CHECK(grow.writerIndex() == 2);

  ByteBuf full = heapBuffer(0, 0);
  CHECK_THROWS_AS(b.readBytes(full, 1), IndexOutOfBoundsError);  // dst cannot grow
  CHECK(b.readerIndex() == 9);                                   // the source did not advance

  ByteBuf out = b.readBytes(1);
  CHECK(readable(out) == std::vector<int>{10});
  CHECK(out.data() != b.data() + 9);
  CHECK_THROWS_WITH_AS(b.readBytes(1), doctest::Contains("readBytes: index 10, length 1"),
                       IndexOutOfBoundsError);
  ByteBuf none = b.readBytes(0);
  CHECK(none.readableBytes() == 0);
  CHECK(none.isValid());
  CHECK_THROWS_AS(b.readBytes(three), IndexOutOfBoundsError);
}

TEST_CASE("getBytes / setBytes / writeBytes between buffers") {
  ByteBuf src = bufOf({1, 2, 3, 4, 5, 6});
  src.readByte();
  ByteBuf dst = heapBuffer(8, 8);
  dst.writeZero(8);
  src.getBytes(1, dst, 4, 3);  // absolute: dst[4..7) = src[1..4)
  CHECK(range(dst, 0, 8) == std::vector<int>{0, 0, 0, 0, 2, 3, 4, 0});
  CHECK(src.readerIndex() == 1);
  CHECK(dst.writerIndex() == 8);
  CHECK_THROWS_AS(src.getBytes(4, dst, 0, 3), IndexOutOfBoundsError);  // source range
  CHECK_THROWS_AS(src.getBytes(0, dst, 6, 3), IndexOutOfBoundsError);  // destination range

  ByteBuf app = heapBuffer(2);
  src.getBytes(0, app, 6);  // appends, grows
  CHECK(readable(app) == std::vector<int>{1, 2, 3, 4, 5, 6});
  std::array<std::byte, 2> two{};
  src.getBytes(4, two);
  CHECK(two[0] == std::byte{5});
  src.getBytes(0, two.data(), 2);
  CHECK(two[1] == std::byte{2});
  CHECK_THROWS_WITH_AS(src.getBytes(5, two), doctest::Contains("getBytes: index 5, length 2"),
                       IndexOutOfBoundsError);

  dst.setBytes(0, src, 3, 3);
  CHECK(range(dst, 0, 3) == std::vector<int>{4, 5, 6});
  CHECK_THROWS_WITH_AS(dst.setBytes(0, src, 4, 3), doctest::Contains("index 4, length 3"),
                       IndexOutOfBoundsError);
  dst.setBytes(6, std::string_view("xy"));
  CHECK(dst.getByte(7) == 'y');
  CHECK_THROWS_AS(dst.setBytes(7, std::string_view("xy")), IndexOutOfBoundsError);

  ByteBuf w = heapBuffer(0);
  w.writeBytes(src);  // all readable of src, src consumed
  CHECK(readable(w) == std::vector<int>{2, 3, 4, 5, 6});
  CHECK(src.readerIndex() == 6);
  src.readerIndex(1);
  w.writeBytes(src, 2);
  CHECK(src.readerIndex() == 3);
  CHECK(w.readableBytes() == 7);
  CHECK_THROWS_AS(w.writeBytes(src, 4), IndexOutOfBoundsError);
  CHECK_THROWS_WITH_AS(w.writeBytes(src, 4), doctest::Contains("index 3, length 4"),
                       IndexOutOfBoundsError);
  CHECK(src.readerIndex() == 3);
  w.writeBytes(src, 0, 1);  // absolute, src indices unchanged
  CHECK(w.getByte(7) == 1);
  CHECK(src.readerIndex() == 3);
  CHECK_THROWS_AS(w.writeBytes(src, 5, 2), IndexOutOfBoundsError);
  w.writeBytes(netbuf::ByteBufView(std::string_view("Q")));
  CHECK(w.getByte(8) == 'Q');
  w.writeBytes("RS", 2);
  CHECK(w.readableBytes() == 11);

  // A full fixed-capacity destination makes writeBytes(ByteBuf&) fail before consuming the source.
  ByteBuf fixed = heapBuffer(1, 1);
  src.readerIndex(0);
  CHECK_THROWS_AS(fixed.writeBytes(src), IndexOutOfBoundsError);
  CHECK(src.readerIndex() == 0);
  CHECK(fixed.writerIndex() == 0);
}

TEST_CASE("setZero / writeZero") {
  ByteBuf b = heapBuffer(8, 16);
  b.writeLong(-1);
  b.setZero(2, 3);
  CHECK(readable(b) == std::vector<int>{0xFF, 0xFF, 0, 0, 0, 0xFF, 0xFF, 0xFF});
  CHECK(b.writerIndex() == 8);
  CHECK_THROWS_AS(b.setZero(6, 3), IndexOutOfBoundsError);
  CHECK(b.getByte(6) == -1);
  b.writeZero(4);  // grows
  CHECK(b.writerIndex() == 12);
  CHECK(b.capacity() == 16);
  CHECK(b.getInt(8) == 0);
  CHECK_THROWS_AS(b.writeZero(5), IndexOutOfBoundsError);
  CHECK(b.writerIndex() == 12);
}

// ================================================================== search

TEST_CASE("indexOf: forwards, backwards, clamping") {
  ByteBuf b = bufOf({'a', 'b', 'c', 'a', 'b', 'c'});
  const std::byte a{'a'};
  CHECK(b.indexOf(0, 6, a) == 0);
  CHECK(b.indexOf(1, 6, a) == 3);
  CHECK(b.indexOf(1, 3, a) == ByteBuf::npos);  // [1, 3)
  CHECK(b.indexOf(1, 4, a) == 3);
  CHECK(b.indexOf(0, 100, std::uint8_t{'c'}) == 2);  // clamped to capacity
  CHECK(b.indexOf(4, 4, a) == ByteBuf::npos);        // empty range
  CHECK(b.indexOf(100, 200, a) == ByteBuf::npos);
  // Backwards: last occurrence in [to, from).
  CHECK(b.indexOf(6, 0, a) == 3);
  CHECK(b.indexOf(3, 0, a) == 0);                 // [0, 3): index 3 itself is excluded
  CHECK(b.indexOf(100, 0, std::byte{'c'}) == 5);  // from clamped to capacity
  CHECK(b.indexOf(6, 4, a) == ByteBuf::npos);
  CHECK(b.indexOf(100, 6, a) == ByteBuf::npos);
  // indexOf works on [0, capacity) regardless of indices.
  b.readerIndex(5);
  CHECK(b.indexOf(0, 6, a) == 0);
  ByteBuf z = heapBuffer(0, 10);
  CHECK(z.indexOf(0, 10, a) == ByteBuf::npos);
  CHECK(z.indexOf(10, 0, a) == ByteBuf::npos);
}

TEST_CASE("bytesBefore") {
  ByteBuf b = bufOf({'x', 'y', '\r', '\n', 'z', '\r'});
  b.readByte();
  CHECK(b.bytesBefore(std::byte{'\r'}) == 1);  // relative to readerIndex
  CHECK(b.bytesBefore(std::byte{'q'}) == ByteBuf::npos);
  CHECK(b.bytesBefore(1, std::byte{'\r'}) == ByteBuf::npos);  // only the first 1 readable byte
  CHECK(b.bytesBefore(2, std::byte{'\r'}) == 1);
  CHECK_THROWS_WITH_AS((void)b.bytesBefore(6, std::byte{'\r'}),
                       doctest::Contains("bytesBefore: index 1, length 6"), IndexOutOfBoundsError);
  CHECK(b.bytesBefore(3, 3, std::byte{'\r'}) == 2);  // relative to index 3
  CHECK(b.bytesBefore(0, 6, std::byte{'x'}) == 0);
  CHECK_THROWS_AS((void)b.bytesBefore(4, 3, std::byte{'\r'}), IndexOutOfBoundsError);
}

TEST_CASE("forEachByte / forEachByteDesc with every ready-made processor") {
  namespace p = netbuf::processors;
  const std::string_view text("\0\0ab \t;c,d\r\n  x\v\0", 17);
  ByteBuf b = Unpooled::copiedBuffer(text);
  CHECK(b.forEachByte(p::findNonNul) == 2);
  CHECK(b.forEachByte(p::findNul) == 0);
  CHECK(b.forEachByte(p::findCr) == 10);
  CHECK(b.forEachByte(p::findLf) == 11);
  CHECK(b.forEachByte(p::findCrlf) == 10);
  CHECK(b.forEachByte(p::findSemicolon) == 6);
  CHECK(b.forEachByte(p::findComma) == 8);
  CHECK(b.forEachByte(p::findAsciiSpace) == 4);
  CHECK(b.forEachByte(p::findLinearWhitespace) == 4);
  CHECK(b.forEachByte(p::findWhitespace) == 4);
  CHECK(b.forEachByte(10, 7, p::findNonCrlf) == 12);
  CHECK(b.forEachByte(10, 7, p::findNonCr) == 11);
  CHECK(b.forEachByte(11, 6, p::findNonLf) == 12);
  CHECK(b.forEachByte(4, 3, p::findNonLinearWhitespace) == 6);
  CHECK(b.forEachByte(12, 2, p::findNonLinearWhitespace) == ByteBuf::npos);

  CHECK(b.forEachByteDesc(p::findNonNul) == 15);
  CHECK(b.forEachByteDesc(p::findWhitespace) == 15);  // \v
  CHECK(b.forEachByteDesc(p::findAsciiSpace) == 13);
  CHECK(b.forEachByteDesc(p::findCrlf) == 11);
  CHECK(b.forEachByteDesc(p::findCr) == 10);
  CHECK(b.forEachByteDesc(0, 12, p::findLf) == 11);
  CHECK(b.forEachByteDesc(0, 11, p::findLf) == ByteBuf::npos);
  CHECK(b.forEachByteDesc(0, 4, p::findNul) == 1);
  CHECK(b.forEachByteDesc(0, 0, p::findNul) == ByteBuf::npos);

  // The readable range only; absolute indices returned.
  b.readerIndex(3);
  b.writerIndex(9);
  CHECK(b.forEachByte(p::findNul) == ByteBuf::npos);
  CHECK(b.forEachByte(p::findComma) == 8);
  CHECK(b.forEachByteDesc(p::findNonLinearWhitespace) == 8);
  // A stateful callable: visits in order, stops early.
  std::string seen;
  const std::size_t stop = b.forEachByte([&seen](std::byte x) {
    seen.push_back(static_cast<char>(x));
    return x != std::byte{';'};
  });
  CHECK(stop == 6);
  CHECK(seen == "b \t;");
  seen.clear();
  CHECK(b.forEachByteDesc([&seen](std::byte x) {
    seen.push_back(static_cast<char>(x));
    return true;
  }) == ByteBuf::npos);
  CHECK(seen == ",c;\t b");
  CHECK_THROWS_WITH_AS((void)b.forEachByte(10, 8, p::findNul),
                       doctest::Contains("forEachByte: index 10, length 8"), IndexOutOfBoundsError);
  CHECK_THROWS_AS((void)b.forEachByteDesc(17, 1, p::findNul), IndexOutOfBoundsError);
}

// ================================================================== equality, hashing

TEST_CASE("equals / compare / hashCode / std::hash look at readable bytes only") {
  ByteBuf a = bufOf({1, 2, 3});
  ByteBuf b = heapBuffer(100);
  b.writeByte(9).writeByte(1).writeByte(2).writeByte(3);
  CHECK_FALSE(a.equals(b));
  b.readByte();
  CHECK(a.equals(b));
  CHECK(a == b);
  CHECK(a.compare(b) == 0);
  CHECK(a.hashCode() == b.hashCode());
  CHECK(std::hash<ByteBuf>{}(a) == std::hash<ByteBuf>{}(b));
  b.writeByte(0);  // a is a proper prefix
  CHECK(a.compare(b) < 0);
  CHECK(b.compare(a) > 0);
  CHECK_FALSE(a == b);
  ByteBuf hi = bufOf({0x80});
  ByteBuf lo = bufOf({0x7F});
  CHECK(hi.compare(lo) > 0);               // unsigned
  CHECK(ByteBuf().equals(heapBuffer(4)));  // both have no readable bytes

  std::unordered_set<ByteBuf> set;
  set.insert(bufOf({1, 2, 3}));
  set.insert(bufOf({1, 2}));
  CHECK(set.size() == 2);
  CHECK(set.count(a) == 1);
  CHECK(set.count(bufOf({1, 2, 3, 4})) == 0);
}

// ================================================================== debug text

TEST_CASE("hexDump and prettyHexDump: exact text for 20 bytes") {
  ByteBuf b = heapBuffer(32);
  b.writeByte(0x55);  // not part of the readable bytes once read
  b.writeBytes(std::string_view("Hello, netbuf!\x00\x01\x7f\x80\xff\n", 20));
  b.readByte();
  CHECK(b.hexDump() ==
        "48656c6c6f2c206e6574627566210001"
        "7f80ff0a");
  CHECK(b.hexDump(0, 3) == "554865");
  CHECK_THROWS_AS((void)b.hexDump(30, 3), IndexOutOfBoundsError);
  const std::string expected =
      "         +-------------------------------------------------+\n"
      "         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n"
      "+--------+-------------------------------------------------+----------------+\n"
      "|00000000| 48 65 6c 6c 6f 2c 20 6e 65 74 62 75 66 21 00 01 |Hello, netbuf!..|\n"
      "|00000010| 7f 80 ff 0a                                     |....            |\n"
      "+--------+-------------------------------------------------+----------------+";
  CHECK(b.prettyHexDump() == expected);
  CHECK(b.prettyHexDump(1, 20) == expected);  // offsets are relative to the dumped range
  CHECK(b.prettyHexDump(0, 1).find(
            "|00000000| 55                                              |U               |") !=
        std::string::npos);
  CHECK_THROWS_WITH_AS((void)b.prettyHexDump(20, 13),
                       doctest::Contains("prettyHexDump: index 20, length 13"),
                       IndexOutOfBoundsError);
  CHECK(fmt::format("{:x}", b) == expected);
}

TEST_CASE("fmt: {} prints the summary, {:x} the pretty dump, anything else is rejected") {
  ByteBuf b = heapBuffer(64);
  b.writeBytes(std::string_view("Hello"));
  CHECK(fmt::format("{}", b) == "ByteBuf(heap, ridx: 0, widx: 5, cap: 64/2147483647, refCnt: 1)");
  CHECK(fmt::format("[{}]", ByteBuf()) == "[ByteBuf(empty)]");
  const std::string pretty = fmt::format("{:x}", b);
  CHECK(pretty.find(
            "|00000000| 48 65 6c 6c 6f                                  |Hello           |") !=
        std::string::npos);
  CHECK_THROWS_AS((void)fmt::format(fmt::runtime("{:y}"), b), fmt::format_error);
  CHECK_THROWS_AS((void)fmt::format(fmt::runtime("{:xx}"), b), fmt::format_error);
}

// ================================================================== Asio interop

TEST_CASE("Asio interop: readableBuffer, writableBuffer, commitWrite, buffer_copy") {
  ByteBuf b = heapBuffer(8, 64);
  b.writeShort(0x0102);
  b.readByte();
  boost::asio::const_buffer rb = b.readableBuffer();
  CHECK(rb.size() == 1);
  CHECK(rb.data() == b.data() + 1);

  boost::asio::mutable_buffer wb = b.writableBuffer();
  CHECK(wb.size() == 6);
  CHECK(wb.data() == b.data() + 2);
  const std::string payload = "abcdefghij";
  std::size_t n = boost::asio::buffer_copy(wb, boost::asio::buffer(payload));
  CHECK(n == 6);
  CHECK(b.writerIndex() == 2);  // nothing readable until committed
  b.commitWrite(n);
  CHECK(b.writerIndex() == 8);
  CHECK(b.readableStringView() == std::string_view("\x02"
                                                   "abcdef",
                                                   7));
  CHECK_THROWS_AS(b.commitWrite(1), IndexOutOfBoundsError);
  CHECK(messageOf([&] {
          b.commitWrite(1);
        }).starts_with("commitWrite: 1 bytes exceeds writableBytes 0 in ByteBuf(heap"));
  b.commitWrite(0);

  // writableBuffer(min) grows first.
  boost::asio::mutable_buffer wb2 = b.writableBuffer(10);
  CHECK(wb2.size() >= 10);
  CHECK(b.capacity() == 64);
  CHECK(wb2.size() == 56);
  n = boost::asio::buffer_copy(wb2, boost::asio::buffer(payload));
  b.commitWrite(n);
  CHECK(b.readableStringView() == std::string_view("\x02"
                                                   "abcdefabcdefghij",
                                                   17));
  // Copying out through the readable buffer.
  std::array<char, 32> out{};
  n = boost::asio::buffer_copy(boost::asio::buffer(out), b.readableBuffer());
  CHECK(n == 17);
  CHECK(std::string_view(out.data(), n) == b.readableStringView());
  CHECK_THROWS_AS(b.writableBuffer(100), IndexOutOfBoundsError);
  // A full buffer has an empty writable region, and a commit of 0.
  ByteBuf full = heapBuffer(2, 2);
  full.writeShort(1);
  CHECK(full.writableBuffer().size() == 0);
}

TEST_CASE("views from slice() and readSlice()") {
  ByteBuf b = bufOf({1, 2, 3, 4, 5});
  b.readByte();
  netbuf::ByteBufView v = b.slice();
  CHECK(v.size() == 4);
  CHECK(v.getByte(0) == 2);
  CHECK(b.refCnt() == 1);
  netbuf::ByteBufView v2 = b.slice(0, 5);
  CHECK(v2.getInt(1) == 0x02030405);
  CHECK_THROWS_WITH_AS((void)b.slice(3, 3), doctest::Contains("slice: index 3, length 3"),
                       IndexOutOfBoundsError);
  netbuf::ByteBufView r = b.readSlice(2);
  CHECK(r.readShort() == 0x0203);
  CHECK(b.readerIndex() == 3);
  CHECK_THROWS_AS((void)b.readSlice(3), IndexOutOfBoundsError);
  CHECK(b.readerIndex() == 3);
  b.setByte(4, 50);
  CHECK(v.getByte(3) == 50);  // a view sees the live bytes
}

TEST_CASE("indices at the top of the 32-bit range: no truncation, growth refused past the limit") {
  // 4 GiB - 1 bytes of address space, inaccessible (and not committed) except the first and the
  // last page, which are all the test touches: a stray access anywhere else faults.
  const std::size_t n = netbuf::kMaxCapacityLimit;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* mem = ::mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  auto* bytes = static_cast<std::byte*>(mem);
  const std::size_t lastPage = (n - 1) / page * page;
  REQUIRE(::mprotect(bytes, page, PROT_READ | PROT_WRITE) == 0);
  REQUIRE(::mprotect(bytes + lastPage, n - lastPage, PROT_READ | PROT_WRITE) == 0);
  ByteBuf b = Unpooled::wrappedBuffer(mem, n, [](void* p, std::size_t size) { ::munmap(p, size); });
  CHECK(b.capacity() == n);
  CHECK(b.maxCapacity() == n);
  CHECK(b.writerIndex() == n);
  CHECK(b.readableBytes() == n);
  b.setLong(n - 8, 0x0102030405060708);
  b.setByte(0, 0x55);
  b.readerIndex(n - 8);
  b.markReaderIndex();
  CHECK(b.readLong() == 0x0102030405060708);
  CHECK(b.readerIndex() == n);
  CHECK(!b.isReadable());
  b.resetReaderIndex();
  CHECK(b.readerIndex() == n - 8);
  b.setIndex(n - 1, n);
  CHECK(b.readableBytes() == 1);
  CHECK(b.getByte(n - 1) == 0x08);
  CHECK_THROWS_AS(b.writerIndex(n + 1), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.getByte(n), IndexOutOfBoundsError);
  // Multi-byte accesses across the end: the sums are taken in 64 bits, so none wraps to a small
  // index that would pass the check.
  CHECK_THROWS_AS(b.getLong(n - 7), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.setInt(n - 3, 1), IndexOutOfBoundsError);
  CHECK_THROWS_AS(b.readLong(), IndexOutOfBoundsError);  // one byte readable
  CHECK(b.readerIndex() == n - 1);
  CHECK_THROWS_AS((void)b.retainedSlice(n - 8, 9), IndexOutOfBoundsError);
  ByteBuf tail = b.retainedSlice(n - 16, 16);
  CHECK(tail.getLong(8) == 0x0102030405060708);
  // No room and no growth: maxCapacity is the limit.
  CHECK((b.ensureWritable(1, false) == netbuf::EnsureWritableResult::NotEnoughUnchanged));
  CHECK_THROWS_AS(b.writeByte(1), IndexOutOfBoundsError);
  // discardReadBytes moves the one readable byte to 0 and the marks down with it.
  b.markWriterIndex();
  b.discardReadBytes();
  CHECK(b.readerIndex() == 0);
  CHECK(b.writerIndex() == 1);
  CHECK(b.getByte(0) == 0x08);
  b.resetWriterIndex();
  CHECK(b.writerIndex() == 1);
  CHECK_THROWS_AS(Unpooled::buffer(0, n + 1), IllegalArgumentError);
  // Wrapping more than the limit is refused before any storage is made (LeakSanitizer checks
  // that none leaks); the memory is never touched.
  CHECK_THROWS_AS(Unpooled::wrappedUnownedBuffer(std::span<std::byte>(bytes, n + 1)),
                  IllegalArgumentError);
  CHECK_THROWS_AS(Unpooled::wrappedBuffer(mem, n + 1, [](void*, std::size_t) {}),
                  IllegalArgumentError);
  // Text bounds are not capped at the buffer limit: scratch memory is sized by them.
  static_assert(netbuf::detail::textBound(n, 3) == 3 * n);
  static_assert(netbuf::detail::textBound(SIZE_MAX / 2, 3) == SIZE_MAX);
}

TEST_CASE("buffer() releases a block smaller than it asked for, and throws") {
  SlackAllocator a;
  a.shortBlocks = true;
  CHECK_THROWS_WITH_AS(
      a.buffer(16, 32),
      "ByteBufAllocator::buffer: allocateStorage returned 8 bytes for a request of 16",
      IllegalArgumentError);
  CHECK(a.frees == 1);
  ByteBuf empty = a.buffer(0, 32);  // 0 of 0 bytes: the promise holds
  CHECK(empty.capacity() == 0);
  CHECK(empty.maxCapacity() == 32);
  // Reallocation asks the same allocator (for 32 bytes: the policy's 64 capped at maxCapacity)
  // and checks too; the buffer keeps its old storage.
  CHECK_THROWS_WITH_AS(
      empty.writeInt(1),
      "ByteBuf reallocation: allocateStorage returned 16 bytes for a request of 32",
      IllegalArgumentError);
  CHECK(a.frees == 2);
  CHECK(empty.capacity() == 0);
  CHECK(empty.writerIndex() == 0);
  empty.reset();
  CHECK(a.frees == 3);
}

TEST_CASE("ByteBuf::adopt validates its storage") {
  CHECK_THROWS_AS(ByteBuf::adopt(nullptr, 0, 0), IllegalArgumentError);
  netbuf::detail::Storage* s = netbuf::UnpooledByteBufAllocator::instance().allocateStorage(8);
  CHECK(s->size >= 8);
  CHECK(s->refs.load() == 1);
  CHECK_THROWS_AS(ByteBuf::adopt(s, 9, 16), IllegalArgumentError);
  CHECK_THROWS_AS(ByteBuf::adopt(s, 8, 4), IllegalArgumentError);
  CHECK_THROWS_WITH_AS(ByteBuf::adopt(s, 8, netbuf::kMaxCapacityLimit + 1),
                       doctest::Contains("do not fit storage of 8 bytes"), IllegalArgumentError);
  ByteBuf b = ByteBuf::adopt(s, 8, 16);
  CHECK(b.capacity() == 8);
  CHECK(b.maxCapacity() == 16);
  CHECK(b.refCnt() == 1);
}

TEST_CASE("batched retained slices: references from a credit, returned when the handle lets go") {
  int frees = 0;
  auto* mem = static_cast<std::byte*>(std::malloc(256));
  REQUIRE(mem != nullptr);
  std::vector<ByteBuf> slices;
  {
    ByteBuf buf = Unpooled::wrappedBuffer(mem, 256, [&frees](void* p, std::size_t) {
      ++frees;
      std::free(p);
    });
    buf.setIndex(0, 256);
    buf.setByte(10, 'x');
    for (int i = 0; i < 100; ++i) slices.push_back(buf.readRetainedSliceBatched(2));
    CHECK(buf.readerIndex() == 200);
    CHECK(slices[5].getByte(0) == 'x');
    CHECK(slices[5].capacity() == 2);
    CHECK(slices[5].maxCapacity() == 2);
    // refCnt() of the buffer excludes its own unspent credit; the slices see it included.
    CHECK(buf.refCnt() == 101);
    CHECK(slices[0].refCnt() > 101);
    ByteBuf at = buf.retainedSliceBatched(250, 6);
    CHECK(at.readableBytes() == 6);
    CHECK(buf.refCnt() == 102);
    CHECK_THROWS_AS(buf.readRetainedSliceBatched(57), netbuf::IndexOutOfBoundsError);
    CHECK_THROWS_AS(buf.retainedSliceBatched(250, 7), netbuf::IndexOutOfBoundsError);
    // Moving transfers the credit with the reference.
    ByteBuf moved = std::move(buf);
    CHECK(moved.refCnt() == 102);
    CHECK(buf.refCnt() == 0);
  }
  CHECK(frees == 0);                 // 101 slices still hold the storage
  CHECK(slices[0].refCnt() == 100);  // the credit went back with the last buffer handle
  slices.clear();
  CHECK(frees == 1);
  ByteBuf empty;
  CHECK_THROWS_AS(empty.readRetainedSliceBatched(0), netbuf::EmptyBufferError);
  CHECK_THROWS_AS(empty.retainedSliceBatched(0, 0), netbuf::EmptyBufferError);
}

TEST_CASE("batched retained slices: reallocation returns the credit to the old storage") {
  int frees = 0;
  auto* mem = static_cast<std::byte*>(std::malloc(8));
  REQUIRE(mem != nullptr);
  ByteBuf buf = Unpooled::wrappedBuffer(mem, 8, [&frees](void* p, std::size_t) {
    ++frees;
    std::free(p);
  });
  buf.setIndex(0, 8);
  ByteBuf slice = buf.readRetainedSliceBatched(4);
  // A wrapped buffer cannot grow (fixed capacity); copy it into a growable one instead and check
  // that a growable buffer's credit goes back when it moves to fresh memory.
  ByteBuf grow = Unpooled::buffer(8);
  grow.writeZero(8);
  ByteBuf g1 = grow.readRetainedSliceBatched(4);
  CHECK(grow.refCnt() == 2);
  grow.writeZero(100);  // reallocates: the old storage keeps only g1's reference
  CHECK(g1.refCnt() == 1);
  CHECK(grow.refCnt() == 1);
  slice.reset();
  buf.reset();
  CHECK(frees == 1);
}
