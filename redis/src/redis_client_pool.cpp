// RedisClientPool (redis_client_pool.hpp): the clients and the choice among them.

#include <limits>
#include <mutex>
#include <netbuf/redis/redis_client_pool.hpp>

namespace netbuf {

RedisClientPool::RedisClientPool(EventLoopGroup& group, std::size_t connections,
                                 RedisClient::Options options) {
  const std::size_t n = connections == 0 ? 1 : connections;
  clients_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    clients_.push_back(std::make_unique<RedisClient>(group, options));
  }
}

RedisClientPool::~RedisClientPool() { close(); }

RedisClient& RedisClientPool::pick() noexcept {
  // Start the scan at a rotating index, so that idle clients (all at 0 pending) take turns.
  const std::size_t n = clients_.size();
  const std::size_t start = next_.fetch_add(1, std::memory_order_relaxed) % n;
  std::size_t best = start;
  std::size_t bestPending = std::numeric_limits<std::size_t>::max();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (start + k) % n;
    const std::size_t p = clients_[i]->pendingCommands();
    if (p < bestPending) {
      best = i;
      bestPending = p;
      if (p == 0) break;
    }
  }
  return *clients_[best];
}

void RedisClientPool::setPushHandler(const RedisClient::PushHandler& handler) {
  for (auto& c : clients_) c->setPushHandler(handler);
}

void RedisClientPool::close() {
  for (auto& c : clients_) c->close();
}

std::size_t RedisClientPool::pendingCommands() const noexcept {
  std::size_t n = 0;
  for (const auto& c : clients_) n += c->pendingCommands();
  return n;
}

void RedisClientPool::connectAll(RedisClient::ConnectCompletion done) {
  // The clients complete on their own loops: the tally is shared under a mutex.
  struct Tally {
    std::mutex mutex;
    std::size_t left;
    ErrorCode first;
    RedisClient::ConnectCompletion done;
  };
  auto tally = std::make_shared<Tally>();
  tally->left = clients_.size();
  tally->done = std::move(done);
  for (auto& c : clients_) {
    c->connect([tally](ErrorCode ec) {
      RedisClient::ConnectCompletion finish;
      ErrorCode result;
      {
        std::lock_guard<std::mutex> lock(tally->mutex);
        if (ec && !tally->first) tally->first = ec;
        if (--tally->left > 0) return;
        finish = std::move(tally->done);
        result = tally->first;
      }
      finish(result);
    });
  }
}

}  // namespace netbuf
