#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_pipeline.hpp>

namespace netbuf {

// ------------------------------------------------------------------ Message

std::string typeName(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(type.name());
}

void Message::wrongType(const std::type_info& wanted) const {
  throw MessageTypeError(
      fmt::format("message is a {}, not a {}", typeName(type()), typeName(wanted)));
}

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

void ChannelHandlerContext::fireChannelActive() { next_->invokeChannelActive(); }
void ChannelHandlerContext::fireChannelInactive() { next_->invokeChannelInactive(); }
void ChannelHandlerContext::fireChannelRead(Message msg) {
  next_->invokeChannelRead(std::move(msg));
}
void ChannelHandlerContext::fireChannelReadComplete() { next_->invokeChannelReadComplete(); }
void ChannelHandlerContext::fireExceptionCaught(std::exception_ptr error) {
  next_->invokeExceptionCaught(std::move(error));
}
void ChannelHandlerContext::fireUserEventTriggered(Message event) {
  next_->invokeUserEventTriggered(std::move(event));
}
void ChannelHandlerContext::fireChannelWritabilityChanged() {
  next_->invokeChannelWritabilityChanged();
}
void ChannelHandlerContext::write(Message msg, WriteListener* listener) {
  prev_->invokeWrite(std::move(msg), listener);
}
void ChannelHandlerContext::flush() { prev_->invokeFlush(); }
void ChannelHandlerContext::close() { prev_->invokeClose(); }

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
    // The write failed: its listener hears of it; without one, the pipeline does.
    if (listener != nullptr) {
      listener->operationComplete(std::make_error_code(std::errc::invalid_argument));
      ChannelPipeline::channelUnhandledException(pipeline_->channel(), std::current_exception());
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
      new ChannelHandlerContext(*this, "head", std::make_unique<HeadHandler>())));
  head_ = contexts_.back().get();
  contexts_.push_back(std::unique_ptr<ChannelHandlerContext>(
      new ChannelHandlerContext(*this, "tail", std::make_unique<TailHandler>())));
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

void ChannelPipeline::checkLink(const ChannelHandlerContext& producer,
                                const ChannelHandlerContext& consumer) const {
  // Inbound messages flow producer -> consumer (head to tail); outbound consumer -> producer.
  const MessageTypes inOut = producer.handler_->inboundOut();
  const MessageTypes inIn = consumer.handler_->inboundIn();
  if (!compatible(inOut, inIn)) {
    throw IllegalArgumentError(
        fmt::format("handler '{}' takes {} but the handler before it, '{}', produces {}",
                    consumer.name_, describe(inIn), producer.name_, describe(inOut)));
  }
  const MessageTypes outOut = consumer.handler_->outboundOut();
  const MessageTypes outIn = producer.handler_->outboundIn();
  if (!compatible(outOut, outIn)) {
    throw IllegalArgumentError(fmt::format(
        "handler '{}' writes {} but the handler before it towards the socket, '{}', takes {}",
        consumer.name_, describe(outOut), producer.name_, describe(outIn)));
  }
}

void ChannelPipeline::insert(ChannelHandlerContext* prev, ChannelHandlerContext* next,
                             std::string name, std::unique_ptr<ChannelHandler> handler) {
  if (!handler) throw IllegalArgumentError("cannot add an empty handler");
  checkNewName(name);
  auto owned = std::unique_ptr<ChannelHandlerContext>(
      new ChannelHandlerContext(*this, std::move(name), std::move(handler)));
  ChannelHandlerContext* ctx = owned.get();
  checkLink(*prev, *ctx);
  checkLink(*ctx, *next);
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
  insert(head_, head_->next_, std::move(name), std::move(handler));
  return *this;
}
ChannelPipeline& ChannelPipeline::addLast(std::string name,
                                          std::unique_ptr<ChannelHandler> handler) {
  insert(tail_->prev_, tail_, std::move(name), std::move(handler));
  return *this;
}
ChannelPipeline& ChannelPipeline::addBefore(std::string_view baseName, std::string name,
                                            std::unique_ptr<ChannelHandler> handler) {
  ChannelHandlerContext& base = findOrThrow(baseName);
  insert(base.prev_, &base, std::move(name), std::move(handler));
  return *this;
}
ChannelPipeline& ChannelPipeline::addAfter(std::string_view baseName, std::string name,
                                           std::unique_ptr<ChannelHandler> handler) {
  ChannelHandlerContext& base = findOrThrow(baseName);
  insert(&base, base.next_, std::move(name), std::move(handler));
  return *this;
}

