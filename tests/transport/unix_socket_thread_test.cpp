// Unix domain stream sockets: ServerBootstrap::bindUnix and Bootstrap::connectUnix carry the same
// SocketChannel and pipeline as TCP. Against netbuf itself and against Python's socket module
// (unix_peer.py beside this file) in both roles; stale and live socket files; abstract names.
// Run under ThreadSanitizer ("threaded").
#include <netbuf/transport/bootstrap.hpp>

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "support/python_runner.hpp"
#include "support/thread_waits.hpp"

using namespace netbuf;
using namespace std::chrono_literals;
using netbuf::test::eventually;

namespace {

struct EchoHandler : ChannelHandler {
  void channelRead(ChannelHandlerContext& ctx, Message msg) override { ctx.write(std::move(msg)); }
  void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }
};

/// What a client received, shared with the test thread.
struct Inbox {
  std::mutex m;
  std::string bytes;
  std::size_t size() {
    std::lock_guard<std::mutex> g(m);
    return bytes.size();
  }
  std::string text() {
    std::lock_guard<std::mutex> g(m);
    return bytes;
  }
};

struct Collect : ChannelHandler {
  std::shared_ptr<Inbox> inbox;
  explicit Collect(std::shared_ptr<Inbox> i) : inbox(std::move(i)) {}
  void channelRead(ChannelHandlerContext&, Message msg) override {
    std::lock_guard<std::mutex> g(inbox->m);
    inbox->bytes += readableBytesToString(AnyByteBuf(msg.take<ByteBuf>()));
  }
};

/// A fresh socket path in the temp directory, removed first.
std::string socketPath(const char* name) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("netbuf-" + std::to_string(::getpid()) + "-" + name + ".sock");
  std::filesystem::remove(p);
  return p.string();
}

bool isSocket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::shared_ptr<ServerChannel> unixEchoServer(EventLoopGroup& group, const std::string& path) {
  return ServerBootstrap()
      .group(group)
      .childHandler(
          [](SocketChannel& ch) { ch.pipeline().addLast("echo", std::make_unique<EchoHandler>()); })
      .bindUnix(path);
}

std::string pythonOrFail() { return test::requirePython("socket", "apt-get install python3"); }

const std::filesystem::path kPeer = std::filesystem::path(__FILE__).parent_path() / "unix_peer.py";

}  // namespace

TEST_CASE("Unix sockets: echo between netbuf server and client, addresses, the path's life") {
  EventLoopGroup group(2);
  const std::string path = socketPath("echo");
  auto server = unixEchoServer(group, path);
  CHECK(server->isDomainSocket());
  CHECK(server->localAddress() == path);
  CHECK(isSocket(path));
  auto inbox = std::make_shared<Inbox>();
  auto client = Bootstrap()
                    .group(group)
                    .handler([inbox](SocketChannel& ch) {
                      ch.pipeline().addLast("collect", std::make_unique<Collect>(inbox));
                    })
                    .connectUnix(path, boost::asio::use_future)
                    .get();
  CHECK(client->isDomainSocket());
  CHECK(client->remoteAddress() == path);
  CHECK(client->localAddress() == "(unnamed)");
  CHECK(client->localEndpoint().port() == 0);
  std::string sent;
  for (int i = 0; i < 100; ++i) {
    const std::string line = "message " + std::to_string(i) + "\n";
    sent += line;
    client->writeAndFlush(Unpooled::copiedBuffer(line));  // from this thread
  }
  REQUIRE(eventually([&] { return inbox->size() == sent.size(); }));
  CHECK(inbox->text() == sent);
  CHECK(eventually([&] { return server->openChildren() == 1; }));
  client->close();
  client->waitClosed(boost::asio::use_future).wait();
  server->close();
  server->waitClosed(boost::asio::use_future).wait();
  CHECK_FALSE(isSocket(path));  // removed once the server stopped accepting
}

