// RedisClient against a scripted fake server on loopback (raw POSIX sockets on a thread of the
// test's, writing exact bytes): replies split into single bytes, a RESP3 handshake and a push
// between replies, a malformed reply and a reply nobody asked for (protocol error, connection
// closed, the next command reconnects), a server that closes with commands pending, a reply over
// the decoder's limit, a cancelled command whose reply is discarded, commands waiting for a
// handshake that is slow (cancelled: never written), refused or never answered (timed out by the
// command timeout, or by the connect timeout when there is none). Every wait is bounded: the
// server's reads and accepts give up after 5 s. Run under ThreadSanitizer too ("threaded").
#include <netbuf/redis/redis_client.hpp>

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/redis_outcomes.hpp"

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using netbuf::test::await;
using netbuf::test::call;
using netbuf::test::connectNow;
using netbuf::test::launch;
using netbuf::test::RedisOutcome;

namespace {

/// A listening socket on 127.0.0.1 and a script run on a thread of its own that accepts, reads
/// commands and writes replies. Script failures are recorded (doctest's assertions belong to the
/// test's thread) and checked by finish().
class FakeServer {
 public:
  using Script = std::function<void(FakeServer&)>;

  explicit FakeServer(Script script) {
    listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listenFd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(::bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listenFd_, 16) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(listenFd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, script = std::move(script)] { script(*this); });
  }
  ~FakeServer() {
    // Wakes a script blocked in accept or recv, then waits for it.
    ::shutdown(listenFd_, SHUT_RDWR);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int fd : conns_) ::shutdown(fd, SHUT_RDWR);
    }
    if (thread_.joinable()) thread_.join();
    for (int fd : conns_) ::close(fd);
    ::close(listenFd_);
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  unsigned short port() const noexcept { return port_; }

  /// Waits for the script to end and checks what it recorded.
  void finish() {
    thread_.join();
    for (const std::string& f : failures_) FAIL_CHECK(f);
  }

  // ---- the script's side (its thread)

  /// The next connection (5 s at most; -1 and a failure recorded when none came).
  int accept() {
    pollfd p{listenFd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) {
      fail("no connection within 5 s");
      return -1;
    }
    const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      fail("accept failed");
      return -1;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard<std::mutex> lock(mutex_);
    conns_.push_back(fd);
    return fd;
  }

  /// The next RESP request on fd as its arguments; empty at end of stream or after 5 s.
  std::vector<std::string> readCommand(int fd) {
    std::string& buf = buffers_[fd];
    for (;;) {
      std::vector<std::string> args;
      if (parse(buf, args)) return args;
      if (!fill(fd, buf)) return {};
    }
  }
  /// readCommand(), recording a failure unless its name is `name`.
  void expectCommand(int fd, std::string_view name) {
    const std::vector<std::string> args = readCommand(fd);
    if (args.empty() || args[0] != name) {
      fail("expected " + std::string(name) + ", got " + (args.empty() ? "nothing" : args[0]));
    }
  }

  void send(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return fail("send failed");
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  /// One byte per write, with a pause between: the client reads them one by one.
  void sendByteByByte(int fd, std::string_view bytes) {
    for (char c : bytes) {
      send(fd, std::string_view(&c, 1));
      std::this_thread::sleep_for(200us);
    }
  }

  /// Whether the client closes fd within 5 s (what it sends meanwhile is read and dropped).
  bool waitClosed(int fd) {
    std::string& buf = buffers_[fd];
    while (fill(fd, buf)) buf.clear();
    return eof_;
  }

  void fail(std::string what) { failures_.push_back(std::move(what)); }

 private:
  /// Appends what fd has to buf (5 s at most). False at end of stream or on timeout.
  bool fill(int fd, std::string& buf) {
    eof_ = false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return false;
    char tmp[4096];
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buf.append(tmp, static_cast<std::size_t>(n));
    return true;
  }

  /// One multibulk request from the front of buf (removed), when whole.
  static bool parse(std::string& buf, std::vector<std::string>& args) {
    std::size_t pos = 0;
    auto line = [&](std::string& out) {
      const std::size_t end = buf.find("\r\n", pos);
      if (end == std::string::npos) return false;
      out = buf.substr(pos, end - pos);
      pos = end + 2;
      return true;
    };
    std::string head;
    if (!line(head) || head.empty() || head[0] != '*') return false;
    const long n = std::stol(head.substr(1));
    for (long i = 0; i < n; ++i) {
      std::string len;
      if (!line(len)) return false;
      const std::size_t l = std::stoul(len.substr(1));
      if (buf.size() < pos + l + 2) return false;
      args.push_back(buf.substr(pos, l));
      pos += l + 2;
    }
    buf.erase(0, pos);
    return true;
  }

  int listenFd_ = -1;
  unsigned short port_ = 0;
  std::thread thread_;
  std::mutex mutex_;  // conns_, for the destructor's shutdown
  std::vector<int> conns_;
  std::map<int, std::string> buffers_;  // script thread only
  std::vector<std::string> failures_;   // script thread, then finish()
  bool eof_ = false;
};

