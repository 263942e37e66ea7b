#pragma once
// RespWriter: writes RESP values into a ByteBuf, in the encoding of the connection's protocol.
//
//   ByteBuf out = alloc.buffer(256);
//   RespWriter w(out, RespProtocol::Resp3);
//   w.mapHeader(1);            // %1 (RESP2: *2)
//   w.bulkString("field");
//   w.doubleValue(0.1);        // ,0.10000000000000001 (RESP2: $19 0.10000000000000001)
//
// One server-side reply written through the RESP3 calls comes out as redis-server 7.0 writes the
// same reply to a RESP2 or a RESP3 client (addReplyMap/Set/Double/Null/Bool... of networking.c):
//
//   call              RESP3                         RESP2
//   null()            _\r\n                         $-1\r\n
//   nullArray()       _\r\n                         *-1\r\n
//   boolean(b)        #t\r\n / #f\r\n               :1\r\n / :0\r\n
//   doubleValue(d)    ,<d>\r\n                      $<len>\r\n<d>\r\n
//   bigNumber(s)      (<s>\r\n                      $<len>\r\n<s>\r\n
//   mapHeader(n)      %n\r\n                        *<2n>\r\n
//   setHeader(n)      ~n\r\n                        *n\r\n
//   pushHeader(n)     >n\r\n                        *n\r\n
//   attributeHeader(n)|n\r\n                        (nothing: RESP2 has no attributes; the
//                                                    caller must skip the n pairs too)
//   verbatimString    =<len>\r\ntxt:<s>\r\n         $<len>\r\n<s>\r\n
//   bulkError(s)      !<len>\r\n<s>\r\n             -<s>\r\n (s must not contain \r or \n)
//
// Doubles: DoubleFormat::Redis70 (the default) is what redis-server 7.0 sends, printf("%.17g")
// with inf and -inf spelled so ("0.10000000000000001", "1000", "1.5000000000000001e+300");
// DoubleFormat::Shortest is the shortest text that reads back to the same double, as Redis 7.2
// and later send ("0.1", "1000", "1.5e+300"). nan is "nan" in both.
//
// Speed: each call reserves its bound once (ensureWritable) and writes through a raw pointer;
// integers and lengths go through a two-digits-at-a-time formatter; no allocation beyond the
// buffer's growth and no virtual call.
//
// Simple strings and simple errors must not contain \r or \n (a debug assertion checks it; the
// writer does not scan them in release builds).

#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/codec/redis/resp_type.hpp>
#include <netbuf/codec/redis/resp_value.hpp>
#include <span>
#include <string_view>

namespace netbuf {

class RespWriter {
 public:
  enum class DoubleFormat : std::uint8_t { Redis70, Shortest };

  /// Longest text formatDouble() writes.
  static constexpr std::size_t kMaxDoubleChars = 32;

  explicit RespWriter(ByteBuf& out, RespProtocol protocol = RespProtocol::Resp2,
                      DoubleFormat doubleFormat = DoubleFormat::Redis70) noexcept
      : out_(&out), protocol_(protocol), doubleFormat_(doubleFormat) {}

  RespProtocol protocol() const noexcept { return protocol_; }
  void setProtocol(RespProtocol p) noexcept { protocol_ = p; }
  bool isResp3() const noexcept { return protocol_ == RespProtocol::Resp3; }
  ByteBuf& buffer() const noexcept { return *out_; }

  void simpleString(std::string_view text);  // +text
  void simpleError(std::string_view text);   // -text  (text includes the code: "ERR ...")
  void integer(std::int64_t v);              // :v
  void bulkString(std::string_view bytes);   // $len bytes
  /// A bulk string whose payload is buf's readable bytes, appended by copy (the server's replies
  /// are small; large values are written by copy into the reply buffer, one gather write).
  void bulkString(const ByteBuf& bytes);
  void arrayHeader(std::size_t n);  // *n
  void null();                      // _ / $-1
  void nullArray();                 // _ / *-1
  void boolean(bool v);
  void doubleValue(double v);
  void bigNumber(std::string_view digits);
  void mapHeader(std::size_t pairs);
  void setHeader(std::size_t n);
  void pushHeader(std::size_t n);
  void attributeHeader(std::size_t pairs);
  void verbatimString(std::string_view format, std::string_view text);  // format: 3 bytes
  void bulkError(std::string_view text);

  /// A client's request: *n then each argument as a bulk string (always this form, both
  /// protocols).
  void command(std::span<const std::string_view> args);
  /// Writes a value (and the values it holds) in this writer's protocol; a null in its own form
  /// ('$' -> null(), '*' -> nullArray(), '_' -> null()), attributes in RESP3 only.
  void value(const RespValue& v);

  /// Writes d's text in `format` into out (at least kMaxDoubleChars bytes); returns its length.
  static std::size_t formatDouble(double d, char* out, DoubleFormat format = DoubleFormat::Redis70);

 private:
  ByteBuf* out_;
  RespProtocol protocol_;
  DoubleFormat doubleFormat_;
};

}  // namespace netbuf
