// Fuzzes MessagePack decoding: msgpack::decode (strict or lenient, limits from the first byte), a
// round trip through msgpack::encode (normal and canonical) compared by Value ==, canonical
// idempotence (encode(canonical) of the re-decoded value is byte-identical), and the streaming
// MessagePackDecoder fed at fuzz-chosen split points, which must agree with whole-buffer decoding
// of the same concatenated values (msgpack::decodeOne, value by value).
#include <cstddef>
#include <cstdint>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_input.hpp"
#include "support/decoder_transcript.hpp"

using namespace netbuf;

namespace {

bool hasNaN(const Value& v) {
  switch (v.type()) {
    case ValueType::Float32:
    case ValueType::Float64:
      return v.asDouble() != v.asDouble();
    case ValueType::Array:
      for (const Value& e : v.asArray())
        if (hasNaN(e)) return true;
      return false;
    case ValueType::Map:
      for (const Member& m : v.asMap())
        if (hasNaN(m.key) || hasNaN(m.value)) return true;
      return false;
    default:
      return false;
  }
}

bool hasInvalidStr(const Value& v) {
  switch (v.type()) {
    case ValueType::Str:
      return v.hasInvalidUtf8();
    case ValueType::Array:
      for (const Value& e : v.asArray())
        if (hasInvalidStr(e)) return true;
      return false;
    case ValueType::Map:
      for (const Member& m : v.asMap())
        if (hasInvalidStr(m.key) || hasInvalidStr(m.value)) return true;
      return false;
    default:
      return false;
  }
}

void roundTrip(const Value& v, const MessagePackReadOptions& o) {
  const bool comparable = !hasNaN(v);
  ByteBuf plain = msgpack::encode(v);
  Document again;
  msgpack::decode(plain.readableSpan(), again, o);
  if (comparable) fuzz::check(again.root() == v, "round trip changed the value");
  if (hasInvalidStr(v) || o.allowDuplicateKeys) return;  // no canonical form
  ByteBuf canon = msgpack::encode(v, MessagePackWriteOptions{true, 4096});
  Document c;
  msgpack::decode(canon.readableSpan(), c, o);
  ByteBuf canon2 = msgpack::encode(c.root(), MessagePackWriteOptions{true, 4096});
  fuzz::check(canon.readableStringView() == canon2.readableStringView(),
              "canonical encoding is not idempotent");
}

std::size_t run0Messages(const fuzz::FuzzReads& reads, const MessagePackReadOptions& o,
                         std::uint8_t flags) {
  DecoderRunner<MessagePackDecoder> run(o,
                                        (flags & 8) != 0 ? Cumulator::Composite : Cumulator::Merge);
  run.feedSplitAt(reads.stream, reads.cuts);
  run.finish();
  return run.messages().size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  MessagePackReadOptions o;
  o.lenientUtf8 = (flags & 1) != 0;
  o.allowDuplicateKeys = (flags & 2) != 0;
  if ((flags & 4) != 0) {
    o.limits.maxDepth = 4;
    o.limits.maxContainerLength = 8;
    o.limits.maxStrLength = o.limits.maxBinLength = o.limits.maxExtLength = 16;
    o.limits.maxMessageSize = 64;
  }
  const fuzz::FuzzReads reads = fuzz::splitReads(data, size, 1, (flags >> 4) & 7);
  const auto* bytes = reinterpret_cast<const std::byte*>(reads.stream.data());
  const std::span<const std::byte> input(bytes, reads.stream.size());

  // 1. Whole-buffer decode and round trips.
  try {
    Document d;
    msgpack::decode(input, d, o);
    roundTrip(d.root(), o);
  } catch (const MessagePackError&) {
  }

  // 2. Streaming vs whole-buffer, value by value. The model mirrors the decoder's documented
  // behaviour only where it is simple: it stops at the first error (the streaming decoder's
  // recovery after limit errors is checked by the unit tests).
  test::Transcript model;
  bool clean = true;
  for (std::size_t pos = 0; pos < input.size();) {
    try {
      Document d;
      const std::size_t n = msgpack::decodeOne(input.subspan(pos), d, o, pos);
      model.push_back(d.root().toDebugString());
      pos += n;
    } catch (const MessagePackError& e) {
      // An incomplete tail (Truncated) is dropped silently by the streaming decoder, but it may
      // still find a limit error or 0xc1 inside it: only the prefix is compared.
      clean = false;
      if (e.code() == MessagePackErrc::Truncated) {
        fuzz::check(run0Messages(reads, o, flags) == model.size(),
                    "streaming decoder emitted a value from a truncated tail");
      }
      break;
    }
  }
  DecoderRunner<MessagePackDecoder> run(o,
                                        (flags & 8) != 0 ? Cumulator::Composite : Cumulator::Merge);
  run.feedSplitAt(reads.stream, reads.cuts);
  run.finish();
  for (std::size_t i = 0; i < run.errors().size(); ++i) {
    try {
      run.rethrowError(i);
    } catch (const MessagePackError&) {
    } catch (...) {
      fuzz::fail("unexpected error type from MessagePackDecoder");
    }
  }
  const test::Transcript got = test::transcriptOf(run);
  if (clean) {
    fuzz::check(got == model, "streaming decoder disagrees with whole-buffer decoding");
  } else {
    // Up to the first error both agree.
    for (std::size_t i = 0; i < model.size(); ++i)
      fuzz::check(i < got.size() && got[i] == model[i], "streaming prefix disagrees");
  }
  return 0;
}
