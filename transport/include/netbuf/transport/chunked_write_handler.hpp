#pragma once
// ChunkedWriteHandler: Netty 4.1's io.netty.handler.stream.ChunkedWriteHandler on netbuf's
// pipeline. It takes ChunkedInput messages (chunked_input.hpp) on the way out and writes them
// chunk by chunk, only while the channel is writable, so a large body streams with backpressure
// from the channel's water marks instead of being queued whole:
//
//     pipeline.addLast("chunked", std::make_unique<ChunkedWriteHandler>());
//     ...
//     channel.writeAndFlush(std::make_unique<ChunkedFile>(path), &listener);  // from any thread
//
// Messages: a write whose message is a std::unique_ptr<ChunkedInput>, std::unique_ptr<ChunkedFile>
// or std::unique_ptr<ChunkedGenerator> is a chunked input (Message keeps the exact type, so these
// three are recognised; write your own ChunkedInput subclasses as std::unique_ptr<ChunkedInput>).
// Its chunks go on as ByteBuf messages. Any other message passes through untouched and in order:
// a buffer written after a chunked input goes out after the input's last chunk. When nothing is
// queued, other messages pass on at once (no queueing cost); behind a chunked input they wait in
// the handler's queue, as in Netty. A null std::unique_ptr fails its write (IllegalArgumentError).
//
// Transfer (Netty's doFlush): the queue is worked on at flush(), when the channel becomes writable
// again (channelWritabilityChanged), and at resumeTransfer(). While the channel isWritable(), the
// head of the queue is written: a plain message as is (flushed once at the end), a chunked input
// one readChunk() at a time, each chunk written and flushed at once (Netty: "flush each chunk to
// conserve memory"). So the bytes queued in the channel exceed the high water mark by at most one
// chunk. An input that has nothing available right now (an empty chunk, not at its end) suspends
// the transfer, and what is queued behind it waits, until resumeTransfer() (or the next flush or
// writability change). Where this differs from Netty: one pass writes at most kMaxChunksPerPass
// chunks, then continues in a task on the channel's executor, so a peer that takes bytes as fast
// as the loop can read them does not keep the loop from its other channels for a whole file.
//
// Completion: the listener of the write that carried the input is notified once: with success
// when the last chunk has been written (its own listener completed: every chunk before it was
// written too), or with the first failure: a chunk's write failing (its error code), readChunk()
// or isEndOfInput() throwing (std::system_error's code, otherwise ChannelErrc::writeFailed; with
// no listener the exception goes to exceptionCaught instead, the pipeline's rule), the channel
// closing (ChannelErrc::closed for inputs still queued at channelInactive) or the handler being
// removed (ChannelErrc::handlerRemoved, also for the plain messages queued behind an input, which
// are released). The input is closed (ChunkedInput::close()) when it ends or fails. As in Netty, an
// input whose last readChunk() returned nothing but reached its end gets an empty ByteBuf written
// as its last chunk, so that its completion is ordered after the writes before it.
//
// Listener safety: each chunk's write carries a listener object of the handler's (one per chunked
// input, not per chunk), which the channel may call after the handler is gone (removed, or the
// pipeline destroyed while chunks are queued in the socket). These objects live in a registry
// that belongs to the channel (a channel attribute, destroyed with the channel after its write
// queue), and each is freed once its input has left the handler's queue and its last chunk write
// has completed: no listener is called after it is freed, and none leaks when a channel is
// destroyed with writes it never completed.
//
// Cost: one allocation per chunked input (its state), one buffer per chunk (readChunk's), one
// pointer push per message queued behind an input; nothing for messages that pass straight on.
//
// Threading: like every handler, on the channel's loop; resumeTransfer() too (from another thread,
// hand it over:
//     channel->executor().execute([channel] {
//       if (auto* h = dynamic_cast<ChunkedWriteHandler*>(channel->pipeline().get("chunked")))
//         h->resumeTransfer();
//     });
// ). ChunkedInputs run on the loop once written.

#include <cstddef>
#include <deque>
#include <memory>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/message.hpp>
#include <system_error>

namespace netbuf {

class ChunkedInput;

namespace detail {
struct ChunkedWrite;
struct ChunkedWriteRegistry;
}  // namespace detail

class ChunkedWriteHandler : public ChannelHandler {
 public:
  /// Chunks one pass writes before it lets the loop run other work (see the header comment).
  static constexpr int kMaxChunksPerPass = 16;

  ChunkedWriteHandler();
  /// Detaches the inputs still in flight (their last chunk writes still complete them).
  ~ChunkedWriteHandler() override;
  ChunkedWriteHandler(const ChunkedWriteHandler&) = delete;
  ChunkedWriteHandler& operator=(const ChunkedWriteHandler&) = delete;

  /// Goes on with the queue (after an input had nothing available). Loop thread only.
  void resumeTransfer();
  /// Messages and inputs waiting in the handler's queue. Loop thread.
  std::size_t queued() const noexcept { return queue_.size(); }

  void handlerAdded(ChannelHandlerContext& ctx) override;
  void handlerRemoved(ChannelHandlerContext& ctx) override;
  void channelInactive(ChannelHandlerContext& ctx) override;
  void channelWritabilityChanged(ChannelHandlerContext& ctx) override;
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override;
  void flush(ChannelHandlerContext& ctx) override;
  /// Inbound: pass-through. Outbound: takes any message and produces chunks (ByteBuf) and
  /// whatever else passes through.
  MessageTypes inboundIn() const noexcept override { return MessageTypes::passThrough(); }
  MessageTypes inboundOut() const noexcept override { return MessageTypes::passThrough(); }

 private:
  struct Pending {
    Message msg;                    // a plain message (empty for a chunked input)
    WriteListener* listener;        // its listener
    detail::ChunkedWrite* chunked;  // a chunked input's state, or nullptr
  };

  /// Writes the queue while the channel is writable (Netty's doFlush).
  void doFlush(ChannelHandlerContext& ctx, bool flushRequested);
  /// Fails everything queued with ec.
  void discard(std::error_code ec) noexcept;
  /// Schedules a pass in a later loop task (after kMaxChunksPerPass chunks).
  void scheduleResume(ChannelHandlerContext& ctx);

  ChannelHandlerContext* ctx_ = nullptr;  // while in a pipeline
  std::shared_ptr<detail::ChunkedWriteRegistry> registry_;
  std::deque<Pending> queue_;
  bool flushing_ = false;         // doFlush() is on the stack
  bool again_ = false;            // doFlush() was asked for meanwhile: one more pass
  bool flushNeeded_ = false;      // a plain message was written, or a flush asked for, since the
                                  // last flush passed on
  bool resumeScheduled_ = false;  // a scheduleResume() task is pending
  std::shared_ptr<const void> lifetime_;  // expires with the handler (for that task)
};

}  // namespace netbuf
