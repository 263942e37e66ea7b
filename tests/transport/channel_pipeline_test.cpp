#include <netbuf/transport/channel_pipeline.hpp>

#include <doctest/doctest.h>

#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <netbuf/codec/length_field_prepender.hpp>
#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
#include <netbuf/codec/msgpack/message_pack_encoder.hpp>
#include <netbuf/codec/string_encoder.hpp>
#include <netbuf/transport/codec_channel_handler.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <netbuf/transport/idle_state_handler.hpp>
#include <stdexcept>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

/// Records every event it sees into a shared log, then forwards it.
struct Recorder : ChannelHandler {
  std::string tag;
  std::vector<std::string>* log;
  Recorder(std::string t, std::vector<std::string>* l) : tag(std::move(t)), log(l) {}
  void handlerAdded(ChannelHandlerContext&) override { log->push_back(tag + ".added"); }
  void handlerRemoved(ChannelHandlerContext&) override { log->push_back(tag + ".removed"); }
  void channelActive(ChannelHandlerContext& ctx) override {
    log->push_back(tag + ".active");
    ctx.fireChannelActive();
  }
  void channelInactive(ChannelHandlerContext& ctx) override {
    log->push_back(tag + ".inactive");
    ctx.fireChannelInactive();
  }
  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    log->push_back(tag + ".read");
    ctx.fireChannelRead(std::move(msg));
  }
  void userEventTriggered(ChannelHandlerContext& ctx, Message e) override {
    log->push_back(tag + ".event");
    ctx.fireUserEventTriggered(std::move(e));
  }
  void channelWritabilityChanged(ChannelHandlerContext& ctx) override {
    log->push_back(tag + ".writability");
    ctx.fireChannelWritabilityChanged();
  }
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* l) override {
    log->push_back(tag + ".write");
    ctx.write(std::move(msg), l);
  }
  void flush(ChannelHandlerContext& ctx) override {
    log->push_back(tag + ".flush");
    ctx.flush();
  }
  void close(ChannelHandlerContext& ctx) override {
    log->push_back(tag + ".close");
    ctx.close();
  }
};

/// int -> std::string (inbound), std::string -> int (outbound: its length).
struct IntToText : InboundHandler<int, std::string> {
  void messageReceived(ChannelHandlerContext& ctx, int v) override {
    ctx.fireChannelRead(std::to_string(v));
  }
};
struct TextLength : OutboundHandler<std::string, int> {
  void writeMessage(ChannelHandlerContext& ctx, std::string s, WriteListener* l) override {
    ctx.write(static_cast<int>(s.size()), l);
  }
};
struct TakesInts : InboundHandler<int> {
  std::vector<int> got;
  void messageReceived(ChannelHandlerContext&, int v) override { got.push_back(v); }
};

struct Listener : WriteListener {
  int calls = 0;
  std::error_code ec;
  void operationComplete(std::error_code e) noexcept override {
    ++calls;
    ec = e;
  }
};

}  // namespace

