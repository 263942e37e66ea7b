#include <netbuf/codec/message_to_message_decoder.hpp>

#include <doctest/doctest.h>
#include <netbuf/codec/decoder_runner.hpp>

using namespace netbuf;

namespace {

/// Splits a text message into words; an empty message is a DecoderError; "boom" a logic error.
struct WordDecoder : MessageToMessageDecoder<WordDecoder, std::string, std::string> {
  void decode(std::string msg, std::vector<std::string>& out) {
    if (msg.empty()) throw DecoderError("empty message", 7);
    if (msg == "boom") throw std::logic_error("boom");
    std::size_t from = 0;
    while (from <= msg.size()) {
      const std::size_t sp = std::min(msg.find(' ', from), msg.size());
      out.push_back(msg.substr(from, sp - from));
      from = sp + 1;
    }
  }
};

}  // namespace

TEST_CASE("MessageToMessageDecoder: zero or more messages out per message in") {
  WordDecoder d;
  std::vector<std::string> out;
  d.channelRead("a bc d", out);
  CHECK(out == std::vector<std::string>{"a", "bc", "d"});
  d.channelReadComplete();
  d.channelInactive(out);
  CHECK(out.size() == 3);
}

TEST_CASE("MessageToMessageDecoder: codec errors go to the handler, others propagate") {
  WordDecoder d;
  std::vector<std::string> out;
  std::vector<std::exception_ptr> errors;
  d.channelRead("", out, [&](std::exception_ptr e) { errors.push_back(e); });
  REQUIRE(errors.size() == 1);
  CHECK_THROWS_AS(std::rethrow_exception(errors[0]), DecoderError);
  CHECK_THROWS_AS(d.channelRead("", out), DecoderError);
  CHECK_THROWS_AS(d.channelRead("boom", out, [](std::exception_ptr) {}), std::logic_error);
  d.channelRead("x", out);  // still usable
  CHECK(out == std::vector<std::string>{"x"});
  DecoderRunner<WordDecoder> run;
  run.feed(std::string("p q")).feed(std::string("")).finish();
  CHECK(run.messages() == std::vector<std::string>{"p", "q"});
  CHECK(run.errors().size() == 1);
}
