// The line server of line_server.cpp written as a coroutine per connection: the pipeline decodes
// lines into a ReceiveQueue, and one coroutine reads them in order with receive() and answers
// with writeAndFlush(), both awaited with asio::use_awaitable. Try it with nc:
//
//   build/release/examples/coroutine_line_server 7000 &
//   nc 127.0.0.1 7000
//   hello           -> HELLO
//   quit            -> closes the connection
//
// `coroutine_line_server --self-test` starts the server on a free port, talks to it through a
// plain socket and exits 0 when every reply is right (CTest runs it so).

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
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
namespace asio = boost::asio;

/// One connection, as a sequence: greet, then answer each line until "quit" or the peer's EOF.
asio::awaitable<void> session(std::shared_ptr<SocketChannel> ch) {
  co_await ch->writeAndFlush(std::string("welcome: any text, or 'quit'\n"), asio::use_awaitable);
  try {
    for (;;) {
      std::string line = co_await ch->receive<std::string>(asio::use_awaitable);
      if (line == "quit") {
        co_await ch->writeAndFlush(std::string("bye\n"), asio::use_awaitable);
        co_await ch->close(asio::use_awaitable);
        co_return;
      }
      for (char& c : line) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      co_await ch->writeAndFlush(line + "\n", asio::use_awaitable);
    }
  } catch (const boost::system::system_error& e) {
    // asio::error::eof: the peer closed. Anything else also ends the session (the channel is
    // closed by then); an exception escaping the coroutine would go to exceptionCaught instead.
    if (e.code() != asio::error::eof) fmt::print(stderr, "session: {}\n", e.what());
  }
}

void initPipeline(SocketChannel& ch) {
  ch.pipeline()
      .addLast("frames", std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(1024))
      .addLast("text", std::make_unique<DecoderChannelHandler<StringDecoder>>())
      .addLast("encode", std::make_unique<EncoderChannelHandler<StringEncoder>>())
      .addLast("lines", std::make_unique<ReceiveQueue<std::string>>(64));
  coSpawn(ch.shared_from_this(), session(ch.shared_from_this()));
}

int selfTest() {
  EventLoopGroup group(1);
  auto server = ServerBootstrap().group(group).childHandler(initPipeline).bind("127.0.0.1", 0);
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), server->port()});
  asio::streambuf in;
  auto readLine = [&] {
    asio::read_until(s, in, '\n');
    std::istream is(&in);
    std::string line;
    std::getline(is, line);
    return line;
  };
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      ++failures;
      fmt::print(stderr, "coroutine_line_server self-test: {}\n", what);
    }
  };
  expect(readLine().rfind("welcome", 0) == 0, "no welcome line");
  asio::write(s, asio::buffer(std::string("hello there\r\nsecond li")));
  expect(readLine() == "HELLO THERE", "upper-case reply");
  asio::write(s, asio::buffer(std::string("ne\nquit\n")));
  expect(readLine() == "SECOND LINE", "a line split over two writes");
  expect(readLine() == "bye", "bye");
  boost::system::error_code ec;
  char c;
  s.read_some(asio::buffer(&c, 1), ec);
  expect(ec == asio::error::eof, "server did not close after quit");
  server->close(asio::use_future).get();
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(2));
  if (failures == 0) fmt::print("coroutine_line_server self-test: ok\n");
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
  fmt::print("coroutine_line_server listening on port {} (Ctrl-C to stop)\n", server->port());
  server->waitClosed(asio::use_future).wait();
}
