// libFuzzer target for HttpRequestDecoder (http_request_decoder.hpp): see http_fuzz.hpp for the
// invariants. The same bytes decoded whole, cut at one fuzzer-chosen point and in small reads give
// the same requests and the same error (status, rule, offset); the decoder never buffers beyond
// its limits; after an error it only discards.
//
// Input layout: [options] [cut] [read-size seed] [stream...] (http_fuzz.hpp: httpOptions).
#include <netbuf/codec/http/http_request_decoder.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const netbuf::HttpDecoderOptions o = netbuf::fuzz::httpOptions(data[0]);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 3, size - 3);
  netbuf::fuzz::checkHttpStream([&o] { return netbuf::HttpRequestDecoder(o); }, o, stream, data[1],
                                data[2]);
  return 0;
}
