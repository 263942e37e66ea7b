// The Netty side of the HTTP server comparison (scripts/http-bench): Netty 4.1's HttpServerCodec
// with a handler answering every request "Hello, World!" (text/plain, content-length), written for
// this comparison after the shape of Netty's HttpHelloWorldServer example. NIO transport, ONE
// event loop thread for accepting and for every connection, pooled buffers (Netty's default),
// TCP_NODELAY, keep-alive per HTTP/1.1, responses written per request and flushed once per read
// batch (channelReadComplete), as netbuf's server does.
//
// Usage: java -cp <netty jars>:. NettyHttpHelloServer <port, 0 = any>
// Prints "listening on 127.0.0.1:PORT" once bound; runs until killed.
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.CharsetUtil;
import java.net.InetSocketAddress;

public final class NettyHttpHelloServer {
  private static final ByteBuf HELLO =
      Unpooled.unreleasableBuffer(Unpooled.copiedBuffer("Hello, World!", CharsetUtil.US_ASCII));

  static final class HelloHandler extends SimpleChannelInboundHandler<HttpObject> {
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      ctx.flush();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
      if (!(msg instanceof HttpRequest)) return;
      HttpRequest req = (HttpRequest) msg;
      boolean keepAlive = HttpUtil.isKeepAlive(req);
      FullHttpResponse res = new DefaultFullHttpResponse(req.protocolVersion(),
          HttpResponseStatus.OK, HELLO.duplicate());
      res.headers()
          .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN)
          .setInt(HttpHeaderNames.CONTENT_LENGTH, res.content().readableBytes());
      if (keepAlive) {
        if (!req.protocolVersion().isKeepAliveDefault()) {
          res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        ctx.write(res);
      } else {
        res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.write(res).addListener(ChannelFutureListener.CLOSE);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  public static void main(String[] args) throws Exception {
    final int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    final EventLoopGroup group = new NioEventLoopGroup(1);
    try {
      ServerBootstrap b = new ServerBootstrap();
      b.group(group)
          .channel(NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 4096)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            public void initChannel(SocketChannel ch) {
              ch.pipeline().addLast(new HttpServerCodec(), new HelloHandler());
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