ChannelPipeline& ChannelPipeline::remove(std::string_view name) {
  ChannelHandlerContext& ctx = findOrThrow(name);
  EventScope entry(*this);  // destroyed when this call, or the event in flight, ends
  unlink(ctx);
  try {
    ctx.handler_->handlerRemoved(ctx);
  } catch (...) {
    ctx.invokeExceptionCaught(std::current_exception());
  }
  return *this;
}

ChannelPipeline& ChannelPipeline::replace(std::string_view oldName, std::string newName,
                                          std::unique_ptr<ChannelHandler> handler) {
  ChannelHandlerContext& old = findOrThrow(oldName);
  ChannelHandlerContext* prev = old.prev_;
  ChannelHandlerContext* next = old.next_;
  EventScope entry(*this);
  if (newName != oldName) checkNewName(newName);
  // Check the new handler against the neighbours before touching anything.
  {
    ChannelHandlerContext probe(*this, newName, std::move(handler));
    checkLink(*prev, probe);
    checkLink(probe, *next);
    handler = std::move(probe.handler_);
  }
  remove(oldName);
  insert(prev, next, std::move(newName), std::move(handler));
  return *this;
}

ChannelHandler* ChannelPipeline::get(std::string_view name) noexcept {
  ChannelHandlerContext* c = find(name);
  return c ? c->handler_.get() : nullptr;
}
ChannelHandlerContext* ChannelPipeline::context(std::string_view name) noexcept {
  return find(name);
}

std::vector<std::string> ChannelPipeline::names() const {
  std::vector<std::string> out;
  for (ChannelHandlerContext* c = head_->next_; c != tail_; c = c->next_) out.push_back(c->name_);
  return out;
}

void ChannelPipeline::fireChannelActive() { head_->invokeChannelActive(); }
void ChannelPipeline::fireChannelInactive() { head_->invokeChannelInactive(); }
void ChannelPipeline::fireChannelRead(Message msg) { head_->invokeChannelRead(std::move(msg)); }
void ChannelPipeline::fireChannelReadComplete() { head_->invokeChannelReadComplete(); }
void ChannelPipeline::fireExceptionCaught(std::exception_ptr error) {
  head_->invokeExceptionCaught(std::move(error));
}
void ChannelPipeline::fireUserEventTriggered(Message event) {
  head_->invokeUserEventTriggered(std::move(event));
}
void ChannelPipeline::fireChannelWritabilityChanged() { head_->invokeChannelWritabilityChanged(); }
void ChannelPipeline::write(Message msg, WriteListener* listener) {
  tail_->invokeWrite(std::move(msg), listener);
}
void ChannelPipeline::flush() { tail_->invokeFlush(); }
void ChannelPipeline::close() { tail_->invokeClose(); }

// ------------------------------------------------------------------ Channel

Channel::~Channel() = default;

void Channel::destroyPipeline() noexcept { pipeline_.clear(); }

void Channel::onUnhandledMessage(Message) noexcept {}  // the Message's destructor releases it

void Channel::onUnhandledException(std::exception_ptr error) noexcept {
  std::string what = "non-standard exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  try {
    std::fprintf(stderr, "netbuf: unhandled exception on channel %s -> %s: %s (closing)\n",
                 localAddress().c_str(), remoteAddress().c_str(), what.c_str());
    close();
  } catch (...) {
  }
}

}  // namespace netbuf
