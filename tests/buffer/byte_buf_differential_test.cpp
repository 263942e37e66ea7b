// Differential test: random operations applied to a ByteBuf and to a trivially correct model (a
// byte string for the memory, a "known" mask for bytes whose value is defined, two indices, two
// marks and the capacity), compared after every step. Both must agree on which operations throw.
// The seed comes from NETBUF_TEST_SEED (or fixed defaults) and is printed on failure.
#include <netbuf/buffer/byte_buf.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

using netbuf::ByteBuf;

namespace {

constexpr std::size_t kThreshold = std::size_t{4} << 20;

/// Netty's growth policy, written independently of the library.
std::size_t policy(std::size_t minNew, std::size_t max) {
  if (minNew == kThreshold) return kThreshold;
  if (minNew > kThreshold) {
    const std::size_t c = minNew / kThreshold * kThreshold;
    return c > max - std::min(max, kThreshold) ? max : c + kThreshold;
  }
  std::size_t c = 64;
  while (c < minNew) c <<= 1;
  return std::min(c, max);
}

struct Model {
  std::string mem;          // capacity bytes
  std::vector<bool> known;  // whether mem[i] has a defined value
  std::size_t r = 0, w = 0, cap = 0, max = 0, mr = 0, mw = 0;

  bool grow(std::size_t n) {  // ensureWritable(n); false = throws
    if (n <= cap - w) return true;
    if (n > max - w) return false;
    resize(policy(w + n, max));
    return true;
  }
  void resize(std::size_t c) {
    mem.resize(c, '\0');
    known.resize(c, false);
    cap = c;
    if (w > c) {
      r = std::min(r, c);
      w = c;
    }
  }
  void put(std::size_t at, const std::string& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      mem[at + i] = bytes[i];
      known[at + i] = true;
    }
  }
  bool allKnown(std::size_t at, std::size_t n) const {
    for (std::size_t i = at; i < at + n; ++i)
      if (!known[i]) return false;
    return true;
  }
  void adjustMarks(std::size_t d) {
    // Netty's adjustMarkers, with the marks clamped at 0 (they can never point before the start).
    mr = mr <= d ? 0 : mr - d;
    mw = mw <= d ? 0 : mw - d;
  }
  void discard() {
    if (r == 0) return;
    const std::string live = mem.substr(r, w - r);
    std::vector<bool> liveKnown(known.begin() + static_cast<std::ptrdiff_t>(r),
                                known.begin() + static_cast<std::ptrdiff_t>(w));
    for (std::size_t i = 0; i < live.size(); ++i) {
      mem[i] = live[i];
      known[i] = liveKnown[i];
    }
    adjustMarks(r);
    w -= r;
    r = 0;
  }
};

std::string bigEndianBytes(std::uint64_t v, std::size_t n, bool little) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    const auto byte = static_cast<char>((v >> (8 * (n - 1 - i))) & 0xFF);
    out[little ? n - 1 - i : i] = byte;
  }
  return out;
}

std::uint64_t fromBytes(const std::string& b, bool little) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto u = static_cast<unsigned char>(little ? b[b.size() - 1 - i] : b[i]);
    v = (v << 8) | u;
  }
  return v;
}

