// libFuzzer target for StringDecoder and StringEncoder (string_codec.hpp).
//
// Input layout: byte 0 chooses two split points (for a three-component composite frame); the rest
// is the text. Invariants, for any bytes:
//  - Replace never throws, returns well-formed UTF-8 (utf8::isValidUtf8), equals the input when the
//    input is well-formed, and re-encoding it with StringEncoder (UTF-8) gives it back unchanged;
//  - Strict throws (only CorruptedFrameError) exactly when the input is ill-formed, at the offset
//    utf8::firstInvalidUtf8 names, and otherwise returns the input;
//  - a composite frame holding the same bytes in three components decodes identically;
//  - the other charsets encode without error into one buffer of at most sizeHint bytes, with the
//    lengths the charset implies; the UTF-16 and UTF-32 overloads behave likewise.
#include <netbuf/codec/string_decoder.hpp>
#include <netbuf/codec/string_encoder.hpp>

#include <cstdint>
#include <cstdlib>
#include <netbuf/buffer/utf8.hpp>
#include <string>
#include <string_view>

namespace {

using namespace netbuf;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

struct StrictResult {
  bool threw = false;
  std::uint64_t offset = 0;
  std::string text;
};

StrictResult strict(const AnyByteBuf& f) {
  StrictResult r;
  try {
    r.text = StringDecoder(Utf8Policy::Strict).decode(f);
  } catch (const CorruptedFrameError& e) {
    r.threw = true;
    r.offset = e.offset();
  }
  return r;
}

std::string str(const ByteBuf& b) { return std::string(b.readableStringView()); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  const bool valid = utf8::isValidUtf8(bytes, text.size());

  const AnyByteBuf flat(std::in_place_type<ByteBuf>,
                        Unpooled::copiedBuffer(std::string_view(text)));
  // The same bytes as a composite of three components.
  const std::size_t a = text.empty() ? 0 : (data[0] & 0x0F) % (text.size() + 1);
  const std::size_t b = a + (text.empty() ? 0 : (data[0] >> 4) % (text.size() - a + 1));
  CompositeByteBuf c = ByteBufAllocator::defaultAllocator().compositeBuffer(8);
  c.addComponent(true, Unpooled::copiedBuffer(std::string_view(text).substr(0, a)));
  c.addComponent(true, Unpooled::copiedBuffer(std::string_view(text).substr(a, b - a)));
  c.addComponent(true, Unpooled::copiedBuffer(std::string_view(text).substr(b)));
  const AnyByteBuf composite(std::move(c));

  // Replace.
  std::string replaced;
  try {
    replaced = StringDecoder().decode(flat);
    require(StringDecoder().decode(composite) == replaced);
  } catch (...) {
    require(false);
  }
  require(utf8::isValidUtf8(reinterpret_cast<const std::byte*>(replaced.data()), replaced.size()));
  if (valid) require(replaced == text);
  StringEncoder utf8Encoder;
  require(str(utf8Encoder.encodeToBuffer(replaced)) == replaced);

  // Strict.
  const StrictResult s = strict(flat);
  require(s.threw == !valid);
  if (s.threw) {
    require(s.offset == utf8::firstInvalidUtf8(bytes, text.size()));
  } else {
    require(s.text == text);
  }
  const StrictResult sc = strict(composite);
  require(sc.threw == s.threw && sc.offset == s.offset && sc.text == s.text);

  // Encoders: every charset, std::string, UTF-16 and UTF-32 input.
  std::u16string u16(text.size() / 2, u'\0');
  for (std::size_t i = 0; i < u16.size(); ++i)
    u16[i] = static_cast<char16_t>(data[1 + 2 * i] | (data[2 + 2 * i] << 8));
  std::u32string u32(text.size() / 4, U'\0');
  for (std::size_t i = 0; i < u32.size(); ++i)
    u32[i] = static_cast<char32_t>(data[1 + 4 * i]) |
             (static_cast<char32_t>(data[2 + 4 * i]) << 8) |
             (static_cast<char32_t>(data[3 + 4 * i]) << 16) |
             (static_cast<char32_t>(data[4 + 4 * i] & 0x11) << 24);
  for (Charset cs :
       {Charset::Utf8, Charset::Ascii, Charset::Latin1, Charset::Utf16BE, Charset::Utf16LE}) {
    StringEncoder enc(cs);
    const ByteBuf out = enc.encodeToBuffer(text);
    require(out.capacity() == enc.sizeHint(text));  // sized once, never grown
    require(out.readableBytes() <= out.capacity());
    switch (cs) {
      case Charset::Utf8:
        require(str(out) == replaced);
        break;
      case Charset::Ascii:
        require(out.isAscii() && out.readableBytes() <= text.size());
        break;
      case Charset::Latin1:
        require(out.readableBytes() <= text.size());
        break;
      case Charset::Utf16BE:
      case Charset::Utf16LE:
        require(out.readableBytes() == 2 * utf8::utf16Length(text));
        break;
    }
    const ByteBuf o16 = enc.encode(std::u16string_view(u16));
    const ByteBuf o32 = enc.encode(std::u32string_view(u32));
    require(o16.readableBytes() <= o16.capacity() && o32.readableBytes() <= o32.capacity());
    if (cs == Charset::Utf8) {
      require(o16.isValidUtf8() && o32.isValidUtf8());
      require(o16.readableBytes() == utf8::utf8Bytes(std::u16string_view(u16)));
      require(o32.readableBytes() == utf8::utf8Bytes(std::u32string_view(u32)));
    } else if (cs == Charset::Ascii || cs == Charset::Latin1) {
      require(o16.readableBytes() == u16.size() && o32.readableBytes() == u32.size());
      if (cs == Charset::Ascii) require(o16.isAscii() && o32.isAscii());
    } else {
      require(o16.readableBytes() == 2 * u16.size());
      // UTF-32 -> UTF-16 -> UTF-8 equals UTF-32 -> UTF-8 (invalid code points are '?' in both).
      std::u16string units(o32.readableBytes() / 2, u'\0');
      const auto* q = reinterpret_cast<const unsigned char*>(o32.readableStringView().data());
      const bool big = cs == Charset::Utf16BE;
      for (std::size_t i = 0; i < units.size(); ++i)
        units[i] = static_cast<char16_t>(big ? (q[2 * i] << 8) | q[2 * i + 1]
                                             : q[2 * i] | (q[2 * i + 1] << 8));
      const ByteBuf viaU16 = StringEncoder().encode(std::u16string_view(units));
      const ByteBuf direct = StringEncoder().encode(std::u32string_view(u32));
      require(str(viaU16) == str(direct));
    }
  }
  return 0;
}
