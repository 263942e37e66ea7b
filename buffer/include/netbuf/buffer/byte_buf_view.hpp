#pragma once
// ByteBufView: a non-owning, read-only window on bytes, with its own reader index.
//
// Lifetime rule (as for std::string_view): a view does not keep the memory alive and does not
// touch any reference count. It is valid only while the ByteBuf (or other memory) it was taken
// from is alive and not reallocated: any operation on the source that may change its capacity
// (a write that grows it, capacity(n), discardReadBytes) or the source's destruction invalidates
// every view of it. Use ByteBuf::retainedSlice() when the bytes must outlive the source.
//
// Layout:
//
//     data()                                    data() + size()
//     |  already read  |       readable bytes       |
//     0       <=   readerIndex()      <=         size()
//
// getX(index) reads at an absolute index in [0, size()); readX() reads at readerIndex() and
// advances it. Both check bounds and throw IndexOutOfBoundsError; neither ever reads outside.
// The whole read side of the shared vocabulary (byte_accessors.hpp) is available; a view has no
// write side.

#include <cstddef>
#include <cstring>
#include <netbuf/buffer/byte_accessors.hpp>
#include <netbuf/buffer/byte_buf_util.hpp>
#include <netbuf/buffer/errors.hpp>
#include <span>
#include <string>
#include <string_view>

namespace netbuf {

namespace detail {
[[noreturn]] void throwViewOutOfBounds(std::size_t index, std::size_t length, std::size_t bound,
                                       const char* what);
}  // namespace detail

class ByteBufView : public ByteAccessors<ByteBufView> {
 public:
  /// One piece of memory: ByteAccessors compiles out its segmented paths.
  static constexpr bool kContiguous = true;
  static constexpr std::size_t npos = byte_buf_util::npos;

  constexpr ByteBufView() noexcept = default;
  constexpr ByteBufView(const std::byte* data, std::size_t size) noexcept
      : data_(data), size_(size) {}
  constexpr explicit ByteBufView(std::span<const std::byte> bytes) noexcept
      : data_(bytes.data()), size_(bytes.size()) {}
  explicit ByteBufView(std::string_view text) noexcept
      : data_(reinterpret_cast<const std::byte*>(text.data())), size_(text.size()) {}

  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t readerIndex() const noexcept { return readerIndex_; }
  ByteBufView& readerIndex(std::size_t index) {
    if (index > size_) detail::throwViewOutOfBounds(index, 0, size_, "readerIndex");
    readerIndex_ = index;
    return *this;
  }
  std::size_t readableBytes() const noexcept { return size_ - readerIndex_; }
  bool isReadable(std::size_t n = 1) const noexcept { return readableBytes() >= n; }

  /// The readable bytes.
  std::span<const std::byte> readableSpan() const noexcept {
    return {data_ + readerIndex_, size_ - readerIndex_};
  }
  std::string_view readableStringView() const noexcept {
    return {reinterpret_cast<const char*>(data_ + readerIndex_), size_ - readerIndex_};
  }

  ByteBufView& skipBytes(std::size_t n) {
    checkReadableRange(n, "skipBytes");
    readerIndex_ += n;
    return *this;
  }

  /// A view of [index, index + length) of this view; its reader index starts at 0.
  ByteBufView slice(std::size_t index, std::size_t length) const {
    checkIndexRange(index, length, "slice");
    return {data_ + index, length};
  }
  /// A view of the readable bytes.
  ByteBufView slice() const noexcept { return {data_ + readerIndex_, size_ - readerIndex_}; }
  /// A view of the next `length` readable bytes; advances readerIndex by length.
  ByteBufView readSlice(std::size_t length) {
    checkReadableRange(length, "readSlice");
    ByteBufView v{data_ + readerIndex_, length};
    readerIndex_ += length;
    return v;
  }

  // getBytes/readBytes, indexOf/bytesBefore/forEachByte, equals/compare/hashCode, hexDump and the
  // text reads (getUtf8, readUtf8AsUtf16, isValidUtf8, ...) come from ByteAccessors.

  // ---- The raw operations behind ByteAccessors (see byte_accessors.hpp). ----
  std::size_t capacity() const noexcept { return size_; }
  std::size_t writerIndex() const noexcept { return size_; }
  void advanceReaderUnchecked(std::size_t n) noexcept { readerIndex_ += n; }
  void checkIndexRange(std::size_t index, std::size_t length, const char* what) const {
    if (index > size_ || length > size_ - index)
      detail::throwViewOutOfBounds(index, length, size_, what);
  }
  void checkReadableRange(std::size_t length, const char* what) const {
    if (length > size_ - readerIndex_)
      detail::throwViewOutOfBounds(readerIndex_, length, size_, what);
  }
  const std::byte* contiguous(std::size_t index, std::size_t) const noexcept {
    return data_ + index;
  }
  template <class Fn>
  bool forEachSegment(std::size_t index, std::size_t length, Fn&& fn) const {
    return length == 0 || fn(std::span<const std::byte>(data_ + index, length));
  }

  template <class T, std::size_t N, ByteOrder O>
  T getValue(std::size_t index) const {
    checkIndexRange(index, N, "get");
    return detail::loadValue<T, N, O>(data_ + index);
  }
  template <class T, std::size_t N, ByteOrder O>
  T readValue() {
    if (N > size_ - readerIndex_) detail::throwViewOutOfBounds(readerIndex_, N, size_, "read");
    T v = detail::loadValue<T, N, O>(data_ + readerIndex_);
    readerIndex_ += N;
    return v;
  }

 private:
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t readerIndex_ = 0;
};

inline bool operator==(const ByteBufView& a, const ByteBufView& b) { return a.equals(b); }

}  // namespace netbuf
