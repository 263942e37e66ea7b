#include <netbuf/transport/chunked_write_handler.hpp>

#include <exception>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <netbuf/transport/chunked_file.hpp>
#include <netbuf/transport/chunked_generator.hpp>
#include <netbuf/transport/chunked_input.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <utility>

namespace netbuf {

namespace detail {

/// One chunked input being written: the input, the caller's listener, and the listener passed
/// with each of its chunk writes. Owned by its channel's registry; freed once it has left the
/// handler's queue, its last chunk write has completed and no code on the stack uses it.
struct ChunkedWrite final : WriteListener {
  ChunkedWrite(ChunkedWriteRegistry* r, std::unique_ptr<ChunkedInput> in, WriteListener* l)
      : registry(r), input(std::move(in)), user(l) {}
  ~ChunkedWrite() override { closeInput(); }

  /// A chunk's write completed.
  void operationComplete(std::error_code ec) noexcept override;
  /// Tells the caller (once): closes the input first. The caller pins this object.
  void finish(std::error_code ec) noexcept {
    if (notified) return;
    notified = true;
    closeInput();
    if (WriteListener* l = std::exchange(user, nullptr)) l->operationComplete(ec);
  }
  void closeInput() noexcept {
    if (inputClosed) return;
    inputClosed = true;
    try {
      input->close();
    } catch (...) {
    }
  }
  /// Frees this object when nothing refers to it any more (the last thing its callers do).
  void maybeFree() noexcept;

  ChunkedWriteRegistry* registry;
  std::unique_ptr<ChunkedInput> input;
  WriteListener* user;
  int outstanding = 0;       // chunk writes handed down and not completed
  int pins = 0;              // frames on the stack using this object
  bool inQueue = true;       // in a handler's queue (more chunks to come)
  bool lastWritten = false;  // the last chunk has been handed down
  bool notified = false;     // the caller has been told (or would have been, without a listener)
  bool inputClosed = false;
  ChunkedWrite* prev = nullptr;  // the registry's list
  ChunkedWrite* next = nullptr;
};

/// Every ChunkedWrite of one channel (a channel attribute, destroyed with the channel, after its
/// pipeline and its write queue: nothing can call them any more then). Loop thread only.
struct ChunkedWriteRegistry {
  ChunkedWriteRegistry() = default;
  ChunkedWriteRegistry(const ChunkedWriteRegistry&) = delete;
  ChunkedWriteRegistry& operator=(const ChunkedWriteRegistry&) = delete;
  ~ChunkedWriteRegistry() {
    while (head != nullptr) destroy(head);
  }

  ChunkedWrite* create(std::unique_ptr<ChunkedInput> input, WriteListener* user) {
    auto* w = new ChunkedWrite(this, std::move(input), user);
    w->next = head;
    if (head != nullptr) head->prev = w;
    head = w;
    return w;
  }
  void destroy(ChunkedWrite* w) noexcept {
    if (w->prev != nullptr) {
      w->prev->next = w->next;
    } else {
      head = w->next;
    }
    if (w->next != nullptr) w->next->prev = w->prev;
    delete w;
  }

  ChunkedWrite* head = nullptr;
};

void ChunkedWrite::maybeFree() noexcept {
  if (pins == 0 && outstanding == 0 && !inQueue) registry->destroy(this);
}

namespace {
/// Keeps a ChunkedWrite alive while a frame uses it; the destructor may free it.
struct Pin {
  explicit Pin(ChunkedWrite* w) noexcept : w_(w) { ++w_->pins; }
  ~Pin() {
    --w_->pins;
    w_->maybeFree();
  }
  Pin(const Pin&) = delete;
  Pin& operator=(const Pin&) = delete;

 private:
  ChunkedWrite* w_;
};
}  // namespace

void ChunkedWrite::operationComplete(std::error_code ec) noexcept {
  Pin pin(this);
  --outstanding;
  if (ec) {
    finish(ec);  // the first failure (a no-op after one)
  } else if (lastWritten && outstanding == 0) {
    finish({});
  }
}

}  // namespace detail

namespace {

using detail::ChunkedWrite;
using detail::Pin;

const AttributeKey<std::shared_ptr<detail::ChunkedWriteRegistry>> kRegistryKey{
    "netbuf.chunkedWriteRegistry"};

std::error_code codeOf(const std::exception_ptr& error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const std::system_error& e) {
    return e.code();
  } catch (...) {
    return ChannelErrc::writeFailed;
  }
}

/// The chunked input a message carries, if it is one (see the header comment).
bool takeInput(Message& msg, std::unique_ptr<ChunkedInput>& input) {
  if (msg.is<std::unique_ptr<ChunkedInput>>()) {
    input = msg.take<std::unique_ptr<ChunkedInput>>();
  } else if (msg.is<std::unique_ptr<ChunkedFile>>()) {
    input = msg.take<std::unique_ptr<ChunkedFile>>();
  } else if (msg.is<std::unique_ptr<ChunkedGenerator>>()) {
    input = msg.take<std::unique_ptr<ChunkedGenerator>>();
  } else {
    return false;
  }
  return true;
}

}  // namespace

ChunkedWriteHandler::ChunkedWriteHandler() : lifetime_(std::make_shared<char>()) {}

ChunkedWriteHandler::~ChunkedWriteHandler() { discard(ChannelErrc::handlerRemoved); }

void ChunkedWriteHandler::handlerAdded(ChannelHandlerContext& ctx) {
  ctx_ = &ctx;
  std::shared_ptr<detail::ChunkedWriteRegistry>& registry = ctx.channel().attr(kRegistryKey);
  if (registry == nullptr) registry = std::make_shared<detail::ChunkedWriteRegistry>();
  registry_ = registry;
}

