#include <fmt/format.h>

#include <cstdio>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <string>
#include <system_error>

namespace netbuf {

// ------------------------------------------------------------------ ChannelHandler defaults

void ChannelHandler::handlerAdded(ChannelHandlerContext&) {}
void ChannelHandler::handlerRemoved(ChannelHandlerContext&) {}
void ChannelHandler::channelActive(ChannelHandlerContext& ctx) { ctx.fireChannelActive(); }
void ChannelHandler::channelInactive(ChannelHandlerContext& ctx) { ctx.fireChannelInactive(); }
void ChannelHandler::channelRead(ChannelHandlerContext& ctx, Message msg) {
  ctx.fireChannelRead(std::move(msg));
}
void ChannelHandler::channelReadComplete(ChannelHandlerContext& ctx) {
  ctx.fireChannelReadComplete();
}
void ChannelHandler::exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) {
  ctx.fireExceptionCaught(std::move(error));
}
void ChannelHandler::userEventTriggered(ChannelHandlerContext& ctx, Message event) {
  ctx.fireUserEventTriggered(std::move(event));
}
void ChannelHandler::channelWritabilityChanged(ChannelHandlerContext& ctx) {
  ctx.fireChannelWritabilityChanged();
}
void ChannelHandler::write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) {
  ctx.write(std::move(msg), listener);
}
void ChannelHandler::flush(ChannelHandlerContext& ctx) { ctx.flush(); }
void ChannelHandler::close(ChannelHandlerContext& ctx) { ctx.close(); }

// ------------------------------------------------------------------ head and tail

void ChannelPipeline::channelWrite(Channel& ch, Message msg, WriteListener* listener) {
  ch.doWrite(std::move(msg), listener);
}
void ChannelPipeline::channelFlush(Channel& ch) { ch.doFlush(); }
void ChannelPipeline::channelClose(Channel& ch) { ch.doClose(); }
void ChannelPipeline::channelUnhandledMessage(Channel& ch, Message msg) noexcept {
  ch.onUnhandledMessage(std::move(msg));
}
void ChannelPipeline::channelUnhandledException(Channel& ch, std::exception_ptr error) noexcept {
  ch.onUnhandledException(std::move(error));
}
void ChannelPipeline::channelWriteFailure(Channel& ch, std::exception_ptr error) noexcept {
  ch.onWriteFailure(std::move(error));
}

/// Outbound operations end here: they become the channel's.
class ChannelPipeline::HeadHandler final : public ChannelHandler {
 public:
  void write(ChannelHandlerContext& ctx, Message msg, WriteListener* listener) override {
    channelWrite(ctx.channel(), std::move(msg), listener);
  }
  void flush(ChannelHandlerContext& ctx) override { channelFlush(ctx.channel()); }
  void close(ChannelHandlerContext& ctx) override { channelClose(ctx.channel()); }
};

/// Inbound events end here: unhandled messages are counted and handed to the channel (which
/// releases them), unhandled exceptions go to the channel.
class ChannelPipeline::TailHandler final : public ChannelHandler {
 public:
  void channelActive(ChannelHandlerContext&) override {}
  void channelInactive(ChannelHandlerContext&) override {}
  void channelRead(ChannelHandlerContext& ctx, Message msg) override {
    ++ctx.pipeline().unhandled_;
    channelUnhandledMessage(ctx.channel(), std::move(msg));
  }
  void channelReadComplete(ChannelHandlerContext&) override {}
  void exceptionCaught(ChannelHandlerContext& ctx, std::exception_ptr error) override {
    channelUnhandledException(ctx.channel(), std::move(error));
  }
  void userEventTriggered(ChannelHandlerContext&, Message) override {}
  void channelWritabilityChanged(ChannelHandlerContext&) override {}
};

// ------------------------------------------------------------------ ChannelHandlerContext

Channel& ChannelHandlerContext::channel() noexcept { return pipeline_->channel(); }
ByteBufAllocator& ChannelHandlerContext::alloc() noexcept { return channel().alloc(); }

