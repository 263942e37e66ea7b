// ByteBufAllocator::defaultAllocator() without setDefaultAllocator(): the process-wide pool unless
// NETBUF_ALLOCATOR=unpooled. The choice is made once per process, so CMake runs this program
// three times: NETBUF_ALLOCATOR unset, `unpooled`, and an unknown value (the pool, with a warning).
#include <doctest/doctest.h>

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using netbuf::ByteBufAllocator;

namespace {

/// Calls defaultAllocator() for the first time in this process with stderr going to a file, and
/// returns what it printed there.
std::string firstChoiceWarning(ByteBufAllocator*& chosen) {
  std::fflush(stderr);
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(capture), STDERR_FILENO);
  chosen = &ByteBufAllocator::defaultAllocator();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(capture);
  for (int c; (c = std::fgetc(capture)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(capture);
  return text;
}

}  // namespace

TEST_CASE("the default allocator is pooled unless NETBUF_ALLOCATOR=unpooled") {
  // First: no other test case has chosen the default yet (doctest runs them in file order).
  ByteBufAllocator* chosen = nullptr;
  const std::string warning = firstChoiceWarning(chosen);
  const char* env = std::getenv("NETBUF_ALLOCATOR");
  const std::string_view value = env != nullptr ? env : "";
  const bool unpooled = value == "unpooled";
  if (value.empty() || value == "pooled" || unpooled) {
    CHECK(warning.empty());
  } else {
    CHECK(warning.find("ignoring NETBUF_ALLOCATOR=" + std::string(value)) != std::string::npos);
  }
  ByteBufAllocator& a = *chosen;
  CHECK(&a == &ByteBufAllocator::defaultAllocator());  // chosen once
  if (unpooled) {
    CHECK(&a == &netbuf::UnpooledByteBufAllocator::instance());
  } else {
    auto* pool = dynamic_cast<netbuf::PooledByteBufAllocator*>(&a);
    REQUIRE(pool != nullptr);
    // Default options: leak detection at the process default (simple), thread caches on.
    CHECK((pool->leakDetectionLevel() == netbuf::LeakDetectionLevel::Simple));
    CHECK(pool->options().useThreadCache);
  }
  // Unpooled::buffer is a buffer of the default allocator.
  netbuf::ByteBuf b = netbuf::Unpooled::buffer(64);
  // (Kinds compared by name: doctest's stringification of the enum goes through toString.)
  CHECK(std::string(netbuf::toString(b.storageKind())) == (unpooled ? "heap" : "pooled"));
  CHECK(b.capacity() == 64);
}

TEST_CASE("unpooled heap buffers: the data follows the control block, 16-byte aligned") {
  auto& heap = netbuf::UnpooledByteBufAllocator::instance();
  for (std::size_t n : {0u, 1u, 63u, 64u, 4096u, 65537u}) {
    netbuf::ByteBuf b = heap.buffer(n, n);
    CHECK(std::string(netbuf::toString(b.storageKind())) == "heap");
    CHECK(b.capacity() == n);
    CHECK(reinterpret_cast<std::uintptr_t>(b.writableBuffer().data()) % 16 == 0);
    b.writeZero(n);
    CHECK(b.readableBytes() == n);
  }
}
