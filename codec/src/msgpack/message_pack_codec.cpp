#include <netbuf/codec/msgpack/message_pack_decoder.hpp>
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>

#include "message_pack_wire.hpp"

namespace netbuf {

using namespace detail;  // NOLINT: the internal wire helpers

MessagePackDecoder::MessagePackDecoder(const MessagePackReadOptions& options, Cumulator cumulator,
                                       ByteBufAllocator& alloc)
    : ByteToMessageDecoder(cumulator, alloc), options_(options) {}

void MessagePackDecoder::startValue(std::uint64_t streamOffset) {
  active_ = true;
  valueStart_ = streamOffset;
  valuePos_ = 0;
  itemPos_ = 0;
  skip_ = 0;
  hdrHave_ = hdrNeed_ = 0;
  stack_.clear();
  stack_.push_back(1);  // the pseudo-frame: one top-level value expected
  pending_ = 1;
}

void MessagePackDecoder::finishValue() noexcept {
  if (state_ == State::Discard) state_ = State::Value;
  active_ = false;
  scanned_ = 0;
  skip_ = 0;
  hdrHave_ = hdrNeed_ = 0;
  stack_.clear();
  pending_ = 0;
}

void MessagePackDecoder::record(MessagePackErrc code, std::uint64_t at, std::uint64_t value,
                                std::uint64_t limit) {
  errCode_ = code;
  errAt_ = at;
  errValue_ = value;
  errLimit_ = limit;
}

void MessagePackDecoder::throwRecorded() const {
  const std::uint64_t offset = valueStart_ + errAt_;
  const char* what = "";
  const char* limitName = "";
  switch (errCode_) {
    case MessagePackErrc::ReservedByte:
      detail::throwMessagePackError(errCode_, "reserved byte 0xc1", offset, 0xc1);
    case MessagePackErrc::DepthLimit:
      what = "nesting depth";
      limitName = "maxDepth";
      break;
    case MessagePackErrc::ContainerLengthLimit:
      what = "container length";
      limitName = "maxContainerLength";
      break;
    case MessagePackErrc::StrLengthLimit:
      what = "str length";
      limitName = "maxStrLength";
      break;
    case MessagePackErrc::BinLengthLimit:
      what = "bin length";
      limitName = "maxBinLength";
      break;
    case MessagePackErrc::ExtLengthLimit:
      what = "ext length";
      limitName = "maxExtLength";
      break;
    default:
      what = "message size (at least)";
      limitName = "maxMessageSize";
      break;
  }
  detail::throwMessagePackError(
      errCode_, fmt::format("{} {} exceeds {} {}", what, errValue_, limitName, errLimit_), offset,
      errValue_, errLimit_);
}

MessagePackDecoder::Stop MessagePackDecoder::scan(const std::byte* p, std::size_t n) {
  const bool limits = state_ == State::Value;
  const MessagePackLimits& lim = options_.limits;
  std::size_t i = 0;
  Stop stop = Stop::More;
  while (i < n) {
    if (skip_ != 0) {  // payload bytes: passed over in one step
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, n - i));
      i += take;
      skip_ -= take;
      if (skip_ == 0 && stack_.empty()) {
        stop = Stop::Complete;
        break;
      }
      continue;
    }
    if (hdrHave_ == 0) {  // a new item
      itemPos_ = valuePos_ + i;
      const std::uint8_t b = std::to_integer<std::uint8_t>(p[i]);
      if (b == 0xc1) {
        record(MessagePackErrc::ReservedByte, itemPos_, 0xc1, CodecError::kNone);
        ++i;
        stop = Stop::Corrupt;
        break;
      }
      hdrNeed_ = headInfo(b).hdr;
    }
    // Gather the header (most are one byte and complete at once).
    while (hdrHave_ < hdrNeed_ && i < n) hdr_[hdrHave_++] = std::to_integer<std::uint8_t>(p[i++]);
    if (hdrHave_ < hdrNeed_) break;  // straddles: wait for more
    hdrHave_ = 0;
    const std::byte* hp = reinterpret_cast<const std::byte*>(hdr_);
    const HeadInfo info = headInfo(hdr_[0]);
    const Head h = readHead(hp, info);
    // The item is one of its parent's items.
    --stack_.back();
    --pending_;
    bool broke = false;
    switch (h.kind) {
      case Kind::Str:
      case Kind::Bin:
      case Kind::Ext: {
        const std::size_t max = h.kind == Kind::Str   ? lim.maxStrLength
                                : h.kind == Kind::Bin ? lim.maxBinLength
                                                      : lim.maxExtLength;
        if (limits && h.v > max) {
          record(h.kind == Kind::Str   ? MessagePackErrc::StrLengthLimit
                 : h.kind == Kind::Bin ? MessagePackErrc::BinLengthLimit
                                       : MessagePackErrc::ExtLengthLimit,
                 itemPos_, h.v, max);
          broke = true;
        }
        skip_ = h.v;
        break;
      }
      case Kind::Array:
      case Kind::Map: {
        if (limits && h.v > lim.maxContainerLength) {
          record(MessagePackErrc::ContainerLengthLimit, itemPos_, h.v, lim.maxContainerLength);
          broke = true;
        }
        if (stack_.size() > lim.maxDepth) {  // stack_.size() is this container's depth
          record(MessagePackErrc::DepthLimit, itemPos_, stack_.size(), lim.maxDepth);
          stop = Stop::Corrupt;
          break;
        }
        const std::uint64_t items = h.kind == Kind::Map ? 2 * h.v : h.v;
        if (items != 0) {
          stack_.push_back(items);
          pending_ += items;
        }
        break;
      }
      default:
        break;
    }
    if (stop == Stop::Corrupt) break;
    // Pop the containers this item completed (a non-empty container just opened keeps its
    // parent below it, so the stack's size stays the nesting depth).
    while (!stack_.empty() && stack_.back() == 0) stack_.pop_back();
    if (limits && !broke) {
      // The value needs at least: the bytes so far, this payload, and one byte per pending item.
      const std::uint64_t atLeast = valuePos_ + i + skip_ + pending_;
      if (atLeast > lim.maxMessageSize) {
        record(MessagePackErrc::MessageSizeLimit, 0, atLeast, lim.maxMessageSize);
        broke = true;
      }
    }
    if (broke) {
      stop = Stop::Limit;
      break;
    }
    if (skip_ == 0 && stack_.empty()) {
      stop = Stop::Complete;
      break;
    }
  }
  valuePos_ += i;
  scanned_ += i;
  return stop;
}

}  // namespace netbuf
