// `netbuf msgpack encode|decode` and `netbuf json validate|canonical|pretty`: the document codecs
// on stdin/stdout.
//
// MessagePack <-> JSON mapping (docs/msgpack.md, "The netbuf tool"): JSON's types map to their
// MessagePack counterparts (integers that fit int64/uint64 stay integers, other numbers are
// float64); MessagePack's extra types use the JSON codec's extended-type convention:
//   bin        {"$bin": "<base64>"}
//   ext        {"$ext": [type, "<base64>"]}
//   timestamp  {"$timestamp": [seconds, nanoseconds]}
// float32 values are written as JSON numbers (their shortest float form) and come back as
// float64; maps whose keys are not all strings cannot be written as JSON (an error naming the
// offset of the map). `decode` accepts a sequence of concatenated MessagePack values and writes one
// JSON document per line.
//
// Exit status: 0 on success, 1 on bad input (the message names the error and its offset), 2 on a
// usage error.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

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

void printMsgpackUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: netbuf msgpack encode [--canonical]   JSON on stdin -> MessagePack on "
               "stdout\n"
               "       netbuf msgpack decode [--pretty] [--lenient-utf8]\n"
               "                                              MessagePack on stdin -> JSON lines "
               "on stdout\n"
               "JSON mapping of MessagePack's extra types: {\"$bin\": \"<base64>\"}, "
               "{\"$ext\": [type, \"<base64>\"]},\n{\"$timestamp\": [seconds, nanoseconds]}.\n");
}

void printJsonUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: netbuf json validate    exit 0 if stdin is one valid JSON document, else 1 "
               "with the error\n"
               "       netbuf json canonical   RFC 8785 (JCS) canonical form on stdout\n"
               "       netbuf json pretty      indented form on stdout\n");
}

int usageError(const char* command, std::string_view what, void (*usage)(std::FILE*)) {
  std::fprintf(stderr, "netbuf %s: %.*s\n\n", command, static_cast<int>(what.size()), what.data());
  usage(stderr);
  return kExitUsage;
}

int msgpackEncode(const std::vector<std::string_view>& args) {
  MessagePackWriteOptions writeOptions;
  for (std::string_view a : args) {
    if (a == "--canonical") {
      writeOptions.canonical = true;
    } else {
      return usageError("msgpack encode", fmt::format("unknown option '{}'", a), printMsgpackUsage);
    }
  }
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

int msgpackDecode(const std::vector<std::string_view>& args) {
  JsonWriteOptions writeOptions;
  writeOptions.extendedTypes = true;
  MessagePackReadOptions readOptions;
  for (std::string_view a : args) {
    if (a == "--pretty") {
      writeOptions.pretty = true;
    } else if (a == "--lenient-utf8") {
      readOptions.lenientUtf8 = true;
    } else {
      return usageError("msgpack decode", fmt::format("unknown option '{}'", a), printMsgpackUsage);
    }
  }
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

int runJsonCommand(std::string_view sub, const std::vector<std::string_view>& rest) {
  if (!rest.empty()) {
    return usageError("json", fmt::format("unknown option '{}'", rest[0]), printJsonUsage);
  }
  JsonWriteOptions writeOptions;
  if (sub == "canonical") {
    writeOptions.canonical = true;
  } else if (sub == "pretty") {
    writeOptions.pretty = true;
  } else if (sub != "validate") {
    return usageError("json", fmt::format("unknown subcommand '{}'", sub), printJsonUsage);
  }
  const std::string text = readAll(stdin);
  Document doc;
  try {
    json::parse(text, doc);
  } catch (const Error& e) {
    std::fprintf(stderr, "netbuf json %.*s: %s\n", static_cast<int>(sub.size()), sub.data(),
                 e.what());
    return kExitFailure;
  }
  if (sub == "validate") return kExitOk;
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(text.size() + 16);
  try {
    json::write(doc.root(), out, writeOptions);
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

int runMsgpack(const std::vector<std::string_view>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    printMsgpackUsage(args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::vector<std::string_view> rest(args.begin() + 1, args.end());
  if (args[0] == "encode") return msgpackEncode(rest);
  if (args[0] == "decode") return msgpackDecode(rest);
  return usageError("msgpack", fmt::format("unknown subcommand '{}'", args[0]), printMsgpackUsage);
}

int runJson(const std::vector<std::string_view>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    printJsonUsage(args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  return runJsonCommand(args[0], std::vector<std::string_view>(args.begin() + 1, args.end()));
}

}  // namespace netbuf::tools
