#pragma once
// Drives a JsonStreamWriter over a Value tree, as a hand-written serializer would: shared by the
// JSON writer tests and json_parse_fuzz, which compare its bytes with json::write's.

#include <netbuf/codec/json/json_stream_writer.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <netbuf/codec/value.hpp>

namespace netbuf::test {

/// Writes v through JsonStreamWriter calls, calling onOpen() after each beginArray/beginObject
/// (to watch depth()). Returns false, having written part of v, when v holds a type that has no
/// stream call (Bin, Ext, Timestamp).
template <class OnOpen>
bool streamJson(JsonStreamWriter& w, const Value& v, OnOpen&& onOpen) {
  switch (v.type()) {
    case ValueType::Nil:
      w.null();
      return true;
    case ValueType::Bool:
      w.value(v.asBool());
      return true;
    case ValueType::Int:
      w.valueInt(v.asInt64());
      return true;
    case ValueType::UInt:
      w.valueUInt(v.asUInt64());
      return true;
    case ValueType::Float32:
      w.value(v.asFloat32());
      return true;
    case ValueType::Float64:
      w.value(v.asDouble());
      return true;
    case ValueType::Str:
      w.value(v.asStr());
      return true;
    case ValueType::Array:
      w.beginArray();
      onOpen();
      for (const Value& e : v.asArray()) {
        if (!streamJson(w, e, onOpen)) return false;
      }
      w.endArray();
      return true;
    case ValueType::Map:
      w.beginObject();
      onOpen();
      for (const Member& m : v.asMap()) {
        w.key(m.key.asStr());
        if (!streamJson(w, m.value, onOpen)) return false;
      }
      w.endObject();
      return true;
    default:
      return false;
  }
}

inline bool streamJson(JsonStreamWriter& w, const Value& v) {
  return streamJson(w, v, [] {});
}

}  // namespace netbuf::test