bool ChannelHandlerContext::inLoop() const noexcept { return pipeline_->channel_->inEventLoop(); }

void ChannelHandlerContext::checkInboundInLoop(const char* what) const {
  if (!inLoop()) [[unlikely]] {
    throw IllegalStateError(fmt::format(
        "ChannelHandlerContext::{} (handler '{}') called off the channel's event loop: inbound "
        "events run on the loop (hand the work over with channel().executor().execute())",
        what, name_));
  }
}

void ChannelHandlerContext::submit(int kind, Message msg, WriteListener* listener) {
  pipeline_->channel_->submitOutbound(this, id_, static_cast<detail::OutboundTask::Kind>(kind),
                                      std::move(msg), listener);
}

void ChannelHandlerContext::fireChannelActive() {
  checkInboundInLoop("fireChannelActive");
  next_->invokeChannelActive();
}
void ChannelHandlerContext::fireChannelInactive() {
  checkInboundInLoop("fireChannelInactive");
  next_->invokeChannelInactive();
}
void ChannelHandlerContext::fireChannelRead(Message msg) {
  checkInboundInLoop("fireChannelRead");
  next_->invokeChannelRead(std::move(msg));
}
void ChannelHandlerContext::fireChannelReadComplete() {
  checkInboundInLoop("fireChannelReadComplete");
  next_->invokeChannelReadComplete();
}
void ChannelHandlerContext::fireExceptionCaught(std::exception_ptr error) {
  checkInboundInLoop("fireExceptionCaught");
  next_->invokeExceptionCaught(std::move(error));
}
void ChannelHandlerContext::fireUserEventTriggered(Message event) {
  checkInboundInLoop("fireUserEventTriggered");
  next_->invokeUserEventTriggered(std::move(event));
}
void ChannelHandlerContext::fireChannelWritabilityChanged() {
  checkInboundInLoop("fireChannelWritabilityChanged");
  next_->invokeChannelWritabilityChanged();
}

using OutboundKind = detail::OutboundTask::Kind;

void ChannelHandlerContext::write(Message msg, WriteListener* listener) {
  if (!inLoop()) [[unlikely]]
    return submit(static_cast<int>(OutboundKind::Write), std::move(msg), listener);
  prev_->invokeWrite(std::move(msg), listener);
}
void ChannelHandlerContext::writeAndFlush(Message msg, WriteListener* listener) {
  if (!inLoop()) [[unlikely]]
    return submit(static_cast<int>(OutboundKind::WriteAndFlush), std::move(msg), listener);
  prev_->invokeWrite(std::move(msg), listener);
  prev_->invokeFlush();
}
void ChannelHandlerContext::flush() {
  if (!inLoop()) [[unlikely]]
    return submit(static_cast<int>(OutboundKind::Flush), Message(), nullptr);
  prev_->invokeFlush();
}
void ChannelHandlerContext::close() {
  if (!inLoop()) [[unlikely]]
    return submit(static_cast<int>(OutboundKind::Close), Message(), nullptr);
  prev_->invokeClose();
}

// Each invoke catches what the handler throws: inbound exceptions go to the same handler's
// exceptionCaught (Netty's rule), so no exception ever leaves the pipeline.
#define NETBUF_INVOKE_INBOUND(call)                  \
  ChannelPipeline::EventScope entry(*pipeline_);     \
  try {                                              \
    call;                                            \
  } catch (...) {                                    \
    invokeExceptionCaught(std::current_exception()); \
  }

