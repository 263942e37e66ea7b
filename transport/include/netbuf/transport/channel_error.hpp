#pragma once
// ChannelErrc: why a channel operation failed, as the std::error_code a WriteListener receives
// (category "netbuf.channel").
//
// Each code also compares equal to the closest portable condition, so code that tests
// `ec == std::errc::not_connected` (a write on a closed channel) or
// `ec == std::errc::operation_canceled` (a queued write the close failed) keeps working:
//
//     closed                  -> std::errc::not_connected
//     closedBeforeWritten     -> std::errc::operation_canceled
//     unsupportedMessageType  -> std::errc::invalid_argument
//     writeFailed             -> std::errc::invalid_argument
//     handlerRemoved          -> std::errc::operation_canceled
//     rejected                -> std::errc::operation_canceled
//     writeTimeout            -> std::errc::timed_out
//     initializerFailed       -> std::errc::operation_canceled
//     exceptionCaught         -> std::errc::io_error
//     noReceiveQueue          -> std::errc::invalid_argument

#include <string>
#include <system_error>
#include <type_traits>

namespace netbuf {

enum class ChannelErrc : int {
  /// The channel was closed (or its output shut down) before the write was offered.
  closed = 1,
  /// The channel closed while the write was queued: its bytes did not all reach the socket.
  closedBeforeWritten,
  /// The message reached the head of the pipeline and is not bytes (no encoder took it). The
  /// MessageTypeError naming its type goes to the pipeline's exception path too.
  unsupportedMessageType,
  /// A handler threw while the write passed it (an encoder's EncoderError, for example); the
  /// exception goes to the pipeline's exception path too.
  writeFailed,
  /// The write was handed to the loop from another thread through a handler context that was
  /// removed from the pipeline before the loop ran it.
  handlerRemoved,
  /// The channel's event loop has shut down: the operation was never run.
  rejected,
  /// WriteTimeoutHandler: the write was not written within its timeout.
  writeTimeout,
  /// A connection was made but the bootstrap's handler (the channel's initializer) threw: the
  /// channel was closed (the exception is logged by the loop).
  initializerFailed,
  /// Channel::receive<T>(): an exception went through the pipeline (a decoder's error, a
  /// handler's throw) and closed the channel; ReceiveQueue::exception() holds it.
  exceptionCaught,
  /// Channel::receive<T>() on a channel whose pipeline has no ReceiveQueue<T> at its tail.
  noReceiveQueue,
};

const std::error_category& channelCategory() noexcept;

inline std::error_code make_error_code(ChannelErrc e) noexcept {
  return {static_cast<int>(e), channelCategory()};
}

}  // namespace netbuf

template <>
struct std::is_error_code_enum<netbuf::ChannelErrc> : std::true_type {};
