#pragma once
// HttpDecoderOptions: the limits and leniencies of the HTTP decoders. Every limit has a default
// and is checked while bytes arrive, so a hostile peer never makes a decoder buffer more than the
// limits allow (a request line without CRLF is cut off at maxInitialLineLength).
//
// Strict by default (RFC 9112); each leniency is off unless set:
//  - allowObsFold: accept obsolete line folding (a field line starting with SP/HTAB continues the
//    previous value; the fold is replaced by one SP, in a copy of the value);
//  - allowBareLf: accept LF without CR as a line terminator (request/status line, fields,
//    chunk-size lines, after chunk data);
//  - allowContentLengthWithTransferEncoding: a message with both is framed by Transfer-Encoding
//    alone, its Content-Length is removed and the connection closes after it (RFC 9112 §6.1's
//    "MAY"), instead of being refused with 400.

#include <cstddef>
#include <cstdint>

namespace netbuf {

struct HttpDecoderOptions {
  std::size_t maxInitialLineLength = 4096;  ///< request/status line, without CRLF (414)
  std::size_t maxHeaderSize = 8192;         ///< header (or trailer) section bytes (431)
  std::size_t maxHeaderCount = 128;         ///< fields in one section (431)
  std::uint64_t maxContentLength = std::uint64_t{1} << 30;  ///< declared or chunked total (413)
  std::uint64_t maxChunkSize = std::uint64_t{16} << 20;     ///< one chunk's declared size (413)
  std::size_t maxChunkLineLength = 1024;  ///< chunk-size line with its extensions (400)
  bool allowObsFold = false;
  bool allowBareLf = false;
  bool allowContentLengthWithTransferEncoding = false;

  HttpDecoderOptions& setMaxInitialLineLength(std::size_t n) noexcept {
    maxInitialLineLength = n;
    return *this;
  }
  HttpDecoderOptions& setMaxHeaderSize(std::size_t n) noexcept {
    maxHeaderSize = n;
    return *this;
  }
  HttpDecoderOptions& setMaxHeaderCount(std::size_t n) noexcept {
    maxHeaderCount = n;
    return *this;
  }
  HttpDecoderOptions& setMaxContentLength(std::uint64_t n) noexcept {
    maxContentLength = n;
    return *this;
  }
  HttpDecoderOptions& setMaxChunkSize(std::uint64_t n) noexcept {
    maxChunkSize = n;
    return *this;
  }
  HttpDecoderOptions& setMaxChunkLineLength(std::size_t n) noexcept {
    maxChunkLineLength = n;
    return *this;
  }
  HttpDecoderOptions& setAllowObsFold(bool on) noexcept {
    allowObsFold = on;
    return *this;
  }
  HttpDecoderOptions& setAllowBareLf(bool on) noexcept {
    allowBareLf = on;
    return *this;
  }
  HttpDecoderOptions& setAllowContentLengthWithTransferEncoding(bool on) noexcept {
    allowContentLengthWithTransferEncoding = on;
    return *this;
  }
};

}  // namespace netbuf
