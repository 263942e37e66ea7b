#include <netbuf/codec/codec_errors.hpp>

#include <doctest/doctest.h>

using namespace netbuf;

TEST_CASE("Codec errors: one hierarchy under netbuf::Error, with offset, value and limit") {
  try {
    throw TooLongFrameError("too long", 12, 70000, 65536);
  } catch (const DecoderError& e) {
    CHECK(std::string(e.what()) == "too long");
    CHECK(e.offset() == 12);
    CHECK(e.value() == 70000);
    CHECK(e.limit() == 65536);
  }
  CHECK_THROWS_AS(throw CorruptedFrameError("c", 1), DecoderError);
  CHECK_THROWS_AS(throw CorruptedFrameError("c", 1), Error);
  CHECK_THROWS_AS(throw EncoderError("e", CodecError::kNone), CodecError);
  const DecoderError plain("plain", 3);
  CHECK(plain.value() == CodecError::kNone);
  CHECK(plain.limit() == CodecError::kNone);
  // An encoder error is not a decoder error.
  bool caughtAsDecoder = false;
  try {
    throw EncoderError("e", 0);
  } catch (const DecoderError&) {
    caughtAsDecoder = true;
  } catch (const CodecError&) {
  }
  CHECK_FALSE(caughtAsDecoder);
}
