// MessagePack benchmarks: netbuf's encoder and decoder beside msgpack-c (Debian's
// libmsgpack-cxx-dev, 4.1; used only here), on three workloads (figures: docs/benchmarks.md):
//
//   small   the Perl benchmark's hash {"z":"z","a":"a","c":["2","1"]}; netbuf encodes it in
//           canonical mode (keys sorted on every call, from a Value tree built in insertion
//           order z, a, c); msgpack-c has no canonical mode, so its rows pack keys the caller
//           already sorted (the fastest a msgpack-c user can do)
//   mixed   a ~1 KiB document (1,009 bytes): ints of every width, floats (float32 and float64),
//           bool, nil, short and long ASCII and non-ASCII strings, a 128-byte bin, a timestamp, an
//           array of twelve small maps
//   bin     one bin payload of 64 KiB or 64 MiB (decode only): zero copy in netbuf
//
// Rows per workload:
//   netbuf/value          Value tree -> msgpack::encode into a reused ByteBuf (cleared per call)
//   netbuf/writer         MessagePackWriter calls, the streaming API (small only)
//   msgpackc/packer       msgpack::packer calls into a reused sbuffer (small only)
//   msgpackc/object       a msgpack::object tree packed into a reused sbuffer
//   decode netbuf/fresh   msgpack::decode(span) into a new Document each call (allocates its arena)
//   decode netbuf/reused  the same into one Document, clear()ed per call (arena block reused)
//   decode netbuf/bytebuf msgpack::decode(ByteBuf) (a retained duplicate per call, kept alive by
//                         the Document)
//   decode msgpackc/unpack        msgpack::unpack(data, len): new zone per call, strings copied
//   decode msgpackc/reused_zone   msgpack::unpack(zone, data, len) with zone.clear() per call
//   decode msgpackc/referenced    (bin only) with a reference function: no copy of the payload
//
// Every run first checks that both libraries produce identical bytes for the same tree and decode
// each other's output to equal values; a mismatch aborts the benchmark.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <msgpack.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <string>
#include <vector>

// No `using namespace netbuf`: netbuf::msgpack and msgpack-c's ::msgpack would be ambiguous.
using netbuf::ByteBuf;
using netbuf::ByteBufAllocator;
using netbuf::Document;
using netbuf::Member;
using netbuf::MessagePackReadOptions;
using netbuf::MessagePackWriter;
using netbuf::Timestamp;
using netbuf::Unpooled;
using netbuf::Value;
namespace nbmp = netbuf::msgpack;

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "msgpack_bench: sanity check failed: %s\n", what);
  std::abort();
}

std::span<const std::byte> asBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// ---------------------------------------------------------------------------- the documents

/// {"z":"z","a":"a","c":["2","1"]} in insertion order.
Value buildSmall(Document& doc) {
  return doc.map({{doc.str("z"), doc.str("z")},
                  {doc.str("a"), doc.str("a")},
                  {doc.str("c"), doc.array({doc.str("2"), doc.str("1")})}});
}

Value buildMixed(Document& doc) {
  std::string blob(128, '\0');
  for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>(i * 37);
  std::vector<Value> items;
  for (int i = 0; i < 12; ++i) {
    items.push_back(doc.map({{doc.str("sku"), doc.str("SKU-" + std::to_string(1000 + i))},
                             {doc.str("qty"), Value::uinteger(static_cast<unsigned>(i + 1))},
                             {doc.str("price"), Value::float64(9.99 + i)},
                             {doc.str("backorder"), Value::boolean(i % 3 == 0)}}));
  }
  std::vector<Member> m{
      {doc.str("id"), Value::uinteger(1234567890123ULL)},
      {doc.str("user"), doc.str("alice@example.com")},
      {doc.str("active"), Value::boolean(true)},
      {doc.str("score"), Value::float64(98.625)},
      {doc.str("ratio"), Value::float32(0.5f)},
      {doc.str("nothing"), Value()},
      {doc.str("small"), Value::uinteger(7)},
      {doc.str("neg"), Value::integer(-42)},
      {doc.str("i16"), Value::integer(-30000)},
      {doc.str("u32"), Value::uinteger(4000000000U)},
      {doc.str("tags"),
       doc.array({doc.str("alpha"), doc.str("beta"), doc.str("gamma"), doc.str("delta")})},
      {doc.str("text"), doc.str("The quick brown fox jumps over the lazy dog; "
                                "pack my box with five dozen liquor jugs. 0123456789 "
                                "How vexingly quick daft zebras jump!")},
      {doc.str("unicode"),
       doc.str("na\xc3\xafve caf\xc3\xa9 \xe2\x80\x93 \xe6\x9d\xb1\xe4\xba\xac")},
      {doc.str("blob"), doc.bin(asBytes(blob))},
      {doc.str("stamp"), Value::timestamp({1700000000, 123456789})},
      {doc.str("items"), doc.array(items)},
  };
  return doc.map(m);
}

