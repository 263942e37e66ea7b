// ByteBufAllocator::defaultAllocator(): the process-wide default (the pool unless
// NETBUF_ALLOCATOR=unpooled), chosen once, and setDefaultAllocator().

#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace netbuf {

constinit std::atomic<ByteBufAllocator*> ByteBufAllocator::defaultAllocator_{nullptr};

ByteBufAllocator& ByteBufAllocator::chooseDefaultAllocator() noexcept {
  static ByteBufAllocator* const chosen = []() -> ByteBufAllocator* {
    const char* env = std::getenv("NETBUF_ALLOCATOR");
    const std::string_view choice = env != nullptr ? env : "";
    if (choice == "unpooled") return &UnpooledByteBufAllocator::instance();
    if (!choice.empty() && choice != "pooled") {
      std::fprintf(stderr, "netbuf: ignoring NETBUF_ALLOCATOR=%s (expected pooled or unpooled)\n",
                   env);
    }
    // Never destroyed: buffers may outlive static destructors, and thread exits may follow them.
    return new PooledByteBufAllocator();
  }();
  ByteBufAllocator* expected = nullptr;
  defaultAllocator_.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel);
  return *defaultAllocator_.load(std::memory_order_acquire);
}

void ByteBufAllocator::setDefaultAllocator(ByteBufAllocator& allocator) noexcept {
  defaultAllocator_.store(&allocator, std::memory_order_release);
}

}  // namespace netbuf