void ChannelHandlerContext::invokeChannelActive() noexcept {
  NETBUF_INVOKE_INBOUND(handler_->channelActive(*this))
}
void ChannelHandlerContext::invokeChannelInactive() noexcept {
  NETBUF_INVOKE_INBOUND(handler_->channelInactive(*this))
}
void ChannelHandlerContext::invokeChannelRead(Message msg) noexcept {
  NETBUF_INVOKE_INBOUND(handler_->channelRead(*this, std::move(msg)))
}
void ChannelHandlerContext::invokeChannelReadComplete() noexcept {
  NETBUF_INVOKE_INBOUND(handler_->channelReadComplete(*this))
}
void ChannelHandlerContext::invokeUserEventTriggered(Message event) noexcept {
  NETBUF_INVOKE_INBOUND(handler_->userEventTriggered(*this, std::move(event)))
}
void ChannelHandlerContext::invokeChannelWritabilityChanged() noexcept {
  NETBUF_INVOKE_INBOUND(handler_->channelWritabilityChanged(*this))
}
#undef NETBUF_INVOKE_INBOUND

void ChannelHandlerContext::invokeExceptionCaught(std::exception_ptr error) noexcept {
  ChannelPipeline::EventScope entry(*pipeline_);
  try {
    handler_->exceptionCaught(*this, error);
  } catch (...) {
    // A handler failing to handle an exception: report both, and let the channel decide (it
    // closes). Never recurse into exceptionCaught again.
    ChannelPipeline::channelUnhandledException(pipeline_->channel(), std::current_exception());
  }
}

void ChannelHandlerContext::invokeWrite(Message msg, WriteListener* listener) noexcept {
  ChannelPipeline::EventScope entry(*pipeline_);
  try {
    handler_->write(*this, std::move(msg), listener);
  } catch (...) {
    // The write failed: its listener hears of it, and the channel logs the exception (it stays
    // open: the listener's owner decides); without a listener, the pipeline hears of it.
    if (listener != nullptr) {
      bool wrongType = false;
      try {
        throw;
      } catch (const MessageTypeError&) {
        wrongType = true;
      } catch (...) {
      }
      listener->operationComplete(wrongType ? ChannelErrc::unsupportedMessageType
                                            : ChannelErrc::writeFailed);
      ChannelPipeline::channelWriteFailure(pipeline_->channel(), std::current_exception());
    } else {
      invokeExceptionCaught(std::current_exception());
    }
  }
}
void ChannelHandlerContext::invokeFlush() noexcept {
  ChannelPipeline::EventScope entry(*pipeline_);
  try {
    handler_->flush(*this);
  } catch (...) {
    invokeExceptionCaught(std::current_exception());
  }
}
void ChannelHandlerContext::invokeClose() noexcept {
  ChannelPipeline::EventScope entry(*pipeline_);
  try {
    handler_->close(*this);
  } catch (...) {
    invokeExceptionCaught(std::current_exception());
  }
}

// ------------------------------------------------------------------ ChannelPipeline

ChannelPipeline::ChannelPipeline(Channel& channel) : channel_(&channel) {
  contexts_.push_back(std::unique_ptr<ChannelHandlerContext>(
      new ChannelHandlerContext(*this, "head", std::make_unique<HeadHandler>(), nextContextId_++)));
  head_ = contexts_.back().get();
  contexts_.push_back(std::unique_ptr<ChannelHandlerContext>(
      new ChannelHandlerContext(*this, "tail", std::make_unique<TailHandler>(), nextContextId_++)));
  tail_ = contexts_.back().get();
  head_->next_ = tail_;
  tail_->prev_ = head_;
}

ChannelPipeline::~ChannelPipeline() { clear(); }

void ChannelPipeline::clear() noexcept {
  // One scope around the whole loop: a handlerRemoved that fires an event (a flush, a write)
  // closes that event's own scope at depth 1, so the contexts removed so far, its own included,
  // are not destroyed under it; they go when this scope ends.
  EventScope scope(*this);
  while (tail_->prev_ != head_) {
    ChannelHandlerContext& ctx = *tail_->prev_;
    unlink(ctx);
    try {
      ctx.handler_->handlerRemoved(ctx);
    } catch (...) {
    }
  }
}

void ChannelPipeline::checkInLoop(const char* what) const {
  if (!channel_->inEventLoop()) [[unlikely]] {
    throw IllegalStateError(fmt::format(
        "ChannelPipeline::{} called off the channel's event loop: a pipeline belongs to its "
        "loop (run this with channel.executor().execute(), or from a handler)",
        what));
  }
}

