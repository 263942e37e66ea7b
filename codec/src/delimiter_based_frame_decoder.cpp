#include <fmt/format.h>
#include <netbuf/codec/delimiter_based_frame_decoder.hpp>
#include <utility>

namespace netbuf {

std::vector<std::string> Delimiters::nulDelimiter() { return {std::string(1, '\0')}; }

std::vector<std::string> Delimiters::lineDelimiter() { return {"\r\n", "\n"}; }

DelimiterBasedFrameDecoder::DelimiterBasedFrameDecoder(std::size_t maxFrameLength,
                                                       bool stripDelimiter, bool failFast,
                                                       std::vector<std::string> delimiters,
                                                       Cumulator cumulator, ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc),
      maxFrameLength_(maxFrameLength),
      stripDelimiter_(stripDelimiter),
      failFast_(failFast),
      delimiters_(std::move(delimiters)) {
  if (maxFrameLength_ == 0)
    throw IllegalArgumentError(fmt::format("maxFrameLength: {} (expected: > 0)", maxFrameLength_));
  if (delimiters_.empty())
    throw IllegalArgumentError("delimiters: none given (expected: at least one)");
  for (std::size_t i = 0; i < delimiters_.size(); ++i) {
    if (delimiters_[i].empty())
      throw IllegalArgumentError(
          fmt::format("delimiters[{}]: empty delimiter (expected: at least one byte)", i));
    maxDelimLength_ = std::max(maxDelimLength_, delimiters_[i].size());
  }
}

DelimiterBasedFrameDecoder::DelimiterBasedFrameDecoder(std::size_t maxFrameLength,
                                                       std::string delimiter, Cumulator cumulator,
                                                       ByteBufAllocator& alloc)
    : DelimiterBasedFrameDecoder(maxFrameLength, true, true,
                                 std::vector<std::string>{std::move(delimiter)}, cumulator, alloc) {
}

DelimiterBasedFrameDecoder::DelimiterBasedFrameDecoder(std::size_t maxFrameLength,
                                                       std::vector<std::string> delimiters,
                                                       Cumulator cumulator, ByteBufAllocator& alloc)
    : DelimiterBasedFrameDecoder(maxFrameLength, true, true, std::move(delimiters), cumulator,
                                 alloc) {}

void DelimiterBasedFrameDecoder::failTooLong(std::uint64_t offset, std::uint64_t length,
                                             bool complete) const {
  throw TooLongFrameError(
      fmt::format(
          "TooLongFrameError: frame length {}{} exceeds maxFrameLength {} at stream offset {}",
          complete ? "" : "at least ", length, maxFrameLength_, offset),
      offset, length, maxFrameLength_);
}

}  // namespace netbuf
