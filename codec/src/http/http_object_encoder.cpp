// HTTP/1.1 encoding (detail/http_object_encoder.hpp).

#include <fmt/format.h>

#include <cstring>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/http/detail/http_object_encoder.hpp>
#include <netbuf/codec/http/detail/http_scan.hpp>
#include <netbuf/codec/http/http_header_names.hpp>

namespace netbuf::detail {

namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr std::string_view kContentLengthPrefix = "content-length: ";

/// Decimal digits of v into the end of buf; returns the first digit.
char* formatDecimal(std::uint64_t v, char* end) {
  do {
    *--end = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  return end;
}

struct Writer {
  char* p;
  void put(std::string_view s) {
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  void put(char c) { *p++ = c; }
};

/// The framing a head asks for.
bool isChunked(const HttpHeaders& h) {
  return h.containsValue(HttpHeaderNames::kTransferEncoding, "chunked");
}
bool hasFraming(const HttpHeaders& h) {
  return h.contains(HttpHeaderNames::kContentLength) ||
         h.contains(HttpHeaderNames::kTransferEncoding);
}

/// Writes a start line + fields + extraFields (preformatted lines) (+ "content-length: N" when
/// addLength) + CRLF into dst, with room for `extra` more bytes.
void writeHead(ByteBuf& dst, std::string_view l1, std::string_view l2, std::string_view l3,
               const HttpHeaders& h, bool addLength, std::uint64_t length, std::size_t extra,
               std::string_view extraFields = {}) {
  char digits[24];
  char* const de = digits + sizeof digits;
  char* db = de;
  if (addLength) db = formatDecimal(length, de);
  const std::string_view lengthDigits(db, static_cast<std::size_t>(de - db));
  const std::size_t size =
      l1.size() + 1 + l2.size() + 1 + l3.size() + 2 + h.encodedSize() + extraFields.size() +
      (addLength ? kContentLengthPrefix.size() + lengthDigits.size() + 2 : 0) + 2;
  dst.ensureWritable(size + extra);
  Writer w{reinterpret_cast<char*>(dst.writePtrUnchecked())};
  w.put(l1);
  w.put(' ');
  w.put(l2);
  w.put(' ');
  w.put(l3);
  w.put(kCrlf);
  w.p = h.encodeTo(w.p);
  w.put(extraFields);
  if (addLength) {
    w.put(kContentLengthPrefix);
    w.put(lengthDigits);
    w.put(kCrlf);
  }
  w.put(kCrlf);
  dst.advanceWriterUnchecked(size);
}

void writeResponseHead(ByteBuf& dst, const HttpResponse& r, bool addLength, std::uint64_t length,
                       std::size_t extra, std::string_view extraFields = {}) {
  const HttpResponseStatus s = r.status();
  char code[3] = {static_cast<char>('0' + s.code() / 100 % 10),
                  static_cast<char>('0' + s.code() / 10 % 10),
                  static_cast<char>('0' + s.code() % 10)};
  writeHead(dst, r.protocolVersion().text(), std::string_view(code, 3), s.reasonPhrase(),
            r.headers(), addLength, length, extra, extraFields);
}

void writeRequestHead(ByteBuf& dst, const HttpRequest& r, bool addLength, std::uint64_t length,
                      std::size_t extra) {
  writeHead(dst, r.method().name(), r.uri(), r.protocolVersion().text(), r.headers(), addLength,
            length, extra);
}

/// "SIZE-IN-HEX\r\n"
void writeChunkHeader(ByteBuf& dst, std::size_t size) {
  char hex[20];
  const int n = fmt::format_to_n(hex, sizeof hex, "{:x}\r\n", size).size;
  dst.writeBytes(hex, static_cast<std::size_t>(n));
}

void writeLastChunk(ByteBuf& dst, const HttpHeaders* trailers) {
  const std::size_t tsize = trailers != nullptr ? trailers->encodedSize() : 0;
  dst.ensureWritable(3 + tsize + 2);
  char* p = reinterpret_cast<char*>(dst.writePtrUnchecked());
  std::memcpy(p, "0\r\n", 3);
  p += 3;
  if (trailers != nullptr) p = trailers->encodeTo(p);
  std::memcpy(p, "\r\n", 2);
  dst.advanceWriterUnchecked(3 + tsize + 2);
}

[[noreturn]] void misuse(const char* what) {
  throw EncoderError(fmt::format("HTTP encoder: {}", what), CodecError::kNone);
}

/// Refuses a start line that would not read back as the one line it is meant to be: a target or
/// reason phrase holding CR LF would let whoever chose it add fields or whole messages (request or
/// response splitting), as a field value could if HttpHeaders did not refuse it.
void checkStartLine(const HttpRequest& r) {
  if (!http_util::isToken(r.method().name())) misuse("a request method that is not a token");
  const std::string_view uri = r.uri();
  if (uri.empty() || http_scan::findTargetEnd(uri.data(), uri.size()) != uri.size())
    misuse("a request target that is empty or holds SP, DEL or a control character");
}
void checkStartLine(const HttpResponse& r) {
  const HttpResponseStatus s = r.status();
  if (s.code() < 100 || s.code() > 999) misuse("a status code that is not three digits");
  if (!http_util::isValidFieldValue(s.reasonPhrase()))
    misuse("a reason phrase that holds a control character (CR, LF...)");
}

}  // namespace

bool HttpObjectEncoder::nextIsHead(std::uint16_t status) {
  if (methods_.empty()) return false;
  const bool head = methods_.front() == HttpMethod::Id::Head;
  if (status >= 200 || status == 101) methods_.pop_front();  // a 1xx leaves it for the final one
  return head;
}

void HttpObjectEncoder::encodeContent(const ByteBuf& content, bool last,
                                      const HttpHeaders* trailers, ByteBuf& head,
                                      std::vector<AnyByteBuf>& out, ByteBufAllocator& alloc,
                                      ByteBuf&& owned) {
  const std::size_t size = content.readableBytes();
  if (!head) head = alloc.buffer(size <= kCopyThreshold ? size + 32 : 32);
  switch (framing_) {
    case Framing::Suppressed:
    case Framing::None:
      break;
    case Framing::Raw:
      if (size <= kCopyThreshold) {
        head.writeBytes(content);
      } else {
        // A part after its head has nothing in front of it: no empty buffer goes out.
        if (head.isReadable()) out.emplace_back(std::move(head));
        out.emplace_back(std::move(owned));
        head = ByteBuf();
      }
      break;
    case Framing::Chunked:
      if (size > 0) {
        writeChunkHeader(head, size);
        if (size <= kCopyThreshold) {
          head.writeBytes(content);
        } else {
          out.emplace_back(std::move(head));
          out.emplace_back(std::move(owned));
          head = alloc.buffer(64);
        }
        head.writeBytes(kCrlf);
      }
      if (last) writeLastChunk(head, trailers);
      break;
  }
  if (head && head.isReadable()) out.emplace_back(std::move(head));
  if (last) framing_ = Framing::None;
}

void HttpObjectEncoder::encode(bool responses, HttpObject&& msg, std::vector<AnyByteBuf>& out,
                               ByteBufAllocator& alloc) {
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        constexpr bool kRequestType =
            std::is_same_v<T, HttpRequest> || std::is_same_v<T, FullHttpRequest>;
        constexpr bool kResponseType =
            std::is_same_v<T, HttpResponse> || std::is_same_v<T, FullHttpResponse>;
        if constexpr (kRequestType || kResponseType) {
          if (responses != kResponseType) {
            misuse(responses ? "a request given to a response encoder"
                             : "a response given to a request encoder");
          }
          if (framing_ != Framing::None) misuse("a new head before the last content");
          checkStartLine(m);
          const HttpHeaders& h = m.headers();
          const bool chunked = isChunked(h);
          bool mayHaveContent = true;
          if constexpr (kResponseType) {
            const bool head = nextIsHead(m.status().code());
            mayHaveContent = m.status().mayHaveContent();
            framing_ = (head || !mayHaveContent) ? Framing::Suppressed
                       : chunked                 ? Framing::Chunked
                                                 : Framing::Raw;
          } else {
            framing_ = chunked ? Framing::Chunked : Framing::Raw;
          }
          ByteBuf buf;
          if constexpr (std::is_same_v<T, FullHttpRequest> || std::is_same_v<T, FullHttpResponse>) {
            const std::size_t size = m.content().readableBytes();
            bool addLength = false;
            if (!hasFraming(h)) {
              if constexpr (kResponseType) {
                addLength = mayHaveContent;
              } else {
                const auto id = m.method().id();
                addLength = size > 0 || id == HttpMethod::Id::Post || id == HttpMethod::Id::Put ||
                            id == HttpMethod::Id::Patch;
              }
            }
            buf = alloc.buffer(256 + (size <= kCopyThreshold ? size : 0));
            if constexpr (kResponseType) {
              writeResponseHead(buf, m, addLength, size, 0);
            } else {
              writeRequestHead(buf, m, addLength, size, 0);
            }
            ByteBuf content = std::move(m.content());
            const ByteBuf& ref = content;
            encodeContent(ref, true, m.trailers(), buf, out, alloc, std::move(content));
          } else {
            buf = alloc.buffer(256);
            if constexpr (kResponseType) {
              writeResponseHead(buf, m, false, 0, 0);
            } else {
              writeRequestHead(buf, m, false, 0, 0);
            }
            out.emplace_back(std::move(buf));
          }
        } else {
          if (framing_ == Framing::None) misuse("content outside a message");
          constexpr bool kLast = std::is_same_v<T, LastHttpContent>;
          const HttpHeaders* trailers = nullptr;
          if constexpr (kLast) trailers = m.trailers();
          ByteBuf content = std::move(m.content());
          const ByteBuf& ref = content;
          ByteBuf head;
          encodeContent(ref, kLast, trailers, head, out, alloc, std::move(content));
        }
      },
      msg);
}

void HttpObjectEncoder::appendResponse(ByteBuf& dst, const FullHttpResponse& r, bool headRequest,
                                       std::string_view extraFields) {
  checkStartLine(r);
  const HttpHeaders& h = r.headers();
  const std::size_t size = r.content().readableBytes();
  const bool mayHaveContent = r.status().mayHaveContent();
  const bool addLength = mayHaveContent && !hasFraming(h);
  const bool writeBody = mayHaveContent && !headRequest;
  const bool chunked = writeBody && isChunked(h);
  writeResponseHead(dst, r, addLength, size, writeBody ? size : 0, extraFields);
  if (!writeBody) return;
  if (chunked) {
    if (size > 0) {
      writeChunkHeader(dst, size);
      dst.writeBytes(r.content());
      dst.writeBytes(kCrlf);
    }
    writeLastChunk(dst, r.trailers());
  } else {
    dst.writeBytes(r.content());
  }
}

}  // namespace netbuf::detail
