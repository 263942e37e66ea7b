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
// is destroyed afterwards). Adding checks message types: a handler whose declared input does not
// match its neighbour's declared output is refused with IllegalArgumentError naming both handlers
// and both types. Names are unique within a pipeline.
//
// Threading: a pipeline belongs to its channel's thread. Call its methods there (from a handler,
// or through channel.executor().execute()).

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
  /// Removes the named handler (destroyed once no event is passing through it).
  ChannelPipeline& remove(std::string_view name);
  /// Replaces the named handler by a new one under newName, in the same place.
  ChannelPipeline& replace(std::string_view oldName, std::string newName,
                           std::unique_ptr<ChannelHandler> handler);

  /// The named handler or context, or nullptr.
  ChannelHandler* get(std::string_view name) noexcept;
  ChannelHandlerContext* context(std::string_view name) noexcept;
  /// Handler names, head to tail.
  std::vector<std::string> names() const;

  // ---- inbound events, entering at the head (called by the channel)
  void fireChannelActive();
  void fireChannelInactive();
  void fireChannelRead(Message msg);
  void fireChannelReadComplete();
  void fireExceptionCaught(std::exception_ptr error);
  void fireUserEventTriggered(Message event);
  void fireChannelWritabilityChanged();

  // ---- outbound operations, entering at the tail (what Channel::write etc. call)
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
  class HeadHandler;
  class TailHandler;

  // The channel's head/tail side (Channel's protected hooks), for the head, tail and contexts.
  static void channelWrite(Channel& ch, Message msg, WriteListener* listener);
  static void channelFlush(Channel& ch);
  static void channelClose(Channel& ch);
  static void channelUnhandledMessage(Channel& ch, Message msg) noexcept;
  static void channelUnhandledException(Channel& ch, std::exception_ptr error) noexcept;

  ChannelHandlerContext* find(std::string_view name) const noexcept;
  ChannelHandlerContext& findOrThrow(std::string_view name) const;
  void checkNewName(const std::string& name) const;
  /// Links a new context between prev and next after checking the message types.
  void insert(ChannelHandlerContext* prev, ChannelHandlerContext* next, std::string name,
              std::unique_ptr<ChannelHandler> handler);
  void unlink(ChannelHandlerContext& ctx);
  /// Removes every user handler, tail to head (handlerRemoved on each), and destroys them.
  void clear() noexcept;
  void checkLink(const ChannelHandlerContext& producer,
                 const ChannelHandlerContext& consumer) const;

  Channel* channel_;
  ChannelHandlerContext* head_;
  ChannelHandlerContext* tail_;
  // Ownership of every context in the pipeline (order lives in the links).
  std::vector<std::unique_ptr<ChannelHandlerContext>> contexts_;
  // Contexts removed while an event was in flight, destroyed when the pipeline is idle.
  std::vector<std::unique_ptr<ChannelHandlerContext>> removed_;
  int depth_ = 0;
  std::uint64_t unhandled_ = 0;
};

}  // namespace netbuf
