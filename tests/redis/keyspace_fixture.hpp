#pragma once
// A RedisKeyspace with a session and a fake clock for the keyspace tests: db({"SET", "k", "v"})
// runs one command and returns the reply's bytes, in the session's protocol.

#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/redis/redis_keyspace.hpp>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf::test {

struct KeyspaceFixture {
  RedisKeyspace ks;
  RedisSession session;
  std::int64_t now = 1'000'000;

  KeyspaceFixture() {
    ks.setClock([this] { return now; });
    session.id = 7;
  }
  KeyspaceFixture(const KeyspaceFixture&) = delete;
  KeyspaceFixture& operator=(const KeyspaceFixture&) = delete;

  std::string run(std::span<const std::string_view> args) {
    RedisCommand cmd = RedisCommand::copyOf(args);
    ByteBuf out = ByteBufAllocator::defaultAllocator().buffer(64);
    RespWriter w(out, session.protocol);
    ks.execute(cmd, w, session);
    return std::string(out.readableStringView());
  }
  std::string operator()(std::initializer_list<std::string_view> args) {
    return run(std::span<const std::string_view>(args.begin(), args.size()));
  }
  std::string operator()(const std::vector<std::string_view>& args) { return run(args); }

  void resp3() { session.protocol = RespProtocol::Resp3; }
  void resp2() { session.protocol = RespProtocol::Resp2; }
};

inline constexpr std::string_view kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
inline constexpr std::string_view kNotInteger = "-ERR value is not an integer or out of range\r\n";
inline constexpr std::string_view kSyntaxError = "-ERR syntax error\r\n";
inline constexpr std::string_view kMustBePositive =
    "-ERR value is out of range, must be positive\r\n";
inline constexpr std::string_view kOk = "+OK\r\n";
inline constexpr std::string_view kNull2 = "$-1\r\n";
inline constexpr std::string_view kNull3 = "_\r\n";

/// The concatenation of parts (g++ 12 at -O3 warns, wrongly, about `"literal" + std::string`).
inline std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s.append(p);
  return s;
}

inline std::string arity(std::string_view name) {
  return cat({"-ERR wrong number of arguments for '", name, "' command\r\n"});
}

}  // namespace netbuf::test
