#pragma once
// ByteBufWriter: a cursor for tight loops of primitive writes into a ByteBuf (ByteBufReader, in
// byte_buf_reader.hpp, is its counterpart for reads).
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
// Same safety as ByteBuf: every write is bounds-checked and throws the same typed errors, and the
// writer grows the buffer as writeX would. The writer publishes its progress (writerIndex) when it
// is destroyed, when commit() is called, and before it grows the buffer or throws.
//
// Rule: while a writer is alive, write to the buffer only through it (the buffer's writerIndex is
// stale until commit()). The buffer must outlive the writer.
//
//   ByteBuf buf = Unpooled::buffer();
//   {
//     ByteBufWriter out(buf);
//     for (std::int32_t v : values) out.writeInt(v);
//   }  // buf.writerIndex() advanced here

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/buffer/byte_accessors.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <span>

namespace netbuf {

/// Appends primitives (the write* names of ByteAccessors) and bytes to a ByteBuf.
class ByteBufWriter : public ByteAccessors<ByteBufWriter> {
 public:
  /// Throws ReadOnlyBufferError / EmptyBufferError for a buffer that cannot be written.
  explicit ByteBufWriter(ByteBuf& buf) : buf_(buf) {
    buf.ensureWritable(0);
    reset(buf);
  }
  ByteBufWriter(const ByteBufWriter&) = delete;
  ByteBufWriter& operator=(const ByteBufWriter&) = delete;
  ~ByteBufWriter() { commit(); }

  /// Publishes the bytes written so far (advances the buffer's writerIndex).
  void commit() noexcept {
    buf_.advanceWriterUnchecked(static_cast<std::size_t>(cur_ - start_));
    start_ = cur_;
  }
  /// Bytes written through this cursor and not yet committed.
  std::size_t pending() const noexcept { return static_cast<std::size_t>(cur_ - start_); }

  /// Appends bytes (checked and growing, like ByteBuf::writeBytes).
  ByteBufWriter& writeBytes(std::span<const std::byte> src) {
    if (static_cast<std::size_t>(end_ - cur_) < src.size()) [[unlikely]]
      grow(src.size());
    if (!src.empty()) std::memcpy(cur_, src.data(), src.size());
    cur_ += src.size();
    return *this;
  }

  // ---- raw operation behind the write* names ----
  template <class T, std::size_t N, ByteOrder O>
  void writeValue(T value) {
    // Compared as addresses, cur + N > end: one add, one compare (end - cur < N takes a copy, a
    // subtraction and a compare), and the sum is the next cursor.
    auto next = reinterpret_cast<std::uintptr_t>(cur_) + N;
    if (next > reinterpret_cast<std::uintptr_t>(end_)) [[unlikely]] {
      grow(N);
      next = reinterpret_cast<std::uintptr_t>(cur_) + N;
    }
    detail::storeValue<T, N, O>(cur_, value);
    cur_ = reinterpret_cast<std::byte*>(next);
  }

 private:
  void reset(ByteBuf& buf) noexcept {
    start_ = cur_ = buf.writePtrUnchecked();
    end_ = cur_ + buf.writableBytes();
  }
  struct Window {
    std::byte* start;
    std::byte* end;
  };
  // Out of line, taking and returning plain values: the cursor's own address never escapes, which
  // is what lets the compiler keep cur_/end_ in registers.
  [[gnu::noinline]] static Window growSlow(ByteBuf& buf, std::size_t written, std::size_t n) {
    buf.advanceWriterUnchecked(written);
    buf.ensureWritable(n);  // throws exactly as writeInt would
    std::byte* p = buf.writePtrUnchecked();
    return {p, p + buf.writableBytes()};
  }
  void grow(std::size_t n) {
    const std::size_t written = pending();
    start_ = cur_;  // growSlow publishes `written` first, also when it then throws
    const Window w = growSlow(buf_, written, n);
    start_ = cur_ = w.start;
    end_ = w.end;
  }

  ByteBuf& buf_;
  std::byte* start_ = nullptr;
  std::byte* cur_ = nullptr;
  std::byte* end_ = nullptr;
};

}  // namespace netbuf
