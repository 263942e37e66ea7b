// libFuzzer target for the JSON parser and writer (json_parser.hpp, json_writer.hpp).
//
// Input layout: byte 0 chooses the options (bit 0 extendedTypes, bit 1 allowLoneSurrogates, bit 2
// bigIntegersAsDouble off, bits 3-4 small limits: maxDepth, maxStringLength and maxNumberLength
// from tables) and, bits 5-6, the instruction-set tier of the indexed engine's first stage
// (utf8::Isa, clamped to the CPU's); the rest is the JSON text.
// Invariants:
//  - the two engines agree: the indexed parser (JsonParser::Engine::Indexed, a structural index
//    then a walk over it) and the byte-at-a-time one accept the same inputs with equal documents,
//    and reject the others with the same error; the indexed one without its fallback
//    (IndexedOnly) accepts exactly the same inputs;
//  - parsing throws nothing but JsonError; an error's offset lies inside the text (or at its end
//    for UnexpectedEnd and limits measured there), line/column are >= 1;
//  - on success, compact and pretty output parse back to a Value == the original (extended types
//    written as tagged objects when enabled), and canonical output is a fixed point:
//    canonical(parse(canonical(x))) == canonical(x); the writer throws only EncoderError
//    (duplicate keys in canonical mode), never anything else;
//  - a JsonStreamWriter driven over the parsed tree (without extended types) into a buffer that
//    starts at 8 bytes writes exactly json::write's bytes, compact, pretty and escapeNonAscii.
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_writer.hpp>

#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/utf8.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "support/json_stream.hpp"

using netbuf::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace netbuf;
  if (size < 1) return 0;
  const std::uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  JsonParseOptions po;
  po.extendedTypes = (mode & 1) != 0;
  po.allowLoneSurrogates = (mode & 2) != 0;
  po.bigIntegersAsDouble = (mode & 4) == 0;
  static constexpr std::size_t kDepth[] = {512, 3, 8, 64};
  static constexpr std::size_t kLen[] = {16 * 1024 * 1024, 4, 16, 100};
  po.maxDepth = kDepth[(mode >> 3) & 3];
  po.maxStringLength = kLen[(mode >> 3) & 3];
  po.maxNumberLength = (mode >> 3) & 3 ? 8 : 4096;

  // Each engine's outcome: the document, or the error's code, offset and message.
  struct Outcome {
    bool ok = false;
    JsonErrorCode code{};
    std::uint64_t offset = 0;
    std::string what;
  };
  auto run = [&](JsonParser::Engine engine, Document& into) {
    Outcome o;
    JsonParser parser(po);
    parser.setEngine(engine);
    try {
      parser.parse(text, into);
      o.ok = true;
    } catch (const JsonError& e) {
      check(e.offset() <= text.size(), "error offset inside the text");
      check(e.line() >= 1 && e.column() >= 1, "line/column are 1-based");
      o.code = e.code();
      o.offset = e.offset();
      o.what = e.what();
    } catch (...) {
      check(false, "parse threw something other than JsonError");
    }
    return o;
  };
  Document doc;
  const Outcome ref = run(JsonParser::Engine::ByteAtATime, doc);
  utf8::forceIsa(static_cast<utf8::Isa>((mode >> 5) & 3));
  Document indexedDoc;
  const Outcome indexed = run(JsonParser::Engine::Indexed, indexedDoc);
  Document onlyDoc;
  const Outcome only = run(JsonParser::Engine::IndexedOnly, onlyDoc);
  utf8::resetIsa();
  check(indexed.ok == ref.ok && only.ok == ref.ok, "the engines accept the same inputs");
  if (!ref.ok) {
    check(indexed.code == ref.code && indexed.offset == ref.offset && indexed.what == ref.what,
          "the indexed engine reports the byte-at-a-time engine's error");
    return 0;
  }
  check(indexedDoc.root() == doc.root() && onlyDoc.root() == doc.root(),
        "the engines build the same document");

  JsonParseOptions back = po;
  back.maxStringLength = SIZE_MAX;
  back.maxNumberLength = SIZE_MAX;
  back.maxDocumentSize = SIZE_MAX;
  back.bigIntegersAsDouble = true;  // canonical output writes big integers as doubles
  const bool ext = po.extendedTypes;
  try {
    for (bool pretty : {false, true}) {
      const std::string out = json::toString(doc.root(), {.pretty = pretty, .extendedTypes = ext});
      Document again = json::parse(out, back);
      check(again.root() == doc.root(), "compact/pretty output parses back to the same value");
      ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(8);
      JsonStreamWriter w(buf, {.pretty = pretty});
      if (test::streamJson(w, doc.root())) {
        check(w.done(), "the stream writer completed the value");
        check(buf.readableStringView() == out, "the stream writer writes json::write's bytes");
      }
    }
    const std::string ascii =
        json::toString(doc.root(), {.escapeNonAscii = true, .extendedTypes = ext});
    for (char c : ascii) check(static_cast<unsigned char>(c) < 0x80, "escapeNonAscii is ASCII");
    check(json::parse(ascii, back).root() == doc.root(), "escaped output parses back");
    ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(8);
    JsonStreamWriter w(buf, {.escapeNonAscii = true});
    if (test::streamJson(w, doc.root())) {
      check(buf.readableStringView() == ascii, "the stream writer escapes as json::write");
    }
  } catch (const JsonError&) {
    check(false, "the writer's output did not parse");
  } catch (...) {
    check(false, "compact/pretty writing threw");
  }
  std::string canon;
  try {
    canon = json::toString(doc.root(), {.canonical = true, .extendedTypes = ext});
  } catch (const EncoderError& e) {
    check(std::string_view(e.what()).find("duplicate key") != std::string_view::npos,
          "canonical writing fails only on duplicate keys");
    return 0;
  } catch (...) {
    check(false, "canonical writing threw something other than EncoderError");
  }
  try {
    Document c = json::parse(canon, back);
    check(json::toString(c.root(), {.canonical = true, .extendedTypes = ext}) == canon,
          "canonical output is a fixed point");
  } catch (...) {
    check(false, "canonical output did not parse and re-serialise");
  }
  return 0;
}
