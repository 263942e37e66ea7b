#pragma once
// MessagePackDecoder: a pipeline decoder from a byte stream of concatenated top-level MessagePack
// values to one Document per value (a ByteToMessageDecoder<MessagePackDecoder, Document>).
//
// - Framing is incremental: a resumable scanner walks the value's headers (a stack of remaining
//   element counts, at most maxDepth deep, and the bytes of a str/bin/ext payload still to pass),
//   so a value arriving one byte at a time is scanned once, in linear time. When the value is
//   complete, its bytes are taken as a retained slice of the cumulation (zero copy; a composite
//   cumulation is made contiguous first, only for frames that straddle reads) and decoded with
//   msgpack::decode into a Document that keeps the slice alive.
// - Limits (MessagePackReadOptions::limits) are checked by the scanner as headers arrive, before
//   the bytes are buffered: a declared str/bin/ext length or container count above its limit, or
//   a value passing maxMessageSize, is reported (MessagePackError with the stream offset) as soon
//   as the header is seen; the rest of that value is then discarded as it streams in (its
//   structure is still followed, nothing is buffered) and decoding resumes with the next value.
// - ReservedByte (0xc1) and DepthLimit leave the stream without a known structure: the decoder
//   reports the error once and then discards all further input (the stream is corrupt; the
//   channel should be closed). isCorrupted() tells.
// - Errors found when decoding a complete frame (InvalidUtf8, InvalidTimestamp, DuplicateKey) drop
//   that value only (its bytes are consumed) and decoding continues.
// - Bytes of an incomplete value at end of stream are dropped without an error (as Netty's frame
//   decoders do).
//
// Ownership and threading: as every ByteToMessageDecoder (one channel, one thread).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/byte_to_message_decoder.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/msgpack/message_pack_error.hpp>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>
#include <span>
#include <vector>

namespace netbuf {

class MessagePackDecoder : public ByteToMessageDecoder<MessagePackDecoder, Document> {
 public:
  explicit MessagePackDecoder(const MessagePackReadOptions& options = {},
                              Cumulator cumulator = Cumulator::Merge,
                              ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator());

  const MessagePackReadOptions& options() const noexcept { return options_; }
  /// True after a ReservedByte or DepthLimit error: all further input is discarded.
  bool isCorrupted() const noexcept { return state_ == State::Corrupted; }

  template <class Buf>
  void decode(Buf& in, std::vector<Document>& out) {
    // One value per call. Value state: scan the bytes not yet scanned (the value's bytes stay in
    // the cumulation) and emit when complete. Discard state: scan and consume everything scanned.
    for (;;) {
      const std::size_t readable = in.readableBytes();
      if (state_ == State::Corrupted) {
        in.skipBytes(readable);
        return;
      }
      if (scanned_ == readable) return;
      if (!active_) startValue(streamOffset(in));
      Stop stop = Stop::More;
      in.forEachSegment(in.readerIndex() + scanned_, readable - scanned_,
                        [&](std::span<const std::byte> seg) {
                          stop = scan(seg.data(), seg.size());
                          return stop == Stop::More;
                        });
      if (state_ == State::Discard) {
        in.skipBytes(scanned_);
        scanned_ = 0;
        if (stop == Stop::Corrupt) corrupt(in);  // throws
        if (stop == Stop::Complete) {
          finishValue();
          continue;  // the next value may already be here
        }
        return;
      }
      switch (stop) {
        case Stop::More:
          return;
        case Stop::Complete: {
          const std::size_t length = scanned_;
          const std::uint64_t offset = valueStart_;
          finishValue();
          // Consumed before decoding, so a decoding error drops this value only.
          ByteBuf frame = toContiguous(readFrame(in, length));
          // The tree needs at most 16 arena bytes per input byte (every element takes >= 1 byte,
          // every 32-byte map pair >= 2): small messages get a small first block, not 4 KiB.
          out.emplace_back(std::min(Document::kDefaultFirstBlock, length * 16 + 64));
          try {
            msgpack::decode(std::move(frame), out.back(), options_, offset);
          } catch (...) {
            out.pop_back();
            throw;
          }
          return;
        }
        case Stop::Limit:
          startDiscarding(in);  // throws
        case Stop::Corrupt:
          corrupt(in);  // throws
      }
    }
  }