/// Waits (5 s at most) for a step the test's thread signals.
void waitFor(std::shared_future<void> step, FakeServer& s, const char* what) {
  if (step.wait_for(5s) != std::future_status::ready) s.fail(std::string("no signal: ") + what);
}

struct Group {
  EventLoopGroup group{1};
  ~Group() { group.shutdownGracefully(0ms, 5s); }
};

RedisClient::Options at(const FakeServer& s, RespProtocol protocol = RespProtocol::Resp2) {
  RedisClient::Options o;
  o.host = "127.0.0.1";
  o.port = s.port();
  o.protocol = protocol;
  return o;
}

constexpr std::string_view kHello3Reply =
    "%3\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n$4\r\nmode\r\n+standalone\r\n";

}  // namespace

TEST_CASE("RedisClient: fake server: replies split into single bytes") {
  FakeServer server([](FakeServer& s) {
    const int fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "SET");
    s.expectCommand(fd, "GET");
    s.expectCommand(fd, "LRANGE");
    s.expectCommand(fd, "INCR");
    s.expectCommand(fd, "GET");
    s.sendByteByByte(fd,
                     "+OK\r\n"
                     "$12\r\nhello\r\nworld\r\n"
                     "*4\r\n:1\r\n$-1\r\n*1\r\n+x\r\n$0\r\n\r\n"
                     "-ERR value is not an integer\r\n"
                     "$-1\r\n");
    s.waitClosed(fd);
  });
  Group g;
  {
    RedisClient client(g.group, at(server));
    std::vector<std::future<RedisOutcome>> f;
    f.push_back(launch(client, "SET", "k", "v"));
    f.push_back(launch(client, "GET", "k"));
    f.push_back(launch(client, "LRANGE", "l", 0, -1));
    f.push_back(launch(client, "INCR", "k"));
    f.push_back(launch(client, "GET", "missing"));
    RedisOutcome o = await(f[0]);
    CHECK_FALSE(o.ec);
    CHECK(o.text() == "OK");
    o = await(f[1]);
    CHECK(o.text() == "hello\r\nworld");
    o = await(f[2]);
    REQUIRE(o.reply.type() == RespType::Array);
    REQUIRE(o.reply.root().size() == 4);
    CHECK(o.reply.root()[0].asInteger() == 1);
    CHECK(o.reply.root()[1].isNull());
    CHECK(o.reply.root()[2][0].asString() == "x");
    CHECK(o.reply.root()[3].asString().empty());
    o = await(f[3]);
    CHECK_FALSE(o.ec);
    CHECK(o.reply.isError());
    CHECK(redisErrorCode(o.reply.root()) == "ERR");
    o = await(f[4]);
    CHECK_FALSE(o.ec);
    CHECK(o.reply.root().isNull());
  }
  server.finish();
}