ChannelHandlerContext* ChannelPipeline::findLive(const ChannelHandlerContext* ctx,
                                                 std::uint64_t id) const noexcept {
  for (const auto& c : contexts_) {
    if (c.get() == ctx && c->id_ == id) return c.get();
  }
  return nullptr;
}

void ChannelPipeline::writeFromTail(Message msg, WriteListener* listener) {
  tail_->invokeWrite(std::move(msg), listener);
}
void ChannelPipeline::flushFromTail() { tail_->invokeFlush(); }
void ChannelPipeline::closeFromTail() { tail_->invokeClose(); }

ChannelHandlerContext* ChannelPipeline::find(std::string_view name) const noexcept {
  for (ChannelHandlerContext* c = head_->next_; c != tail_; c = c->next_) {
    if (c->name_ == name) return c;
  }
  return nullptr;
}

ChannelHandlerContext& ChannelPipeline::findOrThrow(std::string_view name) const {
  ChannelHandlerContext* c = find(name);
  if (c == nullptr) throw IllegalArgumentError(fmt::format("no handler named '{}'", name));
  return *c;
}

void ChannelPipeline::checkNewName(const std::string& name) const {
  if (name.empty() || name == "head" || name == "tail")
    throw IllegalArgumentError(fmt::format("invalid handler name '{}'", name));
  if (find(name) != nullptr)
    throw IllegalArgumentError(fmt::format("duplicate handler name '{}'", name));
}

namespace {

std::string describe(const MessageTypes& t) {
  if (t.any()) return "any message";
  std::string s;
  for (std::size_t i = 0; i < t.count; ++i) {
    if (i != 0) s += " or ";
    s += typeName(*t.types[i]);
  }
  return s;
}

bool compatible(const MessageTypes& produced, const MessageTypes& accepted) {
  if (produced.any() || accepted.any()) return true;
  for (std::size_t i = 0; i < produced.count; ++i) {
    if (!accepted.contains(*produced.types[i])) return false;
  }
  return true;
}

}  // namespace

void ChannelPipeline::checkLinks(const ChannelHandlerContext* prev,
                                 const ChannelHandlerContext& ctx,
                                 const ChannelHandlerContext* next) const {
  // The nearest handler towards the head / the tail that acts in a direction (pass-through ones
  // are skipped; head and tail declare "any", so the walks stop there).
  auto before = [](const ChannelHandlerContext* c, bool inbound) {
    while (c->prev_ != nullptr &&
           (inbound ? c->handler_->inboundOut() : c->handler_->outboundIn()).isPassThrough())
      c = c->prev_;
    return c;
  };
  auto after = [](const ChannelHandlerContext* c, bool inbound) {
    while (c->next_ != nullptr &&
           (inbound ? c->handler_->inboundIn() : c->handler_->outboundOut()).isPassThrough())
      c = c->next_;
    return c;
  };
  const ChannelHandler& h = *ctx.handler_;
  // Inbound messages flow head -> tail: from the producer before ctx into ctx, from ctx onwards.
  if (!h.inboundIn().isPassThrough()) {
    const ChannelHandlerContext* producer = before(prev, true);
    const ChannelHandlerContext* consumer = after(next, true);
    const MessageTypes in = h.inboundIn();
    const MessageTypes produced = producer->handler_->inboundOut();
    if (!compatible(produced, in)) {
      throw IllegalArgumentError(fmt::format(
          "handler '{}' takes {} but the handler before it{}, '{}', produces {}", ctx.name_,
          describe(in), producer == prev ? "" : " that acts on inbound messages", producer->name_,
          describe(produced)));
    }
    const MessageTypes out = h.inboundOut();
    const MessageTypes taken = consumer->handler_->inboundIn();
    if (!compatible(out, taken)) {
      throw IllegalArgumentError(fmt::format(
          "handler '{}' produces {} but the handler after it{}, '{}', takes {}", ctx.name_,
          describe(out), consumer == next ? "" : " that acts on inbound messages", consumer->name_,
          describe(taken)));
    }
  }
  // Outbound messages flow tail -> head: from the writer after ctx into ctx, from ctx onwards.
  if (!h.outboundIn().isPassThrough()) {
    const ChannelHandlerContext* writer = after(next, false);
    const ChannelHandlerContext* taker = before(prev, false);
    const MessageTypes in = h.outboundIn();
    const MessageTypes written = writer->handler_->outboundOut();
    if (!compatible(written, in)) {
      throw IllegalArgumentError(fmt::format(
          "handler '{}' takes {} to write but the handler after it{}, '{}', writes {}", ctx.name_,
          describe(in), writer == next ? "" : " that acts on outbound messages", writer->name_,
          describe(written)));
    }
    const MessageTypes out = h.outboundOut();
    const MessageTypes taken = taker->handler_->outboundIn();
    if (!compatible(out, taken)) {
      throw IllegalArgumentError(fmt::format(
          "handler '{}' writes {} but the handler before it towards the socket{}, '{}', takes {}",
          ctx.name_, describe(out), taker == prev ? "" : " that acts on outbound messages",
          taker->name_, describe(taken)));
    }
  }
}

