// libFuzzer target for HttpResponseDecoder (http_response_decoder.hpp): see http_fuzz.hpp for the
// invariants, checked with the methods of up to four requests pushed first (so that HEAD, CONNECT
// and the 1xx pairing are reached).
//
// Input layout: [options] [cut] [read-size seed] [methods: 2 bits each, GET HEAD CONNECT POST]
//               [stream...]
#include <netbuf/codec/http/http_response_decoder.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const netbuf::HttpDecoderOptions o = netbuf::fuzz::httpOptions(data[0]);
  const std::uint8_t methods = data[3];
  const std::string_view stream(reinterpret_cast<const char*>(data) + 4, size - 4);
  netbuf::fuzz::checkHttpStream(
      [&o, methods] {
        static constexpr netbuf::HttpMethod kMethods[] = {
            netbuf::HttpMethod::GET, netbuf::HttpMethod::HEAD, netbuf::HttpMethod::CONNECT,
            netbuf::HttpMethod::POST};
        netbuf::HttpResponseDecoder d(o);
        for (int i = 0; i < 4; ++i) d.pushRequestMethod(kMethods[(methods >> (2 * i)) & 3]);
        return d;
      },
      o, stream, data[1], data[2]);
  return 0;
}
