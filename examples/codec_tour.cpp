// A tour of netbuf's codecs: frame decoders over a byte stream that arrives in awkward pieces,
// without sockets. Run it and read the output next to this file.
//
//   build/release/examples/codec_tour
#include <fmt/format.h>

#include <netbuf/netbuf.hpp>
#include <string>
#include <string_view>

namespace {

using namespace netbuf;

void heading(std::string_view title) { fmt::print("\n== {} ==\n", title); }

/// Prints what a runner decoded: frames as quoted text, errors by kind, offset and limit.
template <class Decoder>
void show(DecoderRunner<Decoder>& run) {
  std::size_t e = 0;
  auto& msgs = run.messages();
  for (std::size_t i = 0; i <= msgs.size(); ++i) {
    for (; e < run.errors().size() && run.errors()[e].messagesBefore == i; ++e) {
      try {
        run.rethrowError(e);
      } catch (const CodecError& err) {
        fmt::print("  error: {}\n", err.what());
      }
    }
    if (i < msgs.size()) {
      const auto& m = msgs[i];
      fmt::print("  frame: {:?} ({}{})\n", readableBytesToString(m), readableBytes(m),
                 isComposite(m) ? " bytes, a composite of slices" : " bytes, a slice");
    }
  }
}

}  // namespace

int main() {
  heading("lines split across reads, CR and LF in different reads");
  DecoderRunner<LineBasedFrameDecoder> lines(/*maxLength=*/64);
  lines.feed("GET /index.html\r").feed("\nHost: exa").feed("mple.org\r\n\r\n");
  show(lines);

  heading("a too-long line is skipped, the next one still decodes");
  DecoderRunner<LineBasedFrameDecoder> tooLong(8);
  tooLong.feed("short\nthis line is far too long\nok\n");
  show(tooLong);

  heading("length-prefixed frames (2-byte length, stripped), one byte per read");
  DecoderRunner<LengthFieldBasedFrameDecoder> lengths(/*maxFrameLength=*/1024, 0, 2, 0, 2);
  lengths.feedInChunks(std::string_view("\0\5hello\0\3abc\0\0", 14), 1);
  show(lengths);

  heading("a 4 GiB length prefix: rejected at once, nothing buffered");
  DecoderRunner<LengthFieldBasedFrameDecoder> huge(1024, 0, 4, 0, 4);
  huge.feed(std::string_view("\xFF\xFF\xFF\xFF", 4)).feed("junk that belongs to the huge frame");
  show(huge);
  fmt::print("  bytes buffered by the decoder: {}\n", huge.decoder().actualReadableBytes());

  heading("Composite cumulator: a frame across reads is a composite of slices, not a copy");
  DecoderRunner<FixedLengthFrameDecoder> fixed(6, Cumulator::Composite);
  fixed.feed("abc").feed("defghijklmno").feed("pqr");
  show(fixed);

  heading("JSON objects framed by bracket counting (strings and escapes understood)");
  DecoderRunner<JsonObjectDecoder> json;
  json.feedInChunks(R"({"a":"}"} [1,[2]] {"b":"\"{"})", 5);
  show(json);

  heading("encoding: a length header buffer, then the payload moved through (no copy)");
  LengthFieldPrepender prepend(2);
  std::vector<AnyByteBuf> out;
  prepend.write(AnyByteBuf(Unpooled::copiedBuffer(std::string_view("payload"))), out);
  for (const auto& b : out) fmt::print("  buffer: {:?}\n", readableBytesToString(b));
}
