#pragma once
// ByteBufReader: a cursor for tight loops of primitive reads from a ByteBuf's readable bytes
// (ByteBufWriter, in byte_buf_writer.hpp, is its counterpart for writes).
//
// Why cursors exist: ByteBuf::writeInt() keeps its indices in the ByteBuf object, and the compiler
// must assume a store through the buffer's byte pointer may modify that object (a char-typed store
// aliases everything). So in a loop of writeInt calls it reloads the base pointer and the write
// limit after every store, and stores writerIndex back: three memory operations per value more
// than a raw loop (about 2x a raw memcpy loop; see docs/benchmarks.md). A cursor keeps its
// current/end pointers in a small local object whose address never escapes (the slow path takes
// and returns them by value), so they stay in registers and each access is one bounds check plus
// one load or store.
//
// Same safety as ByteBuf: every read is bounds-checked and throws the same typed errors. The
// reader publishes its progress (readerIndex) when it is destroyed, when commit() is called, and
// before it throws.
//
// Rule: while a reader is alive, read from the buffer only through it (the buffer's readerIndex is
// stale until commit()). The buffer must outlive the reader.
//
//   ByteBufReader in(buf);
//   std::int64_t sum = 0;
//   while (in.isReadable(4)) sum += in.readInt();

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/byte_accessors.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/errors.hpp>
#include <span>

namespace netbuf {

/// Consumes primitives (the read* names of ByteAccessors) and bytes from a ByteBuf's readable
/// bytes.
class ByteBufReader : public ByteAccessors<ByteBufReader> {
 public:
  explicit ByteBufReader(ByteBuf& buf) noexcept
      : buf_(buf), start_(buf.readPtr()), cur_(start_), end_(start_ + buf.readableBytes()) {}
  ByteBufReader(const ByteBufReader&) = delete;
  ByteBufReader& operator=(const ByteBufReader&) = delete;
  ~ByteBufReader() { commit(); }

  /// Publishes the bytes consumed so far (advances the buffer's readerIndex).
  void commit() noexcept {
    buf_.advanceReaderUnchecked(static_cast<std::size_t>(cur_ - start_));
    start_ = cur_;
  }
  std::size_t readableBytes() const noexcept { return static_cast<std::size_t>(end_ - cur_); }
  bool isReadable(std::size_t n = 1) const noexcept { return n <= readableBytes(); }

  ByteBufReader& readBytes(std::span<std::byte> dst) {
    if (readableBytes() < dst.size()) [[unlikely]]
      fail(dst.size());
    if (!dst.empty()) std::memcpy(dst.data(), cur_, dst.size());
    cur_ += dst.size();
    return *this;
  }
  ByteBufReader& skipBytes(std::size_t n) {
    if (readableBytes() < n) [[unlikely]]
      fail(n);
    cur_ += n;
    return *this;
  }

  // ---- raw operation behind the read* names ----
  template <class T, std::size_t N, ByteOrder O>
  T readValue() {
    // As ByteBufWriter::writeValue: cur + N > end compared as addresses.
    const auto next = reinterpret_cast<std::uintptr_t>(cur_) + N;
    if (next > reinterpret_cast<std::uintptr_t>(end_)) [[unlikely]]
      fail(N);
    const T v = detail::loadValue<T, N, O>(cur_);
    cur_ = reinterpret_cast<const std::byte*>(next);
    return v;
  }

 private:
  [[noreturn, gnu::noinline]] static void failSlow(ByteBuf& buf, std::size_t consumed,
                                                   std::size_t n) {
    buf.advanceReaderUnchecked(consumed);
    buf.skipBytes(n);  // throws the IndexOutOfBoundsError readInt would
    throw IndexOutOfBoundsError("ByteBufReader: unreachable");
  }
  [[noreturn]] void fail(std::size_t n) {
    const std::size_t consumed = static_cast<std::size_t>(cur_ - start_);
    start_ = cur_;  // the slow path commits what was consumed before throwing
    failSlow(buf_, consumed, n);
  }

  ByteBuf& buf_;
  const std::byte* start_;
  const std::byte* cur_;
  const std::byte* end_;
};

}  // namespace netbuf
