// `netbuf msgpack encode|decode` and `netbuf json validate|canonical|pretty`: the document codecs
// on stdin/stdout. The MessagePack <-> JSON mapping is JSON's extended-type convention
// (json_parser.hpp, json_writer.hpp; the tool's help text shows it): MessagePack's float32, bin,
// ext and timestamp are tagged objects, so a decode followed by an encode gives back the input
// byte for byte for every value in its shortest encoding. `decode` accepts a sequence of
// concatenated MessagePack values and writes one JSON document per line.
//
// Exit status: 0 on success, 1 on bad input (the message names the error and its offset), 2 on a
// usage error.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>

#include "commands.hpp"

namespace netbuf::tools {
namespace {

std::string readAll(std::FILE* in) {
  std::string data;
  char chunk[65536];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0) data.append(chunk, n);
  if (std::ferror(in)) throw std::runtime_error("cannot read standard input");
  return data;
}

void writeAll(std::string_view bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
    throw std::runtime_error("cannot write standard output");
  }
}

}  // namespace

int runMsgpackEncode(const ParsedOptions& options) {
  MessagePackWriteOptions writeOptions;
  writeOptions.canonical = options.flag("--canonical");
  const std::string text = readAll(stdin);
  Document doc;
  JsonParseOptions parseOptions;
  parseOptions.extendedTypes = true;
  try {
    json::parse(text, doc, parseOptions);
  } catch (const Error& e) {
    std::fprintf(stderr, "netbuf msgpack encode: invalid JSON input: %s\n", e.what());
    return kExitFailure;
  }
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(text.size() + 16);
  try {
    msgpack::encode(doc.root(), out, writeOptions);
  } catch (const Error& e) {
    std::fprintf(stderr, "netbuf msgpack encode: %s\n", e.what());
    return kExitFailure;
  }
  writeAll(out.readableStringView());
  return kExitOk;
}

int runMsgpackDecode(const ParsedOptions& options) {
  JsonWriteOptions writeOptions;
  writeOptions.extendedTypes = true;
  writeOptions.pretty = options.flag("--pretty");
  MessagePackReadOptions readOptions;
  readOptions.lenientUtf8 = options.flag("--lenient-utf8");
  const std::string data = readAll(stdin);
  const auto bytes = std::as_bytes(std::span(data));
  if (bytes.empty()) {
    std::fprintf(stderr, "netbuf msgpack decode: empty input\n");
    return kExitFailure;
  }
  Document doc;
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(4096);
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    doc.clear();
    try {
      pos += msgpack::decodeOne(bytes.subspan(pos), doc, readOptions, pos);
    } catch (const Error& e) {
      writeAll(out.readableStringView());  // the values before the bad one
      std::fprintf(stderr, "netbuf msgpack decode: %s\n", e.what());
      return kExitFailure;
    }
    try {
      json::write(doc.root(), out, writeOptions);
    } catch (const Error& e) {
      writeAll(out.readableStringView());
      std::fprintf(stderr, "netbuf msgpack decode: value at offset %zu has no JSON form: %s\n", pos,
                   e.what());
      return kExitFailure;
    }
    out.writeByte('\n');
    if (out.readableBytes() >= 65536) {
      writeAll(out.readableStringView());
      out.clear();
    }
  }
  writeAll(out.readableStringView());
  return kExitOk;
}

namespace {

/// `netbuf json SUB`: parses stdin, then (unless validating) writes it with writeOptions.
int runJson(std::string_view sub, const JsonWriteOptions* writeOptions) {
  const std::string text = readAll(stdin);
  Document doc;
  try {
    json::parse(text, doc);
  } catch (const Error& e) {
    std::fprintf(stderr, "netbuf json %.*s: %s\n", static_cast<int>(sub.size()), sub.data(),
                 e.what());
    return kExitFailure;
  }
  if (writeOptions == nullptr) return kExitOk;
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(text.size() + 16);
  try {
    json::write(doc.root(), out, *writeOptions);
  } catch (const Error& e) {
    std::fprintf(stderr, "netbuf json %.*s: %s\n", static_cast<int>(sub.size()), sub.data(),
                 e.what());
    return kExitFailure;
  }
  out.writeByte('\n');
  writeAll(out.readableStringView());
  return kExitOk;
}

}  // namespace

int runJsonValidate(const ParsedOptions&) { return runJson("validate", nullptr); }

int runJsonCanonical(const ParsedOptions&) {
  const JsonWriteOptions o{.canonical = true};
  return runJson("canonical", &o);
}

int runJsonPretty(const ParsedOptions&) {
  const JsonWriteOptions o{.pretty = true};
  return runJson("pretty", &o);
}

}  // namespace netbuf::tools
