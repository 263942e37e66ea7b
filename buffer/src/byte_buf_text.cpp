// ByteBuf's text members: thin glue between the index model and the kernels in utf8.hpp.
//
// "Size once, then write unchecked": each write computes the kernel's bound, makes room for it with
// one ensureWritable, lets the kernel write through a raw pointer, then advances writerIndex by the
// exact count the kernel returns. Kernels may scribble anywhere inside their bound while they work
// (vector stores), which is harmless past writerIndex (those bytes are not readable) but would
// clobber live bytes for setUtf8; the set forms therefore encode into scratch memory first.

#include <fmt/format.h>

#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/utf8.hpp>

namespace netbuf {
namespace {

std::string_view asChars(std::u8string_view s) noexcept {
  return {reinterpret_cast<const char*>(s.data()), s.size()};
}

std::string_view asChars(const std::byte* p, std::size_t n) noexcept {
  return {reinterpret_cast<const char*>(p), n};
}

[[noreturn]] void throwIllFormed(const char* what, std::size_t offset) {
  throw Utf8Error(fmt::format("{}: ill-formed UTF-8 at offset {}", what, offset), offset);
}

// Bound arithmetic must not overflow for absurd inputs: cap every bound at kMaxCapacityLimit + 1,
// which no buffer can hold, so ensureWritable reports the overflow as an out-of-bounds error.
constexpr std::size_t boundOf(std::size_t units, std::size_t factor) noexcept {
  return units > kMaxCapacityLimit / factor ? kMaxCapacityLimit + 1 : units * factor;
}

}  // namespace

// Writes text through `encode(dst)` (which returns the bytes written) after reserving `bound`
// bytes. When the bound itself would pass maxCapacity but the exact size (from `exact()`) fits,
// the text is encoded into scratch memory and copied, so a write that fits never fails.
template <class Encode, class Exact>
static std::size_t writeEncoded(ByteBuf& buf, std::size_t bound, Encode&& encode, Exact&& exact) {
  if (!buf.isReadOnly() && buf.isValid() && bound > buf.maxWritableBytes()) {
    const std::size_t n = exact();
    buf.ensureWritable(n);  // throws when even the exact size does not fit
    auto scratch = std::make_unique_for_overwrite<std::byte[]>(bound);
    const std::size_t written = encode(scratch.get());
    std::memcpy(buf.writePtrUnchecked(), scratch.get(), written);
    buf.advanceWriterUnchecked(written);
    return written;
  }
  buf.ensureWritable(bound);
  const std::size_t written = encode(buf.writePtrUnchecked());
  buf.advanceWriterUnchecked(written);
  return written;
}

std::size_t ByteBuf::writeUtf8(std::u16string_view text) {
  return writeEncoded(
      *this, boundOf(text.size(), 3), [&](std::byte* d) { return utf8::encodeUtf8(text, d); },
      [&] { return utf8::utf8Bytes(text); });
}

std::size_t ByteBuf::writeUtf8(std::u32string_view text) {
  return writeEncoded(
      *this, boundOf(text.size(), 4), [&](std::byte* d) { return utf8::encodeUtf8(text, d); },
      [&] { return utf8::utf8Bytes(text); });
}

std::size_t ByteBuf::writeUtf8(std::string_view text) {
  // Well-formed input (the common case) is validated, then copied with memcpy: exact size, no
  // over-reservation. Only ill-formed input pays for the replacing transcoder.
  const std::size_t bad =
      utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(text.data()), text.size());
  if (bad == utf8::npos) {
    writeBytes(text);
    return text.size();
  }
  return writeEncoded(
      *this, boundOf(text.size(), 3),
      [&](std::byte* d) { return utf8::copyUtf8Replacing(text, d); },
      [&] { return utf8::utf8ReplacingBytes(text); });
}

std::size_t ByteBuf::writeUtf8(std::u8string_view text) { return writeUtf8(asChars(text)); }

std::size_t ByteBuf::writeUtf8Strict(std::string_view text) {
  const std::size_t bad =
      utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(text.data()), text.size());
  if (bad != utf8::npos) throwIllFormed("writeUtf8Strict", bad);
  writeBytes(text);
  return text.size();
}