TEST_CASE("RedisClient: fake server: RESP3 handshake, a push between replies") {
  FakeServer server([](FakeServer& s) {
    const int fd = s.accept();
    if (fd < 0) return;
    const std::vector<std::string> hello = s.readCommand(fd);
    if (hello != std::vector<std::string>{"HELLO", "3"}) s.fail("expected HELLO 3");
    s.send(fd, kHello3Reply);
    s.expectCommand(fd, "GET");
    s.expectCommand(fd, "GET");
    s.send(fd, ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n$1\r\nv\r\n");
    s.sendByteByByte(fd, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n_\r\n");
    s.waitClosed(fd);
  });
  Group g;
  std::mutex mutex;
  std::vector<std::string> pushes;
  std::atomic<bool> pushOnLoop{true};
  {
    RedisClient client(g.group, at(server, RespProtocol::Resp3));
    EventLoop* loop = &client.eventLoop();
    client.setPushHandler([&, loop](RedisReply r) {
      if (!loop->inEventLoop()) pushOnLoop = false;
      std::lock_guard<std::mutex> lock(mutex);
      pushes.push_back(std::string(r.root()[0].asString()));
    });
    REQUIRE_FALSE(connectNow(client, "127.0.0.1", server.port()));
    CHECK(client.protocol() == RespProtocol::Resp3);
    std::future<RedisOutcome> a = launch(client, "GET", "k");
    std::future<RedisOutcome> b = launch(client, "GET", "missing");
    CHECK(await(a).text() == "v");
    RedisOutcome o = await(b);
    CHECK(o.reply.root().isNull());
    std::lock_guard<std::mutex> lock(mutex);
    CHECK(pushes == std::vector<std::string>{"message", "invalidate"});
  }
  CHECK(pushOnLoop.load());
  server.finish();
}

TEST_CASE("RedisClient: fake server: a malformed reply fails the connection; the next reconnects") {
  FakeServer server([](FakeServer& s) {
    int fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "GET");
    s.expectCommand(fd, "GET");
    s.expectCommand(fd, "GET");
    s.send(fd, "+OK\r\n?this is no RESP\r\n");
    if (!s.waitClosed(fd)) s.fail("the client kept the connection after a protocol error");
    // A reply nobody asked for.
    fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "PING");
    s.send(fd, "+PONG\r\n+EXTRA\r\n");
    if (!s.waitClosed(fd)) s.fail("the client kept the connection after an extra reply");
    // A reply over the decoder's limit.
    fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "GET");
    s.send(fd, "$100\r\n");
    if (!s.waitClosed(fd)) s.fail("the client kept the connection after a reply over the limit");
  });
  Group g;
  {
    RedisClient::Options o = at(server);
    o.decoder.setMaxBulkLength(64);
    RedisClient client(g.group, o);
    std::future<RedisOutcome> a = launch(client, "GET", "a");
    std::future<RedisOutcome> b = launch(client, "GET", "b");
    std::future<RedisOutcome> c = launch(client, "GET", "c");
    RedisOutcome r = await(a);
    CHECK_FALSE(r.ec);
    CHECK(r.text() == "OK");
    CHECK(await(b).ec == RedisClientErrc::protocolError);
    CHECK(await(c).ec == RedisClientErrc::protocolError);

    r = call(client, "PING");
    CHECK_FALSE(r.ec);
    CHECK(r.text() == "PONG");
    CHECK(client.connectionsMade() == 2);

    CHECK(call(client, "GET", "big").ec == RedisClientErrc::protocolError);
    CHECK(client.connectionsMade() == 3);
  }
  server.finish();
}

TEST_CASE("RedisClient: fake server: closed with commands pending") {
  FakeServer server([](FakeServer& s) {
    const int fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "GET");
    s.expectCommand(fd, "GET");
    s.expectCommand(fd, "GET");
    s.send(fd, "$1\r\n1\r\n$1\r\n2");  // the second reply cut short
    ::shutdown(fd, SHUT_RDWR);
  });
  Group g;
  {
    RedisClient client(g.group, at(server));
    std::future<RedisOutcome> a = launch(client, "GET", "a");
    std::future<RedisOutcome> b = launch(client, "GET", "b");
    std::future<RedisOutcome> c = launch(client, "GET", "c");
    CHECK(await(a).text() == "1");
    CHECK(await(b).ec == RedisClientErrc::connectionClosed);
    CHECK(await(c).ec == RedisClientErrc::connectionClosed);
    CHECK_FALSE(client.isConnected());
  }
  server.finish();
}

TEST_CASE("RedisClient: fake server: a cancelled command's reply is discarded") {
  std::promise<void> haveBoth;
  std::promise<void> cancelled;
  std::shared_future<void> cancelledStep = cancelled.get_future().share();
  FakeServer server([&](FakeServer& s) {
    const int fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "GET");
    s.expectCommand(fd, "GET");
    haveBoth.set_value();
    waitFor(cancelledStep, s, "cancelled");
    s.sendByteByByte(fd, "$1\r\nA\r\n$1\r\nB\r\n");
    s.expectCommand(fd, "GET");
    s.send(fd, "$1\r\nC\r\n");
    s.waitClosed(fd);
  });
  Group g;
  {
    RedisClient client(g.group, at(server));
    asio::cancellation_signal signal;
    std::promise<RedisOutcome> p;
    auto a = p.get_future();
    client.command(asio::bind_cancellation_slot(signal.slot(),
                                                [&](ErrorCode ec, RedisReply r) {
                                                  p.set_value({ec, std::move(r)});
                                                }),
                   "GET", "a");
    std::future<RedisOutcome> b = launch(client, "GET", "b");
    REQUIRE(haveBoth.get_future().wait_for(5s) == std::future_status::ready);
    signal.emit(asio::cancellation_type::partial);
    CHECK(await(a).ec == asio::error::operation_aborted);
    cancelled.set_value();
    CHECK(await(b).text() == "B");
    CHECK(call(client, "GET", "c").text() == "C");
    CHECK(client.pendingCommands() == 0);
  }
  server.finish();
}

