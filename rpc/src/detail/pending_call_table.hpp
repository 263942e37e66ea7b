#pragma once
// PendingCallTable: the client's pending calls by msgid, an open-addressed hash table of pointers
// (linear probing, deletion by backward shift, so there are no tombstones). Msgids are handed out
// in sequence, so slot = msgid & mask spreads a window of pending calls without collisions; the
// table doubles at half load and never shrinks, so a client in steady state allocates nothing
// per call. Loop thread only.

#include <cstddef>
#include <cstdint>
#include <netbuf/rpc/message_pack_rpc_client.hpp>
#include <utility>
#include <vector>

namespace netbuf::detail {

class PendingCallTable {
 public:
  PendingCallTable() : slots_(kInitialSlots, nullptr) {}

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  RpcPendingCall* find(std::uint32_t msgid) const noexcept {
    for (std::size_t i = home(msgid);; i = next(i)) {
      RpcPendingCall* c = slots_[i];
      if (c == nullptr) return nullptr;
      if (c->msgid == msgid) return c;
    }
  }

  /// False (nothing changed) when a call with the same msgid is pending.
  bool insert(RpcPendingCall* call) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(call->msgid);
    for (; slots_[i] != nullptr; i = next(i)) {
      if (slots_[i]->msgid == call->msgid) return false;
    }
    slots_[i] = call;
    ++size_;
    return true;
  }

  /// Removes and returns the call with msgid, or nullptr.
  RpcPendingCall* erase(std::uint32_t msgid) noexcept {
    std::size_t i = home(msgid);
    for (;; i = next(i)) {
      if (slots_[i] == nullptr) return nullptr;
      if (slots_[i]->msgid == msgid) break;
    }
    RpcPendingCall* found = slots_[i];
    removeAt(i);
    return found;
  }

  /// Removes and returns every pending call, in slot order (one sweep of the table).
  std::vector<RpcPendingCall*> takeAll() {
    std::vector<RpcPendingCall*> all;
    all.reserve(size_);
    for (RpcPendingCall*& c : slots_) {
      if (c != nullptr) all.push_back(std::exchange(c, nullptr));
    }
    size_ = 0;
    return all;
  }

 private:
  static constexpr std::size_t kInitialSlots = 64;  // a power of two

  std::size_t home(std::uint32_t msgid) const noexcept { return msgid & (slots_.size() - 1); }
  std::size_t next(std::size_t i) const noexcept { return (i + 1) & (slots_.size() - 1); }

  /// Empties slot i, then moves later entries of the same probe run back into the gap, so that
  /// every entry stays reachable from its home slot without passing an empty slot.
  void removeAt(std::size_t i) noexcept {
    slots_[i] = nullptr;
    --size_;
    for (std::size_t j = next(i); slots_[j] != nullptr; j = next(j)) {
      const std::size_t h = home(slots_[j]->msgid);
      // Entry j may fill the gap at i when its home is not in the cyclic range (i, j].
      const bool homeInRange = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (homeInRange) continue;
      slots_[i] = slots_[j];
      slots_[j] = nullptr;
      i = j;
    }
  }

  void grow() {
    std::vector<RpcPendingCall*> old(slots_.size() * 2, nullptr);
    old.swap(slots_);
    size_ = 0;
    for (RpcPendingCall* c : old) {
      if (c == nullptr) continue;
      std::size_t i = home(c->msgid);
      while (slots_[i] != nullptr) i = next(i);
      slots_[i] = c;
      ++size_;
    }
  }

  std::vector<RpcPendingCall*> slots_;
  std::size_t size_ = 0;
};

}  // namespace netbuf::detail
