#include <netbuf/codec/msgpack/message_pack_traits.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

namespace netbuf::detail {

void throwMessagePackArity(std::size_t expected, std::size_t actual, std::uint64_t offset) {
  throwMessagePackError(MessagePackErrc::TypeMismatch,
                        fmt::format("expected an array of {} elements, got {}", expected, actual),
                        offset, actual, expected);
}

}  // namespace netbuf::detail
