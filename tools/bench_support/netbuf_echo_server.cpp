#include "netbuf_echo_server.hpp"

#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_handler.hpp>
#include <netbuf/transport/bootstrap.hpp>
#include <netbuf/transport/datagram_channel.hpp>
#include <stdexcept>

namespace netbuf::tools {

namespace {

class EchoHandler final : public ChannelHandler {
 public:
  explicit EchoHandler(std::shared_ptr<NetbufEchoServer::Stats> stats) : stats_(std::move(stats)) {}

  void channelActive(ChannelHandlerContext& ctx) override {
    stats_->accepted.fetch_add(1, std::memory_order_relaxed);
    stats_->open.fetch_add(1, std::memory_order_relaxed);
    ctx.fireChannelActive();
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    stats_->open.fetch_sub(1, std::memory_order_relaxed);
    ctx.fireChannelInactive();
  }
  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    if (msg.is<ByteBuf>()) pending_ += msg.as<ByteBuf>().readableBytes();
    ctx.write(std::move(msg));  // the read buffer goes back out as it is
  }
  void channelReadComplete(ChannelHandlerContext& ctx) override {
    stats_->bytesEchoed.fetch_add(pending_, std::memory_order_relaxed);
    pending_ = 0;
    ctx.flush();
  }
  void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
    // The client is not reading its replies: stop reading its requests until it catches up.
    ctx.channel().setAutoRead(ctx.channel().isWritable());
    ctx.fireChannelWritabilityChanged();
  }
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr) override { ctx.close(); }

 private:
  std::shared_ptr<NetbufEchoServer::Stats> stats_;
  std::uint64_t pending_ = 0;
};

/// UDP: each datagram goes back to its sender; replies are flushed once per read batch.
class DatagramEchoHandler final : public InboundHandler<DatagramPacket> {
 public:
  explicit DatagramEchoHandler(std::shared_ptr<NetbufEchoServer::Stats> stats)
      : stats_(std::move(stats)) {}
  void messageReceived(ChannelHandlerContext& ctx, DatagramPacket packet) override {
    stats_->bytesEchoed.fetch_add(packet.content.readableBytes(), std::memory_order_relaxed);
    stats_->datagrams.fetch_add(1, std::memory_order_relaxed);
    ctx.write(DatagramPacket(std::move(packet.content), packet.sender));
  }
  void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }

 private:
  std::shared_ptr<NetbufEchoServer::Stats> stats_;
};

}  // namespace

struct NetbufEchoServer::Impl {
  EventLoopGroup group;
  std::shared_ptr<ServerChannel> server;
  std::shared_ptr<DatagramChannel> datagram;  // --udp
  Impl(std::size_t threads, Transport transport) : group(threads, transport) {}
};

NetbufEchoServer::NetbufEchoServer(AsioEchoServerOptions options) : options_(std::move(options)) {}

NetbufEchoServer::~NetbufEchoServer() { stop(); }

void NetbufEchoServer::start() {
  if (impl_) throw std::logic_error("NetbufEchoServer already started");
  if (options_.threads == 0) throw std::invalid_argument("NetbufEchoServer needs >= 1 thread");
  if (options_.udp && options_.tls)
    throw std::invalid_argument("NetbufEchoServer: no TLS over UDP");
  auto impl = std::make_unique<Impl>(options_.threads, options_.transport);
  auto stats = stats_;
  if (options_.udp) {
    impl->datagram = DatagramChannel::bind(
        impl->group, options_.address, options_.port, [stats](DatagramChannel& ch) {
          ch.pipeline().addLast("echo", std::make_unique<DatagramEchoHandler>(stats));
        });
  } else {
    ServerBootstrap bootstrap;
    bootstrap.group(impl->group).childHandler([stats, tls = options_.tls](SocketChannel& ch) {
      if (tls) ch.pipeline().addLast("tls", tls->newHandler());
      ch.pipeline().addLast("echo", std::make_unique<EchoHandler>(stats));
    });
    impl->server = options_.unixPath.empty() ? bootstrap.bind(options_.address, options_.port)
                                             : bootstrap.bindUnix(options_.unixPath);
  }
  for (std::size_t k = 0; k < impl->group.size(); ++k)
    impl->group.loop(k).execute([stats] { stats->recordThisThread(); });
  stats_->waitForThreads(impl->group.size());  // so that cpuSeconds() covers every thread
  port_.store(impl->server ? impl->server->port() : impl->datagram->localPort(),
              std::memory_order_release);
  impl_ = std::move(impl);
}

Transport NetbufEchoServer::transport() const noexcept {
  return impl_ ? impl_->group.transport() : options_.transport;
}

void NetbufEchoServer::stop() {
  if (!impl_) return;
  if (impl_->server) {
    impl_->server->close();
    impl_->server->closeChildren();
  }
  if (impl_->datagram) impl_->datagram->close();
  impl_->group.shutdownGracefully(std::chrono::milliseconds(50), std::chrono::seconds(5));
  impl_->server.reset();
  impl_->datagram.reset();
  impl_.reset();
  stats_->forgetThreads();
  port_.store(0, std::memory_order_release);
}

}  // namespace netbuf::tools
