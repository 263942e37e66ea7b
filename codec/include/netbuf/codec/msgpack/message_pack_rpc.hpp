#pragma once
// The MessagePack-RPC message model: parsing decoded Documents into requests, responses and
// notifications (with validation), and writing them with MessagePackWriter.
//
//   request       [0, msgid, method, params]     msgid uint32, method str, params array
//   response      [1, msgid, error, result]      error nil on success, else any value
//   notification  [2, method, params]
//
//   RpcMessage m = RpcMessage::parse(std::move(doc));   // throws MessagePackRpcError
//   if (m.type() == RpcMessageType::Request) use(m.msgid(), m.method(), m.params());
//
//   MessagePackWriter w(out);
//   writeRpcRequest(w, 7, "add", [](MessagePackWriter& p) {    // [0, 7, "add", [1, 2]]
//     p.packArrayHeader(2).packInt(1).packInt(2);
//   });
//   writeRpcResult(w, 7, Value::integer(3));                    // [1, 7, nil, 3]
//   writeRpcError(w, 8, Value::strView("NoMethodError: x"));    // [1, 8, "NoMethodError: x", nil]
//
// Writers check what they can before writing (params an Array, an error not nil). An
// EncoderError raised part way through (invalid UTF-8 inside a value, a throwing writer callback)
// leaves the bytes already written in the buffer: reset its writerIndex to where the message
// began, as MessagePackRpcServer does, or discard the buffer.
//
// Zero copy: RpcMessage keeps the Document it was parsed from; method(), params(), error() and
// result() are views into it (and so into the frame the decoder sliced), valid while the
// RpcMessage lives. Moving an RpcMessage keeps them valid (a Document's memory does not move).
//
// Validation (parseRpcMessage / RpcMessage::parse), each failure a MessagePackRpcError (a
// DecoderError) whose message names what was wrong:
//   "message must be an array, got Map"        the top-level value is not an array
//   "message is an empty array"                no type element
//   "message type must be an integer, got Str" / "message type 3 unknown" (value() = 3)
//   "request must have 4 elements, got 3"      (value() = 3, limit() = 4); responses 4,
//                                              notifications 3
//   "msgid must be uint32, got Int -1"         negative, above 0xffffffff, or not an integer
//   "method must be a str, got Bin"
//   "params must be an array, got Map"
// A response whose error is not nil is an error response; its result is then reported as is
// (the spec says it is nil; a non-nil one is tolerated, not rejected, for interoperability).
// Error offsets are CodecError::kNone: the message model sees a decoded Document, not the stream
// (the MessagePackDecoder reports stream offsets for malformed MessagePack itself).
//
// Writing: the writeRpc* functions write one complete message. Params, results and errors come
// either as a Value or from a caller-supplied callable `void(MessagePackWriter&)` that writes
// exactly ONE value (for params: the array, header included). A params callable that writes
// nothing sends an empty array; a result callable that writes nothing sends nil; an error callable
// that writes nothing is an EncoderError (a nil error would mean success). A callable that writes
// more than one value produces a malformed message: that is the caller's bug and is not detected
// here (MessagePackRpcServer checks its handlers' results). Params given as a Value must be an
// Array (EncoderError otherwise). method must be valid UTF-8 (EncoderError from packStr).
//
// RpcError: what an RPC method throws to answer with an error value; it carries the value
// already encoded (so the exception owns everything it needs while the stack unwinds).
//
// Threading: free functions and value types; an RpcMessage is owned by one thread at a time.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/message_pack_writer.hpp>
#include <netbuf/codec/value.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf {

enum class RpcMessageType : std::uint8_t { Request = 0, Response = 1, Notification = 2 };

/// "Request", "Response", "Notification".
std::string_view rpcMessageTypeName(RpcMessageType type) noexcept;

/// A decoded value that is not a valid MessagePack-RPC message (see the header comment).
class MessagePackRpcError : public DecoderError {
 public:
  explicit MessagePackRpcError(const std::string& what, std::uint64_t value = kNone,
                               std::uint64_t limit = kNone)
      : DecoderError(what, kNone, value, limit) {}
};

/// One parsed message, as views into the Document it came from. Fields not used by the type keep
/// their defaults (msgid 0, empty method/params, Nil error/result).
struct RpcMessageView {
  RpcMessageType type = RpcMessageType::Notification;
  std::uint32_t msgid = 0;        ///< Request, Response
  std::string_view method;        ///< Request, Notification
  std::span<const Value> params;  ///< Request, Notification
  Value error;                    ///< Response: Nil on success
  Value result;                   ///< Response

  bool isRequest() const noexcept { return type == RpcMessageType::Request; }
  bool isResponse() const noexcept { return type == RpcMessageType::Response; }
  bool isNotification() const noexcept { return type == RpcMessageType::Notification; }
  /// A response whose error is not nil.
  bool isError() const noexcept { return isResponse() && !error.isNil(); }
};

/// Validates root as an RPC message and returns views into it. Throws MessagePackRpcError.
RpcMessageView parseRpcMessage(const Value& root);

/// A parsed message that owns its Document (zero copy: the views point into it).
class RpcMessage {
 public:
  /// Parses doc.root(); throws MessagePackRpcError (doc is then destroyed).
  static RpcMessage parse(Document doc);

  RpcMessage(RpcMessage&&) noexcept = default;
  RpcMessage& operator=(RpcMessage&&) noexcept = default;

