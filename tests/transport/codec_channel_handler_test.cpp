// Every codec of the codec module, run in a pipeline through EmbeddedChannel.
#include <netbuf/transport/codec_channel_handler.hpp>

#include <doctest/doctest.h>

#include <netbuf/codec/delimiter_based_frame_decoder.hpp>
#include <netbuf/codec/fixed_length_frame_decoder.hpp>
#include <netbuf/codec/json_object_decoder.hpp>
#include <netbuf/codec/length_field_based_frame_decoder.hpp>
#include <netbuf/codec/length_field_prepender.hpp>
#include <netbuf/codec/line_based_frame_decoder.hpp>
#include <netbuf/codec/string_decoder.hpp>
#include <netbuf/codec/string_encoder.hpp>
#include <netbuf/codec/varint32_frame_decoder.hpp>
#include <netbuf/codec/varint32_length_field_prepender.hpp>
#include <netbuf/transport/embedded_channel.hpp>
#include <string>
#include <vector>

using namespace netbuf;

namespace {

ByteBuf bytes(std::string_view s) { return Unpooled::copiedBuffer(s); }

CompositeByteBuf composite(std::string_view a, std::string_view b) {
  CompositeByteBuf c;
  c.addComponent(true, bytes(a)).addComponent(true, bytes(b));
  return c;
}

template <class... Handlers>
EmbeddedChannel channelOf(std::unique_ptr<Handlers>... h) {
  return EmbeddedChannel(std::move(h)...);
}

std::vector<std::string> inboundFrames(EmbeddedChannel& ch) {
  std::vector<std::string> out;
  while (auto f = ch.readInbound<AnyByteBuf>()) out.push_back(readableBytesToString(*f));
  return out;
}

std::string outboundBytes(EmbeddedChannel& ch) {
  std::string s;
  while (auto b = ch.readOutbound<AnyByteBuf>()) s += readableBytesToString(*b);
  return s;
}

}  // namespace

TEST_CASE("codecs in a pipeline: fixed, line and delimiter frame decoders") {
  EmbeddedChannel fixed(std::make_unique<DecoderChannelHandler<FixedLengthFrameDecoder>>(3));
  fixed.writeInbound(bytes("abcd"), bytes("ef"));
  CHECK(inboundFrames(fixed) == std::vector<std::string>{"abc", "def"});

  EmbeddedChannel lines(std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(8));
  lines.writeInbound(bytes("one\r"), bytes("\ntwo\n"));
  CHECK(inboundFrames(lines) == std::vector<std::string>{"one", "two"});
  // A too-long line: the error reaches the tail after "ok" and before "next" is decoded.
  CHECK_THROWS_AS(lines.writeInbound(bytes("ok\nthis is too long\nnext\n")), TooLongFrameError);
  CHECK(inboundFrames(lines) == std::vector<std::string>{"ok", "next"});

  EmbeddedChannel delim(std::make_unique<DecoderChannelHandler<DelimiterBasedFrameDecoder>>(
      64, true, true, Delimiters::nulDelimiter()));
  delim.writeInbound(bytes(std::string_view("a\0b", 3)), bytes(std::string_view("c\0", 2)));
  CHECK(inboundFrames(delim) == std::vector<std::string>{"a", "bc"});
}

TEST_CASE("codecs in a pipeline: length field and varint, encoder and decoder round trip") {
  EmbeddedChannel enc(std::make_unique<EncoderChannelHandler<LengthFieldPrepender>>(2));
  enc.writeOutbound(AnyByteBuf(bytes("hello")), AnyByteBuf(bytes("")));
  const std::string wire = outboundBytes(enc);
  CHECK(wire == std::string("\0\5hello\0\0", 9));

  EmbeddedChannel dec(
      std::make_unique<DecoderChannelHandler<LengthFieldBasedFrameDecoder>>(1024, 0, 2, 0, 2));
  for (char c : wire) dec.writeInbound(bytes(std::string_view(&c, 1)));
  CHECK(inboundFrames(dec) == std::vector<std::string>{"hello", ""});

  EmbeddedChannel venc(std::make_unique<EncoderChannelHandler<Varint32LengthFieldPrepender>>());
  venc.writeOutbound(AnyByteBuf(bytes(std::string(300, 'x'))));
  const std::string vwire = outboundBytes(venc);
  CHECK(vwire.size() == 302);
  EmbeddedChannel vdec(std::make_unique<DecoderChannelHandler<Varint32FrameDecoder>>());
  vdec.writeInbound(bytes(vwire.substr(0, 100)), bytes(vwire.substr(100)));
  CHECK(inboundFrames(vdec) == std::vector<std::string>{std::string(300, 'x')});
}