  /// End of stream: an incomplete value is dropped without an error; the scanner is reset (a
  /// corrupted decoder stays corrupted).
  template <class Buf>
  void decodeLast(Buf&, std::vector<Document>&) {
    finishValue();
  }

 private:
  enum class State : std::uint8_t {
    Value,      // scanning a value whose bytes stay in the cumulation until it is complete
    Discard,    // following the structure of a value that broke a limit, consuming it
    Corrupted,  // after ReservedByte / DepthLimit: everything is discarded
  };
  enum class Stop : std::uint8_t { More, Complete, Limit, Corrupt };

  /// Scans n bytes (the next ones of the current value), updating the scanner state and scanned_;
  /// stops after the value's last byte (Complete), after the header that broke a limit (Limit,
  /// error recorded; only in Value state), at a 0xc1 byte or a container past maxDepth (Corrupt,
  /// error recorded), or when the bytes run out (More).
  Stop scan(const std::byte* p, std::size_t n);
  void startValue(std::uint64_t streamOffset);
  /// Forgets the current value (Discard ends; Corrupted stays).
  void finishValue() noexcept;

  /// Consumes the scanned bytes (the offending header included), switches to Discard (or straight
  /// to the next value when the offending header was the value's last byte) and throws the
  /// recorded error.
  template <class Buf>
  [[noreturn]] void startDiscarding(Buf& in) {
    in.skipBytes(scanned_);
    scanned_ = 0;
    if (valueDone()) {
      finishValue();
    } else {
      state_ = State::Discard;
    }
    throwRecorded();
  }
  /// Consumes everything readable, enters Corrupted and throws the recorded error.
  template <class Buf>
  [[noreturn]] void corrupt(Buf& in) {
    in.skipBytes(in.readableBytes());
    scanned_ = 0;
    finishValue();
    state_ = State::Corrupted;
    throwRecorded();
  }
  bool valueDone() const noexcept { return stack_.empty() && skip_ == 0 && hdrHave_ == 0; }
  [[noreturn]] void throwRecorded() const;
  void record(MessagePackErrc code, std::uint64_t at, std::uint64_t value, std::uint64_t limit);

  MessagePackReadOptions options_;

  // Scanner state. Invariant (Value state): the scanned_ bytes after readerIndex are the current
  // value's first scanned_ bytes and have been applied to the state below. In Discard state
  // scanned bytes are consumed at the end of each decode() call.
  State state_ = State::Value;
  bool active_ = false;           // a value has started (valueStart_ is set)
  std::size_t scanned_ = 0;       // bytes after readerIndex already scanned
  std::uint64_t valueStart_ = 0;  // stream offset of the current value's first byte
  std::uint64_t valuePos_ = 0;    // bytes of the current value scanned so far (discarded included)
  std::uint64_t itemPos_ = 0;     // value-relative offset of the header being read
  std::uint64_t skip_ = 0;        // payload bytes of the current str/bin/ext still to pass
  std::uint64_t pending_ = 0;     // sum of stack_: items still expected (each >= 1 byte)
  // Remaining items of each open container, outermost first, under a pseudo-frame for the
  // top-level value; its size is the depth of the next container (at most maxDepth + 1 entries).
  std::vector<std::uint64_t> stack_;
  std::uint8_t hdr_[9] = {};  // the header being read (numbers: with their bytes), <= 9 bytes
  std::uint8_t hdrHave_ = 0;  // bytes of it seen (0: between items)
  std::uint8_t hdrNeed_ = 0;  // its size
  // The error recorded by scan() (thrown after the bytes are consumed).
  MessagePackErrc errCode_ = MessagePackErrc::Truncated;
  std::uint64_t errAt_ = 0;
  std::uint64_t errValue_ = 0;
  std::uint64_t errLimit_ = 0;
};

}  // namespace netbuf