std::size_t ByteBuf::writeUtf8Strict(std::u8string_view text) {
  return writeUtf8Strict(asChars(text));
}

// The set forms: bytes after the written text are live, so encode into scratch memory of the
// kernel's bound and copy exactly what it wrote.
// The caller has checked that [index, index + exact) is writable.
template <class Encode>
static std::size_t setEncoded(ByteBuf& buf, std::size_t index, std::size_t bound, Encode&& encode) {
  auto scratch = std::make_unique_for_overwrite<std::byte[]>(bound == 0 ? 1 : bound);
  const std::size_t written = encode(scratch.get());
  buf.setBytes(index, std::span<const std::byte>(scratch.get(), written));
  return written;
}

std::size_t ByteBuf::setUtf8(std::size_t index, std::u16string_view text) {
  checkWritableIndex(index, utf8::utf8Bytes(text), "setUtf8");
  return setEncoded(*this, index, boundOf(text.size(), 3),
                    [&](std::byte* d) { return utf8::encodeUtf8(text, d); });
}

std::size_t ByteBuf::setUtf8(std::size_t index, std::u32string_view text) {
  checkWritableIndex(index, utf8::utf8Bytes(text), "setUtf8");
  return setEncoded(*this, index, boundOf(text.size(), 4),
                    [&](std::byte* d) { return utf8::encodeUtf8(text, d); });
}

std::size_t ByteBuf::setUtf8(std::size_t index, std::string_view text) {
  const std::size_t bad =
      utf8::firstInvalidUtf8(reinterpret_cast<const std::byte*>(text.data()), text.size());
  if (bad == utf8::npos) {
    setBytes(index, text);
    return text.size();
  }
  checkWritableIndex(index, utf8::utf8ReplacingBytes(text), "setUtf8");
  return setEncoded(*this, index, boundOf(text.size(), 3),
                    [&](std::byte* d) { return utf8::copyUtf8Replacing(text, d); });
}

std::size_t ByteBuf::writeAscii(std::u16string_view text) {
  ensureWritable(text.size());
  const std::size_t n = utf8::encodeAscii(text, writePtrUnchecked());
  advanceWriterUnchecked(n);
  return n;
}

std::size_t ByteBuf::writeAscii(std::string_view text) {
  ensureWritable(text.size());
  const std::size_t n = utf8::encodeAscii(text, writePtrUnchecked());
  advanceWriterUnchecked(n);
  return n;
}

std::size_t ByteBuf::writeCharSequence(std::u16string_view text, Charset charset) {
  switch (charset) {
    case Charset::Utf8:
      return writeUtf8(text);
    case Charset::Ascii:
      return writeAscii(text);
    case Charset::Latin1: {
      ensureWritable(text.size());
      const std::size_t n = utf8::encodeLatin1(text, writePtrUnchecked());
      advanceWriterUnchecked(n);
      return n;
    }
    case Charset::Utf16BE:
    case Charset::Utf16LE: {
      ensureWritable(boundOf(text.size(), 2));
      const std::size_t n =
          utf8::encodeUtf16(text, writePtrUnchecked(), charset == Charset::Utf16BE);
      advanceWriterUnchecked(n);
      return n;
    }
  }
  throw IllegalArgumentError("writeCharSequence: unknown charset");
}

std::size_t ByteBuf::writeCharSequence(std::string_view text, Charset charset) {
  switch (charset) {
    case Charset::Utf8:
      return writeUtf8(text);
    case Charset::Ascii:
    case Charset::Latin1: {
      // Decoded per code point (one '?' per unmappable character, not per byte).
      ensureWritable(text.size());
      std::byte* out = writePtrUnchecked();
      const std::size_t n = utf8::utf8ToLatin1(text, out);
      if (charset == Charset::Ascii) {
        for (std::size_t i = 0; i < n; ++i) {
          if (out[i] > std::byte{0x7f}) out[i] = std::byte{'?'};
        }
      }
      advanceWriterUnchecked(n);
      return n;
    }
    case Charset::Utf16BE:
    case Charset::Utf16LE: {
      ensureWritable(boundOf(text.size(), 2));
      const std::size_t n =
          utf8::utf8ToUtf16Bytes(text, writePtrUnchecked(), charset == Charset::Utf16BE);
      advanceWriterUnchecked(n);
      return n;
    }
  }
  throw IllegalArgumentError("writeCharSequence: unknown charset");
}

