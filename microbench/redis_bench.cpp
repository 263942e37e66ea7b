// Redis RESP: netbuf's RedisRequestDecoder and RespWriter beside what a user would otherwise
// hand-write (docs/benchmarks.md, Redis section):
//
//   requests/netbuf        1000 pipelined SET key value / GET key commands (one read of 36 KB):
//                          RedisRequestDecoder, one RedisCommand per command (argument views
//                          into a retained slice of the read, no copy)
//   requests/handwritten   the same bytes through a straightforward RESP parser: string_view
//                          scanning, std::from_chars for the lengths, each command a
//                          std::vector<std::string> of its arguments
//   replies/netbuf         1000 bulk string replies (16 to 100 bytes) written with RespWriter
//                          into a ByteBuf
//   replies/snprintf       the same replies appended to a std::string: snprintf for the
//                          "$<len>\r\n" header, append for the payload and the CRLF
//
// Each iteration decodes (encodes) the whole batch; bytes/second counts the wire bytes.
#include <benchmark/benchmark.h>

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/redis/redis_request_decoder.hpp>
#include <netbuf/codec/redis/resp_writer.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kCommands = 1000;

const std::string& pipelinedRequests() {
  static const std::string s = [] {
    std::string r;
    for (int i = 0; i < kCommands; ++i) {
      const std::string key = fmt::format("key:{:06}", i);
      if (i % 2 == 0) {
        const std::string value = fmt::format("value-{:010}", i);
        r += fmt::format("*3\r\n$3\r\nSET\r\n${}\r\n{}\r\n${}\r\n{}\r\n", key.size(), key,
                         value.size(), value);
      } else {
        r += fmt::format("*2\r\n$3\r\nGET\r\n${}\r\n{}\r\n", key.size(), key);
      }
    }
    return r;
  }();
  return s;
}

/// The hand-written baseline: parses one multibulk command at the front of `in` into args;
/// returns the bytes it took, 0 when the command is incomplete, -1 on bad input.
long parseCommand(std::string_view in, std::vector<std::string>& args) {
  auto readNumber = [&](std::size_t& pos, char prefix, long& value) -> int {
    if (pos >= in.size()) return 0;
    if (in[pos] != prefix) return -1;
    const std::size_t cr = in.find('\r', pos);
    if (cr == std::string_view::npos || cr + 1 >= in.size()) return 0;
    const auto [end, ec] = std::from_chars(in.data() + pos + 1, in.data() + cr, value);
    if (ec != std::errc() || end != in.data() + cr || in[cr + 1] != '\n') return -1;
    pos = cr + 2;
    return 1;
  };
  std::size_t pos = 0;
  long argc = 0;
  if (int r = readNumber(pos, '*', argc); r <= 0) return r;
  args.clear();
  args.reserve(static_cast<std::size_t>(argc));
  for (long i = 0; i < argc; ++i) {
    long len = 0;
    if (int r = readNumber(pos, '$', len); r <= 0) return r;
    if (len < 0) return -1;
    const auto n = static_cast<std::size_t>(len);
    if (in.size() - pos < n + 2) return 0;
    args.emplace_back(in.data() + pos, n);
    pos += n + 2;
  }
  return static_cast<long>(pos);
}

void requestsNetbuf(benchmark::State& state) {
  const std::string& input = pipelinedRequests();
  netbuf::RedisRequestDecoder decoder;
  std::vector<netbuf::RedisCommand> out;
  out.reserve(kCommands);
  for (auto _ : state) {
    // The read, as a socket hands it over: a buffer the decoder takes as its cumulation.
    decoder.channelRead(netbuf::Unpooled::wrappedUnownedBuffer(std::string_view(input)), out);
    if (out.size() != kCommands) state.SkipWithError("wrong command count");
    benchmark::DoNotOptimize(out.data());
    out.clear();
  }
  state.SetItemsProcessed(state.iterations() * kCommands);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * input.size()));
}

void requestsHandwritten(benchmark::State& state) {
  const std::string& input = pipelinedRequests();
  std::vector<std::vector<std::string>> out;
  out.reserve(kCommands);
  for (auto _ : state) {
    std::string_view rest(input);
    while (!rest.empty()) {
      std::vector<std::string> args;
      const long used = parseCommand(rest, args);
      if (used <= 0) break;
      out.push_back(std::move(args));
      rest.remove_prefix(static_cast<std::size_t>(used));
    }
    if (out.size() != kCommands) state.SkipWithError("wrong command count");
    benchmark::DoNotOptimize(out.data());
    out.clear();
  }
  state.SetItemsProcessed(state.iterations() * kCommands);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * input.size()));
}

const std::vector<std::string>& replyValues() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> r;
    for (int i = 0; i < kCommands; ++i) {
      r.emplace_back(static_cast<std::size_t>(16 + (i * 37) % 85), static_cast<char>('a' + i % 26));
    }
    return r;
  }();
  return v;
}

void repliesNetbuf(benchmark::State& state) {
  const auto& values = replyValues();
  netbuf::ByteBuf out = netbuf::ByteBufAllocator::defaultAllocator().buffer(256 * 1024);
  std::size_t bytes = 0;
  for (auto _ : state) {
    out.clear();
    netbuf::RespWriter w(out);
    for (const std::string& v : values) w.bulkString(v);
    bytes = out.readableBytes();
    benchmark::DoNotOptimize(out.readPtr());
  }
  state.SetItemsProcessed(state.iterations() * kCommands);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void repliesSnprintf(benchmark::State& state) {
  const auto& values = replyValues();
  std::string out;
  out.reserve(256 * 1024);
  std::size_t bytes = 0;
  for (auto _ : state) {
    out.clear();
    for (const std::string& v : values) {
      char header[32];
      const int n = std::snprintf(header, sizeof header, "$%zu\r\n", v.size());
      out.append(header, static_cast<std::size_t>(n));
      out.append(v);
      out.append("\r\n", 2);
    }
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kCommands);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

}  // namespace

BENCHMARK(requestsNetbuf)->Name("requests/netbuf");
BENCHMARK(requestsHandwritten)->Name("requests/handwritten");
BENCHMARK(repliesNetbuf)->Name("replies/netbuf");
BENCHMARK(repliesSnprintf)->Name("replies/snprintf");

BENCHMARK_MAIN();
