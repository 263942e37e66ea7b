#include <fmt/format.h>
#include <algorithm>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/string_decoder.hpp>
#include <netbuf/codec/string_encoder.hpp>

namespace netbuf {

namespace {

[[noreturn]] void throwIllFormedFrame(std::size_t offset, std::uint8_t byte, std::size_t length) {
  throw CorruptedFrameError(
      fmt::format("CorruptedFrameError: ill-formed UTF-8 (byte 0x{:02x}) at offset {} of a {}-byte "
                  "frame (Utf8Policy::Strict)",
                  byte, offset, length),
      offset, byte);
}

/// Capacity for a writer's reservation: buffer() rejects an initial capacity above its maximum,
/// and past that the writers fall back to exact sizing anyway.
std::size_t capped(std::size_t units, std::size_t factor) noexcept {
  return units > kDefaultMaxCapacity / factor ? kDefaultMaxCapacity : units * factor;
}

/// A Unicode scalar value: not a surrogate, not above U+10FFFF (others are written as '?').
constexpr bool validScalar(char32_t c) noexcept {
  return c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF);
}

void putUnit(std::byte* d, char16_t u, bool big) noexcept {
  d[big ? 0 : 1] = static_cast<std::byte>(u >> 8);
  d[big ? 1 : 0] = static_cast<std::byte>(u & 0xFF);
}

}  // namespace

std::string StringDecoder::decode(const AnyByteBuf& frame) const {
  return visitBuf(frame, [this](const auto& buf) -> std::string {
    const std::size_t r = buf.readerIndex();
    const std::size_t n = buf.readableBytes();
    if (policy_ == Utf8Policy::Replace) return buf.getUtf8(r, n);
    try {
      return buf.getUtf8Strict(r, n);
    } catch (const Utf8Error& e) {
      throwIllFormedFrame(e.offset(), buf.getUnsignedByte(r + e.offset()), n);
    }
  });
}

std::size_t StringEncoder::sizeHint(const std::string& msg) const noexcept {
  const std::size_t n = msg.size();
  switch (charset_) {
    case Charset::Utf8:
      // writeUtf8 copies well-formed text exactly; the replacing path reserves 3 bytes a byte.
      return utf8::isValidUtf8(reinterpret_cast<const std::byte*>(msg.data()), n) ? n
                                                                                  : capped(n, 3);
    case Charset::Ascii:
    case Charset::Latin1:
      return n;
    case Charset::Utf16BE:
    case Charset::Utf16LE:
      return capped(n, 2);
  }
  return n;
}

void StringEncoder::encode(const std::string& msg, ByteBuf& out) const {
  out.writeCharSequence(std::string_view(msg), charset_);
}

ByteBuf StringEncoder::encode(std::u16string_view text) {
  const std::size_t n = text.size();
  std::size_t hint = n;
  if (charset_ == Charset::Utf8) {
    hint = capped(n, 3);  // utf8MaxBytes: writeUtf8's reservation
  } else if (charset_ == Charset::Utf16BE || charset_ == Charset::Utf16LE) {
    hint = capped(n, 2);
  }
  ByteBuf buf = alloc().buffer(hint);
  buf.writeCharSequence(text, charset_);
  return buf;
}

ByteBuf StringEncoder::encode(std::u32string_view text) {
  const std::size_t n = text.size();
  if (charset_ == Charset::Utf8) {
    ByteBuf buf = alloc().buffer(capped(n, 4));  // writeUtf8's reservation
    buf.writeUtf8(text);
    return buf;
  }
  if (charset_ == Charset::Ascii || charset_ == Charset::Latin1) {
    const char32_t max = charset_ == Charset::Ascii ? 0x7F : 0xFF;
    ByteBuf buf = alloc().buffer(n);
    buf.ensureWritable(n);
    std::byte* d = buf.writePtrUnchecked();
    for (std::size_t i = 0; i < n; ++i)
      d[i] = static_cast<std::byte>(text[i] <= max ? text[i] : U'?');
    buf.advanceWriterUnchecked(n);
    return buf;
  }
  // UTF-16: size exactly (one pass), then write unchecked.
  const bool big = charset_ == Charset::Utf16BE;
  std::size_t units = 0;
  for (char32_t c : text) units += validScalar(c) && c > 0xFFFF ? 2 : 1;
  const std::size_t bytes = 2 * units;
  ByteBuf buf = alloc().buffer(std::min(bytes, kDefaultMaxCapacity));
  buf.ensureWritable(bytes);
  std::byte* d = buf.writePtrUnchecked();
  for (char32_t c : text) {
    if (!validScalar(c)) {
      putUnit(d, u'?', big);
      d += 2;
    } else if (c > 0xFFFF) {
      const char32_t v = c - 0x10000;
      putUnit(d, static_cast<char16_t>(0xD800 + (v >> 10)), big);
      putUnit(d + 2, static_cast<char16_t>(0xDC00 + (v & 0x3FF)), big);
      d += 4;
    } else {
      putUnit(d, static_cast<char16_t>(c), big);
      d += 2;
    }
  }
  buf.advanceWriterUnchecked(bytes);
  return buf;
}

}  // namespace netbuf
