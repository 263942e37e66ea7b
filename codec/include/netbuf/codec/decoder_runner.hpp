#pragma once
// DecoderRunner: runs any decoder over a sequence of input buffers, without a pipeline or sockets
// (the codec module's counterpart of Netty's EmbeddedChannel for decoders). It records every
// decoded message and every decoding error in stream order.
//
//     DecoderRunner<LineBasedFrameDecoder> run(1024);     // arguments go to the decoder
//     run.feed("first\r\nsec").feed("ond\n").finish();
//     run.messages();  // the frames "first" and "second"
//
// feed(std::string_view) copies the bytes into a buffer from the runner's allocator, as a socket
// read would; feed(ByteBuf) hands a buffer over as is. Errors (CodecErrors) are recorded, not
// thrown; other exceptions propagate.

#include <algorithm>
#include <cstddef>
#include <exception>
#include <netbuf/buffer/byte_buf.hpp>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf {

template <class Decoder>
class DecoderRunner {
 public:
  using OutputType = typename Decoder::OutputType;

  struct RecordedError {
    std::size_t messagesBefore;  ///< messages().size() when the error was reported
    std::exception_ptr error;
  };

  template <class... Args>
  explicit DecoderRunner(Args&&... args) : decoder_(std::forward<Args>(args)...) {}

  Decoder& decoder() noexcept { return decoder_; }

  /// One read: hands in to the decoder, then ends the batch (channelReadComplete).
  template <class In>
  requires requires(Decoder& d, In&& in, std::vector<OutputType>& out) {
    d.channelRead(std::forward<In>(in), out);
  }
  DecoderRunner& feed(In&& in) {
    decoder_.channelRead(std::forward<In>(in), messages_, recorder());
    decoder_.channelReadComplete();
    if constexpr (requires { decoder_.actualReadableBytes(); })
      maxBuffered_ = std::max(maxBuffered_, decoder_.actualReadableBytes());
    return *this;
  }
  DecoderRunner& feed(std::string_view bytes) {
    ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(bytes.size());
    b.writeBytes(bytes);
    return feed(std::move(b));
  }
  /// Feeds bytes in reads of chunkSize bytes (the last may be shorter).
  DecoderRunner& feedInChunks(std::string_view bytes, std::size_t chunkSize) {
    if (chunkSize == 0) chunkSize = 1;
    for (std::size_t i = 0; i < bytes.size(); i += chunkSize) feed(bytes.substr(i, chunkSize));
    return *this;
  }
  /// Feeds bytes split at the given ascending positions.
  DecoderRunner& feedSplitAt(std::string_view bytes, const std::vector<std::size_t>& cuts) {
    std::size_t from = 0;
    for (std::size_t cut : cuts) {
      if (cut < from || cut > bytes.size()) continue;
      feed(bytes.substr(from, cut - from));
      from = cut;
    }
    return feed(bytes.substr(from));
  }
  /// End of stream (channelInactive): decodeLast on what remains, then the cumulation is released.
  DecoderRunner& finish() {
    decoder_.channelInactive(messages_, recorder());
    return *this;
  }

  /// The most bytes the decoder held undecoded after any read so far (its cumulation's high-water
  /// mark: what memory-bound tests check). Always 0 for decoders without a cumulation.
  std::size_t maxBuffered() const noexcept { return maxBuffered_; }

  std::vector<OutputType>& messages() noexcept { return messages_; }
  const std::vector<RecordedError>& errors() const noexcept { return errors_; }
  /// Rethrows error i (for REQUIRE_THROWS_AS and inspection of its type and fields).
  void rethrowError(std::size_t i) const { std::rethrow_exception(errors_.at(i).error); }

 private:
  auto recorder() {
    return [this](std::exception_ptr e) { errors_.push_back({messages_.size(), std::move(e)}); };
  }

  Decoder decoder_;
  std::vector<OutputType> messages_;
  std::vector<RecordedError> errors_;
  std::size_t maxBuffered_ = 0;
};

}  // namespace netbuf
