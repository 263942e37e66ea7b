// DatagramChannel over loopback UDP (port 0): echo between two channels, packets and connected
// buffers, composites as one datagram, interop with a peer written in Python (socket module only,
// datagram_peer.py beside this file: a Python client against a netbuf echo server, and a netbuf
// client against a Python echo server), unsupported messages and send errors that leave the
// channel open, truncated datagrams, read batches, autoRead, water marks, writes from several
// threads, ownership by the loop, close and graceful shutdown. A missing python3 FAILS the test,
// it is never skipped. Run under ThreadSanitizer too ("threaded").
#include <netbuf/transport/datagram_channel.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "support/python_runner.hpp"
#include "support/thread_waits.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <netbuf/transport/event_loop.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace netbuf;
using namespace std::chrono_literals;
using boost::asio::ip::udp;

namespace {

using netbuf::test::eventually;
using netbuf::test::onLoop;

ByteBuf text(std::string_view s) { return Unpooled::copiedBuffer(s); }

std::string str(const ByteBuf& b) {
  const auto r = b.readableBuffer();
  return std::string(static_cast<const char*>(r.data()), r.size());
}

DatagramChannelOptions readBufferOf(std::size_t n) {
  DatagramChannelOptions o;
  o.readBufferSize = n;
  return o;
}

udp::endpoint loopback(unsigned short port) {
  return udp::endpoint(boost::asio::ip::address_v4::loopback(), port);
}

/// Sends every datagram back to its sender; flushes once per read batch.
struct PacketEcho : ChannelHandler {
  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    DatagramPacket p = msg.take<DatagramPacket>();
    if (str(p.content) == "close") {
      ctx.close();
      return;
    }
    const udp::endpoint to = p.sender;
    ctx.write(DatagramPacket(std::move(p.content), to));
  }
  void channelReadComplete(ChannelHandlerContext& ctx) override { ctx.flush(); }
};

struct Received {
  std::string bytes;
  udp::endpoint sender;
  udp::endpoint recipient;
};

/// Collects what a channel receives (thread-safe view for the test thread).
struct Collector : ChannelHandler {
  std::mutex m;
  std::vector<Received> packets;
  std::vector<int> batches;  // datagrams per channelReadComplete
  int inBatch = 0;
  std::vector<std::string> errors;
  std::vector<std::error_code> systemErrors;
  std::size_t truncatedSize = 0;
  std::atomic<bool> active{false};
  std::atomic<bool> inactive{false};
  std::atomic<int> writabilityChanges{0};

  void channelActive(ChannelHandlerContext& ctx) override {
    active = true;
    ctx.fireChannelActive();
  }
  void channelRead(ChannelHandlerContext&, Message msg) override {
    DatagramPacket p = msg.take<DatagramPacket>();
    std::lock_guard<std::mutex> g(m);
    packets.push_back({str(p.content), p.sender, p.recipient});
    ++inBatch;
  }
  void channelReadComplete(ChannelHandlerContext&) override {
    std::lock_guard<std::mutex> g(m);
    batches.push_back(inBatch);
    inBatch = 0;
  }
  void exceptionCaught(ChannelHandlerContext&, std::exception_ptr e) override {
    std::lock_guard<std::mutex> g(m);
    try {
      std::rethrow_exception(e);
    } catch (const DatagramTruncatedError& t) {
      truncatedSize = t.size();
      errors.emplace_back(t.what());
    } catch (const std::system_error& s) {
      systemErrors.push_back(s.code());
      errors.emplace_back(s.what());
    } catch (const std::exception& x) {
      errors.emplace_back(x.what());
    }
  }
  void channelInactive(ChannelHandlerContext&) override { inactive = true; }
  void channelWritabilityChanged(ChannelHandlerContext&) override { ++writabilityChanges; }

  std::size_t size() {
    std::lock_guard<std::mutex> g(m);
    return packets.size();
  }
  std::vector<Received> all() {
    std::lock_guard<std::mutex> g(m);
    return packets;
  }
  std::set<std::string> texts() {
    std::lock_guard<std::mutex> g(m);
    std::set<std::string> out;
    for (const auto& p : packets) out.insert(p.bytes);
    return out;
  }
  bool has(const std::string& s) {
    std::lock_guard<std::mutex> g(m);
    return std::any_of(packets.begin(), packets.end(),
                       [&](const Received& r) { return r.bytes == s; });
  }
  std::size_t errorCount() {
    std::lock_guard<std::mutex> g(m);
    return errors.size();
  }
};