/// Reads an n-byte unsigned value through the buffer's own API, in the given order.
std::uint64_t getWidth(const ByteBuf& b, std::size_t i, std::size_t n, bool le) {
  switch (n) {
    case 1:
      return b.getUnsignedByte(i);
    case 2:
      return le ? b.getUnsignedShortLE(i) : b.getUnsignedShort(i);
    case 3:
      return le ? b.getUnsignedMediumLE(i) : b.getUnsignedMedium(i);
    case 4:
      return le ? b.getUnsignedIntLE(i) : b.getUnsignedInt(i);
    default:
      return le ? b.getUnsignedLongLE(i) : b.getUnsignedLong(i);
  }
}
std::uint64_t readWidth(ByteBuf& b, std::size_t n, bool le) {
  switch (n) {
    case 1:
      return b.readUnsignedByte();
    case 2:
      return le ? b.readUnsignedShortLE() : b.readUnsignedShort();
    case 3:
      return le ? b.readUnsignedMediumLE() : b.readUnsignedMedium();
    case 4:
      return le ? b.readUnsignedIntLE() : b.readUnsignedInt();
    default:
      return le ? b.readUnsignedLongLE() : b.readUnsignedLong();
  }
}
void setWidth(ByteBuf& b, std::size_t i, std::size_t n, bool le, std::uint64_t v) {
  switch (n) {
    case 1:
      b.setByte(i, static_cast<std::int8_t>(v));
      break;
    case 2:
      le ? b.setShortLE(i, static_cast<std::int16_t>(v))
         : b.setShort(i, static_cast<std::int16_t>(v));
      break;
    case 3:
      le ? b.setMediumLE(i, static_cast<std::int32_t>(v))
         : b.setMedium(i, static_cast<std::int32_t>(v));
      break;
    case 4:
      le ? b.setIntLE(i, static_cast<std::int32_t>(v)) : b.setInt(i, static_cast<std::int32_t>(v));
      break;
    default:
      le ? b.setLongLE(i, static_cast<std::int64_t>(v))
         : b.setLong(i, static_cast<std::int64_t>(v));
      break;
  }
}
void writeWidth(ByteBuf& b, std::size_t n, bool le, std::uint64_t v) {
  switch (n) {
    case 1:
      b.writeByte(static_cast<std::int8_t>(v));
      break;
    case 2:
      le ? b.writeShortLE(static_cast<std::int16_t>(v))
         : b.writeShort(static_cast<std::int16_t>(v));
      break;
    case 3:
      le ? b.writeMediumLE(static_cast<std::int32_t>(v))
         : b.writeMedium(static_cast<std::int32_t>(v));
      break;
    case 4:
      le ? b.writeIntLE(static_cast<std::int32_t>(v)) : b.writeInt(static_cast<std::int32_t>(v));
      break;
    default:
      le ? b.writeLongLE(static_cast<std::int64_t>(v)) : b.writeLong(static_cast<std::int64_t>(v));
      break;
  }
}

std::uint64_t maskOf(std::size_t n) {
  return n == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1;
}

std::vector<std::uint64_t> seeds() {
  if (const char* env = std::getenv("NETBUF_TEST_SEED"); env != nullptr && *env != '\0')
    return {std::strtoull(env, nullptr, 0)};
  return {1, 2, 3, 0x5eed, 20240601, 987654321};
}

