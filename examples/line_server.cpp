// A line-based TCP server built from netbuf's pieces: LineBasedFrameDecoder + StringDecoder in,
// StringEncoder out, one small handler in between. Try it with nc:
//
//   build/release/examples/line_server 7000 &
//   nc 127.0.0.1 7000
//   time            -> the server's time
//   hello           -> HELLO
//   quit            -> closes the connection
//
// `line_server --self-test` starts the server on a free port, talks to it through a plain socket
// and exits 0 when every reply is right (CTest runs it so).

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <istream>
#include <netbuf/netbuf.hpp>
#include <string>

namespace {

using namespace netbuf;

/// Answers each line: "time" with the time, "quit" by closing, anything else upper-cased.
class LineHandler : public InboundHandler<std::string> {
 public:
  void channelActive(ChannelHandlerContext& ctx) override {
    ctx.writeAndFlush(std::string("welcome: try 'time', any text, or 'quit'\n"));
    ctx.fireChannelActive();
  }
  void messageReceived(ChannelHandlerContext& ctx, std::string line) override {
    if (line == "quit") {
      ctx.writeAndFlush(std::string("bye\n"));
      ctx.close();
      return;
    }
    if (line == "time") {
      const auto now = std::chrono::system_clock::now();
      ctx.writeAndFlush(fmt::format("{:%Y-%m-%d %H:%M:%S} UTC\n", now));
      return;
    }
    for (char& c : line) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ctx.writeAndFlush(line + "\n");
  }
};

void initPipeline(SocketChannel& ch) {
  ch.pipeline()
      .addLast("frames", std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(1024))
      .addLast("text", std::make_unique<DecoderChannelHandler<StringDecoder>>())
      .addLast("encode", std::make_unique<EncoderChannelHandler<StringEncoder>>())
      .addLast("lines", std::make_unique<LineHandler>());
}

int selfTest() {
  EventLoopGroup group(1);
  auto server = ServerBootstrap().group(group).childHandler(initPipeline).bind("127.0.0.1", 0);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  s.connect({boost::asio::ip::make_address("127.0.0.1"), server->port()});
  boost::asio::streambuf in;
  auto readLine = [&] {
    boost::asio::read_until(s, in, '\n');
    std::istream is(&in);
    std::string line;
    std::getline(is, line);
    return line;
  };
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      ++failures;
      fmt::print(stderr, "line_server self-test: {}\n", what);
    }
  };
  expect(readLine().rfind("welcome", 0) == 0, "no welcome line");
  boost::asio::write(s, boost::asio::buffer(std::string("hello there\r\nti")));
  expect(readLine() == "HELLO THERE", "upper-case reply");
  boost::asio::write(s, boost::asio::buffer(std::string("me\n")));
  expect(readLine().find("UTC") != std::string::npos, "time reply");
  boost::asio::write(s, boost::asio::buffer(std::string("quit\n")));
  expect(readLine() == "bye", "bye");
  boost::system::error_code ec;
  char c;
  s.read_some(boost::asio::buffer(&c, 1), ec);
  expect(ec == boost::asio::error::eof, "server did not close after quit");
  server->close();
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(2));
  if (failures == 0) fmt::print("line_server self-test: ok\n");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--self-test") return selfTest();
  const unsigned short port = argc > 1 ? static_cast<unsigned short>(std::atoi(argv[1]))
                                       : static_cast<unsigned short>(7000);
  EventLoopGroup group;
  group.shutdownGracefullyOnSignals();  // Ctrl-C or SIGTERM: a graceful shutdown
  auto server = ServerBootstrap().group(group).childHandler(initPipeline).bind("0.0.0.0", port);
  fmt::print("line_server listening on port {} (Ctrl-C to stop)\n", server->port());
  server->waitClosed(boost::asio::use_future).wait();
}