/// Records a write's outcome (notified on the channel's loop, read by the test thread).
struct Outcome : WriteListener {
  std::atomic<bool> done{false};
  std::mutex m;
  std::error_code ec;
  void operationComplete(std::error_code e) noexcept override {
    {
      std::lock_guard<std::mutex> g(m);
      ec = e;
    }
    done = true;
  }
  std::error_code wait() {
    REQUIRE(eventually([&] { return done.load(); }));
    std::lock_guard<std::mutex> g(m);
    return ec;
  }
};

std::shared_ptr<DatagramChannel> echoChannel(EventLoopGroup& group,
                                             const DatagramChannelOptions& options = {}) {
  return DatagramChannel::bind(
      group, "127.0.0.1", 0,
      [](DatagramChannel& ch) { ch.pipeline().addLast("echo", std::make_unique<PacketEcho>()); },
      options);
}

/// A channel whose pipeline is one Collector (returned through col; init runs before bind
/// returns, and the collector lives as long as the channel's pipeline).
std::shared_ptr<DatagramChannel> collectingChannel(EventLoopGroup& group, Collector*& col,
                                                   const DatagramChannelOptions& options = {}) {
  Collector* made = nullptr;
  auto ch = DatagramChannel::bind(
      group, "127.0.0.1", 0,
      [&made](DatagramChannel& c) {
        auto h = std::make_unique<Collector>();
        made = h.get();
        c.pipeline().addLast("collect", std::move(h));
      },
      options);
  col = made;
  return ch;
}

// ---- Python peer

using test::Output;
using test::run;

const std::filesystem::path kPeer =
    std::filesystem::path(__FILE__).parent_path() / "datagram_peer.py";

/// python3, or a failed REQUIRE naming what is missing (never a skip).
std::string requirePython() { return test::requirePython("socket", "apt-get install python3"); }

}  // namespace

TEST_CASE("UDP: DatagramPacket travels inline in a Message") {
  static_assert(sizeof(DatagramPacket) <= Message::kInlineSize);
  DatagramPacket p(text("hi"), loopback(9));
  CHECK(!p.toConnectedPeer());
  CHECK(DatagramPacket(text("x")).toConnectedPeer());
  Message m(std::move(p));
  REQUIRE(m.is<DatagramPacket>());
  DatagramPacket q = m.take<DatagramPacket>();
  CHECK(q.recipient == loopback(9));
  DatagramPacket r = q.replace(text("other"));
  CHECK(r.recipient == loopback(9));
  CHECK(str(r.content) == "other");
}

