// libFuzzer target for the JSON pull reader (JsonReader, json_reader.hpp), differential against
// the DOM parser (json::parse).
//
// Input layout: byte 0 chooses the options (bit 0 allowLoneSurrogates, bits 2-3 small limits:
// maxDepth, maxStringLength and maxNumberLength from tables); the rest is the JSON text.
// (bigIntegersAsDouble stays on: the walk reads every number with readDouble, which takes any
// number, so the DOM's NumberOutOfRange for big integers would have no counterpart.)
// Invariants:
//  - the reader throws nothing but JsonError (misuse errors would be a bug of this harness);
//  - a generic walk with the reader (peek, then the matching read; numbers through readDouble)
//    succeeds exactly when json::parse does, and builds the same tree (numbers compared as
//    doubles, since the walk does not know Int from UInt from Float64);
//  - skipValue() + readEnd() also succeeds exactly when json::parse does;
//  - an error's offset lies inside the text (or at its end), line/column >= 1.
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/json/json_reader.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"

using netbuf::fuzz::check;

namespace {

using namespace netbuf;

Value walk(JsonReader& r, Document& doc) {
  switch (r.peek()) {
    case JsonToken::BeginObject: {
      r.readBeginObject();
      std::vector<Member> members;
      while (auto key = r.nextKey()) {
        const Value k = doc.strUnchecked(*key);  // copy: the view may live in scratch
        const Value v = walk(r, doc);
        members.push_back({k, v});
      }
      r.readEndObject();
      return doc.map(members);
    }
    case JsonToken::BeginArray: {
      r.readBeginArray();
      std::vector<Value> elements;
      while (r.hasNextElement()) elements.push_back(walk(r, doc));
      r.readEndArray();
      return doc.array(elements);
    }
    case JsonToken::String:
      return doc.strUnchecked(r.readString());
    case JsonToken::Number:
      return Value::float64(r.readDouble());
    case JsonToken::Bool:
      return Value::boolean(r.readBool());
    case JsonToken::Null:
      r.readNull();
      return Value();
    case JsonToken::EndObject:
    case JsonToken::EndArray:
    case JsonToken::End:
      break;
  }
  check(false, "peek() announced no value where a value must start");
  return Value();
}

bool sameModuloNumbers(const Value& a, const Value& b) {
  if (a.isNumber() && b.isNumber()) return a.asDouble() == b.asDouble();
  if (a.type() != b.type()) return false;
  if (a.isArray()) {
    const auto x = a.asArray(), y = b.asArray();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!sameModuloNumbers(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isMap()) {
    const auto x = a.asMap(), y = b.asMap();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!(x[i].key == y[i].key) || !sameModuloNumbers(x[i].value, y[i].value)) return false;
    }
    return true;
  }
  return a == b;
}

void checkError(const JsonError& e, std::string_view text) {
  check(e.offset() <= text.size(), "error offset inside the text");
  check(e.line() >= 1 && e.column() >= 1, "line/column are 1-based");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  JsonParseOptions po;
  po.allowLoneSurrogates = (mode & 1) != 0;
  static constexpr std::size_t kDepth[] = {512, 3, 8, 64};
  static constexpr std::size_t kLen[] = {16 * 1024 * 1024, 4, 16, 100};
  po.maxDepth = kDepth[(mode >> 2) & 3];
  po.maxStringLength = kLen[(mode >> 2) & 3];
  po.maxNumberLength = (mode >> 2) & 3 ? 8 : 4096;

  Document dom;
  bool domOk = true;
  try {
    json::parse(text, dom, po);
  } catch (const JsonError& e) {
    checkError(e, text);
    domOk = false;
  } catch (...) {
    check(false, "parse threw something other than JsonError");
  }

  Document walked;
  Value root;
  bool walkOk = true;
  try {
    JsonReader r(text, po);
    root = walk(r, walked);
    r.readEnd();
  } catch (const JsonError& e) {
    checkError(e, text);
    walkOk = false;
  } catch (...) {
    check(false, "the reader threw something other than JsonError");
  }
  check(walkOk == domOk, "the reader walk and json::parse agree on validity");
  if (domOk && walkOk) {
    check(sameModuloNumbers(root, dom.root()), "the reader walk builds the parser's tree");
  }

  bool skipOk = true;
  try {
    JsonReader r(text, po);
    r.skipValue();
    r.readEnd();
  } catch (const JsonError& e) {
    checkError(e, text);
    skipOk = false;
  } catch (...) {
    check(false, "skipValue threw something other than JsonError");
  }
  check(skipOk == domOk, "skipValue and json::parse agree on validity");
  return 0;
}