TEST_CASE("ChannelPipeline: inbound events flow head to tail, outbound tail to head") {
  std::vector<std::string> log;
  EmbeddedChannel ch;
  ChannelPipeline& p = ch.pipeline();
  p.addLast("b", std::make_unique<Recorder>("b", &log));
  p.addFirst("a", std::make_unique<Recorder>("a", &log));
  p.addAfter("b", "d", std::make_unique<Recorder>("d", &log));
  p.addBefore("d", "c", std::make_unique<Recorder>("c", &log));
  CHECK(p.names() == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(&p.channel() == &ch);
  CHECK(p.get("c") != nullptr);
  CHECK(p.get("zz") == nullptr);
  REQUIRE(p.context("b") != nullptr);
  CHECK(p.context("b")->name() == "b");
  CHECK(&p.context("b")->channel() == &ch);
  CHECK(&p.context("b")->alloc() == &ch.alloc());
  log.clear();

  ch.writeInbound(std::string("x"));
  ch.pipeline().fireUserEventTriggered(Message(42));
  ch.pipeline().fireChannelWritabilityChanged();
  CHECK(log == std::vector<std::string>{"a.read", "b.read", "c.read", "d.read", "a.event",
                                        "b.event", "c.event", "d.event", "a.writability",
                                        "b.writability", "c.writability", "d.writability"});
  CHECK(ch.readInbound<std::string>() == "x");
  log.clear();
  ch.writeOutbound(std::string("y"));
  CHECK(log == std::vector<std::string>{"d.write", "c.write", "b.write", "a.write", "d.flush",
                                        "c.flush", "b.flush", "a.flush"});
  CHECK(ch.readOutbound<std::string>() == "y");
  log.clear();
  CHECK_FALSE(ch.finish());
  CHECK(log == std::vector<std::string>{"d.close", "c.close", "b.close", "a.close", "a.inactive",
                                        "b.inactive", "c.inactive", "d.inactive"});
}

TEST_CASE("ChannelPipeline: names are unique; unknown names and empty handlers are refused") {
  EmbeddedChannel ch;
  ChannelPipeline& p = ch.pipeline();
  p.addLast("x", std::make_unique<ChannelHandler>());
  CHECK_THROWS_AS(p.addLast("x", std::make_unique<ChannelHandler>()), IllegalArgumentError);
  CHECK_THROWS_AS(p.addLast("head", std::make_unique<ChannelHandler>()), IllegalArgumentError);
  CHECK_THROWS_AS(p.addLast("", std::make_unique<ChannelHandler>()), IllegalArgumentError);
  CHECK_THROWS_AS(p.addLast("y", nullptr), IllegalArgumentError);
  CHECK_THROWS_AS(p.addBefore("nope", "y", std::make_unique<ChannelHandler>()),
                  IllegalArgumentError);
  CHECK_THROWS_AS(p.remove("nope"), IllegalArgumentError);
  CHECK(p.names() == std::vector<std::string>{"x"});
}

TEST_CASE("ChannelPipeline: linking handlers of different message types is refused, naming both") {
  EmbeddedChannel ch;
  ChannelPipeline& p = ch.pipeline();
  p.addLast("ints", std::make_unique<IntToText>());
  try {
    p.addLast("wantsInts", std::make_unique<TakesInts>());
    FAIL("mismatch accepted");
  } catch (const IllegalArgumentError& e) {
    const std::string what = e.what();
    CHECK(what.find("'wantsInts' takes int") != std::string::npos);
    CHECK(what.find("'ints', produces std::string") != std::string::npos);
  }
  CHECK(p.names() == std::vector<std::string>{"ints"});
  // Outbound: TextLength writes ints; a handler towards the socket that takes strings refuses.
  p.addLast("len", std::make_unique<TextLength>());
  struct TakesTextOut : OutboundHandler<std::string> {
    void writeMessage(ChannelHandlerContext& ctx, std::string s, WriteListener* l) override {
      ctx.write(std::move(s), l);
    }
  };
  CHECK_THROWS_AS(p.addAfter("ints", "textOut", std::make_unique<TakesTextOut>()),
                  IllegalArgumentError);
  // A handler of unspecified types links with anything.
  p.addAfter("ints", "any", std::make_unique<ChannelHandler>());
  CHECK(p.names() == std::vector<std::string>{"ints", "any", "len"});
  // replace() checks the newcomer against both neighbours before removing anything.
  CHECK_THROWS_AS(p.replace("any", "wantsInts", std::make_unique<TakesInts>()),
                  IllegalArgumentError);
  CHECK(p.names() == std::vector<std::string>{"ints", "any", "len"});
}

TEST_CASE("ChannelPipeline: typed handlers pass other message types through") {
  EmbeddedChannel ch(std::make_unique<IntToText>(), std::make_unique<TextLength>());
  ch.writeInbound(7, std::string("untouched"));
  CHECK(ch.readInbound<std::string>() == "7");
  CHECK(ch.readInbound<std::string>() == "untouched");
  ch.writeOutbound(std::string("four"), 2.5);
  CHECK(ch.readOutbound<int>() == 4);
  CHECK(ch.readOutbound<double>() == 2.5);
  CHECK_FALSE(ch.readOutbound<int>().has_value());
}

TEST_CASE("ChannelPipeline: handlers added and removed while events flow") {
  std::vector<std::string> log;
  struct SelfRemoving : ChannelHandler {
    std::vector<std::string>* log;
    explicit SelfRemoving(std::vector<std::string>* l) : log(l) {}
    void channelRead(ChannelHandlerContext& ctx, Message msg) override {
      ctx.pipeline().remove(ctx.name());  // removed while its event is in flight
      CHECK(ctx.isRemoved());
      ctx.pipeline().addLast("late", std::make_unique<Recorder>("late", log));
      ctx.fireChannelRead(std::move(msg));  // the removed context still forwards
    }
    void handlerRemoved(ChannelHandlerContext&) override { log->push_back("self.removed"); }
  };
  EmbeddedChannel ch;
  ch.pipeline().addLast("self", std::make_unique<SelfRemoving>(&log));
  ch.pipeline().addLast("r", std::make_unique<Recorder>("r", &log));
  log.clear();
  ch.writeInbound(1);
  CHECK(log == std::vector<std::string>{"self.removed", "late.added", "r.read", "late.read"});
  CHECK(ch.pipeline().names() == std::vector<std::string>{"r", "late"});
  log.clear();
  ch.writeInbound(2);
  CHECK(log == std::vector<std::string>{"r.read", "late.read"});
  CHECK(ch.inboundCount() == 2);
  ch.pipeline().replace("late", "later", std::make_unique<Recorder>("later", &log));
  CHECK(ch.pipeline().names() == std::vector<std::string>{"r", "later"});
  CHECK(log.back() == "later.added");
}

TEST_CASE("ChannelPipeline: a handler may fire events from handlerRemoved as the channel goes") {
  // Destroying the channel removes every handler. One that writes and flushes from handlerRemoved
  // opens and closes a pipeline event there; that must not destroy the removed contexts (its own
  // included) while handlerRemoved still runs (ASan: use after free before the fix).
  std::vector<std::string> log;
  struct FlushOnRemove : ChannelHandler {
    std::vector<std::string>* log;
    std::string said = "bye";
    explicit FlushOnRemove(std::vector<std::string>* l) : log(l) {}
    void handlerRemoved(ChannelHandlerContext& ctx) override {
      ctx.write(Message(std::string(said)));
      ctx.flush();
      log->push_back(said + ".removed");  // members still alive after the flush
    }
  };
  {
    EmbeddedChannel ch;
    ch.pipeline().addLast("a", std::make_unique<FlushOnRemove>(&log));
    ch.pipeline().addLast("b", std::make_unique<FlushOnRemove>(&log));
  }
  CHECK(log == std::vector<std::string>{"bye.removed", "bye.removed"});
}

TEST_CASE("ChannelPipeline: an exception goes to the handler's exceptionCaught, then the tail") {
  struct Thrower : ChannelHandler {
    void channelRead(ChannelHandlerContext&, Message) override {
      throw std::runtime_error("read failed");
    }
  };
  struct Catcher : ChannelHandler {
    int caught = 0;
    void exceptionCaught(ChannelHandlerContext&, std::exception_ptr) override { ++caught; }
  };
  SUBCASE("unhandled: reaches the channel (EmbeddedChannel rethrows it)") {
    EmbeddedChannel ch(std::make_unique<Thrower>());
    CHECK_THROWS_AS(ch.writeInbound(1), std::runtime_error);
    ch.checkException();  // rethrown once only
  }
  SUBCASE("handled downstream") {
    EmbeddedChannel ch(std::make_unique<Thrower>(), std::make_unique<Catcher>());
    ch.writeInbound(1);
    CHECK(static_cast<Catcher*>(ch.pipeline().get("handler1"))->caught == 1);
  }
}

TEST_CASE("ChannelPipeline: write listeners complete on flush, fail on close and on errors") {
  struct FailingWriter : ChannelHandler {
    void write(ChannelHandlerContext& ctx, Message msg, WriteListener* l) override {
      if (msg.is<int>()) throw std::invalid_argument("cannot write ints");
      ctx.write(std::move(msg), l);
    }
  };
  EmbeddedChannel ch(std::make_unique<FailingWriter>());
  Listener ok, failed, closed;
  ch.write(std::string("a"), &ok);
  CHECK(ok.calls == 0);
  ch.flush();
  CHECK(ok.calls == 1);
  CHECK_FALSE(ok.ec);
  ch.write(1, &failed);  // the handler throws: the listener hears, the error is recorded too
  CHECK(failed.calls == 1);
  CHECK(failed.ec == ChannelErrc::writeFailed);
  CHECK_THROWS_AS(ch.checkException(), std::invalid_argument);
  ch.pipeline().remove("handler0");
  ch.write(std::string("b"), &closed);
  ch.close();
  CHECK(closed.calls == 1);
  CHECK(closed.ec == ChannelErrc::closedBeforeWritten);  // queued when the close came
  CHECK(closed.ec == std::errc::operation_canceled);
  Listener afterClose;
  ch.writeAndFlush(std::string("c"), &afterClose);
  CHECK(afterClose.ec == ChannelErrc::closed);  // offered after it
  CHECK(afterClose.ec == std::errc::not_connected);
  CHECK_FALSE(ch.isOpen());
}

TEST_CASE("ChannelPipeline: messages reaching the tail are counted; attributes are typed") {
  EmbeddedChannel ch;
  ch.writeInbound(Unpooled::copiedBuffer(std::string_view("x")), 3);
  CHECK(ch.pipeline().unhandledMessages() == 2);
  CHECK(ch.finishAndReleaseAll());
  CHECK(ch.inboundCount() == 0);

  static const AttributeKey<int> kCount{"count"};
  static const AttributeKey<std::string> kName{"name"};
  CHECK(ch.findAttr(kCount) == nullptr);
  ch.attr(kCount) = 5;
  ch.attr(kName) = "peer";
  ++ch.attr(kCount);
  REQUIRE(ch.findAttr(kCount) != nullptr);
  CHECK(*ch.findAttr(kCount) == 6);
  CHECK(ch.attr(kName) == "peer");
}

TEST_CASE("ChannelPipeline: the type check looks past handlers that do not act in a direction") {
  // A MessagePack decoder, then encoders (outbound only), then a handler of strings: the strings
  // handler would never see a string. Refused, naming the decoder it would follow.
  EmbeddedChannel ch;
  ChannelPipeline& p = ch.pipeline();
  p.addLast("frames", std::make_unique<DecoderChannelHandler<LengthFieldBasedFrameDecoder>>(
                          1 << 16, 0, 4, 0, 4));
  p.addLast("prepend", std::make_unique<EncoderChannelHandler<LengthFieldPrepender>>(4));
  p.addLast("msgpack", std::make_unique<DecoderChannelHandler<MessagePackDecoder>>());
  p.addLast("encode", std::make_unique<EncoderChannelHandler<MessagePackEncoder>>());
  p.addLast("idle", std::make_unique<IdleStateHandler>(
                        std::chrono::seconds(0), std::chrono::seconds(0), std::chrono::seconds(0)));
  struct Strings : InboundHandler<std::string> {
    void messageReceived(ChannelHandlerContext&, std::string) override {}
  };
  try {
    p.addLast("strings", std::make_unique<Strings>());
    FAIL("a string handler after a MessagePack decoder was accepted");
  } catch (const IllegalArgumentError& e) {
    const std::string what = e.what();
    CHECK(what ==
          "handler 'strings' takes std::string but the handler before it that acts on inbound "
          "messages, 'msgpack', produces netbuf::Document");
  }
  // A handler of Documents is right there.
  struct Documents : InboundHandler<Document> {
    void messageReceived(ChannelHandlerContext&, Document) override {}
  };
  p.addLast("documents", std::make_unique<Documents>());
  // Outbound: a handler writing strings after the MessagePack encoder (which takes Documents),
  // with inbound-only handlers in between, is refused too.
  struct WritesStrings : OutboundHandler<int, std::string> {
    void writeMessage(ChannelHandlerContext& ctx, int v, WriteListener* l) override {
      ctx.write(std::to_string(v), l);
    }
  };
  try {
    p.addLast("writesStrings", std::make_unique<WritesStrings>());
    FAIL("a string writer towards a Document encoder was accepted");
  } catch (const IllegalArgumentError& e) {
    CHECK(std::string(e.what()) ==
          "handler 'writesStrings' writes std::string but the handler before it towards the "
          "socket that acts on outbound messages, 'encode', takes netbuf::Document");
  }
  CHECK(p.names() ==
        std::vector<std::string>{"frames", "prepend", "msgpack", "encode", "idle", "documents"});
  // A plain ChannelHandler declares nothing: it may turn anything into anything, so the check
  // accepts what follows it.
  p.addLast("any", std::make_unique<ChannelHandler>());
  p.addLast("strings", std::make_unique<Strings>());
  // Inserting an inbound handler checks towards the tail too.
  struct IntsToText : InboundHandler<int, std::string> {
    void messageReceived(ChannelHandlerContext& ctx, int v) override {
      ctx.fireChannelRead(std::to_string(v));
    }
  };
  EmbeddedChannel ch2;
  ch2.pipeline().addLast("ints", std::make_unique<TakesInts>());
  ch2.pipeline().addFirst("enc", std::make_unique<EncoderChannelHandler<StringEncoder>>());
  try {
    ch2.pipeline().addFirst("text", std::make_unique<IntsToText>());
    FAIL("a string producer before an int handler was accepted");
  } catch (const IllegalArgumentError& e) {
    CHECK(std::string(e.what()) ==
          "handler 'text' produces std::string but the handler after it that acts on inbound "
          "messages, 'ints', takes int");
  }
}

TEST_CASE("ChannelPipeline: removing a handler that would leave mismatched neighbours is refused") {
  EmbeddedChannel ch;
  ChannelPipeline& p = ch.pipeline();
  p.addLast("ints", std::make_unique<IntToText>());    // int -> std::string
  struct Lengths : InboundHandler<std::string, int> {  // std::string -> int
    void messageReceived(ChannelHandlerContext& ctx, std::string s) override {
      ctx.fireChannelRead(static_cast<int>(s.size()));
    }
  };
  p.addLast("lengths", std::make_unique<Lengths>());
  p.addLast("takesInts", std::make_unique<TakesInts>());  // takes int
  try {
    p.remove("lengths");
    FAIL("a removal leaving a string producer before an int handler was accepted");
  } catch (const IllegalArgumentError& e) {
    CHECK(std::string(e.what()) ==
          "removing handler 'lengths' would leave 'takesInts', which takes int, after 'ints', "
          "which produces std::string");
  }
  CHECK(p.names() == std::vector<std::string>{"ints", "lengths", "takesInts"});
  p.remove("takesInts");  // nothing acts after it but the tail: fine
  p.remove("lengths");
  CHECK(p.names() == std::vector<std::string>{"ints"});
}
