// ChannelGroup over loopback TCP: a server adds every accepted channel to a group; broadcasts from
// the test's thread and from a loop thread reach every client exactly; the group's future counts
// the channels; a client that disconnects leaves the group; close() closes them all. Run under
// ThreadSanitizer ("threaded").
#include <netbuf/transport/channel_group.hpp>

#include <doctest/doctest.h>

#include "support/thread_waits.hpp"

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <string>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;

namespace {

using netbuf::test::eventually;

/// Collects what a client receives (thread-safe view for the test thread).
struct Collector : ChannelHandler {
  std::mutex m;
  std::string bytes;
  std::atomic<bool> inactive{false};
  void channelRead(ChannelHandlerContext&, Message msg) override {
    std::lock_guard<std::mutex> g(m);
    bytes += readableBytesToString(AnyByteBuf(msg.take<ByteBuf>()));
  }
  void channelInactive(ChannelHandlerContext&) override { inactive = true; }
  std::string text() {
    std::lock_guard<std::mutex> g(m);
    return bytes;
  }
  std::size_t size() {
    std::lock_guard<std::mutex> g(m);
    return bytes.size();
  }
};

/// On the server: every buffer a client sends is broadcast to the whole group, from the loop.
struct Relay : ChannelHandler {
  ChannelGroup* group;
  explicit Relay(ChannelGroup* g) : group(g) {}
  void channelRead(ChannelHandlerContext&, Message msg) override {
    group->writeAndFlush(msg.take<ByteBuf>());
  }
};

struct Client {
  std::shared_ptr<SocketChannel> channel;
  Collector* collector = nullptr;
};

Client connectClient(EventLoopGroup& loops, unsigned short port) {
  std::promise<Collector*> made;
  Client c;
  c.channel = Bootstrap()
                  .group(loops)
                  .connectTimeout(5s)
                  .handler([&](SocketChannel& ch) {
                    auto col = std::make_unique<Collector>();
                    made.set_value(col.get());
                    ch.pipeline().addLast("collect", std::move(col));
                  })
                  .connect("127.0.0.1", port, boost::asio::use_future)
                  .get();
  c.collector = made.get_future().get();
  return c;
}

}  // namespace

TEST_CASE("ChannelGroup over TCP: broadcast to 8 clients, counts, auto-removal, close all") {
  constexpr int kClients = 8;
  EventLoopGroup loops(2);
  ChannelGroup group("clients");
  auto server = ServerBootstrap()
                    .group(loops)
                    .childHandler([&](SocketChannel& ch) {
                      ch.pipeline().addLast("relay", std::make_unique<Relay>(&group));
                      group.add(ch.shared_from_this());
                    })
                    .bind("127.0.0.1", 0);
  std::vector<Client> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(connectClient(loops, server->port()));
  REQUIRE(eventually([&] { return group.size() == kClients; }));

  // From the test's thread: a large buffer (many reads on the other side), then a small one.
  std::string big(256 * 1024, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  ChannelGroupFuture f1 = group.writeAndFlush(Unpooled::copiedBuffer(big));
  ChannelGroupFuture f2 = group.writeAndFlush(Unpooled::copiedBuffer("|end"));
  REQUIRE(f1.waitFor(10s));
  REQUIRE(f2.waitFor(10s));
  CHECK(f1.isSuccess());
  CHECK(f1.size() == kClients);
  CHECK(f1.successCount() == kClients);
  CHECK(f2.successCount() == kClients);
  const std::string expected = big + "|end";
  for (auto& c : clients) {
    REQUIRE(eventually([&] { return c.collector->size() >= expected.size(); }));
    CHECK(c.collector->text() == expected);  // exactly the bytes, in order, once
  }

  // From a loop thread: a client's message relayed by the server to every member.
  clients[0].channel->writeAndFlush(Unpooled::copiedBuffer("|relay"));
  for (auto& c : clients) {
    REQUIRE(eventually([&] { return c.collector->size() >= expected.size() + 6; }));
    CHECK(c.collector->text() == expected + "|relay");
  }

  // The callback runs once the last channel completed.
  std::promise<std::size_t> callbackSaw;
  ChannelGroupFuture bang = group.writeAndFlush(Unpooled::copiedBuffer("!"));
  bang.onComplete([&, bang](ErrorCode ec) { callbackSaw.set_value(ec ? 0 : bang.successCount()); });
  auto saw = callbackSaw.get_future();
  REQUIRE(saw.wait_for(10s) == std::future_status::ready);
  CHECK(saw.get() == kClients);

  // A client that disconnects: its server channel closes and leaves the group by itself.
  clients[3].channel->close();
  REQUIRE(eventually([&] { return group.size() == kClients - 1; }));
  ChannelGroupFuture f3 = group.writeAndFlush(Unpooled::copiedBuffer("?"));
  REQUIRE(f3.waitFor(10s));
  CHECK(f3.size() == kClients - 1);
  CHECK(f3.successCount() == kClients - 1);

  // close(): every member closes; the clients see the end of the stream.
  ChannelGroupFuture closing = group.close();
  REQUIRE(closing.waitFor(10s));
  CHECK(closing.size() == kClients - 1);
  CHECK(closing.successCount() == kClients - 1);
  for (int i = 0; i < kClients; ++i) {
    CHECK(eventually([&] { return clients[i].collector->inactive.load(); }));
  }
  CHECK(eventually([&] { return group.empty(); }));
  for (auto& c : clients) c.channel.reset();
  server->close();
  server->waitClosed(boost::asio::use_future).wait();
}