std::string encodeNetbuf(const Value& v, bool canonical) {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(4096);
  nbmp::encode(v, buf, {.canonical = canonical});
  return std::string(buf.readableStringView());
}

std::string packObject(const msgpack::object& o) {
  msgpack::sbuffer sb;
  msgpack::pack(sb, o);
  return std::string(sb.data(), sb.size());
}

/// A workload's encoded bytes, netbuf tree, and msgpack-c object (unpacked from the bytes).
struct Workload {
  Document doc;
  Value value;
  std::string bytes;
  msgpack::object_handle object;
};

Workload makeWorkload(bool small) {
  Workload w;
  w.value = small ? buildSmall(w.doc) : buildMixed(w.doc);
  // The small hash is encoded canonically (sorted); mixed keeps insertion order.
  w.bytes = encodeNetbuf(w.value, small);
  w.object = msgpack::unpack(w.bytes.data(), w.bytes.size());
  if (packObject(w.object.get()) != w.bytes) die("msgpack-c re-encodes netbuf's bytes differently");
  Document back;
  nbmp::decode(asBytes(w.bytes), back);
  if (encodeNetbuf(back.root(), small) != w.bytes) die("netbuf does not round trip");
  return w;
}

Workload& smallWorkload() {
  static Workload* w = new Workload(makeWorkload(true));
  return *w;
}
Workload& mixedWorkload() {
  static Workload* w = new Workload(makeWorkload(false));
  return *w;
}

// ---------------------------------------------------------------------------- encode

void encodeValue(benchmark::State& state, Workload& w, bool canonical) {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(4096);
  for (auto _ : state) {
    buf.clear();
    nbmp::encode(w.value, buf, {.canonical = canonical});
    benchmark::DoNotOptimize(buf.readPtr());
  }
  if (buf.readableStringView() != w.bytes) die("netbuf encode differs");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(w.bytes.size()));
}

void encodeObject(benchmark::State& state, Workload& w) {
  msgpack::sbuffer sb(4096);
  const msgpack::object& o = w.object.get();
  for (auto _ : state) {
    sb.clear();
    msgpack::pack(sb, o);
    benchmark::DoNotOptimize(sb.data());
  }
  if (std::string(sb.data(), sb.size()) != w.bytes) die("msgpack-c encode differs");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(w.bytes.size()));
}

void BM_EncodeSmall_NetbufValueCanonical(benchmark::State& state) {
  encodeValue(state, smallWorkload(), true);
}
BENCHMARK(BM_EncodeSmall_NetbufValueCanonical)->Name("encode/small/netbuf/value_canonical");

void BM_EncodeSmall_NetbufWriter(benchmark::State& state) {
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(256);
  // The strings are laundered through DoNotOptimize each call so that the compiler cannot fold
  // the literals into constant stores (it does for msgpack-c's packer otherwise).
  std::string_view a = "a", c = "c", z = "z", two = "2", one = "1";
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(c);
    benchmark::DoNotOptimize(z);
    benchmark::DoNotOptimize(two);
    benchmark::DoNotOptimize(one);
    buf.clear();
    MessagePackWriter w(buf);
    w.packMapHeader(3).packStr(a).packStr(a).packStr(c);
    w.packArrayHeader(2).packStr(two).packStr(one);
    w.packStr(z).packStr(z);
    benchmark::DoNotOptimize(buf.readPtr());
  }
  if (buf.readableStringView() != smallWorkload().bytes) die("netbuf writer differs");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeSmall_NetbufWriter)->Name("encode/small/netbuf/writer");