void ChannelPipeline::checkRemoval(const ChannelHandlerContext& ctx) const {
  // What ctx's neighbours would exchange once it is gone: the nearest acting handler before it
  // against the nearest one after it, in each direction ctx acts in.
  const ChannelHandler& h = *ctx.handler_;
  if (!h.inboundIn().isPassThrough()) {
    const ChannelHandlerContext* producer = ctx.prev_;
    while (producer->prev_ != nullptr && producer->handler_->inboundOut().isPassThrough())
      producer = producer->prev_;
    const ChannelHandlerContext* consumer = ctx.next_;
    while (consumer->next_ != nullptr && consumer->handler_->inboundIn().isPassThrough())
      consumer = consumer->next_;
    const MessageTypes produced = producer->handler_->inboundOut();
    const MessageTypes taken = consumer->handler_->inboundIn();
    if (!compatible(produced, taken)) {
      throw IllegalArgumentError(fmt::format(
          "removing handler '{}' would leave '{}', which takes {}, after '{}', which produces {}",
          ctx.name_, consumer->name_, describe(taken), producer->name_, describe(produced)));
    }
  }
  if (!h.outboundIn().isPassThrough()) {
    const ChannelHandlerContext* writer = ctx.next_;
    while (writer->next_ != nullptr && writer->handler_->outboundOut().isPassThrough())
      writer = writer->next_;
    const ChannelHandlerContext* taker = ctx.prev_;
    while (taker->prev_ != nullptr && taker->handler_->outboundIn().isPassThrough())
      taker = taker->prev_;
    const MessageTypes written = writer->handler_->outboundOut();
    const MessageTypes taken = taker->handler_->outboundIn();
    if (!compatible(written, taken)) {
      throw IllegalArgumentError(fmt::format(
          "removing handler '{}' would leave '{}', which writes {}, before '{}' towards the "
          "socket, which takes {}",
          ctx.name_, writer->name_, describe(written), taker->name_, describe(taken)));
    }
  }
}

void ChannelPipeline::insert(ChannelHandlerContext* prev, ChannelHandlerContext* next,
                             std::string name, std::unique_ptr<ChannelHandler> handler) {
  if (!handler) throw IllegalArgumentError("cannot add an empty handler");
  checkNewName(name);
  auto owned = std::unique_ptr<ChannelHandlerContext>(
      new ChannelHandlerContext(*this, std::move(name), std::move(handler), nextContextId_++));
  ChannelHandlerContext* ctx = owned.get();
  checkLinks(prev, *ctx, next);
  ctx->prev_ = prev;
  ctx->next_ = next;
  contexts_.push_back(std::move(owned));
  prev->next_ = ctx;
  next->prev_ = ctx;
  EventScope entry(*this);
  try {
    ctx->handler_->handlerAdded(*ctx);
  } catch (...) {
    ctx->invokeExceptionCaught(std::current_exception());
  }
}

