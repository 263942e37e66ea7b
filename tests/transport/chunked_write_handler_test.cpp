#include <netbuf/transport/chunked_write_handler.hpp>

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/chunked_file.hpp>
#include <netbuf/transport/chunked_generator.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

using namespace netbuf;

namespace {

/// Records each notification it gets.
struct Listener : WriteListener {
  std::vector<std::error_code> results;
  void operationComplete(std::error_code ec) noexcept override { results.push_back(ec); }
};

const std::vector<std::error_code> kOk{std::error_code()};

/// A generator of n chunks "c0", "c1", ... (then the end), counting its calls and closes.
struct Counts {
  int calls = 0;
  int closes = 0;
};
struct CountedInput final : ChunkedInput {
  Counts* counts;
  int n;
  int next = 0;
  bool closed = false;
  CountedInput(Counts* c, int chunks) : counts(c), n(chunks) {}
  ~CountedInput() override { close(); }
  bool isEndOfInput() override { return closed || next == n; }
  ByteBuf readChunk(ByteBufAllocator&) override {
    ++counts->calls;
    if (isEndOfInput()) return ByteBuf();
    return Unpooled::copiedBuffer(fmt::format("c{}", next++));
  }
  std::int64_t length() const override { return -1; }
  std::int64_t progress() const override { return next; }
  void close() override {
    if (!closed) ++counts->closes;
    closed = true;
  }
};

std::unique_ptr<ChunkedInput> counted(Counts* c, int n) {
  return std::make_unique<CountedInput>(c, n);
}

/// Everything the channel wrote, as strings, in order.
std::vector<std::string> drain(EmbeddedChannel& ch) {
  std::vector<std::string> out;
  for (Message m = ch.readOutboundMessage(); !m.empty(); m = ch.readOutboundMessage()) {
    if (m.is<ByteBuf>()) {
      out.push_back(std::string(m.as<ByteBuf>().readableStringView()));
    } else if (m.is<std::string>()) {
      out.push_back("str:" + m.as<std::string>());
    } else {
      out.push_back("?");
    }
  }
  return out;
}

std::vector<std::string> chunkNames(int from, int to) {
  std::vector<std::string> v;
  for (int i = from; i < to; ++i) v.push_back(fmt::format("c{}", i));
  return v;
}

ChunkedWriteHandler& handlerOf(EmbeddedChannel& ch) {
  return *static_cast<ChunkedWriteHandler*>(ch.pipeline().get("handler0"));
}

}  // namespace

TEST_CASE("ChunkedWriteHandler: an input goes out chunk by chunk; the listener after the last") {
  Counts counts;
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  Listener l;
  ch.writeAndFlush(counted(&counts, 5), &l);
  CHECK(drain(ch) == chunkNames(0, 5));
  CHECK(l.results == kOk);
  CHECK(counts.closes == 1);  // closed at its end
  CHECK(handlerOf(ch).queued() == 0);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: it stops while the channel is not writable and resumes after") {
  Counts counts;
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  Listener l;
  SUBCASE("not writable from the start") {
    ch.setWritable(false);
    ch.writeAndFlush(counted(&counts, 3), &l);
    CHECK(ch.outboundCount() == 0);
    CHECK(counts.calls == 0);  // nothing read while it cannot be written
    ch.setWritable(true);      // channelWritabilityChanged: the transfer resumes
    CHECK(drain(ch) == chunkNames(0, 3));
    CHECK(l.results == kOk);
  }
  SUBCASE("the channel turns unwritable mid-stream") {
    // The generator plays the socket: after its second chunk the write buffer is "full".
    int made = 0;
    ch.writeAndFlush(
        std::make_unique<ChunkedGenerator>([&](ByteBufAllocator&) -> std::optional<ByteBuf> {
          if (made == 6) return std::nullopt;
          if (made == 2) ch.setWritable(false);
          return Unpooled::copiedBuffer(fmt::format("c{}", made++));
        }),
        &l);
    CHECK(drain(ch) == chunkNames(0, 3));  // the chunk read as it turned: one past the mark
    CHECK(l.results.empty());
    CHECK(handlerOf(ch).queued() == 1);
    ch.setWritable(true);
    CHECK(drain(ch) == std::vector<std::string>{"c3", "c4", "c5", ""});  // "": the end marker
    CHECK(l.results == kOk);
  }
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: other messages keep their order around inputs") {
  Counts counts;
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  Listener before, input, after;
  ch.setWritable(false);
  ch.write(std::string("before"), &before);  // nothing queued: passes at once
  ch.write(counted(&counts, 2), &input);
  ch.write(std::string("after"), &after);  // behind the input: waits
  CHECK(handlerOf(ch).queued() == 2);
  ch.flush();
  CHECK(drain(ch) == std::vector<std::string>{"str:before"});
  CHECK(before.results == kOk);
  ch.setWritable(true);
  CHECK(drain(ch) == std::vector<std::string>{"c0", "c1", "str:after"});
  CHECK(input.results == kOk);
  CHECK(after.results == kOk);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: nothing available suspends; resumeTransfer goes on") {
  std::vector<std::optional<std::string>> script = {"a", "", "b", std::nullopt};
  std::size_t at = 0;
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  Listener l, behind;
  ch.write(std::make_unique<ChunkedGenerator>([&](ByteBufAllocator&) -> std::optional<ByteBuf> {
             const auto& step = script.at(at++);
             if (!step) return std::nullopt;
             return Unpooled::copiedBuffer(*step);  // "" is nothing now
           }),
           &l);
  ch.write(std::string("behind"), &behind);
  ch.flush();
  CHECK(drain(ch) == std::vector<std::string>{"a"});
  CHECK(behind.results.empty());  // waits behind the suspended input
  handlerOf(ch).resumeTransfer();
  CHECK(drain(ch) == std::vector<std::string>{"b", "", "str:behind"});
  CHECK(l.results == kOk);
  CHECK(behind.results == kOk);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: a known length ends the generator without an end marker") {
  int calls = 0;
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  Listener l;
  ch.writeAndFlush(std::make_unique<ChunkedGenerator>(
                       [&](ByteBufAllocator&) -> std::optional<ByteBuf> {
                         ++calls;
                         return Unpooled::copiedBuffer("xyz");
                       },
                       9),
                   &l);
  CHECK(drain(ch) == std::vector<std::string>{"xyz", "xyz", "xyz"});
  CHECK(calls == 3);
  CHECK(l.results == kOk);
  CHECK_FALSE(ch.finish());
}