TEST_CASE("RedisClient: fake server: commands waiting for a slow handshake") {
  std::promise<void> cancelled;
  std::shared_future<void> cancelledStep = cancelled.get_future().share();
  FakeServer server([&](FakeServer& s) {
    const int fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "HELLO");
    waitFor(cancelledStep, s, "cancelled");
    s.send(fd, kHello3Reply);
    // The cancelled commands were never written: the first command to come is the third.
    const std::vector<std::string> next = s.readCommand(fd);
    if (next != std::vector<std::string>{"GET", "c"}) {
      s.fail("expected GET c, got " + (next.empty()
                                           ? std::string("nothing")
                                           : next[0] + " " + (next.size() > 1 ? next[1] : "")));
    }
    s.send(fd, "$1\r\nC\r\n");
    s.waitClosed(fd);
  });
  Group g;
  {
    RedisClient client(g.group, at(server, RespProtocol::Resp3));
    asio::cancellation_signal total;
    asio::cancellation_signal terminal;
    std::promise<RedisOutcome> pa;
    std::promise<RedisOutcome> pb;
    auto a = pa.get_future();
    auto b = pb.get_future();
    client.command(asio::bind_cancellation_slot(total.slot(),
                                                [&](ErrorCode ec, RedisReply r) {
                                                  pa.set_value({ec, std::move(r)});
                                                }),
                   "GET", "a");
    client.command(asio::bind_cancellation_slot(terminal.slot(),
                                                [&](ErrorCode ec, RedisReply r) {
                                                  pb.set_value({ec, std::move(r)});
                                                }),
                   "GET", "b");
    CHECK(a.wait_for(100ms) == std::future_status::timeout);
    total.emit(asio::cancellation_type::total);
    terminal.emit(asio::cancellation_type::terminal);
    CHECK(await(a).ec == asio::error::operation_aborted);
    CHECK(await(b).ec == asio::error::operation_aborted);
    std::future<RedisOutcome> c = launch(client, "GET", "c");
    cancelled.set_value();
    CHECK(await(c).text() == "C");
  }
  server.finish();
}

TEST_CASE("RedisClient: fake server: a handshake refused or never answered") {
  FakeServer server([](FakeServer& s) {
    int fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "HELLO");
    s.send(fd, "-NOPROTO sorry, this protocol version is not supported\r\n");
    if (!s.waitClosed(fd)) s.fail("the client kept a connection whose handshake failed");
    fd = s.accept();  // the second: never answered
    if (fd < 0) return;
    s.expectCommand(fd, "HELLO");
    if (!s.waitClosed(fd)) s.fail("the client kept a connection whose handshake timed out");
  });
  Group g;
  {
    RedisClient::Options o = at(server, RespProtocol::Resp3);
    o.commandTimeout = 300ms;
    RedisClient client(g.group, o);
    std::future<RedisOutcome> waiting = launch(client, "GET", "k");
    CHECK(await(waiting).ec == RedisClientErrc::handshakeFailed);
    CHECK_FALSE(client.isConnected());
    CHECK(connectNow(client, "127.0.0.1", server.port()) == RedisClientErrc::timedOut);
  }
  server.finish();
}

TEST_CASE(
    "RedisClient: fake server: a handshake never answered times out with no command timeout") {
  // connectTimeout bounds the handshake too: commandTimeout (0, none) is not needed for a peer
  // that accepts and then says nothing to fail connect() and the commands waiting for it.
  FakeServer server([](FakeServer& s) {
    const int fd = s.accept();
    if (fd < 0) return;
    s.expectCommand(fd, "HELLO");
    if (!s.waitClosed(fd)) s.fail("the client kept a connection whose handshake timed out");
  });
  Group g;
  {
    RedisClient::Options o = at(server, RespProtocol::Resp3);
    o.connectTimeout = 300ms;
    REQUIRE(o.commandTimeout == 0ms);
    RedisClient client(g.group, o);
    const auto start = std::chrono::steady_clock::now();
    auto connected = std::make_shared<std::promise<ErrorCode>>();
    std::future<ErrorCode> c = connected->get_future();
    client.connect([connected](ErrorCode ec) { connected->set_value(ec); });
    std::future<RedisOutcome> waiting = launch(client, "GET", "k");
    REQUIRE_MESSAGE(c.wait_for(2s) == std::future_status::ready, "connect never completed");
    CHECK(c.get() == RedisClientErrc::timedOut);
    REQUIRE_MESSAGE(waiting.wait_for(2s) == std::future_status::ready, "GET never completed");
    CHECK(waiting.get().ec == RedisClientErrc::timedOut);
    CHECK(std::chrono::steady_clock::now() - start < 2s);
    CHECK_FALSE(client.isConnected());
  }
  server.finish();
}