void BM_EncodeSmall_MsgpackcPacker(benchmark::State& state) {
  msgpack::sbuffer sb(256);
  std::string_view a = "a", c = "c", z = "z", two = "2", one = "1";
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(c);
    benchmark::DoNotOptimize(z);
    benchmark::DoNotOptimize(two);
    benchmark::DoNotOptimize(one);
    sb.clear();
    msgpack::packer<msgpack::sbuffer> pk(sb);
    pk.pack_map(3);
    pk.pack(a);
    pk.pack(a);
    pk.pack(c);
    pk.pack_array(2);
    pk.pack(two);
    pk.pack(one);
    pk.pack(z);
    pk.pack(z);
    benchmark::DoNotOptimize(sb.data());
  }
  if (std::string(sb.data(), sb.size()) != smallWorkload().bytes) die("msgpack-c packer differs");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeSmall_MsgpackcPacker)->Name("encode/small/msgpackc/packer");

void BM_EncodeSmall_MsgpackcObject(benchmark::State& state) {
  encodeObject(state, smallWorkload());
}
BENCHMARK(BM_EncodeSmall_MsgpackcObject)->Name("encode/small/msgpackc/object");

void BM_EncodeMixed_NetbufValue(benchmark::State& state) {
  encodeValue(state, mixedWorkload(), false);
}
BENCHMARK(BM_EncodeMixed_NetbufValue)->Name("encode/mixed/netbuf/value");

void BM_EncodeMixed_NetbufValueCanonical(benchmark::State& state) {
  // Canonical output differs from the insertion-order bytes: compare against itself.
  Workload& w = mixedWorkload();
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(4096);
  for (auto _ : state) {
    buf.clear();
    nbmp::encode(w.value, buf, {.canonical = true});
    benchmark::DoNotOptimize(buf.readPtr());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(w.bytes.size()));
}
BENCHMARK(BM_EncodeMixed_NetbufValueCanonical)->Name("encode/mixed/netbuf/value_canonical");

void BM_EncodeMixed_MsgpackcObject(benchmark::State& state) {
  encodeObject(state, mixedWorkload());
}
BENCHMARK(BM_EncodeMixed_MsgpackcObject)->Name("encode/mixed/msgpackc/object");

// ---------------------------------------------------------------------------- decode

