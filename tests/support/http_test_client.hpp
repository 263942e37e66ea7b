#pragma once
// The HttpClient the HTTP client tests drive: on a one-loop group of its own, destroyed before
// the group (which must outlive it); and reproducible payload bytes of every value.

#include <netbuf/http/http_client.hpp>
#include <netbuf/transport/event_loop.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>

namespace netbuf::test {

class TestHttpClient {
 public:
  explicit TestHttpClient(HttpClient::Options options = {}) : group_(1) {
    client_.emplace(group_, std::move(options));
  }
  ~TestHttpClient() {
    client_.reset();
    group_.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
  }
  TestHttpClient(const TestHttpClient&) = delete;
  TestHttpClient& operator=(const TestHttpClient&) = delete;
  HttpClient& operator*() { return *client_; }
  HttpClient* operator->() { return &*client_; }
  /// Destroys the client now (for tests of its destructor's behaviour).
  void destroy() { client_.reset(); }

 private:
  EventLoopGroup group_;
  std::optional<HttpClient> client_;
};

/// n bytes of every value, the same for the same seed.
inline std::string randomBytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

}  // namespace netbuf::test
