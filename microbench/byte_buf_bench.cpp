// ByteBuf hot paths beside the code a user would otherwise write.
//
// Every netbuf benchmark has a baseline doing the same work on the same data:
//   * primitives:   kValues values per iteration into a reused buffer (clear() each iteration)
//                   versus a pre-sized std::vector<std::uint8_t> written with memcpy through a
//                   local offset (plus a byte swap for big-endian): the "raw memcpy" baseline.
//   * growth:       appending from a 64-byte buffer up to 1 MiB versus std::vector growth.
//   * sharing:      retainedSlice / readRetainedSlice create + destroy versus copying a
//                   std::shared_ptr (one atomic increment and decrement, the same work).
//   * bytes:        writeBytes of 64 B and 4 KiB versus memcpy into a vector.
//
// Names are "<operation>/netbuf" and "<operation>/baseline" so the ratio is read off adjacent rows.
// Results, the command and the machine: docs/benchmarks.md.
//
// Fairness notes. Input values come from a random array, so neither side can constant-fold them.
// Writers end the iteration with DoNotOptimize(pointer) + ClobberMemory(), which makes the written
// bytes observable without forcing anything inside the loop. Readers fold every value into a sum
// that escapes once per iteration (never DoNotOptimize per value: its "memory" clobber would force
// ByteBuf's indices through memory on every value and penalise netbuf unfairly).

#include <benchmark/benchmark.h>

#include <boost/endian/conversion.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <netbuf/buffer/byte_buf_reader.hpp>
#include <netbuf/buffer/byte_buf_writer.hpp>
#include <netbuf/netbuf.hpp>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

using netbuf::ByteBuf;
using netbuf::Unpooled;

constexpr std::size_t kValues = 1024;

template <class T>
std::vector<T> randomValues() {
  std::mt19937_64 rng(42);
  std::vector<T> values(kValues);
  for (auto& v : values) v = static_cast<T>(rng());
  return values;
}

enum class Order { Big, Little };

template <class T, Order O>
T toWire(T v) {
  if constexpr (O == Order::Big) {
    return boost::endian::native_to_big(v);
  } else {
    return boost::endian::native_to_little(v);
  }
}

template <class T, Order O>
T fromWire(T v) {
  if constexpr (O == Order::Big) {
    return boost::endian::big_to_native(v);
  } else {
    return boost::endian::little_to_native(v);
  }
}

// The four ByteBuf calls under test, chosen by type and order.
template <class T, Order O>
void bufWrite(ByteBuf& buf, T v) {
  if constexpr (sizeof(T) == 4) {
    if constexpr (O == Order::Big) {
      buf.writeInt(static_cast<std::int32_t>(v));
    } else {
      buf.writeIntLE(static_cast<std::int32_t>(v));
    }
  } else {
    if constexpr (O == Order::Big) {
      buf.writeLong(static_cast<std::int64_t>(v));
    } else {
      buf.writeLongLE(static_cast<std::int64_t>(v));
    }
  }
}

template <class T, Order O>
T bufRead(ByteBuf& buf) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<T>(O == Order::Big ? buf.readInt() : buf.readIntLE());
  } else {
    return static_cast<T>(O == Order::Big ? buf.readLong() : buf.readLongLE());
  }
}

// ------------------------------------------------------------------ primitive writes