TEST_CASE("UDP: echo between two DatagramChannels: packets, addresses, connected buffers") {
  EventLoopGroup group(2);
  auto server = echoChannel(group);
  Collector* col = nullptr;
  auto client = collectingChannel(group, col);
  REQUIRE(col != nullptr);
  CHECK(server->isActive());
  CHECK(client->isActive());
  CHECK(col->active.load());
  CHECK(server->localPort() != 0);
  CHECK(server->localAddress() == fmt::format("127.0.0.1:{}", server->localPort()));
  CHECK(client->remoteAddress().empty());
  CHECK(!client->isConnected());

  // Packets to an explicit recipient, written from this (non-loop) thread.
  constexpr int kPackets = 20;
  std::vector<Outcome> outcomes(kPackets);
  for (int i = 0; i < kPackets; ++i) {
    client->writeAndFlush(
        DatagramPacket(text(fmt::format("packet-{}", i)), server->localEndpoint()), &outcomes[i]);
  }
  for (auto& o : outcomes) CHECK(!o.wait());
  REQUIRE(eventually([&] { return col->size() == kPackets; }));
  std::set<std::string> expected;
  for (int i = 0; i < kPackets; ++i) expected.insert(fmt::format("packet-{}", i));
  CHECK(col->texts() == expected);
  for (const auto& r : col->all()) {
    CHECK(r.sender == server->localEndpoint());
    CHECK(r.recipient == client->localEndpoint());
  }

  // Connected: buffers without a recipient go to the peer; a composite is one datagram.
  client->connect(server->localEndpoint());
  CHECK(client->isConnected());
  CHECK(client->remoteEndpoint() == server->localEndpoint());
  CHECK(client->remoteAddress() == server->localAddress());
  Outcome a, b, c, d;
  client->writeAndFlush(text("plain"), &a);
  CompositeByteBuf comp;
  comp.addComponent(true, text("com"));
  comp.addComponent(true, text("pos"));
  comp.addComponent(true, text("ite"));
  client->writeAndFlush(std::move(comp), &b);
  client->writeAndFlush(AnyByteBuf(text("any")), &c);
  client->writeAndFlush(DatagramPacket(text("unaddressed")), &d);  // recipient: the peer
  CHECK(!a.wait());
  CHECK(!b.wait());
  CHECK(!c.wait());
  CHECK(!d.wait());
  REQUIRE(eventually([&] { return col->size() == kPackets + 4; }));
  CHECK(col->has("plain"));
  CHECK(col->has("composite"));
  CHECK(col->has("any"));
  CHECK(col->has("unaddressed"));
  CHECK(client->failedSends() == 0);
  CHECK(client->pendingWriteBytes() == 0);

  // Close from this thread; writes afterwards fail.
  client->close();
  client->waitClosed(boost::asio::use_future).wait();
  CHECK(!client->isOpen());
  CHECK(!client->isActive());
  CHECK(col->inactive.load());
  Outcome late;
  client->writeAndFlush(text("late"), &late);
  CHECK(late.wait() == ChannelErrc::closed);
  server->close();
  server->waitClosed(boost::asio::use_future).wait();
  CHECK(group.loop(0).openChannels() + group.loop(1).openChannels() == 0);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: a Python client drives a netbuf echo server") {
  const std::string python = requirePython();
  EventLoopGroup group(2);
  DatagramChannelOptions options;
  options.readBufferSize = 2048;
  auto server = echoChannel(group, options);
  const Output o = run(test::pythonCommand(
      python, kPeer,
      {"client", std::to_string(server->localPort()), std::to_string(options.readBufferSize)}));
  INFO("python output:\n" << o.text);
  CHECK(o.status == 0);
  CHECK(o.text.find("all checks passed") != std::string::npos);
  CHECK(server->truncatedDatagrams() == 1);
  CHECK(server->isOpen());
  group.shutdownGracefully(0ms, 5s);
  CHECK(!server->isOpen());
}

