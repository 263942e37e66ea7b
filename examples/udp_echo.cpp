// A UDP echo server on DatagramChannel, and a client on another DatagramChannel. Try the server
// with nc:
//
//   build/release/examples/udp_echo --port 7001 &
//   nc -u 127.0.0.1 7001          # every line comes back
//
// `udp_echo --self-test` starts the server on a free port, sends datagrams from a client channel
// (from the main thread: channel operations are safe from any thread), checks every echo and exits
// 0 (CTest runs it so).
//
// What it shows: datagrams in and out of the same pipeline as TCP, as DatagramPacket messages
// that carry their sender and recipient; an echo that answers each sender and flushes once per
// read batch; a connected client channel writing plain buffers to its peer.
#include <fmt/format.h>

#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdlib>
#include <future>
#include <mutex>
#include <netbuf/netbuf.hpp>
#include <set>
#include <string>
#include <string_view>

namespace {

using namespace netbuf;

/// Sends every datagram back to where it came from.
class EchoHandler final : public InboundHandler<DatagramPacket> {
 public:
  void messageReceived(ChannelHandlerContext& ctx, DatagramPacket packet) override {
    ctx.write(DatagramPacket(std::move(packet.content), packet.sender));
  }
  void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }
};

/// The client's side: the echoes it received (shared with the main thread).
struct Echoes {
  std::mutex m;
  std::set<std::string> got;
  std::promise<void> all;
  std::size_t expected = 0;
};

class CollectHandler final : public InboundHandler<DatagramPacket> {
 public:
  explicit CollectHandler(std::shared_ptr<Echoes> e) : echoes_(std::move(e)) {}
  void messageReceived(ChannelHandlerContext&, DatagramPacket packet) override {
    std::lock_guard<std::mutex> lock(echoes_->m);
    echoes_->got.insert(readableBytesToString(AnyByteBuf(std::move(packet.content))));
    if (echoes_->got.size() == echoes_->expected) echoes_->all.set_value();
  }

 private:
  std::shared_ptr<Echoes> echoes_;
};

int selfTest() {
  EventLoopGroup group(2);
  auto server = DatagramChannel::bind(group, "127.0.0.1", 0, [](DatagramChannel& ch) {
    ch.pipeline().addLast("echo", std::make_unique<EchoHandler>());
  });
  constexpr std::size_t kCount = 200;
  auto echoes = std::make_shared<Echoes>();
  echoes->expected = kCount;
  auto client = DatagramChannel::bind(group, "127.0.0.1", 0, [echoes](DatagramChannel& ch) {
    ch.pipeline().addLast("collect", std::make_unique<CollectHandler>(echoes));
  });
  client->connect(server->localEndpoint());  // plain buffers now go to the server
  // UDP may drop datagrams; on loopback with this little traffic it does not, and each datagram
  // is sent again below until its echo is in (so the self-test also shows a retry loop).
  auto done = echoes->all.get_future();
  for (int round = 0; round < 5; ++round) {
    for (std::size_t i = 0; i < kCount; ++i) {
      const std::string text = fmt::format("datagram {}", i);
      {
        std::lock_guard<std::mutex> lock(echoes->m);
        if (echoes->got.count(text) != 0) continue;
      }
      client->write(Unpooled::copiedBuffer(text));
    }
    client->flush();
    if (done.wait_for(std::chrono::seconds(2)) == std::future_status::ready) break;
  }
  const bool ok = done.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  client->close();
  server->close();
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(2));
  if (!ok) {
    fmt::print(stderr, "udp_echo self-test: {} of {} echoes\n", echoes->got.size(), kCount);
    return 1;
  }
  fmt::print("udp_echo self-test: ok ({} datagrams echoed)\n", kCount);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--self-test") return selfTest();
  unsigned short port = 7001;
  if (argc > 2 && std::string_view(argv[1]) == "--port")
    port = static_cast<unsigned short>(std::atoi(argv[2]));
  EventLoopGroup group(1);
  group.shutdownGracefullyOnSignals();
  auto server = DatagramChannel::bind(group, "0.0.0.0", port, [](DatagramChannel& ch) {
    ch.pipeline().addLast("echo", std::make_unique<EchoHandler>());
  });
  fmt::print("udp_echo listening on udp {}\n", server->localAddress());
  std::fflush(stdout);
  server->waitClosed(boost::asio::use_future).wait();
}