void decodeFresh(benchmark::State& state, const std::string& bytes,
                 const MessagePackReadOptions& options = {}) {
  for (auto _ : state) {
    Document doc;
    nbmp::decode(asBytes(bytes), doc, options);
    benchmark::DoNotOptimize(doc.root());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

void decodeReused(benchmark::State& state, const std::string& bytes,
                  const MessagePackReadOptions& options = {}) {
  Document doc;
  for (auto _ : state) {
    doc.clear();
    nbmp::decode(asBytes(bytes), doc, options);
    benchmark::DoNotOptimize(doc.root());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

void decodeByteBuf(benchmark::State& state, const std::string& bytes,
                   const MessagePackReadOptions& options = {}) {
  ByteBuf input = Unpooled::copiedBuffer(std::string_view(bytes));
  Document doc;
  for (auto _ : state) {
    doc.clear();
    nbmp::decode(input.retainedDuplicate(), doc, options);
    benchmark::DoNotOptimize(doc.root());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

void unpackFresh(benchmark::State& state, const std::string& bytes) {
  for (auto _ : state) {
    msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size());
    benchmark::DoNotOptimize(oh.get());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

void unpackReusedZone(benchmark::State& state, const std::string& bytes) {
  msgpack::zone zone;
  for (auto _ : state) {
    zone.clear();
    msgpack::object o = msgpack::unpack(zone, bytes.data(), bytes.size());
    benchmark::DoNotOptimize(o);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

void BM_DecodeSmall_NetbufFresh(benchmark::State& s) { decodeFresh(s, smallWorkload().bytes); }
BENCHMARK(BM_DecodeSmall_NetbufFresh)->Name("decode/small/netbuf/fresh");
void BM_DecodeSmall_NetbufReused(benchmark::State& s) { decodeReused(s, smallWorkload().bytes); }
BENCHMARK(BM_DecodeSmall_NetbufReused)->Name("decode/small/netbuf/reused");
void BM_DecodeSmall_NetbufByteBuf(benchmark::State& s) { decodeByteBuf(s, smallWorkload().bytes); }
BENCHMARK(BM_DecodeSmall_NetbufByteBuf)->Name("decode/small/netbuf/bytebuf");
void BM_DecodeSmall_MsgpackcUnpack(benchmark::State& s) { unpackFresh(s, smallWorkload().bytes); }
BENCHMARK(BM_DecodeSmall_MsgpackcUnpack)->Name("decode/small/msgpackc/unpack");
void BM_DecodeSmall_MsgpackcZone(benchmark::State& s) {
  unpackReusedZone(s, smallWorkload().bytes);
}
BENCHMARK(BM_DecodeSmall_MsgpackcZone)->Name("decode/small/msgpackc/reused_zone");

void BM_DecodeMixed_NetbufFresh(benchmark::State& s) { decodeFresh(s, mixedWorkload().bytes); }
BENCHMARK(BM_DecodeMixed_NetbufFresh)->Name("decode/mixed/netbuf/fresh");
void BM_DecodeMixed_NetbufReused(benchmark::State& s) { decodeReused(s, mixedWorkload().bytes); }
BENCHMARK(BM_DecodeMixed_NetbufReused)->Name("decode/mixed/netbuf/reused");
void BM_DecodeMixed_NetbufByteBuf(benchmark::State& s) { decodeByteBuf(s, mixedWorkload().bytes); }
BENCHMARK(BM_DecodeMixed_NetbufByteBuf)->Name("decode/mixed/netbuf/bytebuf");
void BM_DecodeMixed_MsgpackcUnpack(benchmark::State& s) { unpackFresh(s, mixedWorkload().bytes); }
BENCHMARK(BM_DecodeMixed_MsgpackcUnpack)->Name("decode/mixed/msgpackc/unpack");
void BM_DecodeMixed_MsgpackcZone(benchmark::State& s) {
  unpackReusedZone(s, mixedWorkload().bytes);
}
BENCHMARK(BM_DecodeMixed_MsgpackcZone)->Name("decode/mixed/msgpackc/reused_zone");

// ---------------------------------------------------------------------------- bin payloads

const std::string& binMessage(std::size_t size) {
  static std::string* small = nullptr;
  static std::string* large = nullptr;
  std::string*& slot = size <= (64u << 10) ? small : large;
  if (slot == nullptr) {
    std::string payload(size, 'x');
    slot = new std::string(encodeNetbuf(Value::binView(asBytes(payload)), false));
  }
  return *slot;
}

MessagePackReadOptions bigLimits() {
  MessagePackReadOptions o;
  o.limits.maxBinLength = o.limits.maxMessageSize = std::size_t{128} << 20;
  return o;
}

void BM_DecodeBin_NetbufReused(benchmark::State& s) {
  decodeReused(s, binMessage(static_cast<std::size_t>(s.range(0))), bigLimits());
}
BENCHMARK(BM_DecodeBin_NetbufReused)
    ->Name("decode/bin/netbuf/reused")
    ->Arg(64 << 10)
    ->Arg(64 << 20);
void BM_DecodeBin_NetbufByteBuf(benchmark::State& s) {
  decodeByteBuf(s, binMessage(static_cast<std::size_t>(s.range(0))), bigLimits());
}
BENCHMARK(BM_DecodeBin_NetbufByteBuf)
    ->Name("decode/bin/netbuf/bytebuf")
    ->Arg(64 << 10)
    ->Arg(64 << 20);
void BM_DecodeBin_MsgpackcUnpack(benchmark::State& s) {
  unpackFresh(s, binMessage(static_cast<std::size_t>(s.range(0))));
}
BENCHMARK(BM_DecodeBin_MsgpackcUnpack)
    ->Name("decode/bin/msgpackc/unpack")
    ->Arg(64 << 10)
    ->Arg(64 << 20);
void BM_DecodeBin_MsgpackcReferenced(benchmark::State& s) {
  const std::string& bytes = binMessage(static_cast<std::size_t>(s.range(0)));
  const auto reference = [](msgpack::type::object_type, std::size_t, void*) { return true; };
  for (auto _ : s) {
    msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size(), reference);
    benchmark::DoNotOptimize(oh.get());
  }
  s.SetItemsProcessed(s.iterations());
  s.SetBytesProcessed(s.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK(BM_DecodeBin_MsgpackcReferenced)
    ->Name("decode/bin/msgpackc/referenced")
    ->Arg(64 << 10)
    ->Arg(64 << 20);

}  // namespace

BENCHMARK_MAIN();
