// The HTTP/1.1 decoding state machine (detail/http_object_decoder.hpp). Every rule it enforces is a
// call to fail() with the rule's name; tests/codec/http_request_decoder_test.cpp has one case per
// name.

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/codec/http/detail/http_object_decoder.hpp>
#include <netbuf/codec/http/detail/http_scan.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_header_names.hpp>

namespace netbuf {
namespace detail {

void throwHttpNeedsMerge() {
  throw IllegalStateError("HTTP decoders need the Merge cumulator (heads are parsed contiguously)");
}

namespace {

using http_scan::kTchar;

inline bool isOws(char c) noexcept { return c == ' ' || c == '\t'; }
inline bool isDigit(char c) noexcept { return c >= '0' && c <= '9'; }
inline int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string describeByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u == '\r') return "CR";
  if (u == '\n') return "LF";
  if (u >= 0x21 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("0x{:02x}", u);
}

/// Known transfer codings (RFC 9110 §18.7's registry that netbuf can pass through).
bool isKnownCoding(std::string_view c) noexcept {
  using http_util::equalsIgnoreCase;
  return equalsIgnoreCase(c, "chunked") || equalsIgnoreCase(c, "gzip") ||
         equalsIgnoreCase(c, "x-gzip") || equalsIgnoreCase(c, "deflate") ||
         equalsIgnoreCase(c, "compress") || equalsIgnoreCase(c, "x-compress");
}

std::string_view trimOws(std::string_view s) noexcept {
  while (!s.empty() && isOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && isOws(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

HttpObjectDecoder::HttpObjectDecoder(Kind kind, const HttpDecoderOptions& options)
    : options_(options), kind_(kind) {}

void HttpObjectDecoder::fail(ByteBuf* in, std::uint16_t status, std::string_view rule,
                             const std::string& what, std::uint64_t offset, std::uint64_t value,
                             std::uint64_t limit) {
  state_ = State::Discard;
  if (in != nullptr) in->skipBytes(in->readableBytes());
  headers_ = HttpHeaders();
  throw HttpDecoderError(fmt::format("HTTP {} {}: {} (at offset {})", status, rule, what, offset),
                         offset, status, rule, value, limit);
}

void HttpObjectDecoder::resetMessage() noexcept {
  startLineDone_ = false;
  lineStart_ = 0;
  lineBad_ = http_scan::npos;
  scanned_ = 0;
  fieldsStart_ = 0;
  remaining_ = 0;
  contentSoFar_ = 0;
  closeAfter_ = false;
  upgradeAfter_ = false;
  methodName_ = {};
  uri_ = {};
  reason_ = {};
}

void HttpObjectDecoder::finishMessage() noexcept {
  if (closeAfter_) {
    state_ = State::Discard;
  } else if (upgradeAfter_) {
    state_ = State::Upgraded;
  } else {
    state_ = State::SkipEmptyLines;
  }
}

void HttpObjectDecoder::decode(ByteBuf& in, std::vector<HttpObject>& out, std::uint64_t base) {
  // Steps until one makes no progress: a message of several parts (a chunked body, pipelined
  // requests) costs one call from the framework's loop, not one per part.
  const std::size_t start = in.readableBytes();
  for (;;) {
    const std::size_t before = in.readableBytes();
    const State state = state_;
    step(in, out, base + (start - before));
    if (in.readableBytes() == before && state_ == state) return;
  }
}

void HttpObjectDecoder::step(ByteBuf& in, std::vector<HttpObject>& out, std::uint64_t base) {
  const std::size_t n = in.readableBytes();
  if (n == 0) return;
  const char* p = reinterpret_cast<const char*>(in.readPtr());
  switch (state_) {
    case State::SkipEmptyLines: {
      // RFC 9112 §2.2: ignore empty lines before a request line (a client's stray CRLF after a
      // body). Only whole CRLF pairs (or LF, when bare LF is allowed).
      std::size_t i = 0;
      while (i < n) {
        if (p[i] == '\r') {
          if (i + 1 == n) break;  // wait for the byte after it
          if (p[i + 1] != '\n') fail(&in, 400, "bare-cr", "CR not followed by LF", base + i);
          i += 2;
        } else if (p[i] == '\n') {
          if (!options_.allowBareLf) fail(&in, 400, "bare-lf", "LF without CR", base + i);
          ++i;
        } else {
          resetMessage();
          state_ = State::Head;
          break;
        }
      }
      in.skipBytes(i);
      // Go straight on: a step that only changed state would look like no progress to the
      // framework, which then waits for more bytes.
      if (state_ == State::Head) readLines(in, out, base + i);
      return;
    }
    case State::Head:
    case State::Trailers:
      return readLines(in, out, base);
    case State::FixedLength: {
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, remaining_));
      remaining_ -= take;
      if (remaining_ == 0) {
        out.emplace_back(std::in_place_type<LastHttpContent>, in.readRetainedSliceBatched(take));
        finishMessage();
      } else {
        out.emplace_back(std::in_place_type<HttpContent>, in.readRetainedSliceBatched(take));
      }
      return;
    }
    case State::ChunkSize:
      return readChunkSize(in, base);
    case State::ChunkData: {
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, remaining_));
      remaining_ -= take;
      out.emplace_back(std::in_place_type<HttpContent>, in.readRetainedSliceBatched(take));
      if (remaining_ == 0) state_ = State::ChunkCrlf;
      return;
    }
    case State::ChunkCrlf:
      return readChunkCrlf(in, base);
    case State::CloseDelimited:
    case State::Upgraded:
      out.emplace_back(std::in_place_type<HttpContent>, in.readRetainedSliceBatched(n));
      return;
    case State::Discard:
      in.skipBytes(n);
      return;
  }
}

void HttpObjectDecoder::endOfStream(std::vector<HttpObject>& out, std::uint64_t base) {
  const State s = state_;
  state_ = State::SkipEmptyLines;
  headers_ = HttpHeaders();
  switch (s) {
    case State::CloseDelimited:
      out.emplace_back(std::in_place_type<LastHttpContent>);
      return;
    case State::Head:
    case State::FixedLength:
    case State::ChunkSize:
    case State::ChunkData:
    case State::ChunkCrlf:
    case State::Trailers:
      throw HttpDecoderError(
          fmt::format("HTTP 400 premature-end-of-stream: the connection closed inside a {} (at "
                      "offset {})",
                      s == State::Head ? "message head" : "message body", base),
          base, 400, "premature-end-of-stream");
    default:
      return;
  }
}

// ---------------------------------------------------------------- heads

void HttpObjectDecoder::readLines(ByteBuf& in, std::vector<HttpObject>& out, std::uint64_t base) {
  const char* p = reinterpret_cast<const char*>(in.readPtr());
  const std::size_t n = in.readableBytes();
  const bool trailers = state_ == State::Trailers;
  for (;;) {
    // One pass finds the line's end and its first byte that no field line may hold (the
    // vectorised scan resumes where it stopped while a line arrives in pieces).
    std::size_t bad = lineBad_ == http_scan::npos ? http_scan::npos : 0;
    const std::size_t found = scanned_ + http_scan::findLineEnd(p + scanned_, n - scanned_, bad);
    if (lineBad_ == http_scan::npos && bad != http_scan::npos) lineBad_ = scanned_ + bad;
    if (found == n) {
      scanned_ = n;
      // Limits on what is buffered: a line that has not ended yet is cut off as soon as it is
      // longer than its limit allows (+1 for a CR whose LF has not arrived).
      if (!startLineDone_) {
        if (n - lineStart_ > options_.maxInitialLineLength + 1) {
          if (kind_ == Kind::Request)
            fail(&in, 414, "request-line-too-long",
                 fmt::format("request line longer than {} bytes", options_.maxInitialLineLength),
                 base, n - lineStart_, options_.maxInitialLineLength);
          fail(&in, 400, "status-line-too-long",
               fmt::format("status line longer than {} bytes", options_.maxInitialLineLength), base,
               n - lineStart_, options_.maxInitialLineLength);
        }
      } else if (n - fieldsStart_ > options_.maxHeaderSize + 2) {
        fail(&in, 431, trailers ? "trailer-section-too-large" : "header-section-too-large",
             fmt::format("{} section larger than {} bytes", trailers ? "trailer" : "header",
                         options_.maxHeaderSize),
             base + fieldsStart_, n - fieldsStart_, options_.maxHeaderSize);
      }
      return;
    }
    const std::size_t le = found;
    scanned_ = le + 1;
    std::size_t end = le;
    const bool crlf = end > lineStart_ && p[end - 1] == '\r';
    if (crlf) --end;
    // The limits are checked before the line's syntax (its ending included), as they are for a
    // line still arriving (above): a line too long is refused for its length whether it arrived
    // whole or in pieces, so the error never depends on how the input was split into reads.
    if (!startLineDone_) {
      if (end - lineStart_ > options_.maxInitialLineLength) {
        if (kind_ == Kind::Request)
          fail(&in, 414, "request-line-too-long",
               fmt::format("request line of {} bytes, longer than {}", end - lineStart_,
                           options_.maxInitialLineLength),
               base, end - lineStart_, options_.maxInitialLineLength);
        fail(&in, 400, "status-line-too-long",
             fmt::format("status line of {} bytes, longer than {}", end - lineStart_,
                         options_.maxInitialLineLength),
             base, end - lineStart_, options_.maxInitialLineLength);
      }
    } else if (end != lineStart_ && le + 1 - fieldsStart_ > options_.maxHeaderSize) {
      fail(&in, 431, trailers ? "trailer-section-too-large" : "header-section-too-large",
           fmt::format("{} section larger than {} bytes", trailers ? "trailer" : "header",
                       options_.maxHeaderSize),
           base + fieldsStart_, le + 1 - fieldsStart_, options_.maxHeaderSize);
    }
    if (!crlf && !options_.allowBareLf) {
      fail(&in, 400, "bare-lf", "a line ends with LF without CR", base + le);
    }
    try {
      if (!startLineDone_) {
        if (kind_ == Kind::Request) {
          parseRequestLine(p, lineStart_, end, base);
        } else {
          parseStatusLine(p, lineStart_, end, base);
        }
        startLineDone_ = true;
        fieldsStart_ = le + 1;
      } else if (end == lineStart_) {
        scanned_ = le + 1;
        lineStart_ = le + 1;
        if (trailers) return completeTrailers(in, out);
        return completeHead(in, out, base);
      } else if (isOws(p[lineStart_])) {
        foldLine(p, lineStart_, end, headers_, base);
      } else {
        // The terminating CR is not a fault of the line.
        parseFieldLine(p, lineStart_, end, headers_, base,
                       lineBad_ < end ? lineBad_ : http_scan::npos);
      }
    } catch (const HttpDecoderError&) {
      if (state_ == State::Discard) in.skipBytes(in.readableBytes());
      throw;
    }
    lineStart_ = le + 1;
    lineBad_ = http_scan::npos;
  }
}

HttpVersion HttpObjectDecoder::parseVersion(const char* p, std::size_t at, std::size_t end,
                                            std::uint64_t base) {
  const std::size_t len = end - at;
  const char* v = p + at;
  if (len != 8 || std::memcmp(v, "HTTP/", 5) != 0 || !isDigit(v[5]) || v[6] != '.' ||
      !isDigit(v[7])) {
    fail(nullptr, 400, "malformed-version",
         fmt::format("malformed HTTP version \"{}\"",
                     std::string_view(v, std::min<std::size_t>(len, 16))),
         base + at);
  }
  if (v[5] != '1') {
    fail(nullptr, 505, "version-not-supported",
         fmt::format("HTTP version {}.{} is not supported", v[5], v[7]), base + at);
  }
  return v[7] == '0' ? HttpVersion::HTTP_1_0 : HttpVersion::HTTP_1_1;
}

void HttpObjectDecoder::parseRequestLine(const char* p, std::size_t at, std::size_t end,
                                         std::uint64_t base) {
  // method SP request-target SP HTTP-version, exactly one SP each (RFC 9112 §3).
  std::size_t i = at;
  while (i < end && kTchar[static_cast<unsigned char>(p[i])]) ++i;
  if (i == at || i == end || p[i] != ' ') {
    if (i == end || (i == at && p[i] == ' '))
      fail(nullptr, 400, "malformed-request-line",
           "request line is not method SP target SP version", base + at);
    fail(nullptr, 400, "invalid-method",
         fmt::format("invalid character {} in the method", describeByte(p[i])), base + i);
  }
  const HttpMethod m = HttpMethod::valueOf(std::string_view(p + at, i - at));
  method_ = m.id();
  if (m.isExtension())
    methodName_ = {static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(i - at)};
  const std::size_t ts = i + 1;
  const std::size_t te = ts + http_scan::findTargetEnd(p + ts, end - ts);
  if (te == ts || te == end) {
    fail(nullptr, 400, "malformed-request-line", "request line is not method SP target SP version",
         base + ts);
  }
  if (p[te] != ' ') {
    fail(nullptr, 400, "invalid-request-target",
         fmt::format("invalid character {} in the request target", describeByte(p[te])), base + te);
  }
  uri_ = {static_cast<std::uint32_t>(ts), static_cast<std::uint32_t>(te - ts)};
  version_ = parseVersion(p, te + 1, end, base);
}

void HttpObjectDecoder::parseStatusLine(const char* p, std::size_t at, std::size_t end,
                                        std::uint64_t base) {
  // HTTP-version SP 3DIGIT SP [reason-phrase]; a missing SP before an empty reason is accepted
  // (servers send "HTTP/1.1 200\r\n").
  if (end - at < 12 || p[at + 8] != ' ') {
    fail(nullptr, 400, "malformed-status-line", "status line is not version SP code SP reason",
         base + at);
  }
  version_ = parseVersion(p, at, at + 8, base);
  const char* c = p + at + 9;
  if (!isDigit(c[0]) || !isDigit(c[1]) || !isDigit(c[2]) || (end - at > 12 && c[3] != ' ')) {
    fail(nullptr, 400, "malformed-status-code", "status code is not three digits", base + at + 9);
  }
  status_ = static_cast<std::uint16_t>((c[0] - '0') * 100 + (c[1] - '0') * 10 + (c[2] - '0'));
  if (status_ < 100) {
    fail(nullptr, 400, "malformed-status-code", "status code below 100", base + at + 9);
  }
  const std::size_t rs = std::min(end, at + 13);
  const std::size_t bad = http_scan::findInvalidValueByte(p + rs, end - rs);
  if (bad != end - rs) {
    fail(nullptr, 400, p[rs + bad] == '\r' ? "bare-cr" : "control-character",
         fmt::format("invalid character {} in the reason phrase", describeByte(p[rs + bad])),
         base + rs + bad);
  }
  reason_ = {static_cast<std::uint32_t>(rs), static_cast<std::uint32_t>(end - rs)};
}

void HttpObjectDecoder::parseFieldLine(const char* p, std::size_t at, std::size_t end,
                                       HttpHeaders& into, std::uint64_t base, std::size_t bad) {
  // field-name ":" OWS field-value OWS (RFC 9112 §5)
  std::size_t i = at;
  while (i < end && kTchar[static_cast<unsigned char>(p[i])]) ++i;
  if (i == end) {
    fail(nullptr, 400, "missing-colon", "field line without a colon", base + at);
  }
  if (p[i] != ':') {
    if (isOws(p[i])) {
      fail(nullptr, 400, "whitespace-before-colon",
           "whitespace between the field name and the colon", base + i);
    }
    fail(nullptr, 400, p[i] == '\r' ? "bare-cr" : "invalid-field-name",
         fmt::format("invalid character {} in a field name", describeByte(p[i])), base + i);
  }
  if (i == at) fail(nullptr, 400, "empty-field-name", "field line with an empty name", base + at);
  const std::size_t nameLen = i - at;
  ++i;
  while (i < end && isOws(p[i])) ++i;
  const std::size_t vs = i;
  // bad: the line's first byte no field line may hold (found by readLines' scan), or npos. Any
  // before vs stopped the name scan above; one at or after it is in the value.
  if (bad != http_scan::npos) {
    const char c = p[bad];
    fail(nullptr, 400, c == '\r' ? "bare-cr" : "control-character",
         fmt::format("invalid character {} in a field value", describeByte(c)), base + bad);
  }
  std::size_t ve = end;
  while (ve > vs && isOws(p[ve - 1])) --ve;
  if (into.size() >= options_.maxHeaderCount) {
    fail(nullptr, 431, "too-many-fields",
         fmt::format("more than {} fields", options_.maxHeaderCount), base + at, into.size() + 1,
         options_.maxHeaderCount);
  }
  into.addRef({static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(nameLen)},
              {static_cast<std::uint32_t>(vs), static_cast<std::uint32_t>(ve - vs)});
}

void HttpObjectDecoder::foldLine(const char* p, std::size_t at, std::size_t end, HttpHeaders& into,
                                 std::uint64_t base) {
  // obs-fold (RFC 9112 §5.2): refused unless allowed; then the previous value continues, the fold
  // replaced by one SP (in a copy: the received bytes are not modified).
  if (!options_.allowObsFold || into.isEmpty()) {
    fail(nullptr, 400, "obs-fold", "obsolete line folding (a field line starts with whitespace)",
         base + at);
  }
  std::size_t vs = at;
  while (vs < end && isOws(p[vs])) ++vs;
  const std::size_t bad = http_scan::findInvalidValueByte(p + vs, end - vs);
  if (bad != end - vs) {
    fail(nullptr, 400, "control-character",
         fmt::format("invalid character {} in a field value", describeByte(p[vs + bad])),
         base + vs + bad);
  }
  std::size_t ve = end;
  while (ve > vs && isOws(p[ve - 1])) --ve;
  into.foldLastValue(p, std::string_view(p + vs, ve - vs));
}

void HttpObjectDecoder::completeHead(ByteBuf& in, std::vector<HttpObject>& out,
                                     std::uint64_t base) {
  const std::size_t headLength = lineStart_;
  headers_.setBacking(in.retainedSlice(in.readerIndex(), headLength));
  HttpHeaders& h = headers_;

  // Framing fields, read once the head is whole (a folded value is complete by then).
  bool hasContentLength = false;
  std::uint64_t contentLength = 0;
  bool hasTransferEncoding = false;
  bool chunkedFinal = false;
  bool sawChunked = false;
  bool unknownCoding = false;
  std::string_view unknownName;
  unsigned hosts = 0;
  for (std::size_t f = 0; f < h.size(); ++f) {
    const std::string_view name = h.name(f);
    if (name.size() == 14 && http_util::equalsIgnoreCase(name, HttpHeaderNames::kContentLength)) {
      // 1*DIGIT, possibly a list of identical values (RFC 9110 §8.6).
      // Every element is checked, the one after a trailing comma too ("5," is refused as ",5"
      // is).
      std::string_view v = h.value(f);
      for (bool more = true; more;) {
        const std::size_t comma = v.find(',');
        const std::string_view item = trimOws(v.substr(0, comma));
        more = comma != std::string_view::npos;
        if (more) v.remove_prefix(comma + 1);
        if (item.empty()) fail(&in, 400, "invalid-content-length", "empty Content-Length", base);
        std::uint64_t value = 0;
        for (const char c : item) {
          if (!isDigit(c)) {
            fail(&in, 400, "invalid-content-length",
                 fmt::format("Content-Length \"{}\" is not digits only", item), base);
          }
          const auto d = static_cast<std::uint64_t>(c - '0');
          if (value > (UINT64_MAX - d) / 10) {  // checked before multiplying
            fail(&in, 400, "invalid-content-length",
                 fmt::format("Content-Length \"{}\" overflows 64 bits", item), base);
          }
          value = value * 10 + d;
        }
        if (hasContentLength && value != contentLength) {
          fail(&in, 400, "differing-content-length",
               fmt::format("Content-Length values {} and {} differ", contentLength, value), base);
        }
        hasContentLength = true;
        contentLength = value;
      }
    } else if (name.size() == 17 &&
               http_util::equalsIgnoreCase(name, HttpHeaderNames::kTransferEncoding)) {
      hasTransferEncoding = true;
      std::string_view v = h.value(f);
      while (!v.empty()) {
        const std::size_t comma = v.find(',');
        std::string_view item = v.substr(0, comma);
        v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
        item = trimOws(item.substr(0, item.find(';')));  // transfer-parameters ignored
        if (item.empty()) continue;                      // empty list elements are allowed
        if (http_util::equalsIgnoreCase(item, "chunked")) {
          if (sawChunked) {
            fail(&in, 400, "chunked-twice", "the chunked coding is applied more than once", base);
          }
          sawChunked = true;
          chunkedFinal = true;
        } else {
          chunkedFinal = false;
          if (!isKnownCoding(item) && !unknownCoding) {
            unknownCoding = true;
            unknownName = item;
          }
        }
      }
    } else if (name.size() == 4 && http_util::equalsIgnoreCase(name, HttpHeaderNames::kHost)) {
      ++hosts;
    }
  }

  // A message framed by Transfer-Encoding, in both directions: with Content-Length too it is
  // refused, or (when allowed) framed by Transfer-Encoding alone, its Content-Length removed, and
  // the connection closed after it; in HTTP/1.0 the framing is faulty, so the connection closes
  // after it as well (RFC 9112 §6.1).
  const auto transferEncodingFraming = [&] {
    if (hasContentLength) {
      if (!options_.allowContentLengthWithTransferEncoding) {
        fail(&in, 400, "content-length-with-transfer-encoding",
             "Content-Length together with Transfer-Encoding", base);
      }
      h.remove(HttpHeaderNames::kContentLength);
      closeAfter_ = true;
    }
    if (version_ == HttpVersion::HTTP_1_0) closeAfter_ = true;
  };

  enum class Body { None, Fixed, Chunked, UntilClose } body = Body::None;
  if (kind_ == Kind::Request) {
    if (hosts > 1) fail(&in, 400, "repeated-host", "more than one Host field", base);
    if (hosts == 0 && version_ == HttpVersion::HTTP_1_1) {
      fail(&in, 400, "missing-host", "an HTTP/1.1 request without a Host field", base);
    }
    if (hasTransferEncoding) {
      if (unknownCoding) {
        fail(&in, 501, "unknown-transfer-coding",
             fmt::format("unknown transfer coding \"{}\"", unknownName), base);
      }
      if (!chunkedFinal) {
        fail(&in, 400, "final-coding-not-chunked",
             "the final transfer coding of a request is not chunked", base);
      }
      transferEncodingFraming();
      body = Body::Chunked;
    } else if (hasContentLength) {
      body = contentLength == 0 ? Body::None : Body::Fixed;
    }
  } else {
    HttpMethod::Id requestMethod = HttpMethod::Id::Get;
    if (!methods_.empty()) {
      requestMethod = methods_.front();
      if (status_ >= 200 || status_ == 101) methods_.pop_front();
    }
    const bool connectTunnel = requestMethod == HttpMethod::Id::Connect && status_ / 100 == 2;
    upgradeAfter_ = status_ == 101 || connectTunnel;
    const bool noContent = status_ < 200 || status_ == 204 || status_ == 304 ||
                           requestMethod == HttpMethod::Id::Head || connectTunnel;
    if (noContent) {
      body = Body::None;
    } else if (hasTransferEncoding) {
      transferEncodingFraming();
      body = chunkedFinal ? Body::Chunked : Body::UntilClose;
    } else if (hasContentLength) {
      body = contentLength == 0 ? Body::None : Body::Fixed;
    } else {
      body = Body::UntilClose;
    }
  }
  if (body == Body::Fixed && contentLength > options_.maxContentLength) {
    fail(&in, 413, "content-too-large",
         fmt::format("Content-Length {} is over the limit of {}", contentLength,
                     options_.maxContentLength),
         base, contentLength, options_.maxContentLength);
  }
  if (closeAfter_) h.add(HttpHeaderNames::kConnection, "close");

  if (kind_ == Kind::Request) {
    out.emplace_back(std::in_place_type<HttpRequest>, method_, methodName_, uri_, version_,
                     std::move(headers_));
  } else {
    out.emplace_back(std::in_place_type<HttpResponse>, status_, reason_, version_,
                     std::move(headers_));
  }
  headers_ = HttpHeaders();
  in.skipBytes(headLength);
  switch (body) {
    case Body::None:
      out.emplace_back(std::in_place_type<LastHttpContent>);
      finishMessage();
      break;
    case Body::Fixed:
      remaining_ = contentLength;
      state_ = State::FixedLength;
      break;
    case Body::Chunked:
      scanned_ = 0;
      state_ = State::ChunkSize;
      break;
    case Body::UntilClose:
      state_ = State::CloseDelimited;
      break;
  }
}

void HttpObjectDecoder::completeTrailers(ByteBuf& in, std::vector<HttpObject>& out) {
  const std::size_t length = lineStart_;
  if (!headers_.isEmpty()) {
    headers_.setBacking(in.retainedSlice(in.readerIndex(), length));
    out.emplace_back(std::in_place_type<LastHttpContent>, ByteBuf(), std::move(headers_));
  } else {
    out.emplace_back(std::in_place_type<LastHttpContent>);
  }
  headers_ = HttpHeaders();
  in.skipBytes(length);
  finishMessage();
}

// ---------------------------------------------------------------- chunked bodies

void HttpObjectDecoder::readChunkSize(ByteBuf& in, std::uint64_t base) {
  // chunk-size [ chunk-ext ] CRLF (RFC 9112 §7.1)
  const char* p = reinterpret_cast<const char*>(in.readPtr());
  const std::size_t n = in.readableBytes();
  const void* lf = std::memchr(p + scanned_, '\n', n - scanned_);
  if (lf == nullptr) {
    scanned_ = n;
    if (n > options_.maxChunkLineLength + 1) {
      fail(&in, 400, "chunk-line-too-long",
           fmt::format("chunk-size line longer than {} bytes", options_.maxChunkLineLength), base,
           n, options_.maxChunkLineLength);
    }
    return;
  }
  const std::size_t le = static_cast<std::size_t>(static_cast<const char*>(lf) - p);
  std::size_t end = le;
  const bool crlf = end > 0 && p[end - 1] == '\r';
  if (crlf) --end;
  // The length before the ending, as in readLines (the error must not depend on the reads).
  if (end > options_.maxChunkLineLength) {
    fail(&in, 400, "chunk-line-too-long",
         fmt::format("chunk-size line of {} bytes, longer than {}", end,
                     options_.maxChunkLineLength),
         base, end, options_.maxChunkLineLength);
  }
  if (!crlf && !options_.allowBareLf) {
    fail(&in, 400, "bare-lf", "a chunk-size line ends with LF without CR", base + le);
  }
  std::size_t i = 0;
  std::uint64_t size = 0;
  for (; i < end; ++i) {
    const int d = hexValue(p[i]);
    if (d < 0) break;
    // 16 hex digits fill 64 bits: more cannot be represented (an int accumulator would wrap).
    if (i == 16) {
      fail(&in, 400, "chunk-size-too-long", "chunk size of more than 16 hex digits", base);
    }
    size = (size << 4) | static_cast<std::uint64_t>(d);
  }
  if (i == 0) {
    fail(&in, 400, "invalid-chunk-size",
         fmt::format("chunk size starts with {}, not a hex digit",
                     i < end ? describeByte(p[i]) : std::string("the end of the line")),
         base);
  }
  // chunk-ext: BWS ";" ... ; anything else after the digits is malformed.
  std::size_t j = i;
  while (j < end && isOws(p[j])) ++j;
  if (j < end && p[j] != ';') {
    fail(&in, 400, "invalid-chunk-size",
         fmt::format("invalid character {} after the chunk size", describeByte(p[j])), base + j);
  }
  const std::size_t bad = http_scan::findInvalidValueByte(p + j, end - j);
  if (bad != end - j) {
    fail(&in, 400, p[j + bad] == '\r' ? "bare-cr" : "control-character",
         fmt::format("invalid character {} in a chunk extension", describeByte(p[j + bad])),
         base + j + bad);
  }
  if (size > options_.maxChunkSize) {
    fail(&in, 413, "chunk-too-large",
         fmt::format("chunk of {} bytes is over the limit of {}", size, options_.maxChunkSize),
         base, size, options_.maxChunkSize);
  }
  if (size > options_.maxContentLength - std::min(contentSoFar_, options_.maxContentLength)) {
    fail(&in, 413, "content-too-large",
         fmt::format("chunked content of more than {} bytes", options_.maxContentLength), base,
         contentSoFar_ + size, options_.maxContentLength);
  }
  contentSoFar_ += size;
  in.skipBytes(le + 1);
  scanned_ = 0;
  if (size == 0) {
    // The trailer section: parsed as header fields, then the empty line.
    startLineDone_ = true;
    lineStart_ = 0;
    lineBad_ = http_scan::npos;
    fieldsStart_ = 0;
    headers_ = HttpHeaders();
    state_ = State::Trailers;
  } else {
    remaining_ = size;
    state_ = State::ChunkData;
  }
}

void HttpObjectDecoder::readChunkCrlf(ByteBuf& in, std::uint64_t base) {
  const char* p = reinterpret_cast<const char*>(in.readPtr());
  const std::size_t n = in.readableBytes();
  if (p[0] == '\n' && options_.allowBareLf) {
    in.skipBytes(1);
  } else if (p[0] != '\r') {
    fail(&in, 400, "chunk-without-crlf",
         fmt::format("chunk data followed by {} instead of CRLF", describeByte(p[0])), base);
  } else if (n < 2) {
    return;
  } else if (p[1] != '\n') {
    fail(&in, 400, "chunk-without-crlf",
         fmt::format("chunk data followed by CR {} instead of CRLF", describeByte(p[1])), base);
  } else {
    in.skipBytes(2);
  }
  scanned_ = 0;
  state_ = State::ChunkSize;
}

}  // namespace detail
}  // namespace netbuf
