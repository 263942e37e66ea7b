// The MessagePack-RPC message model: parsing every message type, every malformed shape (with its
// message and value/limit), zero copy, and the writers (byte-exact, round trips, misuse).
#include <netbuf/codec/msgpack/message_pack_rpc.hpp>

#include <doctest/doctest.h>

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

ByteBuf bytes(std::initializer_list<int> b) {
  ByteBuf buf = Unpooled::buffer(b.size() + 1);
  for (int x : b) buf.writeByte(static_cast<std::uint8_t>(x));
  return buf;
}

std::vector<int> toInts(const ByteBuf& buf) {
  std::vector<int> v;
  for (std::byte b : buf.readableSpan()) v.push_back(static_cast<int>(b));
  return v;
}

/// Parses a document built by hand; the error text when it fails ("" when it parses).
std::string parseError(Document doc) {
  try {
    RpcMessage::parse(std::move(doc));
  } catch (const MessagePackRpcError& e) {
    return e.what();
  }
  return "";
}

Document rootOf(Value (*build)(Document&)) {
  Document doc;
  doc.setRoot(build(doc));
  return doc;
}

}  // namespace

TEST_CASE("parse: request, response, error response, notification from the wire") {
  SUBCASE("request [0, 7, \"add\", [1, 2]]") {
    RpcMessage m = RpcMessage::parse(
        msgpack::decode(bytes({0x94, 0x00, 0x07, 0xa3, 'a', 'd', 'd', 0x92, 0x01, 0x02})));
    CHECK(m.type() == RpcMessageType::Request);
    CHECK(m.msgid() == 7);
    CHECK(m.method() == "add");
    REQUIRE(m.params().size() == 2);
    CHECK(m.params()[1].asInt64() == 2);
    CHECK_FALSE(m.isError());
  }
  SUBCASE("response [1, 0xffffffff, nil, \"ok\"]") {
    RpcMessage m = RpcMessage::parse(
        msgpack::decode(bytes({0x94, 0x01, 0xce, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xa2, 'o', 'k'})));
    CHECK(m.type() == RpcMessageType::Response);
    CHECK(m.msgid() == 0xffffffffu);
    CHECK(m.error().isNil());
    CHECK(m.result().asStr() == "ok");
    CHECK_FALSE(m.isError());
  }
  SUBCASE("error response [1, 3, [1, \"x\"], nil]") {
    RpcMessage m =
        RpcMessage::parse(msgpack::decode(bytes({0x94, 0x01, 0x03, 0x92, 0x01, 0xa1, 'x', 0xc0})));
    CHECK(m.isError());
    CHECK(m.error().isArray());
    CHECK(m.result().isNil());
  }
  SUBCASE("error response with a non-nil result is tolerated (error wins)") {
    RpcMessage m = RpcMessage::parse(msgpack::decode(bytes({0x94, 0x01, 0x03, 0xa1, 'e', 0x05})));
    CHECK(m.isError());
    CHECK(m.result().asUInt64() == 5);
  }
  SUBCASE("notification [2, \"log\", []]") {
    RpcMessage m =
        RpcMessage::parse(msgpack::decode(bytes({0x93, 0x02, 0xa3, 'l', 'o', 'g', 0x90})));
    CHECK(m.type() == RpcMessageType::Notification);
    CHECK(m.method() == "log");
    CHECK(m.params().empty());
    CHECK(m.msgid() == 0);
  }
  SUBCASE("empty method name is allowed") {
    RpcMessage m = RpcMessage::parse(msgpack::decode(bytes({0x94, 0x00, 0x00, 0xa0, 0x90})));
    CHECK(m.method().empty());
  }
}

TEST_CASE("parse: zero copy - str and bin params view the frame, and survive moves") {
  ByteBuf frame =
      bytes({0x94, 0x00, 0x01, 0xa3, 'p', 'u', 't', 0x92, 0xa1, 'k', 0xc4, 0x03, 0x0a, 0x0b, 0x0c});
  const std::byte* base = frame.readPtr();
  const std::size_t size = frame.readableBytes();
  RpcMessage m = RpcMessage::parse(msgpack::decode(std::move(frame)));
  RpcMessage moved = std::move(m);
  const auto bin = moved.params()[1].asBin();
  CHECK(bin.data() >= base);
  CHECK(bin.data() + bin.size() <= base + size);
  CHECK(moved.method().data() >= reinterpret_cast<const char*>(base));
  CHECK(static_cast<int>(bin[2]) == 0x0c);
  ByteBuf slice = moved.document().retainedSlice(moved.params()[1]);
  CHECK(slice.readableBytes() == 3);
  CHECK(slice.readPtr() == bin.data());
}