TEST_CASE("Unix sockets: Python's socket module as client and as server") {
  const std::string python = pythonOrFail();
  EventLoopGroup group(1);
  {
    const std::string path = socketPath("py-client");
    auto server = unixEchoServer(group, path);
    const test::Output o = test::run(test::pythonCommand(python, kPeer, {"client", path, "500"}));
    INFO("python output:\n" << o.text);
    CHECK(o.status == 0);
    CHECK(o.text.find("ok ") != std::string::npos);
    server->close();
    server->waitClosed(boost::asio::use_future).wait();
  }
  {
    const std::string path = socketPath("py-server");
    std::promise<test::Output> peer;
    auto peerDone = peer.get_future();
    const std::string command = test::pythonCommand(python, kPeer, {"server", path});
    std::thread runner([&] { peer.set_value(test::run(command)); });
    // Joined on every way out: a failed REQUIRE below must report, not end the program.
    struct Join {
      std::thread& t;
      ~Join() {
        if (t.joinable()) t.join();
      }
    } join{runner};
    REQUIRE(eventually([&] { return isSocket(path); }));
    auto inbox = std::make_shared<Inbox>();
    auto client = Bootstrap()
                      .group(group)
                      .handler([inbox](SocketChannel& ch) {
                        ch.pipeline().addLast("collect", std::make_unique<Collect>(inbox));
                      })
                      .connectUnix(path, boost::asio::use_future)
                      .get();
    std::string sent(100000, 'x');
    for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>('a' + i % 26);
    client->writeAndFlush(Unpooled::copiedBuffer(sent));
    REQUIRE(eventually([&] { return inbox->size() == sent.size(); }));
    CHECK(inbox->text() == sent);
    client->shutdownOutput();  // the peer stops at end of input
    runner.join();
    const test::Output o = peerDone.get();
    INFO("python output:\n" << o.text);
    CHECK(o.status == 0);
    CHECK(o.text.find("echoed 100000") != std::string::npos);
    client->waitClosed(boost::asio::use_future).wait();  // the peer closed after echoing
  }
}

TEST_CASE("Unix sockets: a stale socket file is replaced, a live one is refused; abstract names") {
  EventLoopGroup group(1);
  const std::string path = socketPath("stale");
  {
    // A socket file nobody listens on (a server that died without removing it).
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    ::close(fd);
  }
  REQUIRE(isSocket(path));
  auto server = unixEchoServer(group, path);                        // replaces it
  CHECK_THROWS_AS(unixEchoServer(group, path), std::system_error);  // a live one stays
  auto client = Bootstrap().group(group).connectUnix(path, boost::asio::use_future).get();
  CHECK(client->isActive());
  client->close();
  server->close();
  server->waitClosed(boost::asio::use_future).wait();

  // A regular file at the path is never removed.
  const std::string file = socketPath("file");
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fclose(f);
  }
  CHECK_THROWS_AS(unixEchoServer(group, file), std::system_error);
  CHECK(std::filesystem::exists(file));
  std::filesystem::remove(file);

  // Abstract names (Linux): no file at all.
  const std::string name = "@netbuf-test-" + std::to_string(::getpid());
  auto abstract = unixEchoServer(group, name);
  CHECK(abstract->localAddress() == name);
  auto inbox = std::make_shared<Inbox>();
  auto c2 = Bootstrap()
                .group(group)
                .handler([inbox](SocketChannel& ch) {
                  ch.pipeline().addLast("collect", std::make_unique<Collect>(inbox));
                })
                .connectUnix(name, boost::asio::use_future)
                .get();
  CHECK(c2->remoteAddress() == name);
  c2->writeAndFlush(Unpooled::copiedBuffer("ping"));
  CHECK(eventually([&] { return inbox->text() == "ping"; }));
  c2->close();
  CHECK_THROWS_AS(
      Bootstrap().group(group).connectUnix(socketPath("nobody"), boost::asio::use_future).get(),
      boost::system::system_error);
  CHECK_THROWS_AS(
      Bootstrap().group(group).connectUnix(std::string(200, 'x'), boost::asio::use_future).get(),
      IllegalArgumentError);
}