TEST_CASE(
    "ChunkedWriteHandler: one pass writes at most kMaxChunksPerPass chunks, a task the rest") {
  Counts counts;
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  Listener l;
  constexpr int kChunks = 3 * ChunkedWriteHandler::kMaxChunksPerPass + 5;
  ch.write(counted(&counts, kChunks), &l);
  ch.flush();  // no runPendingTasks here
  CHECK(ch.outboundCount() == ChunkedWriteHandler::kMaxChunksPerPass);
  ch.runPendingTasks();  // the resume tasks, one after the other
  CHECK(drain(ch) == chunkNames(0, kChunks));
  CHECK(l.results == kOk);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: a throwing input fails its write with the exception's code") {
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  SUBCASE("with a listener: it gets std::system_error's code; what follows goes on") {
    int calls = 0;
    Listener l, next;
    ch.write(std::make_unique<ChunkedGenerator>([&](ByteBufAllocator&) -> std::optional<ByteBuf> {
               if (++calls == 2)
                 throw std::system_error(std::make_error_code(std::errc::io_error), "disk");
               return Unpooled::copiedBuffer("ok");
             }),
             &l);
    ch.write(std::string("next"), &next);
    ch.flush();
    CHECK(drain(ch) == std::vector<std::string>{"ok", "str:next"});
    CHECK(l.results == std::vector<std::error_code>{std::make_error_code(std::errc::io_error)});
    CHECK(next.results == kOk);
    CHECK_NOTHROW(ch.checkException());
  }
  SUBCASE("without a listener: exceptionCaught; any exception is writeFailed for a listener") {
    ch.writeAndFlush(std::make_unique<ChunkedGenerator>(
        [](ByteBufAllocator&) -> std::optional<ByteBuf> { throw IllegalStateError("gen"); }));
    CHECK_THROWS_WITH_AS(ch.checkException(), "gen", IllegalStateError);
    Listener l;
    ch.writeAndFlush(
        std::make_unique<ChunkedGenerator>(
            [](ByteBufAllocator&) -> std::optional<ByteBuf> { throw IllegalStateError("gen"); }),
        &l);
    CHECK(l.results == std::vector<std::error_code>{ChannelErrc::writeFailed});
    CHECK_NOTHROW(ch.checkException());
  }
  CHECK_FALSE(ch.finish());
}

namespace {
/// Fails the write of the chunk with the given text (towards the head of the handler).
struct FailChunk : ChannelHandler {
  std::string victim;
  explicit FailChunk(std::string v) : victim(std::move(v)) {}
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override {
    if (msg.is<ByteBuf>() && msg.as<ByteBuf>().readableStringView() == victim) {
      if (listener != nullptr) listener->operationComplete(ChannelErrc::closed);
      return;
    }
    ctx.write(std::move(msg), listener);
  }
};
}  // namespace