void ChannelPipeline::unlink(ChannelHandlerContext& ctx) {
  ctx.prev_->next_ = ctx.next_;
  ctx.next_->prev_ = ctx.prev_;
  ctx.removed_ = true;  // keeps prev_/next_: an event in flight may still pass through it
  for (auto it = contexts_.begin(); it != contexts_.end(); ++it) {
    if (it->get() == &ctx) {
      removed_.push_back(std::move(*it));
      contexts_.erase(it);
      break;
    }
  }
}

ChannelPipeline& ChannelPipeline::addFirst(std::string name,
                                           std::unique_ptr<ChannelHandler> handler) {
  checkInLoop("addFirst");
  insert(head_, head_->next_, std::move(name), std::move(handler));
  return *this;
}
ChannelPipeline& ChannelPipeline::addLast(std::string name,
                                          std::unique_ptr<ChannelHandler> handler) {
  checkInLoop("addLast");
  insert(tail_->prev_, tail_, std::move(name), std::move(handler));
  return *this;
}
ChannelPipeline& ChannelPipeline::addBefore(std::string_view baseName, std::string name,
                                            std::unique_ptr<ChannelHandler> handler) {
  checkInLoop("addBefore");
  ChannelHandlerContext& base = findOrThrow(baseName);
  insert(base.prev_, &base, std::move(name), std::move(handler));
  return *this;
}
ChannelPipeline& ChannelPipeline::addAfter(std::string_view baseName, std::string name,
                                           std::unique_ptr<ChannelHandler> handler) {
  checkInLoop("addAfter");
  ChannelHandlerContext& base = findOrThrow(baseName);
  insert(&base, base.next_, std::move(name), std::move(handler));
  return *this;
}

ChannelPipeline& ChannelPipeline::remove(std::string_view name) {
  checkInLoop("remove");
  ChannelHandlerContext& ctx = findOrThrow(name);
  checkRemoval(ctx);
  removeContext(ctx);
  return *this;
}

void ChannelPipeline::removeContext(ChannelHandlerContext& ctx) {
  EventScope entry(*this);  // destroyed when this call, or the event in flight, ends
  unlink(ctx);
  try {
    ctx.handler_->handlerRemoved(ctx);
  } catch (...) {
    ctx.invokeExceptionCaught(std::current_exception());
  }
}

ChannelPipeline& ChannelPipeline::replace(std::string_view oldName, std::string newName,
                                          std::unique_ptr<ChannelHandler> handler) {
  checkInLoop("replace");
  ChannelHandlerContext& old = findOrThrow(oldName);
  ChannelHandlerContext* prev = old.prev_;
  ChannelHandlerContext* next = old.next_;
  EventScope entry(*this);
  if (newName != oldName) checkNewName(newName);
  // Check the new handler against the neighbours before touching anything.
  {
    ChannelHandlerContext probe(*this, newName, std::move(handler), 0);
    checkLinks(prev, probe, next);
    handler = std::move(probe.handler_);
  }
  removeContext(old);
  insert(prev, next, std::move(newName), std::move(handler));
  return *this;
}

ChannelHandler* ChannelPipeline::get(std::string_view name) {
  checkInLoop("get");
  ChannelHandlerContext* c = find(name);
  return c ? c->handler_.get() : nullptr;
}
ChannelHandlerContext* ChannelPipeline::context(std::string_view name) {
  checkInLoop("context");
  return find(name);
}

std::vector<std::string> ChannelPipeline::names() const {
  checkInLoop("names");
  std::vector<std::string> out;
  for (ChannelHandlerContext* c = head_->next_; c != tail_; c = c->next_) out.push_back(c->name_);
  return out;
}

