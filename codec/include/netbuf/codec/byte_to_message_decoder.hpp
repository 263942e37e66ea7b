#pragma once
// ByteToMessageDecoder: the framework every byte-stream decoder is built on (Netty's class of the
// same name, without the per-message virtual call).
//
// The framework owns the *cumulation*: the bytes received but not yet decoded. Each channelRead()
// appends one input buffer to it and calls the decoder's decode() until the decoder stops making
// progress; decoded messages are appended to an output vector the caller owns (and reuses).
//
//   input reads:    [ r1 ][ r2 ][ r3 ]...
//   cumulation:     |consumed| partial message ...........|  <- decode() sees [readerIndex,
//   writerIndex)
//                   ^ offset 0 of the stream is counted from the first byte ever received
//
// Cumulators (chosen at construction, changeable between reads):
//  - Merge (default): one contiguous ByteBuf. The first read with an empty cumulation is taken as
//    is (no copy). Later reads are copied into its spare room; when there is none, read bytes are
//    compacted away in place if no frame still shares the memory (refCnt() == 1), otherwise the
//    unread bytes and the input move to a fresh buffer (frames keep the old one alive). After each
//    read, Netty's discardSomeReadBytes policy compacts when the unread bytes sit past half the
//    capacity and nothing shares the memory.
//  - Composite: reads are appended as components of a CompositeByteBuf (no copy at all); fully read
//    components are released after each read. Frames that straddle components are composites.
//
// The decoder (Derived) provides, as templates over the cumulation type Buf (ByteBuf or
// CompositeByteBuf, so no virtual call per byte or primitive):
//
//     template <class Buf> void decode(Buf& in, std::vector<Out>& out);
//     template <class Buf> void decodeLast(Buf& in, std::vector<Out>& out);   // optional
//
// decode() reads at most one message from in's readable bytes (advancing readerIndex) and appends
// it to out, or returns without consuming when the message is incomplete. The loop's rules (as
// Netty's callDecode):
//  - decode() that consumes nothing and emits nothing ends the loop until more bytes arrive;
//  - decode() that emits without consuming is a DecoderError (it would spin forever);
//  - decode() that consumes without emitting is called again (it skipped something);
//  - with setSingleDecode(true) the loop ends after the first message (protocol upgrades).
//
// Errors and the state they leave:
//  - A decoder reports bad input by throwing a CodecError *after* consuming the bad bytes (or
//    entering a state that will skip them). The loop catches it, hands it to the error handler
//    passed to channelRead() (the two-argument form rethrows it), and goes on decoding the rest of
//    the cumulation if the decoder made progress, so one bad frame does not delay the good frames
//    behind it. Messages emitted before the error are already in out.
//  - Any other exception (std::bad_alloc, a decoder bug) propagates out of channelRead(). The
//    cumulation keeps the bytes not yet consumed and the decoder keeps its state: the next
//    channelRead() resumes from there.
//  - An exception thrown by the handler itself ends channelRead() the same way.
//
// End of stream: channelInactive() decodes what it can, then calls decodeLast() once if bytes
// remain (the default decodeLast() is decode()), then releases the cumulation. decodeLast() is
// skipped when the loop stopped on an error that consumed nothing (it would report it again).
//
// Ownership: the cumulation holds references on the input buffers; frames emitted as retained
// slices hold their own. Destroying the decoder releases the cumulation. Not thread-safe: a decoder
// belongs to one channel, whose handlers run on one thread.

#include <fmt/format.h>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace netbuf {

/// How a ByteToMessageDecoder accumulates input (see the header comment).
enum class Cumulator : std::uint8_t { Merge, Composite };

/// The two-argument channelRead's error handler: rethrows.
struct RethrowCodecError {
  void operator()(std::exception_ptr e) const { std::rethrow_exception(e); }
};

namespace detail {

/// A decoder's hook: decodeLast if it declares one for Buf, else decode.
template <class D, class Buf, class Out>
concept HasDecodeLast = requires(D& d, Buf& in, std::vector<Out>& out) {
  d.decodeLast(in, out);
};

[[noreturn]] void throwEmittedWithoutConsuming(std::uint64_t offset, std::size_t readable);

}  // namespace detail

template <class Derived, class Out>
class ByteToMessageDecoder {
 public:
  using InputType = ByteBuf;
  using OutputType = Out;
  using Output = std::vector<Out>;

  /// A composite cumulation never consolidates: components are released as they are read.
  static constexpr std::size_t kCompositeCumulationComponents = std::size_t{1} << 30;