TEST_CASE("parse: every malformed shape is a MessagePackRpcError naming what is wrong") {
  const auto check = [](std::initializer_list<int> wire, const std::string& expected) {
    CAPTURE(expected);
    try {
      RpcMessage::parse(msgpack::decode(bytes(wire)));
      FAIL("parsed: " << expected);
    } catch (const MessagePackRpcError& e) {
      CHECK(std::string(e.what()) == expected);
      CHECK(e.offset() == CodecError::kNone);
    }
  };
  check({0x81, 0xa1, 'a', 0x01}, "message must be an array, got Map");
  check({0x05}, "message must be an array, got UInt 5");
  check({0xc0}, "message must be an array, got Nil");
  check({0x90}, "message is an empty array");
  check({0x94, 0xa1, 'x', 0x01, 0xa1, 'm', 0x90}, "message type must be an integer, got Str");
  check({0x94, 0xc3, 0x01, 0xa1, 'm', 0x90}, "message type must be an integer, got Bool");
  check({0x94, 0xca, 0, 0, 0, 0, 0x01, 0xa1, 'm', 0x90},
        "message type must be an integer, got Float32");
  check({0x94, 0x03, 0x01, 0xa1, 'm', 0x90}, "message type 3 unknown");
  check({0x94, 0xff, 0x01, 0xa1, 'm', 0x90}, "message type -1 unknown");
  check({0x94, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0xa1, 'm', 0x90},
        "message type 18446744073709551615 unknown");
  // Element counts.
  check({0x93, 0x00, 0x01, 0xa1, 'm'}, "request must have 4 elements, got 3");
  check({0x95, 0x00, 0x01, 0xa1, 'm', 0x90, 0xc0}, "request must have 4 elements, got 5");
  check({0x91, 0x00}, "request must have 4 elements, got 1");
  check({0x93, 0x01, 0x01, 0xc0}, "response must have 4 elements, got 3");
  check({0x94, 0x02, 0xa1, 'm', 0x90, 0xc0}, "notification must have 3 elements, got 4");
  check({0x92, 0x02, 0xa1, 'm'}, "notification must have 3 elements, got 2");
  // msgid.
  check({0x94, 0x00, 0xff, 0xa1, 'm', 0x90}, "msgid must be uint32, got Int -1");
  check({0x94, 0x00, 0xcf, 0, 0, 0, 0x01, 0, 0, 0, 0, 0xa1, 'm', 0x90},
        "msgid must be uint32, got UInt 4294967296");
  check({0x94, 0x00, 0xa1, '1', 0xa1, 'm', 0x90}, "msgid must be uint32, got Str");
  check({0x94, 0x00, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xa1, 'm', 0x90},
        "msgid must be uint32, got Float64");
  check({0x94, 0x01, 0xc0, 0xc0, 0xc0}, "msgid must be uint32, got Nil");
  check({0x94, 0x01, 0xd0, 0x80, 0xc0, 0xc0}, "msgid must be uint32, got Int -128");
  // method.
  check({0x94, 0x00, 0x01, 0xc4, 0x01, 'm', 0x90}, "method must be a str, got Bin");
  check({0x94, 0x00, 0x01, 0x01, 0x90}, "method must be a str, got UInt 1");
  check({0x93, 0x02, 0xc0, 0x90}, "method must be a str, got Nil");
  // params.
  check({0x94, 0x00, 0x01, 0xa1, 'm', 0x80}, "params must be an array, got Map");
  check({0x94, 0x00, 0x01, 0xa1, 'm', 0xc0}, "params must be an array, got Nil");
  check({0x93, 0x02, 0xa1, 'm', 0xa1, 'p'}, "params must be an array, got Str");
}