  const RpcMessageView& view() const noexcept { return view_; }
  RpcMessageType type() const noexcept { return view_.type; }
  std::uint32_t msgid() const noexcept { return view_.msgid; }
  std::string_view method() const noexcept { return view_.method; }
  std::span<const Value> params() const noexcept { return view_.params; }
  const Value& error() const noexcept { return view_.error; }
  const Value& result() const noexcept { return view_.result; }
  bool isError() const noexcept { return view_.isError(); }

  const Document& document() const noexcept { return doc_; }
  /// Moves the Document out (the views then dangle once it is destroyed).
  Document takeDocument() noexcept { return std::move(doc_); }

 private:
  RpcMessage(Document doc, const RpcMessageView& view) : doc_(std::move(doc)), view_(view) {}
  Document doc_;
  RpcMessageView view_;
};

/// Thrown by an RPC method to answer with an error value (see MessagePackRpcServer).
class RpcError : public Error {
 public:
  /// The error value is the str `message`.
  explicit RpcError(std::string_view message);
  /// The error value is a deep copy of `error` (encoded now). `error` must not be Nil
  /// (IllegalArgumentError: a nil error means success).
  explicit RpcError(const Value& error);
  /// The MessagePack encoding of the error value.
  std::span<const std::byte> encodedError() const noexcept {
    return {encoded_->data(), encoded_->size()};
  }

 private:
  RpcError(std::string what, std::shared_ptr<const std::vector<std::byte>> encoded)
      : Error(what), encoded_(std::move(encoded)) {}
  std::shared_ptr<const std::vector<std::byte>> encoded_;
};

/// A callable that writes one MessagePack value.
template <class F>
concept RpcValueWriter = std::invocable<F&, MessagePackWriter&>;

// ---- message heads (the part before the caller's value), used by the templates below
/// [0, msgid, method, ... : writes the array header, type, msgid and method.
void writeRpcRequestHead(MessagePackWriter& w, std::uint32_t msgid, std::string_view method);
/// [2, method, ...
void writeRpcNotificationHead(MessagePackWriter& w, std::string_view method);
/// [1, msgid, nil, ... (the result follows)
void writeRpcResultHead(MessagePackWriter& w, std::uint32_t msgid);
/// [1, msgid, ... (the error follows, then nil)
void writeRpcErrorHead(MessagePackWriter& w, std::uint32_t msgid);

namespace detail {
[[noreturn]] void throwRpcParamsNotArray(const Value& params);
[[noreturn]] void throwRpcEmptyError();
}  // namespace detail

// ---- requests and notifications
/// params must be an Array (EncoderError otherwise).
void writeRpcRequest(MessagePackWriter& w, std::uint32_t msgid, std::string_view method,
                     const Value& params);
void writeRpcRequest(MessagePackWriter& w, std::uint32_t msgid, std::string_view method,
                     std::span<const Value> params);
inline void writeRpcRequest(MessagePackWriter& w, std::uint32_t msgid, std::string_view method,
                            std::initializer_list<Value> params) {
  writeRpcRequest(w, msgid, method, std::span<const Value>(params.begin(), params.size()));
}
template <RpcValueWriter F>
void writeRpcRequest(MessagePackWriter& w, std::uint32_t msgid, std::string_view method,
                     F&& params) {
  writeRpcRequestHead(w, msgid, method);
  const std::size_t before = w.bytesWritten();
  params(w);
  if (w.bytesWritten() == before) w.packArrayHeader(0);
}

void writeRpcNotification(MessagePackWriter& w, std::string_view method, const Value& params);
void writeRpcNotification(MessagePackWriter& w, std::string_view method,
                          std::span<const Value> params);
inline void writeRpcNotification(MessagePackWriter& w, std::string_view method,
                                 std::initializer_list<Value> params) {
  writeRpcNotification(w, method, std::span<const Value>(params.begin(), params.size()));
}
template <RpcValueWriter F>
void writeRpcNotification(MessagePackWriter& w, std::string_view method, F&& params) {
  writeRpcNotificationHead(w, method);
  const std::size_t before = w.bytesWritten();
  params(w);
  if (w.bytesWritten() == before) w.packArrayHeader(0);
}

// ---- responses
/// [1, msgid, nil, result]
void writeRpcResult(MessagePackWriter& w, std::uint32_t msgid, const Value& result);
template <RpcValueWriter F>
void writeRpcResult(MessagePackWriter& w, std::uint32_t msgid, F&& result) {
  writeRpcResultHead(w, msgid);
  const std::size_t before = w.bytesWritten();
  result(w);
  if (w.bytesWritten() == before) w.packNil();
}
/// [1, msgid, error, nil]; error must not be Nil (EncoderError).
void writeRpcError(MessagePackWriter& w, std::uint32_t msgid, const Value& error);
/// The str `message` as the error.
void writeRpcError(MessagePackWriter& w, std::uint32_t msgid, std::string_view message);
/// The error value an RpcError carries.
void writeRpcError(MessagePackWriter& w, std::uint32_t msgid, const RpcError& error);
template <RpcValueWriter F>
void writeRpcError(MessagePackWriter& w, std::uint32_t msgid, F&& error) {
  writeRpcErrorHead(w, msgid);
  const std::size_t before = w.bytesWritten();
  error(w);
  if (w.bytesWritten() == before) detail::throwRpcEmptyError();
  w.packNil();
}

}  // namespace netbuf
