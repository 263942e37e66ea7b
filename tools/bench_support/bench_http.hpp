#pragma once
// The HTTP parser workloads shared by `netbuf bench http` and microbench/http_bench.cpp: each
// request parsed into its head and header views by netbuf's HttpRequestDecoder and by Node's
// http-parser 2.9.4 (the baseline a C++ server would otherwise pick; Debian's libhttp-parser-dev),
// in the same program.
//
// What each side does per request, so the two are comparable:
//  - netbuf: HttpRequestDecoder::channelRead of a buffer holding the request (a retained
//    duplicate of one prepared buffer: no copy, as a socket read hands the decoder its buffer),
//    producing the HttpRequest (method, target, version, field views into a retained slice), the
//    content as slices and the LastHttpContent, with every strictness rule checked;
//  - http-parser: http_parser_execute over the same bytes with callbacks that record the target,
//    each field's name and value and each body piece as (pointer, length) views.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf::bench {

struct HttpWorkload {
  std::string name;
  std::string bytes;    ///< one request
  std::size_t objects;  ///< what netbuf's decoder emits for it (head, parts, last)
};

/// The two workloads: picohttpparser's 703-byte browser GET, and a chunked POST (a JSON upload
/// in four chunks with a trailer).
std::vector<HttpWorkload> httpWorkloads();

/// One side's parser, prepared once for a workload (decoder, input buffer, callbacks);
/// parseOnce() parses the request once and throws std::runtime_error if the result is not the
/// expected one.
class HttpParseRunner {
 public:
  virtual ~HttpParseRunner() = default;
  virtual void parseOnce() = 0;
};
std::unique_ptr<HttpParseRunner> netbufRunner(const HttpWorkload& w);
/// nullptr when netbuf was built without http-parser.
std::unique_ptr<HttpParseRunner> httpParserRunner(const HttpWorkload& w);

/// Parses w `iterations` times with netbuf's decoder; returns the nanoseconds taken. Throws
/// std::runtime_error if a parse does not produce the expected objects.
double timeNetbufParse(const HttpWorkload& w, std::size_t iterations);

/// The same with http-parser; 0 when netbuf was built without it (see hasHttpParser()).
double timeHttpParser(const HttpWorkload& w, std::size_t iterations);

/// Whether http-parser was found at build time.
bool hasHttpParser() noexcept;

}  // namespace netbuf::bench
