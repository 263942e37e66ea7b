#pragma once
// The demo MessagePack-RPC service behind `netbuf serve rpc` (and the Python interop test):
//
//   echo(params...)      -> the params array, as received ([1, "a"] -> [1, "a"])
//   add(a, b)            -> a + b for two integers (Int or UInt); a result outside
//                           [INT64_MIN, UINT64_MAX] -> error "OverflowError: ...";
//                           non-integers -> "TypeError: ..."
//   put(key str, value bin) -> nil; stores a copy of the bytes under key (in memory, shared by
//                           every connection); a value that is not bin -> "TypeError: ..."
//   get(key str)         -> the bin stored under key, or nil (always bin, never str)
//   sleep(ms)            -> ms, replied after ms milliseconds through the channel's event loop
//                           (asynchronous: other calls on the connection go on meanwhile, so
//                           responses come back out of order); 0 <= ms <= 600000
// Every method checks its arity (ArgumentError from the server otherwise).
//
// Thread-safety: the store is a mutex-protected map shared by all loops; values are at most the
// decoder's maxBinLength.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <netbuf/rpc/message_pack_rpc_server.hpp>
#include <string>
#include <vector>

namespace netbuf::tools {

class RpcDemoStore {
 public:
  void put(std::string key, std::vector<std::byte> value);
  /// False when absent; otherwise fills out.
  bool get(const std::string& key, std::vector<std::byte>& out) const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<std::byte>, std::less<>> map_;
};

/// Registers echo, add, put, get and sleep on rpc; the store is shared with the methods.
void registerDemoMethods(MessagePackRpcServer& rpc, std::shared_ptr<RpcDemoStore> store);

}  // namespace netbuf::tools
