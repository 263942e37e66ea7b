// CompositeByteBuf benchmarks, in the shapes of Netty's CompositeByteBufRandomAccess /
// sequential benchmarks, each beside its contiguous or hand-written baseline.
//
//   read/*         8 components of 512 B read fully as readLong (512 reads) and as getByte
//                  (4096 reads), against one contiguous 4 KiB ByteBuf (and the same through a
//                  ByteBufReader cursor).
//   lookup/*       toComponentIndex for 1..1024 components: sequential walk and random offsets.
//   build/*        a composite of N 1 KiB slices vs copying them into one buffer.
//   gather/*       the Asio buffer sequence of a 16-component composite turned into an iovec array
//                  (what writev gets) vs a hand-built std::vector<asio::const_buffer>.
#include <benchmark/benchmark.h>
#include <sys/uio.h>

#include <array>
#include <netbuf/buffer/byte_buf_reader.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <random>
#include <vector>

using netbuf::ByteBuf;
using netbuf::CompositeByteBuf;
using netbuf::Unpooled;

namespace {

ByteBuf filled(std::size_t n, unsigned seed) {
  ByteBuf b = Unpooled::buffer(n, n);
  for (std::size_t i = 0; i < n; ++i) b.writeByte(static_cast<std::int8_t>(i * 131 + seed));
  return b;
}

CompositeByteBuf composite(std::size_t components, std::size_t each) {
  CompositeByteBuf c(netbuf::ByteBufAllocator::defaultAllocator(), components);
  for (std::size_t i = 0; i < components; ++i) {
    c.addComponent(true, filled(each, static_cast<unsigned>(i)));
  }
  return c;
}

void readLongComposite(benchmark::State& state) {
  CompositeByteBuf c = composite(8, 512);
  for (auto _ : state) {
    c.readerIndex(0);
    std::int64_t sum = 0;
    for (int i = 0; i < 512; ++i) sum += c.readLong();
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 4096);
}

void readLongContiguous(benchmark::State& state) {
  ByteBuf b = filled(4096, 0);
  for (auto _ : state) {
    b.readerIndex(0);
    std::int64_t sum = 0;
    for (int i = 0; i < 512; ++i) sum += b.readLong();
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 4096);
}

void getByteComposite(benchmark::State& state) {
  CompositeByteBuf c = composite(8, 512);
  for (auto _ : state) {
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < 4096; ++i) sum += c.getByte(i);
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 4096);
}

void getByteContiguous(benchmark::State& state) {
  ByteBuf b = filled(4096, 0);
  for (auto _ : state) {
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < 4096; ++i) sum += b.getByte(i);
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 4096);
}

void lookupSequential(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  CompositeByteBuf c = composite(n, 64);
  for (auto _ : state) {
    std::size_t sum = 0;
    for (std::size_t off = 0; off < c.capacity(); off += 16) sum += c.toComponentIndex(off);
    benchmark::DoNotOptimize(sum);
  }
  state.counters["lookups"] = benchmark::Counter(
      static_cast<double>(state.iterations() * (n * 64 / 16)), benchmark::Counter::kIsRate);
}

void lookupRandom(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  CompositeByteBuf c = composite(n, 64);
  std::mt19937 rng(42);
  std::vector<std::size_t> offsets(4096);
  for (auto& o : offsets) o = rng() % c.capacity();
  for (auto _ : state) {
    std::size_t sum = 0;
    for (std::size_t o : offsets) sum += c.toComponentIndex(o);
    benchmark::DoNotOptimize(sum);
  }
  state.counters["lookups"] = benchmark::Counter(
      static_cast<double>(state.iterations() * offsets.size()), benchmark::Counter::kIsRate);
}

void buildComposite(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ByteBuf source = filled(n * 1024, 7);
  for (auto _ : state) {
    CompositeByteBuf c(netbuf::ByteBufAllocator::defaultAllocator(), n);
    for (std::size_t i = 0; i < n; ++i) c.addComponent(true, source.retainedSlice(i * 1024, 1024));
    benchmark::DoNotOptimize(c.readableBytes());
  }
}

void buildCopy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ByteBuf source = filled(n * 1024, 7);
  for (auto _ : state) {
    ByteBuf out = Unpooled::buffer(n * 1024);
    for (std::size_t i = 0; i < n; ++i) out.writeBytes(source, i * 1024, 1024);
    benchmark::DoNotOptimize(out.readableBytes());
  }
}

void gatherComposite(benchmark::State& state) {
  CompositeByteBuf c = composite(16, 256);
  std::array<iovec, 64> iov{};
  for (auto _ : state) {
    std::size_t n = 0;
    for (boost::asio::const_buffer b : c.readableBuffers()) {
      iov[n++] = iovec{const_cast<void*>(b.data()), b.size()};
    }
    benchmark::DoNotOptimize(iov.data());
    benchmark::DoNotOptimize(n);
  }
}

void gatherHandBuilt(benchmark::State& state) {
  std::vector<ByteBuf> parts;
  for (unsigned i = 0; i < 16; ++i) parts.push_back(filled(256, i));
  std::array<iovec, 64> iov{};
  for (auto _ : state) {
    std::vector<boost::asio::const_buffer> seq;
    seq.reserve(parts.size());
    for (const ByteBuf& p : parts) seq.push_back(p.readableBuffer());
    std::size_t n = 0;
    for (boost::asio::const_buffer b : seq) iov[n++] = iovec{const_cast<void*>(b.data()), b.size()};
    benchmark::DoNotOptimize(iov.data());
    benchmark::DoNotOptimize(n);
  }
}

}  // namespace

BENCHMARK(readLongComposite)->Name("read/readLong/composite_8x512");
BENCHMARK(readLongContiguous)->Name("read/readLong/contiguous_4096");
BENCHMARK(getByteComposite)->Name("read/getByte/composite_8x512");
BENCHMARK(getByteContiguous)->Name("read/getByte/contiguous_4096");
BENCHMARK(lookupSequential)->Name("lookup/sequential")->RangeMultiplier(4)->Range(1, 1024);
BENCHMARK(lookupRandom)->Name("lookup/random")->RangeMultiplier(4)->Range(1, 1024);
BENCHMARK(buildComposite)->Name("build/composite_of_slices")->Arg(16)->Arg(256);
BENCHMARK(buildCopy)->Name("build/copy_into_one")->Arg(16)->Arg(256);
BENCHMARK(gatherComposite)->Name("gather/composite_16");
BENCHMARK(gatherHandBuilt)->Name("gather/hand_built_vector_16");

BENCHMARK_MAIN();
