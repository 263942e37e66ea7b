#pragma once
// Lets doctest print decoder transcripts (decoder_transcript.hpp) in full when a CHECK on them
// fails, instead of "{?}". Test programs include this header rather than decoder_transcript.hpp.

#include <doctest/doctest.h>

#include "support/decoder_transcript.hpp"

template <>
struct doctest::StringMaker<netbuf::test::Transcript> {
  static doctest::String convert(const netbuf::test::Transcript& t) {
    return doctest::String(netbuf::test::toString(t).c_str());
  }
};