/// Runs one seeded sequence; returns the number of steps done.
void runSequence(std::uint64_t seed, int steps) {
  CAPTURE(seed);
  INFO("reproduce with NETBUF_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  auto pick = [&rng](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };

  const std::size_t max = 64 + pick(400);
  const std::size_t initial = pick(std::min<std::size_t>(max, 40) + 1);
  ByteBuf buf = netbuf::UnpooledByteBufAllocator::instance().buffer(initial, max);
  Model m;
  m.max = max;
  m.resize(initial);

  // An index near the interesting boundaries: 0, r, w, cap, max, just past them, or random.
  auto anyIndex = [&]() -> std::size_t {
    switch (pick(8)) {
      case 0:
        return 0;
      case 1:
        return m.r + pick(3);
      case 2:
        return m.w + pick(3) - (m.w > 0 ? 1 : 0);
      case 3:
        return m.cap + pick(3) - (m.cap > 1 ? 2 : 0);
      case 4:
        return max + pick(2);
      default:
        return pick(m.cap + 8);
    }
  };

  for (int step = 0; step < steps; ++step) {
    const std::size_t op = pick(22);
    CAPTURE(step);
    CAPTURE(op);
    bool threw = false;
    bool modelThrows = false;
    try {
      switch (op) {
        case 0:
        case 1: {  // write primitive
          const std::size_t n = 1 + pick(8) % 8;
          const std::size_t width = n == 5 || n == 6 || n == 7 ? 8 : n;
          const bool le = pick(2) == 1;
          const std::uint64_t v = rng();
          modelThrows = !m.grow(width);
          if (!modelThrows) {
            m.put(m.w, bigEndianBytes(v & maskOf(width), width, le));
            m.w += width;
          }
          writeWidth(buf, width, le, v);
          break;
        }
        case 2: {  // read primitive
          const std::size_t width = std::size_t{1} + pick(4);
          const std::size_t wd = width == 5 ? 8 : width;
          const bool le = pick(2) == 1;
          modelThrows = wd > m.w - m.r;
          std::optional<std::uint64_t> expect;
          if (!modelThrows && m.allKnown(m.r, wd)) expect = fromBytes(m.mem.substr(m.r, wd), le);
          const std::uint64_t got = readWidth(buf, wd, le);
          if (!modelThrows) m.r += wd;
          if (expect) CHECK(got == *expect);
          break;
        }
        case 3: {  // get primitive
          const std::size_t wd = std::size_t{1} << pick(4);
          const std::size_t width = wd == 1 && pick(2) ? 3 : wd;
          const bool le = pick(2) == 1;
          const std::size_t i = anyIndex();
          modelThrows = i > m.cap || width > m.cap - i;
          std::optional<std::uint64_t> expect;
          if (!modelThrows && m.allKnown(i, width)) expect = fromBytes(m.mem.substr(i, width), le);
          const std::uint64_t got = getWidth(buf, i, width, le);
          if (expect) CHECK(got == *expect);
          break;
        }
        case 4: {  // set primitive
          const std::size_t width = pick(5) + 1 == 5 ? 8 : pick(4) + 1;
          const bool le = pick(2) == 1;
          const std::size_t i = anyIndex();
          const std::uint64_t v = rng();
          modelThrows = i > m.cap || width > m.cap - i;
          if (!modelThrows) m.put(i, bigEndianBytes(v & maskOf(width), width, le));
          setWidth(buf, i, width, le, v);
          break;
        }
        case 5: {  // writeBytes from outside memory
          std::string bytes(pick(80), '\0');
          for (char& c : bytes) c = static_cast<char>(rng());
          modelThrows = !m.grow(bytes.size());
          if (!modelThrows) {
            m.put(m.w, bytes);
            m.w += bytes.size();
          }
          buf.writeBytes(std::string_view(bytes));
          break;
        }
        case 6: {  // writeBytes from the buffer's own readable bytes (aliasing, maybe growing)
          const std::size_t n = pick(m.w - m.r + 1);
          const std::string src = m.mem.substr(m.r, n);
          const bool srcKnown = m.allKnown(m.r, n);
          modelThrows = !m.grow(n);
          if (!modelThrows) {
            m.put(m.w, src);
            if (!srcKnown) {
              for (std::size_t i = 0; i < n; ++i) m.known[m.w + i] = m.known[m.r + i];
            }
            m.w += n;
          }
          buf.writeBytes(buf.readableSpan().subspan(0, n));
          break;
        }
        case 7: {  // readBytes into a span
          const std::size_t n = pick(m.w - m.r + 4);
          modelThrows = n > m.w - m.r;
          std::string out(n, '\0');
          const std::string expect = modelThrows ? std::string() : m.mem.substr(m.r, n);
          const bool k = !modelThrows && m.allKnown(m.r, n);
          buf.readBytes(out.data(), n);
          if (k) CHECK(out == expect);
          if (!modelThrows) m.r += n;
          break;
        }
        case 8: {  // skipBytes
          const std::size_t n = pick(m.w - m.r + 3);
          modelThrows = n > m.w - m.r;
          buf.skipBytes(n);
          if (!modelThrows) m.r += n;
          break;
        }
        case 9: {  // readerIndex
          const std::size_t i = anyIndex();
          modelThrows = i > m.w;
          buf.readerIndex(i);
          if (!modelThrows) m.r = i;
          break;
        }
        case 10: {  // writerIndex
          const std::size_t i = anyIndex();
          modelThrows = i < m.r || i > m.cap;
          buf.writerIndex(i);
          if (!modelThrows) m.w = i;
          break;
        }
        case 11: {  // setIndex
          const std::size_t a = anyIndex(), b = anyIndex();
          modelThrows = a > b || b > m.cap;
          buf.setIndex(a, b);
          if (!modelThrows) {
            m.r = a;
            m.w = b;
          }
          break;
        }
        case 12:
          buf.discardReadBytes();
          m.discard();
          break;
        case 13:
          buf.discardSomeReadBytes();
          if (m.r != 0 && (m.r == m.w || m.r >= m.cap / 2)) m.discard();
          break;
        case 14: {  // ensureWritable(n) and the status form
          const std::size_t n = pick(std::max<std::size_t>(max - m.w, 1) + 8);
          if (pick(2) == 0) {
            modelThrows = !m.grow(n);
            buf.ensureWritable(n);
          } else {
            const bool force = pick(2) == 1;
            int expect = 0;
            if (n <= m.cap - m.w) {
              expect = 0;
            } else if (n > m.max - m.w) {
              if (!force || m.cap == m.max) {
                expect = 1;
              } else {
                m.resize(m.max);
                expect = 2;
              }
            } else {
              m.grow(n);
              expect = 3;
            }
            CHECK(static_cast<int>(buf.ensureWritable(n, force)) == expect);
          }
          break;
        }
        case 15: {  // capacity(n)
          const std::size_t c = pick(max + 4);
          modelThrows = c > max;
          buf.capacity(c);
          if (!modelThrows) m.resize(c);
          break;
        }
        case 16:
          buf.clear();
          m.r = m.w = 0;
          break;
        case 17:
          if (pick(2)) {
            buf.markReaderIndex();
            m.mr = m.r;
          } else {
            buf.markWriterIndex();
            m.mw = m.w;
          }
          break;
        case 18:
          if (pick(2)) {
            modelThrows = m.mr > m.w;
            buf.resetReaderIndex();
            if (!modelThrows) m.r = m.mr;
          } else {
            modelThrows = m.mw < m.r || m.mw > m.cap;
            buf.resetWriterIndex();
            if (!modelThrows) m.w = m.mw;
          }
          break;
        case 19: {  // retainedSlice of a random range, read through it, sharing writes
          const std::size_t i = anyIndex();
          const std::size_t n = pick(24);
          modelThrows = i > m.cap || n > m.cap - i;
          ByteBuf s = buf.retainedSlice(i, n);
          CHECK(s.refCnt() == 2);
          CHECK(s.readableBytes() == n);
          for (std::size_t k = 0; k < n; ++k) {
            if (m.known[i + k])
              CHECK(s.getUnsignedByte(k) == static_cast<unsigned char>(m.mem[i + k]));
          }
          if (n > 0) {
            const auto v = static_cast<std::int8_t>(rng());
            s.setByte(n - 1, v);  // visible through the original
            m.put(i + n - 1, std::string(1, static_cast<char>(v)));
          }
          break;
        }
        case 20: {  // readRetainedSlice
          const std::size_t n = pick(m.w - m.r + 3);
          modelThrows = n > m.w - m.r;
          ByteBuf s = buf.readRetainedSlice(n);
          if (!modelThrows) {
            for (std::size_t k = 0; k < n; ++k) {
              if (m.known[m.r + k])
                CHECK(s.getUnsignedByte(k) == static_cast<unsigned char>(m.mem[m.r + k]));
            }
            m.r += n;
          }
          break;
        }
        case 21: {  // copy: equal readable bytes, independent memory
          ByteBuf c = buf.copy();
          CHECK(c.readableBytes() == m.w - m.r);
          CHECK(c.refCnt() == 1);
          if (c.readableBytes() > 0 && m.allKnown(m.r, m.w - m.r)) {
            CHECK(c.equals(buf));
            c.setByte(0, static_cast<std::int8_t>(~c.getByte(0)));
            CHECK(buf.getUnsignedByte(m.r) == static_cast<unsigned char>(m.mem[m.r]));
          }
          break;
        }
        default:
          break;
      }
    } catch (const netbuf::IndexOutOfBoundsError&) {
      threw = true;
    }
    REQUIRE(threw == modelThrows);
    REQUIRE(buf.readerIndex() == m.r);
    REQUIRE(buf.writerIndex() == m.w);
    REQUIRE(buf.capacity() == m.cap);
    REQUIRE(buf.maxCapacity() == m.max);
    REQUIRE(buf.refCnt() == 1);
    // Readable (known) bytes agree after every step; the whole capacity every 16 steps.
    const std::size_t from = step % 16 == 0 ? 0 : m.r;
    const std::size_t to = step % 16 == 0 ? m.cap : m.w;
    for (std::size_t i = from; i < to; ++i) {
      if (m.known[i] && buf.getUnsignedByte(i) != static_cast<unsigned char>(m.mem[i])) {
        FAIL("byte " << i << " differs: buffer " << buf.getUnsignedByte(i) << ", model "
                     << static_cast<unsigned>(static_cast<unsigned char>(m.mem[i])));
      }
    }
  }
}

}  // namespace

TEST_CASE("ByteBuf agrees with a trivially correct model over random operation sequences") {
  for (const std::uint64_t seed : seeds()) runSequence(seed, 15000);
}

TEST_CASE("model self-check: the growth policy model matches the library's") {
  for (std::size_t n : {0u, 1u, 63u, 64u, 65u, 1000u, 4u << 20, (4u << 20) + 1, 9u << 20}) {
    CAPTURE(n);
    CHECK(policy(n, netbuf::kDefaultMaxCapacity) ==
          netbuf::ByteBufAllocator::calculateNewCapacity(n, netbuf::kDefaultMaxCapacity));
  }
}
