#pragma once
// ChannelPipeline: a channel's ordered, named chain of handlers (Netty's class of the same name).
//
//   socket -> [head] -> decoder -> ... -> business handler -> [tail]      inbound events
//   socket <- [head] <- encoder <- ... <- business handler <- channel.write()   outbound ops
//
// head and tail are the pipeline's own: head passes outbound operations to the channel (the
// socket's write queue), tail ends inbound events (a message nobody handled is released and
// counted by unhandledMessages(); an exception nobody handled goes to the channel, which logs it
// and closes).
//
// Handlers may be added, removed and replaced at any time, also from inside a handler while events
// flow (a removed handler's context stays usable until the event in flight has passed; the handler
// is destroyed afterwards). Names are unique within a pipeline.
//
// Type check: adding (or replacing) a handler checks the message types along the whole chain, not
// only its immediate neighbours. Inbound, the handler's declared input must accept what the
// nearest handler before it that acts inbound produces, and its output what the nearest one after
// it takes; handlers that only act outbound (encoders, OutboundHandler) declare themselves pass-
// through inbound and are skipped, and the other way round for the outbound direction. A mismatch
// is refused with IllegalArgumentError naming both handlers and both types, as written in C++
// (std::string, not its mangled expansion). A handler that declares nothing (a plain
// ChannelHandler) may produce anything: the check accepts whatever follows it. remove() checks the
// same way that the handlers left on either side still match.
//
// Threading: a pipeline belongs to its channel's loop thread. Building and querying it (add*,
// remove, replace, get, context, names) and firing inbound events from another thread throw
// IllegalStateError; run that code on the loop (from a handler, or through
// channel.executor().execute()). write/flush/close are the channel's and may be called from any
// thread (Channel::write).

#include <cstdint>
#include <memory>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_handler_context.hpp>
#include <netbuf/transport/message.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf {

class Channel;
namespace detail {
struct OutboundTask;
}  // namespace detail

class ChannelPipeline {
 public:
  explicit ChannelPipeline(Channel& channel);
  /// Removes every handler (handlerRemoved is called on each, tail to head).
  ~ChannelPipeline();
  ChannelPipeline(const ChannelPipeline&) = delete;
  ChannelPipeline& operator=(const ChannelPipeline&) = delete;

  Channel& channel() noexcept { return *channel_; }

  // ---- building (each returns *this; throws IllegalArgumentError for a duplicate or unknown
  // name, an empty handler, or mismatched message types)
  ChannelPipeline& addFirst(std::string name, std::unique_ptr<ChannelHandler> handler);
  ChannelPipeline& addLast(std::string name, std::unique_ptr<ChannelHandler> handler);
  ChannelPipeline& addBefore(std::string_view baseName, std::string name,
                             std::unique_ptr<ChannelHandler> handler);
  ChannelPipeline& addAfter(std::string_view baseName, std::string name,
                            std::unique_ptr<ChannelHandler> handler);
  /// Constructs an H in place at the end: pipeline.addLast<LineHandler>("lines", 1024).
  template <class H, class... Args>
  H& emplaceLast(std::string name, Args&&... args) {
    auto h = std::make_unique<H>(std::forward<Args>(args)...);
    H& ref = *h;
    addLast(std::move(name), std::move(h));
    return ref;
  }
  /// Removes the named handler (destroyed once no event is passing through it). Refused with
  /// IllegalArgumentError, naming both, when its neighbours' types would not match without it.
  ChannelPipeline& remove(std::string_view name);
  /// Replaces the named handler by a new one under newName, in the same place.
  ChannelPipeline& replace(std::string_view oldName, std::string newName,
                           std::unique_ptr<ChannelHandler> handler);

  /// The named handler or context, or nullptr.
  ChannelHandler* get(std::string_view name);
  ChannelHandlerContext* context(std::string_view name);
  /// Handler names, head to tail.
  std::vector<std::string> names() const;

  // ---- inbound events, entering at the head (called by the channel; loop thread)
  void fireChannelActive();
  void fireChannelInactive();
  void fireChannelRead(Message msg);
  void fireChannelReadComplete();
  void fireExceptionCaught(std::exception_ptr error);
  void fireUserEventTriggered(Message event);
  void fireChannelWritabilityChanged();

