#pragma once
// ChannelGroup: a thread-safe set of open channels, with operations applied to all of them
// (Netty's ChannelGroup / DefaultChannelGroup).
//
//     ChannelGroup clients("chat");
//     ServerBootstrap().group(loops).childHandler([&](SocketChannel& ch) {
//       clients.add(ch.shared_from_this());            // leaves the group when it closes
//       ...
//     });
//     clients.writeAndFlush(Unpooled::copiedBuffer("server going down\n")).waitFor(1s);
//     clients.close().waitFor(5s);
//
// Membership: channels are held by std::shared_ptr (the group keeps its members alive) and compared
// by identity. add() refuses a channel that is already in the group or already closed. A closed
// channel leaves the group by itself:
//   - a SocketChannel or DatagramChannel at once: add() registers a close listener that removes
//     it. The listener holds only a weak reference to the group, so the group may be destroyed
//     first. A channel removed and added again carries one listener per add() until it closes.
//   - any other channel (ServerChannel, EmbeddedChannel, your own) has no close notification, so
//     it is checked instead: every query and operation (size, contains, find, channels, write,
//     flush, close) skips the members whose isOpen() is false and drops them from the group.
// So a closed channel is never counted, written to or returned, whatever its type; only when its
// memory goes differs. Netty removes every channel through its close future.
//
// Operations: write, writeAndFlush and close apply to every open member (or to those a matcher
// accepts, Netty's ChannelMatcher) and return a ChannelGroupFuture that tells when the operation
// has finished on every one of them, with success and failure counts (channel_group_future.hpp).
// Each channel is handed its own copy of the message through Channel::write/writeAndFlush (from
// any thread: see channel.hpp), with a WriteListener owned by the operation.
//   - A buffer is not copied: each channel gets a new handle on the same bytes (one copy of the
//     bytes, N references). A ByteBuf goes out as ByteBuf handles (retainedDuplicate(), the last
//     channel gets the original), a CompositeByteBuf or an AnyByteBuf as AnyByteBuf handles
//     (retainedSlice(), which retains each component once). As in Netty, the handlers on the way
//     must not modify those bytes in place: every channel reads the same memory.
//   - Any other message type must be copy constructible: each channel gets a copy (the last one
//     gets the original, moved). A Message cannot be broadcast (its type is erased, so it cannot be
//     copied): pass the value itself.
// close() closes every member. A socket channel counts as done once it has closed (its close
// listeners run); any other channel once its close has run on its loop (a ServerChannel with
// acceptors on other loops finishes closing them shortly after: its waitClosed() says when).
// Members are not removed by close() itself: socket channels leave through their close listeners,
// others at the next query.
//
// Errors: a write's failure (ChannelErrc::closed for a channel that closed meanwhile, rejected for
// one whose loop has shut down, the socket's error...) counts in failureCount() with the channel.
// add() of an empty pointer throws IllegalArgumentError.
//
// Threading: every member function may be called from any thread, concurrently. The group's lock
// is held only to read or change the membership, never while a channel's operation runs, so a
// channel's handler (on its loop) may call into the group. A matcher (and find's predicate) is
// called with the lock held, on the calling thread: it must not call into the group, and should
// ask only the thread-safe queries of Channel (isOpen, isActive, addresses, attributes).

#include <cstddef>
#include <functional>
#include <memory>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/transport/channel.hpp>
#include <netbuf/transport/channel_group_future.hpp>
#include <netbuf/transport/message.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace netbuf {

class ChannelGroup {
 public:
  /// Selects the channels an operation applies to (Netty's ChannelMatcher); empty: all.
  using Matcher = std::function<bool(const Channel&)>;

  /// name is for humans (Netty's group name).
  explicit ChannelGroup(std::string name = "");
  /// Forgets the members (they stay open; their close listeners then find the group gone).
  ~ChannelGroup();
  ChannelGroup(const ChannelGroup&) = delete;
  ChannelGroup& operator=(const ChannelGroup&) = delete;

  const std::string& name() const noexcept { return name_; }

  /// Adds an open channel; false when it is already a member or is closed. Throws
  /// IllegalArgumentError for an empty pointer.
  bool add(std::shared_ptr<Channel> channel);
  /// Removes the channel; false when it was not a member.
  bool remove(const Channel& channel);
  /// True when the channel is an open member.
  bool contains(const Channel& channel) const;
  /// Open members (closed ones are dropped on the way, see the header comment).
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  /// The first open member pred accepts, or nullptr (pred runs under the group's lock).
  std::shared_ptr<Channel> find(const Matcher& pred) const;
  /// The open members now, in no particular order.
  std::vector<std::shared_ptr<Channel>> channels() const;
  /// Removes every member (without closing them).
  void clear();

  /// Writes msg to every open member the matcher accepts, without flushing (see the header
  /// comment for how each channel gets its copy). Done when every write's listener has run.
  template <class T>
  ChannelGroupFuture write(T&& msg, const Matcher& matcher = {}) {
    return writeEach(std::forward<T>(msg), false, matcher);
  }
  /// write() then flush() on each channel (one task per channel from another thread).
  template <class T>
  ChannelGroupFuture writeAndFlush(T&& msg, const Matcher& matcher = {}) {
    return writeEach(std::forward<T>(msg), true, matcher);
  }
  /// Flushes every open member the matcher accepts.
  ChannelGroup& flush(const Matcher& matcher = {});
  /// Closes every open member the matcher accepts (see the header comment for when each counts
  /// as done).
  ChannelGroupFuture close(const Matcher& matcher = {});

 private:
  struct State;
  /// Makes the message for the next channel from the source (moving it when last is true).
  using MakeMessage = Message (*)(void* source, bool last);

  template <class T>
  ChannelGroupFuture writeEach(T&& msg, bool flush, const Matcher& matcher) {
    using D = std::decay_t<T>;
    static_assert(!std::is_same_v<D, Message>,
                  "ChannelGroup: a Message cannot be copied for each channel; pass the value");
    static_assert(std::is_same_v<D, ByteBuf> || std::is_same_v<D, CompositeByteBuf> ||
                      std::is_same_v<D, AnyByteBuf> || std::is_copy_constructible_v<D>,
                  "ChannelGroup: a message other than a buffer must be copy constructible (each "
                  "channel gets a copy)");
    D source(std::forward<T>(msg));
    MakeMessage make = [](void* p, bool last) -> Message {
      D& s = *static_cast<D*>(p);
      if constexpr (std::is_same_v<D, ByteBuf>) {
        return last ? Message(std::move(s)) : Message(s.retainedDuplicate());
      } else if constexpr (std::is_same_v<D, CompositeByteBuf>) {
        return last ? Message(AnyByteBuf(std::move(s))) : Message(s.retainedSlice());
      } else if constexpr (std::is_same_v<D, AnyByteBuf>) {
        return last ? Message(std::move(s)) : Message(retainedSlice(s));
      } else {
        return last ? Message(std::move(s)) : Message(D(s));
      }
    };
    return writeToAll(&source, make, flush, matcher);
  }
  ChannelGroupFuture writeToAll(void* source, MakeMessage make, bool flush, const Matcher& matcher);
  /// The open members the matcher accepts (closed members are dropped on the way).
  std::vector<std::shared_ptr<Channel>> select(const Matcher& matcher) const;

  std::string name_;
  std::shared_ptr<State> state_;  // shared with the members' close listeners (weakly)
};

}  // namespace netbuf
