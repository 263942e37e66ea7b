#include <netbuf/transport/channel_error.hpp>

#include <doctest/doctest.h>

#include <netbuf/transport/error_code.hpp>

#include <ostream>
#include <string>
#include <system_error>

using namespace netbuf;

TEST_CASE("ChannelErrc: a category of its own, each code equal to the nearest std::errc") {
  const std::error_code closed = ChannelErrc::closed;
  CHECK(closed.category() == channelCategory());
  CHECK(std::string(channelCategory().name()) == "netbuf.channel");
  CHECK(closed.message() == "channel closed");
  CHECK(closed == std::errc::not_connected);
  CHECK(closed != std::errc::operation_canceled);
  CHECK(std::error_code(ChannelErrc::closedBeforeWritten) == std::errc::operation_canceled);
  CHECK(std::error_code(ChannelErrc::handlerRemoved) == std::errc::operation_canceled);
  CHECK(std::error_code(ChannelErrc::rejected) == std::errc::operation_canceled);
  CHECK(std::error_code(ChannelErrc::initializerFailed) == std::errc::operation_canceled);
  CHECK(std::error_code(ChannelErrc::unsupportedMessageType) == std::errc::invalid_argument);
  CHECK(std::error_code(ChannelErrc::writeFailed) == std::errc::invalid_argument);
  CHECK(std::error_code(ChannelErrc::writeTimeout) == std::errc::timed_out);
  CHECK(std::error_code(ChannelErrc::exceptionCaught) == std::errc::io_error);
  CHECK(std::error_code(ChannelErrc::noReceiveQueue) == std::errc::invalid_argument);
  // Every code has a message of its own.
  for (int c = 1; c <= static_cast<int>(ChannelErrc::noReceiveQueue); ++c) {
    const std::error_code ec(c, channelCategory());
    CAPTURE(c);
    CHECK(ec.message().find("unknown") == std::string::npos);
  }
  CHECK(std::error_code(99, channelCategory()).message() == "unknown channel error 99");
  CHECK(std::error_code(99, channelCategory()).default_error_condition().category() ==
        channelCategory());
}

TEST_CASE("ChannelErrc in ErrorCode, Asio's error code: the same comparisons") {
  const ErrorCode ec = ChannelErrc::closed;
  CHECK(ec == ChannelErrc::closed);
  CHECK(ec == std::errc::not_connected);
  CHECK(ec.message() == "channel closed");
  const std::error_code back = ec;
  CHECK(back == ChannelErrc::closed);
  CHECK(back.category() == channelCategory());
}
