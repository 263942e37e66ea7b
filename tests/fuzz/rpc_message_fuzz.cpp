// libFuzzer target for the MessagePack-RPC message model (message_pack_rpc.hpp): arbitrary bytes
// decoded as MessagePack and validated as an RPC message, then written back with the RPC writers.
//
// Invariants:
//  - decoding throws only MessagePackError; parseRpcMessage throws only MessagePackRpcError
//    (any well-formed MessagePack value is either a valid message or rejected with that type);
//  - a valid message re-encoded with writeRpcRequest / writeRpcNotification / writeRpcResult /
//    writeRpcError parses back to the same type, msgid, method, params, error and result;
//  - RpcMessage::parse agrees with parseRpcMessage.
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <netbuf/codec/msgpack/message_pack_rpc.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_check.hpp"

using netbuf::fuzz::check;

namespace {

bool sameParams(std::span<const netbuf::Value> a, std::span<const netbuf::Value> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

bool hasNaN(const netbuf::Value& v) {
  using netbuf::ValueType;
  switch (v.type()) {
    case ValueType::Float32:
    case ValueType::Float64:
      return v.asDouble() != v.asDouble();
    case ValueType::Array:
      for (const auto& e : v.asArray()) {
        if (hasNaN(e)) return true;
      }
      return false;
    case ValueType::Map:
      for (const auto& m : v.asMap()) {
        if (hasNaN(m.key) || hasNaN(m.value)) return true;
      }
      return false;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace netbuf;
  const auto input = std::as_bytes(std::span(data, size));
  MessagePackReadOptions options;
  options.limits.maxDepth = 64;
  Document doc;
  try {
    msgpack::decode(input, doc, options);
  } catch (const MessagePackError&) {
    return 0;
  } catch (...) {
    check(false, "decode threw something other than MessagePackError");
  }

  RpcMessageView view;
  try {
    view = parseRpcMessage(doc.root());
  } catch (const MessagePackRpcError&) {
    bool alsoRejected = false;
    try {
      Document copy;
      msgpack::decode(input, copy, options);
      (void)RpcMessage::parse(std::move(copy));
    } catch (const MessagePackRpcError&) {
      alsoRejected = true;
    }
    check(alsoRejected, "RpcMessage::parse rejects what parseRpcMessage rejects");
    return 0;
  } catch (...) {
    check(false, "parseRpcMessage threw something other than MessagePackRpcError");
  }
  if (hasNaN(doc.root())) return 0;  // NaN != NaN: the comparisons below cannot hold

  // Write it back with the RPC writers and parse again.
  ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(size + 64);
  MessagePackWriter w(out);
  switch (view.type) {
    case RpcMessageType::Request:
      writeRpcRequest(w, view.msgid, view.method, view.params);
      break;
    case RpcMessageType::Notification:
      writeRpcNotification(w, view.method, view.params);
      break;
    case RpcMessageType::Response:
      if (view.error.isNil()) {
        writeRpcResult(w, view.msgid, view.result);
      } else {
        writeRpcError(w, view.msgid, view.error);
      }
      break;
  }
  Document again;
  msgpack::decode(std::move(out), again, options);
  const RpcMessageView back = parseRpcMessage(again.root());
  check(back.type == view.type, "type survives");
  check(back.type == RpcMessageType::Notification || back.msgid == view.msgid, "msgid survives");
  check(back.method == view.method, "method survives");
  check(sameParams(back.params, view.params), "params survive");
  check(back.error == view.error, "error survives");
  // A response with both an error and a result is accepted (the error wins); the writers put nil
  // in the other slot, so the result only survives on success.
  check(!view.error.isNil() || back.result == view.result, "result survives");
  return 0;
}