  // ---- outbound operations, entering at the tail: Channel::write, flush and close (any thread)
  void write(Message msg, WriteListener* listener = nullptr);
  void flush();
  void close();

  /// Counts an event (or other code that calls handlers) entering the pipeline: a handler removed
  /// while one is open is destroyed when the outermost one closes, not while code on the stack may
  /// still use it. Every event and pipeline operation opens one; a handler that calls its own
  /// methods from a loop task it scheduled (outside any event), where those methods may remove
  /// handlers, opens one around that code. Loop thread only.
  class EventScope {
   public:
    explicit EventScope(ChannelPipeline& pipeline) noexcept : p_(pipeline) { ++p_.depth_; }
    ~EventScope() {
      if (--p_.depth_ == 0 && !p_.removed_.empty()) p_.removed_.clear();
    }
    EventScope(const EventScope&) = delete;
    EventScope& operator=(const EventScope&) = delete;

   private:
    ChannelPipeline& p_;
  };

  /// Messages that reached the tail unhandled (released there).
  std::uint64_t unhandledMessages() const noexcept { return unhandled_; }

 private:
  friend class ChannelHandlerContext;
  friend class Channel;
  friend struct detail::OutboundTask;
  class HeadHandler;
  class TailHandler;

  // The channel's head/tail side (Channel's protected hooks), for the head, tail and contexts.
  static void channelWrite(Channel& ch, Message msg, WriteListener* listener);
  static void channelFlush(Channel& ch);
  static void channelClose(Channel& ch);
  static void channelUnhandledMessage(Channel& ch, Message msg) noexcept;
  static void channelUnhandledException(Channel& ch, std::exception_ptr error) noexcept;
  static void channelWriteFailure(Channel& ch, std::exception_ptr error) noexcept;

  /// Throws IllegalStateError naming `what` unless called on the channel's loop.
  void checkInLoop(const char* what) const;
  // The tail entry points behind Channel::write/flush/close (loop thread, unchecked).
  void writeFromTail(Message msg, WriteListener* listener);
  void flushFromTail();
  void closeFromTail();
  /// The live context with this address and id, or nullptr (removed since it was handed out).
  ChannelHandlerContext* findLive(const ChannelHandlerContext* ctx,
                                  std::uint64_t id) const noexcept;

  ChannelHandlerContext* find(std::string_view name) const noexcept;
  ChannelHandlerContext& findOrThrow(std::string_view name) const;
  void checkNewName(const std::string& name) const;
  /// Links a new context between prev and next after checking the message types.
  void insert(ChannelHandlerContext* prev, ChannelHandlerContext* next, std::string name,
              std::unique_ptr<ChannelHandler> handler);
  void unlink(ChannelHandlerContext& ctx);
  /// Refuses (IllegalArgumentError) a removal that would link mismatched handlers.
  void checkRemoval(const ChannelHandlerContext& ctx) const;
  /// Unlinks ctx, calls handlerRemoved; destroyed once no event passes through it.
  void removeContext(ChannelHandlerContext& ctx);
  /// Removes every user handler, tail to head (handlerRemoved on each), and destroys them.
  void clear() noexcept;
  /// Checks ctx, about to sit between prev and next, against the handlers its messages reach in
  /// both directions (pass-through handlers skipped).
  void checkLinks(const ChannelHandlerContext* prev, const ChannelHandlerContext& ctx,
                  const ChannelHandlerContext* next) const;

  Channel* channel_;
  ChannelHandlerContext* head_;
  ChannelHandlerContext* tail_;
  // Ownership of every context in the pipeline (order lives in the links).
  std::vector<std::unique_ptr<ChannelHandlerContext>> contexts_;
  // Contexts removed while an event was in flight, destroyed when the pipeline is idle.
  std::vector<std::unique_ptr<ChannelHandlerContext>> removed_;
  int depth_ = 0;
  std::uint64_t unhandled_ = 0;
  std::uint64_t nextContextId_ = 1;  // ids of contexts (unique in this pipeline, never reused)
};

}  // namespace netbuf