void ChannelPipeline::fireChannelActive() {
  checkInLoop("fireChannelActive");
  head_->invokeChannelActive();
}
void ChannelPipeline::fireChannelInactive() {
  checkInLoop("fireChannelInactive");
  head_->invokeChannelInactive();
}
void ChannelPipeline::fireChannelRead(Message msg) {
  checkInLoop("fireChannelRead");
  head_->invokeChannelRead(std::move(msg));
}
void ChannelPipeline::fireChannelReadComplete() {
  checkInLoop("fireChannelReadComplete");
  head_->invokeChannelReadComplete();
}
void ChannelPipeline::fireExceptionCaught(std::exception_ptr error) {
  checkInLoop("fireExceptionCaught");
  head_->invokeExceptionCaught(std::move(error));
}
void ChannelPipeline::fireUserEventTriggered(Message event) {
  checkInLoop("fireUserEventTriggered");
  head_->invokeUserEventTriggered(std::move(event));
}
void ChannelPipeline::fireChannelWritabilityChanged() {
  checkInLoop("fireChannelWritabilityChanged");
  head_->invokeChannelWritabilityChanged();
}
void ChannelPipeline::write(Message msg, WriteListener* listener) {
  channel_->write(std::move(msg), listener);
}
void ChannelPipeline::flush() { channel_->flush(); }
void ChannelPipeline::close() { channel_->close(); }

// ------------------------------------------------------------------ ChannelErrc

namespace {

class ChannelCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "netbuf.channel"; }
  std::string message(int code) const override {
    switch (static_cast<ChannelErrc>(code)) {
      case ChannelErrc::closed:
        return "channel closed";
      case ChannelErrc::closedBeforeWritten:
        return "channel closed before the write reached the socket";
      case ChannelErrc::unsupportedMessageType:
        return "message type not written by the channel (an encoder is missing)";
      case ChannelErrc::writeFailed:
        return "a handler failed the write";
      case ChannelErrc::handlerRemoved:
        return "the handler the write was given to was removed first";
      case ChannelErrc::rejected:
        return "the channel's event loop has shut down";
      case ChannelErrc::writeTimeout:
        return "write timed out";
      case ChannelErrc::initializerFailed:
        return "the channel's initializer threw; the channel was closed";
      case ChannelErrc::exceptionCaught:
        return "an exception went through the channel's pipeline and closed the channel";
      case ChannelErrc::noReceiveQueue:
        return "receive(): the channel's pipeline has no ReceiveQueue of that type at its tail";
    }
    return fmt::format("unknown channel error {}", code);
  }
  std::error_condition default_error_condition(int code) const noexcept override {
    switch (static_cast<ChannelErrc>(code)) {
      case ChannelErrc::closed:
        return std::errc::not_connected;
      case ChannelErrc::closedBeforeWritten:
      case ChannelErrc::handlerRemoved:
      case ChannelErrc::rejected:
      case ChannelErrc::initializerFailed:
        return std::errc::operation_canceled;
      case ChannelErrc::unsupportedMessageType:
      case ChannelErrc::writeFailed:
      case ChannelErrc::noReceiveQueue:
        return std::errc::invalid_argument;
      case ChannelErrc::exceptionCaught:
        return std::errc::io_error;
      case ChannelErrc::writeTimeout:
        return std::errc::timed_out;
    }
    return {code, *this};
  }
};

}  // namespace

const std::error_category& channelCategory() noexcept {
  static const ChannelCategory category;
  return category;
}

// ------------------------------------------------------------------ Channel

Channel::~Channel() = default;

boost::asio::io_context& Channel::idleContext() {
  std::lock_guard<std::mutex> lock(idleContextMutex_);
  if (idleContext_ == nullptr) idleContext_ = std::make_unique<boost::asio::io_context>(1);
  return *idleContext_;
}

void Channel::destroyPipeline() noexcept {
  destroying_ = true;
  pipeline_.clear();
}

bool Channel::inEventLoopSlow() const noexcept { return destroying_ || executor_->inEventLoop(); }

