#pragma once
// RespType and RespProtocol: the kinds of RESP2/RESP3 values and the two protocol versions.
//
// The RESP3 specification (github.com/redis/redis-specification) defines each type by its first
// byte on the wire; the enumerators below name them. RESP2 has the first five. A RESP2 null bulk
// string ($-1) or null array (*-1) decodes to RespType::Null too; RespValue::nullForm() keeps the
// form it came in so that it can be written back byte for byte.

#include <cstdint>
#include <string_view>

namespace netbuf {

enum class RespType : std::uint8_t {
  SimpleString,    // +OK
  SimpleError,     // -ERR message
  Integer,         // :42
  BulkString,      // $3 foo   (also a streamed string, $? ;n ... ;0, once assembled)
  Array,           // *2 ...
  Null,            // _        (and RESP2's $-1 and *-1)
  Boolean,         // #t / #f
  Double,          // ,1.5  ,inf  ,-inf  ,nan
  BigNumber,       // (3492890328409238509324850943850943825024385
  BulkError,       // !21 SYNTAX invalid syntax
  VerbatimString,  // =15 txt:Some string
  Map,             // %2 k v k v
  Set,             // ~3 ...
  Push,            // >3 ...
};

/// The protocol a connection speaks: RESP2 until a HELLO 3 switches it (the Redis default).
enum class RespProtocol : std::uint8_t { Resp2 = 2, Resp3 = 3 };

/// The type's name as the RESP3 specification spells it ("simple string", "map", ...).
std::string_view respTypeName(RespType type) noexcept;

}  // namespace netbuf
