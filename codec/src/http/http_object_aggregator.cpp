// HttpObjectAggregator (http_object_aggregator.hpp).

#include <fmt/format.h>

#include <algorithm>
#include <netbuf/codec/http/http_header_names.hpp>
#include <netbuf/codec/http/http_object_aggregator.hpp>

namespace netbuf {

namespace {

/// The declared Content-Length: the first element of the field (the decoder accepted the message,
/// so every element of a list like "5, 5" is the same number), or 0 when absent or unreadable.
std::uint64_t declaredLength(const HttpHeaders& h) {
  const auto v = h.get(HttpHeaderNames::kContentLength);
  if (!v) return 0;
  std::string_view first = v->substr(0, v->find(','));
  while (!first.empty() && (first.back() == ' ' || first.back() == '\t')) first.remove_suffix(1);
  std::uint64_t n = 0;
  for (const char c : first) {
    if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10) return 0;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

}  // namespace

void HttpObjectAggregator::failTooLarge(std::uint64_t size) {
  discarding_ = true;
  request_.reset();
  response_.reset();
  content_ = ByteBuf();
  throw HttpDecoderError(
      fmt::format("HTTP 413 content-too-large: content of {} bytes is over the limit of {}", size,
                  maxContentLength_),
      CodecError::kNone, 413, "content-too-large", size, maxContentLength_);
}

void HttpObjectAggregator::appendContent(ByteBuf& piece) {
  const std::size_t n = piece.readableBytes();
  if (n == 0) return;
  if (size_ + n > maxContentLength_) failTooLarge(size_ + n);
  if (!content_) {
    content_ = std::move(piece);  // the first piece: kept as is (zero copy)
  } else {
    if (!copied_) {
      const std::uint64_t want = std::max<std::uint64_t>(expected_, (size_ + n) * 2);
      ByteBuf merged = alloc_->buffer(
          static_cast<std::size_t>(std::min<std::uint64_t>(want, maxContentLength_)));
      merged.writeBytes(content_);
      content_ = std::move(merged);
      copied_ = true;
    }
    content_.writeBytes(piece);
  }
  size_ += n;
}

void HttpObjectAggregator::decode(HttpObject msg, std::vector<HttpObject>& out) {
  if (auto* req = std::get_if<HttpRequest>(&msg)) {
    discarding_ = false;
    size_ = 0;
    copied_ = false;
    content_ = ByteBuf();
    const HttpHeaders& h = req->headers();
    expected_ = declaredLength(h);
    if (expected_ > maxContentLength_) failTooLarge(expected_);
    if (const auto expect = h.get(HttpHeaderNames::kExpect);
        expect && req->protocolVersion() == HttpVersion::HTTP_1_1) {
      if (!http_util::equalsIgnoreCase(*expect, HttpHeaderValues::kContinue)) {
        discarding_ = true;
        throw HttpDecoderError(
            fmt::format("HTTP 417 unsupported-expectation: Expect \"{}\"", *expect),
            CodecError::kNone, 417, "unsupported-expectation");
      }
      if (onContinue_) onContinue_();
    }
    request_.emplace(std::move(*req));
    return;
  }
  if (auto* res = std::get_if<HttpResponse>(&msg)) {
    discarding_ = false;
    size_ = 0;
    copied_ = false;
    content_ = ByteBuf();
    // A response is limited by the content it carries, not by its Content-Length: the response to
    // a HEAD request and a 304 declare the length of content they do not carry. (The declared
    // length still sizes the copy, within the limit.)
    expected_ = std::min(declaredLength(res->headers()), maxContentLength_);
    response_.emplace(std::move(*res));
    return;
  }
  if (auto* part = std::get_if<HttpContent>(&msg)) {
    if (discarding_ || (!request_ && !response_)) return;
    appendContent(part->content());
    return;
  }
  if (auto* last = std::get_if<LastHttpContent>(&msg)) {
    if (discarding_ || (!request_ && !response_)) {
      discarding_ = false;
      return;
    }
    appendContent(last->content());
    if (request_) {
      out.emplace_back(std::in_place_type<FullHttpRequest>, std::move(*request_),
                       std::move(content_), last->takeTrailers());
      request_.reset();
    } else {
      out.emplace_back(std::in_place_type<FullHttpResponse>, std::move(*response_),
                       std::move(content_), last->takeTrailers());
      response_.reset();
    }
    content_ = ByteBuf();
    return;
  }
  out.push_back(std::move(msg));  // already full
}

}  // namespace netbuf
