#pragma once
// The wire format shared by kv_server and kv_client: each message is one MessagePack value in a
// frame with a 4-byte big-endian length prefix.
//
//   request   ["get", key]  ["set", key, value]  ["del", key]      (key: str, value: bin or str)
//   response  [true, value]  [true, nil]  [false, "error text"]
//
// Both ends build the same pipeline: the length-field frame decoder and prepender, then the
// per-frame MessagePack decoder (each frame is exactly one value) and the MessagePack encoder.
//
//   socket <-> frames <-> prepend <-> msgpack <-> encode <-> (the application's handler)
//              decode     encode      decode      encode
#include <netbuf/netbuf.hpp>

namespace kv {

/// Largest frame accepted (a longer one is a TooLongFrameError and closes the connection).
inline constexpr std::size_t kMaxFrame = 1 << 20;

inline void addCodecs(netbuf::ChannelPipeline& p) {
  using namespace netbuf;
  p.addLast("frames", std::make_unique<DecoderChannelHandler<LengthFieldBasedFrameDecoder>>(
                          kMaxFrame, 0, 4, 0, 4))
      .addLast("prepend", std::make_unique<EncoderChannelHandler<LengthFieldPrepender>>(4))
      .addLast("msgpack", std::make_unique<DecoderChannelHandler<MessagePackFrameDecoder>>())
      .addLast("encode", std::make_unique<EncoderChannelHandler<MessagePackEncoder>>());
}

}  // namespace kv
