#include <netbuf/codec/msgpack/message_pack_rpc.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <cstdint>
#include <netbuf/buffer/byte_buf.hpp>

namespace netbuf {

std::string_view rpcMessageTypeName(RpcMessageType type) noexcept {
  switch (type) {
    case RpcMessageType::Request:
      return "Request";
    case RpcMessageType::Response:
      return "Response";
    case RpcMessageType::Notification:
      return "Notification";
  }
  return "?";
}

namespace {

/// "Int -1", "UInt 4294967296", "Str" (numbers are named with their value: they are the usual
/// mistake).
std::string describe(const Value& v) {
  switch (v.type()) {
    case ValueType::Int:
      return fmt::format("Int {}", v.asInt64());
    case ValueType::UInt:
      return fmt::format("UInt {}", v.asUInt64());
    default:
      return std::string(valueTypeName(v.type()));
  }
}

[[noreturn]] void fail(const std::string& what, std::uint64_t value = CodecError::kNone,
                       std::uint64_t limit = CodecError::kNone) {
  throw MessagePackRpcError(what, value, limit);
}

std::uint32_t parseMsgid(const Value& v) {
  if (v.type() == ValueType::UInt && v.asUInt64() <= UINT32_MAX)
    return static_cast<std::uint32_t>(v.asUInt64());
  // Int >= 0 only comes from hand-built Values (decoders give UInt for non-negative numbers).
  if (v.type() == ValueType::Int && v.asInt64() >= 0 && v.asInt64() <= INT64_C(0xffffffff))
    return static_cast<std::uint32_t>(v.asInt64());
  fail(fmt::format("msgid must be uint32, got {}", describe(v)));
}

std::string_view parseMethod(const Value& v) {
  if (!v.isStr()) fail(fmt::format("method must be a str, got {}", describe(v)));
  // A leniently decoded str keeps invalid UTF-8: no method has such a name, and echoing it in a
  // NoMethodError would not encode.
  if (v.hasInvalidUtf8()) fail("method is not valid UTF-8");
  return v.asStr();
}

std::span<const Value> parseParams(const Value& v) {
  if (!v.isArray()) fail(fmt::format("params must be an array, got {}", describe(v)));
  return v.asArray();
}

void checkSize(std::span<const Value> m, RpcMessageType type, std::size_t expected) {
  if (m.size() != expected) {
    std::string name(rpcMessageTypeName(type));
    name[0] = static_cast<char>(name[0] - 'A' + 'a');
    fail(fmt::format("{} must have {} elements, got {}", name, expected, m.size()), m.size(),
         expected);
  }
}

}  // namespace

RpcMessageView parseRpcMessage(const Value& root) {
  if (!root.isArray()) fail(fmt::format("message must be an array, got {}", describe(root)));
  const std::span<const Value> m = root.asArray();
  if (m.empty()) fail("message is an empty array");
  if (!m[0].isInteger())
    fail(fmt::format("message type must be an integer, got {}", describe(m[0])));
  RpcMessageView view;
  const bool negative = m[0].type() == ValueType::Int && m[0].asInt64() < 0;
  const std::uint64_t t = negative ? UINT64_MAX : m[0].asUInt64();
  switch (t) {
    case 0:
      view.type = RpcMessageType::Request;
      checkSize(m, view.type, 4);
      view.msgid = parseMsgid(m[1]);
      view.method = parseMethod(m[2]);
      view.params = parseParams(m[3]);
      break;
    case 1:
      view.type = RpcMessageType::Response;
      checkSize(m, view.type, 4);
      view.msgid = parseMsgid(m[1]);
      view.error = m[2];
      view.result = m[3];
      break;
    case 2:
      view.type = RpcMessageType::Notification;
      checkSize(m, view.type, 3);
      view.method = parseMethod(m[1]);
      view.params = parseParams(m[2]);
      break;
    default:
      if (negative) fail(fmt::format("message type {} unknown", m[0].asInt64()));
      fail(fmt::format("message type {} unknown", t), t);
  }
  return view;
}

RpcMessage RpcMessage::parse(Document doc) {
  const RpcMessageView view = parseRpcMessage(doc.root());
  return RpcMessage(std::move(doc), view);
}

// ---- RpcError

namespace {
std::shared_ptr<const std::vector<std::byte>> encodeToVector(const Value& v) {
  ByteBuf buf = Unpooled::buffer(64);
  msgpack::encode(v, buf);
  const auto span = buf.readableSpan();
  return std::make_shared<const std::vector<std::byte>>(span.begin(), span.end());
}
}  // namespace

RpcError::RpcError(std::string_view message)
    : RpcError(std::string(message), encodeToVector(Value::strView(message))) {}

RpcError::RpcError(const Value& error)
    : RpcError(error.isNil()
                   ? throw IllegalArgumentError("RpcError: the error value must not be nil")
                   : error.toDebugString(),
               encodeToVector(error)) {}

// ---- writers

void writeRpcRequestHead(MessagePackWriter& w, std::uint32_t msgid, std::string_view method) {
  w.packArrayHeader(4).packUInt(0).packUInt(msgid).packStr(method);
}

void writeRpcNotificationHead(MessagePackWriter& w, std::string_view method) {
  w.packArrayHeader(3).packUInt(2).packStr(method);
}

void writeRpcResultHead(MessagePackWriter& w, std::uint32_t msgid) {
  w.packArrayHeader(4).packUInt(1).packUInt(msgid).packNil();
}

void writeRpcErrorHead(MessagePackWriter& w, std::uint32_t msgid) {
  w.packArrayHeader(4).packUInt(1).packUInt(msgid);
}

namespace detail {
void throwRpcParamsNotArray(const Value& params) {
  throw EncoderError(
      fmt::format("RPC params must be an Array, got {}", valueTypeName(params.type())),
      CodecError::kNone);
}
void throwRpcEmptyError() {
  throw EncoderError("RPC error writer wrote nothing (a nil error would mean success)",
                     CodecError::kNone);
}
}  // namespace detail

void writeRpcRequest(MessagePackWriter& w, std::uint32_t msgid, std::string_view method,
                     const Value& params) {
  if (!params.isArray()) detail::throwRpcParamsNotArray(params);
  writeRpcRequestHead(w, msgid, method);
  w.pack(params);
}

void writeRpcRequest(MessagePackWriter& w, std::uint32_t msgid, std::string_view method,
                     std::span<const Value> params) {
  writeRpcRequest(w, msgid, method, Value::arrayView(params));
}

void writeRpcNotification(MessagePackWriter& w, std::string_view method, const Value& params) {
  if (!params.isArray()) detail::throwRpcParamsNotArray(params);
  writeRpcNotificationHead(w, method);
  w.pack(params);
}

void writeRpcNotification(MessagePackWriter& w, std::string_view method,
                          std::span<const Value> params) {
  writeRpcNotification(w, method, Value::arrayView(params));
}

void writeRpcResult(MessagePackWriter& w, std::uint32_t msgid, const Value& result) {
  writeRpcResultHead(w, msgid);
  w.pack(result);
}

void writeRpcError(MessagePackWriter& w, std::uint32_t msgid, const Value& error) {
  if (error.isNil()) detail::throwRpcEmptyError();
  writeRpcErrorHead(w, msgid);
  w.pack(error).packNil();
}

void writeRpcError(MessagePackWriter& w, std::uint32_t msgid, std::string_view message) {
  writeRpcErrorHead(w, msgid);
  w.packStr(message).packNil();
}

void writeRpcError(MessagePackWriter& w, std::uint32_t msgid, const RpcError& error) {
  writeRpcErrorHead(w, msgid);
  w.packRaw(error.encodedError()).packNil();
}

}  // namespace netbuf