TEST_CASE("ChunkedWriteHandler: the first failed chunk fails the write, once; the input closes") {
  Counts counts;
  EmbeddedChannel ch(std::make_unique<FailChunk>("c1"), std::make_unique<ChunkedWriteHandler>());
  Listener l, next;
  ch.write(counted(&counts, 4), &l);
  ch.write(std::string("next"), &next);
  ch.flush();
  CHECK(l.results == std::vector<std::error_code>{ChannelErrc::closed});
  CHECK(counts.closes == 1);
  // The failed input is dropped (it closed: no more chunks); the next message goes on.
  CHECK(drain(ch) == std::vector<std::string>{"c0", "str:next"});
  CHECK(next.results == kOk);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: closing the channel or removing the handler fails what waits") {
  Counts counts;
  Listener input, behind;
  SUBCASE("channel closed") {
    EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
    ch.setWritable(false);
    ch.write(counted(&counts, 3), &input);
    ch.write(std::string("behind"), &behind);
    ch.flush();
    ch.close();
    CHECK(input.results == std::vector<std::error_code>{ChannelErrc::closed});
    CHECK(behind.results == std::vector<std::error_code>{ChannelErrc::closed});
  }
  SUBCASE("handler removed") {
    EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
    ch.setWritable(false);
    ch.write(counted(&counts, 3), &input);
    ch.write(std::string("behind"), &behind);
    ch.pipeline().remove("handler0");
    CHECK(input.results == std::vector<std::error_code>{ChannelErrc::handlerRemoved});
    CHECK(behind.results == std::vector<std::error_code>{ChannelErrc::handlerRemoved});
    CHECK_FALSE(ch.finish());
  }
  SUBCASE("the channel destroyed with everything still queued") {
    {
      EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
      ch.setWritable(false);
      ch.write(counted(&counts, 3), &input);
    }  // the handler is removed with the pipeline: it tells the listener
    CHECK(input.results == std::vector<std::error_code>{ChannelErrc::handlerRemoved});
  }
  CHECK(counts.closes == 1);
  CHECK(input.results.size() == 1);
}

namespace {
/// Holds the writes that reach it until released (a socket that has not sent them yet).
struct HoldWrites : ChannelHandler {
  struct Held {
    Message msg;
    WriteListener* listener;
  };
  std::vector<Held> held;
  void write(ChannelHandlerContext&, Message msg, WriteListener* listener) override {
    held.push_back({std::move(msg), listener});
  }
  void releaseAll(ChannelHandlerContext& ctx) {
    auto h = std::move(held);
    held.clear();
    for (auto& w : h) ctx.writeAndFlush(std::move(w.msg), w.listener);
  }
};
}  // namespace

TEST_CASE("ChunkedWriteHandler: removed while its chunk writes are in flight: they complete it") {
  Counts counts;
  EmbeddedChannel ch(std::make_unique<HoldWrites>(), std::make_unique<ChunkedWriteHandler>());
  auto& hold = *static_cast<HoldWrites*>(ch.pipeline().get("handler0"));
  Listener l;
  ch.writeAndFlush(counted(&counts, 3), &l);
  CHECK(hold.held.size() == 3);  // c0 c1 c2 (the last one knows it is the end), all in flight
  CHECK(l.results.empty());
  ch.pipeline().remove("handler1");  // the handler goes; its listener object stays with the writes
  CHECK(l.results.empty());          // every chunk was handed down: nothing to fail
  hold.releaseAll(*ch.pipeline().context("handler0"));
  CHECK(l.results == kOk);  // the last chunk's completion reached the caller
  CHECK(drain(ch) == chunkNames(0, 3));
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: the three unique_ptr types are inputs; a null one fails") {
  EmbeddedChannel ch(std::make_unique<ChunkedWriteHandler>());
  Listener a, b, c;
  char path[] = "/tmp/netbuf_chunked_write_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "file!", 5) == 5);
  ::close(fd);
  ch.writeAndFlush(std::make_unique<ChunkedFile>(path, 2), &a);
  ch.writeAndFlush(std::make_unique<ChunkedGenerator>(
                       [](ByteBufAllocator&) -> std::optional<ByteBuf> { return std::nullopt; }),
                   &b);
  Counts counts;
  ch.writeAndFlush(std::unique_ptr<ChunkedInput>(std::make_unique<CountedInput>(&counts, 1)), &c);
  CHECK(drain(ch) == std::vector<std::string>{"fi", "le", "!", "", "c0"});
  CHECK(a.results == kOk);
  CHECK(b.results == kOk);
  CHECK(c.results == kOk);
  Listener null;
  ch.writeAndFlush(std::unique_ptr<ChunkedInput>(), &null);
  CHECK(null.results == std::vector<std::error_code>{ChannelErrc::writeFailed});
  CHECK_THROWS_AS(ch.checkException(), IllegalArgumentError);
  ::unlink(path);
  CHECK_FALSE(ch.finish());
}

TEST_CASE("ChunkedWriteHandler: a channel destroyed with chunk writes never completed frees all") {
  Counts counts;
  Listener l;
  {
    EmbeddedChannel ch(std::make_unique<HoldWrites>(), std::make_unique<ChunkedWriteHandler>());
    ch.writeAndFlush(counted(&counts, 2), &l);
    CHECK(static_cast<HoldWrites*>(ch.pipeline().get("handler0"))->held.size() == 2);
  }  // the held writes are dropped uncalled; the channel's registry frees the input's state
  CHECK(l.results.empty());
  CHECK(counts.closes == 1);  // the input was closed when its state went
}