TEST_CASE("UDP: a netbuf client against a Python echo server") {
  const std::string python = requirePython();
  FILE* p = ::popen((test::pythonCommand(python, kPeer, {"server"}) + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 256> line{};
  const bool gotLine = std::fgets(line.data(), line.size(), p) != nullptr;
  unsigned port = 0;
  const bool parsed = gotLine && std::sscanf(line.data(), "port %u", &port) == 1;
  if (!parsed) {
    std::string rest = gotLine ? line.data() : "";
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) rest.append(buf.data(), n);
    ::pclose(p);
    FAIL("the Python echo server did not start:\n" << rest);
  }

  EventLoopGroup group(1);
  Collector* col = nullptr;
  auto client = collectingChannel(group, col);
  client->connect("127.0.0.1", static_cast<unsigned short>(port));
  constexpr int kCount = 16;
  for (int i = 0; i < kCount; ++i) {
    // One at a time (no loss on loopback however slow the peer), alternating packet and buffer.
    const std::string s =
        fmt::format("py-{}{}", i, std::string(static_cast<std::size_t>(i) * 50, 'z'));
    if (i % 2 == 0) {
      client->writeAndFlush(DatagramPacket(text(s), loopback(static_cast<unsigned short>(port))));
    } else {
      client->writeAndFlush(text(s));
    }
    REQUIRE(eventually([&] { return col->has(s); }));
  }
  for (const auto& r : col->all()) CHECK(r.sender == loopback(static_cast<unsigned short>(port)));
  client->writeAndFlush(text("quit"));
  CHECK(eventually([&] { return col->has("bye"); }));

  std::string rest;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) rest.append(buf.data(), n);
  const int st = ::pclose(p);
  INFO("python output:\n" << rest);
  CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
  CHECK(rest.find(fmt::format("echoed {}", kCount)) != std::string::npos);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: unsupported messages and failed sends fail their write; the channel stays open") {
  EventLoopGroup group(1);
  auto server = echoChannel(group);
  Collector* col = nullptr;
  auto client = collectingChannel(group, col);

  Outcome wrongType;
  client->writeAndFlush(std::string("not bytes"), &wrongType);
  CHECK(wrongType.wait() == ChannelErrc::unsupportedMessageType);

  Outcome unconnected;  // a buffer without a recipient on an unconnected channel
  client->writeAndFlush(text("nowhere"), &unconnected);
  CHECK(unconnected.wait() == std::errc::destination_address_required);

  Outcome tooLarge;
  ByteBuf big = Unpooled::buffer(70000);
  big.writeZero(70000);
  client->writeAndFlush(DatagramPacket(std::move(big), server->localEndpoint()), &tooLarge);
  CHECK(tooLarge.wait() == std::errc::message_size);
  CHECK(client->failedSends() == 2);

  // Still open, and the next datagram goes through.
  CHECK(client->isOpen());
  Outcome ok;
  client->writeAndFlush(DatagramPacket(text("still here"), server->localEndpoint()), &ok);
  CHECK(!ok.wait());
  CHECK(eventually([&] { return col->has("still here"); }));
  CHECK(client->pendingWriteBytes() == 0);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: ECONNREFUSED from a connected peer with no listener leaves the channel open") {
  EventLoopGroup group(1);
  unsigned short deadPort = 0;
  {
    auto probe = DatagramChannel::bind(group, "127.0.0.1", 0, nullptr);
    deadPort = probe->localPort();
    probe->close();
    probe->waitClosed(boost::asio::use_future).wait();
  }
  Collector* col = nullptr;
  auto client = collectingChannel(group, col);
  client->connect(loopback(deadPort));
  // The ICMP port unreachable comes back asynchronously: the refusal is reported either by a later
  // send (its listener) or by the receive side (exceptionCaught), whichever meets it first.
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    Outcome o;
    client->writeAndFlush(text("anyone?"), &o);
    if (o.wait() == std::errc::connection_refused) refused = true;
    {
      std::lock_guard<std::mutex> g(col->m);
      for (const auto& ec : col->systemErrors) {
        if (ec == std::errc::connection_refused) refused = true;
      }
    }
    if (!refused) std::this_thread::sleep_for(10ms);
  }
  CHECK(refused);
  CHECK(client->isOpen());
  CHECK(!col->inactive.load());
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: a datagram larger than the read buffer is dropped, counted and reported") {
  EventLoopGroup group(1);
  DatagramChannelOptions small;
  small.readBufferSize = 64;
  Collector* col = nullptr;
  auto receiver = collectingChannel(group, col, small);
  auto sender = DatagramChannel::bind(group, "127.0.0.1", 0, nullptr);
  const auto to = receiver->localEndpoint();
  sender->writeAndFlush(DatagramPacket(text(std::string(100, 'x')), to));
  sender->writeAndFlush(DatagramPacket(text(std::string(64, 'y')), to));  // exactly fits
  sender->writeAndFlush(DatagramPacket(text("small"), to));
  REQUIRE(eventually([&] { return col->size() == 2; }));
  CHECK(col->has(std::string(64, 'y')));
  CHECK(col->has("small"));
  CHECK(receiver->truncatedDatagrams() == 1);
  CHECK(col->errorCount() == 1);
  {
    std::lock_guard<std::mutex> g(col->m);
    CHECK(col->truncatedSize == 100);
    CHECK(col->errors.at(0).find("readBufferSize") != std::string::npos);
  }
  CHECK(receiver->isOpen());
  CHECK_THROWS_AS(DatagramChannel::bind(group, "127.0.0.1", 0, nullptr, readBufferOf(0)),
                  IllegalArgumentError);
  CHECK_THROWS_AS(DatagramChannel::bind(group, "127.0.0.1", 0, nullptr, readBufferOf(70000)),
                  IllegalArgumentError);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: waiting datagrams are read in batches of maxMessagesPerRead; autoRead") {
  EventLoopGroup group(1);
  DatagramChannelOptions options;
  options.autoRead = false;
  options.maxMessagesPerRead = 16;
  Collector* col = nullptr;
  auto receiver = collectingChannel(group, col, options);
  CHECK(!receiver->isAutoRead());
  auto sender = DatagramChannel::bind(group, "127.0.0.1", 0, nullptr);
  constexpr int kCount = 40;
  std::vector<Outcome> sent(kCount);
  for (int i = 0; i < kCount; ++i) {
    sender->write(DatagramPacket(text(fmt::format("b{}", i)), receiver->localEndpoint()), &sent[i]);
  }
  sender->flush();
  for (auto& o : sent) CHECK(!o.wait());
  std::this_thread::sleep_for(100ms);  // loopback delivery; nothing is read while autoRead is off
  CHECK(col->size() == 0);
  receiver->setAutoRead(true);
  REQUIRE(eventually([&] { return col->size() == kCount; }));
  // The last batch is counted by channelReadComplete, which follows the last read.
  auto batchedTotal = [&] {
    std::lock_guard<std::mutex> g(col->m);
    int total = 0;
    for (int b : col->batches) total += b;
    return total;
  };
  CHECK(eventually([&] { return batchedTotal() == kCount; }));
  {
    // Released before the shutdown: the loop may still need the collector's mutex to finish.
    std::lock_guard<std::mutex> g(col->m);
    CHECK(*std::max_element(col->batches.begin(), col->batches.end()) == 16);
    CHECK(col->batches.size() < static_cast<std::size_t>(kCount));
  }
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: water marks count queued bytes; flushing makes the channel writable again") {
  EventLoopGroup group(1);
  DatagramChannelOptions options;
  options.writeBufferHighWaterMark = 100;
  options.writeBufferLowWaterMark = 50;
  auto server = echoChannel(group);
  Collector* col = nullptr;
  auto client = collectingChannel(group, col, options);
  onLoop(*client, [&] {
    for (int i = 0; i < 3; ++i) {
      client->write(DatagramPacket(text(std::string(40, static_cast<char>('a' + i))),
                                   server->localEndpoint()));
    }
    CHECK(client->pendingWriteBytes() == 120);
    CHECK(!client->isWritable());
    client->flush();
    CHECK(client->pendingWriteBytes() == 0);
    CHECK(client->isWritable());
  });
  CHECK(col->writabilityChanges.load() == 2);
  CHECK(eventually([&] { return col->size() == 3; }));
  DatagramChannelOptions inverted;
  inverted.writeBufferHighWaterMark = 10;
  inverted.writeBufferLowWaterMark = 20;
  CHECK_THROWS_AS(DatagramChannel::bind(group, "127.0.0.1", 0, nullptr, inverted),
                  IllegalArgumentError);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: writes from several threads all go out, each echoed exactly") {
  EventLoopGroup group(2);
  auto server = echoChannel(group);
  Collector* col = nullptr;
  auto client = collectingChannel(group, col);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string s = fmt::format("t{}-{}", t, i);
        Outcome o;
        if (i % 2 == 0) {
          client->writeAndFlush(DatagramPacket(text(s), server->localEndpoint()), &o);
        } else {
          client->write(DatagramPacket(text(s), server->localEndpoint()), &o);
          client->flush();
        }
        if (o.wait()) ++failures;
        // Wait for the echo before the next: bounded in flight, so loopback drops nothing.
        if (!eventually([&] { return col->has(s); })) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(col->size() == kThreads * kPerThread);
  CHECK(col->texts().size() == static_cast<std::size_t>(kThreads * kPerThread));
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: a channel nobody holds stays open, owned by its loop, until it closes") {
  EventLoopGroup group(1);
  std::weak_ptr<DatagramChannel> weak;
  udp::endpoint serverEp;
  {
    auto server = echoChannel(group);
    weak = server;
    serverEp = server->localEndpoint();
  }
  CHECK(!weak.expired());
  Collector* col = nullptr;
  auto client = collectingChannel(group, col);
  client->writeAndFlush(DatagramPacket(text("ping"), serverEp));
  REQUIRE(eventually([&] { return col->has("ping"); }));
  CHECK(group.loop(0).openChannels() == 2);
  // The echo handler closes its channel on "close": the loop lets go of it afterwards.
  client->writeAndFlush(DatagramPacket(text("close"), serverEp));
  CHECK(eventually([&] { return weak.expired(); }));
  CHECK(group.loop(0).openChannels() == 1);
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: bind errors, an initializer that throws or closes, bind from a loop thread") {
  EventLoopGroup group(2);
  CHECK_THROWS_AS(DatagramChannel::bind(group, "not an address", 0, nullptr), std::system_error);
  auto first = DatagramChannel::bind(group, "127.0.0.1", 0, nullptr);
  CHECK_THROWS_AS(DatagramChannel::bind(group, "127.0.0.1", first->localPort(), nullptr),
                  std::system_error);  // in use
  CHECK_THROWS_WITH_AS(
      DatagramChannel::bind(group, "127.0.0.1", 0,
                            [](DatagramChannel&) { throw IllegalStateError("init failed"); }),
      "init failed", IllegalStateError);
  auto closed =
      DatagramChannel::bind(group, "127.0.0.1", 0, [](DatagramChannel& ch) { ch.close(); });
  CHECK(!closed->isOpen());
  closed.reset();
  CHECK(
      eventually([&] { return group.loop(0).openChannels() + group.loop(1).openChannels() == 1; }));

  // From a loop thread: the channel goes on that loop and is started when bind returns.
  std::promise<std::pair<bool, bool>> result;
  EventLoop& loop = group.loop(1);
  loop.execute([&] {
    auto ch = DatagramChannel::bind(group, "127.0.0.1", 0, nullptr);
    result.set_value({&ch->eventLoop() == &loop, ch->isActive()});
    ch->close();
  });
  const auto [sameLoop, active] = result.get_future().get();
  CHECK(sameLoop);
  CHECK(active);
  first.reset();
  group.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: graceful shutdown sends what is queued, then closes every channel") {
  EventLoopGroup peerGroup(1);
  Collector* col = nullptr;
  auto peer = collectingChannel(peerGroup, col);

  EventLoopGroup group(1);
  Collector* senderCol = nullptr;
  auto sender = collectingChannel(group, senderCol);
  auto idle = echoChannel(group);
  Outcome o;
  // Queued and flushed by the shutdown's graceful close.
  onLoop(*sender,
         [&] { sender->write(DatagramPacket(text("last words"), peer->localEndpoint()), &o); });
  CHECK(group.loop(0).openChannels() == 2);
  auto closed = sender->waitClosed(boost::asio::use_future);
  group.shutdownGracefully(0ms, 5s);
  CHECK(group.loop(0).openChannels() == 0);
  CHECK(closed.wait_for(0s) == std::future_status::ready);
  CHECK(!sender->isOpen());
  CHECK(!idle->isOpen());
  CHECK(senderCol->inactive.load());
  CHECK(!o.wait());
  CHECK(eventually([&] { return col->has("last words"); }));
  sender.reset();
  idle.reset();
  peerGroup.shutdownGracefully(0ms, 5s);
}

TEST_CASE("UDP: IPv6 loopback, when the machine has it") {
  EventLoopGroup group(1);
  std::shared_ptr<DatagramChannel> server;
  try {
    server = DatagramChannel::bind(group, "::1", 0, [](DatagramChannel& ch) {
      ch.pipeline().addLast("echo", std::make_unique<PacketEcho>());
    });
  } catch (const std::system_error& e) {
    MESSAGE("no IPv6 loopback here: " << e.what());
    group.shutdownGracefully(0ms, 5s);
    return;
  }
  Collector* made = nullptr;
  auto client = DatagramChannel::bind(group, "::1", 0, [&made](DatagramChannel& c) {
    auto h = std::make_unique<Collector>();
    made = h.get();
    c.pipeline().addLast("collect", std::move(h));
  });
  CHECK(server->localAddress().rfind("[::1]:", 0) == 0);
  client->writeAndFlush(DatagramPacket(text("six"), server->localEndpoint()));
  REQUIRE(eventually([&] { return made->has("six"); }));
  CHECK(made->all().at(0).sender == server->localEndpoint());
  group.shutdownGracefully(0ms, 5s);
}
