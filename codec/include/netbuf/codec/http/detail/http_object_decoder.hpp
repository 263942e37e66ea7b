#pragma once
// The state machine shared by HttpRequestDecoder and HttpResponseDecoder (Netty's
// HttpObjectDecoder), non-template: the framework's decode() hands it the merge cumulation.
//
//   SkipEmptyLines -> Head -> (no body) ------------------------------> emit head + LastHttpContent
//                          -> FixedLength (Content-Length) ----------> HttpContent..., Last
//                          -> ChunkSize <-> ChunkData -> ChunkCrlf    HttpContent per piece
//                                    \-> Trailers -----------------> LastHttpContent(trailers)
//                          -> CloseDelimited (responses) -----------> HttpContent..., Last at EOF
//   any error -> Discard (every later byte is skipped: the stream cannot be trusted again)
//
// Head parsing is incremental by line and consumes nothing until the empty line arrives, so the
// fields' offsets (relative to the head's first byte, the cumulation's readerIndex) survive the
// cumulation being compacted or reallocated between reads. Each byte of a head is searched for LF
// once (memchr) and validated once (the vectorised scans), however the head is split into reads.
//
// Invariants: lineStart_ <= scanned_ <= readable bytes while in Head/Trailers; offsets fit 32 bits
// (the limits are far below 4 GiB and are checked first).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/http/http_decoder_options.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <netbuf/codec/http/http_method.hpp>
#include <netbuf/codec/http/http_object.hpp>
#include <netbuf/codec/http/http_version.hpp>
#include <string_view>
#include <vector>

namespace netbuf::detail {

class HttpObjectDecoder {
 public:
  enum class Kind : std::uint8_t { Request, Response };
  enum class State : std::uint8_t {
    SkipEmptyLines,
    Head,
    FixedLength,
    ChunkSize,
    ChunkData,
    ChunkCrlf,
    Trailers,
    CloseDelimited,
    Upgraded,
    Discard,
  };

  HttpObjectDecoder(Kind kind, const HttpDecoderOptions& options);

  /// Consumes what it can of in (at stream offset base) and appends what it decoded, step by step
  /// until a step makes no progress. Throws HttpDecoderError (after switching to Discard and
  /// skipping in's bytes); what was decoded before it is in out.
  void decode(ByteBuf& in, std::vector<HttpObject>& out, std::uint64_t base);
  /// End of stream: completes a close-delimited body (LastHttpContent) or reports a message cut
  /// short (HttpDecoderError "premature-end-of-stream"), then resets.
  void endOfStream(std::vector<HttpObject>& out, std::uint64_t base);

  /// Responses: the method of the next request sent (a response to HEAD, or a 2xx to CONNECT, has
  /// no content). Without one, GET is assumed.
  void pushRequestMethod(HttpMethod::Id method) { methods_.push_back(method); }

  State state() const noexcept { return state_; }
  const HttpDecoderOptions& options() const noexcept { return options_; }
  HttpDecoderOptions& options() noexcept { return options_; }

 private:
  /// One state's work (decode() repeats it).
  void step(ByteBuf& in, std::vector<HttpObject>& out, std::uint64_t base);
  // Head parsing
  void resetMessage() noexcept;
  void readLines(ByteBuf& in, std::vector<HttpObject>& out, std::uint64_t base);
  void parseRequestLine(const char* p, std::size_t at, std::size_t end, std::uint64_t base);
  void parseStatusLine(const char* p, std::size_t at, std::size_t end, std::uint64_t base);
  HttpVersion parseVersion(const char* p, std::size_t at, std::size_t end, std::uint64_t base);
  void parseFieldLine(const char* p, std::size_t at, std::size_t end, HttpHeaders& into,
                      std::uint64_t base, std::size_t bad);
  void foldLine(const char* p, std::size_t at, std::size_t end, HttpHeaders& into,
                std::uint64_t base);
  void completeHead(ByteBuf& in, std::vector<HttpObject>& out, std::uint64_t base);
  void completeTrailers(ByteBuf& in, std::vector<HttpObject>& out);
  void finishMessage() noexcept;
  // Bodies
  void readChunkSize(ByteBuf& in, std::uint64_t base);
  void readChunkCrlf(ByteBuf& in, std::uint64_t base);

  [[noreturn]] void fail(ByteBuf* in, std::uint16_t status, std::string_view rule,
                         const std::string& what, std::uint64_t offset,
                         std::uint64_t value = UINT64_MAX, std::uint64_t limit = UINT64_MAX);

  HttpDecoderOptions options_;
  Kind kind_;
  State state_ = State::SkipEmptyLines;

  // ---- the head (or trailer section) being parsed; offsets relative to its first byte
  bool startLineDone_ = false;
  std::size_t lineStart_ = 0;       // first byte of the line being parsed
  std::size_t scanned_ = 0;         // bytes already searched for LF
  std::size_t lineBad_ = SIZE_MAX;  // first byte of the line no field line may hold (or none)
  std::size_t fieldsStart_ = 0;     // first byte after the start line
  HttpHeaders headers_;             // fields of the head (or the trailers) so far
  HttpHeaders::TextRef methodName_;
  HttpHeaders::TextRef uri_;
  HttpHeaders::TextRef reason_;
  HttpMethod::Id method_ = HttpMethod::Id::Get;
  HttpVersion version_;
  std::uint16_t status_ = 0;

  // ---- the body
  std::uint64_t remaining_ = 0;  // FixedLength / ChunkData: bytes still to come
  std::uint64_t contentSoFar_ = 0;
  bool closeAfter_ = false;    // discard what follows this message (framing was doubtful)
  bool upgradeAfter_ = false;  // 101 / CONNECT 2xx: raw bytes follow

  std::deque<HttpMethod::Id> methods_;  // responses: methods of the requests sent
};

}  // namespace netbuf::detail