TEST_CASE("parse: a method name that is not UTF-8 (lenient decoding) is refused") {
  MessagePackReadOptions lenient;
  lenient.lenientUtf8 = true;
  Document doc;
  msgpack::decode(bytes({0x94, 0x00, 0x01, 0xa1, 0xff, 0x90}), doc, lenient);
  CHECK_THROWS_WITH_AS(parseRpcMessage(doc.root()), "method is not valid UTF-8",
                       MessagePackRpcError);
}

TEST_CASE("parse: error value() and limit() carry the numbers") {
  try {
    RpcMessage::parse(msgpack::decode(bytes({0x94, 0x07, 0x01, 0xa1, 'm', 0x90})));
    FAIL("parsed");
  } catch (const MessagePackRpcError& e) {
    CHECK(e.value() == 7);
  }
  try {
    RpcMessage::parse(msgpack::decode(bytes({0x92, 0x00, 0x01})));
    FAIL("parsed");
  } catch (const MessagePackRpcError& e) {
    CHECK(e.value() == 2);
    CHECK(e.limit() == 4);
  }
  // It is a DecoderError (the codec framework reports it like any other).
  CHECK_THROWS_AS(RpcMessage::parse(msgpack::decode(bytes({0x90}))), DecoderError);
}

TEST_CASE("parse: hand-built Values (Int msgid >= 0 accepted, boundaries)") {
  CHECK(parseError(rootOf([](Document& d) {
          return d.array({Value::integer(0), Value::integer(0xffffffff), d.str("m"), d.array({})});
        })) == "");
  CHECK(parseError(rootOf([](Document& d) {
          return d.array({Value::integer(0), Value::integer(0x100000000), d.str("m"), d.array({})});
        })) == "msgid must be uint32, got Int 4294967296");
  CHECK(parseError(rootOf([](Document& d) {
          return d.array({Value::uinteger(2), d.str("m"), d.array({Value::nil()})});
        })) == "");
  CHECK_THROWS_AS(parseRpcMessage(Value()), MessagePackRpcError);
}

TEST_CASE("writers: byte-exact requests, notifications and responses") {
  ByteBuf out = Unpooled::buffer();
  SUBCASE("request with Value params") {
    Document d;
    MessagePackWriter w(out);
    writeRpcRequest(w, 7, "add", d.array({Value::integer(1), Value::integer(2)}));
    CHECK(toInts(out) == std::vector<int>{0x94, 0x00, 0x07, 0xa3, 'a', 'd', 'd', 0x92, 0x01, 0x02});
  }
  SUBCASE("request with an initializer list, msgid 0xffffffff") {
    MessagePackWriter w(out);
    writeRpcRequest(w, 0xffffffffu, "m", {Value::boolean(true)});
    CHECK(toInts(out) ==
          std::vector<int>{0x94, 0x00, 0xce, 0xff, 0xff, 0xff, 0xff, 0xa1, 'm', 0x91, 0xc3});
  }
  SUBCASE("request with a params callable") {
    MessagePackWriter w(out);
    writeRpcRequest(w, 1, "m", [](MessagePackWriter& p) { p.packArrayHeader(1).packNil(); });
    CHECK(toInts(out) == std::vector<int>{0x94, 0x00, 0x01, 0xa1, 'm', 0x91, 0xc0});
  }
  SUBCASE("a params callable that writes nothing sends []") {
    MessagePackWriter w(out);
    writeRpcRequest(w, 1, "m", [](MessagePackWriter&) {});
    CHECK(toInts(out) == std::vector<int>{0x94, 0x00, 0x01, 0xa1, 'm', 0x90});
  }
  SUBCASE("notification") {
    MessagePackWriter w(out);
    writeRpcNotification(w, "log", {Value::uinteger(300)});
    CHECK(toInts(out) == std::vector<int>{0x93, 0x02, 0xa3, 'l', 'o', 'g', 0x91, 0xcd, 0x01, 0x2c});
  }
  SUBCASE("notification with a callable") {
    MessagePackWriter w(out);
    writeRpcNotification(w, "n", [](MessagePackWriter&) {});
    CHECK(toInts(out) == std::vector<int>{0x93, 0x02, 0xa1, 'n', 0x90});
  }
  SUBCASE("result") {
    MessagePackWriter w(out);
    writeRpcResult(w, 5, Value::integer(-1));
    CHECK(toInts(out) == std::vector<int>{0x94, 0x01, 0x05, 0xc0, 0xff});
  }
  SUBCASE("result from a callable; nothing written: nil") {
    MessagePackWriter w(out);
    writeRpcResult(w, 5, [](MessagePackWriter&) {});
    CHECK(toInts(out) == std::vector<int>{0x94, 0x01, 0x05, 0xc0, 0xc0});
  }
  SUBCASE("error as str / Value / callable / RpcError") {
    MessagePackWriter w(out);
    writeRpcError(w, 9, std::string_view("no"));
    writeRpcError(w, 9, Value::uinteger(1));
    writeRpcError(w, 9, [](MessagePackWriter& e) { e.packArrayHeader(0); });
    writeRpcError(w, 9, RpcError("x"));
    CHECK(toInts(out) == std::vector<int>{0x94, 0x01, 0x09, 0xa2, 'n',  'o', 0xc0,  //
                                          0x94, 0x01, 0x09, 0x01, 0xc0,             //
                                          0x94, 0x01, 0x09, 0x90, 0xc0,             //
                                          0x94, 0x01, 0x09, 0xa1, 'x',  0xc0});
  }
}