  explicit ByteToMessageDecoder(Cumulator cumulator = Cumulator::Merge,
                                ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : alloc_(&alloc), cumulator_(cumulator) {}

  // Moving a decoder moves its cumulation; copying is meaningless (it owns buffers).
  ByteToMessageDecoder(ByteToMessageDecoder&&) noexcept = default;
  ByteToMessageDecoder& operator=(ByteToMessageDecoder&&) noexcept = default;
  ByteToMessageDecoder(const ByteToMessageDecoder&) = delete;
  ByteToMessageDecoder& operator=(const ByteToMessageDecoder&) = delete;

  // ---------------------------------------------------------------- the stream
  /// Appends in's readable bytes to the cumulation (taking in as is when the cumulation is empty)
  /// and decodes every complete message into out. CodecErrors go to onError(std::exception_ptr);
  /// see the header comment for what happens after one.
  template <class OnError>
  void channelRead(ByteBuf in, Output& out, OnError&& onError) {
    received_ += in.readableBytes();
    cumulate(std::move(in));
    decodeCumulation(out, onError);
    afterRead();
  }
  void channelRead(ByteBuf in, Output& out) {
    channelRead(std::move(in), out, RethrowCodecError{});
  }

  /// Same for a composite input (from a handler that emits composites): its components are added
  /// without copying with the Composite cumulator, copied with Merge.
  template <class OnError>
  void channelRead(CompositeByteBuf in, Output& out, OnError&& onError) {
    received_ += in.readableBytes();
    cumulate(std::move(in));
    decodeCumulation(out, onError);
    afterRead();
  }
  void channelRead(CompositeByteBuf in, Output& out) {
    channelRead(std::move(in), out, RethrowCodecError{});
  }
  template <class OnError>
  void channelRead(AnyByteBuf in, Output& out, OnError&& onError) {
    visitBuf(in, [&](auto& b) { channelRead(std::move(b), out, onError); });
  }
  void channelRead(AnyByteBuf in, Output& out) {
    channelRead(std::move(in), out, RethrowCodecError{});
  }

  /// Decodes again what the cumulation holds, without new input (for example after an error that
  /// the two-argument channelRead rethrew).
  template <class OnError>
  void decodeAgain(Output& out, OnError&& onError) {
    decodeCumulation(out, onError);
    afterRead();
  }
  void decodeAgain(Output& out) { decodeAgain(out, RethrowCodecError{}); }

  /// The end of a batch of reads: compacts a merge cumulation by Netty's discardSomeReadBytes
  /// policy when nothing else shares its memory.
  void channelReadComplete() { compact(); }

  /// End of stream: decodes what it can, calls decodeLast() once if bytes remain, then releases
  /// the cumulation (bytes still undecoded are dropped; bytesDropped() counts them).
  template <class OnError>
  void channelInactive(Output& out, OnError&& onError) {
    // When the loop stops on an error that consumed nothing, the decoder has already said what is
    // wrong with the remaining bytes: decodeLast would only report it again.
    if (decodeCumulation(out, onError) == LoopEnd::StalledOnError) return dropCumulation();
    visitCumulation([&](auto& cum) {
      if (!cum.isReadable()) return;
      const std::size_t before = cum.readableBytes();
      startIndex_ = cum.readerIndex();
      try {
        callDecodeLast(cum, out);
      } catch (const CodecError&) {
        consumedBytes(before - cum.readableBytes());
        dropCumulation();
        onError(std::current_exception());
        return;
      } catch (...) {
        consumedBytes(before - cum.readableBytes());
        throw;
      }
      consumedBytes(before - cum.readableBytes());
    });
    dropCumulation();
  }
  void channelInactive(Output& out) { channelInactive(out, RethrowCodecError{}); }

  /// Hands over the undecoded bytes (Netty forwards them when a decoder is removed from a
  /// pipeline) and leaves the cumulation empty. Empty handle when nothing is left.
  AnyByteBuf takeCumulation() {
    AnyByteBuf rest;
    if (auto* b = std::get_if<ByteBuf>(&cumulation_)) {
      rest = std::move(*b);
    } else if (auto* c = std::get_if<CompositeByteBuf>(&cumulation_)) {
      rest = std::move(*c);
    }
    cumulation_ = std::monostate{};
    consumed_ = received_;
    return rest;
  }

  // ---------------------------------------------------------------- state and options
  /// Bytes received but not yet consumed by decode().
  std::size_t actualReadableBytes() const noexcept {
    return std::visit(
        [](const auto& c) -> std::size_t {
          if constexpr (std::is_same_v<std::decay_t<decltype(c)>, std::monostate>) {
            return 0;
          } else {
            return c.readableBytes();
          }
        },
        cumulation_);
  }
  /// Total bytes received since construction.
  std::uint64_t bytesReceived() const noexcept { return received_; }
  /// Total bytes consumed by decode() (the stream offset of the next undecoded byte).
  std::uint64_t bytesConsumed() const noexcept { return consumed_; }
  /// Bytes dropped undecoded at end of stream.
  std::uint64_t bytesDropped() const noexcept { return dropped_; }

  Cumulator cumulator() const noexcept { return cumulator_; }
  /// Takes effect for the next read (an existing cumulation keeps its form until it empties).
  void setCumulator(Cumulator c) noexcept { cumulator_ = c; }
  bool isSingleDecode() const noexcept { return singleDecode_; }
  void setSingleDecode(bool single) noexcept { singleDecode_ = single; }
  ByteBufAllocator& alloc() const noexcept { return *alloc_; }

 protected:
  ~ByteToMessageDecoder() = default;

  /// Stream offset of byte `index` of the cumulation passed to decode() (for error messages).
  /// Valid inside decode()/decodeLast() (indices are relative to the readerIndex decode() began
  /// at, whose offset the framework knows).
  std::uint64_t streamOffset(std::size_t index) const noexcept {
    return consumed_ + index - startIndex_;
  }
  /// Stream offset of in's current readerIndex, inside decode()/decodeLast().
  template <class Buf>
  std::uint64_t streamOffset(const Buf& in) const noexcept {
    return streamOffset(in.readerIndex());
  }

  /// Reads the next length bytes of in as a frame: a retained slice (no copy) of either kind.
  /// Slices of a merge cumulation take their references from its reference credit (one atomic add
  /// per ByteBuf::kRefCreditBatch frames instead of one per frame).
  static AnyByteBuf readFrame(ByteBuf& in, std::size_t length) {
    return AnyByteBuf(std::in_place_type<ByteBuf>, in.readRetainedSliceBatched(length));
  }
  static AnyByteBuf readFrame(CompositeByteBuf& in, std::size_t length) {
    return in.readRetainedSlice(length);
  }
  /// out.push_back(readFrame(in, length)), constructing the frame in place in out (no
  /// intermediate handle to move from and destroy: this is the per-frame hot path).
  static void emitFrame(ByteBuf& in, std::size_t length, std::vector<AnyByteBuf>& out) {
    struct Slice {  // converts to the slice inside the vector's element (guaranteed elision)
      ByteBuf& in;
      std::size_t length;
      operator ByteBuf() const { return in.readRetainedSliceBatched(length); }
    };
    out.emplace_back(std::in_place_type<ByteBuf>, Slice{in, length});
  }
  static void emitFrame(CompositeByteBuf& in, std::size_t length, std::vector<AnyByteBuf>& out) {
    in.readRetainedSliceBatched(length, out);
  }

 private:
  Derived& derived() noexcept { return static_cast<Derived&>(*this); }

  template <class Fn>
  void visitCumulation(Fn&& fn) {
    if (auto* b = std::get_if<ByteBuf>(&cumulation_)) {
      fn(*b);
    } else if (auto* c = std::get_if<CompositeByteBuf>(&cumulation_)) {
      fn(*c);
    }
  }

  void consumedBytes(std::size_t n) noexcept { consumed_ += n; }

  void dropCumulation() noexcept {
    dropped_ += actualReadableBytes();
    consumed_ = received_;
    cumulation_ = std::monostate{};
  }

  // ---- cumulation
  void cumulate(ByteBuf in) {
    if (!in.isReadable()) return;
    if (auto* cur = std::get_if<ByteBuf>(&cumulation_); cur != nullptr && cur->isReadable()) {
      if (cumulator_ == Cumulator::Merge) {
        merge(*cur, in);
      } else {
        CompositeByteBuf c(*alloc_, kCompositeCumulationComponents);
        c.addComponent(true, std::move(*cur));
        c.addComponent(true, std::move(in));
        cumulation_ = std::move(c);
      }
    } else if (auto* comp = std::get_if<CompositeByteBuf>(&cumulation_);
               comp != nullptr && comp->isReadable()) {
      if (cumulator_ == Cumulator::Composite) {
        comp->addComponent(true, std::move(in));
      } else {
        ByteBuf flat = comp->copy();  // switching Composite -> Merge: one copy, then merging
        merge(flat, in);
        cumulation_ = std::move(flat);
      }
    } else {
      cumulation_ = std::move(in);  // empty cumulation: take the input as is
    }
  }

  void cumulate(CompositeByteBuf in) {
    if (!in.isReadable()) return;
    if (cumulator_ == Cumulator::Composite) {
      if (auto* comp = std::get_if<CompositeByteBuf>(&cumulation_);
          comp != nullptr && comp->isReadable()) {
        comp->addComponent(true, std::move(in));
        return;
      }
      CompositeByteBuf c(*alloc_, kCompositeCumulationComponents);
      if (auto* cur = std::get_if<ByteBuf>(&cumulation_); cur != nullptr && cur->isReadable())
        c.addComponent(true, std::move(*cur));
      c.addComponent(true, std::move(in));
      cumulation_ = std::move(c);
      return;
    }
    // Merge: the bytes must become contiguous, so they are copied once.
    if (auto* cur = std::get_if<ByteBuf>(&cumulation_); cur != nullptr && cur->isReadable()) {
      merge(*cur, in);
    } else if (auto* comp = std::get_if<CompositeByteBuf>(&cumulation_);
               comp != nullptr && comp->isReadable()) {
      ByteBuf flat = comp->copy();
      merge(flat, in);
      cumulation_ = std::move(flat);
    } else {
      cumulation_ = in.copy();
    }
  }

  /// Appends in's readable bytes to the merge cumulation cum (see the header comment).
  template <class In>
  void merge(ByteBuf& cum, In& in) {
    const std::size_t n = in.readableBytes();
    if (!cum.isReadOnly() && n <= cum.writableBytes()) {
      cum.writeBytes(in);  // spare room: copy in place
      return;
    }
    const std::size_t unread = cum.readableBytes();
    if (!cum.isReadOnly() && cum.refCnt() == 1 && unread + n <= cum.capacity()) {
      cum.discardReadBytes();  // nobody shares the memory: compact in place
      cum.writeBytes(in);
      return;
    }
    // A fresh buffer holding only the unread bytes and the input. The old memory stays alive as
    // long as frames (retained slices) use it.
    ByteBuf fresh =
        alloc_->buffer(ByteBufAllocator::calculateNewCapacity(unread + n, kDefaultMaxCapacity));
    fresh.writeBytes(cum);
    fresh.writeBytes(in);
    cum = std::move(fresh);
  }

  /// Netty's discardSomeReadBytes policy for a merge cumulation nobody else shares.
  void compact() {
    if (auto* cur = std::get_if<ByteBuf>(&cumulation_);
        cur != nullptr && !cur->isReadOnly() && cur->refCnt() == 1) {
      cur->discardSomeReadBytes();
    }
  }

  void afterRead() {
    if (actualReadableBytes() == 0) {
      cumulation_ = std::monostate{};  // release as soon as everything is read
      return;
    }
    if (auto* comp = std::get_if<CompositeByteBuf>(&cumulation_)) {
      comp->discardReadComponents();  // release fully read input buffers, no copy
    } else {
      compact();
    }
  }

  // ---- the decode loop
  // (A member template rather than an `if constexpr` inside channelInactive's generic lambda:
  // clang 14 instantiates both branches there.)
  template <class Buf>
  void callDecodeLast(Buf& in, Output& out) {
    if constexpr (detail::HasDecodeLast<Derived, Buf, Out>) {
      derived().decodeLast(in, out);
    } else {
      derived().decode(in, out);
    }
  }

  enum class LoopEnd { Done, StalledOnError };

  template <class OnError>
  LoopEnd decodeCumulation(Output& out, OnError& onError) {
    LoopEnd end = LoopEnd::Done;
    visitCumulation([&](auto& cum) { end = callDecode(cum, out, onError); });
    return end;
  }

  template <class Buf, class OnError>
  LoopEnd callDecode(Buf& in, Output& out, OnError& onError) {
    while (in.isReadable()) {
      const std::size_t before = in.readableBytes();
      const std::size_t outBefore = out.size();
      startIndex_ = in.readerIndex();
      try {
        derived().decode(in, out);
      } catch (const CodecError&) {
        const std::size_t used = before - in.readableBytes();
        consumedBytes(used);
        onError(std::current_exception());
        if (used == 0) return LoopEnd::StalledOnError;  // no progress: wait for more input
        continue;
      } catch (...) {
        consumedBytes(before - in.readableBytes());  // keep offsets true for the next read
        throw;
      }
      const std::size_t used = before - in.readableBytes();
      consumedBytes(used);
      if (out.size() == outBefore) {
        if (used == 0) return LoopEnd::Done;  // needs more input
        continue;
      }
      if (used == 0) {
        try {
          detail::throwEmittedWithoutConsuming(consumed_, before);
        } catch (const CodecError&) {
          onError(std::current_exception());
        }
        return LoopEnd::StalledOnError;
      }
      if (singleDecode_) return LoopEnd::Done;
    }
    return LoopEnd::Done;
  }

  ByteBufAllocator* alloc_;
  // Empty (monostate), a merge cumulation or a composite one. Invariant: consumed_ is the stream
  // offset of the cumulation's readerIndex (every decode() step adds what it consumed).
  std::variant<std::monostate, ByteBuf, CompositeByteBuf> cumulation_;
  std::uint64_t received_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t dropped_ = 0;
  std::size_t startIndex_ = 0;  // the cumulation's readerIndex when decode() was called
  Cumulator cumulator_;
  bool singleDecode_ = false;
};

}  // namespace netbuf