TEST_CASE("codecs in a pipeline: JSON objects, then strings, and a string encoder") {
  EmbeddedChannel ch(std::make_unique<DecoderChannelHandler<JsonObjectDecoder>>(),
                     std::make_unique<DecoderChannelHandler<StringDecoder>>(),
                     std::make_unique<EncoderChannelHandler<StringEncoder>>());
  ch.writeInbound(bytes(R"({"a":1} [2)"), bytes("]"));
  CHECK(ch.readInbound<std::string>() == R"({"a":1})");
  CHECK(ch.readInbound<std::string>() == "[2]");
  ch.writeOutbound(std::string("h\xC3\xA9"));
  CHECK(outboundBytes(ch) == "h\xC3\xA9");
}

TEST_CASE("codecs in a pipeline: types are checked when linking; decodeLast runs at finish") {
  EmbeddedChannel ch;
  ch.pipeline().addLast("text", std::make_unique<DecoderChannelHandler<StringDecoder>>());
  // A frame decoder takes bytes; it cannot follow a handler that produces strings.
  CHECK_THROWS_AS(
      ch.pipeline().addLast("frames",
                            std::make_unique<DecoderChannelHandler<FixedLengthFrameDecoder>>(2)),
      IllegalArgumentError);
  // Frame decoders accept every buffer type: one can follow another.
  ch.pipeline().addFirst("lines",
                         std::make_unique<DecoderChannelHandler<LineBasedFrameDecoder>>(64));
  ch.pipeline().addFirst("json", std::make_unique<DecoderChannelHandler<JsonObjectDecoder>>());
  ch.writeInbound(bytes("[\"a\nb\"]"));  // a JSON frame holding a raw newline: one line out
  CHECK(ch.readInbound<std::string>() == "[\"a");
  CHECK(ch.inboundCount() == 0);

  // The delimiter decoder's decodeLast releases a match that was waiting for a longer delimiter.
  EmbeddedChannel last(std::make_unique<DecoderChannelHandler<DelimiterBasedFrameDecoder>>(
      64, true, true, std::vector<std::string>{"b", "abcd"}));
  last.writeInbound(bytes("xab"));
  CHECK(last.inboundCount() == 0);
  CHECK(last.finish());
  CHECK(inboundFrames(last) == std::vector<std::string>{"xa"});
  auto* h = static_cast<DecoderChannelHandler<DelimiterBasedFrameDecoder>*>(
      last.pipeline().get("handler0"));
  REQUIRE(h != nullptr);
  CHECK(h->codec().bytesConsumed() == 3);
}

TEST_CASE(
    "codecs in a pipeline: buffer codecs take ByteBuf, CompositeByteBuf and AnyByteBuf alike") {
  // A plain ByteBuf written by a handler is framed like any other buffer, never passed unframed.
  EmbeddedChannel ch(std::make_unique<EncoderChannelHandler<LengthFieldPrepender>>(2));
  ch.writeOutbound(bytes("abc"));
  ch.writeOutbound(composite("de", "f"));
  ch.writeOutbound(AnyByteBuf(bytes("gh")));
  const std::string wire = outboundBytes(ch);
  CHECK(wire == std::string("\0\3abc\0\3def\0\2gh", 14));
  CHECK(ch.pipeline().get("handler0")->outboundIn().count == 3);

  // A message decoder of buffers (StringDecoder) takes a ByteBuf straight from the head.
  EmbeddedChannel text(std::make_unique<DecoderChannelHandler<StringDecoder>>());
  text.writeInbound(bytes("one"));
  text.writeInbound(composite("tw", "o"));
  CHECK(text.readInbound<std::string>() == "one");
  CHECK(text.readInbound<std::string>() == "two");
  CHECK(text.inboundCount() == 0);
}
