// The Netty side of the like-for-like echo comparison (scripts/netty-echo-bench): Netty 4.1's own
// echo server example in its benchmark configuration, written for this comparison. NIO transport,
// ONE event loop thread for accepting and for every connection (the "one server thread"),
// pooled direct buffers (Netty's default allocator), TCP_NODELAY, and a handler that writes each
// read buffer back and flushes once per read batch (channelReadComplete), as netbuf's echo server
// does.
//
// Usage: java -cp <netty jars>:. NettyEchoServer <port, 0 = any>
// Prints "listening on 127.0.0.1:PORT" once bound; runs until killed.
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;

public final class NettyEchoServer {
  @Sharable
  static final class EchoHandler extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ctx.write(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  public static void main(String[] args) throws Exception {
    final int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    final EventLoopGroup group = new NioEventLoopGroup(1);
    final EchoHandler handler = new EchoHandler();
    try {
      ServerBootstrap b = new ServerBootstrap();
      b.group(group)
          .channel(NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 4096)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            public void initChannel(SocketChannel ch) {
              ch.pipeline().addLast(handler);
            }
          });
      ChannelFuture f = b.bind("127.0.0.1", port).sync();
      InetSocketAddress local = (InetSocketAddress) f.channel().localAddress();
      System.out.println("listening on 127.0.0.1:" + local.getPort());
      System.out.flush();
      f.channel().closeFuture().sync();
    } finally {
      group.shutdownGracefully();
    }
  }
}