void Channel::setAutoRead(bool on) {
  if (inEventLoop()) {
    autoRead_.store(on, std::memory_order_relaxed);
    onAutoReadChanged();
    return;
  }
  std::shared_ptr<Channel> self = weak_from_this().lock();
  if (self == nullptr) {
    throw IllegalStateError(
        "Channel::setAutoRead called off the channel's loop on a channel not held by a "
        "std::shared_ptr");
  }
  try {
    executor().execute([self = std::move(self), on] { self->setAutoRead(on); });
  } catch (const RejectedExecutionError&) {
    // The loop has shut down: the channel reads no more either way.
  }
}

void Channel::setAutoReadFlag(bool on) noexcept { autoRead_.store(on, std::memory_order_relaxed); }

void Channel::submitOutbound(ChannelHandlerContext* ctx, std::uint64_t ctxId,
                             detail::OutboundTask::Kind kind, Message msg,
                             WriteListener* listener) {
  std::shared_ptr<Channel> self = weak_from_this().lock();
  if (self == nullptr) throwNotShared();
  detail::OutboundTask task(std::move(self), ctx, ctxId, kind, std::move(msg), listener);
  try {
    submit(task);
  } catch (const RejectedExecutionError&) {
    // The loop has shut down: the task's destructor fails the listener and releases the message.
  }
}

void Channel::throwNotShared() {
  throw IllegalStateError(
      "a channel operation was called off the channel's loop on a channel not held by a "
      "std::shared_ptr: nothing could keep it alive until the loop runs it");
}

void Channel::submit(detail::OutboundTask& task) {
  auto shared = std::make_shared<detail::OutboundTask>(std::move(task));
  executor().execute([shared] { (*shared)(); });
}

namespace detail {

OutboundTask::~OutboundTask() {
  if (listener != nullptr) listener->operationComplete(ChannelErrc::rejected);
}

void OutboundTask::operator()() {
  WriteListener* l = std::exchange(listener, nullptr);
  ChannelPipeline& p = channel->pipeline_;
  ChannelHandlerContext* ctx = nullptr;
  if (context != nullptr) {
    ctx = p.findLive(context, contextId);
    if (ctx == nullptr) {  // removed meanwhile: writes fail, flush and close go from the tail
      switch (kind) {
        case Kind::Write:
        case Kind::WriteAndFlush:
          msg.reset();
          if (l != nullptr) l->operationComplete(ChannelErrc::handlerRemoved);
          if (kind == Kind::WriteAndFlush) p.flushFromTail();
          return;
        case Kind::Flush:
          return p.flushFromTail();
        case Kind::Close:
          return p.closeFromTail();
      }
      return;
    }
  }
  switch (kind) {
    case Kind::Write:
      return ctx ? ctx->write(std::move(msg), l) : p.writeFromTail(std::move(msg), l);
    case Kind::WriteAndFlush:
      if (ctx != nullptr) return ctx->writeAndFlush(std::move(msg), l);
      p.writeFromTail(std::move(msg), l);
      return p.flushFromTail();
    case Kind::Flush:
      return ctx ? ctx->flush() : p.flushFromTail();
    case Kind::Close:
      return ctx ? ctx->close() : p.closeFromTail();
  }
}

}  // namespace detail

void Channel::onUnhandledMessage(Message) noexcept {}  // the Message's destructor releases it

void Channel::logException(const char* what, const std::exception_ptr& error,
                           const char* consequence) const noexcept {
  std::string message = "a non-standard exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
  }
  try {
    const std::string remote = remoteAddress();
    std::fprintf(stderr, "netbuf: %s on channel %s%s%s: %s (%s)\n", what, localAddress().c_str(),
                 remote.empty() ? "" : " -> ", remote.c_str(), message.c_str(), consequence);
  } catch (...) {
  }
}

void Channel::onUnhandledException(std::exception_ptr error) noexcept {
  logException("unhandled exception", error, "closing");
  try {
    close();
  } catch (...) {
  }
}

void Channel::onWriteFailure(std::exception_ptr error) noexcept {
  logException("write failed", error, "the channel stays open");
}

}  // namespace netbuf