TEST_CASE("writers: misuse is an EncoderError") {
  ByteBuf out = Unpooled::buffer();
  MessagePackWriter w(out);
  CHECK_THROWS_AS(writeRpcRequest(w, 1, "m", Value::integer(1)), EncoderError);
  CHECK_THROWS_AS(writeRpcNotification(w, "m", Value::nil()), EncoderError);
  CHECK(out.readableBytes() == 0);  // checked before anything is written
  CHECK_THROWS_AS(writeRpcError(w, 1, Value::nil()), EncoderError);
  CHECK(out.readableBytes() == 0);
  CHECK_THROWS_WITH_AS(writeRpcError(w, 1, [](MessagePackWriter&) {}),
                       doctest::Contains("wrote nothing"), EncoderError);
  // Invalid UTF-8 in a method name is refused by packStr.
  ByteBuf out2 = Unpooled::buffer();
  MessagePackWriter w2(out2);
  CHECK_THROWS_AS(writeRpcRequest(w2, 1, std::string_view("\xff", 1), {}), EncoderError);
}

TEST_CASE("writers and parser round trip") {
  ByteBuf out = Unpooled::buffer();
  {
    MessagePackWriter w(out);
    writeRpcRequest(w, 42, "echo", [](MessagePackWriter& p) {
      p.packArrayHeader(3).packStr("s").packBin(std::span<const std::byte>()).packInt(-5);
    });
  }
  RpcMessage m = RpcMessage::parse(msgpack::decode(std::move(out)));
  CHECK(m.msgid() == 42);
  CHECK(m.method() == "echo");
  REQUIRE(m.params().size() == 3);
  CHECK(m.params()[0].asStr() == "s");
  CHECK(m.params()[1].isBin());
  CHECK(m.params()[2].asInt64() == -5);
}

TEST_CASE("RpcError carries its encoded value") {
  RpcError e("boom");
  CHECK(std::string(e.what()) == "boom");
  MessagePackReader r(e.encodedError());
  CHECK(r.readStr() == "boom");
  Document d;
  RpcError e2(d.array({Value::integer(3), d.str("bad")}));
  d.clear();  // the error owns its copy
  Document back = msgpack::decode(Unpooled::copiedBuffer(e2.encodedError()));
  CHECK(back.root()[0].asInt64() == 3);
  CHECK(back.root()[1].asStr() == "bad");
  CHECK_THROWS_AS(RpcError{Value::nil()}, IllegalArgumentError);
  RpcError copy = e2;  // exceptions are copyable
  CHECK(copy.encodedError().size() == e2.encodedError().size());
}

TEST_CASE("rpcMessageTypeName") {
  CHECK(rpcMessageTypeName(RpcMessageType::Request) == "Request");
  CHECK(rpcMessageTypeName(RpcMessageType::Response) == "Response");
  CHECK(rpcMessageTypeName(RpcMessageType::Notification) == "Notification");
}
