// Uses the installed package as an outside project would: a ByteBuf from netbuf::buffer, and a
// MessagePack-RPC call answered by MessagePackRpcServer (netbuf::rpc) on an EmbeddedChannel
// (netbuf::transport), its request and response encoded and decoded by netbuf::codec; and an HTTP
// request answered by HttpServer (netbuf::http) on another EmbeddedChannel.
#include <fmt/format.h>

#include <netbuf/http/http_server.hpp>
#include <netbuf/netbuf.hpp>
#include <netbuf/rpc/message_pack_rpc_server.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace {

/// The answer of a MessagePackRpcServer with one method, add(a, b), to add(40, 2); -1 when the
/// server wrote anything but one successful response.
std::int64_t rpcAdd() {
  netbuf::MessagePackRpcServer rpc;
  rpc.method(
      "add",
      [](std::span<const netbuf::Value> p, netbuf::MessagePackWriter& result) {
        result.packInt(p[0].asInt64() + p[1].asInt64());
      },
      2);
  netbuf::EmbeddedChannel channel;
  rpc.install(channel.pipeline());

  netbuf::ByteBuf request = netbuf::Unpooled::buffer();
  netbuf::MessagePackWriter writer(request);
  netbuf::writeRpcRequest(writer, 7, "add",
                          {netbuf::Value::integer(40), netbuf::Value::integer(2)});
  channel.writeInbound(std::move(request));

  netbuf::Message out = channel.readOutboundMessage();
  if (out.empty()) return -1;
  netbuf::ByteBuf bytes = out.is<netbuf::ByteBuf>() ? out.take<netbuf::ByteBuf>()
                                                    : toContiguous(out.take<netbuf::AnyByteBuf>());
  const netbuf::RpcMessage response =
      netbuf::RpcMessage::parse(netbuf::msgpack::decode(std::move(bytes)));
  if (!channel.readOutboundMessage().empty() ||
      response.type() != netbuf::RpcMessageType::Response || response.msgid() != 7 ||
      response.isError()) {
    return -1;
  }
  return response.result().asInt64();
}

/// Whether an HttpServer with one route answers "GET / HTTP/1.1" with 200 and its body.
bool httpHello() {
  netbuf::HttpServer server;
  server.route(netbuf::HttpMethod::GET, "/", [](netbuf::FullHttpRequest&) {
    return netbuf::HttpServer::text(netbuf::HttpResponseStatus::OK, "hi");
  });
  netbuf::EmbeddedChannel channel;
  server.install(channel.pipeline());
  netbuf::ByteBuf request = netbuf::Unpooled::buffer();
  request.writeBytes(std::string_view("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  channel.writeInbound(std::move(request));
  netbuf::Message out = channel.readOutboundMessage();
  if (out.empty()) return false;
  netbuf::ByteBuf bytes = out.is<netbuf::ByteBuf>() ? out.take<netbuf::ByteBuf>()
                                                    : toContiguous(out.take<netbuf::AnyByteBuf>());
  const std::string text = bytes.getAscii(bytes.readerIndex(), bytes.readableBytes());
  return text.rfind("HTTP/1.1 200 OK\r\n", 0) == 0 && text.size() >= 2 &&
         text.substr(text.size() - 2) == "hi";
}

}  // namespace

int main() {
  netbuf::ByteBuf buf = netbuf::Unpooled::buffer(16);
  buf.writeInt(42);
  buf.writeUtf8(u"ok");
  const std::int64_t sum = rpcAdd();
  const bool http = httpHello();
  fmt::print("consumer ok: {} rpc add(40, 2) = {}, http {}\n", buf.hexDump(0, 4), sum,
             http ? "ok" : "failed");
  return buf.readInt() == 42 && buf.readUtf8(2) == "ok" && sum == 42 && http ? 0 : 1;
}
