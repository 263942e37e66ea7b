#pragma once
// The HTTP decoders' transcript, shared by the HTTP codec tests and the HTTP fuzz targets: what a
// decoder emitted, as one string per item, in a form that does not depend on how the input was
// split into reads, so that two runs compare with ==.
//
//   a request head:   "GET /x HTTP/1.1 | host: a | x: b"      (method target version, then fields)
//   a response head:  "HTTP/1.1 200 OK | content-length: 2"  (version code reason, then fields)
//   a message's end:  "body: <bytes> | trailer: name: value" (every HttpContent and the
//                                                            LastHttpContent of the message joined:
//                                                            how the content was cut into parts
//                                                            depends on the reads)
//   content cut short: "partial: <bytes>"                    (content not yet ended by a
//                                                            LastHttpContent, before an error or
//                                                            at the end of the transcript)
//   a full message:   "full " + its head + " || body: <bytes>"
//   an error:         "!413 content-too-large @12 limit=100" (HttpDecoderError: status, rule,
//                                                            stream offset, limit when it has one)
//                     "!other:<what>" for any other exception
//
// An error's value() is left out: for a line cut off before its end, it is how much of the line had
// arrived, which depends on the reads (the tests check it on whole inputs). No doctest here: the
// fuzz targets include this header too.

#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/http/http_decoder_error.hpp>
#include <netbuf/codec/http/http_object.hpp>

#include "support/decoder_transcript.hpp"  // toString(transcript)

#include <fmt/format.h>

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace netbuf::test {

using HttpTranscript = std::vector<std::string>;

inline std::string httpFields(const HttpHeaders& h, std::string_view prefix = "") {
  std::string s;
  h.forEach([&](std::string_view n, std::string_view v) {
    s += fmt::format(" | {}{}: {}", prefix, n, v);
  });
  return s;
}

inline std::string httpHead(const HttpRequest& r) {
  return fmt::format("{} {} {}", r.method().name(), r.uri(), r.protocolVersion().text()) +
         httpFields(r.headers());
}

inline std::string httpHead(const HttpResponse& r) {
  return fmt::format("{} {} {}", r.protocolVersion().text(), r.status().code(),
                     r.status().reasonPhrase()) +
         httpFields(r.headers());
}

/// The transcript line of an error thrown by an HTTP decoder or the aggregator.
inline std::string httpError(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const HttpDecoderError& x) {
    std::string s = fmt::format("!{} {} @", x.status(), x.rule());
    s += x.offset() == CodecError::kNone ? std::string("-") : std::to_string(x.offset());
    if (x.limit() != CodecError::kNone) s += fmt::format(" limit={}", x.limit());
    return s;
  } catch (const std::exception& x) {
    return fmt::format("!other:{}", x.what());
  } catch (...) {
    return "!other:not a std::exception";
  }
}

/// Builds a transcript message by message (see the header comment).
class HttpTranscriber {
 public:
  void add(const HttpObject& m) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, HttpRequest> || std::is_same_v<T, HttpResponse>) {
            flushPartial();
            t_.push_back(httpHead(x));
          } else if constexpr (std::is_same_v<T, HttpContent>) {
            pending_ += x.content().readableStringView();
            partial_ = true;
          } else if constexpr (std::is_same_v<T, LastHttpContent>) {
            pending_ += x.content().readableStringView();
            std::string line = "body: " + pending_;
            if (x.trailers() != nullptr) line += httpFields(*x.trailers(), "trailer: ");
            t_.push_back(std::move(line));
            pending_.clear();
            partial_ = false;
          } else {
            flushPartial();
            std::string line = "full " + httpHead(x);
            line += " || body: ";
            line += x.content().readableStringView();
            if (x.trailers() != nullptr) line += httpFields(*x.trailers(), "trailer: ");
            t_.push_back(std::move(line));
          }
        },
        m);
  }
  void error(const std::exception_ptr& e) {
    flushPartial();
    t_.push_back(httpError(e));
  }
  HttpTranscript take() {
    flushPartial();
    return std::move(t_);
  }

 private:
  void flushPartial() {
    if (!partial_) return;
    t_.push_back("partial: " + pending_);
    pending_.clear();
    partial_ = false;
  }

  HttpTranscript t_;
  std::string pending_;
  bool partial_ = false;
};

/// The transcript of messages and errors as a DecoderRunner recorded them (errors in place).
template <class Runner>
HttpTranscript httpTranscriptOf(Runner& run) {
  HttpTranscriber tr;
  std::size_t e = 0;
  const auto& msgs = run.messages();
  for (std::size_t i = 0; i <= msgs.size(); ++i) {
    while (e < run.errors().size() && run.errors()[e].messagesBefore == i)
      tr.error(run.errors()[e++].error);
    if (i < msgs.size()) tr.add(msgs[i]);
  }
  return tr.take();
}

}  // namespace netbuf::test
