// libFuzzer target for <netbuf/buffer/utf8.hpp>: the input is used both as UTF-8 bytes and as
// UTF-16 units. Every tier is cross-checked against the scalar tier, and properties that hold for
// any input are asserted: replacing output is well-formed and equals the input when that was
// well-formed, lengths predicted by the counting kernels match what the writers write, and valid
// text survives UTF-8 -> UTF-16 -> UTF-8 unchanged.
#include <netbuf/buffer/utf8.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace netbuf::utf8;

void require(bool ok) {
  if (!ok) std::abort();
}

struct Outputs {
  std::size_t firstInvalid = 0, replacingBytes = 0, utf16Len = 0;
  bool ascii = false;
  std::string replacing, latin1, utf8FromU16, utf8FromU32;
  std::u16string utf16;
};

Outputs runAll(std::string_view in, std::u16string_view u16, std::u32string_view u32) {
  const auto* p = reinterpret_cast<const std::byte*>(in.data());
  Outputs o;
  o.firstInvalid = firstInvalidUtf8(p, in.size());
  require(isValidUtf8(p, in.size()) == (o.firstInvalid == npos));
  o.ascii = isAscii(p, in.size());
  o.replacingBytes = utf8ReplacingBytes(in);
  o.utf16Len = utf16Length(in);

  o.replacing.assign(3 * in.size(), '\0');
  o.replacing.resize(copyUtf8Replacing(in, reinterpret_cast<std::byte*>(o.replacing.data())));
  require(o.replacing.size() == o.replacingBytes);

  o.utf16.assign(in.size(), u'\0');
  o.utf16.resize(utf8ToUtf16(in, o.utf16.data()));
  require(o.utf16.size() == o.utf16Len);

  std::string be(2 * in.size(), '\0');
  be.resize(utf8ToUtf16Bytes(in, reinterpret_cast<std::byte*>(be.data()), true));
  require(be.size() == 2 * o.utf16.size());
  for (std::size_t k = 0; k < o.utf16.size(); ++k)
    require(static_cast<unsigned char>(be[2 * k]) == (o.utf16[k] >> 8) &&
            static_cast<unsigned char>(be[2 * k + 1]) == (o.utf16[k] & 0xFF));

  o.latin1.assign(in.size(), '\0');
  o.latin1.resize(utf8ToLatin1(in, reinterpret_cast<std::byte*>(o.latin1.data())));

  o.utf8FromU16.assign(utf8MaxBytes(u16.size()), '\0');
  o.utf8FromU16.resize(encodeUtf8(u16, reinterpret_cast<std::byte*>(o.utf8FromU16.data())));
  require(o.utf8FromU16.size() == utf8Bytes(u16));

  o.utf8FromU32.assign(4 * u32.size(), '\0');
  o.utf8FromU32.resize(encodeUtf8(u32, reinterpret_cast<std::byte*>(o.utf8FromU32.data())));
  require(o.utf8FromU32.size() == utf8Bytes(u32));
  return o;
}

bool same(const Outputs& a, const Outputs& b) {
  return a.firstInvalid == b.firstInvalid && a.replacingBytes == b.replacingBytes &&
         a.utf16Len == b.utf16Len && a.ascii == b.ascii && a.replacing == b.replacing &&
         a.latin1 == b.latin1 && a.utf8FromU16 == b.utf8FromU16 && a.utf8FromU32 == b.utf8FromU32 &&
         a.utf16 == b.utf16;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  std::u16string u16(size / 2, u'\0');
  std::memcpy(u16.data(), data, 2 * u16.size());
  std::u32string u32(size / 4, U'\0');
  std::memcpy(u32.data(), data, 4 * u32.size());

  forceIsa(Isa::Scalar);
  const Outputs ref = runAll(in, u16, u32);
  for (Isa isa : {Isa::Sse2, Isa::Avx2, Isa::Avx512}) {
    forceIsa(isa);
    if (activeIsa() != isa) continue;  // tier not available on this CPU
    require(same(runAll(in, u16, u32), ref));
  }
  resetIsa();

  // Properties of the replacing copy.
  const auto* rp = reinterpret_cast<const std::byte*>(ref.replacing.data());
  require(isValidUtf8(rp, ref.replacing.size()));
  if (ref.firstInvalid == npos) {
    require(ref.replacing == in);
    // Valid UTF-8 survives the round trip through UTF-16.
    std::string back(utf8MaxBytes(ref.utf16.size()), '\0');
    back.resize(
        encodeUtf8(std::u16string_view(ref.utf16), reinterpret_cast<std::byte*>(back.data())));
    require(back == in);
  } else {
    require(ref.firstInvalid < size);
    // The prefix before the first error is well-formed and copied unchanged.
    require(isValidUtf8(reinterpret_cast<const std::byte*>(data), ref.firstInvalid));
    require(ref.replacing.compare(0, ref.firstInvalid, in, 0, ref.firstInvalid) == 0);
  }
  // Well-formed UTF-8 made from arbitrary UTF-16 (lone surrogates became '?').
  require(isValidUtf8(reinterpret_cast<const std::byte*>(ref.utf8FromU16.data()),
                      ref.utf8FromU16.size()));
  return 0;
}
