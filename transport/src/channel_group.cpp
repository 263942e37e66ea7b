#include <netbuf/transport/channel_group.hpp>

#include <mutex>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/transport/channel_error.hpp>
#include <netbuf/transport/event_loop.hpp>
#include <netbuf/transport/socket_channel.hpp>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "detail/group_operation.hpp"

namespace netbuf {

using Dropped = std::vector<std::shared_ptr<Channel>>;

struct ChannelGroup::State {
  std::mutex m;
  std::unordered_map<const Channel*, std::shared_ptr<Channel>> members;  // under m

  /// Moves the closed members into dropped (under m). They are released after the lock: the last
  /// reference to a channel may run its destructor, and its handlers may call into the group.
  void dropClosed(Dropped& dropped) {
    for (auto it = members.begin(); it != members.end();) {
      if (!it->second->isOpen()) {
        dropped.push_back(std::move(it->second));
        it = members.erase(it);
      } else {
        ++it;
      }
    }
  }
};

ChannelGroup::ChannelGroup(std::string name)
    : name_(std::move(name)), state_(std::make_shared<State>()) {}

ChannelGroup::~ChannelGroup() = default;

bool ChannelGroup::add(std::shared_ptr<Channel> channel) {
  if (channel == nullptr) throw IllegalArgumentError("ChannelGroup::add: empty channel pointer");
  if (!channel->isOpen()) return false;
  {
    std::lock_guard<std::mutex> lock(state_->m);
    if (!state_->members.emplace(channel.get(), channel).second) return false;
  }
  // Outside the lock: the listener runs at once (on this thread) when the channel has closed
  // meanwhile, and takes the lock itself.
  if (auto* socket = dynamic_cast<EventLoopChannel*>(channel.get())) {
    socket->addCloseListener([weak = std::weak_ptr<State>(state_), key = channel.get()] {
      std::shared_ptr<State> state = weak.lock();
      if (state == nullptr) return;  // the group is gone
      std::shared_ptr<Channel> member;
      {
        std::lock_guard<std::mutex> lock(state->m);
        auto it = state->members.find(key);
        if (it == state->members.end()) return;
        member = std::move(it->second);
        state->members.erase(it);
      }
    });
  }
  return true;
}

bool ChannelGroup::remove(const Channel& channel) {
  std::shared_ptr<Channel> member;
  std::lock_guard<std::mutex> lock(state_->m);
  auto it = state_->members.find(&channel);
  if (it == state_->members.end()) return false;
  member = std::move(it->second);
  state_->members.erase(it);
  return true;
}  // member is released after the lock (declared before it)

bool ChannelGroup::contains(const Channel& channel) const {
  Dropped dropped;
  std::lock_guard<std::mutex> lock(state_->m);
  auto it = state_->members.find(&channel);
  if (it == state_->members.end()) return false;
  if (it->second->isOpen()) return true;
  dropped.push_back(std::move(it->second));
  state_->members.erase(it);
  return false;
}

std::size_t ChannelGroup::size() const {
  Dropped dropped;
  std::lock_guard<std::mutex> lock(state_->m);
  state_->dropClosed(dropped);
  return state_->members.size();
}

std::shared_ptr<Channel> ChannelGroup::find(const Matcher& pred) const {
  Dropped dropped;
  std::lock_guard<std::mutex> lock(state_->m);
  state_->dropClosed(dropped);
  for (const auto& [key, channel] : state_->members) {
    if (!pred || pred(*channel)) return channel;
  }
  return nullptr;
}

std::vector<std::shared_ptr<Channel>> ChannelGroup::channels() const { return select({}); }

void ChannelGroup::clear() {
  std::unordered_map<const Channel*, std::shared_ptr<Channel>> members;
  std::lock_guard<std::mutex> lock(state_->m);
  members.swap(state_->members);
}

std::vector<std::shared_ptr<Channel>> ChannelGroup::select(const Matcher& matcher) const {
  Dropped dropped;
  std::vector<std::shared_ptr<Channel>> selected;
  std::lock_guard<std::mutex> lock(state_->m);
  state_->dropClosed(dropped);
  selected.reserve(state_->members.size());
  for (const auto& [key, channel] : state_->members) {
    if (!matcher || matcher(*channel)) selected.push_back(channel);
  }
  return selected;
}

ChannelGroupFuture ChannelGroup::writeToAll(void* source, MakeMessage make, bool flush,
                                            const Matcher& matcher) {
  std::shared_ptr<detail::GroupOperation> op = detail::GroupOperation::create(select(matcher));
  const std::size_t n = op->slots.size();
  // Slots never handed to a channel (a copy that threw) still complete, so the operation does.
  const auto abandonFrom = [&](std::size_t first) noexcept {
    for (std::size_t j = first; j < n; ++j)
      op->slots[j].operationComplete(std::make_error_code(std::errc::operation_canceled));
  };
  for (std::size_t i = 0; i < n; ++i) {
    detail::GroupOperation::Slot& slot = op->slots[i];
    Message msg;
    try {
      msg = make(source, i + 1 == n);
    } catch (...) {
      abandonFrom(i);
      throw;
    }
    try {
      if (flush) {
        slot.channel->writeAndFlush(std::move(msg), &slot);
      } else {
        slot.channel->write(std::move(msg), &slot);
      }
    } catch (...) {
      // The write itself has notified (or will notify) its listener; the rest are not sent.
      abandonFrom(i + 1);
      throw;
    }
  }
  return ChannelGroupFuture(std::move(op));
}

ChannelGroup& ChannelGroup::flush(const Matcher& matcher) {
  for (const auto& channel : select(matcher)) channel->flush();
  return *this;
}

ChannelGroupFuture ChannelGroup::close(const Matcher& matcher) {
  std::shared_ptr<detail::GroupOperation> op = detail::GroupOperation::create(select(matcher));
  for (detail::GroupOperation::Slot& slot : op->slots) {
    Channel& channel = *slot.channel;
    detail::GroupOperation::Slot* s = &slot;  // the operation holds itself until s completes
    if (auto* socket = dynamic_cast<EventLoopChannel*>(&channel)) {
      // Done once closed: the close listeners run after channelInactive. A listener that runs
      // while the channel is still open means the loop has shut down and the close never ran.
      socket->close();
      socket->addCloseListener([s, socket] {
        s->operationComplete(socket->isOpen() ? std::error_code(ChannelErrc::rejected)
                                              : std::error_code());
      });
      continue;
    }
    channel.close();
    if (channel.inEventLoop()) {
      s->operationComplete({});  // the close ran inline
      continue;
    }
    // The close was handed to the loop; this task runs after it (the loop's queue is FIFO).
    try {
      channel.executor().execute([s] { s->operationComplete({}); });
    } catch (const RejectedExecutionError&) {
      s->operationComplete(ChannelErrc::rejected);
    }
  }
  return ChannelGroupFuture(std::move(op));
}

}  // namespace netbuf