void ChunkedWriteHandler::handlerRemoved(ChannelHandlerContext&) {
  discard(ChannelErrc::handlerRemoved);
  ctx_ = nullptr;
}

void ChunkedWriteHandler::channelInactive(ChannelHandlerContext& ctx) {
  discard(ChannelErrc::closed);
  ctx.fireChannelInactive();
}

void ChunkedWriteHandler::channelWritabilityChanged(ChannelHandlerContext& ctx) {
  if (ctx.channel().isWritable()) doFlush(ctx, false);
  ctx.fireChannelWritabilityChanged();
}

void ChunkedWriteHandler::write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) {
  std::unique_ptr<ChunkedInput> input;
  if (!takeInput(msg, input)) {
    if (queue_.empty()) {
      ctx.write(std::move(msg), listener);  // nothing to wait behind
    } else {
      queue_.push_back({std::move(msg), listener, nullptr});
    }
    return;
  }
  if (input == nullptr) {
    throw IllegalArgumentError("ChunkedWriteHandler: a null ChunkedInput was written");
  }
  if (registry_ == nullptr) {
    throw IllegalStateError("ChunkedWriteHandler: written to before it was added to a pipeline");
  }
  ChunkedWrite* w = registry_->create(std::move(input), listener);
  try {
    queue_.push_back({Message(), nullptr, w});
  } catch (...) {
    w->user = nullptr;  // the pipeline tells the caller (writeFailed)
    w->inQueue = false;
    w->maybeFree();
    throw;
  }
}

void ChunkedWriteHandler::flush(ChannelHandlerContext& ctx) { doFlush(ctx, true); }

void ChunkedWriteHandler::resumeTransfer() {
  if (ctx_ == nullptr) return;
  // Called from outside any pipeline event (a task, user code): what doFlush calls may remove
  // this handler, which must then outlive the pass (the scope's end may destroy it).
  ChannelPipeline::EventScope scope(ctx_->pipeline());
  doFlush(*ctx_, false);
}

void ChunkedWriteHandler::scheduleResume(ChannelHandlerContext& ctx) {
  if (resumeScheduled_) return;
  resumeScheduled_ = true;
  try {
    ctx.channel().executor().execute([this, alive = std::weak_ptr<const void>(lifetime_)] {
      if (alive.expired()) return;  // the handler is gone
      resumeScheduled_ = false;
      resumeTransfer();
    });
  } catch (const RejectedExecutionError&) {
    resumeScheduled_ = false;  // the loop is shutting down: its channels are being closed
  }
}

void ChunkedWriteHandler::doFlush(ChannelHandlerContext& ctx, bool flushRequested) {
  if (flushRequested) flushNeeded_ = true;
  if (flushing_) {  // called back from inside a pass (a listener, a writability change)
    again_ = true;
    return;
  }
  flushing_ = true;
  Channel& channel = ctx.channel();
  int chunks = 0;
  do {
    again_ = false;
    while (!queue_.empty()) {
      if (!channel.isActive()) {
        discard(ChannelErrc::closed);
        break;
      }
      if (!channel.isWritable()) break;  // channelWritabilityChanged resumes
      Pending& head = queue_.front();
      if (head.chunked == nullptr) {
        Message msg = std::move(head.msg);
        WriteListener* listener = head.listener;
        queue_.pop_front();
        flushNeeded_ = true;
        ctx.write(std::move(msg), listener);
        continue;
      }
      ChunkedWrite* w = head.chunked;
      Pin pin(w);
      if (w->notified) {  // one of its chunks failed: the rest is dropped
        queue_.pop_front();
        w->inQueue = false;
        continue;
      }
      if (chunks == kMaxChunksPerPass) {
        scheduleResume(ctx);
        break;
      }
      ByteBuf chunk;
      bool end = false;
      try {
        chunk = w->input->readChunk(ctx.alloc());
        end = w->input->isEndOfInput();
      } catch (...) {
        const std::exception_ptr error = std::current_exception();
        if (w->inQueue) {  // still the head: nothing but discard() takes it out meanwhile
          queue_.pop_front();
          w->inQueue = false;
        }
        const bool told = w->user != nullptr && !w->notified;
        w->finish(codeOf(error));
        if (!told) ctx.fireExceptionCaught(error);  // no listener: the pipeline's rule
        continue;
      }
      // The input may have called into the pipeline, which may have discarded it meanwhile.
      if (!w->inQueue || w->notified) continue;
      const bool empty = !chunk.isValid() || !chunk.isReadable();
      if (empty && !end) break;  // nothing available now: resumeTransfer() goes on
      if (end) {
        queue_.pop_front();
        w->inQueue = false;
        w->lastWritten = true;
        if (!chunk.isValid()) chunk = ctx.alloc().buffer(0);  // the end marker (see the header)
      }
      ++w->outstanding;
      ++chunks;
      ctx.writeAndFlush(Message(std::move(chunk)), w);  // may complete w before it returns
      flushNeeded_ = false;
    }
  } while (again_ && !queue_.empty());
  flushing_ = false;
  if (flushNeeded_) {
    flushNeeded_ = false;
    ctx.flush();
  }
}

void ChunkedWriteHandler::discard(std::error_code ec) noexcept {
  if (queue_.empty()) return;
  std::deque<Pending> failing = std::move(queue_);
  queue_.clear();
  for (Pending& p : failing) {
    if (p.chunked != nullptr) {
      Pin pin(p.chunked);
      p.chunked->inQueue = false;
      p.chunked->finish(ec);
    } else {
      p.msg.reset();  // released
      if (p.listener != nullptr) p.listener->operationComplete(ec);
    }
  }
}

}  // namespace netbuf
