#include <netbuf/codec/decoder_handler.hpp>
#include <netbuf/codec/encoder_handler.hpp>

#include <netbuf/codec/fixed_length_frame_decoder.hpp>
#include <netbuf/codec/message_to_byte_encoder.hpp>
#include <netbuf/codec/message_to_message_decoder.hpp>
#include <netbuf/codec/message_to_message_encoder.hpp>
#include <string>

#include "support/transcript_printing.hpp"

using namespace netbuf;
using netbuf::test::describeError;

namespace {

/// Frames to upper-case strings; a frame starting with '!' is a CorruptedFrameError.
struct UpperDecoder : MessageToMessageDecoder<UpperDecoder, AnyByteBuf, std::string> {
  void decode(AnyByteBuf frame, std::vector<std::string>& out) {
    std::string s = readableBytesToString(frame);
    if (!s.empty() && s[0] == '!') throw CorruptedFrameError("bang frame", 0);
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out.push_back(std::move(s));
  }
};

/// Records the events a handler fires, as a pipeline's next handler would see them.
template <class Msg>
struct RecordingContext {
  std::vector<std::string> events;
  std::vector<Msg> messages;
  void fireChannelRead(Msg&& m) {
    if constexpr (std::is_same_v<Msg, AnyByteBuf>) {
      events.push_back("read:" + readableBytesToString(m));
    } else {
      events.push_back("read:" + std::string(m));
    }
    messages.push_back(std::move(m));
  }
  void fireExceptionCaught(std::exception_ptr e) { events.push_back("error:" + describeError(e)); }
  void fireChannelReadComplete() { events.push_back("complete"); }
  void fireChannelInactive() { events.push_back("inactive"); }
};

/// Chains two handlers: what the first fires is the second's input.
template <class Second, class NextCtx>
struct ChainContext {
  Second& second;
  NextCtx& next;
  void fireChannelRead(AnyByteBuf&& m) { second.channelRead(next, std::move(m)); }
  void fireExceptionCaught(std::exception_ptr e) { next.fireExceptionCaught(std::move(e)); }
  void fireChannelReadComplete() { second.channelReadComplete(next); }
  void fireChannelInactive() { second.channelInactive(next); }
};

struct WriteRecorder {
  std::vector<AnyByteBuf> written;
  void write(AnyByteBuf&& b) { written.push_back(std::move(b)); }
};

/// An int as 4 big-endian bytes; negative values cannot be encoded.
struct IntEncoder : MessageToByteEncoder<IntEncoder, int> {
  void encode(const int& v, ByteBuf& out) {
    if (v < 0) throw EncoderError("negative", CodecError::kNone, 0, 0);
    out.writeInt(v);
  }
  std::size_t sizeHint(const int&) const { return 4; }
};

/// A string as a 1-byte length header buffer followed by the payload buffer.
struct TwoPartEncoder : MessageToMessageEncoder<TwoPartEncoder, std::string> {
  void encode(std::string s, std::vector<AnyByteBuf>& out) {
    ByteBuf header = alloc().buffer(1);
    header.writeByte(static_cast<std::int8_t>(s.size()));
    out.emplace_back(std::move(header));
    out.emplace_back(Unpooled::wrappedBuffer(std::move(s)));
  }
};

/// One-byte frames; '!' is consumed and reported as a CorruptedFrameError.
struct BangDecoder : ByteToMessageDecoder<BangDecoder, AnyByteBuf> {
  template <class Buf>
  void decode(Buf& in, std::vector<AnyByteBuf>& out) {
    if (in.getUnsignedByte(in.readerIndex()) == '!') {
      in.skipBytes(1);
      throw CorruptedFrameError("bang", streamOffset(in.readerIndex() - 1));
    }
    out.push_back(readFrame(in, 1));
  }
};

ByteBuf bytes(std::string_view s) { return Unpooled::copiedBuffer(s); }

}  // namespace

TEST_CASE("DecoderHandler: fires each decoded message, then forwards complete and inactive") {
  DecoderHandler<FixedLengthFrameDecoder> h(3);
  RecordingContext<AnyByteBuf> ctx;
  h.channelRead(ctx, bytes("abcd"));
  h.channelReadComplete(ctx);
  h.channelRead(ctx, bytes("ef"));
  h.channelInactive(ctx);
  CHECK(ctx.events == std::vector<std::string>{"read:abc", "complete", "read:def", "inactive"});
  CHECK(h.codec().frameLength() == 3);
  const DecoderHandler<FixedLengthFrameDecoder>& ch = h;
  CHECK(ch.codec().bytesConsumed() == 6);
}

TEST_CASE("DecoderHandler: an error is fired between the messages before and after it") {
  DecoderHandler<FixedLengthFrameDecoder> frames(2);
  DecoderHandler<UpperDecoder> upper;
  RecordingContext<std::string> sink;
  ChainContext<DecoderHandler<UpperDecoder>, RecordingContext<std::string>> ctx{upper, sink};
  frames.channelRead(ctx, bytes("ab!xcd"));
  frames.channelReadComplete(ctx);
  frames.channelInactive(ctx);
  CHECK(sink.events == std::vector<std::string>{"read:AB", "error:!Corrupted@0", "read:CD",
                                                "complete", "inactive"});
}

TEST_CASE("DecoderHandler: a frame decoder's own errors are ordered too") {
  DecoderHandler<BangDecoder> h;
  RecordingContext<AnyByteBuf> ctx;
  h.channelRead(ctx, bytes("a!b"));
  CHECK(ctx.events == std::vector<std::string>{"read:a", "error:!Corrupted@1", "read:b"});
}

TEST_CASE("EncoderHandler: writes the encoder's buffers in order; errors propagate") {
  EncoderHandler<IntEncoder> ints;
  WriteRecorder w;
  ints.write(w, 0x01020304);
  REQUIRE(w.written.size() == 1);
  CHECK(std::get<ByteBuf>(w.written[0]).getInt(0) == 0x01020304);
  CHECK_THROWS_AS(ints.write(w, -1), EncoderError);
  CHECK(w.written.size() == 1);
  ints.write(w, 7);  // the handler is usable after an error
  CHECK(w.written.size() == 2);

  EncoderHandler<TwoPartEncoder> parts;
  parts.write(w, std::string("hello"));
  REQUIRE(w.written.size() == 4);
  CHECK(readableBytesToString(w.written[2]) == "\x05");
  CHECK(readableBytesToString(w.written[3]) == "hello");
  CHECK(&parts.codec().alloc() == &ByteBufAllocator::defaultAllocator());
}