template <class T, Order O>
void writeNetbuf(benchmark::State& state) {
  const auto values = randomValues<T>();
  ByteBuf buf = Unpooled::buffer(kValues * sizeof(T));
  for (auto _ : state) {
    buf.clear();
    for (const T v : values) bufWrite<T, O>(buf, v);
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  if (buf.readableBytes() != kValues * sizeof(T)) state.SkipWithError("wrong byte count");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

// The raw baselines come twice: as the compiler leaves them (it turns these homogeneous loops into
// vector code, which no per-value call can match) and with vectorisation switched off (the
// per-value floor: what a hand-written encoder of heterogeneous fields gets).
#if defined(__clang__)
#define NETBUF_SCALAR_FN
#define NETBUF_SCALAR_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define NETBUF_SCALAR_FN __attribute__((optimize("no-tree-vectorize")))
#define NETBUF_SCALAR_LOOP
#endif

template <class T, Order O>
NETBUF_SCALAR_FN void writeBaselineScalar(benchmark::State& state) {
  const auto values = randomValues<T>();
  std::vector<std::uint8_t> out(kValues * sizeof(T));
  for (auto _ : state) {
    std::uint8_t* p = out.data();
    std::size_t offset = 0;
    NETBUF_SCALAR_LOOP
    for (const T v : values) {
      const T wire = toWire<T, O>(v);
      std::memcpy(p + offset, &wire, sizeof(T));
      offset += sizeof(T);
    }
    benchmark::DoNotOptimize(p);
    benchmark::DoNotOptimize(offset);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

template <class T, Order O>
NETBUF_SCALAR_FN void readBaselineScalar(benchmark::State& state) {
  const auto values = randomValues<T>();
  std::vector<std::uint8_t> in(kValues * sizeof(T));
  for (std::size_t i = 0; i < kValues; ++i) {
    const T wire = toWire<T, O>(values[i]);
    std::memcpy(in.data() + i * sizeof(T), &wire, sizeof(T));
  }
  for (auto _ : state) {
    const std::uint8_t* p = in.data();
    benchmark::DoNotOptimize(p);
    std::size_t offset = 0;
    T sum = 0;
    NETBUF_SCALAR_LOOP
    for (std::size_t i = 0; i < kValues; ++i) {
      T wire;
      std::memcpy(&wire, p + offset, sizeof(T));
      offset += sizeof(T);
      sum += fromWire<T, O>(wire);
    }
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

template <class T, Order O>
void writeBaseline(benchmark::State& state) {
  const auto values = randomValues<T>();
  std::vector<std::uint8_t> out(kValues * sizeof(T));
  for (auto _ : state) {
    std::uint8_t* p = out.data();
    std::size_t offset = 0;
    for (const T v : values) {
      const T wire = toWire<T, O>(v);
      std::memcpy(p + offset, &wire, sizeof(T));
      offset += sizeof(T);
    }
    benchmark::DoNotOptimize(p);
    benchmark::DoNotOptimize(offset);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

// ------------------------------------------------------------------ primitive reads

template <class T, Order O>
void readNetbuf(benchmark::State& state) {
  const auto values = randomValues<T>();
  ByteBuf buf = Unpooled::buffer(kValues * sizeof(T));
  for (const T v : values) bufWrite<T, O>(buf, v);
  for (auto _ : state) {
    buf.readerIndex(0);
    T sum = 0;
    for (std::size_t i = 0; i < kValues; ++i) sum += bufRead<T, O>(buf);
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

template <class T, Order O>
void readBaseline(benchmark::State& state) {
  const auto values = randomValues<T>();
  std::vector<std::uint8_t> in(kValues * sizeof(T));
  for (std::size_t i = 0; i < kValues; ++i) {
    const T wire = toWire<T, O>(values[i]);
    std::memcpy(in.data() + i * sizeof(T), &wire, sizeof(T));
  }
  for (auto _ : state) {
    const std::uint8_t* p = in.data();
    benchmark::DoNotOptimize(p);
    std::size_t offset = 0;
    T sum = 0;
    for (std::size_t i = 0; i < kValues; ++i) {
      T wire;
      std::memcpy(&wire, p + offset, sizeof(T));
      offset += sizeof(T);
      sum += fromWire<T, O>(wire);
    }
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

// ------------------------------------------------------------------ cursors
//
// Why per-call writeInt trails the baseline: each value is stored through a byte pointer, which
// may alias any object, including the ByteBuf itself (its address escapes into the out-of-line
// ensureWritableSlow). So the compiler must reload base_ and the write limit from memory after
// every store, and store writerIndex_ back every time (the index itself stays in a register):
// three memory operations per value more than the baseline's. A cursor whose pointers live in
// locals that never escape (the slow path takes and returns them by value) keeps them in registers;
// the bounds check stays. netbuf::ByteBufWriter / ByteBufReader (byte_buf_writer.hpp,
// byte_buf_reader.hpp) are that API.

constexpr netbuf::ByteOrder toByteOrder(Order o) {
  return o == Order::Big ? netbuf::ByteOrder::big : netbuf::ByteOrder::little;
}

template <class T, Order O>
void writeNetbufCursor(benchmark::State& state) {
  const auto values = randomValues<T>();
  ByteBuf buf = Unpooled::buffer(kValues * sizeof(T));
  for (auto _ : state) {
    buf.clear();
    {
      netbuf::ByteBufWriter out(buf);
      for (const T v : values) out.writeValue<T, sizeof(T), toByteOrder(O)>(v);
    }
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  if (buf.readableBytes() != kValues * sizeof(T)) state.SkipWithError("wrong byte count");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

template <class T, Order O>
void readNetbufCursor(benchmark::State& state) {
  const auto values = randomValues<T>();
  ByteBuf buf = Unpooled::buffer(kValues * sizeof(T));
  for (const T v : values) bufWrite<T, O>(buf, v);
  for (auto _ : state) {
    buf.readerIndex(0);
    T sum = 0;
    {
      netbuf::ByteBufReader in(buf);
      for (std::size_t i = 0; i < kValues; ++i) sum += in.readValue<T, sizeof(T), toByteOrder(O)>();
    }
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kValues * sizeof(T)));
}

// ------------------------------------------------------------------ growth

constexpr std::size_t kGrowTarget = std::size_t{1} << 20;  // 1 MiB

void growNetbufBytes64(benchmark::State& state) {
  const std::string chunk(64, 'x');
  for (auto _ : state) {
    ByteBuf buf = Unpooled::buffer(64);
    for (std::size_t n = 0; n < kGrowTarget; n += chunk.size()) buf.writeBytes(chunk);
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kGrowTarget));
}

void growVectorBytes64(benchmark::State& state) {
  const std::string chunk(64, 'x');
  for (auto _ : state) {
    std::vector<std::uint8_t> v;
    v.reserve(64);
    for (std::size_t n = 0; n < kGrowTarget; n += chunk.size())
      v.insert(v.end(), chunk.begin(), chunk.end());
    benchmark::DoNotOptimize(v.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kGrowTarget));
}

void growNetbufByte(benchmark::State& state) {
  for (auto _ : state) {
    ByteBuf buf = Unpooled::buffer(64);
    for (std::size_t n = 0; n < kGrowTarget; ++n) buf.writeByte(static_cast<std::int8_t>(n));
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kGrowTarget));
}

void growVectorByte(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::uint8_t> v;
    v.reserve(64);
    for (std::size_t n = 0; n < kGrowTarget; ++n) v.push_back(static_cast<std::uint8_t>(n));
    benchmark::DoNotOptimize(v.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kGrowTarget));
}

// ensureWritable alone: the growth steps 64 -> 128 -> ... -> 1 MiB (15 reallocations), writing
// only the committed index, so the copy of old contents dominates as in any growth.
void growNetbufEnsureWritable(benchmark::State& state) {
  for (auto _ : state) {
    ByteBuf buf = Unpooled::buffer(64);
    for (std::size_t size = 128; size <= kGrowTarget; size *= 2) {
      buf.ensureWritable(size - buf.writerIndex());
      buf.writerIndex(size);
    }
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
}

// The same steps with std::vector::resize (which also zero-fills the new half; ByteBuf does not).
void growVectorResize(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::uint8_t> v;
    v.reserve(64);
    v.resize(64);
    for (std::size_t size = 128; size <= kGrowTarget; size *= 2) {
      v.reserve(size);  // exactly size, as ByteBuf's power-of-two policy gives here
      v.resize(size);
    }
    benchmark::DoNotOptimize(v.data());
    benchmark::ClobberMemory();
  }
}

// ------------------------------------------------------------------ sharing

void retainedSliceNetbuf(benchmark::State& state) {
  ByteBuf buf = Unpooled::buffer(1024);
  buf.writeZero(1024);
  for (auto _ : state) {
    ByteBuf slice = buf.retainedSlice(16, 64);
    benchmark::DoNotOptimize(slice);
  }
}

void readRetainedSliceNetbuf(benchmark::State& state) {
  ByteBuf buf = Unpooled::buffer(1024);
  buf.writeZero(1024);
  for (auto _ : state) {
    if (!buf.isReadable(64)) buf.readerIndex(0);
    ByteBuf slice = buf.readRetainedSlice(64);
    benchmark::DoNotOptimize(slice);
  }
}

void sharedPtrCopyBaseline(benchmark::State& state) {
  auto owner = std::make_shared<std::vector<std::uint8_t>>(1024);
  for (auto _ : state) {
    std::shared_ptr<std::vector<std::uint8_t>> copy = owner;
    benchmark::DoNotOptimize(copy);
  }
}

// ------------------------------------------------------------------ bulk bytes

void writeBytesNetbuf(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const std::vector<std::byte> src(size, std::byte{0x5a});
  ByteBuf buf = Unpooled::buffer(size);
  for (auto _ : state) {
    buf.clear();
    buf.writeBytes(src);
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

void writeBytesBaseline(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const std::vector<std::byte> src(size, std::byte{0x5a});
  std::vector<std::uint8_t> dst(size);
  for (auto _ : state) {
    std::uint8_t* p = dst.data();
    benchmark::DoNotOptimize(p);
    std::memcpy(p, src.data(), src.size());
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

template <class T, Order O>
void registerPrimitive(const char* name) {
  const std::string w = std::string("write_") + name;
  const std::string r = std::string("read_") + name;
  benchmark::RegisterBenchmark((w + "/netbuf").c_str(), writeNetbuf<T, O>);
  benchmark::RegisterBenchmark((w + "/baseline").c_str(), writeBaseline<T, O>);
  benchmark::RegisterBenchmark((w + "/baseline_scalar").c_str(), writeBaselineScalar<T, O>);
  benchmark::RegisterBenchmark((w + "/netbuf_cursor").c_str(), writeNetbufCursor<T, O>);
  benchmark::RegisterBenchmark((r + "/netbuf").c_str(), readNetbuf<T, O>);
  benchmark::RegisterBenchmark((r + "/baseline").c_str(), readBaseline<T, O>);
  benchmark::RegisterBenchmark((r + "/baseline_scalar").c_str(), readBaselineScalar<T, O>);
  benchmark::RegisterBenchmark((r + "/netbuf_cursor").c_str(), readNetbufCursor<T, O>);
}

}  // namespace

int main(int argc, char** argv) {
  // The process is multi-threaded before main (multi_threaded.cpp): the shared_ptr baseline makes
  // the locked increment and decrement it makes in a server.
  registerPrimitive<std::uint32_t, Order::Big>("int_be");
  registerPrimitive<std::uint32_t, Order::Little>("int_le");
  registerPrimitive<std::uint64_t, Order::Big>("long_be");
  registerPrimitive<std::uint64_t, Order::Little>("long_le");

  benchmark::RegisterBenchmark("grow_1MiB_bytes64/netbuf", growNetbufBytes64);
  benchmark::RegisterBenchmark("grow_1MiB_bytes64/baseline", growVectorBytes64);
  benchmark::RegisterBenchmark("grow_1MiB_byte/netbuf", growNetbufByte);
  benchmark::RegisterBenchmark("grow_1MiB_byte/baseline", growVectorByte);
  benchmark::RegisterBenchmark("grow_1MiB_ensureWritable/netbuf", growNetbufEnsureWritable);
  benchmark::RegisterBenchmark("grow_1MiB_ensureWritable/baseline", growVectorResize);

  benchmark::RegisterBenchmark("retainedSlice/netbuf", retainedSliceNetbuf);
  benchmark::RegisterBenchmark("readRetainedSlice/netbuf", readRetainedSliceNetbuf);
  benchmark::RegisterBenchmark("retainedSlice/baseline_shared_ptr_copy", sharedPtrCopyBaseline);

  benchmark::RegisterBenchmark("writeBytes/netbuf", writeBytesNetbuf)->Arg(64)->Arg(4096);
  benchmark::RegisterBenchmark("writeBytes/baseline", writeBytesBaseline)->Arg(64)->Arg(4096);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
