#pragma once
// HttpDecoderError: a message the HTTP decoders refuse. Says which rule of RFC 9112 (or which
// limit) the input broke, at which stream offset, and the status a server answers with before it
// closes the connection:
//
//   400 Bad Request            malformed syntax, framing that could be read two ways (smuggling)
//   413 Content Too Large      Content-Length, chunk size or total content over the limit
//   414 URI Too Long           request line over the limit
//   431 Header Fields Too Large header section or field count over the limit
//   501 Not Implemented        a transfer coding netbuf does not know
//   505 Version Not Supported  an HTTP major version other than 1
//
// value()/limit() carry the offending quantity and the limit for the limit errors. After one, the
// decoder discards everything that follows (the stream cannot be re-synchronised safely).

#include <cstdint>
#include <netbuf/codec/codec_errors.hpp>
#include <string>
#include <string_view>

namespace netbuf {

class HttpDecoderError : public DecoderError {
 public:
  HttpDecoderError(const std::string& what, std::uint64_t offset, std::uint16_t status,
                   std::string_view rule, std::uint64_t value = kNone, std::uint64_t limit = kNone)
      : DecoderError(what, offset, value, limit), rule_(rule), status_(status) {}

  /// The status code a server answers with (400, 413, 414, 431, 501, 505).
  std::uint16_t status() const noexcept { return status_; }
  /// A short stable name of the rule broken, e.g. "content-length-with-transfer-encoding"
  /// (the message says it in words).
  std::string_view rule() const noexcept { return rule_; }
  /// Whether a limit was exceeded (413, 414, 431).
  bool isTooLong() const noexcept { return status_ == 413 || status_ == 414 || status_ == 431; }

 private:
  std::string_view rule_;  // a string literal
  std::uint16_t status_;
};

}  // namespace netbuf