// ------------------------------------------------------------------ reads

std::string ByteBuf::getUtf8(std::size_t index, std::size_t n) const {
  checkIndex(index, n, "getUtf8");
  const std::string_view raw = asChars(base_ + index, n);
  if (utf8::isValidUtf8(base_ + index, n)) return std::string(raw);
  // The kernel may scribble up to its bound (3n), so it writes into scratch memory of that size.
  auto scratch = std::make_unique_for_overwrite<std::byte[]>(boundOf(n, 3));
  const std::size_t written = utf8::copyUtf8Replacing(raw, scratch.get());
  return std::string(reinterpret_cast<const char*>(scratch.get()), written);
}

std::string ByteBuf::readUtf8(std::size_t n) {
  checkReadable(n, "readUtf8");
  std::string s = getUtf8(readerIndex_, n);
  readerIndex_ += n;
  return s;
}

std::string ByteBuf::getUtf8Strict(std::size_t index, std::size_t n) const {
  checkIndex(index, n, "getUtf8Strict");
  const std::size_t bad = utf8::firstInvalidUtf8(base_ + index, n);
  if (bad != utf8::npos) throwIllFormed("getUtf8Strict", bad);
  return std::string(asChars(base_ + index, n));
}

std::string ByteBuf::readUtf8Strict(std::size_t n) {
  checkReadable(n, "readUtf8Strict");
  const std::size_t bad = utf8::firstInvalidUtf8(base_ + readerIndex_, n);
  if (bad != utf8::npos) throwIllFormed("readUtf8Strict", bad);
  std::string s(asChars(base_ + readerIndex_, n));
  readerIndex_ += n;
  return s;
}

std::u16string ByteBuf::getUtf8AsUtf16(std::size_t index, std::size_t n) const {
  checkIndex(index, n, "getUtf8AsUtf16");
  // n UTF-8 bytes never decode to more than n UTF-16 units: size once, decode, trim.
  std::u16string out(n, u'\0');
  out.resize(utf8::utf8ToUtf16(asChars(base_ + index, n), out.data()));
  return out;
}

std::u16string ByteBuf::readUtf8AsUtf16(std::size_t n) {
  checkReadable(n, "readUtf8AsUtf16");
  std::u16string s = getUtf8AsUtf16(readerIndex_, n);
  readerIndex_ += n;
  return s;
}

std::string ByteBuf::getAscii(std::size_t index, std::size_t n) const {
  checkIndex(index, n, "getAscii");
  std::string out(n, '\0');
  utf8::decodeAscii(base_ + index, n, out.data());
  return out;
}

std::string ByteBuf::readAscii(std::size_t n) {
  checkReadable(n, "readAscii");
  std::string s = getAscii(readerIndex_, n);
  readerIndex_ += n;
  return s;
}

bool ByteBuf::isValidUtf8() const noexcept {
  return utf8::isValidUtf8(base_ + readerIndex_, writerIndex_ - readerIndex_);
}

bool ByteBuf::isAscii() const noexcept {
  return utf8::isAscii(base_ + readerIndex_, writerIndex_ - readerIndex_);
}

std::size_t ByteBuf::writeFormatV(fmt::string_view format, fmt::format_args args) {
  if (readOnly_ || storage_ == nullptr) checkMutable("writeFormat");
  // First attempt straight into the spare room; only a result that does not fit is formatted a
  // second time, after one exact-size ensureWritable.
  const std::size_t room = capacity_ - writerIndex_;
  auto first = fmt::vformat_to_n(reinterpret_cast<char*>(base_ + writerIndex_), room, format, args);
  if (first.size <= room) {
    writerIndex_ += first.size;
    return first.size;
  }
  ensureWritable(first.size);
  fmt::vformat_to_n(reinterpret_cast<char*>(base_ + writerIndex_), first.size, format, args);
  writerIndex_ += first.size;
  return first.size;
}

}  // namespace netbuf
