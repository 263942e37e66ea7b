#pragma once
// Channel: one connection (or a socketless stand-in) and its pipeline (Netty's Channel).
//
// User code writes through the channel (write/flush/writeAndFlush/close enter the pipeline at its
// tail); the transport feeds reads and state changes in at the head. A concrete channel (a TCP
// socket channel, EmbeddedChannel) implements the head's side: what a write, a flush and a close
// do, and which executor runs the channel's handlers.
//
// Attributes: typed per-channel values, keyed by AttributeKey<T> objects (compare by identity):
//     static const AttributeKey<int> kUserId{"userId"};
//     channel.attr(kUserId) = 42;
//
// Threading: all of a channel's methods are called on its executor's thread.

#include <cstdint>
#include <exception>
#include <memory>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/transport/channel_executor.hpp>
#include <netbuf/transport/channel_handler.hpp>
#include <netbuf/transport/channel_pipeline.hpp>
#include <netbuf/transport/message.hpp>
#include <string>
#include <utility>
#include <vector>

namespace netbuf {

/// A typed attribute key; keys are compared by address, the name is for humans.
template <class T>
struct AttributeKey {
  const char* name;
};

class Channel {
 public:
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  virtual ~Channel();

  ChannelPipeline& pipeline() noexcept { return pipeline_; }
  ByteBufAllocator& alloc() const noexcept { return *alloc_; }
  virtual ChannelExecutor& executor() noexcept = 0;

  virtual bool isOpen() const noexcept = 0;
  virtual bool isActive() const noexcept = 0;
  /// False while the bytes queued for writing exceed the high water mark (see the concrete
  /// channel); handlers stop producing until channelWritabilityChanged says otherwise.
  virtual bool isWritable() const noexcept { return true; }
  /// Whether the channel reads on its own (Netty's ChannelConfig.isAutoRead). A handler turns it
  /// off to stop taking input it cannot process yet (backpressure) and back on when it can.
  bool isAutoRead() const noexcept { return autoRead_; }
  /// A SocketChannel stops reading after the pending read when turned off and starts a read when
  /// turned on; channels fed by hand (EmbeddedChannel) only record the flag.
  void setAutoRead(bool on) {
    autoRead_ = on;
    onAutoReadChanged();
  }
  virtual std::string localAddress() const = 0;
  virtual std::string remoteAddress() const = 0;

  // ---- outbound, through the whole pipeline
  void write(Message msg, WriteListener* listener = nullptr) {
    pipeline_.write(std::move(msg), listener);
  }
  template <class T, std::enable_if_t<!std::is_same_v<std::decay_t<T>, Message>, int> = 0>
  void write(T&& msg, WriteListener* listener = nullptr) {
    pipeline_.write(Message(std::forward<T>(msg)), listener);
  }
  void flush() { pipeline_.flush(); }
  template <class T>
  void writeAndFlush(T&& msg, WriteListener* listener = nullptr) {
    write(std::forward<T>(msg), listener);
    flush();
  }
  void close() { pipeline_.close(); }

  /// The attribute for key, default-constructed on first use.
  template <class T>
  T& attr(const AttributeKey<T>& key) {
    for (auto& a : attrs_) {
      if (a.key == &key) return static_cast<Attr<T>&>(*a.value).value;
    }
    attrs_.push_back({&key, std::make_unique<Attr<T>>()});
    return static_cast<Attr<T>&>(*attrs_.back().value).value;
  }
  /// The attribute for key, or nullptr when it was never set.
  template <class T>
  T* findAttr(const AttributeKey<T>& key) noexcept {
    for (auto& a : attrs_) {
      if (a.key == &key) return &static_cast<Attr<T>&>(*a.value).value;
    }
    return nullptr;
  }

 protected:
  explicit Channel(ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator())
      : alloc_(&alloc), pipeline_(*this) {}

  /// Called after setAutoRead() changed the flag (or set it again).
  virtual void onAutoReadChanged() {}

  /// The head's side of the outbound operations (Netty's Channel.Unsafe).
  virtual void doWrite(Message msg, WriteListener* listener) = 0;
  virtual void doFlush() = 0;
  virtual void doClose() = 0;
  /// A message that reached the tail unhandled (after the pipeline counted it). Default: released.
  virtual void onUnhandledMessage(Message msg) noexcept;
  /// An exception that reached the tail. Default: logged to stderr with the channel's addresses,
  /// then the channel is closed.
  virtual void onUnhandledException(std::exception_ptr error) noexcept;

  /// Removes every handler now (concrete channels call it from their destructors, while the
  /// channel's own members are still alive for handlerRemoved()).
  void destroyPipeline() noexcept;

 private:
  friend class ChannelPipeline;

  struct AttrBase {
    virtual ~AttrBase() = default;
  };
  template <class T>
  struct Attr : AttrBase {
    T value{};
  };
  struct AttrEntry {
    const void* key;
    std::unique_ptr<AttrBase> value;
  };

  ByteBufAllocator* alloc_;
  bool autoRead_ = true;
  ChannelPipeline pipeline_;
  std::vector<AttrEntry> attrs_;
};

}  // namespace netbuf
