#pragma once
// StorageKind: where a ByteBuf's memory came from.

#include <cstdint>
#include <string_view>

namespace netbuf {

/// Where a buffer's memory came from; reported by ByteBuf::storageKind() and the fmt summary.
enum class StorageKind : std::uint8_t {
  Heap,         ///< Allocated by an unpooled allocator.
  Pooled,       ///< A slot of a pooled allocator.
  Wrapped,      ///< Foreign memory with a deleter, called once when the count reaches zero.
  OwnedString,  ///< A std::string moved into the buffer (no copy).
  OwnedVector,  ///< A std::vector<std::byte> moved into the buffer (no copy).
  Unowned,      ///< Memory the caller keeps alive for as long as any handle exists.
};

std::string_view toString(StorageKind kind) noexcept;

}  // namespace netbuf
