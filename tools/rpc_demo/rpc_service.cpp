// The demo RPC service (see rpc_service.hpp).

#include "rpc_service.hpp"

#include <fmt/format.h>

#include <chrono>
#include <limits>
#include <string_view>
#include <utility>

namespace netbuf::tools {

void RpcDemoStore::put(std::string key, std::vector<std::byte> value) {
  std::lock_guard<std::mutex> g(mutex_);
  map_[std::move(key)] = std::move(value);
}

bool RpcDemoStore::get(const std::string& key, std::vector<std::byte>& out) const {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = map_.find(key);
  if (it == map_.end()) return false;
  out = it->second;
  return true;
}

std::size_t RpcDemoStore::size() const {
  std::lock_guard<std::mutex> g(mutex_);
  return map_.size();
}

namespace {

/// a + b over the union of int64 and uint64; RpcError when the sum fits neither.
void add(const Value& a, const Value& b, MessagePackWriter& result) {
  if (!a.isInteger() || !b.isInteger()) {
    throw RpcError(fmt::format("TypeError: add takes two integers, got {} and {}",
                               valueTypeName(a.type()), valueTypeName(b.type())));
  }
  // Non-negative values as uint64, negative ones as int64 (no 128-bit type: -Wpedantic).
  const auto negative = [](const Value& v) {
    return v.type() == ValueType::Int && v.asInt64() < 0;
  };
  const bool na = negative(a), nb = negative(b);
  if (!na && !nb) {
    std::uint64_t sum = 0;
    if (__builtin_add_overflow(a.asUInt64(), b.asUInt64(), &sum))
      throw RpcError("OverflowError: add result above UINT64_MAX");
    result.packUInt(sum);
  } else if (na && nb) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a.asInt64(), b.asInt64(), &sum))
      throw RpcError("OverflowError: add result below INT64_MIN");
    result.packInt(sum);
  } else {
    // u + n with n < 0: |n| <= 2^63, so the result lies in [-2^63, UINT64_MAX - 1].
    const std::uint64_t u = na ? b.asUInt64() : a.asUInt64();
    const std::uint64_t m = 0 - static_cast<std::uint64_t>(na ? a.asInt64() : b.asInt64());
    if (u >= m) {
      result.packUInt(u - m);
    } else {
      result.packInt(static_cast<std::int64_t>(u - m));  // modular: the negative difference
    }
  }
}

std::string keyOf(const Value& v, std::string_view method) {
  if (!v.isStr())
    throw RpcError(
        fmt::format("TypeError: {} takes a str key, got {}", method, valueTypeName(v.type())));
  return std::string(v.asStr());
}

}  // namespace

void registerDemoMethods(MessagePackRpcServer& rpc, std::shared_ptr<RpcDemoStore> store) {
  rpc.method("echo", [](std::span<const Value> params,
                        MessagePackWriter& result) { result.pack(Value::arrayView(params)); })
      .method(
          "add",
          [](std::span<const Value> p, MessagePackWriter& result) { add(p[0], p[1], result); }, 2)
      .method(
          "put",
          [store](std::span<const Value> p, MessagePackWriter& result) {
            std::string key = keyOf(p[0], "put");
            if (!p[1].isBin())
              throw RpcError(fmt::format("TypeError: put takes a bin value, got {}",
                                         valueTypeName(p[1].type())));
            const auto bytes = p[1].asBin();
            store->put(std::move(key), std::vector<std::byte>(bytes.begin(), bytes.end()));
            result.packNil();
          },
          2)
      .method(
          "get",
          [store](std::span<const Value> p, MessagePackWriter& result) {
            std::vector<std::byte> value;
            if (store->get(keyOf(p[0], "get"), value)) {
              result.packBin(std::span<const std::byte>(value));
            } else {
              result.packNil();
            }
          },
          1)
      .asyncMethod(
          "sleep",
          [](RpcCall call) {
            const Value& v = call.params()[0];
            if (!v.isInteger() || (v.type() == ValueType::Int && v.asInt64() < 0) ||
                v.asUInt64() > 600000) {
              call.replyError(std::string_view(
                  "TypeError: sleep takes milliseconds, an integer in [0, 600000]"));
              return;
            }
            const std::uint64_t ms = v.asUInt64();
            // ScheduledTask takes a copyable function: share the move-only call.
            auto shared = std::make_shared<RpcCall>(std::move(call));
            shared->executor().schedule(std::chrono::milliseconds(ms),
                                        [shared, ms] { shared->reply(Value::uinteger(ms)); });
          },
          1);
}

}  // namespace netbuf::tools
